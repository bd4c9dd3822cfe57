"""One owner of the verdict: a pytest item and ``api.compare`` give the same verdict on the
same SQL, with the judge off and with it advising (a loopback judge), because both end in
``grading.verdict.decide``."""
from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_sqleval.core import api
from tests.llm_server import Reply, ScriptedLLMServer

CASES = [
    {"id": "right", "question": "How many orders?", "gold_sql": "SELECT count(*) FROM orders"},
    {"id": "wrong", "question": "How many real customers?", "gold_sql": "SELECT count(*) FROM customers WHERE NOT is_test"},
    {"id": "ghost", "question": "Total discount?", "gold_sql": "SELECT sum(discount) FROM orders"},
    {"id": "stale", "question": "How many orders?", "gold_sql": "SELECT count(*) FROM orders"},
    {"id": "broken", "question": "How many orders?", "gold_sql": "SELECT count(*) FROM orders"},
]
PREDICTIONS = {
    "right": "SELECT count(id) FROM orders",
    "wrong": "SELECT count(*) FROM customers",
    "ghost": "SELECT sum(discount_amount) FROM orders",
    "stale": "SELECT count(*) FROM orders_old",
    "broken": "SELEC count(*) FROM orders",
}
HEADLINE = ("status", "error_class", "failure_kind", "explanation", "decided_by", "ai_advisory_verdict",
            "verdict_consistency_flag", "severity", "blocked_reason")


def api_headline(verdict: Any) -> dict[str, Any]:
    adj = verdict.adjudication
    return {"status": verdict.status, "error_class": verdict.error_class if verdict.status == "failed" else None,
            "failure_kind": verdict.failure_kind, "explanation": verdict.explanation,
            "decided_by": adj.decided_by, "ai_advisory_verdict": adj.ai_advisory_verdict,
            "verdict_consistency_flag": adj.verdict_consistency_flag, "severity": verdict.severity,
            "blocked_reason": verdict.blocked_reason}


@pytest.mark.parametrize("judge", ["off", "advisory"])
def test_an_item_and_api_compare_agree(pytester: pytest.Pytester, make_suite: Any, llm_server: ScriptedLLMServer,
                                       judge: str) -> None:
    if judge != "off":
        pytest.importorskip("litellm", reason="the judge needs the 'llm' extra")
    llm_server.respond_with(lambda req: Reply.verdict("equivalent", rationale="scripted"))
    suite = make_suite(CASES)
    (pytester.path / "preds.jsonl").write_text("".join(json.dumps({"id": k, "sql": v}) + "\n"
                                                       for k, v in PREDICTIONS.items()))
    judge_args = ([f"--sqleval-judge={judge}", "--sqleval-judge-model=openai/judge-test",
                   f"--sqleval-judge-api-base={llm_server.api_base}"] if judge != "off" else [])
    result = pytester.runpytest_subprocess(str(suite), "-p", "no:cacheprovider",
                                           "--sqleval-backend=predictions:preds.jsonl", *judge_args)
    result.assert_outcomes(passed=1, failed=4)
    records = {json.loads(line)["case_id"]: json.loads(line)
               for line in (pytester.path / "sqleval-results" / "results.jsonl").read_text().splitlines()}
    judge_kw = ({"judge": judge, "judge_model": "openai/judge-test", "judge_api_base": llm_server.api_base}
                if judge != "off" else {})
    with api.Grader(suite / "shop.duckdb", cache_dir=pytester.path / "api-cache", **judge_kw) as grader:
        for case in CASES:
            verdict = grader.compare(PREDICTIONS[case["id"]], case["gold_sql"], question=case["question"])
            assert api_headline(verdict) == {k: records[case["id"]][k] for k in HEADLINE}, case["id"]
            assert verdict.passed == records[case["id"]]["pass"]
    if judge == "advisory":
        assert records["wrong"]["verdict_consistency_flag"] == "inconsistent"  # the judge annotated, execution decided


def test_a_judge_mode_the_api_does_not_know_is_refused(shop_db: Any) -> None:
    with pytest.raises(ValueError, match="judge must be one of off, advisory, decide"):
        api.Grader(shop_db, judge="sometimes")
    with pytest.raises(ValueError, match="needs a judge_model"):
        api.Grader(shop_db, judge="advisory")
