"""Per-case comparison overrides (a case's ``compare`` object): read as typed values, a bad
one is one collection error naming file, line and field, and the documented one works."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest

from pytest_sqleval.core.cases import read_cases
from pytest_sqleval.core.errors import BadInputError
from tests.sqleval_helpers import SHOP_CASES, sqleval_ini  # noqa: F401


# -- per-case comparison overrides ----------------------------------------------
def _case(**extra: Any) -> str:
    return json.dumps({"id": "q01", "question": "?", "gold_sql": "SELECT 1", **extra}) + "\n"


@pytest.mark.parametrize("compare, needles", [
    ({"order_matter": False}, ["field 'compare.order_matter'", "did you mean 'order_matters'"]),
    ({"float_rel_tolerance": 0.01}, ["field 'compare.float_rel_tolerance'", "did you mean 'float_rel_tol'"]),
    ({"float_rel_tol": "0.01"}, ["field 'compare.float_rel_tol'", "expected a finite number at least 0, got '0.01'"]),
    ({"float_abs_tol": True}, ["field 'compare.float_abs_tol'", "expected a finite number at least 0, got True"]),
    ({"float_abs_tol": -1}, ["field 'compare.float_abs_tol'", "expected a finite number at least 0, got -1"]),
    ({"order_matters": "no"}, ["field 'compare.order_matters'", "expected true or false"]),
    ({"allow_empty": True}, ["field 'compare.allow_empty'", '"expected_shape": "empty"']),
    ({"allow_null": True}, ["field 'compare.allow_null'", '"expected_shape": "null"']),
    ([["order_matters", False]], ["field 'compare'", "must be a JSON object"]),
])
def test_a_bad_per_case_compare_override_names_file_line_and_field(
        tmp_path: Path, compare: Any, needles: list[str]) -> None:
    path = tmp_path / "questions.jsonl"
    path.write_text(_case() .replace('"q01"', '"q00"') + _case(compare=compare))
    with pytest.raises(BadInputError) as info:
        read_cases(path)
    message = str(info.value)
    assert message.startswith(f"{path}:2: ")
    for needle in needles:
        assert needle in message
    assert "fix:" in message


def test_conflicting_order_matters_on_the_case_and_in_its_compare_object(tmp_path: Path) -> None:
    path = tmp_path / "questions.jsonl"
    path.write_text(_case(order_matters=True, compare={"order_matters": False}))
    with pytest.raises(BadInputError, match=r"questions.jsonl:1: field 'compare.order_matters': .*conflicts"):
        read_cases(path)


def test_per_case_compare_overrides_are_read_as_typed_values(tmp_path: Path) -> None:
    path = tmp_path / "questions.jsonl"
    path.write_text(_case(compare={"order_matters": False, "float_rel_tol": 0, "float_abs_tol": 0.5}))
    (case,) = read_cases(path)
    assert case.order_matters is False
    assert case.metadata["compare"] == {"float_rel_tol": 0.0, "float_abs_tol": 0.5}


def test_the_documented_per_case_compare_override_works(
        pytester: pytest.Pytester, make_suite: Callable[..., Path]) -> None:
    cases = [{"id": "q00", "question": "?", "gold_sql": "SELECT count(*) FROM customers"},
             {"id": "q01", "question": "?", "gold_sql": "SELECT id FROM products ORDER BY id",
              "compare": {"order_matters": False}},
             {"id": "q02", "question": "?", "gold_sql": "SELECT 1.0::DOUBLE AS x", "compare": {"float_abs_tol": 0.2}}]
    make_suite(cases)
    preds = {"q00": "SELECT count(*) FROM customers", "q01": "SELECT id FROM products ORDER BY id DESC",
             "q02": "SELECT 1.1::DOUBLE AS x"}
    (pytester.path / "p.jsonl").write_text("".join(json.dumps({"id": k, "sql": v}) + "\n" for k, v in preds.items()))
    result = pytester.runpytest("--sqleval-backend=predictions:p.jsonl")
    result.assert_outcomes(passed=3)
    assert "LOST" not in result.stdout.str()


def test_a_bad_per_case_override_is_one_collection_error_without_a_traceback(
        pytester: pytest.Pytester, make_suite: Callable[..., Path]) -> None:
    make_suite([SHOP_CASES[0], {**SHOP_CASES[1], "compare": {"order_matter": False}}])
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.INTERRUPTED
    out = result.stdout.str()
    assert "suite/questions.jsonl:2: field 'compare.order_matter'" in out and "did you mean 'order_matters'" in out
    assert "Traceback" not in out and len(out.splitlines()) < 40

