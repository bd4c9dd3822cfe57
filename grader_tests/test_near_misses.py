"""Near-misses the grader must reject, and golds it must refuse to trust.

Each entry names the coincidence it exploits: a prediction that looks right (the right
number, the right rows, the same totals) but breaks one point of the comparison contract
in DESIGN.md. The expected error class is asserted wherever the class is meaningful.

What an execution grader can and cannot catch
---------------------------------------------
A result grader sees only the rows. When a wrong query returns *exactly* the gold's rows
on the pinned database, no result comparison can reject it: ``sum(gross)`` vs ``sum(net)``
on a table where the totals coincide, an INNER JOIN where a LEFT JOIN was meant when every
customer happens to have orders. ``test_true_coincidence_is_invisible`` pins that down
honestly (it asserts the grader *passes* them). What the grader can do, and what this
table tests, is:

- catch the coincidence as soon as the gold asks for more than the coincident figure
  (per group, more rows: ``coincidence_total_not_per_group``);
- catch a coincidence that comes from reading a deprecated table, by name, whatever the
  numbers (``stale_*``);
- catch everything that differs in kind rather than in value: types (string vs number,
  date vs timestamp, bool vs int), NULL vs 0 vs '', arity, multiplicity, order.
"""
from __future__ import annotations

from dataclasses import dataclass

import duckdb
import pytest

from grader_tests.helpers import describe
from pytest_sqleval.core.errors import GoldError


@dataclass(frozen=True)
class NearMiss:
    id: str
    db: str  # key for ``grader_for``
    pred: str
    gold: str
    error_class: str | None  # None: the class is not meaningful here, only the fail is
    failure_kind: str | None = None


REGION_COUNT = "SELECT c.region, count(*) FROM customers c JOIN orders o ON o.customer_id = c.id GROUP BY 1"

