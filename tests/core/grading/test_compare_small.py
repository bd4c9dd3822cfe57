"""Small results are matched without the general path's fixed costs (``compare.small_match``),
and their mismatches of values or row count and their matches within tolerance found there
too (``compare.small_compare``), and the evidence is the general path's to the last field,
on random small tables (kinds, retyped columns, NULLs, floats with noise at the tolerance's
edge, NaN, infinities, -0.0, decimals and integers beside floats, duplicates, ordered and not)."""
from __future__ import annotations

import decimal
import json
import math
import random
from collections.abc import Iterator
from dataclasses import replace

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_sqleval.core.comparison import ComparePolicy
from pytest_sqleval.core.grading import compare as C
from pytest_sqleval.core.grading.compare import Comparator, CompareSpec
from tests.core.grading.test_compare_paths import FLOATS, PROPS, tables


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

def _small_agrees(cmp: Comparator, gold: pa.Table, pred: pa.Table, spec: ComparePolicy) -> C.CompareResult | None:
    """The small path's comparison of ``gold`` and ``pred`` (``small_compare``), after checking
    it is the general path's to the last field, evidence and all: a mismatch as the inner
    comparison gives it, a match (exact or within tolerance) as the whole comparison does;
    None if the small path leaves it to the general path."""
    coerced = C.coerce_to_file_gold(gold, pred, cmp._cast)
    inner = C.small_compare(gold, coerced, spec)
    if inner is None:
        return None
    if inner.match:
        assert _text(inner) == _general(cmp, gold, pred, spec), (gold.to_pydict(), pred.to_pydict(), spec)
        return inner
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(C, "small_compare", lambda *a: None)
        mp.setattr(C, "small_same_bag", lambda *a: None)
        assert _text(inner) == _text(cmp._small_first(gold, coerced, spec)), (gold.to_pydict(), pred.to_pydict(), spec)
    return inner


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
            small = _small_agrees(cmp, gold, pred, s)
            if small is not None and not small.match:
                mismatches.append(small.reason)
    agree()
    assert sum(decided) >= 20, "the small path decided too few cases: the general path was compared with itself"
    assert sum(decimals) >= 10, "too few decimal results decided on the small path"
    assert len(mismatches) >= 20, f"too few mismatches decided on the small path: {mismatches}"


def _agreeing_specs(cmp: Comparator, gold: pa.Table, pred: pa.Table, spec: CompareSpec) -> Iterator[CompareSpec]:
    """``spec`` under each column rule, once the whole comparison under it is the general path's."""
    for column_order in ("position", "any"):
        s = replace(spec, column_order=column_order)
        assert _text(cmp.compare(gold, pred, s)) == _general(cmp, gold, pred, s), (gold.to_pydict(),
                                                                                   pred.to_pydict(), s)
        yield s


def test_a_small_mismatch_is_the_general_paths_to_the_last_field(cmp: Comparator) -> None:
    """Exact kinds only (floats: the next test): values changed, NULLed, rows dropped and
    duplicated, columns retyped; the whole comparison (the other column rule's verdict
    included) and the inner one the same."""
    reasons: list[str] = []

    @settings(PROPS, max_examples=300, derandomize=True)
    @given(case=tables(kinds_from=("int", "str", "date", "bool", "dec")))
    def agree(case: tuple) -> None:
        gold, pred, spec = case
        for s in _agreeing_specs(cmp, gold, pred, spec):
            small = _small_agrees(cmp, gold, pred, s)
            if small is not None and not small.match:
                reasons.append(small.reason)
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
        mp.setattr(C, "small_same_bag", lambda g, p, s: seen.append(real(g, p, s)) or seen[-1])
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


# -- floats: tolerance on the small path ---------------------------------------------------------
NEAR = [0.0, -0.0, 1e-9, -1e-9, 5e-10, 2e-9, 1e-12, 1.0, 1.5, 123456.789, -2.5, 1e15, 2.0**53, 1e300,
        math.inf, -math.inf, math.nan, None]
EDGE = [s * 1e-6 * (1 + e) for s in (1, -1) for e in (-1e-3, -1e-9, 0.0, 1e-9, 1e-3)]  # relative: at rel_tol's edge
STEPS = [s * d for s in (1, -1) for d in (5e-10, 1e-9, 1.0000001e-9, 2e-9)]  # absolute: at abs_tol's edge
POLICIES = [CompareSpec(), CompareSpec(float_rel_tol=0.0, float_abs_tol=0.0), CompareSpec(float_rel_tol=1e-3,
                                                                                          float_abs_tol=0.5)]


def _float_value() -> st.SearchStrategy[float | None]:
    return st.one_of(st.sampled_from(NEAR + FLOATS), st.floats(-1e6, 1e6, allow_nan=False))


