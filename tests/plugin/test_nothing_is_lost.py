"""Nothing is lost: a worker killed mid-run loses only the case it was running, Ctrl-C keeps
what finished and a rerun resumes, and a flaky model's faults end as verdicts or backend
errors, retried by the next run, which spends no call on a finished case."""
from __future__ import annotations

import json
from typing import Any

import pytest

from tests.llm_server import Reply, ScriptedLLMServer


# -- a worker killed mid-run, and Ctrl-C -----------------------------------------------------
BACKEND = '''
import os, signal, time
from pathlib import Path

MARK = Path(__file__).with_name("killed-once")

def crash_once(case):
    if case.id == "q03" and os.environ.get("PYTEST_XDIST_WORKER") and not MARK.exists():
        MARK.write_text("x")
        os.kill(os.getpid(), signal.SIGKILL)
    return case.gold_sql

def interrupt_at_q04(case):
    calls = Path(__file__).with_name("calls.txt")
    with calls.open("a") as fh:
        fh.write(case.id + "\\n")
    if case.id == "q04" and not MARK.exists():
        MARK.write_text("x")
        raise KeyboardInterrupt
    time.sleep(0.05)
    return case.gold_sql
'''

CASES = [{"id": f"q{i:02d}", "question": f"count {i}", "gold_sql": f"SELECT count(*) + {i} FROM orders"}
         for i in range(1, 9)]


def _records(pytester: pytest.Pytester) -> dict[str, dict[str, Any]]:
    path = pytester.path / "sqleval-results" / "results.jsonl"
    return {json.loads(l)["nodeid"]: json.loads(l) for l in path.read_text().splitlines()} if path.exists() else {}


def test_a_killed_worker_loses_one_case_and_the_run_completes(pytester: pytest.Pytester, make_suite: Any) -> None:
    suite = make_suite(CASES)
    (pytester.path / "crashy.py").write_text(BACKEND)
    result = pytester.runpytest_subprocess(str(suite), "-n", "2", "-p", "no:cacheprovider", "-o", "pythonpath=.",
                                           "--sqleval-backend=crashy:crash_once", "--sqleval-min-pass-rate=0.5")
    out = result.stdout.str()
    summary = json.loads((pytester.path / "sqleval-results" / "summary.json").read_text())
    assert "crashed" in out
    assert len(summary["run"]["lost"]) == 1 and summary["cases_lost"] == 1
    assert len(_records(pytester)) == len(CASES) - 1  # everything else was graded and merged
    assert "LOST: 1 case(s)" in out
    assert result.ret == 1  # the gate fails a run that lost a case


def test_ctrl_c_keeps_finished_results_and_a_rerun_resumes(pytester: pytest.Pytester, make_suite: Any) -> None:
    suite = make_suite(CASES)
    (pytester.path / "flaky.py").write_text(BACKEND)
    args = [str(suite), "-p", "no:cacheprovider", "-o", "pythonpath=.", "--sqleval-backend=flaky:interrupt_at_q04",
            "--sqleval-concurrency=1"]
    first = pytester.runpytest_subprocess(*args)
    assert first.ret == pytest.ExitCode.INTERRUPTED
    done = _records(pytester)
    assert done and all(r["status"] == "passed" for r in done.values())
    assert json.loads((pytester.path / "sqleval-results" / "summary.json").read_text())["run"]["exit_status"] == 2
    calls_before = (pytester.path / "calls.txt").read_text().split()
    second = pytester.runpytest_subprocess(*args)
    second.assert_outcomes(passed=len(CASES))
    calls_after = (pytester.path / "calls.txt").read_text().split()[len(calls_before):]
    finished_first = {r["case_id"] for r in done.values()}
    assert not finished_first & set(calls_after)  # nothing finished is generated again


# -- a flaky model --------------------------------------------------------------------------
LLM_BACKEND = '''
import os, re
from pytest_sqleval.core.llm import complete

async def generate(case):
    reply = await complete([{"role": "user", "content": case.question}], model="openai/flaky",
                           api_base=os.environ["FLAKY_API_BASE"], api_key="x", timeout=2, max_attempts=2,
                           backoff_base=0.01)
    m = re.search(r"```sql\\s*(.*?)```", reply.text, re.S)
    return m.group(1) if m else reply.text
generate.sqleval_fingerprint = "flaky-v1"
'''


def test_model_faults_end_as_verdicts_or_backend_errors_and_nothing_is_lost(
        pytester: pytest.Pytester, make_suite: Any, llm_server: ScriptedLLMServer,
        monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("litellm")
    cases = [{"id": f"q{i:02d}", "question": f"SELECT {i} AS n", "gold_sql": f"SELECT {i} AS n"} for i in range(1, 21)]
    suite = make_suite(cases)
    (pytester.path / "llmback.py").write_text(LLM_BACKEND)
    faults = [Reply.error(500), Reply.rate_limited(0.01), Reply(content="Sure! Here is some prose, no SQL."),
              Reply(content=""), Reply(body='{"choices": [{"message": {"content": "SEL', status=200),
              Reply(content="ok", delay=3.0)]
    count = {"n": 0}

    def respond(req: Any) -> Reply:
        count["n"] += 1
        if count["n"] % 10 in (1, 4, 7):  # 30 % of calls fail in one of six ways
            return faults[count["n"] % len(faults)]
        question = req.messages[-1]["content"]
        return Reply(content=f"Here you go:\n```sql\n{question}\n```")
    llm_server.respond_with(respond)
    monkeypatch.setenv("FLAKY_API_BASE", llm_server.api_base)
    args = [str(suite), "-p", "no:cacheprovider", "-o", "pythonpath=.", "--sqleval-backend=llmback:generate",
            "--sqleval-concurrency=4"]
    pytester.runpytest_subprocess(*args)
    records = _records(pytester)
    assert len(records) == len(cases)  # none lost
    assert all(r["status"] in ("passed", "failed") or r["failure_kind"] == "backend_error" for r in records.values())
    finished = {r["case_id"] for r in records.values() if r["status"] != "error"}
    calls_first = llm_server.calls
    llm_server.respond_with(lambda req: Reply(content=f"```sql\n{req.messages[-1]['content']}\n```"))
    pytester.runpytest_subprocess(*args)
    rerun_prompts = {r.messages[-1]["content"] for r in llm_server.chat_requests[calls_first:]}
    assert not {c["question"] for c in cases if c["id"] in finished} & rerun_prompts  # no call spent on finished cases
    first = {r["case_id"]: r["status"] for r in records.values()}
    second = {r["case_id"]: r["status"] for r in _records(pytester).values()}
    assert all(second[c] == "passed" for c, s in first.items() if s == "error")  # the failed calls were retried
    assert all(second[c] == s for c, s in first.items() if s != "error")  # finished verdicts stand, from the cache

