"""Every wait on a generation is bounded: a claim names a process, not just a pid, waiting on
another process's claim ends at the generation timeout, and a sync backend that never
returns is an error and pytest exits."""
from __future__ import annotations

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
from tests.sqleval_helpers import LEAN, gen_cases, read_results, sqleval_ini  # noqa: F401


# -- claims and waits -------------------------------------------------------------
@pytest.fixture
def live_process() -> Iterator[subprocess.Popen[bytes]]:
    """Another live process: stands for a pid that a stale claim's pid was recycled into, or
    for a worker stuck while it holds a claim."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])  # killed below
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
    waiter.start()
    waiter.join(300)  # a safety net: the claim's owner never finishes, so only the timeout ends the wait
    try:
        assert got, "the wait on another process's claim must end"
        assert got[0].sql == case.gold_sql and got[0].error is None
        assert live_process.poll() is None  # the owner still holds its claim: the timeout, not its end, freed it
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
    # the backend sleeps an hour: only the generation timeout ends the run; the subprocess's
    # own limit is a safety net against a hang, not a speed
    result = pytester.runpytest_subprocess("--sqleval-backend=sleepy:generate", "--sqleval-generation-timeout=1",
                                           *LEAN, timeout=600)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*backend timed out after 1 s*"])
    [record] = read_results(pytester.path)
    assert record["status"] == "error"
    assert record["case_error"] == "backend generate failed on q01: backend timed out after 1 s"

