"""Counting what a test's code calls: one wrapper for the tests that count calls (a gold's
rows read, queries run, fact copies written) rather than seconds."""
from __future__ import annotations

from typing import Any, Callable

import pytest


def record_calls(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str,
                 note: Callable[..., Any] = lambda *args, **kwargs: None) -> list[Any]:
    """``owner.name`` replaced (for the test) by a wrapper that appends ``note(*args, **kwargs)``
    to the list returned here, then calls the real one; a method's ``self`` is its first argument."""
    calls: list[Any] = []
    real = getattr(owner, name)

    def recorded(*args: Any, **kwargs: Any) -> Any:
        calls.append(note(*args, **kwargs))
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, recorded)
    return calls
