"""Hardening: runaway queries, fuzzed input files, a worker killed mid-run, Ctrl-C and a
flaky model. Each asserts what a user relies on: nothing is lost, nothing escapes, and a
mistake a user can make never ends in a traceback."""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_sqleval.core.api import Grader
from pytest_sqleval.core.cases import Limits, load_manifest, read_cases
from pytest_sqleval.core.backends.registry import read_predictions
from pytest_sqleval.core.errors import BadInputError

from tests.llm_server import Reply, ScriptedLLMServer, llm_server  # noqa: F401  (fixture)
from tests.sqleval_helpers import INI, write_predictions  # noqa: F401  (fixture)


# -- runaway queries ---------------------------------------------------------------------
def test_an_uninterruptible_query_is_killed_and_the_next_case_is_graded(shop_db: Path) -> None:
    """A single huge scalar ignores DuckDB's interrupt; the engine process is killed."""
    from pytest_sqleval.core.engines.host import query_budget
    with Grader(shop_db, limits=Limits(timeout_s=1)) as g:
        start = time.perf_counter()
        v = g.compare("SELECT md5(repeat('ab', 400000000))", "SELECT count(*) FROM orders")
        elapsed = time.perf_counter() - start
        assert not v.passed and v.failure_kind == "timeout"
        assert v.layers["execution"]["error"]["exception"] == "ProcessKilled"
        assert "CPU time, over the limit of 1 s" in v.explanation  # killed for its CPU time, not the wall's
        assert elapsed < query_budget(1) + 3  # later in wall time on a loaded machine, never past the wall bound
        assert g.compare("SELECT count(*) FROM orders", "SELECT count(*) FROM orders").passed
        assert g._grader.host.restarts == 1


def test_requests_queued_behind_a_killed_query_go_to_a_fresh_engine(shop_db: Path, tmp_path: Path) -> None:
    """Grading ahead queues the next case behind the running one; when the running one is
    killed, the queued ones are neither lost nor blamed for it."""
    from pytest_sqleval.core.grading.pipeline import SuiteGrader
    count, bomb, wrong = "SELECT count(*) FROM customers", "SELECT md5(repeat('ab', 400000000))", "SELECT count(*) FROM orders"
    g = SuiteGrader(shop_db, limits=Limits(timeout_s=1), cache_dir=tmp_path)
    try:
        gold = g.gold(count)
        for sql in (bomb, count, wrong):
            g.submit(sql, gold)
        assert [p.ticket.sent for p in g._ahead.values()] == [True, True, False]  # one waits behind the running one
        assert g.grade(count, gold).passed  # read behind the killed one, answered by a fresh engine
        assert g.grade(bomb, gold).failure_kind == "timeout"
        assert g.host.restarts == 1
        verdict = g.grade(wrong, gold)
        assert not verdict.passed and verdict.failure_kind != "timeout" and verdict.executed_sql == wrong
    finally:
        g.close()


def test_grading_ahead_keeps_every_verdict_with_its_own_case(
        pytester: pytest.Pytester, make_suite: Any, write_predictions: Any) -> None:
    count = "SELECT count(*) FROM customers"
    sqls = {"a_ok": count, "b_killed": "SELECT md5(repeat('ab', 400000000))", "c_ok": count,
            "d_wrong": "SELECT count(*) + 1 FROM customers", "e_ok": count}
    make_suite([{"id": cid, "question": f"case {cid}", "gold_sql": count} for cid in sqls],
               manifest_extra="[limits]\ntimeout_s = 1\n")
    write_predictions(sqls, name="p.jsonl")
    pytester.makeini(INI)
    result = pytester.runpytest("--sqleval-backend=predictions:p.jsonl", "-p", "no:randomly")
    result.assert_outcomes(passed=3, failed=2)
    records = {r["case_id"]: r for r in map(json.loads, (pytester.path / "sqleval-results" / "results.jsonl").read_text().splitlines())}
    assert {cid: r["executed_sql"] for cid, r in records.items()} == sqls
    assert records["b_killed"]["failure_kind"] == "timeout"
    assert records["d_wrong"]["error_class"] is not None and records["d_wrong"]["failure_kind"] != "timeout"


# -- fuzzed input files --------------------------------------------------------------------
_json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                            lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                            max_leaves=8)
_case_like = st.fixed_dictionaries({}, optional={
    "id": st.one_of(st.text(max_size=6), st.integers(), st.none()), "question": _json_values,
    "gold_sql": st.one_of(st.just("SELECT 1"), _json_values), "tags": _json_values, "order_matters": _json_values,
    "expected_shape": st.one_of(st.sampled_from(["scalar", "table", "empty", "blob"]), _json_values),
    "difficulty": _json_values})
_lines = st.lists(st.one_of(_case_like.map(json.dumps), st.text(max_size=30), _json_values.map(json.dumps)), max_size=6)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=_lines)
def test_case_reader_fails_only_with_a_located_error(tmp_path: Path, lines: list[str]) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text("\n".join(line.replace("\n", " ") for line in lines) + "\n", encoding="utf-8")
    try:
        cases = read_cases(path)
    except BadInputError as exc:
        assert str(path) in str(exc) and exc.line is not None and exc.fix
    else:
        assert len({c.id for c in cases}) == len(cases)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=_lines)
def test_predictions_reader_fails_only_with_a_located_error(tmp_path: Path, lines: list[str]) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text("\n".join(line.replace("\n", " ") for line in lines) + "\n", encoding="utf-8")
    try:
        read_predictions(path)
    except BadInputError as exc:
        assert str(path) in str(exc) and exc.line is not None and exc.fix


_toml_values = st.one_of(st.text(max_size=10).map(json.dumps), st.integers().map(str), st.booleans().map(str).map(str.lower),
                         st.just("[1, 2]"), st.just('["legacy.*"]'), st.just("{"), st.just("1e-6"))
_toml_keys = st.sampled_from(["name", "questions", "database", "dialect", "build", "deprecated_tables", "schema",
                              "order_matters", "float_rel_tol", "timeout_s", "max_rows", "threads", "databse", "x"])
_sections = st.sampled_from(["[suite]", "[compare]", "[limits]", "[suit]", "", "[[suite]]"])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=st.lists(st.one_of(_sections, st.tuples(_toml_keys, _toml_values).map(lambda kv: f"{kv[0]} = {kv[1]}")),
                     max_size=8))
def test_manifest_loader_fails_only_with_a_located_error(tmp_path: Path, body: list[str]) -> None:
    (tmp_path / "questions.jsonl").write_text('{"id": "q1", "question": "?", "gold_sql": "SELECT 1"}\n')
    path = tmp_path / "sqleval.toml"
    path.write_text("\n".join(body) + "\n", encoding="utf-8")
    try:
        load_manifest(path)
    except BadInputError as exc:
        assert str(path) in str(exc) and exc.fix


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
