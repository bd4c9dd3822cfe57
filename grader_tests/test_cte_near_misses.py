"""Near-misses that hide a deprecated table behind a CTE name, and their honest twins.

A name refers to a CTE only where the engine would bind it to that CTE: after the CTE in
its ``WITH``, in the query the ``WITH`` belongs to, in the CTE's own body only when it is
really recursive, and only when unqualified. Each stale row returns exactly the gold's
numbers on the shop database (``orders_old`` holds the first 120 orders;
``legacy.customers_v1`` has the live regions), so only the deprecated-table rule can
fail it. Each control names a deprecated-looking CTE but reads live tables, and passes.
"""
from __future__ import annotations

import pytest

from grader_tests.helpers import describe

GOLD_120 = "SELECT count(*) FROM orders WHERE id <= 120"
GOLD_REGIONS = "SELECT region, count(*) FROM customers GROUP BY region"

STALE = [
    ("cte_shadows_deprecated",
     "WITH orders_old AS (SELECT * FROM orders_old) SELECT count(*) FROM orders_old WHERE id <= 120", GOLD_120),
    ("cte_shadows_deprecated_quoted",
     'WITH "orders_old" AS (SELECT * FROM "orders_old") SELECT count(*) FROM "orders_old" WHERE id <= 120', GOLD_120),
    ("cte_shadows_deprecated_other_case",
     "WITH ORDERS_OLD AS (SELECT * FROM orders_old) SELECT count(*) FROM Orders_Old WHERE id <= 120", GOLD_120),
    ("nested_cte_shadows_deprecated",
     "WITH x AS (WITH orders_old AS (SELECT * FROM orders_old) SELECT * FROM orders_old) "
     "SELECT count(*) FROM x WHERE id <= 120", GOLD_120),
    ("cte_shadow_inside_scalar_subquery",
     "SELECT (WITH orders_old AS (SELECT * FROM orders_old) SELECT count(*) FROM orders_old WHERE id <= 120)",
     GOLD_120),
    ("cte_shadow_in_one_branch_of_a_union",
     "SELECT count(*) FROM (SELECT id FROM orders WHERE id > 1000 UNION ALL "
     "(WITH orders_old AS (SELECT * FROM orders_old) SELECT id FROM orders_old)) u WHERE id <= 120", GOLD_120),
    ("cte_shadow_inside_lateral",
     "SELECT count(*) FROM (SELECT 1 AS k) one, LATERAL (WITH orders_old AS (SELECT * FROM orders_old) "
     "SELECT id FROM orders_old WHERE id <= 120) l", GOLD_120),
    ("cte_defined_after_its_use",  # b reads the table: a later CTE is not visible in an earlier one
     "WITH b AS (SELECT * FROM orders_old), orders_old AS (SELECT * FROM orders) "
     "SELECT count(*) FROM b WHERE id <= 120", GOLD_120),
    ("recursive_keyword_without_recursion",  # DuckDB binds this self-reference to the table
     "WITH RECURSIVE orders_old AS (SELECT * FROM orders_old) SELECT count(*) FROM orders_old WHERE id <= 120",
     GOLD_120),
    ("recursive_cte_anchor_reads_deprecated",
     "WITH RECURSIVE r AS (SELECT min(id) AS id FROM orders_old UNION ALL SELECT id + 1 FROM r WHERE id < 120) "
     "SELECT count(*) FROM r", GOLD_120),
    ("schema_qualified_inside_shadowing_cte",
     "WITH orders_old AS (SELECT * FROM main.orders_old) SELECT count(*) FROM orders_old WHERE id <= 120", GOLD_120),
    ("live_name_cte_over_legacy_schema",
     "WITH customers AS (SELECT * FROM legacy.customers_v1) SELECT region, count(*) FROM customers GROUP BY region",
     GOLD_REGIONS),
    ("quoted_legacy_schema_shadowed",
     'WITH customers_v1 AS (SELECT * FROM "legacy"."customers_v1") '
     "SELECT region, count(*) FROM customers_v1 GROUP BY region", GOLD_REGIONS),
]

CLEAN = [
    ("deprecated_looking_cte_over_live_table",
     "WITH orders_old AS (SELECT * FROM orders) SELECT count(*) FROM orders_old WHERE id <= 120", GOLD_120),
    ("outer_cte_seen_from_a_subquery",
     "WITH orders_old AS (SELECT * FROM orders) SELECT (SELECT count(*) FROM orders_old WHERE id <= 120)", GOLD_120),
    ("inner_cte_body_sees_the_outer_cte",
     "WITH orders_old AS (SELECT * FROM orders) SELECT count(*) FROM "
     "(WITH x AS (SELECT * FROM orders_old) SELECT * FROM x) s WHERE id <= 120", GOLD_120),
    ("recursive_cte_named_like_deprecated",
     "WITH RECURSIVE n_old AS (SELECT 1 AS i UNION ALL SELECT i + 1 FROM n_old WHERE i < 120) "
     "SELECT count(*) FROM n_old", GOLD_120),
    ("quoted_cte_named_like_deprecated",
     'WITH "orders_old" AS (SELECT * FROM orders) SELECT count(*) FROM "orders_old" WHERE id <= 120', GOLD_120),
]


@pytest.mark.parametrize(("pred", "gold"), [(p, g) for _, p, g in STALE], ids=[i for i, _, _ in STALE])
def test_deprecated_table_behind_a_cte_name_is_stale(pred: str, gold: str, grader_for) -> None:
    v = grader_for("shop").compare(pred, gold)
    assert not v.passed, describe(v)
    assert v.error_class == "stale_table" and v.failure_kind == "deprecated_table", describe(v)
    assert v.stale_tables, describe(v)


@pytest.mark.parametrize(("pred", "gold"), [(p, g) for _, p, g in CLEAN], ids=[i for i, _, _ in CLEAN])
def test_cte_named_like_a_deprecated_table_is_not_a_table(pred: str, gold: str, grader_for) -> None:
    v = grader_for("shop").compare(pred, gold)
    assert v.passed and not v.stale_tables, describe(v)
