"""The same predictions get the same verdicts on a quiet machine and on a loaded one.

A query's time limit is the CPU time it spends (``engines.watchdog.QueryTime``), which
other processes do not stretch; wall time only bounds the wait, at ten times the limit.
The suite here has predictions that take a sizeable fraction of a 0.5 s limit (0.1 to
0.3 s of CPU time: room for the CPU time a busy machine's caches add, about 20%) and
slow past it in wall time beside busy loops, and runaway ones far past it: run alone and beside the busy loops, every verdict is the same. A query stopped
at its wall bound before it spent its limit is ``unfinished``, a case error (not graded),
never a fail."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import duckdb
import pytest

from pytest_sqleval.core.engines.base import Limits
from pytest_sqleval.core.engines.watchdog import CPU_CLOCKS
from tests.hosts import child_of
from tests.rows import table_of
from tests.sqleval_helpers import read_results, sqleval_ini  # noqa: F401  (autouse fixture)

pytestmark = pytest.mark.skipif(not CPU_CLOCKS, reason="the CPU-time limit needs per-thread CPU clocks (Linux)")

LIMIT_S = 0.5
HOGS = 4  # busy loops beside the run: on 2 cores the engine gets about a third of one
HOG_LIFETIME_S = 45  # each busy loop ends by itself after this, whatever happens to the test
TARGETS_S = {"near_010": 0.10, "near_020": 0.20, "near_030": 0.30}  # CPU seconds each near-limit query takes (quiet)
RUNAWAY = {
    "runaway_recursive_cte": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c",
    "runaway_cross_join": "SELECT sum(a.range * b.range) FROM range(1000000) a, range(1000000) b",
}


def _pairs_sql(n: int) -> str:
    """A query whose CPU time grows with ``n`` (n x 1000 pairs, a filter on each) and whose answer is known."""
    return f"SELECT count(*) FROM range({n}) a, range(1000) b WHERE (a.range * 7 + b.range) % 13 = 0"


def _pairs_answer(n: int) -> int:
    """What ``_pairs_sql(n)`` returns: for each a, the b < 1000 with b = -7a (mod 13)."""
    return sum(77 if (-7 * a) % 13 < 1000 % 13 else 76 for a in range(n))


def _cpu_per_row() -> float:
    """CPU seconds per ``n`` of ``_pairs_sql`` on this machine (one thread, as the engine runs it)."""
    con = duckdb.connect(config={"threads": 1})
    try:
        n, best = 20_000, float("inf")
        for _ in range(3):
            start = time.thread_time()
            con.execute(_pairs_sql(n)).fetchall()
            best = min(best, time.thread_time() - start)
        return best / n
    finally:
        con.close()


@pytest.fixture(scope="module")
def sized() -> dict[str, int]:
    per_row = _cpu_per_row()
    return {cid: max(1000, int(target / per_row)) for cid, target in TARGETS_S.items()}


@pytest.fixture
def hog() -> Iterator[Callable[[], None]]:
    """Start ``HOGS`` busy-loop processes (each ends by itself after ``HOG_LIFETIME_S``); stopped after the test."""
    procs: list[subprocess.Popen[bytes]] = []
    code = f"import time\nend = time.monotonic() + {HOG_LIFETIME_S}\nwhile time.monotonic() < end: pass\n"

    def start() -> None:
        procs.extend(subprocess.Popen([sys.executable, "-c", code]) for _ in range(HOGS))
        time.sleep(0.3)  # running before the suite starts
    yield start
    for p in procs:
        p.kill()
        p.wait(timeout=10)


def _verdicts(pytester: pytest.Pytester) -> dict[str, tuple[Any, ...]]:
    result = pytester.runpytest("--sqleval-backend=predictions:p.jsonl", "-p", "no:randomly")
    assert result.ret in (0, 1), result.stdout.str()[-3000:]
    return {r["case_id"]: (r["status"], r["pass"], r["failure_kind"], r["error_class"])
            for r in read_results(pytester.path)}


def _walls(pytester: pytest.Pytester) -> dict[str, float]:
    return {r["case_id"]: (r.get("execution") or {}).get("elapsed_ms") or 0.0 for r in read_results(pytester.path)}


def test_the_same_run_alone_and_beside_busy_loops_gets_the_same_verdicts(
        pytester: pytest.Pytester, make_suite: Any, write_predictions: Any, sized: dict[str, int],
        hog: Callable[[], None]) -> None:
    cases, sqls = [], {}
    for cid, n in sized.items():  # the near-limit queries, each right
        cases.append({"id": cid, "question": f"pairs up to {n}", "gold_sql": f"SELECT {_pairs_answer(n)}"})
        sqls[cid] = _pairs_sql(n)
    n = sized["near_030"]  # a near-limit query with a wrong answer: it fails on its result, never on its time
    cases.append({"id": "near_wrong", "question": "pairs, off by one", "gold_sql": f"SELECT {_pairs_answer(n) + 1}"})
    sqls["near_wrong"] = _pairs_sql(n)
    cases.append({"id": "runaway", "question": "a runaway", "gold_sql": "SELECT 1"})  # a timeout beside the loops too
    sqls["runaway"] = RUNAWAY["runaway_cross_join"]
    make_suite(cases, manifest_extra=f"[limits]\ntimeout_s = {LIMIT_S}\n")
    write_predictions(sqls, name="p.jsonl")

    alone = _verdicts(pytester)
    hog()
    loaded = _verdicts(pytester)
    walls = _walls(pytester)

    assert loaded == alone
    expected = {**{cid: ("passed", True, None, None) for cid in TARGETS_S},
                "near_wrong": ("failed", False, "value_mismatch", "wrong_join"),
                "runaway": ("failed", False, "timeout", "other")}
    assert alone == expected
    # the busy loops did slow the near-limit queries past the limit in wall time: what this test is about
    assert max(walls[cid] for cid in (*TARGETS_S, "near_wrong")) > LIMIT_S * 1000, walls


def test_a_runaway_query_is_stopped_near_its_limit_with_its_figures(
        pytester: pytest.Pytester, make_suite: Any, write_predictions: Any) -> None:
    bomb = "SELECT md5(repeat('ab', 400000000))"  # one huge scalar: it ignores the interrupt, the process is killed
    sqls = {**RUNAWAY, "runaway_scalar": bomb}
    make_suite([{"id": cid, "question": "a runaway", "gold_sql": "SELECT 1"} for cid in sqls],
               manifest_extra=f"[limits]\ntimeout_s = {LIMIT_S}\n")
    write_predictions(sqls, name="p.jsonl")
    result = pytester.runpytest("--sqleval-backend=predictions:p.jsonl", "-p", "no:randomly")
    result.assert_outcomes(failed=3)
    records = {r["case_id"]: r for r in read_results(pytester.path)}
    for cid, record in records.items():
        assert (record["status"], record["failure_kind"]) == ("failed", "timeout"), record
        assert f"over the limit of {LIMIT_S:g} s" in record["explanation"] and "CPU time" in record["explanation"]
    assert "killed" in records["runaway_scalar"]["explanation"]


def test_a_query_the_machine_starves_past_its_wall_bound_is_not_graded(
        shop_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine process stopped (SIGSTOP: the extreme of a loaded machine) while it runs a
    query: the query spends no CPU time, its wall bound passes, and the case is not graded
    (``unfinished``, status error) rather than failed as too slow."""
    from pytest_sqleval.core.engines import watchdog
    from pytest_sqleval.core.grading.pipeline import SuiteGrader
    monkeypatch.setattr(watchdog, "WALL_EXTRA_MIN_S", 0.0)  # the wall bound at ten times the limit: a short wait
    g = SuiteGrader(shop_db, limits=Limits(timeout_s=0.2), cache_dir=tmp_path)
    try:
        gold = g.gold("SELECT count(*) FROM customers")
        proc = child_of(g)
        g.submit(_pairs_sql(200_000), gold)  # seconds of CPU time: it would be a timeout if it ran
        time.sleep(0.05)
        os.kill(proc.pid, signal.SIGSTOP)
        got: list[Any] = []
        waiter = threading.Thread(target=lambda: got.append(g.grade(_pairs_sql(200_000), gold)), daemon=True)
        waiter.start()
        waiter.join(600)  # a safety net: the stopped process never answers, so only the wall bound ends the wait
        assert got, "the wait on a stopped engine process never ended"
        verdict = got[0]
        assert (verdict.status, verdict.passed, verdict.failure_kind) == ("error", False, "unfinished"), verdict
        assert "not graded" in (verdict.case_error or "")
        assert g.grade("SELECT count(*) FROM customers", gold).passed  # a fresh engine process grades the next
    finally:
        g.close()


