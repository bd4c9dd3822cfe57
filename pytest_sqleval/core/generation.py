"""Generation: asking backends for SQL, concurrently, once per case, cached on disk.

One asyncio loop per process runs in a background thread; every case of the session is
submitted up front, so generations overlap across cases while items are graded in
pytest's order. At most ``concurrency`` calls are in flight. Finished generations are
stored under (backend fingerprint, case content hash); a claim file per case keeps two
xdist workers from generating the same case, and lets a resumed run skip finished work.

The loop thread shares the GIL with the main thread, which grades (CPU-bound) while the
generations run. Every socket event and file operation makes the loop thread wait for the
GIL again, up to the interpreter's switch interval (5 ms by default), which stretched a
C=32 generation phase by half. So the loop does as little disk work as it can (cached
cases are found by one directory listing at submission, a claim is one ``link(2)``,
saving a result and releasing its claim happen on a writer thread after the slot has
gone to the next case), and the switch interval is lowered while generations are
outstanding.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import json
import os
import shutil
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

from .backends.base import Backend, GenerationResult
from .cases import BenchmarkCase
from .childio import process_exists
from .errors import NoPrediction

POLL_S = 0.05
WAIT_TICK_S = 0.25  # how often a case waiting for its generation lets live progress redraw
CLAIM_GRACE_S = 5.0  # beyond the generation timeout, for the claim's owner to save its result
SWITCH_INTERVAL_S = 0.0005  # the interpreter's thread switch interval while generations are outstanding

# The switch interval is the process's, so it is held for all services together: lowered
# when the first generation anywhere goes out, restored when the last one is done.
_SWITCH_LOCK = threading.Lock()
_SWITCH: dict[str, Any] = {"holders": 0, "saved": None}


def _hold_switch_interval(delta: int) -> None:
    with _SWITCH_LOCK:
        before = _SWITCH["holders"]
        after = _SWITCH["holders"] = max(0, before + delta)
        if not before and after:
            _SWITCH["saved"] = sys.getswitchinterval()
            sys.setswitchinterval(min(_SWITCH["saved"], SWITCH_INTERVAL_S))
        elif before and not after and _SWITCH["saved"] is not None:
            sys.setswitchinterval(_SWITCH["saved"])
            _SWITCH["saved"] = None


@dataclass
class Generated:
    sql: str | None
    metadata: dict[str, Any] = field(default_factory=dict)
    cached: bool = False
    elapsed_ms: float = 0.0
    error: str | None = None
    # the backend has no answer for the case (``errors.NoPrediction``): why; the case then
    # fails as ``no_prediction`` (a wrong answer), it is not a backend error
    no_prediction: str | None = None
    # A crashed backend's exception is also kept, as the attribute ``exception`` (not a
    # field: it is never saved, nor copied into records), so the case's error report can
    # show the backend's own traceback (items.CaseItem.setup, items.backend_traceback).


class GenerationStore:
    """Finished generations on disk, plus per-case claims shared by all processes of a run."""

    def __init__(self, root: Path, run_id: str, persistent: bool = True) -> None:
        self.persistent = persistent
        self.root = Path(root) / ("generations" if persistent else f"run-{run_id}")
        self.run_id = run_id
        self._held: set[Path] = set()
        self._folders: set[Path] = set()
        self._owner: Path | None = None  # this process's claim content, hard-linked as each claim

    def _path(self, fingerprint: str, case_hash: str) -> Path:
        return self.root / fingerprint / f"{case_hash}.json"

    def _folder(self, fingerprint: str) -> Path:
        """The fingerprint's folder, made once per process rather than once per case."""
        folder = self.root / fingerprint
        if folder not in self._folders:
            folder.mkdir(parents=True, exist_ok=True)
            self._folders.add(folder)
        return folder

    def finished(self, fingerprint: str) -> set[str]:
        """Content hashes with a saved generation: one directory listing, where looking
        each case up would cost a failed open per case."""
        try:
            with os.scandir(self.root / fingerprint) as entries:
                return {e.name[:-5] for e in entries if e.name.endswith(".json")}
        except OSError:
            return set()

    def load(self, fingerprint: str, case_hash: str) -> Generated | None:
        path = self._path(fingerprint, case_hash)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return Generated(data["sql"], data.get("metadata", {}), True, data.get("elapsed_ms", 0.0))

    def save(self, fingerprint: str, case_hash: str, gen: Generated) -> None:
        path = self._folder(fingerprint) / f"{case_hash}.json"
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"sql": gen.sql, "metadata": gen.metadata, "elapsed_ms": gen.elapsed_ms},
                                  default=str), encoding="utf-8")
        os.replace(tmp, path)

    def _failure(self, fingerprint: str, case_hash: str) -> Path:
        return self.root.parent / f"run-{self.run_id}-failed" / fingerprint / f"{case_hash}.txt"

    def save_failure(self, fingerprint: str, case_hash: str, error: str) -> None:
        """A failed generation, kept for this run only: another xdist worker waiting on the
        case takes it instead of calling the backend again (a later run does call again)."""
        path = self._failure(fingerprint, case_hash)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(error, encoding="utf-8")

    def load_failure(self, fingerprint: str, case_hash: str) -> Generated | None:
        try:
            return Generated(None, {}, False, 0.0, self._failure(fingerprint, case_hash).read_text(encoding="utf-8"))
        except OSError:
            return None

    def claim(self, fingerprint: str, case_hash: str, *, force: bool = False) -> bool:
        """Take the right to generate this case. A claim holds "pid run_id start", the
        owner's start time (from ``/proc/<pid>/stat``) naming the process and not just its
        pid. It is stale, and taken over, when its process died, when the pid now belongs to
        another process (the start time differs: a recycled pid), or when it is this
        process's own pid from another run (pid 1 in every fresh container). ``force``
        takes it over anyway: a waiter whose wait ran past the generation timeout."""
        path = self._folder(fingerprint) / f"{case_hash}.claim"
        for _ in range(2):
            try:
                self._create_claim(path)
            except FileExistsError:
                if not force and self.holder(path) is not None:
                    return False
                path.unlink(missing_ok=True)
                continue
            self._held.add(path)
            return True
        return False

    def holder(self, path: Path) -> int | None:
        """The pid of the live process holding the claim at ``path``, or None if it is stale."""
        try:
            parts = path.read_text().split()
            pid = int(parts[0]) if parts else 0
        except (OSError, ValueError):
            return None
        owner = parts[1] if len(parts) > 1 else ""
        started = parts[2] if len(parts) > 2 else None
        if not pid or not _alive(pid) or (pid == os.getpid() and owner != self.run_id):
            return None
        if started is not None:
            now = _start_time(pid)
            if now is not None and now != started:
                return None
        return pid

    def _create_claim(self, path: Path) -> None:
        """Create ``path`` holding "pid run_id start", or raise FileExistsError. A hard link to this
        process's owner file does it in one step: one system call, and no moment at which
        another process could read the claim empty and take it for stale."""
        owner = f"{os.getpid()} {self.run_id} {_start_time(os.getpid()) or '-'}"
        if self._owner is None:
            self._owner = self.root / f".owner-{os.getpid()}-{self.run_id}"
            self._owner.write_text(owner)
        try:
            os.link(self._owner, path)
        except FileExistsError:
            raise
        except OSError:  # a file system without hard links
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            with os.fdopen(fd, "w") as fh:
                fh.write(owner)

    def release(self, fingerprint: str, case_hash: str) -> None:
        path = self._path(fingerprint, case_hash).with_suffix(".claim")
        self._held.discard(path)
        path.unlink(missing_ok=True)

    def release_all(self) -> None:
        """Drop the claims of generations that never finished (an interrupted or ``-x`` run)."""
        for path in list(self._held):
            path.unlink(missing_ok=True)
        self._held.clear()
        if self._owner is not None:
            self._owner.unlink(missing_ok=True)
            self._owner = None

    def discard_run(self) -> None:
        shutil.rmtree(self.root.parent / f"run-{self.run_id}-failed", ignore_errors=True)
        if not self.persistent:
            shutil.rmtree(self.root, ignore_errors=True)


