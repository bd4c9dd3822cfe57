"""Generation: calls overlap across cases within the concurrency bound, finished
generations are cached (and shared by xdist workers), an interrupted run resumes."""
from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any, Callable

import pytest

from pytest_sqleval.core.backends.base import Backend
from pytest_sqleval.core.cases import BenchmarkCase
from pytest_sqleval.core.generation import GenerationService, GenerationStore
from tests.sqleval_helpers import LEAN, gen_cases, read_results, sqleval_ini  # noqa: F401  (autouse fixture)

SPEC = "--sqleval-backend=recbackend:generate"
CASES = gen_cases(12)
ALL_IDS = [c["id"] for c in CASES]


def max_in_flight(pytester: pytest.Pytester) -> int:
    return max(int(x) for x in (pytester.path / "inflight.log").read_text().split())


def saved_generations(root: Path) -> set[str]:
    """Case ids whose generation is in the persistent cache (the backend answers with the gold)."""
    by_sql = {c["gold_sql"]: c["id"] for c in CASES} | {f"SELECT -1 AS wrong_{c['id']}": c["id"] for c in CASES}
    return {by_sql[json.loads(p.read_text())["sql"]] for p in (root / ".sqleval-cache" / "generations").glob("*/*.json")}


def claims(root: Path) -> list[Path]:
    return list((root / ".sqleval-cache").rglob("*.claim"))


@pytest.mark.parametrize("concurrency", [6, 2])
def test_generations_overlap_up_to_the_concurrency_limit(pytester: pytest.Pytester, make_suite: Callable[..., Path],
                                                         recording_backend: Callable[[], list[str]],
                                                         monkeypatch: pytest.MonkeyPatch, concurrency: int) -> None:
    monkeypatch.setenv("SQLEVAL_TEST_SLEEP", "0.3" if concurrency == 6 else "0.1")
    make_suite(CASES)
    result = pytester.runpytest(SPEC, f"--sqleval-concurrency={concurrency}")
    result.assert_outcomes(passed=12)
    assert sorted(recording_backend()) == ALL_IDS
    # Overlap and bound, as the backend itself saw them (12 x 0.3 s serially; ~0.6 s at 6).
    assert max_in_flight(pytester) == concurrency


def test_cached_generations_are_reused_until_the_case_or_the_flag_says_otherwise(
        pytester: pytest.Pytester, make_suite: Callable[..., Path], recording_backend: Callable[[], list[str]]) -> None:
    suite = make_suite(CASES[:6])
    pytester.runpytest(SPEC).assert_outcomes(passed=6)
    assert sorted(recording_backend()) == ALL_IDS[:6]
    assert not any(r["generation"]["cached"] for r in read_results(pytester.path))

    pytester.runpytest(SPEC).assert_outcomes(passed=6)
    assert len(recording_backend()) == 6, "a second identical run must not call the backend"
    assert all(r["generation"]["cached"] for r in read_results(pytester.path))

    pytester.runpytest(SPEC, "--sqleval-no-cache").assert_outcomes(passed=6)
    assert sorted(recording_backend()) == sorted(ALL_IDS[:6] * 2)

    edited = [dict(c) for c in CASES[:6]]
    edited[2]["question"] += " Answer with one number."  # what the backend sees changed: ask again
    (suite / "questions.jsonl").write_text("".join(json.dumps(c) + "\n" for c in edited))
    pytester.runpytest(SPEC).assert_outcomes(passed=6)
    assert recording_backend()[12:] == ["q03"]


