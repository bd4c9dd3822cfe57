"""Live progress of a run's generations: done/total, calls in flight, tokens, cost, failures.

On a terminal the status stands after pytest's own output on the current line and is erased
before pytest writes again, so pytest's output is left as it would be without it. In a log
(no terminal) it is a plain line every ``PLAIN_EVERY_S`` seconds while generations are
outstanding, and one when the last is done. A run whose generations are all done within
``SHOW_AFTER_S`` (gold, predictions, a warm cache) shows none. Under xdist each worker
attaches its counts to the reports it sends (``PROGRESS_KEY``) and the controller adds them up:
every worker asks for every case, claims keep a case from being generated twice, so the
calls add up across workers while the total and the cases cached by earlier runs do not."""
from __future__ import annotations

import contextlib
import time
from typing import Any, Callable, ContextManager, Iterable, TextIO

PROGRESS_KEY = "sqleval_generation"
SHOW_AFTER_S = 1.0
PLAIN_EVERY_S = 10.0


def combine(parts: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """One run's progress from each process's counts (``GenerationService.progress``)."""
    parts = list(parts)
    return {"total": max((p["total"] for p in parts), default=0),
            "done": sum(p["called"] for p in parts) + max((p["cached"] for p in parts), default=0),
            "in_flight": sum(p["in_flight"] for p in parts), "tokens": sum(p["tokens"] for p in parts),
            "cost_usd": sum(p["cost_usd"] for p in parts), "failed": sum(p["failed"] for p in parts)}


def status_text(p: dict[str, Any]) -> str:
    return (f"generation {min(p['done'], p['total']):,}/{p['total']:,} · {p['in_flight']} in flight · "
            f"{p['tokens']:,} tokens · ${p['cost_usd']:.4f} · {p['failed']} failed")


class LiveProgress:
    """Draws the status through pytest's terminal reporter; ``tick`` redraws, ``clear`` erases."""

    def __init__(self, reporter: Any, snapshot: Callable[[], dict[str, Any]],
                 uncaptured: Callable[[], ContextManager[Any]] = contextlib.nullcontext,
                 settles: bool = False) -> None:
        self.reporter = reporter
        self.snapshot = snapshot
        self.uncaptured = uncaptured  # pytest's output capture, off for the duration
        tw = getattr(reporter, "_tw", None)
        # the raw stream behind pytest's writer: written to directly, the writer's count of
        # the current line's width stays true (pytest wraps its progress by it)
        self._file: TextIO | None = getattr(tw, "_file", None) if getattr(reporter, "isatty", False) else None
        self.started = time.monotonic()
        self.active = False  # shown once: from then on, to the end
        self._drawn = False
        self._last_line: float | None = None
        self._ended = False
        self.parts: dict[Any, dict[str, Any]] = {}  # xdist controller: each worker's latest counts
        # ``settles``: the total is final once it is known (serial: every case is submitted at
        # the first case's setup), so a run whose generations were all done before progress
        # was ever shown never shows it, and ``tick`` (three calls a case) stops counting
        self.settles = settles
        self._settled = False

    def tick_while_waiting(self) -> None:
        """From a case waiting for its generation, inside its setup, where pytest captures
        output: the status goes to the terminal, not into the case's captured output."""
        with self.uncaptured():
            self.tick()

    def tick(self) -> None:
        if self._settled:
            return
        p = self.snapshot()
        if not p["total"]:
            return
        outstanding = p["done"] < p["total"]
        now = time.monotonic()
        if not self.active:
            if not outstanding:
                self._settled = self.settles  # all done, never shown: nothing will ever be drawn
                return
            if now - self.started < SHOW_AFTER_S:
                return
            self.active = True
        if self._file is not None:  # on a terminal, until the last is done (the summary has the final count)
            self._draw(status_text(p)) if outstanding else self.clear()
        elif outstanding and (self._last_line is None or now - self._last_line >= PLAIN_EVERY_S) or (
                not outstanding and not self._ended):
            if self.reporter._tw.width_of_current_line:  # after pytest's letters on this line, not on it
                self.reporter._tw.line()
            self.reporter.write_line(f"sqleval: {status_text(p)}")
            self._last_line, self._ended = now, not outstanding

    def _draw(self, text: str) -> None:
        tw = self.reporter._tw
        room = tw.fullwidth - tw.width_of_current_line - 2
        if room < 24:
            return self.clear()
        assert self._file is not None  # drawn only on a terminal (tick)
        self._file.write("\x1b[K  " + text[:room - 2] + f"\x1b[{min(len(text), room - 2) + 2}D")
        self._file.flush()
        self._drawn = True

    def clear(self) -> None:
        if self._drawn:
            assert self._file is not None  # drawn only on a terminal (tick)
            self._file.write("\x1b[K")
            self._file.flush()
            self._drawn = False

    def final_line(self) -> str | None:
        """For the run's summary, when progress was shown or a model was paid in tokens."""
        p = self.snapshot()
        return f"{status_text(p)}" if p["total"] and (self.active or p["tokens"]) else None