NEAR_MISSES = [
    # -- empty answers -------------------------------------------------------------------
    NearMiss("empty_declared_gold_vs_nonempty_pred", "shop_allow_empty",
             "SELECT id FROM orders WHERE status = 'cancelled'",
             "SELECT id FROM orders WHERE status = 'refunded'", None, "cardinality_mismatch"),
    NearMiss("nonempty_gold_vs_empty_pred", "shop",
             "SELECT id FROM orders WHERE status = 'canceled'",  # misspelt literal: no rows
             "SELECT id FROM orders WHERE status = 'cancelled'", None, "cardinality_mismatch"),
    # -- coincidences ----------------------------------------------------------------------
    NearMiss("coincidence_total_not_per_group", "traps",
             "SELECT team, sum(gross) FROM sales GROUP BY team",
             "SELECT team, sum(net) FROM sales GROUP BY team", "wrong_metric", "value_mismatch"),
    NearMiss("stale_orders_old_same_count", "shop",
             "SELECT count(*) FROM orders_old WHERE id <= 120",
             "SELECT count(*) FROM orders WHERE id <= 120", "stale_table", "deprecated_table"),
    NearMiss("stale_legacy_v1_same_groups", "shop",
             "SELECT region, count(*) FROM legacy.customers_v1 GROUP BY region",
             "SELECT region, count(*) FROM customers GROUP BY region", "stale_table", "deprecated_table"),
    NearMiss("stale_table_schema_qualified", "shop",
             "SELECT count(*) FROM main.orders_old WHERE id <= 120",
             "SELECT count(*) FROM orders WHERE id <= 120", "stale_table", "deprecated_table"),
    # -- the right number in the wrong shape -------------------------------------------------
    NearMiss("right_number_plus_label_column", "shop",
             "SELECT 'orders' AS what, count(*) FROM orders",
             "SELECT count(*) FROM orders", "other", "projection_mismatch"),
    NearMiss("right_rows_plus_extra_measure", "shop",
             "SELECT c.region, count(*), sum(o.discount) FROM customers c JOIN orders o ON o.customer_id = c.id GROUP BY 1",
             REGION_COUNT, "other", "projection_mismatch"),
    NearMiss("columns_swapped_different_types", "shop",
             "SELECT count(*), region FROM customers GROUP BY region",
             "SELECT region, count(*) FROM customers GROUP BY region", "other", "projection_mismatch"),
    NearMiss("columns_swapped_same_types", "shop",
             "SELECT customer_id, id FROM orders",
             "SELECT id, customer_id FROM orders", None, "value_mismatch"),
    # -- multiplicity ------------------------------------------------------------------------
    NearMiss("duplicates_where_gold_is_distinct", "shop",
             "SELECT customer_id FROM orders",
             "SELECT DISTINCT customer_id FROM orders", None, "cardinality_mismatch"),
    NearMiss("distinct_where_gold_keeps_duplicates", "shop",
             "SELECT DISTINCT customer_id FROM orders",
             "SELECT customer_id FROM orders", None, "cardinality_mismatch"),
    NearMiss("off_by_one_filter_bound", "shop",
             "SELECT id FROM orders WHERE id < 50",
             "SELECT id FROM orders WHERE id <= 50", None, "cardinality_mismatch"),
    # -- order -----------------------------------------------------------------------------
    NearMiss("order_only_reversed", "shop",
             "SELECT id, ordered_at FROM orders ORDER BY ordered_at DESC",
             "SELECT id, ordered_at FROM orders ORDER BY ordered_at", "other", "order_only"),
    NearMiss("order_only_null_placement", "shop",  # DuckDB sorts NULLS LAST by default
             "SELECT id, discount FROM orders ORDER BY discount, id",
             "SELECT id, discount FROM orders ORDER BY discount NULLS FIRST, id", "other", "order_only"),
    NearMiss("order_only_null_placement_in_tie_groups", "shop",  # 160 NULLs then 40 x 0.1, or the reverse
             "SELECT discount FROM orders ORDER BY discount",
             "SELECT discount FROM orders ORDER BY discount NULLS FIRST", "other", "order_only"),
    NearMiss("limit_tie_no_tiebreaker", "traps",  # picks 'zed' (stored first) where the gold picks 'bob'
             "SELECT name, score FROM scores ORDER BY score DESC LIMIT 2",
             "SELECT name, score FROM scores ORDER BY score DESC, name LIMIT 2", None, "value_mismatch"),
    NearMiss("limit_tie_other_tiebreaker", "traps",
             "SELECT name, score FROM scores ORDER BY score DESC, name DESC LIMIT 2",
             "SELECT name, score FROM scores ORDER BY score DESC, name LIMIT 2", None, "value_mismatch"),
    # -- NULL, '', 0 -----------------------------------------------------------------------
    NearMiss("null_vs_zero_double_aggregate", "traps",
             "SELECT team, coalesce(max(bonus), 0) FROM staff GROUP BY team",
             "SELECT team, max(bonus) FROM staff GROUP BY team", "wrong_metric", "value_mismatch"),
    NearMiss("null_vs_zero_integer", "traps",
             "SELECT team, coalesce(CAST(max(bonus) AS INTEGER), 0) FROM staff GROUP BY team",
             "SELECT team, CAST(max(bonus) AS INTEGER) FROM staff GROUP BY team", "wrong_metric", "value_mismatch"),
    NearMiss("null_vs_zero_row_level", "shop",
             "SELECT id, coalesce(discount, 0) FROM orders",
             "SELECT id, discount FROM orders", "wrong_metric", "value_mismatch"),
    NearMiss("empty_string_vs_null", "traps",
             "SELECT id, coalesce(nickname, '') FROM staff",
             "SELECT id, nickname FROM staff", "wrong_metric", "value_mismatch"),
    NearMiss("null_vs_empty_string", "traps",
             "SELECT id, nullif(nickname, '') FROM staff",
             "SELECT id, nickname FROM staff", "wrong_metric", "value_mismatch"),
    # -- numbers at the tolerance boundary and beyond ----------------------------------------
    NearMiss("float_just_outside_relative_1e-6", "traps",
             "SELECT id, v * (1 + 1.5e-6) FROM measures",
             "SELECT id, v FROM measures", "wrong_metric", "value_mismatch"),
    NearMiss("float_just_outside_absolute_1e-9", "traps",
             "SELECT id, v + 1.5e-9 FROM measures WHERE id = 3",  # v = 0.0
             "SELECT id, v FROM measures WHERE id = 3", "wrong_metric", "value_mismatch"),
    NearMiss("infinity_vs_max_double", "traps",
             "SELECT id, CASE WHEN isinf(r) THEN sign(r) * 1.7976931348623157e308 ELSE r END FROM ratios",
             "SELECT id, r FROM ratios", "wrong_metric", "value_mismatch"),
    NearMiss("nan_vs_null", "traps",
             "SELECT id, CASE WHEN isnan(r) THEN NULL ELSE r END FROM ratios",
             "SELECT id, r FROM ratios", "wrong_metric", "value_mismatch"),
    # -- exact numbers: no tolerance between two exact values ---------------------------------
    NearMiss("integer_sum_off_by_one", "traps",  # HUGEINT 1998999 vs 1999000: 5e-7 apart
             "SELECT sum(cents) FROM ledger WHERE id <> 1",
             "SELECT sum(cents) FROM ledger", "wrong_metric", "value_mismatch"),
    NearMiss("integer_sum_off_by_one_bigint_vs_hugeint", "traps",
             "SELECT CAST(sum(cents) AS BIGINT) FROM ledger WHERE id <> 1",
             "SELECT sum(cents) FROM ledger", "wrong_metric", "value_mismatch"),
    NearMiss("integer_sum_past_2_53_off_by_one", "traps",  # 2**53 vs 2**53 + 1: the same double
             "SELECT max(v) FROM big",
             "SELECT sum(v) FROM big", "wrong_metric", "value_mismatch"),
    NearMiss("decimal_sum_off_by_one_cent", "traps",  # DECIMAL(38,2): 199900000000.00 vs ...00.01 less
             "SELECT sum(amount) - 0.01 FROM ledger",
             "SELECT sum(amount) FROM ledger", "wrong_metric", "value_mismatch"),
    NearMiss("decimal_vs_integer_off_by_one_cent", "traps",
             "SELECT sum(cents) FROM ledger",
             "SELECT sum(cents) + 0.01 FROM ledger", "wrong_metric", "value_mismatch"),
    # -- kinds that never compare equal ------------------------------------------------------
    NearMiss("date_vs_midnight_timestamp", "traps",
             "SELECT id, date_trunc('day', happened_at) FROM events",
             "SELECT id, CAST(happened_at AS DATE) FROM events", "other", "projection_mismatch"),
    NearMiss("string_1_vs_integer_1", "shop",
             "SELECT CAST(customer_id AS VARCHAR), count(*) FROM orders GROUP BY 1",
             "SELECT customer_id, count(*) FROM orders GROUP BY 1", "other", "projection_mismatch"),
    NearMiss("bool_vs_integer", "shop",
             "SELECT id, CAST(is_test AS INTEGER) FROM customers",
             "SELECT id, is_test FROM customers", "other", "projection_mismatch"),
    # -- benchmark error classes -------------------------------------------------------------
    NearMiss("hallucinated_column", "shop",
             "SELECT c.region,\n       sum(o.amount)\nFROM customers c JOIN orders o ON o.customer_id = c.id\nGROUP BY 1",
             "SELECT c.region, sum(o.discount) FROM customers c JOIN orders o ON o.customer_id = c.id GROUP BY 1",
             "hallucinated_column"),
    NearMiss("hallucinated_table", "shop",
             "SELECT count(*) FROM order_items",
             "SELECT count(*) FROM order_lines", "hallucinated_column"),
    NearMiss("wrong_join_fanout", "shop",  # one row per order line instead of per order
             "SELECT c.region, sum(o.discount) FROM customers c JOIN orders o ON o.customer_id = c.id "
             "JOIN order_lines l ON l.order_id = o.id GROUP BY 1",
             "SELECT c.region, sum(o.discount) FROM customers c JOIN orders o ON o.customer_id = c.id GROUP BY 1",
             "wrong_join"),
    NearMiss("wrong_join_fanout_count", "shop",
             "SELECT c.region, count(*) FROM customers c JOIN orders o ON o.customer_id = c.id "
             "JOIN order_lines l ON l.order_id = o.id GROUP BY 1",
             REGION_COUNT, "wrong_join"),
    NearMiss("wrong_metric_avg_for_sum", "shop",
             "SELECT p.category, avg(l.quantity) FROM order_lines l JOIN products p ON p.id = l.product_id GROUP BY 1",
             "SELECT p.category, sum(l.quantity) FROM order_lines l JOIN products p ON p.id = l.product_id GROUP BY 1",
             "wrong_metric", "value_mismatch"),
    NearMiss("wrong_metric_count_column_skips_nulls", "shop",
             "SELECT count(discount) FROM orders",
             "SELECT count(*) FROM orders", "wrong_metric", "value_mismatch"),
    # -- a gold whose select list expands (*, t.*) must keep every column it returns ---------
    NearMiss("qualified_star_gold_vs_first_column", "traps",
             "SELECT name FROM scores ORDER BY score DESC, name",
             "SELECT s.* FROM scores s ORDER BY score DESC, name", "other", "projection_mismatch"),
]


