"""The grounding layer: does every table and column the prediction names exist (``grading.grounding``)?"""
from __future__ import annotations

from typing import Any

from ..grounding import ground
from .base import Candidate, guarded

_NO_GROUNDING: dict[str, Any] = {"ok": None, "hallucinated_tables": [], "hallucinated_columns": [], "tables": [],
                                 "note": None}


class GroundingLayer:
    name, ahead = "grounding", True

    def run(self, c: Candidate) -> None:
        if c.stopped or c.grader.index is None:
            return
        tree, index, budget = c.tree, c.grader.index, c.budget
        c.layers["grounding"] = guarded(lambda: ground(tree, index, budget).to_dict(), fallback=_NO_GROUNDING)
