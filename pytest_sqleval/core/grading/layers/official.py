"""The official layer: what Spider's official evaluator makes of the prediction (``grading.peers``)."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ...engines.host import HostCrashed, HostTimeout
from ..parse import parse_sql
from ..safety import check_safety
from .base import Candidate, RecordView


@dataclass(frozen=True, slots=True)
class OfficialEvidence(RecordView):
    """Spider's rewrites of the prediction (``rewrites``) and the peers' verdicts
    (``sidebyside``: BIRD's and Spider's), for the failure text and the side-by-side summary."""

    rewrites: list[dict[str, Any]] | None = None
    sidebyside: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in (("sidebyside", self.sidebyside), ("rewrites", self.rewrites)) if v is not None}

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> "OfficialEvidence":
        return cls(**record)


class OfficialLayer:
    """What Spider's official evaluator does to the prediction before it runs it (every
    ``value`` placeholder replaced by ``1``, spaced operators joined: ``peers.official_rewrites``),
    for the failure text; and, when that rewrite is all that stood between the prediction
    and a result (it does not parse or is refused as written, and the rewritten query
    parses and is safe), Spider's verdict on the rewritten query, from the engine
    (evidence only: our verdict grades the prediction as written)."""

    name, ahead = "official", False

    def run(self, c: Candidate) -> None:
        from ..spider_text import official_prediction, official_rewrites  # string work: no pyarrow in this process
        rewrites = official_rewrites(c.sql)
        if not rewrites:
            return
        before = c.layers.get("official")
        entry = replace(before, rewrites=rewrites) if isinstance(before, OfficialEvidence) else OfficialEvidence(rewrites)
        c.layers["official"] = entry
        grader = c.grader
        if c.ticket is not None or grader.host is None or not c.gold.key:
            return  # it ran as written: the engine gave Spider's verdict on the rewritten query beside ours
        rewritten = official_prediction(c.sql)
        parsed = parse_sql(rewritten, grader.dialect)
        if not parsed.ok or not check_safety(parsed.expression, parsed.statements).ok:
            c.layers["official"] = replace(entry, sidebyside={"bird": False, "spider": False, "ours_compare": False, "note": (
                "the prediction does not parse or is refused, as written and as Spider's evaluator rewrites it: "
                "both rules score it wrong")})
            return
        c.budget.pause()  # an execution, under the engine's limits
        try:
            answer = grader.host.call("official", {"sql": grader.to_engine(parsed.expression, rewritten),
                                                   "gold_key": c.gold.key, "gold_sql": c.gold.sql})
        except (HostCrashed, HostTimeout) as exc:
            answer = {"execution": {"error": {"category": "timeout", "message": str(exc)}}}
        finally:
            c.budget.resume()
        sbs = answer.get("sidebyside")
        if sbs is None:
            error = ((answer.get("execution") or {}).get("error") or {}).get("category", "unknown")
            sbs = {"spider": False, "note": f"the query Spider's evaluator runs did not run to a result ({error})"}
        spider = sbs.get("spider")
        c.layers["official"] = replace(entry, sidebyside={
            **sbs, "ours_compare": False, "bird": False, "bird_reason": None,
            "spider_reason": rewrites[0]["rewrite"] if spider else None,
            "spider_rewrites": [r["rewrite"] for r in rewrites]})
