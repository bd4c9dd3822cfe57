"""Database engines: run SQL safely and describe the schema. DuckDB is the default.

Every engine is a *sandbox* with the same surface: ``run(sql) -> ExecOutcome`` (an
Arrow table or a categorised error), ``catalog()``, ``content_hash()``, ``close()``,
and the attributes ``name``, ``version`` and ``dialect`` (the sqlglot dialect that gold
and predictions are transpiled to).

A database location selects its engine:

- ``postgresql://...`` or ``postgres://...`` -> PostgreSQL (psycopg 3, the ``postgres`` extra);
- a path ending in ``.sqlite``, ``.sqlite3``, ``.db`` or ``.db3``, or any file that starts
  with the SQLite header -> SQLite (standard library);
- anything else -> DuckDB;

unless a plugin engine claims it first: ``register_engine`` or an entry point in group
``pytest_sqleval.engines`` (``engines.registry``). The protocol and the shared outcome
types are in ``engines.base``.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import Sandbox

from .shared import (DUCKDB_SUFFIXES, POSTGRES_SCHEMES, SQLITE_MAGIC, SQLITE_SUFFIXES, display_location, is_url,
                     parse_size, statement_count)

__all__ = ["DUCKDB_SUFFIXES", "POSTGRES_SCHEMES", "SQLITE_MAGIC", "SQLITE_SUFFIXES", "display_location",
           "engine_dialect", "engine_name", "is_url", "open_sandbox", "parse_size", "register_engine",
           "statement_count"]


def engine_name(database: str | Path) -> str:
    """``duckdb``, ``sqlite``, ``postgres`` or a plugin's name: the engine a database
    location selects (``engines.registry``)."""
    from .registry import choose
    return choose(database).name


def engine_dialect(database: str | Path) -> str:
    """The sqlglot dialect of the engine a database location selects."""
    from .registry import choose
    return choose(database).dialect


def open_sandbox(database: str | Path, limits: Any) -> Sandbox:
    """The sandbox for a database location (see the module docstring)."""
    from .registry import choose
    return choose(database).open(database, limits)


def register_engine(engine: Any) -> Any:
    """Add an engine to the registry (see ``engines.registry``)."""
    from .registry import register_engine as register
    return register(engine)
