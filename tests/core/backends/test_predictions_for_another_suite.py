"""A predictions file made for another suite is called out: one usage error when it answers
none of the suite's cases, one warning with counts when it answers few, nothing when it
covers the suite."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.sqleval_helpers import sqleval_ini  # noqa: F401  (autouse fixture)


# -- a predictions file made for another suite -----------------------------------
def _preds(pytester: pytest.Pytester, ids: list[str], name: str = "p.jsonl") -> None:
    (pytester.path / name).write_text("".join(json.dumps({"id": i, "sql": "SELECT 1"}) + "\n" for i in ids))


def test_predictions_for_another_suite_entirely_are_a_usage_error(
        pytester: pytest.Pytester, shop_suite: Path) -> None:
    _preds(pytester, [f"x{i:02d}" for i in range(1, 9)])
    result = pytester.runpytest("--sqleval-backend=predictions:p.jsonl")
    assert result.ret != pytest.ExitCode.OK
    out = result.stdout.str()
    assert "none of the 8 ids in" in out and "p.jsonl" in out and "suite 'suite'" in out
    assert "x01" in out and "Traceback" not in out
    result.assert_outcomes(errors=1)


def test_predictions_mostly_for_another_suite_warn_once_with_counts(
        pytester: pytest.Pytester, shop_suite: Path) -> None:
    _preds(pytester, ["q01", "q02"] + [f"x{i:02d}" for i in range(1, 7)])
    result = pytester.runpytest("--sqleval-backend=predictions:p.jsonl,gold", "-p", "no:randomly")
    out = result.stdout.str()
    assert out.count("2 of the 8 ids in") == 1, out
    assert "4 of its 6 cases have no prediction" in out and "x01" in out and "q03" in out
    assert "fail as no_prediction" in out
    result.assert_outcomes(passed=6, failed=6, errors=0)


def test_predictions_that_cover_the_suite_say_nothing(pytester: pytest.Pytester, shop_suite: Path) -> None:
    _preds(pytester, ["q01", "q02", "q03", "q04", "q05"])
    result = pytester.runpytest("--sqleval-backend=predictions:p.jsonl")
    assert "ids in" not in result.stdout.str() and "warning" not in result.stdout.str().lower()