def test_postgres_runs_an_overrun_again_at_ten_times_the_limit_before_it_is_a_timeout(pg_shop: str) -> None:
    """PostgreSQL's time is the server's wall time, which load stretches: a query over its
    limit is run again at ten times it, and its result decides when that attempt finishes."""
    from pytest_sqleval.core.engines import open_sandbox
    sql = "SELECT count(*) FROM generate_series(1, {n}) a WHERE a % 7 = 3"
    free = open_sandbox(pg_shop, Limits(timeout_s=60))
    try:
        n = 1_000_000
        while True:  # about 2 s here and now: over a 1 s limit, well under ten times it
            start = time.monotonic()
            assert free.run(sql.format(n=n)).error is None
            took = time.monotonic() - start
            if took >= 2.0 or n >= 10**9:
                break
            n = int(n * min(10.0, 2.2 / max(took, 0.01)))
    finally:
        free.close()
    box = open_sandbox(pg_shop, Limits(timeout_s=1.0))
    try:
        out = box.run(sql.format(n=n))
    finally:
        box.close()
    assert out.error is None and table_of(out).column(0).to_pylist() == [len(range(3, n + 1, 7))]
    assert out.meta["first_attempt"]["limit_s"] == 1.0 and out.meta["first_attempt"]["elapsed_ms"] >= 1000
