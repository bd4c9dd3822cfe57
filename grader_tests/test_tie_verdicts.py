"""Golds whose answer is not unique because of ties, on the shop database (4 regions of 10
customers each, so every region ties on its count): the verdict each prediction gets.

- ``passed`` with ``tie_only``: the prediction's rows are not the gold's own, and matched
  only because the gold's LIMIT cuts through a tie group (or has no ORDER BY at all);
- ``undecidable``: every row the gold ranks ties, so the database cannot tell a query that
  ranks from one that does not; not a pass;
- ``error``: a LIMIT inside a subquery cuts through ties and its valid choices cannot all
  be evaluated (a correlated subquery, too many), so a different answer may be another
  valid one: not graded, never failed;
- ``failed``: wrong whichever tied rows are chosen (every valid choice evaluated)."""
from __future__ import annotations

from dataclasses import dataclass

import pytest

TOP_REGION = "SELECT region, count(*) AS n FROM customers GROUP BY 1 ORDER BY n DESC LIMIT 1"
FIRST_REGION_IDS = "SELECT id FROM customers ORDER BY region LIMIT 3"  # 'east' first: 10 tied of 40
ANY_THREE = "SELECT region FROM customers LIMIT 3"  # no ORDER BY: any 3 of the 40 rows
IN_TOP_REGION = ("SELECT name FROM customers WHERE region IN "
                 "(SELECT region FROM customers GROUP BY 1 ORDER BY count(*) DESC LIMIT 1)")


@dataclass(frozen=True)
class TieCase:
    id: str
    gold: str
    pred: str
    status: str
    tie_only: bool = False


TIE_CASES = [
    TieCase("all_regions_tie_no_count", TOP_REGION,
            "SELECT region, 10 FROM customers GROUP BY 1 ORDER BY 1 DESC LIMIT 1", "undecidable"),
    TieCase("all_regions_tie_gold_itself", TOP_REGION, TOP_REGION, "passed"),
    TieCase("all_regions_tie_wrong_count", TOP_REGION, "SELECT 'east', 11", "failed"),
    TieCase("other_tied_rows", FIRST_REGION_IDS,
            "SELECT id FROM customers WHERE region = 'east' ORDER BY id DESC LIMIT 3", "passed", tie_only=True),
    TieCase("gold_own_rows", FIRST_REGION_IDS, "SELECT id FROM customers ORDER BY region, id LIMIT 3", "passed"),
    TieCase("row_outside_the_group", FIRST_REGION_IDS, "SELECT id FROM customers WHERE id IN (2, 6, 3)", "failed"),
    TieCase("limit_without_order_by_other_rows", ANY_THREE,
            "SELECT region FROM customers ORDER BY id DESC LIMIT 3", "passed", tie_only=True),
    TieCase("limit_without_order_by_every_row", ANY_THREE, "SELECT region FROM customers", "failed"),
    TieCase("limit_without_order_by_other_table", ANY_THREE, "SELECT status FROM orders LIMIT 3", "failed"),
    TieCase("subquery_limit_all_tied", IN_TOP_REGION, "SELECT name FROM customers WHERE region = 'west'",
            "undecidable"),
    TieCase("subquery_limit_wrong_under_every_choice", IN_TOP_REGION,
            "SELECT name FROM customers WHERE region = 'nowhere'", "failed"),
    TieCase("subquery_limit_too_many_choices",
            "SELECT count(*) FROM customers WHERE id IN (SELECT customer_id FROM orders LIMIT 5)",
            "SELECT 0", "error"),
    TieCase("subquery_limit_correlated",
            "SELECT id FROM customers c WHERE (SELECT o.status FROM orders o WHERE o.customer_id = c.id "
            "ORDER BY o.customer_id LIMIT 1) IS NOT NULL", "SELECT 0", "error"),
    TieCase("subquery_limit_with_tiebreaker", IN_TOP_REGION.replace("DESC LIMIT", "DESC, region LIMIT"),
            "SELECT name FROM customers WHERE region = 'west'", "failed"),
]


@pytest.mark.parametrize("case", TIE_CASES, ids=[c.id for c in TIE_CASES])
def test_tie_verdicts(grader_for, case: TieCase) -> None:
    verdict = grader_for("shop").compare(case.pred, case.gold)
    assert (verdict.status, verdict.tie_only) == (case.status, case.tie_only), verdict.explanation
    if case.status == "error":
        assert verdict.case_error_kind == "gold_error" and "inside a subquery" in verdict.case_error
    if case.status == "failed":
        assert verdict.case_error is None
