"""The one memo of a builder's costly analysis in a process, kept for the last key asked.

A build asks many times about the same database's golds (every variant, and several
builders), so the answer is kept; a run moves from one database to the next (Spider has
twenty), so only the last is: a memo of every database would keep them all to the end."""
from __future__ import annotations

from typing import Callable, Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class LastOne(Generic[K, V]):
    """``make()``'s value for the last ``key`` asked; another key makes it again."""

    def __init__(self) -> None:
        self._kept: tuple[K, V] | None = None

    def get(self, key: K, make: Callable[[], V]) -> V:
        if self._kept is None or self._kept[0] != key:
            self._kept = (key, make())
        return self._kept[1]


__all__ = ["LastOne"]