@pytest.mark.parametrize("case", NEAR_MISSES, ids=[c.id for c in NEAR_MISSES])
def test_near_miss_is_rejected(case: NearMiss, grader_for) -> None:
    v = grader_for(case.db).compare(case.pred, case.gold)
    assert not v.passed, describe(v)
    if case.error_class is not None:
        assert v.error_class == case.error_class, describe(v)
    if case.failure_kind is not None:
        assert v.failure_kind == case.failure_kind, describe(v)


def test_near_miss_table_is_big_enough() -> None:
    assert len(NEAR_MISSES) >= 14
    assert len({c.id for c in NEAR_MISSES}) == len(NEAR_MISSES)


def test_hallucinated_column_carries_line_and_col(grader_for) -> None:
    pred = next(c for c in NEAR_MISSES if c.id == "hallucinated_column")
    v = grader_for("shop").compare(pred.pred, pred.gold)
    bad = v.layers["grounding"]["hallucinated_columns"]
    assert [b["name"] for b in bad] == ["o.amount"], bad
    assert bad[0]["line"] == 2 and isinstance(bad[0]["col"], int) and bad[0]["col"] > 0, bad
    assert "line 2" in v.explanation


def test_stale_table_fails_even_though_the_numbers_agree(grader_for) -> None:
    """The stale prediction's rows are the gold's rows: only the deprecated-table rule fails it."""
    v = grader_for("shop").compare("SELECT count(*) FROM orders_old WHERE id <= 120",
                                   "SELECT count(*) FROM orders WHERE id <= 120")
    assert v.layers["compare"]["match"] is True
    assert not v.passed and v.error_class == "stale_table" and v.stale_tables == ["orders_old"]


