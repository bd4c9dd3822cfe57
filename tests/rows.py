"""A query's one value, read in a test on a DB-API connection (DuckDB's or sqlite3's)."""
from __future__ import annotations

from typing import Any, Sequence


def scalar(con: Any, sql: str, params: Sequence[Any] = ()) -> Any:
    """The first value of the first row ``sql`` gives; a query that gives no row fails here, named."""
    row = con.execute(sql, list(params)).fetchone() if params else con.execute(sql).fetchone()
    assert row is not None, f"no row: {sql}"
    return row[0]
