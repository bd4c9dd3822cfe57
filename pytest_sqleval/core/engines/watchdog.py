"""One thread per process that interrupts queries past their deadline.

A ``threading.Timer`` per query cost a thread start and stop on every query (about
0.1 ms idle, far more on a loaded machine: 5 s of a variants distillation). Here every
sandbox of the process arms the same daemon thread instead. The guarantee a sandbox
relies on: an interrupt fires only for the query that armed it. The thread calls an
interrupt while holding the lock that ``disarm`` takes, and only for a token still
armed, so once ``disarm`` returns that query's interrupt can no longer fire, even when
its deadline passes just as the query ends; each query's interrupt names its own target
(DuckDB's exact cursor, the SQLite connection whose next statement clears the flag).

A deadline is wall time, and optionally CPU time too (``QueryTime``): a query's limit is
the CPU time it spends where the engine runs it in this process, because CPU time does
not grow when other processes load the machine and wall time does (the same query took
0.21 s of CPU quiet and beside four busy loops on two cores, and 0.2 to 1.1 s of wall).
The wall deadline then only bounds the wait, at ``wall_bound`` (ten times the limit, at
least the limit + 30 s).

The variant builders' queries are bounded by WORK, not time (``bounded_rows``, issue 31):
what they find decides a variant's content, which must depend only on (pinned content,
seed, golds, generator version), never on how loaded the machine was (under load a 0.3 s
query ran past a 3 s wall limit and a witness row was left out). On SQLite a progress
handler counts the query's virtual machine instructions; DuckDB has no such counter, so
its plan's estimated rows (``EXPLAIN``: the tables' row counts and the query's shape)
decide before it runs; a CPU-time limit stays there as a safety net only, and its firing
is recorded (``net_fired``), so the build keeps no variant whose content it touched.
Both measures are the engine's own (another DuckDB release estimates a plan otherwise,
another SQLite build counts other instructions), so the queries a build refused are
recorded (``refusals``) and a frozen record replays them: the same queries are refused on
any release, and a variant frozen on one builds to the same content on another.
"""
from __future__ import annotations

import hashlib
import itertools
import json
import os
import re
import sqlite3
import sys
import threading
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterable, Iterator, NamedTuple

__all__ = ["CPU_CLOCKS", "CpuDeadline", "QueryTime", "Refusals", "Watchdog", "WATCHDOG", "Work", "WorkExceeded",
           "bounded_rows", "net_fired", "plan_rows", "query_key", "refusals", "starved_bound", "tenfold",
           "unfinished_message", "wall_bound"]

#: Per-thread CPU clocks (Linux): without them a limit is wall time, as it always was.
CPU_CLOCKS = sys.platform.startswith("linux") and hasattr(time, "pthread_getcpuclockid")
WALL_FACTOR = 10.0  # the wall time a query may take: this many times its CPU limit ...
WALL_EXTRA_MIN_S = 30.0  # ... and at least this much longer than the limit (a small limit on a busy machine) ...
WALL_EXTRA_MAX_S = 300.0  # ... but at most this much longer



