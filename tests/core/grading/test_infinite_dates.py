"""Infinite dates and timestamps (DuckDB's 'infinity' and '-infinity') are compared by value,
never equal to a finite date, and rendered in the evidence and its preview."""
from __future__ import annotations

import json
from typing import Any

import pytest

from tests.sqleval_helpers import sqleval_ini  # noqa: F401


# -- infinite dates and timestamps -----------------------------------------------

INFINITE = ("SELECT * FROM (VALUES (1, DATE '2024-01-01', TIMESTAMP '2024-01-01 10:00:00'), "
            "(2, 'infinity'::DATE, 'infinity'::TIMESTAMP), (3, '-infinity'::DATE, '-infinity'::TIMESTAMP)) t(id, d, ts)")


@pytest.mark.parametrize("pred, gold, passed", [
    ("SELECT 'infinity'::DATE AS d", "SELECT 'infinity'::DATE AS d", True),
    ("SELECT '-infinity'::TIMESTAMP AS t", "SELECT '-infinity'::TIMESTAMP AS t", True),
    ("SELECT 'infinity'::TIMESTAMPTZ AS t", "SELECT 'infinity'::TIMESTAMPTZ AS t", True),
    ("SELECT 'infinity'::TIMESTAMP_S AS t", "SELECT 'infinity'::TIMESTAMP AS t", True),  # one value, two units
    ("SELECT DATE '9999-12-31' AS d", "SELECT 'infinity'::DATE AS d", False),  # not a finite date
    ("SELECT 'infinity'::DATE AS d", "SELECT '-infinity'::DATE AS d", False),
    (f"SELECT d, ts FROM ({INFINITE}) ORDER BY d", f"SELECT d, ts FROM ({INFINITE}) ORDER BY d", True),
    (f"SELECT d, ts FROM ({INFINITE}) ORDER BY d DESC", f"SELECT d, ts FROM ({INFINITE}) ORDER BY d", False),
    (f"SELECT [d] AS ds FROM ({INFINITE})", f"SELECT [d] AS ds FROM ({INFINITE})", True),
])
def test_infinite_dates_are_compared_by_value_and_rendered(shop_grader: Any, pred: str, gold: str,
                                                           passed: bool) -> None:
    verdict = shop_grader.compare(pred, gold)
    assert verdict.passed is passed, verdict.explanation
    record = json.dumps(verdict.layers)  # the whole evidence serializes
    assert "OverflowError" not in record
    if "infinity'::DATE AS d" in gold and passed:
        assert verdict.layers["execution"]["preview"] == [["infinity"]]
    if "ORDER BY d DESC" in pred:
        assert verdict.failure_kind == "order_only"
        assert verdict.layers["execution"]["preview"][0] == ["infinity", "infinity"]
    if "9999" in pred:
        assert verdict.layers["compare"]["missing_rows"] == [["infinity"]]
        assert verdict.layers["compare"]["sidebyside"]["bird"] is False