def _case_hash(backend: Backend, case: BenchmarkCase) -> str | None:
    """The case's part of the cache key: its content, and whatever else the backend says its
    generation depends on (``Backend.case_key``: the agent's schema text). A key that cannot
    be computed (the suite's database is gone) means no cache: the call reports the problem."""
    if backend.case_key is None:
        return case.content_hash
    try:
        extra = backend.case_key(case)
    except Exception:  # the generation itself raises it again, as the case's backend error
        return None
    return hashlib.sha256(f"{case.content_hash}\0{extra}".encode()).hexdigest()[:32]


def _key(backend: Backend, case: BenchmarkCase) -> tuple[str, str, str]:
    # the fingerprint (or, uncached, the description naming a predictions file by path and
    # content) keeps two backends apart even if they were ever given one label
    return backend.label, backend.fingerprint or backend.description, f"{case.suite}::{case.id}"


class _Interrupted(Exception):
    """A backend raised KeyboardInterrupt or SystemExit; re-raised in the waiting item."""

    def __init__(self, original: BaseException) -> None:
        super().__init__(repr(original))
        self.original = original


async def _guarded(call: Callable[[], Any]) -> Any:
    """Left alone, a KeyboardInterrupt or SystemExit from a backend stops the loop thread
    and leaves every waiting item hanging; carried to the item instead, it interrupts the
    run like Ctrl-C. The backend's coroutine is made only once this one runs, so a call
    cancelled before it starts leaves no "never awaited" warning behind."""
    try:
        return await call()
    except (KeyboardInterrupt, SystemExit) as exc:
        raise _Interrupted(exc) from None


