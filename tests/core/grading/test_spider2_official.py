"""Spider 2.0's official comparison (``evaluate.py``'s ``compare_pandas_table`` and
``compare_multi_pandas_table``) reproduced beside our strict one, case by case on the
spider2_lite fixture: where they agree, and where they differ and why."""
from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_sqleval.core.cases import get_layout
from pytest_sqleval.core.engines import open_sandbox
from pytest_sqleval.core.engines.base import Limits
from pytest_sqleval.core.grading.compare import Comparator, CompareSpec
from pytest_sqleval.core.grading.peers import (spider2_csv_frame, spider2_equal, spider2_frame, spider2_match,
                                         spider2_reason, spider2_tables)

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "suites" / "spider2_lite"
DBS = FIXTURE / "resource" / "databases" / "spider2-localdb"
DELIVERED = ("FROM orders AS o JOIN customers AS c ON c.customer_id = o.customer_id WHERE o.status = 'delivered' "
             "GROUP BY c.city")
AVERAGES = "FROM students AS s JOIN scores AS sc ON sc.student_id = s.student_id GROUP BY s.name"
TIES_CSV = "grade,name\n10,Ivo\n11,Jun\n11,Kim\n"

#: (case, its strict gold query and how we order it (None: a bag; a tuple: ordered, ties on those keys),
#:  the prediction, Spider 2.0's verdict (the gold it matched, or None), ours, and why they differ)
CASES = [
    ("local001", f"SELECT c.city, ROUND(SUM(o.amount), 2) {DELIVERED}", None,
     f"SELECT c.city, ROUND(SUM(o.amount), 2) AS total {DELIVERED} ORDER BY 2", 0, True),  # agree
    ("local001", f"SELECT c.city, ROUND(SUM(o.amount), 2) {DELIVERED}", None,
     f"SELECT c.city, COUNT(*), ROUND(SUM(o.amount), 2) {DELIVERED}", 0, False),  # extra column: superset
    ("local001", f"SELECT c.city, ROUND(SUM(o.amount), 2) {DELIVERED}", None,
     f"SELECT ROUND(SUM(o.amount), 2), c.city {DELIVERED}", 0, False),  # columns found by values, not position
    ("local001", f"SELECT c.city, ROUND(SUM(o.amount), 2) {DELIVERED}", None,
     "SELECT 'Lisbon', 30.0 UNION ALL SELECT 'Porto', 42.75", 0, False),  # each column sorted alone: rows mispaired
    ("local001", f"SELECT c.city, ROUND(SUM(o.amount), 2) {DELIVERED}", None,
     "SELECT c.city, ROUND(SUM(o.amount), 2) FROM orders AS o JOIN customers AS c "
     "ON c.customer_id = o.customer_id GROUP BY c.city", None, False),  # canceled order counted: both fail
    ("local002", "SELECT customer_id, COUNT(*) FROM orders WHERE status = 'delivered' GROUP BY customer_id "
                 "HAVING COUNT(*) > 1", None,
     "SELECT c.name, COUNT(*) FROM orders AS o JOIN customers AS c ON c.customer_id = o.customer_id "
     "WHERE o.status = 'delivered' GROUP BY c.name HAVING COUNT(*) > 1", 1, False),  # the _b alternative
    ("local002", "SELECT customer_id, COUNT(*) FROM orders WHERE status = 'delivered' GROUP BY customer_id "
                 "HAVING COUNT(*) > 1", None,
     "SELECT customer_id FROM orders WHERE status = 'delivered' GROUP BY customer_id HAVING COUNT(*) > 1",
     None, False),  # _a needs its count column too ([0, 1]), _b the names: both fail
    ("local003", f"SELECT s.name, AVG(sc.score) {AVERAGES}", None,
     f"SELECT s.name, ROUND(AVG(sc.score), 2) {AVERAGES}", 0, False),  # 83.33 within 0.01 of 83.3333
    ("local003", f"SELECT s.name, AVG(sc.score) {AVERAGES}", None,
     f"SELECT s.name, AVG(sc.score) {AVERAGES}", 0, True),  # agree: the gold CSV's 4 places are within 0.01
    ("local003", f"SELECT s.name, AVG(sc.score) {AVERAGES}", None,
     "SELECT AVG(score) FROM scores GROUP BY student_id", 0, False),  # condition_cols [1]: the averages alone
    ("local004", "SELECT order_id, amount FROM orders ORDER BY order_id", (0,),
     "SELECT order_id, COALESCE(amount, 0) FROM orders ORDER BY order_id", 0, False),  # NULL counts as 0
    ("local004", "SELECT order_id, amount FROM orders ORDER BY order_id", (0,),
     "SELECT order_id, CAST(amount AS TEXT) FROM orders ORDER BY order_id", 0, False),  # '10.5' read back as 10.5
    ("local004", "SELECT order_id, amount FROM orders ORDER BY order_id", (0,),
     "SELECT order_id, amount FROM orders ORDER BY order_id DESC", None, False),  # ignore_order false: both fail
    ("local004", "SELECT order_id, amount FROM orders ORDER BY order_id", (0,),
     "SELECT order_id, amount FROM orders ORDER BY order_id", 0, True),  # agree
    ("ties", "SELECT grade, name FROM students ORDER BY grade", (0,),
     "SELECT grade, name FROM students ORDER BY grade, name DESC", None, True),  # ours: ties compare as a bag
]


