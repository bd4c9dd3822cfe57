"""The time a case's grading layers may spend, derived from the case's limits.

Execution is bounded in the engine process (``max_execution_time``, the interrupt, the
process guard); the layers around it run here, on the SQL's parse tree, and a
pathological prediction (157 KB of OR'ed predicates, an ``IN`` of 20,000 values) must not
keep a case past its limits either. A ``Budget`` runs while a layer works and pauses
between the grader's phases; long loops call ``tick``, which raises ``OverBudget`` once
the budget is spent. The layer that catches it records ``skipped: over budget``:
explanatory evidence is given up, the verdict still comes from execution."""
from __future__ import annotations

import time

#: the clock is read once per this many ticks (a tick is one step of a layer's loop)
TICKS_PER_CHECK = 32


class OverBudget(Exception):
    """A layer ran out of the case's grading budget."""


class Budget:
    """``seconds`` of layer time for one case, running from creation until ``pause``."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._spent = 0.0
        self._since: float | None = time.monotonic()
        self._ticks = 0

    def pause(self) -> None:
        if self._since is not None:
            self._spent += time.monotonic() - self._since
            self._since = None

    def resume(self) -> None:
        if self._since is None:
            self._since = time.monotonic()

    @property
    def spent(self) -> float:
        running = time.monotonic() - self._since if self._since is not None else 0.0
        return self._spent + running

    @property
    def expired(self) -> bool:
        return self.spent >= self.seconds

    def check(self) -> None:
        if self.expired:
            raise OverBudget(f"over the case's grading budget of {self.seconds:g} s")

    def tick(self) -> None:
        self._ticks += 1
        if self._ticks % TICKS_PER_CHECK == 0:
            self.check()
