"""Agent traces: a failing agent case keeps what it retrieved, what it asked, what the model
answered and why the self-check repaired or stopped, in its record and in a per-question
markdown report; a trace stays bounded; a ``module:function`` backend records its own steps
the same way."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_sqleval.products.agent.trace import MAX_EVENTS, TRACE_KEY, Trace
from tests.sqleval_helpers import SHOP_CASES, sqleval_ini  # noqa: F401  (autouse fixture)

ROOT = Path(__file__).resolve().parents[3]


def test_a_failing_agent_case_shows_its_trace(tmp_path: Path) -> None:
    """q02 under a1 with the mock: its first answer sums a date column, the self-check sends the
    binder error back, the repaired answer runs, and grading still fails it."""
    results, runs = tmp_path / "results", tmp_path / "runs"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "cases/vantage/questions.jsonl::q02", "-q", "-p", "no:cacheprovider",
         "--sqleval-backend=a1", "--sqleval-model=mockllm/heuristic", "--sqleval-no-cache",
         f"--sqleval-results={results}", f"--sqleval-ablation-dir={tmp_path / 'report'}"],
        cwd=ROOT, capture_output=True, text=True, timeout=300, env={**os.environ, "SQLEVAL_RUNS_DIR": str(runs)})
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    (rec,) = [json.loads(line) for line in (results / "results.jsonl").read_text().splitlines()]
    assert rec["status"] == "failed"
    trace = rec["backend_metadata"][TRACE_KEY]
    assert [e["kind"] for e in trace] == ["retrieval", "llm_call", "self_check", "llm_call", "self_check"]
    retrieval, first, check, repair, last = trace
    assert "finance.revenue_recognized" in retrieval["tables"] and retrieval["scores"] and retrieval["tokens"] > 0
    assert [m["role"] for m in first["messages"]] == ["system", "user"] and "sum(" in first["response"]
    assert first["model"] == "mockllm/heuristic" and first["prompt_tokens"] > 0 and first["latency_ms"] >= 0
    assert check["problem"]["kind"] == "error" and "Binder Error" in check["problem"]["message"]
    assert check["decision"] == "repair"
    assert [m["role"] for m in repair["messages"]] == ["user"]  # only what was added: the repair request
    assert "Fix the query" in repair["messages"][0]["content"]
    assert last["decision"] == "accept" and last["sql"] == rec["generated_sql"]

    report = Path(rec["backend_metadata"]["trace_report"])
    assert report == runs / "a1" / "traces" / "q02.md"
    md = report.read_text()
    assert md.startswith("# q02 [a1]") and "third quarter of 2025" in md
    assert "## Retrieval (retrieval): " in md and "`finance.revenue_recognized` (score" in md
    assert "## LLM call 1: mockllm/heuristic" in md and "## LLM call 2: mockllm/heuristic" in md
    assert "## Self-check, round 0: error: type_mismatch" in md and "→ repair" in md
    assert "## Self-check, round 1: no problem found → accept" in md and rec["generated_sql"] in md

    # the failure text names the report, and report.html links it and shows it
    assert f"trace (what the backend retrieved, asked and answered): {report}" in proc.stdout
    page = (results / "report.html").read_text()
    assert '"link":"../runs/a1/traces/q02.md"' in page and "## LLM call 2: mockllm/heuristic" in page


def test_a_trace_stays_bounded_whatever_the_context_and_the_repairs() -> None:
    trace = Trace()
    huge = "x" * 1_000_000
    for i in range(3 * MAX_EVENTS):
        trace.llm_call([{"role": "user", "content": huge + str(i)}], huge, model="m", prompt_tokens=1,
                       completion_tokens=1, latency_ms=1.0)
    events = trace.to_list()
    assert len(events) == MAX_EVENTS + 1 and events[-1] == {"kind": "dropped", "events": 2 * MAX_EVENTS}
    assert len(json.dumps(events)) < 200_000
    assert "characters cut" in events[0]["response"] and events[0]["response"].startswith("xxx")


BACKEND = '''
from pytest_sqleval import GenerationResult
from pytest_sqleval.products.agent.trace import Trace


async def generate(case):
    trace = Trace()
    trace.retrieval(["customers"], scores={"customers": 1.0}, tokens=12, method="my-index")
    sql = "SELECT count(*) FROM customers"
    trace.llm_call([{"role": "user", "content": case.question}], sql, model="my-model", prompt_tokens=12,
                   completion_tokens=5, latency_ms=3.0)
    return GenerationResult(sql, {"trace": trace.to_list()})
'''


def test_a_module_function_backend_records_its_steps_the_same_way(pytester: pytest.Pytester,
                                                                   make_suite: object) -> None:
    make_suite(SHOP_CASES[:2])  # type: ignore[operator]
    pytester.makepyfile(my_backend=BACKEND)
    result = pytester.runpytest("suite", "--sqleval-backend=my_backend:generate", "--sqleval-results=out",
                                "-p", "no:cacheprovider")
    result.assert_outcomes(passed=0, failed=2)
    recs = [json.loads(line) for line in (pytester.path / "out" / "results.jsonl").read_text().splitlines()]
    for rec in recs:
        kinds = [e["kind"] for e in rec["backend_metadata"][TRACE_KEY]]
        assert kinds == ["retrieval", "llm_call"]
        assert rec["backend_metadata"][TRACE_KEY][1]["messages"][0]["content"] == rec["question"]
        # rendered to the same per-question report as the built-in agent's, and named by the failure text
        report = pytester.path / "runs" / "generate" / "traces" / f"{rec['case_id']}.md"
        assert rec["backend_metadata"]["trace_report"] == str(report)
        md = report.read_text()
        assert md.startswith(f"# {rec['case_id']} [generate]") and rec["question"] in md
        assert "## Retrieval (my-index): 1 tables, 12 tokens" in md and "## LLM call 1: my-model, 12 prompt + 5" in md
        result.stdout.fnmatch_lines([f"*trace (what the backend retrieved, asked and answered): "
                                     f"runs/generate/traces/{rec['case_id']}.md"])
