"""A layer's work that may fail: the evidence it leaves instead of losing the case.

Shared by the layers (``layers/``) and by the gold's analysis (``gold_analysis.py``),
which leaves the structure layer's failure for every prediction of its gold; neither
imports the other."""
from __future__ import annotations

from dataclasses import is_dataclass, replace
from typing import Any, Callable

from .budget import OverBudget


def guarded(work: Callable[[], Any], fallback: Any) -> Any:
    """Run one layer's work; a failure leaves evidence instead of losing the case.

    ``OverBudget`` gives ``skipped: over budget``; a ``RecursionError`` (a 3,000-term AND
    chain, a 1,200-branch UNION) ``layer_error: recursion``; any other exception its type.
    A dict ``fallback`` is the layer's record with that evidence added, an evidence value
    (a dataclass with ``skipped``, ``layer_error`` and ``detail`` fields) the same with those
    fields set; another fallback (a list) stands in for the layer's value."""
    try:
        return work()
    except Exception as exc:
        evidence = failure_evidence(exc)
    if isinstance(fallback, dict):
        return {**fallback, **evidence}
    return replace(fallback, **evidence) if is_dataclass(fallback) and not isinstance(fallback, type) else fallback


def failure_evidence(exc: BaseException) -> dict[str, Any]:
    """What a failed layer leaves: ``skipped`` (over budget) or ``layer_error``, and a detail."""
    if isinstance(exc, OverBudget):
        return {"skipped": "over budget", "detail": str(exc)}
    if isinstance(exc, RecursionError):
        return {"layer_error": "recursion", "detail": "the SQL is nested too deeply for this layer"}
    return {"layer_error": type(exc).__name__, "detail": str(exc)[:500]}