def test_under_xdist_no_case_is_generated_twice(pytester: pytest.Pytester, make_suite: Callable[..., Path],
                                               recording_backend: Callable[[], list[str]],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SQLEVAL_TEST_SLEEP", "0.2")
    make_suite(CASES)
    result = pytester.runpytest_subprocess(*LEAN, "-n", "2", SPEC, "--sqleval-concurrency=4", timeout=120)
    result.assert_outcomes(passed=12)
    counts = Counter(recording_backend())
    assert sorted(counts) == ALL_IDS
    assert set(counts.values()) == {1}, counts
    assert max_in_flight(pytester) <= 2  # the run's limit of 4, split between two workers
    assert not claims(pytester.path)


def test_a_backend_raising_keyboardinterrupt_stops_the_run_and_a_rerun_resumes(
        pytester: pytest.Pytester, make_suite: Callable[..., Path], recording_backend: Callable[[], list[str]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    make_suite(CASES)
    monkeypatch.setenv("SQLEVAL_TEST_INTERRUPT", "q05")
    # In a subprocess with a timeout: a KeyboardInterrupt that escapes into the generation
    # thread would leave the run waiting forever.
    result = pytester.runpytest_subprocess(*LEAN, SPEC, "--sqleval-concurrency=1", timeout=60)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*KeyboardInterrupt*"])
    saved = saved_generations(pytester.path)
    assert {"q01", "q02", "q03", "q04"} <= saved and "q05" not in saved
    assert not claims(pytester.path)
    first = len(recording_backend())

    monkeypatch.delenv("SQLEVAL_TEST_INTERRUPT")
    pytester.runpytest(SPEC, "--sqleval-concurrency=1").assert_outcomes(passed=12)
    assert sorted(recording_backend()[first:]) == sorted(set(ALL_IDS) - saved)


def test_a_run_stopped_by_x_then_a_rerun_generates_only_the_missing_cases(
        pytester: pytest.Pytester, make_suite: Callable[..., Path], recording_backend: Callable[[], list[str]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    make_suite(CASES)
    monkeypatch.setenv("SQLEVAL_TEST_WRONG", "q03")
    monkeypatch.setenv("SQLEVAL_TEST_HOLD_FROM", "q04")  # q04.. are still generating when -x stops the run
    result = pytester.runpytest(SPEC, "-x")
    result.assert_outcomes(passed=2, failed=1)
    assert saved_generations(pytester.path) == {"q01", "q02", "q03"}
    assert not claims(pytester.path)  # the unfinished generations leave no claim behind
    first = len(recording_backend())

    monkeypatch.delenv("SQLEVAL_TEST_HOLD_FROM")
    result = pytester.runpytest(SPEC)  # same process, same pid: it must not wait on its own old claims
    result.assert_outcomes(passed=11, failed=1)  # q03's wrong answer is cached, so it fails again
    assert sorted(recording_backend()[first:]) == ALL_IDS[3:]


# -- the claim protocol, without pytest in between ---------------------------------------
def _cases(n: int) -> list[BenchmarkCase]:
    return [BenchmarkCase(id=f"c{i}", question=f"question {i}", gold_sql=f"SELECT {i}", suite="s") for i in range(n)]


def test_two_workers_split_the_cases_instead_of_one_claiming_them_all(tmp_path: Path) -> None:
    calls: dict[str, list[str]] = {"a": [], "b": []}

    def backend(name: str) -> Backend:
        async def generate(case: BenchmarkCase) -> str:
            calls[name].append(case.id)
            await asyncio.sleep(0.25)
            return case.gold_sql
        return Backend("rec", "rec", generate, fingerprint="fp")

    cases = _cases(8)
    a = GenerationService(GenerationStore(tmp_path, "run-1"), concurrency=2)
    b = GenerationService(GenerationStore(tmp_path, "run-1"), concurrency=2)  # a second worker of the same run
    try:
        a.prefetch([(backend("a"), c) for c in cases])
        time.sleep(0.05)
        b.prefetch([(backend("b"), c) for c in cases[4:] + cases[:4]])
        results = [a.get(backend("a"), c).sql for c in cases] + [b.get(backend("b"), c).sql for c in cases]
    finally:
        a.close()
        b.close()
    assert results == [c.gold_sql for c in cases] * 2
    assert sorted(calls["a"] + calls["b"]) == sorted(c.id for c in cases)  # nothing generated twice
    assert calls["a"] and calls["b"], calls  # both workers generated: claims are taken only when a slot is free


def test_cached_cases_skip_the_loop_and_the_switch_interval_is_lowered_only_meanwhile(tmp_path: Path) -> None:
    default = sys.getswitchinterval()
    seen: list[float] = []

    async def generate(case: BenchmarkCase) -> str:
        seen.append(sys.getswitchinterval())
        return case.gold_sql

    backend, cases = Backend("rec", "rec", generate, fingerprint="fp"), _cases(4)
    first = GenerationService(GenerationStore(tmp_path, "run-5"), concurrency=2)
    try:
        first.prefetch([(backend, c) for c in cases])
        assert [first.get(backend, c).cached for c in cases] == [False] * 4
    finally:
        first.close()
    assert len(seen) == 4 and max(seen) < default  # the loop thread gets the GIL back sooner while calls run
    assert sys.getswitchinterval() == default and not list(tmp_path.rglob("*.claim"))

    second = GenerationService(GenerationStore(tmp_path, "run-6"), concurrency=2)
    try:
        second.prefetch([(backend, c) for c in cases])  # all cached: answered at submission, no loop at all
        assert second._loop is None and sys.getswitchinterval() == default
        assert [second.get(backend, c).sql for c in cases] == [c.gold_sql for c in cases]
        assert second.cache_hits == 4 and len(seen) == 4
    finally:
        second.close()


def test_the_switch_interval_comes_back_when_services_overlap(tmp_path: Path) -> None:
    default = sys.getswitchinterval()

    def backend(delay: float) -> Backend:
        async def generate(case: BenchmarkCase) -> str:
            await asyncio.sleep(delay)
            return case.gold_sql
        return Backend(f"d{delay}", f"d{delay}", generate, fingerprint=None)

    fast, slow = GenerationService(GenerationStore(tmp_path, "run-7"), 2), GenerationService(GenerationStore(tmp_path, "run-8"), 2)
    cases = _cases(2)
    try:
        fast.prefetch([(backend(0.0), c) for c in cases])
        slow.prefetch([(backend(0.3), c) for c in cases])
        [fast.get(backend(0.0), c) for c in cases]
        fast.close()
        assert sys.getswitchinterval() < default  # the slow service's calls are still out
        [slow.get(backend(0.3), c) for c in cases]
    finally:
        fast.close()
        slow.close()
    assert sys.getswitchinterval() == default


def test_a_stale_claim_is_taken_over(tmp_path: Path) -> None:
    store = GenerationStore(tmp_path, "run-2")
    claim = tmp_path / "generations" / "fp" / "h.claim"
    claim.parent.mkdir(parents=True)
    claim.write_text(f"{os.getpid()} run-2")  # held by this very run: respected
    assert not store.claim("fp", "h")
    claim.write_text(f"{os.getpid()} run-1")  # this pid, another run: a recycled pid (pid 1 in a container)
    assert store.claim("fp", "h")
    store.release("fp", "h")
    proc_gone = _dead_pid()
    claim.write_text(f"{proc_gone} run-2")  # a process that died
    assert store.claim("fp", "h")
    assert store.claim("fp", "other")
    store.release_all()
    assert not list(tmp_path.rglob("*.claim"))


def _dead_pid() -> int:
    import subprocess
    import sys
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_keyboardinterrupt_in_a_sync_backend_reaches_the_caller(tmp_path: Path) -> None:
    def generate(case: Any) -> str:
        raise KeyboardInterrupt

    from pytest_sqleval.core.backends.registry import _wrap
    service = GenerationService(GenerationStore(tmp_path, "run-3"), concurrency=1)
    backend = _wrap("m:generate", "generate", generate, "fp")
    raised: list[type[BaseException]] = []

    def wait() -> None:
        try:
            service.get(backend, _cases(1)[0])
        except BaseException as exc:  # noqa: BLE001 - what reaches the caller is the point
            raised.append(type(exc))

    waiter = threading.Thread(target=wait, daemon=True)
    waiter.start()
    waiter.join(10)
    service.close()
    assert raised == [KeyboardInterrupt], "the caller must get the interrupt, not wait forever"
    assert not list(tmp_path.rglob("*.claim"))