@pytest.fixture(scope="module")
def standards() -> dict[str, dict[str, Any]]:
    """Each fixture case's golds and rules as the spider2-lite layout reads them."""
    layout = get_layout("spider2-lite")
    assert layout is not None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = {raw["id"]: raw for _, raw in layout.records(FIXTURE / "spider2-lite.jsonl")}
    out["ties"] = {"db": "school", "gold_results": [TIES_CSV], "spider2_condition_cols": [[]],
                   "spider2_ignore_order": False}
    return out


@pytest.fixture(scope="module")
def run() -> Iterator[Any]:
    boxes: dict[str, Any] = {}

    def execute(db: str, sql: str) -> pa.Table:
        if db not in boxes:
            boxes[db] = open_sandbox(DBS / f"{db}.sqlite", Limits())
        outcome = boxes[db].run(sql)
        assert outcome.error is None, outcome.error
        return outcome.table
    yield execute
    for box in boxes.values():
        box.close()


@pytest.mark.parametrize(("case", "strict_gold", "keys", "pred", "official", "ours"), CASES)
def test_official_and_strict_verdicts_case_by_case(standards: dict[str, dict[str, Any]], run: Any, case: str,
                                                   strict_gold: str, keys: tuple[int, ...] | None, pred: str,
                                                   official: int | None, ours: bool) -> None:
    std = standards[case]
    pred_table = run(std["db"], pred)
    paths = [g["path"] if isinstance(g, dict) else g for g in std["gold_results"]]  # a CSV's own condition_cols
    golds = [g if g.startswith("grade,") else (FIXTURE / g).read_text() for g in paths]
    assert spider2_tables(golds, pred_table, std["spider2_condition_cols"], std["spider2_ignore_order"]) == official
    spec = CompareSpec(ordered=keys is not None, sort_keys=keys)
    assert Comparator(threads=1).compare(run(std["db"], strict_gold), pred_table, spec).match is ours


def test_a_gold_query_is_compared_after_its_csv_round_trip(run: Any) -> None:
    gold = run("shop", "SELECT order_id, amount FROM orders ORDER BY order_id")
    pred = run("shop", "SELECT order_id, amount FROM orders ORDER BY order_id")
    assert spider2_tables([gold], pred) == 0
    assert spider2_tables([gold], run("shop", "SELECT order_id, amount + 0.02 FROM orders ORDER BY order_id")) is None


# -- the rules, value by value ----------------------------------------------------------------
@pytest.mark.parametrize(("rows", "columns"), [
    ([(1, "a"), (2, None)], [[1, 2], ["a", float("nan")]]),
    ([(1, 1.5), (None, 2.0)], [[1.0, float("nan")], [1.5, 2.0]]),  # an int column with a NULL is float
    ([("1",), ("007",)], [[1, 7]]),  # text that reads as a number is a number
    ([("NA",), ("x",)], [[float("nan"), "x"]]),  # pandas' NA strings are missing
    ([(True,), (False,)], [[True, False]]),
    ([("2023-01-03",)], [["2023-01-03"]]),
    ([("1_000",)], [["1_000"]]),
])
def test_a_result_as_pandas_reads_it_back_from_csv(rows: list[tuple[Any, ...]], columns: list[list[Any]]) -> None:
    got = spider2_frame(rows)
    assert repr(got) == repr(columns)


