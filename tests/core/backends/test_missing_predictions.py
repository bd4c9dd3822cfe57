"""A backend with no answer for a case (``errors.NoPrediction``: a predictions file without
a line for it) fails that case as ``no_prediction``, and nothing else follows from it: the
missing answer is not cached as an answer, and the held-out comparison does not read a
file that skips the held-out questions as leakage. (The pytest outcome and the summary:
``tests/core/backends/test_backends.py``.)"""
from __future__ import annotations

from pathlib import Path

from pytest_sqleval.core.backends.base import Backend
from pytest_sqleval.core.cases import BenchmarkCase
from pytest_sqleval.core.errors import NoPrediction
from pytest_sqleval.core.generation import GenerationService, GenerationStore
from pytest_sqleval.core.grading.verdict import no_prediction
from pytest_sqleval.reports.ablation import held_out_by_backend

CASE = BenchmarkCase("q1", "How many?", "SELECT 1", suite="s")


def test_no_prediction_is_neither_a_backend_error_nor_a_cached_answer(tmp_path: Path) -> None:
    calls = []

    async def generate(case: BenchmarkCase) -> str:
        calls.append(case.id)
        raise NoPrediction(f"no prediction for this case: {case.id!r} is not in my file")

    backend = Backend("mine:generate", "mine", generate, fingerprint="f" * 24)
    for run in ("r1", "r2"):
        service = GenerationService(GenerationStore(tmp_path, run))
        try:
            gen = service.get(backend, CASE)
        finally:
            service.close()
        assert (gen.sql, gen.error, gen.no_prediction) == (None, None, "no prediction for this case: 'q1' is not in my file")
        assert service.failed == 0  # not a failed backend call
    assert calls == ["q1", "q1"]  # nothing was cached: the next run asks again
    assert not list(tmp_path.rglob("*.json"))


def test_the_verdict_of_a_missing_prediction() -> None:
    v = no_prediction("no prediction for this case")
    assert (v.status, v.passed, v.error_class, v.failure_kind, v.case_error) == (
        "failed", False, "other", "no_prediction", None)
    assert v.parse_ok is None and v.blocked_reason == "no_prediction" and v.severity == "medium"
    assert v.adjudication is not None and v.adjudication.decided_by == "no_prediction"


def _record(cid: str, status: str, held_out: bool, failure_kind: str | None = None) -> dict[str, object]:
    return {"case_id": cid, "backend": "sample", "status": status, "failure_kind": failure_kind,
            "error_class": "other" if status == "failed" else None,
            "case_metadata": {"split": "held_out"} if held_out else {}}


def test_a_file_that_skips_the_held_out_questions_is_not_flagged_as_leakage() -> None:
    records = [_record("m1", "passed", False), _record("m2", "passed", False),
               _record("h1", "failed", True, "no_prediction"), _record("h2", "failed", True, "no_prediction")]
    row = held_out_by_backend(records)["sample"]
    assert (row["main_graded"], row["held_out_graded"]) == (2, 0)
    assert row["held_out_gap"] is None and row["possible_leakage"] is False
    answered = records[:2] + [_record("h1", "failed", True), _record("h2", "failed", True)]
    assert held_out_by_backend(answered)["sample"]["possible_leakage"] is True  # a wrong answer still counts