@st.composite
def float_tables(draw: st.DrawFn) -> tuple[pa.Table, pa.Table, ComparePolicy]:
    """A gold with a float column (and up to two others: floats, integers, text, decimals),
    maybe a near twin of one of its rows (in the prediction too, or moved across the row
    it twins), and a prediction made from its rows by edits that
    land near the tolerance (relative and absolute noise at its edge), NaN, -0.0 for 0.0,
    NULLs, changes, drops, duplicates and shuffles; a float column retyped as a decimal or an integer on either side, or
    as float32; under the default tolerance, none, or a wide one; ordered or not."""
    others = {"int": (pa.int64(), st.one_of(st.none(), st.integers(-3, 3))),
              "str": (pa.string(), st.one_of(st.none(), st.sampled_from(["a", "b"]))),
              "dec": (pa.decimal128(38, 2), st.one_of(st.none(), st.sampled_from(
                  [decimal.Decimal(x) for x in ("0", "1.50", "-2.25", "1999000.01")])))}
    kinds = ["float"] + draw(st.lists(st.sampled_from(["float", "int", "str", "dec"]), max_size=2))
    kinds = draw(st.permutations(kinds))
    value = {k: others[k][1] for k in others} | {"float": _float_value()}
    n = draw(st.integers(1, 6))
    rows = [tuple(draw(value[k]) for k in kinds) for _ in range(n)]
    floats = [j for j, k in enumerate(kinds) if k == "float"]
    pred = list(rows)
    policy = draw(st.sampled_from(POLICIES))
    if draw(st.sampled_from([True, True, False])):  # a row and its near twin, a float a little off (over half the tolerance) ...
        base, j = list(draw(st.sampled_from(rows))), draw(st.sampled_from(floats))
        base[j] = draw(st.sampled_from([1.0, -2.5, 123456.789, 1e15]))
        e = draw(st.sampled_from([0.6, -0.6])) * (policy.float_rel_tol or 1e-6)
        twin, mirror = list(base), list(base)
        twin[j], mirror[j] = base[j] * (1 + e), base[j] * (1 - e)
        at = draw(st.integers(0, len(rows)))
        rows[at:at] = [tuple(base), tuple(twin)]
        # ... and in the prediction as they are, or the twin across the row it twins: then only a matching
        # of all the rows pairs them (the twin with that row, the row with the mirror)
        pred[at:at] = [tuple(base), tuple(mirror if draw(st.sampled_from([True, True, False])) else twin)]
    for _ in range(draw(st.integers(0, 3))):
        edit = draw(st.sampled_from(["edge", "edge", "step", "step", "nan", "negzero", "null", "change", "drop", "dup",
                                     "shuffle"]))
        if not pred:
            break
        i, j = draw(st.integers(0, len(pred) - 1)), draw(st.sampled_from(floats))
        row = list(pred[i])
        v = row[j]
        if edit == "edge" and isinstance(v, float):
            row[j] = v * (1 + draw(st.sampled_from(EDGE)))
        elif edit == "step" and isinstance(v, float):
            row[j] = v + draw(st.sampled_from(STEPS))
        elif edit == "nan":
            row[j] = math.nan
        elif edit == "negzero" and v == 0:
            row[j] = -0.0 if math.copysign(1, v) > 0 else 0.0
        elif edit == "null":
            row[j] = None
        elif edit == "change":
            row[j] = draw(_float_value())
        elif edit == "drop":
            pred.pop(i)
            continue
        elif edit == "dup":
            pred.append(pred[i])
            continue
        elif edit == "shuffle":
            pred = draw(st.permutations(pred))
            continue
        pred[i] = tuple(row)
    gold_cols, pred_cols = {}, {}
    for j, k in enumerate(kinds):
        g, p = [r[j] for r in rows], [r[j] for r in pred]
        gt = pt = others[k][0] if k != "float" else pa.float64()
        if k == "float":
            retype = draw(st.sampled_from(["none", "none", "gold_dec", "pred_dec", "pred_int", "gold_int", "pred_f32"]))
            if retype in ("gold_dec", "pred_dec"):
                side = g if retype == "gold_dec" else p
                if all(v is None or (math.isfinite(v) and abs(v) < 1e15) for v in side):
                    gt, pt = (pa.decimal128(38, 10), pt) if retype == "gold_dec" else (gt, pa.decimal128(38, 10))
                    side[:] = [None if v is None else decimal.Decimal(v).quantize(decimal.Decimal("1e-10"))
                               for v in side]
            elif retype in ("gold_int", "pred_int"):
                side = g if retype == "gold_int" else p
                if all(v is None or (math.isfinite(v) and v == int(v) and abs(v) < 2**62) for v in side):
                    side[:] = [None if v is None else int(v) for v in side]
                    gt, pt = (pa.int64(), pt) if retype == "gold_int" else (gt, pa.int64())
            elif retype == "pred_f32":
                pt = pa.float32()
        gold_cols[f"g{j}"], pred_cols[f"p{j}"] = pa.array(g, gt), pa.array(p, pt)
    if draw(st.booleans()):
        return pa.table(gold_cols), pa.table(pred_cols), replace(policy, order_matters=True)
    return pa.table(gold_cols), pa.table(pred_cols), policy


