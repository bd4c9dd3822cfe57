"""The engine host: a child process that owns the sandboxed database.

Why a process: DuckDB cannot interrupt every query (a single huge scalar runs to the
end), and a query that ignores its interrupt must not take the grading run down with
it. The parent kills and respawns the child once the child has spent its query's limit
+ 0.7 s of CPU time (read from ``/proc``: load on the machine does not move it), or at
the latest at the wall bound (the limit + ten times it, at least 30 s, + 0.7 s); the case is marked
``timeout`` (over its limit) or ``unfinished`` (the wall bound came first: not graded)
and the run goes on. Results never cross the pipe: what
works on them (the grading's gold answers and comparison) is a *handler* named by a
dotted string and imported in the child, so the engines import nothing above them and
only the evidence comes back.
"""
from __future__ import annotations

import gc
import importlib
import json
import os
import pickle
import select
import struct
import subprocess
import sys
import time
from collections import deque
from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable

from .base import Limits
from .shared import write_cache_file
from .watchdog import CPU_CLOCKS, process_cpu_s, starved_bound, tenfold, unfinished_message

GRACE_S = 0.7  # the interrupt fires at the limit; past the limit + 0.7 s the process is killed
CPU_LOOK_MIN_S = 0.05  # the parent reads the child's CPU time at most this often
COMPARE_TIMEOUT_S = 300.0
_HDR = struct.Struct("!Q")
_AHEAD_BYTES = 16_384  # requests queued ahead stay this small
PIPE_BYTES = 65_536  # what a pipe holds where it cannot be widened (Linux's default)
WIDE_PIPE_BYTES = 1 << 18  # asked for each of the child's two pipes (Linux allows up to /proc/sys/fs/pipe-max-size)
PIPE_MARGIN = 4_096  # left free in the request pipe for the requests with no answer (``tell``)
HELD_MAX = 8  # requests asked ahead and held until they can be sent (EngineProcess.hold)
BEHIND_WEIGHT = 0.1  # the last case's weight in the moving average of the two processes' CPU (EngineHost.behind)


def describe_timeout(limits: Limits) -> float:
    """Opening a database reads its catalog and hashes its content: minutes on a big one."""
    return max(120.0, limits.timeout_s * 10)


class HostCrashed(RuntimeError):
    """The child died or failed; the message says why."""


class HostTimeout(HostCrashed):
    """The child did not answer in time and was killed. ``over_limit``: it spent more than
    its limit (CPU time where it can be read); False: the wall bound came first, on a
    machine too loaded to tell (``unfinished``). ``cpu_s`` is None where it cannot be read."""

    def __init__(self, message: str, *, over_limit: bool = True, cpu_s: float | None = None,
                 wall_s: float | None = None) -> None:
        super().__init__(message)
        self.over_limit, self.cpu_s, self.wall_s = over_limit, cpu_s, wall_s


class HostOpError(HostCrashed):
    """The child raised while serving a request; it is still running."""


# -- framing ---------------------------------------------------------------------------
def _write(fh: Any, obj: Any) -> None:
    if fh is None:  # served in the grading process (InProcessEngine): nobody to tell
        return
    blob = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    fh.write(_HDR.pack(len(blob)) + blob)
    fh.flush()


class _Frames:
    """The child's frames as they arrive: read from the pipe in large chunks (one read can
    hold several frames: started, executed, the answer) and cut here, so a frame costs no
    system call of its own, a frame cut by a timeout is kept whole for the next read, and
    what has arrived can be taken without waiting (``EngineProcess.poll``)."""

    CHUNK = 1 << 16

    def __init__(self, proc: Any) -> None:
        self.proc = proc  # the child whose frames these are (a fresh child may reuse its descriptor)
        self.fd: int = proc.stdout.fileno()
        self.buf = bytearray()

    def next(self, deadline: float | None) -> Any:
        """The next frame, waiting for it until ``deadline`` (monotonic; None: no bound,
        for a caller that has its own) else ``TimeoutError``; ``EOFError`` when the child is gone."""
        while True:
            if len(self.buf) >= _HDR.size:
                (n,) = _HDR.unpack_from(self.buf)
                end = _HDR.size + n
                if len(self.buf) >= end:
                    frame = pickle.loads(self.buf[_HDR.size:end])
                    del self.buf[:end]
                    return frame
            if deadline is not None:
                left = deadline - time.monotonic()
                if not select.select([self.fd], [], [], max(0.0, left))[0]:
                    raise TimeoutError
            chunk = os.read(self.fd, self.CHUNK)
            if not chunk:
                raise EOFError
            self.buf += chunk


