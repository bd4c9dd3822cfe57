"""A query's answer, read in a test: one value on a DB-API connection (DuckDB's or sqlite3's),
or the table or the error a sandbox's ``ExecOutcome`` must hold."""
from __future__ import annotations

from typing import Any, Sequence

from pytest_sqleval.core.engines.base import ExecError, ExecOutcome, Fetched


def scalar(con: Any, sql: str, params: Sequence[Any] = ()) -> Any:
    """The first value of the first row ``sql`` gives; a query that gives no row fails here, named."""
    row = con.execute(sql, list(params)).fetchone() if params else con.execute(sql).fetchone()
    assert row is not None, f"no row: {sql}"
    return row[0]


def table_of(outcome: ExecOutcome) -> Any:
    """The outcome's table (a ``pyarrow.Table``); an outcome without one fails here, with its error."""
    assert outcome.table is not None, outcome.error
    return outcome.table


def error_of(outcome: ExecOutcome | Fetched) -> ExecError:
    """The error of an outcome (or a capped fetch); one without (the query ran) fails here."""
    assert outcome.error is not None, "no error: the query ran"
    return outcome.error
