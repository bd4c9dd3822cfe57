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

import sqlite3
from pathlib import Path

import duckdb
import pytest

from pytest_sqleval.core.engines import watchdog
from pytest_sqleval.core.variants import build
from pytest_sqleval.core.variants.boundaries import BoundaryRows
from pytest_sqleval.core.variants.build import MANIFEST_NAME, build_variants, read_manifest
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
    manifest = read_manifest(next((tmp_path / "loaded").rglob(MANIFEST_NAME)))
    assert any(v["params"].get("load_dependent") for v in manifest["variants"])
    rebuilt = _build(path, golds, "duckdb", tmp_path / "loaded")  # the load gone: built again, not reused
    assert [h for h, _ in rebuilt] == [h for h, _ in quiet]


def test_a_replay_refuses_exactly_the_queries_a_frozen_build_refused(tmp_path: Path) -> None:
    """Another DuckDB release estimates another plan (filter pushdown off: 2 M plan rows for a
    clone witness became 253 M, past its budget): a build replaying a frozen record refuses
    what the frozen build refused, and runs what it ran, whatever the estimate here."""
    con = duckdb.connect(str(tmp_path / "w.duckdb"), config={"threads": 1})
    con.execute("CREATE TABLE t AS SELECT i AS a FROM range(3000) r(i)")
    point, cross = "SELECT a FROM t WHERE a = ?", "SELECT count(*) FROM t x, t y WHERE x.a + y.a > ?"
    small, large = watchdog.Work(steps=0, rows=10 ** 6, net_s=60), watchdog.Work(steps=0, rows=10 ** 12, net_s=60)
    with watchdog.refusals() as made:
        assert watchdog.bounded_rows(con, point, [7], work=small, what="t") == [(7,)]
        with pytest.raises(watchdog.WorkExceeded):
            watchdog.bounded_rows(con, cross, [5], work=small, what="t")
    assert made.made == {watchdog.query_key("t", cross, [5])}
    with watchdog.refusals(made.made) as replayed:
        with pytest.raises(watchdog.WorkExceeded, match="as when the variants were frozen"):
            watchdog.bounded_rows(con, cross, [5], work=large, what="t")  # a budget it fits here: refused
        assert watchdog.bounded_rows(con, cross, [6], work=small, what="t") == [(8_999_972,)]  # never refused
    assert replayed.made == made.made
    con.close()


def test_a_frozen_builds_refusals_replayed_build_its_variants_where_estimates_differ(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An engine that estimates the plans far larger (past their budgets) refuses queries this one
    ran, and builds other variants; replaying the refusals this build recorded, it builds
    these, file for file."""
    path = tmp_path / "star.duckdb"
    make_star(path)
    golds = [CHANNELS, MUSIC]
    here = _build(path, golds, "duckdb", tmp_path / "here")
    assert all(isinstance(p.get("refused"), list) for _, p in here)
    monkeypatch.setattr(watchdog, "ROWS_PER_S", watchdog.ROWS_PER_S / 10 ** 7)  # as if every plan were estimated that much larger
    elsewhere = _build(path, golds, "duckdb", tmp_path / "elsewhere")
    assert [h for h, _ in elsewhere] != [h for h, _ in here]
    assert sum(len(p["refused"]) for _, p in elsewhere) > sum(len(p["refused"]) for _, p in here)  # type: ignore[arg-type]
    rows = BoundaryRows(path, golds, "duckdb", 0)
    try:
        replayed = build_variants(path, tmp_path / "replayed", count=4, rows=rows,
                                  refused={i: list(p["refused"]) for i, (_, p) in enumerate(here)})  # type: ignore[call-overload]
    finally:
        rows.close()
    assert [v.content_hash for v in replayed] == [h for h, _ in here]


def test_a_sqlite_replay_refuses_the_recorded_queries_and_runs_the_others_past_this_count(tmp_path: Path) -> None:
    """Another SQLite build counts other instructions for one query: replaying, a query the
    frozen build ran runs here up to ``REPLAYED_STEPS`` times its budget."""
    con = sqlite3.connect(tmp_path / "w.sqlite")
    con.execute("CREATE TABLE t (a INTEGER)")
    con.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(300)])
    cross = "SELECT count(*) FROM t x, t y WHERE x.a + y.a > ?"
    tight = watchdog.Work(steps=200_000, rows=0, net_s=60)  # 90,000 pairs, about 540,000 instructions: past it, within 4x
    with watchdog.refusals() as made:
        with pytest.raises(watchdog.WorkExceeded):
            watchdog.bounded_rows(con, cross, [5], work=tight, what="t")
    with watchdog.refusals(set()) as replayed:  # a frozen build that refused nothing
        assert watchdog.bounded_rows(con, cross, [5], work=tight, what="t") == [(89_979,)]
    with watchdog.refusals(made.made):
        with pytest.raises(watchdog.WorkExceeded, match="as when the variants were frozen"):
            watchdog.bounded_rows(con, cross, [5], work=watchdog.Work(steps=10 ** 9, rows=0, net_s=60), what="t")
    assert made.made == {watchdog.query_key("t", cross, [5])} and replayed.made == set()
    con.close()
