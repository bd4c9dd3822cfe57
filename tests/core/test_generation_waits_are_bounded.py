"""Hardening, second round (limits): every wait on a generation is bounded (a claim names a
process, not just a pid; a sync backend that never returns does not keep pytest alive), a
missing or rejected API key stops an LLM backend once instead of on every case, and a large
result costs bounded memory and a bounded report."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from pytest_sqleval.core.backends.base import Backend
from pytest_sqleval.core.cases import BenchmarkCase
from pytest_sqleval.core.generation import GenerationService, GenerationStore, _start_time
from tests.llm_server import llm_server  # noqa: F401  (fixture)
from tests.sqleval_helpers import LEAN, gen_cases, read_results, sqleval_ini  # noqa: F401


# -- defect 10: claims and waits -------------------------------------------------------------
@pytest.fixture
def live_process() -> Iterator[subprocess.Popen[bytes]]:
    """Another live process: stands for a pid that a stale claim's pid was recycled into, or
    for a worker stuck while it holds a claim."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        yield proc
    finally:
        proc.kill()
        proc.wait()


def _case(i: int = 1) -> BenchmarkCase:
    c = gen_cases(i)[-1]
    return BenchmarkCase(id=c["id"], question=c["question"], gold_sql=c["gold_sql"], suite="s")


def _claim_path(root: Path, case: BenchmarkCase) -> Path:
    path = root / "generations" / "fp" / f"{case.content_hash}.claim"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def test_a_claim_whose_pid_was_reused_by_another_process_is_stale(tmp_path: Path,
                                                                  live_process: subprocess.Popen[bytes]) -> None:
    store = GenerationStore(tmp_path, "run-b")
    case = _case()
    claim = _claim_path(tmp_path, case)
    started = _start_time(live_process.pid)
    assert started is not None
    claim.write_text(f"{live_process.pid} run-a {int(started) - 1000}")  # that pid, but a process since gone
    assert store.claim("fp", case.content_hash), "a recycled pid must not keep the claim alive"
    store.release_all()
    claim.write_text(f"{live_process.pid} run-a {started}")  # the very process that claimed it
    assert not store.claim("fp", case.content_hash)


def test_waiting_on_another_process_claim_is_bounded_by_the_generation_timeout(
        tmp_path: Path, live_process: subprocess.Popen[bytes]) -> None:
    """A live owner that never finishes (a stuck worker, or an old-style claim with only a pid
    that was reused): after the generation timeout, this process generates the case itself."""
    case = _case()
    claim = _claim_path(tmp_path, case)
    claim.write_text(f"{live_process.pid} run-a")  # an old-style claim: nothing to tell the pid's process by

    async def generate(c: BenchmarkCase) -> str:
        return c.gold_sql

    service = GenerationService(GenerationStore(tmp_path, "run-b"), concurrency=1, timeout_s=0.5)
    got: list[Any] = []
    waiter = threading.Thread(target=lambda: got.append(service.get(Backend("b", "b", generate, "fp", "d"), case)),
                              daemon=True)
    start = time.monotonic()
    waiter.start()
    waiter.join(20)
    try:
        assert got, "the wait on another process's claim must end"
        assert got[0].sql == case.gold_sql and got[0].error is None
        assert time.monotonic() - start < 15
    finally:
        service.close()


SLEEPY_BACKEND = '''
import time


def generate(case):
    time.sleep(3600)  # a sync backend that never returns
'''


def test_a_sync_backend_that_never_returns_is_an_error_and_pytest_exits(
        pytester: pytest.Pytester, make_suite: Callable[..., Path]) -> None:
    make_suite(gen_cases(1))
    pytester.makepyfile(sleepy=SLEEPY_BACKEND)
    start = time.monotonic()
    result = pytester.runpytest_subprocess("--sqleval-backend=sleepy:generate", "--sqleval-generation-timeout=1",
                                           *LEAN, timeout=60)
    assert time.monotonic() - start < 50
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*backend timed out after 1 s*"])
    [record] = read_results(pytester.path)
    assert record["status"] == "error"
    assert record["case_error"] == "backend generate failed on q01: backend timed out after 1 s"


