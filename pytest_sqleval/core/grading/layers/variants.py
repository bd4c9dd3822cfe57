"""The variants layer: a match on the pinned database, checked on the case's variants of it."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...engines.host import HostCrashed
from .base import Candidate, RecordView
from .execution import CompareEvidence, ExecutionEvidence


@dataclass(frozen=True, slots=True)
class VariantMismatch(RecordView):
    """The first variant of the database where the candidate's answer is not the gold's:
    its execution there and, when it gave a result, the comparison (``compare``)."""

    variant: int
    kind: str
    gold_rows: int | None = None
    gold_problem: str | None = None
    execution: ExecutionEvidence | None = None
    match: bool | None = None
    compare: CompareEvidence | None = None
    gold_preview: Any = None
    pred_preview: Any = None
    #: the rows the generator wrote into this variant for the gold (``variants/clones.py``), as
    #: sentences: "a sales row joined through date_dim, moved to date_dim.d_year = 2001 (...)"
    witnesses: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"variant": self.variant, "kind": self.kind, "gold_rows": self.gold_rows,
                               "gold_problem": self.gold_problem}
        if self.witnesses:
            out["witnesses"] = list(self.witnesses)
        if self.execution is not None:
            out["execution"] = self.execution.to_dict()
        if self.match is not None:
            out["match"] = self.match
        if self.compare is not None:
            out.update(compare=self.compare.to_dict(), gold_preview=self.gold_preview, pred_preview=self.pred_preview)
        return out

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> "VariantMismatch":
        execution, compare = record.get("execution"), record.get("compare")
        return cls(**{**record, "execution": ExecutionEvidence.from_record(execution) if execution else None,
                      "compare": CompareEvidence.from_record(compare) if compare else None,
                      "witnesses": tuple(record.get("witnesses") or ())})


@dataclass(frozen=True, slots=True)
class VariantsEvidence(RecordView):
    """How many variants were chosen and graded, the first that disagrees (``mismatch``), and
    why they were chosen; ``error`` alone when they could not be run (the pinned verdict stands)."""

    chosen: int = 0
    graded: int = 0
    mismatch: VariantMismatch | None = None
    evidence: Any = None
    same_sql_as_gold: bool = False
    error: str | None = None
    #: why no variant was run although the candidate matched: the gold it matched is a
    #: result file, which has no query to run on a variant (the pinned verdict stands)
    skipped: str | None = None

    def to_dict(self) -> dict[str, Any]:
        if self.error is not None:
            return {"error": self.error}
        if self.skipped is not None:
            return {"skipped": self.skipped}
        return {"chosen": self.chosen, "graded": self.graded,
                "mismatch": self.mismatch.to_dict() if self.mismatch is not None else None,
                "evidence": self.evidence, **({"same_sql_as_gold": True} if self.same_sql_as_gold else {})}

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> "VariantsEvidence":
        mismatch = record.get("mismatch")
        return cls(**{**record, "mismatch": VariantMismatch.from_record(mismatch) if mismatch else None})


class VariantsLayer:
    """A candidate that matched on the pinned database, run on its case's variants of the
    database (``variants/``): where a variant's gold answer differs from the candidate's,
    the match on the pinned database was a coincidence. Only when the suite has variants.
    A case of several golds: the variants of the gold it matched (the record's
    ``matched_gold``); a result-file gold has none, and the evidence says so."""

    name, ahead = "variants", False

    def run(self, c: Candidate) -> None:
        grader, compare = c.grader, c.layers.get("compare")
        if grader.variant_set is None or c.ticket is None or not (isinstance(compare, CompareEvidence) and compare.match):
            return
        golds = c.layers.get("golds")
        gold = c.gold.by_index(golds.compared) if golds is not None else c.gold  # the gold it matched
        if gold.sql is None:
            c.layers["variants"] = VariantsEvidence(skipped=(
                f"it matched gold {gold.index}, a result file ({gold.source}): a result file has no query to run "
                "on a database variant, so the match on the pinned database stands"))
            return
        same_sql = c.executed_sql is not None and c.executed_sql == gold.request.get("sql")
        sent = gold is c.gold  # the engine ran the first gold's variants with the execution, if it had them
        c.budget.pause()  # executions, under the engine's limits
        answer: dict[str, Any]
        try:
            chosen = grader.variant_set.for_gold(gold.key, gold.request, gold.sql, grader.engine_dialect,
                                                 grader.host, gold.elapsed_ms)
            if same_sql:
                # The gold's own query: every chosen variant holds a trustworthy gold answer
                # (distillation chooses no other), which is what this same query returns there.
                answer = {"results": [{"variant": v["index"], "match": True} for v in chosen.variants]}
            else:
                answer = (c.variants_answer if sent else None) or grader.host.call(
                    "variants", {"sql": c.executed_sql, "gold": gold.request, "variants": chosen.variants})
        except Exception as exc:  # the engine's failure (its message), or a grader's bug: said (``VariantsEvidence.error``)
            answer = {"error": str(exc) if isinstance(exc, HostCrashed) else f"{type(exc).__name__}: {exc}"}
        finally:
            c.budget.resume()
        if "error" in answer:  # no evidence either way: the pinned verdict stands
            c.layers["variants"] = VariantsEvidence(error=answer["error"][:500])
            return
        results = answer["results"]
        graded = [r for r in results if r.get("match") is not None]
        mismatch = next((r for r in results if r.get("match") is False), None)
        if mismatch is not None:
            mismatch = {**mismatch, "witnesses": grader.variant_set.witnesses(mismatch["variant"], gold.sql)}
        c.layers["variants"] = VariantsEvidence(
            len(chosen.variants), len(graded), VariantMismatch.from_record(mismatch) if mismatch is not None else None,
            chosen.evidence(), same_sql)
