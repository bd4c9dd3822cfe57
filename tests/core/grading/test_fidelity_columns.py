"""``column_order = "position" | "any"``: a suite's or a case's choice of column rule; our
suites compare columns by position, the spider layout by any bijection (Spider's rule),
and a verdict records the other rule's verdict when it differs."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any, Callable

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pytest_sqleval.core.grading.compare import Comparator, CompareSpec
from tests.sqleval_helpers import read_results, sqleval_ini  # noqa: F401  (fixture)

CMP = Comparator(threads=1)
ANY = CompareSpec(column_order="any")
GOLD = pa.table({"name": ["Ann", "Bo", "Cy"], "n": [3, 1, 1], "share": [0.6, 0.2, 0.2]})


def _pred(**cols: list[Any]) -> pa.Table:
    return pa.table(cols)


@pytest.mark.parametrize("pred, spec, match, other", [
    (_pred(n=[3, 1, 1], name=["Ann", "Bo", "Cy"], share=[0.6, 0.2, 0.2]), ANY, True, False),
    (_pred(n=[3, 1, 1], name=["Ann", "Bo", "Cy"], share=[0.6, 0.2, 0.2]), CompareSpec(), False, True),
    (_pred(share=[0.6, 0.2, 0.2], n=[3, 1, 1], name=["Ann", "Bo", "Cy"]), ANY, True, False),
    # each column holds the gold's values, but not row by row: no bijection matches
    (_pred(name=["Ann", "Bo", "Cy"], n=[1, 1, 3], share=[0.6, 0.2, 0.2]), ANY, False, None),
    (_pred(name=["Ann", "Bo", "Cy"], n=[3, 1, 1]), ANY, False, None),  # arity still counts
    (_pred(name=["Ann", "Bo", "Cy"], n=[3, 1, 1], share=[0.6, 0.2, 0.2]), ANY, True, None),  # identity
    (_pred(n=[3, 1, 1], name=["Ann", "Bo", "Cy"], share=[0.6000000001, 0.2, 0.2]), ANY, True, False),  # tolerance
], ids=["any-swapped", "position-swapped", "any-rotated", "any-rows-differ", "any-arity", "any-identity",
        "any-within-tolerance"])
def test_column_bijection_near_misses(pred: pa.Table, spec: CompareSpec, match: bool, other: bool | None) -> None:
    res = CMP.compare(GOLD, pred, spec)
    assert res.match is match and res.column_order == spec.column_order
    assert (res.other_column_order or {}).get("match") == other
    if match and other is False:  # passed only thanks to the bijection: which one is recorded
        assert res.column_permutation is not None
        assert [pred.column_names[j] for j in res.column_permutation] == list(GOLD.column_names)


@st.composite
def permuted(draw: st.DrawFn) -> tuple[pa.Table, list[int], pa.Table]:
    """A gold of 2 to 4 columns (integers, text, doubles), its rows shuffled, its columns permuted."""
    n_cols, n_rows = draw(st.integers(2, 4)), draw(st.integers(1, 6))
    kinds = draw(st.lists(st.sampled_from([st.integers(0, 3), st.sampled_from("ab"), st.sampled_from([0.5, 2.0])]),
                          min_size=n_cols, max_size=n_cols))
    gold = pa.table({f"c{i}": [draw(k) for _ in range(n_rows)] for i, k in enumerate(kinds)})
    perm = draw(st.permutations(range(n_cols)))
    order = draw(st.permutations(range(n_rows)))
    pred = gold.take(pa.array(order)).select(perm)
    return gold, list(perm), pred


_INT_AND_DOUBLE = pa.table({"c0": pa.array([2], pa.int64()), "c1": pa.array([2.0])})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(permuted())
@example((_INT_AND_DOUBLE, [1, 0], _INT_AND_DOUBLE.select([1, 0])))  # 2 and 2.0 swapped: equal in place too
def test_any_accepts_every_permutation_and_position_records_it(case: tuple[pa.Table, list[int], pa.Table]) -> None:
    gold, perm, pred = case
    assert CMP.compare(gold, pred, ANY).match
    by_position = CMP.compare(gold, pred, CompareSpec())
    # the same rows column by column, as the contract compares them: a number by its value (2 equals 2.0)
    same_in_place = Counter(zip(*(c.to_pylist() for c in pred.columns))) == Counter(zip(*(c.to_pylist()
                                                                                         for c in gold.columns)))
    assert by_position.match is same_in_place
    if not by_position.match:  # the other rule's verdict is recorded: a bijection matches
        assert by_position.other_column_order is not None and by_position.other_column_order["match"] is True


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(permuted(), st.data())
def test_any_still_fails_a_wrong_value(case: tuple[pa.Table, list[int], pa.Table], data: st.DataObject) -> None:
    gold, _, pred = case
    col = data.draw(st.integers(0, pred.num_columns - 1), label="column")
    values = pred.column(col).to_pylist()
    values[0] = {int: 99, str: "zz", float: 7.75}[type(values[0])]
    wrong = pred.set_column(col, pred.column_names[col], pa.array(values, pred.schema.field(col).type))
    assert not CMP.compare(gold, wrong, ANY).match


def test_any_keeps_the_gold_order_after_permuting() -> None:
    gold = pa.table({"name": ["Ann", "Bo", "Cy"], "n": [3, 2, 1]})
    ok = CMP.compare(gold, _pred(n=[3, 2, 1], name=["Ann", "Bo", "Cy"]), CompareSpec(True, [1], column_order="any"))
    late = CMP.compare(gold, _pred(n=[1, 2, 3], name=["Cy", "Bo", "Ann"]), CompareSpec(True, [1], column_order="any"))
    assert ok.match and not late.match


# -- the suite's and the case's option ------------------------------------------------------
SWAPPED = {"id": "q1", "question": "Customers per region?",
           "gold_sql": "SELECT region, count(*) AS n FROM customers GROUP BY region"}
PRED = "SELECT count(*) AS n, region FROM customers GROUP BY region"


def _run(pytester: pytest.Pytester, make_suite: Callable[..., Path], case: dict[str, Any], extra: str = "") -> Any:
    make_suite([case], manifest_extra=extra)
    (pytester.path / "pred.jsonl").write_text(json.dumps({"id": "q1", "sql": PRED}) + "\n")
    return pytester.runpytest("suite", "--sqleval-backend=predictions:pred.jsonl", "-p", "no:cacheprovider")


def test_our_suites_compare_columns_by_position_and_record_the_bijection(pytester: pytest.Pytester,
                                                                         make_suite: Callable[..., Path]) -> None:
    _run(pytester, make_suite, SWAPPED).assert_outcomes(failed=1)
    compare = read_results(pytester.path)[0]["compare"]
    assert compare["column_order"] == "position"
    assert compare["other_column_order"] == {"column_order": "any", "match": True, "column_permutation": [1, 0]}


@pytest.mark.parametrize("case, extra", [
    (SWAPPED, '[compare]\ncolumn_order = "any"\n'),
    ({**SWAPPED, "compare": {"column_order": "any"}}, ""),
], ids=["suite", "case"])
def test_column_order_any_from_the_suite_or_the_case(pytester: pytest.Pytester, make_suite: Callable[..., Path],
                                                     case: dict[str, Any], extra: str) -> None:
    _run(pytester, make_suite, case, extra).assert_outcomes(passed=1)
    compare = read_results(pytester.path)[0]["compare"]
    assert compare["column_order"] == "any" and compare["column_permutation"] == [1, 0]
    assert compare["other_column_order"]["column_order"] == "position"
    assert compare["other_column_order"]["match"] is False


def test_a_case_may_ask_for_position_in_an_any_suite(pytester: pytest.Pytester, make_suite: Callable[..., Path]) -> None:
    case = {**SWAPPED, "compare": {"column_order": "position"}}
    _run(pytester, make_suite, case, '[compare]\ncolumn_order = "any"\n').assert_outcomes(failed=1)


@pytest.mark.parametrize("case, extra, message", [
    (SWAPPED, '[compare]\ncolumn_order = "names"\n',
     "sqleval.toml:7: field 'compare.column_order': unknown column order 'names'"),
    ({**SWAPPED, "compare": {"column_order": "by_name"}}, "",
     "field 'compare.column_order': expected \"position\" or \"any\", got \"by_name\""),
], ids=["manifest", "case"])
def test_an_unknown_column_order_is_one_clear_error(pytester: pytest.Pytester, make_suite: Callable[..., Path],
                                                    case: dict[str, Any], extra: str, message: str) -> None:
    out = _run(pytester, make_suite, case, extra).stdout.str()
    assert message in out and "Traceback" not in out


# -- a pytest run's record of a LIMIT through ties (the grading itself: test_fidelity_ties.py) --
def test_the_record_says_the_gold_limit_cuts_a_tie_group(pytester: pytest.Pytester,
                                                         make_suite: Callable[..., Path]) -> None:
    make_suite([{"id": "q1", "question": "Three customers of the first region?",
                 "gold_sql": "SELECT id FROM customers ORDER BY region LIMIT 3"}])
    (pytester.path / "pred.jsonl").write_text(
        '{"id": "q1", "sql": "SELECT id FROM customers ORDER BY region, id DESC LIMIT 3"}\n')
    pytester.runpytest("suite", "--sqleval-backend=predictions:pred.jsonl", "-p", "no:cacheprovider").assert_outcomes(
        passed=1)
    record = read_results(pytester.path)[0]
    assert record["gold"]["ties"] == {"limit": 3, "before": 0, "group_rows": 10, "candidates": 40}
    assert record["compare"]["tie_group"]["chosen"] is True
