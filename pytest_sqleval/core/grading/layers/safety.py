"""The safety layer: is the prediction one read-only query (``grading.safety``)?"""
from __future__ import annotations

from ..safety import check_safety
from .base import Candidate, guarded


class SafetyLayer:
    """A crash in the safety check refuses the query: it fails closed."""

    name, ahead = "safety", True

    def run(self, c: Candidate) -> None:
        if c.stopped:
            return
        parsed = c.parsed
        c.layers["safety"] = guarded(lambda: check_safety(parsed.expression, parsed.statements).to_dict(),
                                     fallback={"ok": False, "reason": "layer_error"})
        c.stopped = not c.layers["safety"]["ok"]
