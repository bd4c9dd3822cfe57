"""The structure layer: the clause-by-clause diff of the prediction and the gold (``grading.structure``)."""
from __future__ import annotations

from typing import Any

from ..structure import compare_structure
from .base import Candidate, guarded

_NO_STRUCTURE: dict[str, Any] = {"normalized_match": None, "exact_match": None, "no_values_exact_match": None,
                                 "distance": None, "differing_clauses": [], "clauses": {}}


class StructureLayer:
    """The structural diff, unless the case's budget is spent (it is explanation only);
    it runs while the engine executes the candidate."""

    name, ahead = "structure", False

    def run(self, c: Candidate) -> None:
        analysis = c.gold.analysis  # the gold's side, analysed once per gold (gold_analysis.py)
        gold = analysis.structure if analysis is not None else c.gold.tree
        failed = analysis.structure_error if analysis is not None else None  # the gold's side could not be made
        if c.parsed is None or not c.parsed.ok or c.parsed.expression is None or (gold is None and failed is None):
            return
        pred, sql, dialect, budget = c.parsed.expression, c.sql, c.grader.dialect, c.budget

        def run() -> dict[str, Any]:
            budget.check()
            if failed is not None:
                return {**_NO_STRUCTURE, **failed}
            return compare_structure(pred, gold, dialect, budget, pred_sql=sql).to_dict()
        c.layers["structure"] = guarded(run, fallback=_NO_STRUCTURE)