# -- an opt-in trace of the pipe: when each request was sent, waited for and answered ----
TRACE_ENV = "SQLEVAL_IPC_TRACE"  # a path prefix: each process writes <prefix>.<role>.<pid>.jsonl at exit
_trace_events: list[tuple[Any, ...]] | None = None


def trace_event(*event: Any) -> None:
    """Record one event of the pipe's timeline (monotonic clock, shared by both processes),
    only when ``SQLEVAL_IPC_TRACE`` names where to write it: a measurement, off in a run."""
    global _trace_events
    if _trace_events is None:
        prefix = os.environ.get(TRACE_ENV)
        if not prefix:
            return
        _trace_events = []
        import atexit
        atexit.register(_write_trace, prefix)
    _trace_events.append(event)


def _write_trace(prefix: str) -> None:
    with open(f"{prefix}.{_ROLE}.{os.getpid()}.jsonl", "w", encoding="utf-8") as fh:
        for event in _trace_events or ():
            fh.write(json.dumps(event) + "\n")


TRACING = bool(os.environ.get(TRACE_ENV))
_ROLE = "grading"  # "engine" in the child (``main``)


class EngineProcess:
    """One engine child process and the requests sent to it, answered in order. Several
    ``EngineHost`` handles (one per database) may share it, so a run of many small
    databases starts one process, not one per database (about 0.2 s each); a kill or a
    crash fails the request that caused it, and the requests queued behind it, whatever
    their database, go to a fresh child."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen[bytes] | None = None
        self.pending: deque[Ticket] = deque()  # sent to the current child, answers not yet read
        self.held: deque[tuple[Ticket, Callable[[], subprocess.Popen[bytes]]]] = deque()  # ahead, not sent yet
        self._draining = False
        self.restarts = 0
        self._frames: _Frames | None = None  # the current child's answers, as read so far
        self._last_end: tuple[float, float] | None = None  # (monotonic, its CPU time) when the child last answered
        #: the engine's CPU seconds a grade less this process's, a moving average (``EngineHost.behind``),
        #: and (this process's CPU time, the engine's) when the last grade's answer was asked for
        self.cpu_balance = 0.0
        self.cpu_mark: tuple[float, float] | None = None

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def weigh(self, own_cpu: float) -> None:
        """At a grade's answer: each process's CPU time since the last one (the engine's as
        its last answer stamped it) into the moving average ``EngineHost.behind`` reads.
        A fresh child (its clock starts again) starts a new mark."""
        engine_cpu = self._last_end[1] if self._last_end is not None else None
        mark, self.cpu_mark = self.cpu_mark, (own_cpu, engine_cpu) if engine_cpu is not None else None
        if mark is None or engine_cpu is None or engine_cpu < mark[1]:
            return
        self.cpu_balance += BEHIND_WEIGHT * ((engine_cpu - mark[1]) - (own_cpu - mark[0]) - self.cpu_balance)

    def hold(self, ticket: "Ticket", start: Callable[[], subprocess.Popen[bytes]]) -> None:
        """A request asked ahead that could not be sent without risk of stalling the pipe
        (``EngineHost.submit``): sent as soon as an answer is read and it can (``_send_held``),
        so the child starts on it while the parent works, not when its answer is asked for."""
        while len(self.held) >= HELD_MAX:
            self.held.popleft()  # still sent when its answer is asked for
        self.held.append((ticket, start))

    def fits(self, size: int) -> bool:
        """A request of ``size`` bytes can be written now without risk of a stall: with the
        requests whose answers are unread (each is in the pipe still, or read by the child)
        it fits the pipe's buffer, so the write never blocks, whatever the child is doing
        (blocked on writing answers this process has not read yet: both waiting would be a
        deadlock). Requests sent ahead are thus limited by bytes, not by count: the child
        always has the next cases queued while this process grades (issue 35)."""
        queued = sum(_pipe_cost(len(t.blob)) for t in self.pending)
        return not self.pending or queued + _pipe_cost(size) <= self.capacity - PIPE_MARGIN

    def _send_held(self) -> None:
        """Send the requests held ahead, oldest first, while each can go without risk (``fits``)."""
        while self.held and not self._draining and self.alive():
            ticket, start = self.held[0]
            if ticket.sent or ticket.done:
                self.held.popleft()
                continue
            if not self.fits(len(ticket.blob)):
                return
            self.held.popleft()
            self.send(ticket, start)

    @property
    def capacity(self) -> int:
        """Bytes the current child's request pipe holds (``spawn_child`` widens it)."""
        return int(getattr(self.proc, "pipe_bytes", PIPE_BYTES))

    def prestart(self, warm: tuple[str, ...] = ()) -> None:
        """Start the child now, before any database is named, so its start-up overlaps the
        caller's; it imports the modules ``warm`` names while no request has come yet."""
        if not self.alive():
            self.proc, self._last_end = spawn_child(warm), None

    def send(self, ticket: "Ticket", start: Callable[[], subprocess.Popen[bytes]]) -> None:
        if self.pending and not self.alive():
            self.drain()  # a dead child's pending requests say how it died
        if self.pending and not self.fits(len(ticket.blob)):
            self._draining = True  # answers read until it fits: a write that could block could deadlock
            try:
                while self.pending and not self.fits(len(ticket.blob)):
                    self.read_next()
            finally:
                self._draining = False
        if not self.alive():
            self.proc, self._last_end = start(), None
        proc = self.proc
        assert proc is not None and proc.stdin is not None
        try:
            proc.stdin.write(_HDR.pack(len(ticket.blob)) + ticket.blob)
            proc.stdin.flush()
        except (BrokenPipeError, OSError):
            pass  # the child is gone: reading says how
        ticket.sent = True
        ticket.reset()
        ticket.sent_at = time.monotonic()
        if TRACING:
            trace_event("send", ticket.op, ticket.sent_at, len(self.pending), len(ticket.blob))
        self.pending.append(ticket)

    def drain(self) -> None:
        self._draining = True  # a request waits for the pending ones only, not for those held ahead
        try:
            while self.pending:
                self.read_next()
        finally:
            self._draining = False

    def poll(self) -> None:
        """Take every answer the child has written already, without waiting for any: each
        such request is done (``Ticket.done``), and the requests held ahead go out as room
        is made (``_send_held``). So a case asked ahead sees its gold answered as soon as the
        child answered it, not when this process next waits on the pipe, and its prediction
        is sent while the child still works (issue 35: the two processes overlap)."""
        while self.pending and self.alive() and not self._draining:
            if not self.read_next(wait=False):
                return

    def read_next(self, wait: bool = True) -> bool:
        """Read the answer to the oldest pending request. Its execution budget starts when
        the child says it started it; past the budget the child is killed, that request
        fails, and the requests queued behind it go to a fresh child. Without ``wait``, only
        the frames already in the pipe are read: False when its answer is not among them
        (what was read is kept on the ticket for the next read)."""
        proc = self.proc
        ticket = self.pending[0]
        assert proc is not None and proc.stdout is not None
        if self._frames is None or self._frames.proc is not proc:
            self._frames = _Frames(proc)
        frames = self._frames
        if not ticket.timed:
            if self._last_end is not None:  # the child starts it once it has answered the one before, and has it
                ticket.started(max(self._last_end[0], ticket.sent_at), self._last_end[1])
            else:  # a fresh child (its first request says when it starts)
                ticket.timed, ticket.deadline = True, time.monotonic() + ticket.budget + 30.0  # + child start-up
        try:
            while True:
                try:
                    if not wait:
                        frame = frames.next(0.0)
                    elif TRACING:
                        t0 = time.monotonic()
                        try:
                            frame = frames.next(min(ticket.deadline, ticket.look))
                        finally:
                            ticket.waited += time.monotonic() - t0
                    else:
                        frame = frames.next(min(ticket.deadline, ticket.look))
                    kind, body = frame[0], frame[1]
                except TimeoutError:
                    if not wait:
                        return False
                    now = time.monotonic()
                    since = ticket.since
                    used = None if since is None else process_cpu_s(proc.pid)
                    if used is not None and since is not None:
                        used -= since[1]
                    if now < ticket.deadline and used is not None and ticket.cpu_limit is not None:
                        if used < ticket.cpu_limit:  # not there yet: its CPU time cannot grow faster than ``rate``
                            ticket.look = now + max(CPU_LOOK_MIN_S, (ticket.cpu_limit - used) / ticket.rate)
                            continue
                    elif now < ticket.deadline:
                        ticket.look = float("inf")
                        continue
                    self._fail(self._timeout(ticket, used, None if ticket.began is None else now - ticket.began))
                    return True
                if kind == "started":  # the child runs a query of this request (since ``body``: monotonic, CPU)
                    at, cpu = body if isinstance(body, tuple) else (time.monotonic(), None)
                    ticket.started(at, cpu)
                elif kind == "executed":  # execution finished in time; comparison has its own budget
                    ticket.deadline, ticket.began = time.monotonic() + COMPARE_TIMEOUT_S, None
                    ticket.since, ticket.look = None, float("inf")
                elif kind == "partial":  # the answer to give if the rest of the request does not finish
                    ticket.partial = body
                else:
                    self.pending.popleft()
                    ticket.done = True
                    self._last_end = frame[2] if len(frame) > 2 else None  # the next request is timed from it
                    if kind == "error":
                        ticket.error = HostOpError(body)
                    else:
                        ticket.value = body
                    if TRACING:
                        trace_event("answer", ticket.op, ticket.sent_at, time.monotonic(), ticket.waited, not wait)
                    self._send_held()
                    return True
        except (EOFError, OSError) as exc:
            code = proc.poll()
            self._fail(HostCrashed(f"the engine process died (exit code {code}): {type(exc).__name__}"))
            return True

    @staticmethod
    def _timeout(ticket: "Ticket", cpu: float | None, wall: float | None) -> HostTimeout:
        """The error of a request whose child was killed, with its figures."""
        killed = "; it ignored its interrupt and the engine process was killed"
        if ticket.limit_s is None:  # not a query's time (opening a database)
            return HostTimeout(f"no answer within {ticket.budget:.1f} s; the engine process was killed", wall_s=wall)
        if wall is None:  # the query never started (or its comparison overran): nothing to say about its time
            return HostTimeout(f"the engine process did not answer within {ticket.budget + 30:.1f} s (no query of "
                               "this request was running): the machine was too loaded to tell; not graded; the "
                               "engine process was killed", over_limit=False)
        if cpu is None:  # no CPU time to read: the wall time decides, as it always did
            return HostTimeout(f"exceeded the time limit of {ticket.limit_s:g} s (ran {wall:.2f} s){killed}",
                               wall_s=wall)
        if ticket.cpu_limit is not None and cpu >= ticket.limit_s * ticket.rate:
            limit = f"{ticket.limit_s:g} s" + (f" x {ticket.rate:g} threads" if ticket.rate > 1 else "")
            return HostTimeout(f"exceeded the time limit: {cpu:.2f} s of CPU time, over the limit of "
                               f"{limit} ({wall:.2f} s wall){killed}", cpu_s=cpu, wall_s=wall)
        return HostTimeout(unfinished_message(ticket.limit_s, ticket.budget - GRACE_S, cpu, wall)
                           + "; the engine process was killed", over_limit=False, cpu_s=cpu, wall_s=wall)

    def _fail(self, error: HostCrashed) -> None:
        """The oldest request failed and the child is killed. A request that sent a partial
        answer (evidence computed after its verdict, see ``partial``) gets that answer."""
        ticket = self.pending.popleft()
        ticket.done = True
        if ticket.partial is not None:
            ticket.value = ticket.partial
        else:
            ticket.error = error
        queued = list(self.pending)
        self.pending.clear()
        self.kill()
        for t in queued:  # never started: they get a fresh child, not this one's fate
            t.sent = False

    def kill(self) -> None:
        proc, self.proc = self.proc, None
        self._frames, self._last_end = None, None
        if proc is not None:
            proc.kill()
            proc.wait()
            self.restarts += 1

    def tell(self, blob: bytes) -> None:
        """A request with no answer (``forget``), sent only to a live child."""
        if self.alive():
            assert self.proc is not None and self.proc.stdin is not None
            try:
                self.proc.stdin.write(_HDR.pack(len(blob)) + blob)
                self.proc.stdin.flush()
            except (BrokenPipeError, OSError):
                pass

    def forget_held(self, key: bytes) -> None:
        """Drop the held requests of a database let go (``EngineHost.close``)."""
        self.held = deque(h for h in self.held if h[0].key is not key)

    def close(self) -> None:
        self.held.clear()
        proc, self.proc = self.proc, None
        self._frames, self._last_end = None, None
        pending, self.pending = self.pending, deque()
        if proc is not None and proc.poll() is None:
            if pending:  # answers nobody will read: do not let the child work on them
                proc.kill()
                proc.wait()
                return
            try:
                _write(proc.stdin, ("quit", {}))
                proc.wait(timeout=5)
            except Exception:
                proc.kill()
                proc.wait()


