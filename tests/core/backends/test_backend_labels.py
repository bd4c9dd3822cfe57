"""Backend labels are unique by construction, so one predictions file never silently stands
in for another: files are told apart by path and content, and colliding labels are each graded."""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_sqleval.core.backends.base import Backend, BackendOptions
from pytest_sqleval.core.backends import registry
from tests.sqleval_helpers import gen_cases, read_results, sqleval_ini  # noqa: F401  (fixture)


# -- backend labels ------------------------------------------------------------------------
async def _never(case: Any) -> str:  # pragma: no cover - never called
    return ""


@pytest.mark.parametrize(("derived", "expected"), [
    (["run1", "run1", "run12"], ["run1", "run13", "run12"]),
    (["run12", "run1", "run1"], ["run12", "run1", "run13"]),
    (["gold", "gold"], ["gold", "gold2"]),
    (["a", "a", "a"], ["a", "a2", "a3"]),
    (["a", "a", "a2", "a3"], ["a", "a4", "a2", "a3"]),
    (["a", "b", "c"], ["a", "b", "c"]),
], ids=["issue_run1_run1_run12", "derived_name_first", "gold_twice", "three_alike", "suffixes_taken", "distinct"])
def test_backend_labels_are_unique_by_construction(derived: list[str], expected: list[str]) -> None:
    backends = [Backend(f"spec{i}", label, _never) for i, label in enumerate(derived)]
    registry.unique_labels(backends)
    assert [b.label for b in backends] == expected
    assert len(set(expected)) == len(expected)


def test_prediction_files_are_told_apart_by_path_and_content(tmp_path: Path) -> None:
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "run1.jsonl").write_text(json.dumps({"id": "q01", "sql": f"SELECT '{folder}'"}) + "\n")
    one, two = registry.resolve_backends("predictions:a/run1.jsonl,predictions:b/run1.jsonl",
                                BackendOptions(rootdir=str(tmp_path)))
    assert one.description != two.description
    assert str((tmp_path / "a" / "run1.jsonl").resolve()) in one.description
    from pytest_sqleval.core.cases import BenchmarkCase
    from pytest_sqleval.core.generation import _key
    case = BenchmarkCase(id="q01", question="?", gold_sql="SELECT 1")
    two.label = one.label  # even under one label, the generation key keeps them apart
    assert _key(one, case) != _key(two, case)


def test_three_prediction_files_whose_labels_collide_are_each_graded(
        pytester: pytest.Pytester, make_suite: Callable[..., Path]) -> None:
    """``a/run1``, ``b/run1`` (uniqued) and ``run12``: the third file is read, its wrong
    answers fail, and a 100 % gate does not pass the run."""
    make_suite(gen_cases(2))
    right = {f"q{i:02d}": f"SELECT count(*) FROM customers WHERE id <= {i}" for i in (1, 2)}
    for name in ("a/run1.jsonl", "b/run1.jsonl"):
        (pytester.path / name).parent.mkdir(exist_ok=True)
        (pytester.path / name).write_text("".join(json.dumps({"id": k, "sql": v}) + "\n" for k, v in right.items()))
    (pytester.path / "run12.jsonl").write_text("".join(json.dumps({"id": k, "sql": "SELECT -1"}) + "\n" for k in right))
    result = pytester.runpytest(
        "suite", "--sqleval-backend=predictions:a/run1.jsonl,predictions:b/run1.jsonl,predictions:run12.jsonl",
        "--sqleval-min-pass-rate=1.0", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=4, failed=2)
    assert result.ret != 0
    outcomes = {(r["case_id"], r["backend"]): r["pass"] for r in read_results(pytester.path)}
    assert outcomes == {("q01", "run1"): True, ("q02", "run1"): True, ("q01", "run13"): True,
                        ("q02", "run13"): True, ("q01", "run12"): False, ("q02", "run12"): False}

