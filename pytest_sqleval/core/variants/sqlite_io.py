"""The variants' own SQLite connections (variants are built outside the sandboxes), opened
one way: text read as the sandbox reads it (``engines.sqlite_sandbox.decode_text``), valid
UTF-8 as ``str`` and anything else as its bytes (``InvalidText``). With the driver's default,
one invalid byte anywhere (Spider and BIRD files hold some) failed the whole build."""
from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from ..engines.sqlite_sandbox import decode_text


def connect(database: str | Path, *, read_only: bool = False, **kwargs: Any) -> sqlite3.Connection:
    """A connection to ``database`` (read-only: by URI, so the file is never written)."""
    con: sqlite3.Connection = (sqlite3.connect(f"file:{database}?mode=ro", uri=True, **kwargs) if read_only
           else sqlite3.connect(str(database), **kwargs))
    con.text_factory = decode_text
    return con


def variant_connection(database: str | Path, engine: str, *, read_only: bool = False, **sqlite_kwargs: Any) -> Any:
    """A connection with the engine's own driver (variants are built outside the sandboxes).
    A variant being written gets one DuckDB thread: which tied row a query picks, and a
    float sum a threshold measures, must not depend on the machine's cores, or a frozen
    variant's hash would (a file read only gets the engine's default). DuckDB 2.0.0 plans
    without filter pushdown: with it, 2.0.0 fails a builder query on the Vantage warehouse
    with an internal error 2.0.1 fixed; the variants do not depend on the plan, and a
    frozen record's refusals are replayed (``engines.watchdog.refusals``).

    A DuckDB file read only is attached to a connection of its own, not connected to: this
    process may hold it open with another configuration (a sandbox in the process, isolation
    ``auto``), and DuckDB refuses a second ``connect`` to it; a build reads the pinned file
    while it writes the copy its builders read."""
    if engine == "duckdb":
        import duckdb
        if read_only:
            con = duckdb.connect(":memory:")
            con.execute(f"ATTACH {sql_literal(str(database))} AS readonly (READ_ONLY)")
            con.execute("USE readonly")
        else:
            con = duckdb.connect(str(database), config={"threads": 1})
        if duckdb.__version__ == "2.0.0":
            con.execute("SET disabled_optimizers = 'filter_pushdown'")
        return con
    return connect(database, read_only=read_only, **sqlite_kwargs)


def sql_literal(text: str) -> str:
    """``text`` as an SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


__all__ = ["connect", "sql_literal", "variant_connection"]
