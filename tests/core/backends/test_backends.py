"""Backends: the gold self-check, predictions files, ``module:function`` in every shape,
entry points, crashes as case errors, and unknown backends as usage errors."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest

from pytest_sqleval.core.backends import registry
from tests.sqleval_helpers import NAIVE_SQL, read_results, read_summary, sqleval_ini  # noqa: F401  (autouse fixture)


def test_gold_is_the_default_and_llm_options_are_accepted(pytester: pytest.Pytester, shop_suite: Path) -> None:
    result = pytester.runpytest("--sqleval-model=gpt-test", "--sqleval-provider=openai",
                                "--sqleval-api-base=http://127.0.0.1:9")  # ignored by non-LLM backends
    assert result.ret == pytest.ExitCode.OK
    result.assert_outcomes(passed=6)
    records = read_results(pytester.path)
    assert {r["backend"] for r in records} == {"gold"}
    assert all(r["generated_sql"] == r["gold_sql"] for r in records)


def test_predictions_files_by_id_or_qid_and_a_missing_prediction(
        pytester: pytest.Pytester, shop_suite: Path, write_predictions: Callable[..., Path]) -> None:
    some = {k: v for k, v in NAIVE_SQL.items() if k != "q06"}
    write_predictions(some, name="by_id.jsonl", key="id", model="naive-model")
    write_predictions(some, name="by_qid.jsonl", key="qid", model="naive-model")
    result = pytester.runpytest("--sqleval-backend=predictions:by_id.jsonl,predictions:by_qid.jsonl")
    # a missing prediction is a wrong answer: one failure, never an error at setup
    result.assert_outcomes(passed=2, failed=10, errors=0)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    out = result.stdout.str()
    assert "ERROR" not in out and "CaseError" not in out and "Traceback" not in out
    for label in ("by_id", "by_qid"):
        result.stdout.fnmatch_lines([f"*q06 [[]{label}[]]: other (no_prediction, confidence 1.00)*",
                                     f"*why: no prediction for this case: the predictions file *{label}.jsonl has no "
                                     "line with id 'q06'*"])
        result.stdout.fnmatch_lines([f"backend {label}: 6 cases, 1 passed, 5 failed, 0 errors*",
                                     "*no prediction: 1 case(s) the backend has no answer for; they fail*"])
    summary = read_summary(pytester.path)["backends"]
    for label, records in _per_backend(read_results(pytester.path)).items():
        q06 = records["q06"]
        assert (q06["status"], q06["error_class"], q06["failure_kind"]) == ("failed", "other", "no_prediction"), label
        assert q06["generated_sql"] is None and q06["case_error"] is None and q06["parse_ok"] is None
        assert q06["sidebyside"] == {"bird": False, "spider": False,
                                     "note": "no prediction for this case: both score it wrong"}
        assert records["q02"]["status"] == "failed"
        assert records["q01"]["status"] == "passed"
        assert records["q01"]["backend_metadata"] == {"model": "naive-model"}  # other keys are kept as metadata
        # counted wrong in both rates, as Spider and BIRD count a missing answer
        assert summary[label]["pass_rate"] == summary[label]["execution_accuracy"] == pytest.approx(1 / 6, abs=1e-6)
        assert summary[label]["no_prediction"] == 1 and summary[label]["case_errors"] == {}
        assert summary[label]["parse_rate"] == 1.0  # nothing to parse is not a parse failure


def _per_backend(records: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, Any]]]:
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for r in records:
        out.setdefault(r["backend"], {})[r["case_id"]] = r
    return out


BACKEND_MODULE = """
from pytest_sqleval.core.backends.base import GenerationResult


def sync_fn(case):
    return case.gold_sql


async def async_fn(case):
    return GenerationResult(case.gold_sql, {"model": "m-1", "tokens": 7})


def factory():
    async def generate(case):
        return case.gold_sql
    return generate


class Agent:
    @staticmethod
    async def generate(case):
        return case.gold_sql
"""


def test_module_function_backends_sync_async_factory(pytester: pytest.Pytester, shop_suite: Path) -> None:
    pytester.makepyfile(mybackend=BACKEND_MODULE)  # importable through `pythonpath = .` in the ini
    specs = ["mybackend:sync_fn", "mybackend:async_fn", "mybackend:factory", "mybackend:Agent.generate"]
    result = pytester.runpytest("--sqleval-backend=" + ",".join(specs))
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    result.assert_outcomes(passed=24)
    backends = _per_backend(read_results(pytester.path))
    assert sorted(backends) == ["async_fn", "factory", "generate", "sync_fn"]  # labels: the attribute name
    assert {r["backend_spec"] for r in backends["factory"].values()} == {"mybackend:factory"}
    assert all(r["backend_metadata"] == {"model": "m-1", "tokens": 7} for r in backends["async_fn"].values())
    assert all(r["backend_metadata"] == {} for r in backends["sync_fn"].values())


BROKEN_MODULE = """
import asyncio


