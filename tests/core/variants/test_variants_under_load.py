"""Variants independent of machine load (issue 31, ``engines.watchdog.bounded_rows``).

A variant's content must depend on (pinned content, seed, golds, generator version) alone.
The builders bounded each query by wall time (3-10 s), so on a loaded machine a query ran
past its limit and a witness row was left out (vfirst3: 2 of 8 Vantage variants differed by
one witness row). Here "loaded" is every builder limit at about zero, as if the clock ran
a billion times fast: on main the SQLite variants then lost their witnesses (another
content hash); bounded by work, SQLite's are the same. DuckDB's builders keep a CPU-time
safety net; its firing is recorded in the variant's record and the variant is built again
on the next run instead of reused."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import duckdb
import pytest

from pytest_sqleval.core.engines import watchdog
from pytest_sqleval.core.variants import build
from pytest_sqleval.core.variants.boundaries import BoundaryRows
from pytest_sqleval.core.variants.build import build_variants
from tests.core.variants.test_separating_witnesses import CHANNELS, HOURS, MUSIC, YEARLY, make_concerts, make_star



@pytest.fixture(autouse=True)
def _one_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every variant built in this process: the second build process would not see the limits patched."""
    monkeypatch.setattr(build, "BUILD_PROCESSES", 1)


class _FastClock(watchdog.QueryTime):
    """A clock a billion times fast: every limit it measures (the builders' safety nets) at about zero."""

    def __init__(self, limit_s: float, threads: int = 1) -> None:
        super().__init__(limit_s * 1e-9, threads)


def _loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every builder query past its time limit at once: a machine loaded without end. Only
    the clock is patched: a query's work (``watchdog.Work``) is counted, never timed."""
    monkeypatch.setattr(watchdog, "QueryTime", _FastClock)


def _build(database: Path, golds: list[str], dialect: str, where: Path) -> list[tuple[str, dict[str, object]]]:
    rows = BoundaryRows(database, golds, dialect, 0)
    try:
        return [(v.content_hash, v.params) for v in build_variants(database, where, count=4, rows=rows)]
    finally:
        rows.close()


def test_sqlite_variants_are_the_same_on_a_loaded_machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On main the loaded build left out the separating witnesses of the golds (another hash
    for variants 1 and 3: a gold "slower than 1 s" got none)."""
    database = tmp_path / "concerts.sqlite"
    make_concerts(database)
    quiet = _build(database, [YEARLY, HOURS], "sqlite", tmp_path / "quiet")
    _loaded(monkeypatch)
    loaded = _build(database, [YEARLY, HOURS], "sqlite", tmp_path / "loaded")
    assert [h for h, _ in loaded] == [h for h, _ in quiet]
    assert not any(p.get("load_dependent") for _, p in loaded)  # no clock on SQLite: nothing to record


def test_a_sqlite_query_past_its_work_is_stopped_by_the_count_not_the_clock(tmp_path: Path) -> None:
    con = sqlite3.connect(tmp_path / "w.sqlite")
    con.execute("CREATE TABLE t (a INTEGER)")
    con.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(300)])
    cross = "SELECT count(*) FROM t x, t y WHERE x.a + y.a > ?"
    work = watchdog.Work(steps=2_000_000, rows=0, net_s=1e-9)  # the net is DuckDB's: never read here
    assert watchdog.bounded_rows(con, "SELECT count(*) FROM t WHERE a > ?", [5], work=work, what="t") == [(294,)]
    with pytest.raises(watchdog.WorkExceeded):  # 90,000 pairs: millions of instructions
        watchdog.bounded_rows(con, cross, [5], work=watchdog.Work(steps=200_000, rows=0, net_s=60), what="t")
    assert watchdog.bounded_rows(con, cross, [5], work=watchdog.Work(steps=10 ** 8, rows=0, net_s=1e-9),
                                 what="t") == [(89_979,)]
    con.close()


def test_a_duckdb_query_is_refused_by_its_plan_before_it_runs(tmp_path: Path) -> None:
    con = duckdb.connect(str(tmp_path / "w.duckdb"), config={"threads": 1})
    con.execute("CREATE TABLE t AS SELECT i AS a FROM range(3000) r(i)")
    point = watchdog.plan_rows(con, "SELECT a FROM t WHERE a = ?", [7])
    cross = watchdog.plan_rows(con, "SELECT count(*) FROM t x, t y WHERE x.a + y.a > ?", [5])
    assert point is not None and cross is not None and point < 10 ** 4 <= 9 * 10 ** 6 <= cross
    with pytest.raises(watchdog.WorkExceeded):
        watchdog.bounded_rows(con, "SELECT count(*) FROM t x, t y WHERE x.a + y.a > ?", [5],
                              work=watchdog.Work(steps=0, rows=10 ** 6, net_s=60), what="t")
    con.close()


def test_the_duckdb_safety_net_is_recorded_and_its_variant_built_again(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "star.duckdb"
    make_star(path)
    golds = [CHANNELS, MUSIC]
    quiet = _build(path, golds, "duckdb", tmp_path / "quiet")
    assert not any(p.get("load_dependent") for _, p in quiet)
    assert _build(path, golds, "duckdb", tmp_path / "again") == quiet  # deterministic, quiet
    with monkeypatch.context() as m:
        _loaded(m)
        m.setattr(watchdog, "WALL_EXTRA_MIN_S", 0.0)  # the net's wall bound: ten times ~0
        loaded = _build(path, golds, "duckdb", tmp_path / "loaded")
    fired = [p["load_dependent"] for _, p in loaded if p.get("load_dependent")]
    assert fired, "no query met the safety net: the test shows nothing"
    assert all("stopped by the safety net" in line for lines in fired for line in lines)  # type: ignore[union-attr]
    manifest = json.loads(next((tmp_path / "loaded").rglob("variants.json")).read_text())
    assert any(v["params"].get("load_dependent") for v in manifest["variants"])
    rebuilt = _build(path, golds, "duckdb", tmp_path / "loaded")  # the load gone: built again, not reused
    assert [h for h, _ in rebuilt] == [h for h, _ in quiet]
