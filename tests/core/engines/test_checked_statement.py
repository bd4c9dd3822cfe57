"""The DuckDB sandbox runs the very statement its one-SELECT check parsed (sandcost): the
text is parsed once, and what the check saw is what DuckDB runs, with no second parse of
the text that could read it otherwise. Streaming stays: the first rows of a huge result
arrive before the rest is computed, so the row cap stops it (``execute`` would not)."""
from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from pytest_sqleval.core.engines.base import Limits
from pytest_sqleval.core.engines.duckdb_sandbox import DuckDBSandbox


@pytest.fixture
def sandbox(tmp_path: Path) -> DuckDBSandbox:
    path = tmp_path / "t.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE t AS SELECT range AS x FROM range(5)")
    con.close()
    return DuckDBSandbox(path, Limits(timeout_s=5, max_rows=1000))


def test_the_checked_statement_is_what_runs(sandbox: DuckDBSandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    real = duckdb.extract_statements
    seen: list[str] = []

    def checked(sql: str) -> list[duckdb.Statement]:
        seen.append(sql)
        return real("SELECT 42 AS x")  # the check's parse stands for the text's
    monkeypatch.setattr(duckdb, "extract_statements", checked)
    try:
        out = sandbox.run("SELECT count(*) AS x FROM t")
    finally:
        sandbox.close()
    assert seen == ["SELECT count(*) AS x FROM t"]
    assert out.error is None and out.table is not None and out.table.to_pylist() == [{"x": 42}]


def test_a_huge_result_still_stops_at_the_row_cap(sandbox: DuckDBSandbox) -> None:
    try:
        out = sandbox.run("SELECT a.range, b.range FROM range(100000) a, range(100000) b")
    finally:
        sandbox.close()
    assert out.table is None and out.error is not None
    assert (out.error.category, out.error.cap, out.error.rows_over) == ("resource_exceeded", "max_rows", 1000)