def test_a_gold_csv_as_pd_read_csv_reads_it() -> None:
    assert repr(spider2_csv_frame("a,b,c\n1,x,\n2,,1.5\n")) == repr([[1, 2], ["x", float("nan")],
                                                                     [float("nan"), 1.5]])
    assert spider2_csv_frame("") == []


@pytest.mark.parametrize(("gold", "pred", "cols", "ignore_order", "equal"), [
    ([[1.0, 2.0]], [[1.004, 2.009]], None, False, True),  # within 0.01 absolute
    ([[1.0, 2.0]], [[1.02, 2.0]], None, False, False),
    ([[float("nan")]], [[0]], None, False, True),  # NULL is 0
    ([["a", "b"]], [["b", "a"]], None, False, False),
    ([["a", "b"]], [["b", "a"]], None, True, True),
    ([[1, 2], [1, 2]], [[2, 1]], None, True, True),  # two gold columns may match one predicted column
    ([[1, 2], ["x", "y"]], [["x", "y"]], [1], False, True),  # only condition_cols must be found
    ([[1, 2]], [[1, 2]], [3], False, False),  # a position the gold lacks scores 0, as iloc's error does
    ([[1, 2]], [[1, 2, 3]], None, True, False),  # lengths differ
    ([["1"]], [[1]], None, False, False),  # only a CSV round trip makes text a number
])
def test_compare_pandas_table(gold: list[list[Any]], pred: list[list[Any]], cols: list[int] | None,
                              ignore_order: bool, equal: bool) -> None:
    assert spider2_equal(gold, pred, cols, ignore_order) is equal


def test_the_first_matching_gold_wins() -> None:
    golds = [[[1, 2]], [["a", "b"]], [["a", "b"]]]
    assert spider2_match(golds, [["b", "a"], [9, 9]], ignore_order=True) == 1
    assert spider2_match(golds, [[3]]) is None


@given(st.lists(st.tuples(st.integers(-5, 5), st.sampled_from(["x", "y", None])), min_size=1, max_size=8),
       st.randoms())
def test_a_result_matches_itself_in_any_row_and_column_order_when_order_is_ignored(
        rows: list[tuple[Any, ...]], rnd: Any) -> None:
    shuffled = [tuple(reversed(r)) for r in rows]
    rnd.shuffle(shuffled)
    assert spider2_equal(spider2_frame(rows), spider2_frame(shuffled), None, True)
    assert spider2_equal(spider2_frame(rows), spider2_frame([r[::-1] for r in rows]), None, False)


@pytest.mark.parametrize(("official", "gold", "pred", "compare", "reason"), [
    (True, "a,b\n1,\n", [(1, 0)], {"reason": "values"}, "nulls"),  # NULL counted as 0
    (True, "a\n10.5\n", [("10.5",)], {"reason": "type_mismatch"}, "types"),  # text read back as a number
    (True, "a\n1.004\n", [(1.0,)], {"reason": "values"}, "float_noise"),  # within its 0.01 absolute
    (True, "a,b\nx,1\ny,2\n", [("x", 2), ("y", 1)], {"reason": "values"}, "other"),  # columns sorted alone
    (False, "a\n1\n2\n", [(2,), (3,)], {"tie_group": {"chosen": [1]}}, "ties"),
    (False, "a\n1000000\n", [(1000000.5,)], {"within_tolerance": True}, "float_noise"),  # our 1e-6 relative
])
def test_why_spider2_differs_from_ours(official: bool, gold: str, pred: list[tuple[Any, ...]],
                                       compare: dict[str, Any], reason: str) -> None:
    table = pa.table({f"c{i}": [row[i] for row in pred] for i in range(len(pred[0]))})
    assert (spider2_tables([gold], table, None, True) is not None) is official
    assert spider2_reason(official, [gold], table, None, True, compare) == reason