def process_cpu_s(pid: int) -> float | None:
    """A process's CPU time (user + system) from ``/proc``; None where it cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None

def tenfold(limit_s: float) -> float:
    """10x ``limit_s``, at most ``limit_s`` + 300 s: the limit of a second attempt where
    only wall time can be measured (PostgreSQL); every runaway query costs it."""
    return limit_s + min(limit_s * (WALL_FACTOR - 1), WALL_EXTRA_MAX_S)


def starved_bound(limit_s: float) -> float:
    """10x ``limit_s``, at least ``limit_s`` + 30 s and at most ``limit_s`` + 300 s: the
    wall time a loaded machine needs for what takes ``limit_s`` of CPU time quiet
    (measured: a query got 6% of a core on two cores running fifteen processes), and
    still a bounded wait. Only a starved query waits this long: a runaway is stopped
    when its CPU time reaches the limit."""
    return limit_s + min(max(limit_s * (WALL_FACTOR - 1), WALL_EXTRA_MIN_S), WALL_EXTRA_MAX_S)


def wall_bound(limit_s: float) -> float:
    """The wall time a query with a CPU limit of ``limit_s`` may take before it is stopped
    unfinished (``starved_bound``). Without CPU clocks the limit is wall time: the limit itself."""
    return starved_bound(limit_s) if CPU_CLOCKS else limit_s


class CpuDeadline(NamedTuple):
    """Interrupt once ``clock`` reads ``at`` (seconds); it advances at most ``rate`` times wall time."""

    clock: int
    at: float
    rate: float = 1.0


class QueryTime:
    """One query's time limit and what it used: CPU time on the clock of the thread that
    runs it (``threads == 1``: DuckDB and SQLite run a query on the calling thread), or of
    the process (DuckDB with more threads: every thread's time counts, against the limit
    times ``threads``, what a query that uses them all spends in the limit's wall time on
    a quiet machine), and wall time. ``cpu`` is the armed CPU deadline for
    ``Watchdog.arm`` (None without CPU clocks)."""

    def __init__(self, limit_s: float, threads: int = 1) -> None:
        self.limit_s = limit_s
        self.wall_s = wall_bound(limit_s)
        self.clock: int | None = None
        if CPU_CLOCKS:
            try:
                self.clock = (time.pthread_getcpuclockid(threading.get_ident()) if threads <= 1
                              else time.CLOCK_PROCESS_CPUTIME_ID)
            except OSError:
                self.clock = None
        self.rate = float(max(1, threads))
        self.cpu_limit_s = limit_s * self.rate
        self.wall0 = time.monotonic()
        self.cpu0 = time.clock_gettime(self.clock) if self.clock is not None else 0.0
        self.cpu = CpuDeadline(self.clock, self.cpu0 + self.cpu_limit_s, self.rate) if self.clock is not None else None

    def used(self) -> tuple[float | None, float]:
        """(CPU seconds or None without a CPU clock, wall seconds) since the query started."""
        wall = time.monotonic() - self.wall0
        if self.clock is None:
            return None, wall
        return time.clock_gettime(self.clock) - self.cpu0, wall

    def exceeded(self) -> bool:
        """Past the limit (CPU, or wall without a CPU clock) or past the wall bound."""
        cpu, wall = self.used()
        return wall > self.wall_s or (cpu > self.cpu_limit_s if cpu is not None else wall > self.limit_s)

    def over_limit(self) -> bool:
        """The query used more than its limit: CPU time (wall time without a CPU clock)."""
        cpu, wall = self.used()
        return cpu >= self.cpu_limit_s if cpu is not None else wall >= self.limit_s

    def stopped(self) -> tuple[str, str]:
        """The error category and message of a query stopped by its time limit, with its
        figures: ``timeout`` when it used more than its limit (a verdict: too slow, on any
        machine), ``unfinished`` when the wall bound stopped it first (the machine was too
        loaded to tell: not graded)."""
        cpu, wall = self.used()
        if cpu is None:
            return "timeout", f"exceeded the time limit of {self.limit_s:g} s (ran {wall:.2f} s)"
        limit = f"{self.limit_s:g} s" + (f" x {self.rate:g} threads" if self.rate > 1 else "")
        if cpu >= self.cpu_limit_s:
            return "timeout", f"exceeded the time limit: {cpu:.2f} s of CPU time, over the limit of {limit} ({wall:.2f} s wall)"
        return "unfinished", unfinished_message(self.limit_s, self.wall_s, cpu, wall)


def unfinished_message(limit_s: float, wall_s: float, cpu: float | None, wall: float) -> str:
    """Why a query stopped at its wall bound is not graded, with its figures."""
    used = f"{cpu:.2f} s" if cpu is not None else "an unknown share"
    return (f"did not finish within its wall bound of {wall_s:g} s (stopped after {wall:.2f} s), having used {used} "
            f"of its {limit_s:g} s CPU limit: the machine was too loaded to tell; not graded")


class Watchdog:
    """Deadlines of the queries running in this process, and the one thread that enforces them."""

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        # token -> (wall deadline, interrupt, CPU deadline or None, next look at its CPU clock)
        self._armed: dict[int, list[Any]] = {}
        self._tokens = itertools.count(1)
        self._thread: threading.Thread | None = None
        self._wakes_at = float("inf")  # when the thread next looks at its deadlines by itself
        self.fired = 0  # interrupts called, for tests and diagnostics

    def arm(self, after_s: float, interrupt: Callable[[], object], cpu: CpuDeadline | None = None) -> int:
        """Call ``interrupt`` ``after_s`` seconds from now, or once ``cpu``'s clock passes its
        deadline, unless ``disarm`` comes first; a token. The CPU clock is read only when it
        could have reached its deadline (it runs at most ``rate`` times wall time), so a
        short query costs no reads."""
        with self._cond:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, name="sqleval-watchdog", daemon=True)
                self._thread.start()
            token = next(self._tokens)
            now = time.monotonic()
            look = now + _cpu_left(cpu) / cpu.rate if cpu is not None else float("inf")
            self._armed[token] = [now + after_s, interrupt, cpu, look]
            if min(now + after_s, look) < self._wakes_at:  # else the thread looks in time by itself: waking it
                self._cond.notify()  # for every query cost a thread switch per query (ms each on a loaded machine)
            return token

    def disarm(self, token: int) -> bool:
        """Cancel a query's interrupt; True if it fired. After this returns it cannot fire."""
        with self._cond:
            return self._armed.pop(token, None) is None

    def _loop(self) -> None:
        with self._cond:
            while True:
                now = time.monotonic()
                for token in self._due(now):
                    self.fired += 1
                    try:  # under the lock: its query cannot finish disarming meanwhile
                        self._armed.pop(token)[1]()
                    except Exception:
                        pass  # a target already closed: nothing left to interrupt
                wake = min((min(e[0], e[3]) for e in self._armed.values()), default=None)
                # no local of this frame holds an interrupt while it waits: a bound method
                # would keep its cursor, and so its DuckDB connection, alive to the
                # interpreter's exit (DuckDB 2.0.0 then prints "nanobind: leaked")
                self._wakes_at = wake if wake is not None else float("inf")
                self._cond.wait(max(0.0, wake - now) if wake is not None else None)
                self._wakes_at = float("-inf")  # awake: it looks at every deadline before it waits again

    def _due(self, now: float) -> list[int]:
        """The tokens whose wall deadline has passed or whose CPU clock has reached its
        deadline; a CPU clock not yet there is looked at again when it next could be."""
        due = []
        for token, entry in self._armed.items():
            deadline, _, cpu, look = entry
            if deadline <= now:
                due.append(token)
            elif cpu is not None and look <= now:
                left = _cpu_left(cpu)
                if left <= 0:
                    due.append(token)
                else:
                    entry[3] = now + max(left / cpu.rate, 0.002)
        return due


