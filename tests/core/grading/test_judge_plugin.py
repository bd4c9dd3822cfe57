"""The LLM judge inside a run: advisory annotations, judge-decided suites without a
database, the cache, and the exact-match fallback. The judge is a loopback server."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.llm_server import Reply, ScriptedLLMServer

pytest.importorskip("litellm", reason="the judge needs the 'llm' extra: pip install -e '.[llm]'")

CASES = [
    {"id": "right", "question": "How many orders?", "gold_sql": "SELECT count(*) FROM orders"},
    {"id": "wrong", "question": "How many real customers?", "gold_sql": "SELECT count(*) FROM customers WHERE NOT is_test"},
    {"id": "ghost", "question": "Total discount?", "gold_sql": "SELECT sum(discount) FROM orders"},
]
PREDICTIONS = {
    "right": "SELECT count(id) FROM orders",
    "wrong": "SELECT count(*) FROM customers",
    "ghost": "SELECT sum(discount_amount) FROM orders",
}


def _judge_everything(verdict: str):
    def respond(req: Any) -> Reply:
        return Reply.verdict(verdict, rationale=f"scripted {verdict}")
    return respond


def _results(pytester: pytest.Pytester) -> tuple[dict[str, dict], dict]:
    out = pytester.path / "sqleval-results"
    records = {json.loads(l)["case_id"]: json.loads(l) for l in (out / "results.jsonl").read_text().splitlines()}
    return records, json.loads((out / "summary.json").read_text())


def _write_predictions(pytester: pytest.Pytester) -> None:
    (pytester.path / "preds.jsonl").write_text(
        "".join(json.dumps({"id": k, "sql": v}) + "\n" for k, v in PREDICTIONS.items()))


def test_advisory_judge_annotates_and_never_overrides_execution(
        pytester: pytest.Pytester, make_suite: Any, llm_server: ScriptedLLMServer) -> None:
    suite = make_suite(CASES)
    _write_predictions(pytester)
    llm_server.respond_with(_judge_everything("equivalent"))
    args = [str(suite), "-p", "no:cacheprovider", "--sqleval-backend=predictions:preds.jsonl",
            "--sqleval-judge=advisory", "--sqleval-judge-model=openai/judge-test",
            f"--sqleval-judge-api-base={llm_server.api_base}"]
    result = pytester.runpytest_subprocess(*args)
    result.assert_outcomes(passed=1, failed=2)
    records, summary = _results(pytester)
    assert llm_server.calls == 2  # never on the hallucinated column
    assert records["ghost"]["equivalence"] is None and records["ghost"]["error_class"] == "hallucinated_column"
    assert records["right"]["verdict_consistency_flag"] == "consistent"
    assert records["wrong"]["status"] == "failed"  # execution decides
    assert records["wrong"]["ai_advisory_verdict"] == "equivalent"
    assert records["wrong"]["verdict_consistency_flag"] == "inconsistent"
    assert records["wrong"]["run_metadata"]["judge_model"] == "openai/judge-test"
    assert all(r.temperature == 0 for r in llm_server.chat_requests)
    backend = summary["backends"]["preds"]
    assert backend["judge_agreement_rate"] == 0.5
    assert [d["case_id"] for d in backend["judge_disagreements"]] == ["wrong"]
    assert "disagreement wrong: execution says fail, judge says equivalent" in result.stdout.str()
    # answers are cached: the rerun asks nothing
    pytester.runpytest_subprocess(*args).assert_outcomes(passed=1, failed=2)
    assert llm_server.calls == 2


def _judge_only_suite(pytester: pytest.Pytester) -> Path:
    root = pytester.path / "nodb"
    root.mkdir()
    (root / "schema.sql").write_text(
        "CREATE TABLE orders (id INTEGER, customer_id INTEGER, discount DOUBLE);\n"
        "CREATE TABLE customers (id INTEGER, name VARCHAR, is_test BOOLEAN);\n")
    (root / "sqleval.toml").write_text('[suite]\nname = "nodb"\nquestions = "q.jsonl"\nschema = "schema.sql"\n')
    (root / "q.jsonl").write_text("".join(json.dumps(c) + "\n" for c in CASES))
    return root


def test_judge_decides_a_suite_without_a_database(pytester: pytest.Pytester, llm_server: ScriptedLLMServer) -> None:
    suite = _judge_only_suite(pytester)
    _write_predictions(pytester)

    def respond(req: Any) -> Reply:
        text = req.prompt_text
        if "count(id)" in text:
            return Reply.verdict("partially_equivalent")
        return Reply(content="I think these queries are probably the same.")  # prose: no verdict
    llm_server.respond_with(respond)
    result = pytester.runpytest_subprocess(
        str(suite), "-p", "no:cacheprovider", "--sqleval-backend=predictions:preds.jsonl", "--sqleval-judge=decide",
        "--sqleval-judge-model=openai/judge-test", f"--sqleval-judge-api-base={llm_server.api_base}")
    result.assert_outcomes(passed=1, failed=1, errors=1)
    records, summary = _results(pytester)
    assert records["right"]["status"] == "passed" and records["right"]["decided_by"] == "judge"
    assert records["right"]["deterministic_verdict"] == "not_executed"
    assert records["ghost"]["error_class"] == "hallucinated_column"  # grounded against the DDL, judge not asked
    assert records["ghost"]["hallucinated_columns"][0]["name"] == "discount_amount"
    assert records["wrong"]["status"] == "error" and records["wrong"]["failure_kind"] == "judge_error"
    assert records["wrong"]["equivalence"] == "skipped"
    assert "the judge gave no verdict" in result.stdout.str()
    assert llm_server.calls == 2
    assert summary["backends"]["preds"]["grounding_rate"] == pytest.approx(2 / 3, abs=1e-6)


def test_without_a_judge_a_database_free_suite_is_graded_by_exact_match(pytester: pytest.Pytester) -> None:
    suite = _judge_only_suite(pytester)
    (pytester.path / "preds.jsonl").write_text(
        json.dumps({"id": "right", "sql": "select COUNT(*) from orders"}) + "\n"
        + json.dumps({"id": "wrong", "sql": "SELECT count(*) FROM customers"}) + "\n"
        + json.dumps({"id": "ghost", "sql": "SELECT sum(discount) FROM orders WHERE id > 3"}) + "\n")
    result = pytester.runpytest_subprocess(str(suite), "-p", "no:cacheprovider",
                                           "--sqleval-backend=predictions:preds.jsonl")
    result.assert_outcomes(passed=1, failed=2)
    records, summary = _results(pytester)
    assert records["right"]["decided_by"] == "exact_match" and records["right"]["exact_match"]
    assert records["wrong"]["failure_kind"] == "not_exact_match"
    assert summary["backends"]["preds"]["exact_match_rate"] == pytest.approx(1 / 3, abs=1e-6)


@pytest.mark.parametrize("args, message", [
    (["--sqleval-judge=advisory"], "needs a judge model"),
    (["--sqleval-judge=always"], "invalid choice"),
])
def test_bad_judge_options_are_usage_errors(pytester: pytest.Pytester, args: list[str], message: str) -> None:
    result = pytester.runpytest_subprocess(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()
    assert "Traceback" not in result.stderr.str()