ISOLATIONS = ("process", "auto")
#: engines that enforce every limit inside the grading process: SQLite stops a query at its
#: CPU limit (progress handler, the watchdog's interrupt), caps memory (``hard_heap_limit``),
#: rows and bytes, and refuses writes, ATTACH, pragmas and extensions (its authorizer).
#: DuckDB cannot interrupt every query (a single huge scalar runs to the end), nor can a
#: plugin engine be assumed to: they run in the engine process, which can be killed.
IN_PROCESS_ENGINES = ("sqlite",)


def runs_in_process(database: str | Path, limits: Limits) -> bool:
    """Whether ``database``'s queries run in the grading process (``InProcessEngine``)."""
    from . import engine_name
    return limits.isolation == "auto" and engine_name(database) in IN_PROCESS_ENGINES


class InProcessEngine:
    """The engine host's requests served in the grading process, in order, with the same
    sandbox and handler as the engine process: no process to start, no pipe per query.
    Used for the engines of ``IN_PROCESS_ENGINES`` (every guarantee of their sandbox holds
    in any process); a request that fails gives the same errors as a child's."""

    def __init__(self) -> None:
        self.pending: deque[Ticket] = deque()
        self.restarts = 0  # nothing is ever killed here
        self.cpu_balance = 0.0  # nothing runs beside this process: never behind it
        self._servers: dict[bytes, _Server] = {}  # a database's key -> its open sandbox, in order of use

    def alive(self) -> bool:
        return True

    def prestart(self, warm: tuple[str, ...] = ()) -> None:
        pass

    def poll(self) -> None:
        pass  # nothing runs beside this process: nothing is answered before it is asked for

    def fits(self, size: int) -> bool:
        return len(self.pending) <= 1  # served in order when asked for: no more queued ahead than two

    def hold(self, ticket: "Ticket", start: Callable[[], subprocess.Popen[bytes]]) -> None:
        pass  # nothing runs beside this process: it is served when its answer is asked for

    def forget_held(self, key: bytes) -> None:
        pass

    def send(self, ticket: "Ticket", start: Callable[[], subprocess.Popen[bytes]]) -> None:
        ticket.sent = True  # served when its answer is asked for (``read_next``)
        self.pending.append(ticket)

    def drain(self) -> None:
        while self.pending:
            self.read_next()

    def read_next(self) -> None:
        ticket = self.pending.popleft()
        key, op, payload = pickle.loads(ticket.blob)
        ticket.done = True
        try:
            server = self._server(key)
        except Exception as exc:
            from .shared import display_location
            ticket.error = HostOpError(f"cannot open {display_location(pickle.loads(key).get('database'))}: {exc}")
            return
        try:  # the answer as the pipe would give it: a copy, never the handler's own (cached) objects
            ticket.value = pickle.loads(pickle.dumps(server.serve(op, payload, None), protocol=pickle.HIGHEST_PROTOCOL))
        except Exception as exc:
            ticket.error = HostOpError(f"{type(exc).__name__}: {exc}")

    def _server(self, key: bytes) -> "_Server":
        server = self._servers.pop(key, None)
        if server is None:
            server = _Server(**pickle.loads(key))
            while len(self._servers) >= MAX_OPEN_IN_CHILD:
                self._servers.pop(next(iter(self._servers))).close()
        self._servers[key] = server
        return server

    def kill(self) -> None:
        pass

    def tell(self, blob: bytes) -> None:
        key, op, _ = pickle.loads(blob)
        if op == "forget":
            server = self._servers.pop(key, None)
            if server is not None:
                server.close()

    def close(self) -> None:
        self.pending.clear()
        for server in self._servers.values():
            server.close()
        self._servers.clear()


