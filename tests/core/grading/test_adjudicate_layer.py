"""Unit tests of adjudication (``grading.adjudicate``): how a constructed judge answer
combines with the deterministic evidence in the ``off`` / ``advisory`` / ``decide`` modes
of the README's "LLM judge" section. No network: the judgement is a ``JudgeResult``
built here.

Execution decides wherever it ran (the judge only annotates, with a consistency flag);
without a database, ``decide`` lets the judge decide a case that parsed and was grounded
(no usable answer is an *error*), and otherwise exact match decides."""
from __future__ import annotations

from typing import Any

import pytest

from pytest_sqleval.core.grading.verdict import (JUDGE_MODES, adjudicate, blocked_reason, judge_eligible,
                                               judge_evidence, severity)
from pytest_sqleval.core.grading.judge import JUDGE_PROMPT_VERSION, JudgeResult


def judged(equivalence: str | None, error: str | None = None) -> JudgeResult | None:
    if equivalence is None:
        return None
    return JudgeResult(equivalence, "because", 0.9, "test/model", JUDGE_PROMPT_VERSION, False, error)


def layers(*, parse_ok: bool = True, safety_ok: bool | None = True, grounding_ok: bool | None = True,
           executed_ok: bool | None = None, exact_match: bool | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"parse": {"ok": parse_ok, "error": None}}
    if safety_ok is not None:
        out["safety"] = {"ok": safety_ok, "reason": None if safety_ok else "not_a_query", "detail": None}
    out["grounding"] = {"ok": grounding_ok, "hallucinated_tables": [],  # ok=None: not evaluated
                        "hallucinated_columns": [{"name": "amout", "line": 1, "col": 8}] if grounding_ok is False else []}
    if executed_ok is not None:
        out["execution"] = {"ok": executed_ok, "error": None if executed_ok else
                            {"category": "division_by_zero", "message": "Division by zero"}}
    if exact_match is not None:
        out["structure"] = {"exact_match": exact_match}
    return out


def test_modes() -> None:
    assert JUDGE_MODES == ("off", "advisory", "decide")


# --- with a database: execution decides, the judge annotates ----------------------------------

@pytest.mark.parametrize("mode", ["off", "advisory", "decide"])
@pytest.mark.parametrize(("passed", "ai", "status", "det", "flag"), [
    pytest.param(True, None, "passed", "pass", None, id="pass-no-judge"),
    pytest.param(False, None, "failed", "fail", None, id="fail-no-judge"),
    pytest.param(True, "equivalent", "passed", "pass", "consistent", id="pass-equivalent"),
    pytest.param(True, "partially_equivalent", "passed", "pass", "consistent", id="pass-partial"),
    pytest.param(True, "different", "passed", "pass", "inconsistent", id="pass-judge-disagrees"),
    pytest.param(False, "equivalent", "failed", "fail", "inconsistent", id="fail-judge-disagrees"),
    pytest.param(False, "partially_equivalent", "failed", "fail", "inconsistent", id="fail-partial-disagrees"),
    pytest.param(False, "different", "failed", "fail", "consistent", id="fail-different"),
    pytest.param(True, "skipped", "passed", "pass", None, id="pass-judge-skipped"),
    pytest.param(False, "skipped", "failed", "fail", None, id="fail-judge-skipped"),
])
def test_execution_decides_and_the_judge_annotates(mode: str, passed: bool, ai: str | None, status: str,
                                                   det: str, flag: str | None) -> None:
    res = adjudicate(passed=passed, executed=True, layers=layers(executed_ok=True), judgement=judged(ai), mode=mode)
    assert (res.status, res.deterministic_verdict, res.ai_advisory_verdict, res.verdict_consistency_flag,
            res.decided_by, res.error) == (status, det, ai, flag, "execution", None)


def test_a_runtime_error_stays_a_fail_whatever_the_judge_says() -> None:
    res = adjudicate(passed=False, executed=True, layers=layers(executed_ok=False), judgement=judged("equivalent"),
                     mode="decide")
    assert (res.status, res.decided_by, res.verdict_consistency_flag) == ("failed", "execution", "inconsistent")


def test_skipped_judge_is_a_warning_not_an_error_when_executed() -> None:
    res = adjudicate(passed=True, executed=True, layers=layers(executed_ok=True),
                     judgement=judged("skipped", error="no API key"), mode="advisory")
    assert res.status == "passed" and res.error is None
    assert res.warnings == ["judge skipped: no API key"]


def test_grounding_disagreeing_with_the_engine_is_a_warning() -> None:
    res = adjudicate(passed=True, executed=True, layers=layers(grounding_ok=False, executed_ok=True),
                     judgement=None, mode="off")
    assert res.status == "passed"
    assert res.warnings == ["grounding flagged amout but the engine accepted the query"]


# --- without a database -----------------------------------------------------------------

