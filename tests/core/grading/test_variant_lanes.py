"""A candidate's variants run two at a time on DuckDB (``engine_side.VARIANT_LANES``): the
same verdicts and the same record as one at a time (a window's second variant that ran
after the first one differed is left out), and a query costs the same beside another."""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import duckdb
import pytest

from pytest_sqleval.core.api import Grader
from pytest_sqleval.core.engines import host
from pytest_sqleval.core.engines.base import Limits
from pytest_sqleval.core.engines.duckdb_sandbox import DuckDBSandbox
from pytest_sqleval.core.grading import engine_side

GOLD = "SELECT count(*) FROM orders WHERE amount >= 100"
WRONG = "SELECT count(*) FROM orders WHERE amount > 100"  # no order is exactly 100 on the pinned data
RIGHT = "SELECT count(*) FROM orders WHERE NOT amount < 100"
RUN = engine_side.GradingHandler._variant_run


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("lanes") / "shop.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, amount INTEGER NOT NULL)")
    con.execute("INSERT INTO orders SELECT i, CASE WHEN i % 2 = 0 THEN 40 + i % 50 ELSE 110 + i % 50 END "
                "FROM range(1, 401) t(i)")  # 100 never occurs
    con.close()
    return path


def _graded(shop: Path, cache: Path, lanes: int, monkeypatch: pytest.MonkeyPatch) -> tuple[dict, dict, set[str]]:
    """The variants layer of WRONG's and RIGHT's verdicts with ``lanes``, and the threads the
    variant runs took. The engine serves in this process, so what it runs is seen here."""
    monkeypatch.setattr(host, "IN_PROCESS_ENGINES", ("sqlite", "duckdb"))
    monkeypatch.setattr(engine_side, "VARIANT_LANES", lanes)
    threads: set[str] = set()

    def traced(self: Any, path: str, sql: str) -> Any:
        threads.add(threading.current_thread().name)
        return RUN(self, path, sql)
    monkeypatch.setattr(engine_side.GradingHandler, "_variant_run", traced)
    with Grader(shop, cache_dir=cache, variants=4, variant_golds=[GOLD], limits=Limits(isolation="auto")) as graded:
        wrong, right = graded.compare(WRONG, GOLD), graded.compare(RIGHT, GOLD)
    assert (wrong.passed, wrong.failure_kind) == (False, "coincidental_pass"), wrong.explanation
    assert right.passed, right.explanation
    return _timeless(wrong.layers["variants"]), _timeless(right.layers["variants"]), threads


def _timeless(value: Any) -> Any:
    """``value`` without its elapsed times, which two queries sharing the cores change."""
    if isinstance(value, dict):
        return {k: _timeless(v) for k, v in value.items() if k != "elapsed_ms"}
    if isinstance(value, list):
        return [_timeless(v) for v in value]
    return value


def test_two_lanes_give_the_record_of_one(shop: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    one_wrong, one_right, one_threads = _graded(shop, tmp_path / "one", 1, monkeypatch)
    two_wrong, two_right, two_threads = _graded(shop, tmp_path / "two", 2, monkeypatch)
    assert (two_wrong, two_right) == (one_wrong, one_right)
    assert one_right["graded"] == one_right["chosen"] == 4  # the rewrite ran on all four
    assert one_wrong["graded"] == one_wrong["mismatch"]["variant"] + 1  # nothing recorded past the first difference
    assert len(one_threads) == 1 and len(two_threads) == 2  # side by side only with two lanes


def test_a_query_side_by_side_spends_what_it_spends_alone(shop: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Two variants' queries that each take two thirds of the time limit alone both finish
    side by side: running beside another costs a DuckDB query no CPU time, so no verdict
    depends on what ran beside it. (SQLite's, which calls Python from its loop, spends twice
    its time beside another and is stopped here: it runs one at a time.)"""
    monkeypatch.setattr(engine_side, "VARIANT_LANES", 2)
    limits = Limits(timeout_s=1.0)
    copy = tmp_path / "copy.duckdb"
    copy.write_bytes(shop.read_bytes())
    handler = engine_side.GradingHandler(db=DuckDBSandbox(shop, limits), limits=limits, gold_dir=str(tmp_path))
    busy = "SELECT count(*) FROM range({}) r WHERE hash(r.range) % 7 = 3"
    other = tmp_path / "other.duckdb"
    other.write_bytes(shop.read_bytes())
    alone = handler._run_side_by_side([str(copy)], busy.format(10**7))[0]
    assert alone.error is None and alone.elapsed_ms < 400, alone.elapsed_ms  # well inside the second
    both = handler._run_side_by_side([str(copy), str(other)], busy.format(int(10**7 * 650 / alone.elapsed_ms)))
    for db in [handler.db, *handler._variant_dbs.values()]:
        db.close()
    assert [o.error for o in both] == [None, None]  # about 0.65 s of a core each (less on a loaded machine)
