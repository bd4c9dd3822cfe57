"""The one watchdog thread that interrupts overrunning queries (``engines/watchdog.py``).

Each test switches off the engine's own time limit (SQLite's progress handler; DuckDB's
``max_execution_time``, left at a limit far above the query's), so only the watchdog
can stop the query, and checks what a user relies on: a runaway query is stopped, an
interrupt armed for one query never hits the next, and no thread is started per query."""
from __future__ import annotations

import random
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from pytest_sqleval.core.engines.base import Limits
from pytest_sqleval.core.engines.duckdb_sandbox import DuckDBSandbox
from pytest_sqleval.core.engines.sqlite_sandbox import SQLiteSandbox
from pytest_sqleval.core.engines import watchdog as watchdog_module
from pytest_sqleval.core.engines.watchdog import WATCHDOG, Watchdog
from tests.engine_databases import build_duckdb, build_sqlite

OWN_LIMIT = Limits(timeout_s=60.0)  # the engine's own deadline: far past the query's, so only the watchdog acts
QUERY_LIMIT_S = 0.2  # the query's limit: the watchdog interrupts at this + 0.25 s
#: a query still running after this was not interrupted (left alone, it runs for hours); a bound
#: on a wait, never asserted as a speed: the limit is CPU time, which a loaded machine gives out slowly
STOPPED_WITHIN_S = 120.0


