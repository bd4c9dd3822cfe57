"""Database engines: run SQL safely and describe the schema. DuckDB is the default.

Every engine is a *sandbox* with the same surface: ``run(sql) -> ExecOutcome`` (an
Arrow table or a categorised error), ``catalog()``, ``content_hash()``, ``close()``,
and the attributes ``name``, ``version`` and ``dialect`` (the sqlglot dialect that gold
and predictions are transpiled to)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

DUCKDB_SUFFIXES = (".duckdb", ".ddb")


def engine_dialect(database: str | Path) -> str:
    """The sqlglot dialect of the engine a database location selects."""
    return "duckdb"


def open_sandbox(database: str | Path, limits: Any) -> Any:
    """The sandbox for a database location: a DuckDB file path (default)."""
    from .duckdb_sandbox import DuckDBSandbox
    return DuckDBSandbox(database, limits)
