"""Generation: asking backends for SQL, concurrently, once per case, cached on disk.

One asyncio loop per process runs in a background thread; every case of the session is
submitted up front, so generations overlap across cases while items are graded in
pytest's order. At most ``concurrency`` calls are in flight. Finished generations are
stored under (backend fingerprint, case content hash); a claim file per case keeps two
xdist workers from generating the same case, and lets a resumed run skip finished work.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import shutil
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .backends.base import Backend, GenerationResult
from .cases import BenchmarkCase

POLL_S = 0.05


@dataclass
class Generated:
    sql: str | None
    metadata: dict[str, Any] = field(default_factory=dict)
    cached: bool = False
    elapsed_ms: float = 0.0
    error: str | None = None


class GenerationStore:
    """Finished generations on disk, plus per-case claims shared by all processes of a run."""

    def __init__(self, root: Path, run_id: str, persistent: bool = True) -> None:
        self.persistent = persistent
        self.root = Path(root) / ("generations" if persistent else f"run-{run_id}")
        self.run_id = run_id
        self._held: set[Path] = set()

    def _path(self, fingerprint: str, case_hash: str) -> Path:
        return self.root / fingerprint / f"{case_hash}.json"

    def load(self, fingerprint: str, case_hash: str) -> Generated | None:
        path = self._path(fingerprint, case_hash)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return Generated(data["sql"], data.get("metadata", {}), True, data.get("elapsed_ms", 0.0))

    def save(self, fingerprint: str, case_hash: str, gen: Generated) -> None:
        path = self._path(fingerprint, case_hash)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"sql": gen.sql, "metadata": gen.metadata, "elapsed_ms": gen.elapsed_ms},
                                  default=str), encoding="utf-8")
        os.replace(tmp, path)

    def claim(self, fingerprint: str, case_hash: str) -> bool:
        """Take the right to generate this case. A claim is stale, and taken over, when its
        process died or when it is this process's own pid from another run (a recycled pid,
        e.g. pid 1 in every fresh container)."""
        path = self._path(fingerprint, case_hash).with_suffix(".claim")
        path.parent.mkdir(parents=True, exist_ok=True)
        for _ in range(2):
            try:
                fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                try:
                    raw_pid, _, owner = path.read_text().partition(" ")
                    pid = int(raw_pid or "0")
                except (OSError, ValueError):
                    pid, owner = 0, ""
                if pid and _alive(pid) and not (pid == os.getpid() and owner != self.run_id):
                    return False
                path.unlink(missing_ok=True)
                continue
            with os.fdopen(fd, "w") as fh:
                fh.write(f"{os.getpid()} {self.run_id}")
            self._held.add(path)
            return True
        return False

    def release(self, fingerprint: str, case_hash: str) -> None:
        path = self._path(fingerprint, case_hash).with_suffix(".claim")
        self._held.discard(path)
        path.unlink(missing_ok=True)

    def release_all(self) -> None:
        """Drop the claims of generations that never finished (an interrupted or ``-x`` run)."""
        for path in list(self._held):
            path.unlink(missing_ok=True)
        self._held.clear()

    def discard_run(self) -> None:
        if not self.persistent:
            shutil.rmtree(self.root, ignore_errors=True)


class _Interrupted(Exception):
    """A backend raised KeyboardInterrupt or SystemExit; re-raised in the waiting item."""

    def __init__(self, original: BaseException) -> None:
        super().__init__(repr(original))
        self.original = original


async def _guarded(coro: Any) -> Any:
    """Left alone, a KeyboardInterrupt or SystemExit from a backend stops the loop thread
    and leaves every waiting item hanging; carried to the item instead, it interrupts the
    run like Ctrl-C."""
    try:
        return await coro
    except (KeyboardInterrupt, SystemExit) as exc:
        raise _Interrupted(exc) from None


def _alive(pid: int) -> bool:
    """Whether a claim's owner still runs. A zombie counts as dead: an xdist worker killed
    mid-run stays a zombie until the controller reaps it, and its claims must be taken over."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
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
        self._futures: dict[tuple[str, str], concurrent.futures.Future[Generated]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._sem: asyncio.Semaphore | None = None
        self._lock = threading.Lock()

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            loop = asyncio.new_event_loop()
            ready = threading.Event()

            def run() -> None:
                asyncio.set_event_loop(loop)
                self._sem = asyncio.Semaphore(self.concurrency)
                ready.set()
                loop.run_forever()

            threading.Thread(target=run, name="sqleval-generation", daemon=True).start()
            ready.wait()
            self._loop = loop
        return self._loop

    def submit(self, backend: Backend, case: BenchmarkCase) -> concurrent.futures.Future[Generated]:
        key = (backend.label, f"{case.suite}::{case.id}")
        with self._lock:
            fut = self._futures.get(key)
            if fut is None:
                fut = asyncio.run_coroutine_threadsafe(self._generate(backend, case), self._ensure_loop())
                self._futures[key] = fut
        return fut

    def prefetch(self, pairs: list[tuple[Backend, BenchmarkCase]]) -> None:
        for backend, case in pairs:
            self.submit(backend, case)

    def ready(self, backend: Backend, case: BenchmarkCase) -> Generated | None:
        """The generation if it has finished, else None; never waits."""
        fut = self._futures.get((backend.label, f"{case.suite}::{case.id}"))
        if fut is None or not fut.done() or fut.cancelled() or fut.exception() is not None:
            return None
        return fut.result()

    def get(self, backend: Backend, case: BenchmarkCase) -> Generated:
        try:
            return self.submit(backend, case).result()
        except _Interrupted as exc:
            raise exc.original from None

    async def _generate(self, backend: Backend, case: BenchmarkCase) -> Generated:
        fp = backend.fingerprint
        if fp is None:
            return await self._call(backend, case)
        ch = case.content_hash
        assert self._sem is not None
        while True:
            hit = self.store.load(fp, ch)
            if hit is not None:
                self.cache_hits += 1
                return hit
            # Claim only once a slot is free: a process never sits on claims it cannot start,
            # so xdist workers split the cases instead of one worker claiming them all.
            async with self._sem:
                if self.store.claim(fp, ch):
                    try:
                        hit = self.store.load(fp, ch)  # it may have finished between our look and our claim
                        if hit is not None:
                            self.cache_hits += 1
                            return hit
                        gen = await self._invoke(backend, case)
                        if gen.error is None:
                            self.store.save(fp, ch, gen)
                        return gen
                    finally:
                        self.store.release(fp, ch)
            await asyncio.sleep(POLL_S)  # another process is generating this case

    async def _call(self, backend: Backend, case: BenchmarkCase) -> Generated:
        assert self._sem is not None
        async with self._sem:
            return await self._invoke(backend, case)

    async def _invoke(self, backend: Backend, case: BenchmarkCase) -> Generated:
        """One backend call; the caller holds a concurrency slot."""
        self.calls += 1
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        start = time.perf_counter()
        try:
            out = await asyncio.wait_for(_guarded(backend.generate(case)), self.timeout_s)
        except asyncio.TimeoutError:
            return Generated(None, {}, False, _ms(start), f"backend timed out after {self.timeout_s:g} s")
        except _Interrupted:
            raise
        except Exception as exc:  # the backend is the system under test: any crash is a case error
            return Generated(None, {}, False, _ms(start), f"{type(exc).__name__}: {exc}")
        finally:
            self.in_flight -= 1
        elapsed = _ms(start)
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
        self.store.release_all()


async def _cancel_all() -> None:
    tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 3)


def generated_to_dict(gen: Generated) -> dict[str, Any]:
    return asdict(gen)
