"""Small results are matched without the general path's fixed costs (``compare.small_match``),
and their mismatches of values or row count found there too (``compare.small_compare``), and
the evidence is the general path's to the last field, on random small tables (kinds,
retyped columns, NULLs, floats with noise, NaN, -0.0, duplicates, ordered and not)."""
from __future__ import annotations

import decimal
import json
from dataclasses import replace

import pyarrow as pa
import pytest
from hypothesis import given, settings

from pytest_sqleval.core.comparison import ComparePolicy
from pytest_sqleval.core.grading import compare as C
from pytest_sqleval.core.grading.compare import Comparator, CompareSpec
from tests.core.grading.test_compare_paths import PROPS, tables


@pytest.fixture(scope="module")
def cmp() -> Comparator:
    return Comparator(threads=1)


def _general(cmp: Comparator, gold: pa.Table, pred: pa.Table, spec: CompareSpec) -> str:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(C, "small_match", lambda *a: None)
        mp.setattr(C, "small_compare", lambda *a: None)
        mp.setattr(C, "small_same_bag", lambda *a: None)
        return _text(cmp.compare(gold, pred, spec))


def _text(res: C.CompareResult) -> str:
    """Every field of a result, as text (a NaN in a row equals itself here)."""
    return json.dumps(res.to_dict(), sort_keys=True, default=str)

def _small_mismatch_agrees(cmp: Comparator, gold: pa.Table, pred: pa.Table, spec: ComparePolicy) -> str | None:
    """The reason of the small path's mismatch of ``gold`` and ``pred``, after checking it is
    the general path's inner comparison to the last field (evidence and all); None if the
    small path decides no mismatch here."""
    coerced = C.coerce_to_file_gold(gold, pred, cmp._cast)
    inner = C.small_compare(gold, coerced, spec)
    if inner is None or inner.match:
        return None
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(C, "small_compare", lambda *a: None)
        mp.setattr(C, "small_same_bag", lambda *a: None)
        assert _text(inner) == _text(cmp._small_first(gold, coerced, spec))
    return inner.reason


def test_the_small_path_gives_the_general_paths_result(cmp: Comparator) -> None:
    decided: list[bool] = []
    decimals: list[bool] = []  # decided with a decimal column (of the gold's or the prediction's)
    mismatches: list[str] = []  # the reasons of the mismatches decided on the small path

    @settings(PROPS, max_examples=300, derandomize=True)  # the floors below count examples: 150 left one at 4
    @given(case=tables())
    def agree(case: tuple) -> None:
        gold, pred, spec = case
        for column_order in ("position", "any"):
            s = replace(spec, column_order=column_order)
            fast = C.small_match(gold, pred, s)
            decided.append(fast is not None)
            decimals.append(fast is not None and any(pa.types.is_decimal(t)
                                                     for t in gold.schema.types + pred.schema.types))
            general = _general(cmp, gold, pred, s)
            assert _text(cmp.compare(gold, pred, s)) == general, (gold.to_pydict(), pred.to_pydict(), s)
            if fast is not None:
                assert fast.match and _text(fast) == general
            reason = _small_mismatch_agrees(cmp, gold, pred, s)
            if reason is not None:
                mismatches.append(reason)
    agree()
    assert sum(decided) >= 20, "the small path decided too few cases: the general path was compared with itself"
    assert sum(decimals) >= 10, "too few decimal results decided on the small path"
    assert len(mismatches) >= 20, f"too few mismatches decided on the small path: {mismatches}"


def test_a_small_mismatch_is_the_general_paths_to_the_last_field(cmp: Comparator) -> None:
    """Exact kinds only (no float, whose tolerance leaves a mismatch to the general path):
    values changed, NULLed, rows dropped and duplicated, columns retyped; the whole
    comparison (the other column rule's verdict included) and the inner one the same."""
    reasons: list[str] = []

    @settings(PROPS, max_examples=300, derandomize=True)
    @given(case=tables(kinds_from=("int", "str", "date", "bool", "dec")))
    def agree(case: tuple) -> None:
        gold, pred, spec = case
        for column_order in ("position", "any"):
            s = replace(spec, column_order=column_order)
            assert _text(cmp.compare(gold, pred, s)) == _general(cmp, gold, pred, s), (gold.to_pydict(),
                                                                                       pred.to_pydict(), s)
            reason = _small_mismatch_agrees(cmp, gold, pred, s)
            if reason is not None:
                reasons.append(reason)
    agree()
    assert reasons.count("values") >= 30 and reasons.count("row_count") >= 30, reasons