def _cpu_left(cpu: CpuDeadline) -> float:
    """CPU seconds left before ``cpu``'s deadline; a clock that cannot be read (its thread
    ended: its query is being disarmed) never fires."""
    try:
        return cpu.at - time.clock_gettime(cpu.clock)
    except OSError:
        return float("inf")


WATCHDOG = Watchdog()  # the process's one watchdog; every sandbox arms it


# -- the variant builders' queries: bounded by work ------------------------------------------
PROGRESS_EVERY = 1000  # SQLite instructions between two calls of the progress handler
STEPS_PER_S = 30e6  # SQLite instructions a second, one core, quiet (23-61 M measured: a scan, a join, a group)
ROWS_PER_S = 20e6  # DuckDB plan rows (``plan_rows``) a second, one thread: what turns a limit into rows
_QUADRATIC = frozenset({"CROSS_PRODUCT", "NESTED_LOOP_JOIN", "BLOCKWISE_NL_JOIN"})  # every pair of rows is visited
_NET_FIRED: list[str] = []  # the safety net's firings in this process, in order (``net_fired``)


class Work(NamedTuple):
    """One builder query's budget, the same on any machine at any load: ``steps`` SQLite
    instructions, ``rows`` DuckDB plan rows (``plan_rows``, decided before it runs), and
    ``net_s`` CPU seconds, DuckDB's safety net (wall time bounded at ``wall_bound`` of it)."""

    steps: int
    rows: float
    net_s: float

    @classmethod
    def like(cls, limit_s: float, net_s: float | None = None) -> Work:
        """The work a quiet core does in ``limit_s`` (``STEPS_PER_S``, ``ROWS_PER_S``); the net
        at ``net_s`` (default ``limit_s``)."""
        return cls(int(limit_s * STEPS_PER_S), limit_s * ROWS_PER_S, limit_s if net_s is None else net_s)


