"""A record's BIRD and Spider verdicts, as the record is built (``records.build_record``)
and as the reports count them (``reports.sidebyside``): a graded case carries them in
``compare.sidebyside``, a case we do not grade in the record's ``sidebyside``, and a
prediction that did not run to a result is wrong under both rules."""
from __future__ import annotations

from typing import Any

GRADED = ("passed", "failed", "undecidable")  # our verdicts; undecidable is graded, not a pass


def peer_verdicts(r: dict[str, Any]) -> dict[str, Any] | None:
    """A record's BIRD and Spider verdicts (see the module's docstring); None when the case
    has none (an engine error, or a suite graded without execution)."""
    compare = r.get("compare")
    sbs: dict[str, Any] | None = (compare or {}).get("sidebyside") if compare is not None else r.get("sidebyside")
    if sbs is not None:
        return sbs
    if r.get("failure_kind") == "no_prediction":
        return {"bird": False, "spider": False, "note": "no prediction for this case: both score it wrong"}
    if r.get("status") in GRADED and r.get("database"):
        return {"bird": False, "spider": False, "note": "the prediction ran to no result (a runtime error, a "
                                                        "timeout, a parse error or a refusal): both score it wrong"}
    if r.get("status") == "error" and r.get("failure_kind") == "backend_error":
        return {"bird": False, "spider": False, "note": "no prediction (the backend failed): both score it wrong"}
    return None


# -- the run -----------------------------------------------------------------------------