def test_a_shuffled_five_row_result_is_matched_on_the_small_path(cmp: Comparator) -> None:
    gold = pa.table({"id": [1, 2, 3, 3, 5], "x": [0.5, None, 2.0, 2.0, -0.0], "s": ["a", "b", None, None, "é"],
                     "__sqleval_gid": pa.array([1, 2, 3, 3, 4], pa.int64())})
    pred = pa.table({"a": [3, 5, 1, 3, 2], "b": [2, 0.0, 0.5, 2, None], "c": [None, "é", "a", None, "b"]})
    fast = C.small_match(gold, pred, CompareSpec())
    assert fast is not None and fast.match
    assert _text(fast) == _general(cmp, gold, pred, CompareSpec())
    assert C.small_match(gold, pred, CompareSpec(ordered=True)) is None  # out of order: the general path decides
    wrong = pred.set_column(2, "c", pa.array([None, "e", "a", None, "b"]))
    assert C.small_match(gold, wrong, CompareSpec()) is None
    assert not cmp.compare(gold, wrong, CompareSpec()).match
    as_text = pred.set_column(0, "a", pa.array(["3", "5", "1", "3", "2"]))
    assert C.small_match(gold, as_text, CompareSpec()) is None  # a string never equals a number


def test_decimal_results_are_matched_on_the_small_path(cmp: Comparator) -> None:
    """Sums and averages of money arrive as decimals: matched on the small path at any scale
    and beside integers (exactly, as the general path's ``_exact``), with its evidence."""
    gold = pa.table({"name": ["a", "b", "c"], "total": pa.array([decimal.Decimal("1.50"), None,
                                                                decimal.Decimal("1999000.00")], pa.decimal128(38, 2))})
    finer = pa.table({"n": ["c", "a", "b"], "t": pa.array([decimal.Decimal("1999000.0000"), decimal.Decimal("1.5000"),
                                                          None], pa.decimal128(20, 4))})
    for spec in (CompareSpec(), CompareSpec(column_order="any")):
        fast = C.small_match(gold, finer, spec)
        assert fast is not None and fast.match and _text(fast) == _general(cmp, gold, finer, spec)
    whole = pa.table({"n": [2, 3]}), pa.table({"n": pa.array([decimal.Decimal("3"), decimal.Decimal("2.000")],
                                                             pa.decimal128(10, 3))})
    fast = C.small_match(*whole, CompareSpec())
    assert fast is not None and _text(fast) == _general(cmp, *whole, CompareSpec())
    cent = finer.set_column(1, "t", pa.array([decimal.Decimal("1999000.0100"), decimal.Decimal("1.5"), None],
                                             pa.decimal128(20, 4)))
    assert C.small_match(gold, cent, CompareSpec()) is None and not cmp.compare(gold, cent, CompareSpec()).match
    as_float = finer.set_column(1, "t", pa.array([1999000.0, 1.5, None], pa.float64()))
    assert C.small_match(gold, as_float, CompareSpec()) is None  # a double beside a decimal: the general path's
    assert cmp.compare(gold, as_float, CompareSpec()).match


def test_a_small_mismatch_by_column_order_is_found_on_python_values(cmp: Comparator) -> None:
    """Columns swapped (two of one kind, NULLs among them): by position a mismatch of values,
    whose record says a bijection would match; under ``any`` the match through it. The
    candidate columns are found on Python values (``small_same_bag``); the results are the
    general path's, field for field."""
    gold = pa.table({"a": [1, 2, None, 2], "b": [2, None, 1, 2], "s": ["x", "y", None, "x"],
                     "d": pa.array([decimal.Decimal("1.50"), None, decimal.Decimal("2"), decimal.Decimal("0")],
                                   pa.decimal128(38, 2))})
    pred = pa.table({"b": [2, None, 1, 2], "a": [1, 2, None, 2], "s": ["x", "y", None, "x"],
                     "d": pa.array([decimal.Decimal("1.5"), None, decimal.Decimal("2.000"), decimal.Decimal("0")],
                                   pa.decimal128(20, 3))})
    seen: list[bool | None] = []
    real = C.small_same_bag
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(C, "small_same_bag", lambda g, p: seen.append(real(g, p)) or seen[-1])
        by_position = cmp.compare(gold, pred, CompareSpec())
        any_order = cmp.compare(gold, pred, CompareSpec(column_order="any"))
    assert seen and None not in seen and True in seen and False in seen
    assert not by_position.match and by_position.reason == "values"
    assert by_position.other_column_order == {"column_order": "any", "match": True, "column_permutation": [1, 0, 2, 3]}
    assert any_order.match and any_order.column_permutation == [1, 0, 2, 3]
    assert _text(by_position) == _general(cmp, gold, pred, CompareSpec())
    assert _text(any_order) == _general(cmp, gold, pred, CompareSpec(column_order="any"))
    fewer_nulls = pred.set_column(0, "b", pa.array([2, 0, 1, 2]))  # a has a NULL, b none: no partner for a
    assert cmp.compare(gold, fewer_nulls, CompareSpec()).other_column_order is None
    assert _text(cmp.compare(gold, fewer_nulls, CompareSpec())) == _general(cmp, gold, fewer_nulls, CompareSpec())