def test_a_small_float_result_is_the_general_paths_to_the_last_field(cmp: Comparator) -> None:
    """Floats within tolerance (and not) are decided on Python values with the general
    path's own float equality (``within_tolerance``) and steps (``_tolerant``): the same
    ``CompareResult`` as the general path, evidence included, whole and inner, near the
    tolerance's edge, with NaN, infinities, -0.0, NULLs, and decimals and integers beside floats."""
    seen: dict[str, int] = {"matching": 0, "within": 0, "values": 0, "row_count": 0, "decimal": 0, "nan": 0, "equal": 0}

    matched: list[bool] = []  # the small path's matching of all rows found a pairing (``_assignment``)
    real = C._assignment

    @settings(PROPS, max_examples=400, derandomize=True)
    @given(case=float_tables())
    def agree(case: tuple) -> None:
        gold, pred, spec = case
        for s in _agreeing_specs(cmp, gold, pred, spec):
            matched.clear()
            small = _small_agrees(cmp, gold, pred, s)
            if small is None:
                continue
            seen["within" if small.within_tolerance else small.reason] += 1
            seen["matching"] += bool(matched)
            types = gold.schema.types + pred.schema.types
            seen["decimal"] += any(map(pa.types.is_decimal, types)) and any(map(pa.types.is_floating, types))
            seen["nan"] += any(v != v for c in gold.columns + pred.columns for v in c.to_pylist() if v is not None)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(C, "_assignment", lambda close: matched.append(real(close) is not None) or real(close))
        agree()
    print(seen)
    assert min(seen.values()) >= 15, seen


def test_within_tolerance_is_one_definition(cmp: Comparator) -> None:
    """The small path's float equality is the general path's own function: both paths call
    ``within_tolerance`` and give the same answers at the edges of both tolerances."""
    rnd = random.Random(0)
    xs = [rnd.choice(NEAR[:-1]) for _ in range(300)]
    ys = [x if not isinstance(x, float) or not math.isfinite(x) else
          x * (1 + rnd.choice(EDGE)) if rnd.random() < 0.5 else x + rnd.choice(STEPS) for x in xs]
    for spec in POLICIES:
        column = C._encode(pa.chunked_array([pa.array(xs, pa.float64())]),
                           pa.chunked_array([pa.array(ys, pa.float64())]), "float", "float", cmp._cast)
        general = column.close(np.arange(len(xs)), np.arange(len(xs), 2 * len(xs)), spec)
        assert general.tolist() == C._small_close(xs, ys, spec).tolist()
        assert 0 < general.sum() < len(xs) or spec.float_abs_tol == 0.5  # the wide tolerance takes every pair
    gold, pred = pa.table({"x": [1.0, 2.0]}), pa.table({"x": [2.0 * (1 + 5e-7), 1.0]})
    calls: list[int] = []
    real = C.within_tolerance
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(C, "within_tolerance", lambda *a, **k: calls.append(1) or real(*a, **k))
        small = C.small_compare(gold, pred, CompareSpec())
        assert small is not None and small.match and small.within_tolerance and calls
        calls.clear()
        assert _text(cmp._compare(gold, pred, CompareSpec())) == _text(small) and calls


@pytest.mark.parametrize("rows", [3, C.PREVIEW_ROWS + 3])  # the whole result (values read once), and its first rows
def test_preview_after_a_long_text_column_shows_the_next_columns_own_values(rows: int) -> None:
    """A report's preview cuts long text in Arrow; the columns after it are their own values
    (a cut column's text once stood in for the next column's: an IndexError in the engine
    process that took the variants' distillation down with it)."""
    long = "x" * (C.PREVIEW_CHARS + 10)
    table = pa.table({"note": [long] * rows, "n": list(range(rows)), "name": [f"r{i}" for i in range(rows)]})
    C.table_values(table)  # as the comparison would have read it first
    preview = C.preview_rows(table)
    shown = min(rows, C.PREVIEW_ROWS)
    assert [r[1:] for r in preview] == [[i, f"r{i}"] for i in range(shown)]
    assert all(r[0].startswith("x" * C.PREVIEW_CHARS) and "truncated" in r[0] for r in preview)
