"""The LLM judge after a key failure: a missing or rejected key (HTTP 401) stops the judge
for the run after one call, as it stops an LLM backend. Every later judged case records the
same one-line reason naming the variable to set, without a call; in ``decide`` mode those
cases are errors, in ``advisory`` mode execution still decides. The judge is a loopback
server answering 401."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_sqleval.core.grading.judge import Judge, judge_key_hint
from tests.llm_server import Reply, ScriptedLLMServer

pytest.importorskip("litellm", reason="the judge needs the 'llm' extra: pip install -e '.[llm]'")

HINT = "$SQLEVAL_JUDGE_API_KEY or $OPENAI_API_KEY"
CASES = [
    {"id": "right", "question": "How many orders?", "gold_sql": "SELECT count(*) FROM orders"},
    {"id": "wrong", "question": "How many real customers?", "gold_sql": "SELECT count(*) FROM customers WHERE NOT is_test"},
    {"id": "right2", "question": "How many customers?", "gold_sql": "SELECT count(*) FROM customers"},
    {"id": "wrong2", "question": "How many test customers?", "gold_sql": "SELECT count(*) FROM customers WHERE is_test"},
]
PREDICTIONS = {
    "right": "SELECT count(id) FROM orders",
    "wrong": "SELECT count(*) FROM customers",
    "right2": "SELECT count(id) FROM customers",
    "wrong2": "SELECT count(*) FROM customers WHERE NOT is_test",
}


def _rejecting(server: ScriptedLLMServer) -> None:
    server.respond_with(lambda req: Reply.error(401, "Incorrect API key provided (scripted)"))


def _results(pytester: pytest.Pytester) -> dict[str, dict]:
    out = pytester.path / "sqleval-results" / "results.jsonl"
    return {json.loads(l)["case_id"]: json.loads(l) for l in out.read_text().splitlines()}


def _write_predictions(pytester: pytest.Pytester) -> None:
    (pytester.path / "preds.jsonl").write_text(
        "".join(json.dumps({"id": k, "sql": v}) + "\n" for k, v in PREDICTIONS.items()))


def _assert_one_reason(records: dict[str, dict]) -> str:
    errors = {r["judge"]["error"] for r in records.values()}
    assert len(errors) == 1, errors
    reason = errors.pop()
    assert "\n" not in reason
    assert "HTTP 401" in reason and HINT in reason and "The LLM judge is stopped for this run" in reason
    assert all(r["equivalence"] == "skipped" for r in records.values())
    return reason


def test_a_rejected_key_stops_the_judge_object_after_one_call(tmp_path: Path, llm_server: ScriptedLLMServer) -> None:
    _rejecting(llm_server)
    judge = Judge("openai/judge-test", api_base=llm_server.api_base, api_key="bad", cache_dir=tmp_path,
                  max_attempts=4, backoff_base=0.01)
    results = [judge.judge_sync(f"q{i}", "SELECT 1", f"SELECT {i}", {"n": i}) for i in range(4)]
    assert llm_server.calls == 1  # not retried, and not asked again
    assert all(r.skipped for r in results)
    assert len({r.error for r in results}) == 1
    assert results[0].error is not None and results[0].error.startswith("judge call failed: authentication failed (HTTP 401)")
    assert not list(tmp_path.glob("*.json"))  # nothing cached


def test_judge_key_hint_names_the_variables() -> None:
    assert judge_key_hint("openai/x", "http://127.0.0.1:1/v1") == HINT
    assert judge_key_hint("anthropic/claude", None) == "$SQLEVAL_JUDGE_API_KEY or $ANTHROPIC_API_KEY"
    assert judge_key_hint("gpt-4o-mini", None) == "$SQLEVAL_JUDGE_API_KEY"


def test_advisory_run_makes_one_judge_call_and_execution_still_decides(
        pytester: pytest.Pytester, make_suite: Any, llm_server: ScriptedLLMServer) -> None:
    suite = make_suite(CASES)
    _write_predictions(pytester)
    _rejecting(llm_server)
    result = pytester.runpytest_subprocess(
        str(suite), "-p", "no:cacheprovider", "--sqleval-backend=predictions:preds.jsonl",
        "--sqleval-judge=advisory", "--sqleval-judge-model=openai/judge-test",
        f"--sqleval-judge-api-base={llm_server.api_base}")
    result.assert_outcomes(passed=2, failed=2)
    assert llm_server.calls == 1
    records = _results(pytester)
    _assert_one_reason(records)
    assert {k: r["status"] for k, r in records.items()} == {
        "right": "passed", "wrong": "failed", "right2": "passed", "wrong2": "failed"}
    assert all(r["decided_by"] == "execution" for r in records.values())


def test_decide_run_makes_one_judge_call_and_every_judged_case_is_an_error(
        pytester: pytest.Pytester, llm_server: ScriptedLLMServer) -> None:
    root = pytester.path / "nodb"
    root.mkdir()
    (root / "schema.sql").write_text(
        "CREATE TABLE orders (id INTEGER, customer_id INTEGER, discount DOUBLE);\n"
        "CREATE TABLE customers (id INTEGER, name VARCHAR, is_test BOOLEAN);\n")
    (root / "sqleval.toml").write_text('[suite]\nname = "nodb"\nquestions = "q.jsonl"\nschema = "schema.sql"\n')
    (root / "q.jsonl").write_text("".join(json.dumps(c) + "\n" for c in CASES))
    _write_predictions(pytester)
    _rejecting(llm_server)
    result = pytester.runpytest_subprocess(
        str(root), "-p", "no:cacheprovider", "--sqleval-backend=predictions:preds.jsonl", "--sqleval-judge=decide",
        "--sqleval-judge-model=openai/judge-test", f"--sqleval-judge-api-base={llm_server.api_base}")
    result.assert_outcomes(errors=4)
    assert llm_server.calls == 1
    records = _results(pytester)
    reason = _assert_one_reason(records)
    assert all(r["status"] == "error" and r["failure_kind"] == "judge_error" for r in records.values())
    assert all(reason in r["case_error"] for r in records.values())
