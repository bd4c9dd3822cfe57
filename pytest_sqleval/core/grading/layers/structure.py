"""The structure layer: the clause-by-clause diff of the prediction and the gold (``grading.structure``)."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from ...engines.host import HostCrashed
from ..structure import compare_structure
from .base import Candidate, RecordView, failure_fields, guarded


@dataclass(frozen=True, slots=True)
class StructureEvidence(RecordView):
    """How the prediction's clauses differ from the gold's (explanation only; ``exact_match``:
    the gold's own SQL). All None when the diff could not be made (``skipped``, ``layer_error``)."""

    normalized_match: bool | None = None
    exact_match: bool | None = None
    no_values_exact_match: bool | None = None
    distance: float | None = None
    differing_clauses: list[str] = field(default_factory=list)
    clauses: dict[str, dict[str, Any]] = field(default_factory=dict)
    skipped: str | None = None
    layer_error: str | None = None
    detail: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"normalized_match": self.normalized_match, "exact_match": self.exact_match,
                "no_values_exact_match": self.no_values_exact_match, "distance": self.distance,
                "differing_clauses": self.differing_clauses, "clauses": self.clauses, **failure_fields(self)}

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> "StructureEvidence":
        return cls(**record)


class StructureLayer:
    """The structural diff, unless the case's budget is spent (it is explanation only).
    Sent with the execution (``SendLayer``: a grader whose engine is a process of its own),
    the engine process makes it and this layer reads it with the execution's answer; else,
    or when the engine gave none (the prediction's run was killed, its diff hit recursion
    there), it is made here, while the engine executes the candidate."""

    name, ahead = "structure", False

    def run(self, c: Candidate) -> None:
        if c.structure_sent is not None and c.structure_sent is c.gold and c.ticket is not None:
            c.budget.pause()  # waiting on the engine's execution, which has its own limits
            try:
                made = c.grader.host.result(c.ticket).get("structure")
            except HostCrashed:  # the execution layer records why; the diff is made here
                made = None
            finally:
                c.budget.resume()
            if made is not None and made.get("layer_error") != "recursion":  # this process's stack decides that
                c.layers["structure"] = StructureEvidence.from_record(made)
                return
        analysis = c.gold.analysis  # the gold's side, analysed once per gold (gold_analysis.py)
        gold = analysis.structure if analysis is not None else c.gold.tree
        failed = analysis.structure_error if analysis is not None else None  # the gold's side could not be made
        if c.parsed is None or not c.parsed.ok or c.parsed.expression is None or (gold is None and failed is None):
            return
        pred, sql, dialect, budget = c.parsed.expression, c.sql, c.grader.dialect, c.budget

        def run() -> StructureEvidence:
            budget.check()
            if failed is not None:
                return replace(StructureEvidence(), **failed)
            assert gold is not None  # the gold's side exists wherever it did not fail
            r = compare_structure(pred, gold, dialect, budget, pred_sql=sql)
            return StructureEvidence(r.normalized_match, r.exact_match, r.no_values_exact_match, r.distance,
                                     r.differing_clauses, r.clauses)
        c.layers["structure"] = guarded(run, fallback=StructureEvidence())
