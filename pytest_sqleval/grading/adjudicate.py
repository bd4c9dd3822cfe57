"""Adjudication: the final verdict from the deterministic layers and, when enabled, the
LLM judge. Execution decides wherever it ran (the judge only annotates); without a
database the judge decides in ``decide`` mode, and exact match decides otherwise."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

JUDGE_MODES = ("off", "advisory", "decide")
ACCEPTED = ("equivalent", "partially_equivalent")


@dataclass
class Adjudication:
    status: str  # passed | failed | error
    deterministic_verdict: str  # pass | fail | not_executed
    ai_advisory_verdict: str | None
    verdict_consistency_flag: str | None  # consistent | inconsistent | None (no usable judgement)
    decided_by: str  # execution | judge | exact_match | grounding
    error: str | None = None
    warnings: list[str] = field(default_factory=list)


def judge_eligible(layers: dict[str, Any]) -> bool:
    """The judge runs only where it can change or annotate something: never on SQL that
    does not parse, is refused, or names what does not exist."""
    if not layers["parse"]["ok"] or not (layers.get("safety") or {}).get("ok", False):
        return False
    return (layers.get("grounding") or {}).get("ok") is not False


def judge_evidence(layers: dict[str, Any]) -> dict[str, Any]:
    """What the deterministic layers found, compact enough for a prompt."""
    ex = layers.get("execution") or {}
    cmp = layers.get("compare") or {}
    struct = layers.get("structure") or {}
    return {
        "executed": bool(ex),
        "execution_error": (ex.get("error") or {}).get("category"),
        "result_match": cmp.get("match"), "compare_reason": cmp.get("reason"),
        "gold_rows": cmp.get("gold_rows"), "predicted_rows": cmp.get("pred_rows"), "row_f1": cmp.get("row_f1"),
        "differing_clauses": struct.get("differing_clauses"), "exact_match": struct.get("exact_match"),
        "deterministic_class": (layers.get("classify") or {}).get("error_class"),
    }


def adjudicate(*, passed: bool, executed: bool, layers: dict[str, Any], judgement: Any | None,
               mode: str) -> Adjudication:
    ai = judgement.equivalence if judgement is not None else None
    warnings = []
    if judgement is not None and judgement.error:
        warnings.append(f"judge skipped: {judgement.error}")
    grounding = layers.get("grounding") or {}
    ex = layers.get("execution") or {}
    if executed and ex.get("ok") and grounding.get("ok") is False:
        names = ", ".join(h["name"] for h in grounding["hallucinated_tables"] + grounding["hallucinated_columns"])
        warnings.append(f"grounding flagged {names} but the engine accepted the query")
    if executed:
        det = "pass" if passed else "fail"
        flag = None
        if ai in ACCEPTED or ai == "different":
            flag = "consistent" if (ai in ACCEPTED) == passed else "inconsistent"
        return Adjudication("passed" if passed else "failed", det, ai, flag, "execution", None, warnings)
    if mode == "decide":
        if not passed:  # parse, safety, grounding or a deprecated table already failed it
            return Adjudication("failed", "not_executed", ai, None, "grounding", None, warnings)
        if ai is None or ai == "skipped":
            why = judgement.error if judgement is not None else "no judgement"
            return Adjudication("error", "not_executed", ai, None, "judge", f"the judge gave no verdict: {why}", warnings)
        return Adjudication("passed" if ai in ACCEPTED else "failed", "not_executed", ai, None, "judge", None, warnings)
    exact = bool((layers.get("structure") or {}).get("exact_match"))
    ok = passed and exact
    return Adjudication("passed" if ok else "failed", "not_executed", ai, None, "exact_match", None, warnings)


def severity(status: str, failure_kind: str | None, error_class: str | None) -> str:
    if status == "error":
        return "error"
    if status == "passed":
        return "none"
    if failure_kind in ("unsafe_statement", "timeout"):
        return "critical"
    if error_class in ("hallucinated_column", "stale_table"):
        return "high"
    if failure_kind == "order_only":
        return "low"
    return "medium"


def blocked_reason(layers: dict[str, Any]) -> str | None:
    """The layer that stopped the pipeline before a result comparison, if any."""
    if not layers["parse"]["ok"]:
        return "parse"
    if not (layers.get("safety") or {}).get("ok", True):
        return f"safety:{layers['safety']['reason']}"
    err = (layers.get("execution") or {}).get("error")
    if err:
        return f"execution:{err['category']}"
    return None