class WorkExceeded(RuntimeError):
    """A builder query past its ``Work``: decided by the data and the query, never the clock."""


def net_fired() -> list[str]:
    """What the safety net stopped in this process so far, one line each; a builder takes
    the lines added while it built a variant (a slice from the length before)."""
    return _NET_FIRED


REPLAYED_STEPS = 4  # a query a frozen build ran runs again with this many times its SQLite instructions


class Refusals:
    """The builder queries refused by their ``Work`` while one variant is built, each by
    ``query_key``; with ``replay`` (the keys a frozen build refused), exactly those are
    refused and every other query runs (SQLite up to ``REPLAYED_STEPS`` times its budget,
    DuckDB under the safety net), whatever this engine's estimates and counts say."""

    def __init__(self, replay: Iterable[str] | None = None) -> None:
        self.replay = None if replay is None else frozenset(replay)
        self.made: set[str] = set()


_REFUSALS: list[Refusals] = []  # the innermost ``refusals`` block of this process


@contextmanager
def refusals(replay: Iterable[str] | None = None) -> Iterator[Refusals]:
    """Record (and, given ``replay``, replay) the refusals of the builder queries run inside."""
    record = Refusals(replay)
    _REFUSALS.append(record)
    try:
        yield record
    finally:
        _REFUSALS.remove(record)


def query_key(what: str, sql: str, args: list[Any]) -> str:
    """A builder query's name in a frozen record: its builder, text (spacing aside) and arguments."""
    return hashlib.sha256(repr((what, " ".join(sql.split()), args)).encode()).hexdigest()[:16]


def bounded_rows(con: Any, sql: str, params: Iterable[Any] = (), *, work: Work, what: str,
                 many: int | None = None) -> list[tuple[Any, ...]]:
    """The rows of ``sql`` on a variant builder's own connection (SQLite or DuckDB), at most
    ``many`` fetched; ``WorkExceeded`` past ``work``. SQLite: a progress handler counts its
    instructions and stops it at ``work.steps`` (no clock at all). DuckDB: ``plan_rows``
    over ``work.rows`` refuses it unrun; else it runs under the safety net, whose firing
    is recorded in ``net_fired`` (``what`` names the builder) and raised as the engine's
    interrupt. Inside ``refusals``, a refusal is recorded, and a replay decides instead."""
    args = list(params)
    record = _REFUSALS[-1] if _REFUSALS else None
    key = query_key(what, sql, args) if record is not None else ""
    if record is not None and record.replay is not None:
        if key in record.replay:
            record.made.add(key)
            raise WorkExceeded(f"{what}: refused, as when the variants were frozen")
        work = work._replace(steps=work.steps * REPLAYED_STEPS, rows=float("inf"))
    try:
        return _run_bounded(con, sql, args, work, what, many)
    except WorkExceeded:
        if record is not None:
            record.made.add(key)
        raise