@pytest.fixture(params=["sqlite", "duckdb"])
def sandbox(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "sqlite":
        sb: Any = SQLiteSandbox(build_sqlite(tmp_path / "w.sqlite"), OWN_LIMIT)
        sb._conn.set_progress_handler(None, 0)  # the engine's own deadline off: only the watchdog is left
    else:
        sb = DuckDBSandbox(build_duckdb(tmp_path / "w.duckdb"), OWN_LIMIT)
    guard = threading.Timer(STOPPED_WITHIN_S * 2, sb._conn.interrupt)  # the test's own safety net, not the watchdog
    guard.daemon = True
    guard.start()
    yield sb
    guard.cancel()
    sb.close()


RUNAWAY = {
    "sqlite": {
        "endless recursive CTE": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c",
        "cross join of cross joins": "SELECT count(*) FROM singer a, singer b, singer c, singer d, singer e, singer f, "
                                     "singer g, singer h, singer i, singer j, singer k, singer l, singer m, singer n",
        "endless recursion building strings": "WITH RECURSIVE c(x, s) AS (SELECT 1, 'a' UNION ALL SELECT x + 1, "
                                              "substr(s || s, 1, 1000) FROM c) SELECT max(length(s)) FROM c",
    },
    "duckdb": {
        "endless recursive CTE": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c",
        "trillion-row cross join": "SELECT sum(a.range * b.range) FROM range(1000000) a, range(1000000) b",
        "sort of a billion rows": "SELECT range FROM range(1000000000) ORDER BY hash(range) LIMIT 1",
    },
}


@pytest.mark.parametrize("sandbox, name", [(engine, name) for engine, queries in RUNAWAY.items() for name in queries],
                         indirect=["sandbox"])
def test_a_runaway_query_is_interrupted_by_the_watchdog(sandbox: Any, name: str) -> None:
    sql = RUNAWAY[sandbox.name][name]
    fired = WATCHDOG.fired
    out = sandbox.run(sql, timeout_s=QUERY_LIMIT_S)
    assert out.error is not None and out.error.category == "timeout", out.error
    assert WATCHDOG.fired == fired + 1, "the watchdog did not interrupt it"  # (the fixture's guard counts none)
    assert sandbox.run("SELECT count(*) FROM singer").error is None  # the next query runs


def test_an_interrupt_armed_for_one_query_never_hits_the_next(sandbox: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Deadlines raced against query ends: each query's deadline falls at random around its
    own end, so the watchdog often fires just as it finishes; the query after it (no deadline
    near) must never be interrupted."""
    monkeypatch.setattr(watchdog_module.WATCHDOG, "arm", _no_grace(watchdog_module.WATCHDOG.arm))
    rng = random.Random(20)
    sql = "SELECT count(*), max(a.name || e.name) FROM singer a, singer b, singer c, singer d, singer e"  # a few ms
    took = sorted(_time(sandbox, sql) for _ in range(20))[10]
    fired = WATCHDOG.fired
    hit = []
    for i in range(400):
        sandbox.run(sql, timeout_s=rng.uniform(0.0, took * 1.5))
        after = sandbox.run(sql)
        if after.error is not None:
            hit.append((i, after.error.message))
    assert WATCHDOG.fired > fired + 20, "the race was not exercised: no deadline passed during a query"
    assert not hit, hit[:3]


def _no_grace(arm: Any) -> Any:
    """The sandbox arms its interrupt at the query's CPU limit and its wall bound 0.25 s
    late; drop that 0.25 s, so deadlines fall at query ends, and make each interrupt take a moment (as on a loaded machine), so a query
    that could finish while its interrupt is under way does."""
    def slow(interrupt: Any) -> Any:
        return lambda: (time.sleep(0.002), interrupt())
    return lambda after_s, interrupt, cpu=None: arm(max(0.0, after_s - 0.25), slow(interrupt), cpu)


def _time(sandbox: Any, sql: str) -> float:
    start = time.perf_counter()
    assert sandbox.run(sql).error is None
    return time.perf_counter() - start


def test_no_thread_is_started_per_query(sandbox: Any) -> None:
    sandbox.run("SELECT 1")
    before = threading.active_count()
    starts = []
    me, original = threading.current_thread(), threading.Thread.start

    def start(self: threading.Thread) -> None:  # counts the threads this test's queries start, no other's
        if threading.current_thread() is me:
            starts.append(self.name)
        original(self)
    threading.Thread.start = start  # type: ignore[method-assign]
    try:
        for _ in range(300):
            assert sandbox.run("SELECT count(*) FROM singer").error is None
    finally:
        threading.Thread.start = original  # type: ignore[method-assign]
    assert starts == []
    assert threading.active_count() <= before


def test_the_watchdog_fires_only_armed_tokens_and_its_thread_is_a_daemon() -> None:
    dog = Watchdog()
    calls: list[str] = []
    dropped = dog.arm(0.5, lambda: calls.append("dropped"))
    assert dog.disarm(dropped) is False
    kept = dog.arm(0.05, lambda: calls.append("kept"))
    deadline = time.monotonic() + STOPPED_WITHIN_S
    while not calls and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.6)  # past the dropped one's deadline too
    assert calls == ["kept"]
    assert dog.disarm(kept) is True  # it fired
    assert dog._thread is not None and dog._thread.daemon
    late = dog.arm(3600.0, lambda: calls.append("late"))  # a far deadline keeps nothing waiting on it
    assert dog.disarm(late) is False and calls == ["kept"]


def test_a_cpu_deadline_counts_the_time_a_query_computes_not_the_time_it_waits() -> None:
    """A query's limit is its CPU time (``QueryTime``): waiting (what a loaded machine makes
    a query do) does not bring its interrupt closer; computing does."""
    from pytest_sqleval.core.engines.watchdog import CPU_CLOCKS, QueryTime
    if not CPU_CLOCKS:
        pytest.skip("per-thread CPU clocks are Linux's")
    dog = Watchdog()
    fired = threading.Event()
    clock = QueryTime(0.1)
    token = dog.arm(STOPPED_WITHIN_S, fired.set, clock.cpu)
    time.sleep(0.4)  # four times the limit in wall time, next to no CPU time
    assert not fired.is_set()
    deadline = time.monotonic() + STOPPED_WITHIN_S
    while not fired.is_set() and time.monotonic() < deadline:
        pass  # computing: the CPU clock reaches the limit
    cpu, wall = clock.used()
    assert fired.is_set() and dog.disarm(token) is True
    assert cpu is not None and 0.1 <= cpu < wall
    assert clock.stopped()[0] == "timeout" and "CPU time, over the limit of 0.1 s" in clock.stopped()[1]
