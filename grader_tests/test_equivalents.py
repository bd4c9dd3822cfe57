"""Equivalent-but-different predictions the grader must accept.

Each pair differs in SQL text (and sometimes in types or row order) but not in meaning
under the comparison contract: columns by position with names ignored, rows as a bag
unless the gold orders them, ties on the gold's sort keys as a bag, numbers numerically
(two exact ones exactly, within tolerance where one is a float), NULL equal to NULL. (Different column order is *not* equivalent: see
``columns_swapped_*`` in test_near_misses.py.)
"""
from __future__ import annotations

from dataclasses import dataclass

import pytest

from grader_tests.helpers import describe


@dataclass(frozen=True)
class Equivalent:
    id: str
    db: str
    pred: str
    gold: str


CANCELLED_BUYERS = ("SELECT DISTINCT c.name FROM customers c JOIN orders o ON o.customer_id = c.id "
                    "WHERE o.status = 'cancelled'")
REGION_COUNT = "SELECT c.region, count(*) FROM customers c JOIN orders o ON o.customer_id = c.id GROUP BY 1"

EQUIVALENTS = [
    Equivalent("join_vs_in_subquery", "shop",
               "SELECT name FROM customers WHERE id IN (SELECT customer_id FROM orders WHERE status = 'cancelled')",
               CANCELLED_BUYERS),
    Equivalent("join_vs_exists", "shop",
               "SELECT c.name FROM customers c WHERE EXISTS "
               "(SELECT 1 FROM orders o WHERE o.customer_id = c.id AND o.status = 'cancelled')",
               CANCELLED_BUYERS),
    Equivalent("cte_vs_inline", "shop",
               "WITH per_order AS (SELECT order_id, sum(quantity * unit_price) AS total FROM order_lines GROUP BY order_id) "
               "SELECT c.region, sum(p.total) FROM per_order p JOIN orders o ON o.id = p.order_id "
               "JOIN customers c ON c.id = o.customer_id GROUP BY c.region",
               "SELECT c.region, sum(l.quantity * l.unit_price) FROM order_lines l JOIN orders o ON o.id = l.order_id "
               "JOIN customers c ON c.id = o.customer_id GROUP BY c.region"),
    Equivalent("view_vs_its_definition", "shop",
               "SELECT order_id, sum(quantity * unit_price) FROM order_lines GROUP BY 1",
               "SELECT order_id, total FROM order_totals"),
    Equivalent("where_vs_having", "shop",
               "SELECT region, count(*) FROM customers WHERE region = 'north' GROUP BY region",
               "SELECT region, count(*) FROM customers GROUP BY region HAVING region = 'north'"),
    Equivalent("renamed_aliases_and_columns", "shop",
               "SELECT x.region AS area, count(*) AS how_many FROM customers AS x JOIN orders AS y "
               "ON y.customer_id = x.id GROUP BY area",
               REGION_COUNT),
    Equivalent("left_join_count_vs_correlated_subquery", "shop",
               "SELECT c.id, (SELECT count(*) FROM orders o WHERE o.customer_id = c.id) FROM customers c",
               "SELECT c.id, count(o.id) FROM customers c LEFT JOIN orders o ON o.customer_id = c.id GROUP BY c.id"),
    Equivalent("or_vs_union_all_of_disjoint_filters", "shop",
               "SELECT id FROM orders WHERE status = 'cancelled' UNION ALL SELECT id FROM orders WHERE discount IS NOT NULL "
               "AND status <> 'cancelled'",
               "SELECT id FROM orders WHERE status = 'cancelled' OR discount IS NOT NULL"),
    # -- numbers -----------------------------------------------------------------------------
    Equivalent("integer_vs_decimal", "shop",
               "SELECT CAST(count(*) AS DECIMAL(18, 2)) FROM orders", "SELECT count(*) FROM orders"),
    Equivalent("integer_vs_double", "shop",
               "SELECT count(*) * 1.0 FROM orders", "SELECT count(*) FROM orders"),
    Equivalent("decimal_vs_double_sum", "shop",
               "SELECT order_id, sum(quantity * CAST(unit_price AS DOUBLE)) FROM order_lines GROUP BY 1",
               "SELECT order_id, sum(quantity * unit_price) FROM order_lines GROUP BY 1"),
    Equivalent("hugeint_sum_vs_bigint_and_decimal", "traps",  # exact values compare exactly, whatever the type
               "SELECT CAST(sum(cents) AS BIGINT), CAST(sum(cents) AS DECIMAL(20, 3)) FROM ledger",
               "SELECT sum(cents), sum(cents) FROM ledger"),
    Equivalent("integer_past_2_53_vs_decimal", "traps",
               "SELECT CAST(sum(v) AS DECIMAL(38, 1)) FROM big", "SELECT sum(v) FROM big"),
    Equivalent("decimal_sum_at_another_scale", "traps",
               "SELECT CAST(sum(amount) AS DECIMAL(38, 6)) FROM ledger", "SELECT sum(amount) FROM ledger"),
    Equivalent("float_noise_within_relative_1e-6", "traps",
               "SELECT id, v * (1 + 5e-7) FROM measures", "SELECT id, v FROM measures"),
    Equivalent("float_noise_within_absolute_1e-9", "traps",
               "SELECT id, v + 5e-10 FROM measures", "SELECT id, v FROM measures"),
    Equivalent("avg_vs_sum_over_count", "shop",
               "SELECT customer_id, sum(discount) / count(discount) FROM orders GROUP BY 1",
               "SELECT customer_id, avg(discount) FROM orders GROUP BY 1"),
    # -- NULLs and non-finite numbers equal themselves ------------------------------------------
    Equivalent("null_equals_null", "traps",
               "SELECT team, max(bonus) FILTER (WHERE bonus IS NOT NULL) FROM staff GROUP BY team",
               "SELECT team, max(bonus) FROM staff GROUP BY team"),
    Equivalent("nan_and_infinities_equal_themselves", "traps",
               "SELECT id, r * 1.0 FROM ratios ORDER BY id DESC", "SELECT id, r FROM ratios"),
    # -- row order -------------------------------------------------------------------------------
    Equivalent("rows_reordered_gold_unordered", "shop",
               "SELECT id, customer_id FROM orders ORDER BY customer_id DESC, id",
               "SELECT id, customer_id FROM orders"),
    Equivalent("ties_reordered_output_key", "shop",
               "SELECT region, name FROM customers ORDER BY region, name DESC",
               "SELECT region, name FROM customers ORDER BY region"),
    Equivalent("ties_reordered_hidden_key", "shop",
               "SELECT name FROM customers ORDER BY region, id DESC",
               "SELECT name FROM customers ORDER BY region"),
    Equivalent("ties_reordered_under_limit", "traps",  # LIMIT 4 keeps the whole 90-tie group
               "SELECT name, score FROM scores ORDER BY score DESC, name DESC LIMIT 4",
               "SELECT name, score FROM scores ORDER BY score DESC LIMIT 4"),
    Equivalent("ordinal_vs_named_order_by", "shop",
               "SELECT region, count(*) AS n FROM customers GROUP BY 1 ORDER BY 1",
               "SELECT region, count(*) FROM customers GROUP BY region ORDER BY region"),
    # -- select lists that expand ----------------------------------------------------------------
    Equivalent("explicit_columns_vs_qualified_star_gold", "traps",
               "SELECT name, team, score FROM scores ORDER BY 3 DESC, 1",
               "SELECT s.* FROM scores s ORDER BY score DESC, name"),
    Equivalent("explicit_columns_vs_star_gold", "shop",
               "SELECT id, name, category, price FROM products",
               "SELECT * FROM products"),
    # -- empty and deprecated, when the case says so ---------------------------------------------
    Equivalent("empty_declared_and_empty_pred", "shop_allow_empty",
               "SELECT id FROM orders WHERE discount > 1",
               "SELECT id FROM orders WHERE status = 'refunded'"),
    Equivalent("gold_reads_deprecated_table_too", "shop",
               "SELECT count(*) FROM main.orders_old", "SELECT count(*) FROM orders_old"),
]


@pytest.mark.parametrize("case", EQUIVALENTS, ids=[c.id for c in EQUIVALENTS])
def test_equivalent_is_accepted(case: Equivalent, grader_for) -> None:
    v = grader_for(case.db).compare(case.pred, case.gold)
    assert v.passed, describe(v)
    assert v.error_class is None and v.failure_kind is None


def test_equivalent_table_is_big_enough() -> None:
    assert len(EQUIVALENTS) >= 8
    assert len({c.id for c in EQUIVALENTS}) == len(EQUIVALENTS)


def test_tolerance_pass_is_reported_as_such(grader_for) -> None:
    v = grader_for("traps").compare("SELECT id, v * (1 + 5e-7) FROM measures", "SELECT id, v FROM measures")
    assert v.passed and v.layers["compare"]["within_tolerance"] is True
    assert "tolerance" in v.explanation