def _run_bounded(con: Any, sql: str, args: list[Any], work: Work, what: str,
                 many: int | None) -> list[tuple[Any, ...]]:
    if isinstance(con, sqlite3.Connection):
        return _sqlite_rows(con, sql, args, work.steps, many)
    estimate = plan_rows(con, sql, args) if work.rows != float("inf") else None
    if estimate is not None and estimate > work.rows:
        raise WorkExceeded(f"{what}: about {estimate:.0f} plan rows, over the budget of {work.rows:.0f}")
    clock = QueryTime(work.net_s)
    token = WATCHDOG.arm(clock.wall_s, con.interrupt, clock.cpu)
    try:
        cur = con.execute(sql, args)
        rows: list[tuple[Any, ...]] = cur.fetchall() if many is None else cur.fetchmany(many)
        return rows
    finally:
        # recorded even when the query ended first: its interrupt may yet stop the next one
        if WATCHDOG.disarm(token):
            cpu, wall = clock.used()
            used = f"{cpu:.2f} s CPU, " if cpu is not None else ""
            _NET_FIRED.append(f"{what}: stopped by the safety net of {work.net_s:g} s CPU ({used}{wall:.2f} s wall; "
                              f"plan rows {estimate if estimate is None else round(estimate)}): {' '.join(sql.split())[:160]}")


def _sqlite_rows(con: sqlite3.Connection, sql: str, args: list[Any], steps: int,
                 many: int | None) -> list[tuple[Any, ...]]:
    calls, most = [0], max(1, steps // PROGRESS_EVERY)

    def progress() -> int:
        calls[0] += 1
        return int(calls[0] > most)  # non-zero: SQLite stops the statement ("interrupted")

    con.set_progress_handler(progress, PROGRESS_EVERY)
    try:
        cur = con.execute(sql, args)
        return cur.fetchall() if many is None else cur.fetchmany(many)
    except sqlite3.OperationalError as exc:
        if calls[0] > most:
            raise WorkExceeded(f"over the budget of {steps} SQLite instructions") from exc
        raise
    finally:
        con.set_progress_handler(None, 0)


def plan_rows(con: Any, sql: str, args: list[Any]) -> float | None:
    """The rows DuckDB's plan of ``sql`` expects to pass through its operators, summed, a
    cross or nested-loop join counting every pair it visits: from the tables' row counts
    and statistics and the query's shape, so the same for the same content and query on
    any machine with the same DuckDB release (another release's refusals are replayed from
    a frozen record: ``refusals``). None where DuckDB explains no plan (the query then
    runs, under the net)."""
    try:
        explained = con.execute("EXPLAIN (FORMAT json) " + sql, args).fetchall()
        return sum(_node_rows(node)[1] for row in explained for node in json.loads(row[-1]))
    except Exception:  # a statement DuckDB does not explain: running it says what is wrong
        return None


def _node_rows(node: Any) -> tuple[float, float]:
    """(estimated output rows, rows through the subtree) of one plan node."""
    kids = [_node_rows(k) for k in node.get("children") or []] if isinstance(node, dict) else []
    info = node.get("extra_info") if isinstance(node, dict) else None
    found = re.search(r"\d+", str(info.get("Estimated Cardinality", ""))) if isinstance(info, dict) else None
    through = sum(w for _, w in kids)
    if node.get("name") in _QUADRATIC and len(kids) == 2:
        through += kids[0][0] * kids[1][0]
    out = float(found.group()) if found else max((c for c, _ in kids), default=0.0)
    return out, through + out
if hasattr(os, "register_at_fork"):  # a forked child has no thread and maybe a held lock: start afresh
    os.register_at_fork(after_in_child=WATCHDOG._reset)
