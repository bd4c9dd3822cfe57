"""Column policies: ``columns = "superset"`` and ``condition_cols`` match the gold's columns
among the prediction's by values (a bipartite assignment, names a tie-breaker), then check
the chosen mapping exactly; ``"exact"`` stays today's contract."""
from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_sqleval.core.cases import ComparePolicy
from pytest_sqleval.core.cases.result_files import INFERRED_KEY
from pytest_sqleval.core.grading.compare import Comparator, match_columns

CMP = Comparator(threads=1)
BAG = ComparePolicy(order_matters=False)
SUPERSET = ComparePolicy(order_matters=False, columns="superset")


def t(**cols: list[Any]) -> pa.Table:
    return pa.table(cols)


GOLD = t(id=[1, 2, 3], name=["a", "b", "c"])

# (name, gold, prediction, policy, match, reason)
NEAR_MISSES = [
    ("superset: an extra column passes", GOLD, t(id=[1, 2, 3], name=["a", "b", "c"], n=[9, 9, 9]), SUPERSET,
     True, "equal"),
    ("superset: columns in another order, extra first", GOLD, t(x=[0, 0, 0], name=["b", "c", "a"], id=[2, 3, 1]),
     SUPERSET, True, "equal"),
    ("superset: a missing gold column fails", GOLD, t(name=["a", "b", "c"]), SUPERSET, False, "arity_mismatch"),
    ("superset: a gold column whose values are nowhere fails", GOLD, t(name=["a", "b", "c"], x=[5, 6, 7]), SUPERSET,
     False, "values"),
    ("superset: the columns are there but the rows pair differently", GOLD, t(id=[1, 2, 3], name=["b", "a", "c"]),
     SUPERSET, False, "values"),
    ("superset: a row missing fails", GOLD, t(id=[1, 2], name=["a", "b"], x=[0, 0]), SUPERSET, False,
     "row_count"),
    ("exact: an extra column fails", GOLD, t(id=[1, 2, 3], name=["a", "b", "c"], n=[9, 9, 9]), BAG, False,
     "arity_mismatch"),
    ("condition_cols: only the named column must be found", GOLD, t(x=[7, 7, 7], label=["c", "a", "b"]),
     ComparePolicy(order_matters=False, condition_cols=(1,)), True, "equal"),
    ("condition_cols: the named column missing fails", GOLD, t(id=[1, 2, 3]),
     ComparePolicy(order_matters=False, condition_cols=(1,)), False, "type_mismatch"),
    ("condition_cols: a wrong value in a named column fails", GOLD, t(id=[1, 2, 3], name=["a", "b", "z"]),
     ComparePolicy(order_matters=False, condition_cols=(0, 1)), False, "values"),
    ("condition_cols: a wrong value in another column does not count", t(id=[1, 2], x=[5, 6]),
     t(id=[1, 2], x=[5, 7]), ComparePolicy(order_matters=False, condition_cols=(0,)), True, "equal"),
    ("duplicate-valued gold columns, each found", t(a=[1, 2, 3], b=[1, 2, 3]), t(z=[1, 2, 3], y=[1, 2, 3], q=[0, 0, 0]),
     SUPERSET, True, "equal"),
    ("same multisets, rows told apart by the other columns", t(k=["x", "y", "z"], a=[1, 2, 3], b=[3, 1, 2]),
     t(b=[1, 2, 3], a=[3, 1, 2], k=["x", "y", "z"]), SUPERSET, True, "equal"),
    ("same multiset twice, only one predicted: one missing", t(a=[1, 2], b=[2, 1]), t(a=[1, 2], c=[5, 5]), SUPERSET,
     False, "values"),
    ("numbers by value: integer gold, decimal and double prediction", t(n=[1, 2], m=[0.5, 1.5]),
     pa.table({"m": pa.array([decimal.Decimal("1.50"), decimal.Decimal("0.50")], pa.decimal128(10, 2)),
               "n": pa.array([2.0, 1.0]), "x": ["p", "q"]}), SUPERSET, True, "equal"),
    ("floats within tolerance", t(x=[0.1 + 0.2, 1.0]), t(y=["a", "b"], x=[1.0 + 1e-12, 0.3]), SUPERSET, True, "equal"),
    ("a date never matches its text", t(d=[dt.date(2020, 1, 2)]), t(d=["2020-01-02"], x=[1]), SUPERSET, False,
     "type_mismatch"),
    ("NULL is not the empty string", t(s=[None, "a"]), t(s=["", "a"], x=[1, 2]), SUPERSET, False, "values"),
]