def _start_time(pid: int) -> str | None:
    """When process ``pid`` started, in clock ticks since boot (``/proc/<pid>/stat`` field
    22), or None where /proc is not available. A pid is reused; (pid, start time) is not."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


class _DaemonThreads(concurrent.futures.ThreadPoolExecutor):
    """The loop's default executor (``asyncio.to_thread``: sync backends): one daemon thread
    per call. A ThreadPoolExecutor's workers are joined at interpreter exit, so a sync
    backend that never returns kept pytest from exiting after its case had timed out; a
    daemon thread is abandoned instead. Calls are few (at most ``concurrency`` in flight,
    each bounded by the generation timeout), so a thread each costs nothing that matters.
    (A ThreadPoolExecutor subclass only because asyncio accepts nothing else; its pool is
    never used.)"""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> concurrent.futures.Future[Any]:
        fut: concurrent.futures.Future[Any] = concurrent.futures.Future()

        def run() -> None:
            if not fut.set_running_or_notify_cancel():
                return
            try:
                fut.set_result(fn(*args, **kwargs))
            except BaseException as exc:  # noqa: BLE001 - handed to the awaiting coroutine
                fut.set_exception(exc)

        threading.Thread(target=run, name="sqleval-sync-backend", daemon=True).start()
        return fut

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        pass  # nothing to join: a stuck backend's thread is abandoned


def _alive(pid: int) -> bool:
    """Whether a claim's owner still runs. A zombie counts as dead: an xdist worker killed
    mid-run stays a zombie until the controller reaps it, and its claims must be taken over."""
    if not process_exists(pid):
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state not in ("Z", "X")


class GenerationService:
    """Submits generations to one event loop in a background thread."""

    def __init__(self, store: GenerationStore, concurrency: int = 8, timeout_s: float = 300.0) -> None:
        self.store = store
        self.concurrency = max(1, concurrency)
        self.timeout_s = timeout_s
        self.calls = 0  # real backend invocations in this process
        self.cache_hits = 0
        self.in_flight = 0
        self.max_in_flight = 0
        # for live progress (reports/progress.py): pairs asked for, found cached when asked,
        # calls finished (failed ones too), failed, and the tokens and cost the backends reported
        self.submitted = self.listed_hits = self.finished = self.failed = self.tokens = 0
        self.cost_usd = 0.0
        self.waiting: Callable[[], None] | None = None  # called while a case waits for its generation
        self._futures: dict[tuple[str, str, str], concurrent.futures.Future[Generated]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._sem: asyncio.Semaphore | None = None
        self._lock = threading.Lock()
        self._writer = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="sqleval-generation-store")
        self._outstanding = 0  # generations sent to the loop and not finished
        self._switch_lock = threading.Lock()

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            loop = asyncio.new_event_loop()
            ready = threading.Event()

            loop.set_default_executor(_DaemonThreads())

            def run() -> None:
                asyncio.set_event_loop(loop)
                self._sem = asyncio.Semaphore(self.concurrency)
                ready.set()
                loop.run_forever()

            threading.Thread(target=run, name="sqleval-generation", daemon=True).start()
            ready.wait()
            self._loop = loop
        return self._loop

    def submit(self, backend: Backend, case: BenchmarkCase,
               finished: set[str] | None = None) -> concurrent.futures.Future[Generated]:
        """``finished``: the fingerprint's listing from :meth:`GenerationStore.finished`; a case
        not in it is not looked up on disk here."""
        key = _key(backend, case)
        with self._lock:
            fut = self._futures.get(key)
            if fut is None:
                self.submitted += 1
                fut = self._futures[key] = self._start(backend, case, finished)
        return fut

    def _start(self, backend: Backend, case: BenchmarkCase,
               finished: set[str] | None) -> concurrent.futures.Future[Generated]:
        """A cached case is answered on the submitting thread; only calls go to the loop."""
        fingerprint = backend.fingerprint
        case_hash = _case_hash(backend, case) if fingerprint is not None else None
        if fingerprint is not None and case_hash is not None:
            listed = finished is None or case_hash in finished
            hit = self.store.load(fingerprint, case_hash) if listed else None
            if hit is not None:
                self.cache_hits += 1
                self.listed_hits += 1
                done: concurrent.futures.Future[Generated] = concurrent.futures.Future()
                done.set_result(hit)
                return done
        self._track()  # before scheduling: the loop thread may start the call at once
        fut = asyncio.run_coroutine_threadsafe(self._generate(backend, case, case_hash), self._ensure_loop())
        fut.add_done_callback(self._untrack)
        return fut

    def _track(self) -> None:
        """While generations are outstanding, the GIL changes hands at most every
        ``SWITCH_INTERVAL_S``, so the loop thread gets it back soon after each event while the
        main thread grades. Grading pays nothing for it: a switch is only forced when another
        thread waits for the GIL. The interval is restored once the last generation is done."""
        with self._switch_lock:
            self._outstanding += 1
        _hold_switch_interval(1)

    def _untrack(self, _fut: concurrent.futures.Future[Generated]) -> None:
        with self._switch_lock:
            if not self._outstanding:  # already let go of by close()
                return
            self._outstanding -= 1
        _hold_switch_interval(-1)

    def prefetch(self, pairs: list[tuple[Backend, BenchmarkCase]]) -> None:
        listings: dict[str, set[str]] = {}
        for backend, case in pairs:
            fp = backend.fingerprint
            if fp is not None and fp not in listings:
                listings[fp] = self.store.finished(fp)
            self.submit(backend, case, listings.get(fp) if fp is not None else None)

    def ready(self, backend: Backend, case: BenchmarkCase) -> Generated | None:
        """The generation if it has finished, else None; never waits."""
        fut = self._futures.get(_key(backend, case))
        if fut is None or not fut.done() or fut.cancelled() or fut.exception() is not None:
            return None
        return fut.result()

    def progress(self) -> dict[str, Any]:
        """This process's counts, for live progress (``reports.progress.combine``)."""
        return {"total": self.submitted, "cached": self.listed_hits, "called": self.finished,
                "in_flight": self.in_flight, "tokens": self.tokens, "cost_usd": round(self.cost_usd, 6),
                "failed": self.failed}

    def get(self, backend: Backend, case: BenchmarkCase) -> Generated:
        fut = self.submit(backend, case)
        try:
            while self.waiting is not None and not fut.done():
                self.waiting()
                concurrent.futures.wait([fut], timeout=WAIT_TICK_S)
            return fut.result()
        except _Interrupted as exc:
            raise exc.original from None

    async def _generate(self, backend: Backend, case: BenchmarkCase, case_hash: str | None) -> Generated:
        assert self._sem is not None
        fp = backend.fingerprint
        if fp is None or case_hash is None:  # never cached
            async with self._sem:
                return await self._invoke(backend, case)
        waited_since: float | None = None
        while True:
            # Waiting on another process's claim is bounded: past the generation timeout (plus
            # time to save), that process is stuck or gone unnoticed, and this one takes over.
            overdue = waited_since is not None and time.monotonic() - waited_since > self.timeout_s + min(
                CLAIM_GRACE_S, self.timeout_s)
            # Claim only once a slot is free: a process never sits on claims it cannot start,
            # so xdist workers split the cases instead of one worker claiming them all.
            async with self._sem:
                if self.store.claim(fp, case_hash, force=overdue):
                    # it may have finished (or failed, this run) since it was looked up
                    hit = self.store.load(fp, case_hash) or self.store.load_failure(fp, case_hash)
                    if hit is not None:
                        self.store.release(fp, case_hash)
                        self.cache_hits += hit.error is None
                        return hit
                    try:
                        gen = await self._invoke(backend, case)
                    except BaseException:  # cancelled by close(), or interrupted: nothing to keep
                        self.store.release(fp, case_hash)
                        raise
                    # The claim is held until the result is on disk, so no other process asks
                    # for this case meanwhile; the disk work is the writer thread's.
                    self._writer.submit(self._keep, fp, case_hash, gen)
                    return gen
            if waited_since is None:
                waited_since = time.monotonic()
            await asyncio.sleep(POLL_S)  # another process is generating this case
            hit = self.store.load(fp, case_hash) or self.store.load_failure(fp, case_hash)
            if hit is not None:
                self.cache_hits += hit.error is None
                return hit

    def _keep(self, fingerprint: str, case_hash: str, gen: Generated) -> None:
        """On the writer thread: save a successful generation, then release its claim. A save
        that fails (a full disk) costs only a generation again next run."""
        try:
            if gen.error is not None:
                self.store.save_failure(fingerprint, case_hash, gen.error)
            elif gen.no_prediction is None:  # no answer is not kept: the next run asks again
                self.store.save(fingerprint, case_hash, gen)
        finally:
            self.store.release(fingerprint, case_hash)

    async def _invoke(self, backend: Backend, case: BenchmarkCase) -> Generated:
        """One backend call; the caller holds a concurrency slot."""
        self.calls += 1
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        start = time.perf_counter()
        try:
            out = await asyncio.wait_for(_guarded(lambda: backend.generate(case)), self.timeout_s)
        except asyncio.TimeoutError:
            self.failed += 1
            return Generated(None, {}, False, _ms(start), f"backend timed out after {self.timeout_s:g} s")
        except _Interrupted:
            raise
        except NoPrediction as exc:  # no answer for this case: graded as a wrong one, not a crash
            return Generated(None, {}, False, _ms(start), no_prediction=str(exc))
        except Exception as exc:  # the backend is the system under test: any crash is a case error
            self.failed += 1
            failed = Generated(None, {}, False, _ms(start), f"{type(exc).__name__}: {exc}")
            failed.exception = exc  # type: ignore[attr-defined]  # its traceback, for the case's report
            return failed
        finally:
            self.in_flight -= 1
            self.finished += 1
        gen = self._result(out, _ms(start))
        if gen.error is not None:
            self.failed += 1
        else:
            meta = gen.metadata  # a backend's own words: numbers where it gave numbers, else nothing
            self.tokens += int(_number(meta.get("total_tokens")) or _number(meta.get("prompt_tokens"))
                               + _number(meta.get("completion_tokens")))
            self.cost_usd += _number(meta.get("cost_usd"))
        return gen

    @staticmethod
    def _result(out: Any, elapsed: float) -> Generated:
        """What a backend returned, checked."""
        if isinstance(out, GenerationResult):
            sql, meta = out.sql, dict(out.metadata)
        elif isinstance(out, str):
            sql, meta = out, {}
        else:
            return Generated(None, {}, False, elapsed,
                             f"backend returned {type(out).__name__}; expected str or GenerationResult")
        if not isinstance(sql, str):
            return Generated(None, meta, False, elapsed, f"backend returned sql of type {type(sql).__name__}")
        return Generated(sql, meta, False, elapsed)

    def close(self) -> None:
        """Cancel unfinished generations (a ``-x`` or interrupted run) and let them unwind,
        so their claims are released and no "Task was destroyed" noise follows the run."""
        if self._loop is not None:
            loop, self._loop = self._loop, None
            try:
                asyncio.run_coroutine_threadsafe(_cancel_all(), loop).result(timeout=5)
            except Exception:  # a loop that will not unwind in time is abandoned (daemon thread)
                pass
            loop.call_soon_threadsafe(loop.stop)
        self._writer.shutdown(wait=True)  # finished generations reach the disk before the run ends
        self.store.release_all()
        with self._switch_lock:  # an abandoned loop never finishes its generations
            left, self._outstanding = self._outstanding, 0
        _hold_switch_interval(-left)


async def _cancel_all() -> None:
    tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


def _number(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 3)


def generated_to_dict(gen: Generated) -> dict[str, Any]:
    return asdict(gen)