# -- defect 18: a missing or rejected API key --------------------------------------------------
needs_llm = pytest.mark.skipif(
    __import__("importlib.util").util.find_spec("litellm") is None
    or __import__("importlib.util").util.find_spec("rank_bm25") is None,
    reason="needs the 'llm' extra: pip install -e '.[llm]'")


@needs_llm
def test_a_rejected_key_stops_the_backend_after_one_call(
        pytester: pytest.Pytester, llm_server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The server answers 401: one call in the whole run, every case a backend_error with the
    same one-line reason naming the variable to set."""
    from tests.llm_server import Reply
    from tests.sqleval_helpers import INI
    from tests.products.agent.test_agent import build_mini_suite
    pytester.makeini(INI)
    monkeypatch.setenv("SQLEVAL_LLM_MAX_ATTEMPTS", "4")
    suite = build_mini_suite(pytester.path)
    llm_server.respond_with(lambda req: Reply.error(401, "Incorrect API key provided (scripted)"))
    result = pytester.runpytest(str(suite), "-p", "no:cacheprovider", "--sqleval-backend=a1",
                                "--sqleval-model=scripted", f"--sqleval-api-base={llm_server.api_base}")
    records = read_results(pytester.path)
    assert len(records) >= 2 and all(r["status"] == "error" for r in records)
    result.assert_outcomes(errors=len(records))
    assert llm_server.calls == 1, "the key is rejected once, not retried, and not asked again per case"
    reasons = {r["case_error"].split(" failed on ", 1)[1].split(": ", 1)[1] for r in records}
    assert len(reasons) == 1, reasons
    [reason] = reasons
    assert "401" in reason and "$SQLEVAL_API_KEY" in reason and "\n" not in reason


@needs_llm
def test_a_missing_key_is_not_retried_and_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    """No key at all: the client refuses before sending anything (litellm reports it as a 500,
    which used to be retried on every case)."""
    import asyncio

    from pytest_sqleval.core.llm import LLMError, complete
    for var in ("OPENAI_API_KEY", "SQLEVAL_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(LLMError) as info:
        asyncio.run(complete([{"role": "user", "content": "hi"}], model="openai/gpt-4o-mini", api_key=None,
                             timeout=5, backoff_base=0.01))
    assert info.value.auth and info.value.attempts == 1 and not info.value.retryable
    assert "OPENAI_API_KEY" in info.value.message


# -- defect 8: memory and report size ----------------------------------------------------------
ENGINE_PEAK = r'''
import io, json, resource, sys
from dataclasses import asdict
from pathlib import Path
import duckdb
from pytest_sqleval.core.engines.host import _Server
from pytest_sqleval.core.grading.engine_side import HANDLER
from pytest_sqleval.core.grading.compare import CompareSpec
root = Path(sys.argv[1])
duckdb.connect(str(root / "t.duckdb")).close()
srv = _Server(str(root / "t.duckdb"), {"timeout_s": 60.0, "memory_limit": "256MB", "threads": 1}, str(root), HANDLER,
              (str(root / "gold"),)).handler
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
big = "SELECT i, repeat('x', 990) || i{} AS s FROM range(300000) r(i)"  # ~300 MB of distinct text
gold = srv.gold({"key": "k", "sql": big.format(""), "spec": asdict(CompareSpec())}, io.BytesIO())
pred = srv.grade({"sql": big.format(" || 'y'"), "gold_key": "k", "spec": asdict(CompareSpec())}, io.BytesIO())
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"growth_mb": (peak - base) / 1024, "gold": gold, "pred": pred["execution"]}, default=str))
'''


def test_a_result_over_an_eighth_of_memory_limit_is_refused_and_the_engine_stays_small(tmp_path: Path) -> None:
    """memory_limit 256MB and a 300 MB result (under max_bytes): the engine process used to
    peak ~1.5 GB above its start (Arrow batches, the gold's two runs, the comparison's
    encoding); the result cap is now max_bytes and at most memory_limit / 8."""
    out = subprocess.run([sys.executable, "-c", ENGINE_PEAK, str(tmp_path)], capture_output=True, text=True,
                         timeout=120, cwd=Path(__file__).resolve().parents[2])
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["growth_mb"] < 400, got["growth_mb"]
    for err in (got["gold"]["error"]["error"], got["pred"]["error"]):
        assert err["category"] == "resource_exceeded"
        assert "32000000 bytes (memory_limit 256MB / 8)" in err["message"]


HUGE = 10 * 1024 * 1024


def test_huge_values_are_truncated_in_records_and_failure_texts(
        pytester: pytest.Pytester, make_suite: Callable[..., Path]) -> None:
    """Five rows of 10 MB strings a side: the record and the terminal stay small, and each
    cut value says how long it was."""
    make_suite([{"id": "big", "question": "Five long strings",
                 "gold_sql": f"SELECT i, repeat('x', {HUGE}) || i AS s FROM range(5) t(i)"}])
    (pytester.path / "preds.jsonl").write_text(json.dumps(
        {"id": "big", "sql": f"SELECT i, repeat('y', {HUGE}) || i AS s FROM range(5) t(i)"}) + "\n")
    result = pytester.runpytest_subprocess("--sqleval-backend=predictions:preds.jsonl", *LEAN, timeout=120)
    result.assert_outcomes(failed=1)
    text = "\n".join(result.outlines)
    assert len(text) < 50_000, len(text)
    assert f"({HUGE + 1:,} characters, truncated)" in text
    size = (pytester.path / "sqleval-results" / "results.jsonl").stat().st_size
    assert size < 100_000, size
    [record] = read_results(pytester.path)
    missing = record["compare"]["missing_rows"]
    assert len(missing) == 5 and missing[0][1].endswith(f"… ({HUGE + 1:,} characters, truncated)")
    assert len(missing[0][1]) < 300


GOLDS_HELD = r'''
import io, json, sys
from dataclasses import asdict
from pathlib import Path
import duckdb
from pytest_sqleval.core.engines.host import _Server
from pytest_sqleval.core.grading.engine_side import HANDLER
from pytest_sqleval.core.grading.compare import CompareSpec


def anon_mb():
    for line in open("/proc/self/status"):
        if line.startswith("RssAnon"):
            return int(line.split()[1]) / 1024


root = Path(sys.argv[1])
duckdb.connect(str(root / "t.duckdb")).close()
srv = _Server(str(root / "t.duckdb"), {"timeout_s": 60.0, "memory_limit": "2GB", "threads": 1}, str(root), HANDLER,
              (str(root / "gold"),)).handler
before = anon_mb()
for k in range(3):  # three gold answers of ~100 MB each
    sql = f"SELECT i, repeat('x', 990) || i || '{k}' AS s FROM range(100000) r(i)"
    assert srv.gold({"key": f"k{k}", "sql": sql, "spec": asdict(CompareSpec())}, io.BytesIO())["rows"] == 100000
print(json.dumps({"held_mb": anon_mb() - before}))
'''


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads RssAnon from /proc")
def test_the_engine_process_keeps_no_copy_of_the_gold_answers_it_computed(tmp_path: Path) -> None:
    """Fresh gold answers used to stay in the engine process (up to 65 of them, each up to
    the byte cap); they are read back memory-mapped from the gold cache instead."""
    out = subprocess.run([sys.executable, "-c", GOLDS_HELD, str(tmp_path)], capture_output=True, text=True,
                         timeout=120, cwd=Path(__file__).resolve().parents[2])
    assert out.returncode == 0, out.stderr[-2000:]
    held = json.loads(out.stdout.strip().splitlines()[-1])["held_mb"]
    assert held < 150, held  # was ~300 MB: every answer kept