@pytest.mark.parametrize(("passed", "ai", "status", "decided_by", "error"), [
    pytest.param(True, "equivalent", "passed", "judge", None, id="equivalent-passes"),
    pytest.param(True, "partially_equivalent", "passed", "judge", None, id="partial-passes"),
    pytest.param(True, "different", "failed", "judge", None, id="different-fails"),
    pytest.param(True, "skipped", "error", "judge", "the judge gave no verdict: rate limited", id="skipped-is-error"),
    pytest.param(True, None, "error", "judge", "the judge gave no verdict: no judgement", id="no-judgement-is-error"),
    # parse, safety, grounding or a deprecated table already failed it: the judge cannot rescue it
    pytest.param(False, "equivalent", "failed", "grounding", None, id="already-failed-equivalent"),
    pytest.param(False, None, "failed", "grounding", None, id="already-failed-no-judgement"),
])
def test_decide_mode_without_a_database(passed: bool, ai: str | None, status: str, decided_by: str,
                                        error: str | None) -> None:
    judgement = judged(ai, error="rate limited" if ai == "skipped" else None)
    res = adjudicate(passed=passed, executed=False, layers=layers(exact_match=False), judgement=judgement,
                     mode="decide")
    assert (res.status, res.deterministic_verdict, res.decided_by, res.error) == \
        (status, "not_executed", decided_by, error)
    assert res.ai_advisory_verdict == ai
    assert res.verdict_consistency_flag is None


@pytest.mark.parametrize("mode", ["off", "advisory"])
@pytest.mark.parametrize(("passed", "exact", "ai", "status"), [
    pytest.param(True, True, None, "passed", id="exact-match-passes"),
    pytest.param(True, False, None, "failed", id="no-exact-match-fails"),
    pytest.param(True, False, "equivalent", "failed", id="judge-cannot-pass-it"),
    pytest.param(True, True, "different", "passed", id="judge-cannot-fail-it"),
    pytest.param(False, True, None, "failed", id="earlier-layer-failed-it"),
    pytest.param(True, None, None, "failed", id="no-structure-evidence"),
])
def test_exact_match_decides_without_a_database_unless_decide(mode: str, passed: bool, exact: bool | None,
                                                              ai: str | None, status: str) -> None:
    res = adjudicate(passed=passed, executed=False, layers=layers(exact_match=exact), judgement=judged(ai), mode=mode)
    assert (res.status, res.deterministic_verdict, res.decided_by, res.error) == \
        (status, "not_executed", "exact_match", None)
    assert res.ai_advisory_verdict == ai


# --- where the judge may run ------------------------------------------------------------

@pytest.mark.parametrize(("kwargs", "eligible"), [
    pytest.param({}, True, id="parsed-safe-grounded"),
    pytest.param({"grounding_ok": None}, True, id="grounding-not-evaluated"),
    pytest.param({"parse_ok": False}, False, id="does-not-parse"),
    pytest.param({"safety_ok": False}, False, id="refused"),
    pytest.param({"safety_ok": None}, False, id="safety-missing-fails-closed"),
    pytest.param({"grounding_ok": False}, False, id="names-what-does-not-exist"),
])
def test_judge_eligible(kwargs: dict, eligible: bool) -> None:
    assert judge_eligible(layers(**kwargs)) is eligible


def test_judge_evidence_is_the_deterministic_summary() -> None:
    lay = layers(executed_ok=True, exact_match=False)
    lay["compare"] = {"match": False, "reason": "values", "gold_rows": 3, "pred_rows": 4, "row_f1": 0.5}
    lay["structure"]["differing_clauses"] = ["where"]
    lay["classify"] = {"error_class": "wrong_metric"}
    assert judge_evidence(lay) == {
        "executed": True, "execution_error": None, "result_match": False, "compare_reason": "values",
        "gold_rows": 3, "predicted_rows": 4, "row_f1": 0.5, "differing_clauses": ["where"], "exact_match": False,
        "deterministic_class": "wrong_metric"}
    assert judge_evidence({"parse": {"ok": True}})["executed"] is False


@pytest.mark.parametrize(("status", "kind", "cls", "expected"), [
    pytest.param("error", None, None, "error", id="error"),
    pytest.param("passed", None, None, "none", id="passed"),
    pytest.param("failed", "unsafe_statement", "other", "critical", id="unsafe"),
    pytest.param("failed", "timeout", "other", "critical", id="timeout"),
    pytest.param("failed", "runtime_error:missing_column", "hallucinated_column", "high", id="hallucinated"),
    pytest.param("failed", "deprecated_table", "stale_table", "high", id="stale"),
    pytest.param("failed", "order_only", "other", "low", id="order-only"),
    pytest.param("failed", "value_mismatch", "wrong_metric", "medium", id="wrong-metric"),
])
def test_severity(status: str, kind: str | None, cls: str | None, expected: str) -> None:
    assert severity(status, kind, cls) == expected


@pytest.mark.parametrize(("kwargs", "expected"), [
    pytest.param({"parse_ok": False}, "parse", id="parse"),
    pytest.param({"safety_ok": False}, "safety:not_a_query", id="safety"),
    pytest.param({"executed_ok": False}, "execution:division_by_zero", id="execution"),
    pytest.param({"executed_ok": True}, None, id="not-blocked"),
])
def test_blocked_reason(kwargs: dict, expected: str | None) -> None:
    assert blocked_reason(layers(**kwargs)) == expected
