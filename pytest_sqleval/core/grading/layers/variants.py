"""The variants layer: a match on the pinned database, checked on the case's variants of it."""
from __future__ import annotations

from ...engines.host import HostCrashed, HostTimeout
from .base import Candidate


class VariantsLayer:
    """A candidate that matched on the pinned database, run on its case's variants of the
    database (``variants/``): where a variant's gold answer differs from the candidate's,
    the match on the pinned database was a coincidence. Only when the suite has variants."""

    name, ahead = "variants", False

    def run(self, c: Candidate) -> None:
        grader, compare = c.grader, c.layers.get("compare")
        if grader.variant_set is None or c.ticket is None or not (compare and compare.get("match")):
            return
        c.budget.pause()  # executions, under the engine's limits
        try:
            chosen = grader.variant_set.for_gold(c.gold.key, c.gold.request, c.gold.sql, grader.engine_dialect,
                                                 grader.host, c.gold.elapsed_ms)
            if c.same_sql_as_gold:
                # The gold's own query: every chosen variant holds a trustworthy gold answer
                # (distillation chooses no other), which is what this same query returns there.
                answer = {"results": [{"variant": v["index"], "match": True} for v in chosen.variants]}
            else:
                answer = c.variants_answer or grader.host.call(
                    "variants", {"sql": c.executed_sql, "gold": c.gold.request, "variants": chosen.variants})
        except (HostCrashed, HostTimeout) as exc:
            answer = {"error": str(exc)}
        finally:
            c.budget.resume()
        if "error" in answer:  # no evidence either way: the pinned verdict stands
            c.layers["variants"] = {"error": answer["error"][:500]}
            return
        results = answer["results"]
        graded = [r for r in results if r.get("match") is not None]
        c.layers["variants"] = {
            "chosen": len(chosen.variants), "graded": len(graded),
            "mismatch": next((r for r in results if r.get("match") is False), None),
            "evidence": chosen.evidence(), **({"same_sql_as_gold": True} if c.same_sql_as_gold else {})}