def raises(case):
    if case.id == "q03":
        raise RuntimeError("model overloaded")
    return case.gold_sql


async def returns_none(case):
    return None if case.id == "q03" else case.gold_sql


async def hangs(case):
    if case.id == "q03":
        await asyncio.sleep(30)
    return case.gold_sql
"""
BROKEN_MESSAGE = {"raises": "RuntimeError: model overloaded", "returns_none": "backend returned NoneType",
                  "hangs": "backend timed out after 0.5 s"}


def test_a_backend_that_fails_on_a_case_is_an_error_of_that_case(pytester: pytest.Pytester,
                                                                 shop_suite: Path) -> None:
    pytester.makepyfile(flaky=BROKEN_MODULE)
    result = pytester.runpytest("--sqleval-backend=" + ",".join(f"flaky:{k}" for k in BROKEN_MESSAGE),
                                "--sqleval-generation-timeout=0.5")
    result.assert_outcomes(passed=15, errors=3)  # the run goes on after each crash
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    for label, message in BROKEN_MESSAGE.items():
        result.stdout.fnmatch_lines([f"*backend {label} failed on q03: {message}*"])
    assert "Traceback" not in result.stdout.str()
    for label, records in _per_backend(read_results(pytester.path)).items():
        q03 = records["q03"]
        assert (q03["status"], q03["failure_kind"], q03["pass"]) == ("error", "backend_error", False), label


@pytest.mark.parametrize("spec, needles", [
    ("gld", ["unknown backend 'gld' (did you mean 'gold'?)", "Known backends: ", " gold,", "predictions:PATH",
             "module:function"]),
    ("no_such_module_xyz:generate", ["cannot import module 'no_such_module_xyz'", "pythonpath"]),
    ("mybackend:generat", ["module 'mybackend' has no attribute 'generat' (did you mean 'generate'?)"]),
    ("predictions:missing.jsonl", ["predictions file", "missing.jsonl does not exist"]),
])
def test_unknown_backend_is_a_usage_error(pytester: pytest.Pytester, shop_suite: Path, spec: str,
                                          needles: list[str]) -> None:
    pytester.makepyfile(mybackend="def generate(case):\n    return case.gold_sql\n")
    result = pytester.runpytest(f"--sqleval-backend={spec}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    for needle in needles:
        assert needle in err
    assert "Traceback" not in err + result.stdout.str()


def test_a_bad_predictions_file_is_a_usage_error_naming_the_line(pytester: pytest.Pytester, shop_suite: Path) -> None:
    (pytester.path / "preds.jsonl").write_text('{"id": "q01", "sql": "SELECT 1"}\n{"id": "q02"}\n')
    result = pytester.runpytest("--sqleval-backend=predictions:preds.jsonl")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "preds.jsonl:2: field 'sql'" in result.stderr.str()


class _EntryPoint:
    def __init__(self, factory: Callable[..., Any]) -> None:
        self.factory = factory

    def load(self) -> Callable[..., Any]:
        return self.factory


def test_llm_options_reach_entry_point_factories(pytester: pytest.Pytester, shop_suite: Path,
                                                 monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    seen: list[Any] = []

    def factory(options: Any) -> Callable[..., Any]:
        seen.append(options)

        async def generate(case: Any) -> Any:
            return case.gold_sql
        return generate

    monkeypatch.setattr(registry, "_entry_points", lambda: {"fake-llm": _EntryPoint(factory)})
    registry.BACKENDS.reload_entry_points()  # entry points are read once; read the fake ones, and after it the real
    request.addfinalizer(registry.BACKENDS.reload_entry_points)
    result = pytester.runpytest("--collect-only", "-q", "--sqleval-backend=fake-llm,gold,",  # a trailing comma is fine
                                "--sqleval-model=gpt-test", "--sqleval-provider=openai",
                                "--sqleval-api-base=http://127.0.0.1:9")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["suite/questions.jsonl::q01[[]fake-llm[]]", "suite/questions.jsonl::q01[[]gold[]]"])
    assert [(o.model, o.provider, o.api_base) for o in seen] == [("gpt-test", "openai", "http://127.0.0.1:9")]
    assert "fake-llm" in registry.known_backends()