@pytest.mark.parametrize(("gold", "pred", "policy", "match", "reason"), [c[1:] for c in NEAR_MISSES],
                         ids=[c[0] for c in NEAR_MISSES])
def test_column_policy_near_misses(gold: pa.Table, pred: pa.Table, policy: ComparePolicy, match: bool,
                                   reason: str) -> None:
    res = CMP.compare(gold, pred, policy)
    assert (res.match, res.reason) == (match, reason), res
    if policy.by_values:
        assert res.columns == policy.columns and res.column_mapping is not None


def test_names_break_ties_between_columns_of_the_same_values() -> None:
    gold = t(first=[1, 2], second=[1, 2])
    pred = t(second=[1, 2], other=[1, 2], first=[1, 2])
    mapping, candidates = match_columns(gold, pred, SUPERSET)
    assert mapping == [2, 0] and candidates == [[2, 0, 1], [0, 1, 2]]
    assert CMP.compare(gold, pred, SUPERSET).column_mapping == [2, 0]


def test_the_chosen_mapping_is_checked_exactly_and_rows_decide_between_look_alikes() -> None:
    """Two predicted columns hold the gold column's values; only one pairs with the others' rows."""
    gold = t(k=[1, 2, 3], v=[10, 20, 30])
    pred = t(v=[30, 10, 20], k=[1, 2, 3], w=[10, 20, 30])  # v by name, but w pairs with k
    res = CMP.compare(gold, pred, SUPERSET)
    assert res.match and res.column_mapping == [1, 2]


def test_a_file_golds_inferred_date_reads_a_predicted_text_date_as_a_date() -> None:
    field = pa.field("d", pa.date32(), metadata={INFERRED_KEY: b"1"})
    gold = pa.Table.from_arrays([pa.array([dt.date(2020, 1, 2)])], schema=pa.schema([field]))
    assert CMP.compare(gold, t(d=["2020-01-02"]), BAG).match
    assert not CMP.compare(gold, t(d=["2020-01-03"]), BAG).match
    declared = pa.table({"d": pa.array([dt.date(2020, 1, 2)])})  # a declared DATE is a DATE
    assert not CMP.compare(declared, t(d=["2020-01-02"]), BAG).match


def _table(draw: Any, rows: int, width: int) -> pa.Table:
    values = st.lists(st.integers(-3, 3) | st.none(), min_size=rows, max_size=rows)
    return pa.table({f"g{i}": pa.array(draw(values), pa.int64()) for i in range(width)})


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_permuted_columns_with_copies_match_under_superset_and_never_under_exact(data: st.DataObject) -> None:
    rows = data.draw(st.integers(1, 6))
    width = data.draw(st.integers(1, 5))
    gold = _table(data.draw, rows, width)
    extra = data.draw(st.lists(st.integers(0, width - 1), min_size=1, max_size=3))  # copies of gold columns
    order = data.draw(st.permutations(list(range(width)) + [-1 - k for k in range(len(extra))]))
    row_order = data.draw(st.permutations(range(rows)))
    columns = [gold.column(i if i >= 0 else extra[-1 - i]).take(pa.array(row_order)) for i in order]
    named = data.draw(st.booleans())  # names that say nothing, or the gold's (copies named alike)
    names = [f"p{k}" if not named else gold.column_names[i if i >= 0 else extra[-1 - i]] for k, i in enumerate(order)]
    pred = pa.table(columns, names=names)
    assert CMP.compare(gold, pred, SUPERSET).match
    assert not CMP.compare(gold, pred, BAG).match  # extra columns: never under exact
    keep = data.draw(st.lists(st.integers(0, width - 1), min_size=1, max_size=width, unique=True))
    assert CMP.compare(gold, pred, ComparePolicy(order_matters=False, condition_cols=tuple(keep))).match


def test_superset_through_a_tie_group_accepts_any_valid_top_k_with_extra_columns() -> None:
    from pytest_sqleval.core.grading.compare import GID_COLUMN
    gold = pa.table({"name": ["a", "b"], "n": [3, 2], GID_COLUMN: pa.array([1, 2], pa.int64())})
    group = pa.table({"name": ["b", "c"], "n": [2, 2]})  # b and c tie on n: either is a valid second row
    policy = ComparePolicy(order_matters=True, sort_keys=(1,), columns="superset")
    pred = t(extra=[0, 0], n=[3, 2], name=["a", "c"])
    res = CMP.compare_topk(gold, group, 1, pred, policy)
    assert res.match and res.column_mapping == [2, 1] and res.tie_group is not None and res.tie_group["tie_only"]
