"""One thread per process that interrupts queries past their deadline.

A ``threading.Timer`` per query cost a thread start and stop on every query (about
0.1 ms idle, far more on a loaded machine: 5 s of a variants distillation). Here every
sandbox of the process arms the same daemon thread instead. The guarantee a sandbox
relies on: an interrupt fires only for the query that armed it. The thread calls an
interrupt while holding the lock that ``disarm`` takes, and only for a token still
armed, so once ``disarm`` returns that query's interrupt can no longer fire, even when
its deadline passes just as the query ends; each query's interrupt names its own target
(DuckDB's exact cursor, the SQLite connection whose next statement clears the flag).
"""
from __future__ import annotations

import itertools
import os
import threading
import time
from typing import Callable

__all__ = ["Watchdog", "WATCHDOG"]


class Watchdog:
    """Deadlines of the queries running in this process, and the one thread that enforces them."""

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._armed: dict[int, tuple[float, Callable[[], object]]] = {}  # token -> (deadline, interrupt)
        self._tokens = itertools.count(1)
        self._thread: threading.Thread | None = None
        self.fired = 0  # interrupts called, for tests and diagnostics

    def arm(self, after_s: float, interrupt: Callable[[], object]) -> int:
        """Call ``interrupt`` ``after_s`` seconds from now unless ``disarm`` comes first; a token."""
        with self._cond:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, name="sqleval-watchdog", daemon=True)
                self._thread.start()
            token = next(self._tokens)
            self._armed[token] = (time.monotonic() + after_s, interrupt)
            self._cond.notify()
            return token

    def disarm(self, token: int) -> bool:
        """Cancel a query's interrupt; True if it fired. After this returns it cannot fire."""
        with self._cond:
            return self._armed.pop(token, None) is None

    def _loop(self) -> None:
        with self._cond:
            while True:
                now = time.monotonic()
                for token in [t for t, (deadline, _) in self._armed.items() if deadline <= now]:
                    _, interrupt = self._armed.pop(token)
                    self.fired += 1
                    try:
                        interrupt()  # under the lock: its query cannot finish disarming meanwhile
                    except Exception:
                        pass  # a target already closed: nothing left to interrupt
                self._cond.wait(min(d for d, _ in self._armed.values()) - now if self._armed else None)


WATCHDOG = Watchdog()  # the process's one watchdog; every sandbox arms it
if hasattr(os, "register_at_fork"):  # a forked child has no thread and maybe a held lock: start afresh
    os.register_at_fork(after_in_child=WATCHDOG._reset)