def spawn_child(warm: tuple[str, ...] = ()) -> subprocess.Popen[bytes]:
    """A new engine child, told the grading process's plugin engines; it serves any database.
    ``warm``: modules it imports before its first request (``main``)."""
    from ..childio import python_child
    cmd, env = python_child("-m", "pytest_sqleval.core.engines.host")
    if sys.dont_write_bytecode:  # the parent's -B; else the child caches the bytecode of what it imports
        env["PYTHONDONTWRITEBYTECODE"] = "1"  # (an editable install's engine-side modules: 50 ms of compiling a start)
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    proc.pipe_bytes = _widen(proc)  # type: ignore[attr-defined]
    from .registry import exported
    _write(proc.stdin, {"engines": exported(), "sys_path": list(sys.path), "warm": list(warm)})
    return proc


def _pipe_cost(size: int) -> int:
    """The most of a pipe's buffer one request of ``size`` bytes can take: the kernel keeps
    a pipe's bytes in pages, and a write may start a page of its own."""
    return (-(-(size + _HDR.size) // 4096) + 1) * 4096


def _widen(proc: subprocess.Popen[bytes]) -> int:
    """Widen the child's two pipes (``WIDE_PIPE_BYTES``, where the system allows it): more
    requests go ahead without risk (``EngineProcess.fits``) and the child writes its answers
    without waiting while this process is busy. Returns what the request pipe holds."""
    try:
        import fcntl
        assert proc.stdin is not None and proc.stdout is not None
        setsize, getsize = getattr(fcntl, "F_SETPIPE_SZ", None), getattr(fcntl, "F_GETPIPE_SZ", None)
        if setsize is None or getsize is None:
            return PIPE_BYTES
        for fh in (proc.stdout, proc.stdin):
            try:
                fcntl.fcntl(fh.fileno(), setsize, WIDE_PIPE_BYTES)
            except OSError:
                pass  # over the user's pipe quota: the size it has (read below) is the one counted
        return int(fcntl.fcntl(proc.stdin.fileno(), getsize))
    except (ImportError, OSError):
        return PIPE_BYTES


class EngineHost:
    """Parent-side handle on one database in an engine process (its own, or one shared
    with other databases: ``process``); restarts the child on demand after a kill or crash."""

    def __init__(self, database: str | Path, limits: Limits, cache_dir: str | Path, *,
                 handler: str | None = None, handler_args: tuple[Any, ...] = (),
                 process: "EngineProcess | InProcessEngine | None" = None) -> None:
        """``handler`` (``"module:Class"``) serves the requests the host does not know
        itself; the child makes it as ``Class(sandbox, limits, *handler_args)``, so the
        arguments must pickle. ``cache_dir`` keeps the host's own cache (content hashes).
        Without ``process`` the host has a process of its own, ended by ``close``."""
        self.database = str(database)
        self.limits = limits
        self.cache_dir = str(cache_dir)
        self.handler = handler
        self.handler_args = tuple(handler_args)
        self.shared = process is not None
        self.process: EngineProcess | InProcessEngine = process if process is not None else (
            InProcessEngine() if runs_in_process(database, limits) else EngineProcess())
        # names this database in every request: the child opens it on first sight (again after a restart)
        self._key = pickle.dumps({"database": self.database, "limits": asdict(limits), "cache_dir": self.cache_dir,
                                  "handler": handler, "handler_args": self.handler_args},
                                 protocol=pickle.HIGHEST_PROTOCOL)

    @property
    def restarts(self) -> int:
        return self.process.restarts

    @property
    def in_process(self) -> bool:
        """Its requests are served in the grading process (``InProcessEngine``)."""
        return isinstance(self.process, InProcessEngine)

    def _start(self) -> subprocess.Popen[bytes]:
        return spawn_child()

    def close(self) -> None:
        """Ends a process of its own; in a shared one, the child only lets the database go."""
        self.process.forget_held(self._key)
        if not self.shared:
            self.process.close()
        elif not any(t.key is self._key for t in self.process.pending):
            self.process.tell(pickle.dumps((self._key, "forget", {}), protocol=pickle.HIGHEST_PROTOCOL))

    def call(self, op: str, payload: dict[str, Any], *, exec_timeout: float | None = None) -> dict[str, Any]:
        """Send one request and wait for its answer."""
        return self.result(self.submit(op, payload, exec_timeout=exec_timeout))

    def submit(self, op: str, payload: dict[str, Any], *, exec_timeout: float | None = None,
               ahead: bool = False) -> "Ticket":
        """Send a request without waiting: the child answers requests in order, so the
        parent can prepare the next case while the child executes this one. With ``ahead``
        the request is only sent if it cannot stall the pipe (small, at most one queued
        before it); otherwise the ticket is sent when its result is asked for."""
        ticket = Ticket(op, pickle.dumps((self._key, op, payload), protocol=pickle.HIGHEST_PROTOCOL),
                        exec_timeout if exec_timeout is not None else query_budget(self.limits.timeout_s), self._key)
        if exec_timeout is None:  # a query's limit: CPU time, with the wall budget as its bound
            ticket.rate = float(max(1, int(self.limits.threads)))  # the limit is per thread (watchdog.QueryTime)
            ticket.limit_s, ticket.cpu_limit = self.limits.timeout_s, (self.limits.timeout_s + GRACE_S) * ticket.rate
        if ahead and not self.process.fits(len(ticket.blob)):
            self.process.poll()  # answers already written make room: sent now rather than held
        if ahead and (not self.process.fits(len(ticket.blob)) or len(ticket.blob) > _AHEAD_BYTES):
            if len(ticket.blob) <= _AHEAD_BYTES:  # sent once an answer is read (EngineProcess.hold)
                self.process.hold(ticket, self._start)
            return ticket
        self.process.send(ticket, self._start)
        return ticket

    def poll(self) -> None:
        """Take the answers the engine has written already, without waiting (``EngineProcess.poll``)."""
        self.process.poll()

    @property
    def behind(self) -> bool:
        """The engine process is the slower of the two: from one grade to the next it spends
        more CPU time than this process (a moving average; CPU, not waits, so the machine's
        load does not move it), so it sets a serial run's pace, and work that either process
        can do (the structural diff, ``layers.send``) is better done here. The average
        balances the two: the more is kept here, the more this process spends, and the
        more goes to the engine again."""
        return self.process.cpu_balance > 0.0

    def result(self, ticket: "Ticket") -> dict[str, Any]:
        first = ticket.op == "grade" and not ticket.asked  # a grade's first asking: one a case
        ticket.asked = True
        while not ticket.done:
            if not ticket.sent:  # queued ahead, or queued behind a request whose child was killed
                self.process.send(ticket, self._start)
            self.process.read_next()
        if first and isinstance(self.process, EngineProcess):
            self.process.weigh(time.process_time())
        if ticket.error is not None:
            raise ticket.error
        value: dict[str, Any] = ticket.value
        return value


def query_budget(limit_s: float) -> float:
    """The wall time the parent gives one query before it kills the engine process: the
    limit plus ``starved_bound`` (ten times it, at least 30 s: more than a PostgreSQL
    query's second attempt, and the wall bound of an engine whose CPU time is read) plus
    ``GRACE_S``. Only a query that ignores its interrupt on a machine loaded past that
    bound waits this long. Without CPU clocks, ten times the limit (``tenfold``) is left
    for PostgreSQL's second attempt."""
    return limit_s + (starved_bound(limit_s) if CPU_CLOCKS else tenfold(limit_s)) + GRACE_S


class Ticket:
    """One request to the engine process and, once read, its answer. A query's ticket
    has its limit (``limit_s``), the child's CPU time past which it is killed
    (``cpu_limit``) and how fast that time can grow (``rate``: the engine's threads)."""

    def __init__(self, op: str, blob: bytes, budget: float, key: bytes = b"") -> None:
        self.op, self.blob, self.budget, self.key = op, blob, budget, key
        self.limit_s: float | None = None
        self.cpu_limit: float | None = None
        self.rate = 1.0
        self.sent = self.done = False
        self.value: Any = None
        self.partial: Any = None
        self.error: HostCrashed | None = None
        self.timed = False  # its deadline is set (by its start, told or inferred)
        self.deadline = 0.0  # monotonic: past it the child is killed
        self.began: float | None = None  # when the child started this request's current query (monotonic)
        self.since: tuple[float, float] | None = None  # (monotonic, the child's CPU time) then, where /proc reads it
        self.look = float("inf")  # when to read the child's CPU time next
        self.sent_at = 0.0  # monotonic, when it was written to the child
        self.waited = 0.0  # seconds this process was blocked on the pipe for it (SQLEVAL_IPC_TRACE only)
        self.asked = False  # its answer was asked for (``EngineHost.result``)

    def started(self, at: float, cpu: float | None) -> None:
        """The child started a query of this request at ``at`` (monotonic) with ``cpu``
        seconds of CPU time spent (None: unknown): its budget runs from there."""
        self.timed, self.deadline, self.began = True, at + self.budget, at
        self.since = (at, cpu) if cpu is not None else None
        self.look = (at + self.cpu_limit / self.rate if self.since is not None and self.cpu_limit is not None
                     else float("inf"))

    def reset(self) -> None:
        """Forget what the frames of an earlier send said (a child killed before it ran this)."""
        self.timed, self.deadline, self.began, self.since, self.look = False, 0.0, None, None, float("inf")


# -- child side ------------------------------------------------------------------------
def started(out: Any) -> None:
    """Tell the parent a query of this request starts now: its execution budget runs from here."""
    _write(out, ("started", _stamp()))


def _stamp() -> tuple[float, float]:
    """Now, as the parent times a query: the machine's monotonic clock (the parent's too)
    and this process's CPU time (as /proc reads it)."""
    return time.monotonic(), time.process_time()


def executed(out: Any) -> None:
    """Tell the parent execution finished in time: what follows has ``COMPARE_TIMEOUT_S``."""
    _write(out, ("executed", None))


def partial(out: Any, answer: Any) -> None:
    """Tell the parent the answer to give if the rest of this request does not finish."""
    _write(out, ("partial", answer))


def load_handler(spec: str) -> Any:
    """The class a ``"module:Class"`` string names."""
    module, _, name = spec.partition(":")
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        raise ImportError(f"no engine handler {spec!r} ({exc})") from exc


class _Server:
    OPS = ("describe",)  # the host's own requests; any other goes to the handler

    def __init__(self, database: str, limits: dict[str, Any], cache_dir: str, handler: str | None = None,
                 handler_args: tuple[Any, ...] = ()) -> None:
        from . import open_sandbox
        self.database = database
        self.limits = Limits(**limits)
        self.db = open_sandbox(database, self.limits)
        self.cache_dir = Path(cache_dir)
        self.handler = load_handler(handler)(self.db, self.limits, *handler_args) if handler else None

    def close(self) -> None:
        try:
            self.db.close()
        except Exception:
            pass  # a database that will not close is let go all the same

    def serve(self, op: str, payload: dict[str, Any], out: Any) -> Any:
        if op in self.OPS:
            return getattr(self, op)(payload, out)
        if self.handler is None or op.startswith("_") or not hasattr(self.handler, op):
            raise AttributeError(f"no handler serves {op!r} requests")
        return getattr(self.handler, op)(payload, out)

    def describe(self, _: dict[str, Any], out: Any) -> dict[str, Any]:
        return {"engine": self.db.name, "engine_version": self.db.version, "dialect": self.db.dialect,
                "content_hash": self._content_hash(), "catalog": self.db.catalog()}

    def _content_hash(self) -> str:
        """The content hash reads every row, so it is kept per version of a database file:
        keyed by the file's identity, size and modification time (and its WAL's), a rerun
        on an unchanged file reads it back instead. A server database is hashed each time."""
        import hashlib
        from .shared import is_url
        if is_url(self.database):
            return self.db.content_hash()
        try:
            stats = []
            for f in (Path(self.database), Path(str(self.database) + ".wal")):
                if f.exists():
                    st = f.stat()
                    stats.append([str(f.resolve()), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns])
        except OSError:
            return self.db.content_hash()
        key = hashlib.sha256(json.dumps([stats, self.db.name, self.db.version]).encode()).hexdigest()[:32]
        path = self.cache_dir / "content-hash" / f"{key}.txt"
        try:
            return path.read_text().strip()
        except OSError:
            pass
        digest = self.db.content_hash()
        write_cache_file(path, digest)
        return digest


MAX_OPEN_IN_CHILD = 8  # databases a shared child keeps open (least recently used closed)


def main() -> None:  # pragma: no cover - runs in the child
    global _ROLE
    _ROLE = "engine"
    sys.modules.setdefault("pytest_sqleval.core.engines.host", sys.modules[__name__])  # a handler imports this module: once
    from ..childio import private_stdout
    out = private_stdout()  # nothing but frames on the pipe, whatever an engine's C code prints
    inp = os.fdopen(sys.stdin.fileno(), "rb", closefd=False)

    def read() -> Any:
        (n,) = _HDR.unpack(inp.read(_HDR.size) or b"\0" * 8)
        return pickle.loads(inp.read(n)) if n else ("quit", {})

    init = read()
    try:
        from .registry import adopt
        adopt(init.get("engines", ()), init.get("sys_path", ()))  # the grading process's plugin engines
        broken = None
    except Exception as exc:  # every database's requests say why
        broken = exc
    for module in init.get("warm", ()) if broken is None else ():  # what its first request will need
        try:
            importlib.import_module(module)
        except Exception:
            pass  # the request that needs it says why
    servers: dict[bytes, _Server] = {}  # a database's key (see EngineHost) -> its open sandbox, in order of use
    # Each answer carries when it was written (``_stamp``): the parent times the next request
    # from it, so a request needs no "started" of its own, one message fewer a request. Only
    # after work the parent cannot see (start-up, opening a database, letting one go) is the
    # start told: that work's time is not the query's.
    tell_start = True
    # What start-up made (the modules imported, their objects) lives as long as the process:
    # frozen, it is not traversed again by every later collection (a full one cost 12-20 ms a
    # run, about 0.02 ms a request at 1000 cases). Unfrozen before exit: frozen objects are never
    # freed, and DuckDB's bindings would report theirs leaked.
    gc.freeze()
    try:
        while True:
            idle = time.monotonic() if TRACING else 0.0
            message = read()
            if len(message) == 2:  # ("quit", {})
                return
            key, op, payload = message
            received = time.monotonic() if TRACING else 0.0
            server = servers.pop(key, None)
            if op == "forget":
                if server is not None:
                    server.close()
                tell_start = True
                continue
            if server is None:
                config = pickle.loads(key)
                tell_start = True
                try:
                    if broken is not None:
                        raise broken
                    server = _Server(**config)
                except Exception as exc:  # this request fails; the child goes on serving the others
                    from .shared import display_location
                    _write(out, ("error", f"cannot open {display_location(config.get('database'))}: {exc}"))
                    continue
                while len(servers) >= MAX_OPEN_IN_CHILD:
                    servers.pop(next(iter(servers))).close()
            servers[key] = server
            if tell_start:
                started(out)
                tell_start = False
            try:
                body = server.serve(op, payload, out)
                _write(out, ("result", body, _stamp()))
            except Exception as exc:
                _write(out, ("error", f"{type(exc).__name__}: {exc}", _stamp()))
            if TRACING:  # the pipe's timeline: idle from, received, answered (monotonic), this process's CPU
                trace_event("serve", op, idle, received, time.monotonic(), time.process_time())
    finally:
        gc.unfreeze()


if __name__ == "__main__":  # pragma: no cover
    main()
