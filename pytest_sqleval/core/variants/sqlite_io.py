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
    variant's hash would. (The pinned database is read with the default configuration:
    DuckDB refuses a second connection to a file with another one.) DuckDB 2.0.0 plans
    without filter pushdown: with it, 2.0.0 fails a builder query on the Vantage warehouse
    with an internal error 2.0.1 fixed; the variants do not depend on the plan, and a
    frozen record's refusals are replayed (``engines.watchdog.refusals``)."""
    if engine == "duckdb":
        import duckdb
        con = duckdb.connect(str(database), read_only=read_only, config={} if read_only else {"threads": 1})
        if duckdb.__version__ == "2.0.0":
            con.execute("SET disabled_optimizers = 'filter_pushdown'")
        return con
    return connect(database, read_only=read_only, **sqlite_kwargs)


__all__ = ["connect", "variant_connection"]