def test_limit_tie_prediction_really_picks_another_row(traps_db) -> None:
    """Guards ``limit_tie_no_tiebreaker``: on the sandbox's settings (read-only, one thread)
    the tiebreaker-free query returns a different row from the gold, so the test is not vacuous."""
    con = duckdb.connect(str(traps_db), read_only=True, config={"threads": 1})
    try:
        pred = con.sql("SELECT name FROM scores ORDER BY score DESC LIMIT 2").fetchall()
        gold = con.sql("SELECT name FROM scores ORDER BY score DESC, name LIMIT 2").fetchall()
    finally:
        con.close()
    assert pred != gold


def test_true_coincidence_is_invisible(grader_for) -> None:
    """Documented limitation: when a wrong query returns exactly the gold's rows on the pinned
    database, an execution grader passes it. The remedy is in the benchmark (ask per group,
    seed data that separates the measures), not in the comparator."""
    totals = grader_for("traps").compare("SELECT sum(gross) FROM sales", "SELECT sum(net) FROM sales")
    assert totals.passed, describe(totals)  # 18 == 18
    inner_vs_left = grader_for("shop").compare(
        REGION_COUNT, "SELECT c.region, count(*) FROM customers c LEFT JOIN orders o ON o.customer_id = c.id GROUP BY 1")
    assert inner_vs_left.passed, describe(inner_vs_left)  # every customer has orders on this data


# -- golds that cannot be trusted ------------------------------------------------------------
BAD_GOLDS = [
    pytest.param("shop", "SELECT id FROM orders WHERE status = 'refunded'", "no rows", id="empty_gold_undeclared"),
    pytest.param("shop", "SELECT count(*) FROM orders WHERE false", None, id="empty_count_is_not_empty"),
    pytest.param("traps", "SELECT name, score FROM scores ORDER BY score DESC LIMIT 2 OFFSET 1",
                 "cuts through rows tied", id="limit_offset_cuts_tie_group"),
    pytest.param("shop", "SELECT random() AS r FROM orders", "nondeterministic", id="nondeterministic_gold"),
    pytest.param("shop", "SELECT amount FROM orders", "fails on the database", id="gold_errors"),
    pytest.param("shop", "SELECT count(*) FROM orders; SELECT 1", "refused", id="gold_two_statements"),
]


@pytest.mark.parametrize(("db", "gold", "message"), BAD_GOLDS)
def test_untrustworthy_gold_raises(db: str, gold: str, message: str | None, grader_for) -> None:
    grader = grader_for(db)
    if message is None:  # count(*) over no rows is one row holding 0: a real answer
        assert grader.compare("SELECT 0::BIGINT", gold).passed
        return
    with pytest.raises(GoldError, match=message):
        grader.compare("SELECT 1", gold)


#: A gold whose LIMIT cuts the three-way tie on 90 (zed, bob, dan) accepts any valid top-k.
TIE_GOLDS = [
    ("SELECT name, score FROM scores ORDER BY score DESC LIMIT 2",
     "SELECT name, score FROM scores ORDER BY score DESC, name DESC LIMIT 2", True),  # amy, zed
    ("SELECT name, score FROM scores ORDER BY score DESC LIMIT 2",
     "SELECT name, score FROM scores WHERE score >= 80 ORDER BY score, name LIMIT 2", False),  # cat: outside the tie
    ("SELECT name FROM scores ORDER BY score DESC LIMIT 3",  # the key is not an output column
     "SELECT name FROM scores WHERE name IN ('amy', 'dan', 'zed') ORDER BY score DESC, name", True),
    ("SELECT name FROM scores ORDER BY score DESC LIMIT 3",
     "SELECT name FROM scores WHERE name IN ('amy', 'dan', 'eve') ORDER BY score DESC, name", False),
    ("SELECT * FROM scores ORDER BY score DESC LIMIT 2",  # the keys of a * gold are appended to find the tie
     "SELECT * FROM scores ORDER BY score DESC, name LIMIT 2", True),
    ("SELECT * FROM scores ORDER BY score DESC LIMIT 2",
     "SELECT * FROM scores ORDER BY score LIMIT 2", False),
]


@pytest.mark.parametrize(("gold", "pred", "passes"), TIE_GOLDS)
def test_limit_through_a_tie_accepts_any_valid_top_k(gold: str, pred: str, passes: bool, grader_for) -> None:
    v = grader_for("traps").compare(pred, gold)
    assert v.passed is passes, describe(v)
    assert v.layers["compare"]["tie_group"]["group_rows"] == 3


def test_star_gold_ties_compare_as_a_bag(grader_for) -> None:
    """Rows tied on a * gold's sort key may come in any order; other rows may not."""
    grader = grader_for("traps")
    gold = "SELECT * FROM scores ORDER BY score DESC"
    assert grader.compare("SELECT name, team, score FROM scores ORDER BY score DESC, name DESC", gold).passed
    assert not grader.compare("SELECT name, team, score FROM scores ORDER BY score", gold).passed
