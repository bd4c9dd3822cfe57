"""What a gold's AST says about breaking its LIMIT's ties (``variants.tiebreak``): the
ranking run on a variant (member columns, then the sort keys, as the gold orders them)
and how each sort key moves; and the grid step a nudged value takes."""
from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from pytest_sqleval.core.variants.tiebreak import SortKey, _step, tie_breaks

COLUMNS = {"customers": {"id", "name", "age"}, "orders": {"id", "customer", "amount", "day"}}
FREE = {("customers", "age"), ("orders", "amount"), ("orders", "day")}


def one(sql: str):  # noqa: ANN201 - a TieBreak or None
    found = tie_breaks([sql], "duckdb", COLUMNS, lambda t, c: (t, c) in FREE)
    return found[0] if found else None


@pytest.mark.parametrize(("sql", "keys"), [
    ("SELECT c.name FROM customers c JOIN orders o ON o.customer = c.id GROUP BY c.id, c.name "
     "ORDER BY count(*) DESC LIMIT 1", (SortKey("count", True),)),
    ("SELECT c.name, sum(o.amount) AS total FROM customers c JOIN orders o ON o.customer = c.id GROUP BY 1 "
     "ORDER BY total LIMIT 3", (SortKey("sum", False, 1, "amount"),)),
    ("SELECT c.name FROM customers c JOIN orders o ON o.customer = c.id GROUP BY c.name "
     "ORDER BY max(o.day) DESC, count(*) LIMIT 1", (SortKey("max", True, 1, "day"), SortKey("count", False))),
    ("SELECT name FROM customers ORDER BY age DESC LIMIT 2", (SortKey("column", True, 0, "age"),)),
    ("SELECT name, age FROM customers ORDER BY 2 LIMIT 1", (SortKey("column", False, 0, "age"),)),
    ("SELECT name FROM customers ORDER BY id, age LIMIT 1", (None, SortKey("column", False, 0, "age"))),
], ids=["count", "sum-by-alias", "max-then-count", "column", "column-by-position", "key-column-stays"])
def test_each_sort_key_knows_how_it_moves(sql: str, keys: tuple) -> None:
    assert one(sql).keys == keys


def test_the_ranking_projects_the_members_then_the_keys_without_the_limit() -> None:
    tb = one("SELECT c.name, sum(o.amount) AS total FROM customers c JOIN orders o ON o.customer = c.id "
             "GROUP BY 1 ORDER BY total DESC LIMIT 3")
    assert (tb.limit, tb.members, tb.grouped, tb.tables) == (3, 1, True, ("customers", "orders"))
    assert tb.ranking == ("SELECT c.name AS g0, SUM(o.amount) AS k0 FROM customers AS c JOIN orders AS o "
                          "ON o.customer = c.id GROUP BY c.name ORDER BY SUM(o.amount) DESC")
    assert tb.top == tb.ranking + " LIMIT 3"
    assert tb.rows_sql.endswith("WHERE c.name = ?") and "o.amount AS c0" in tb.rows_sql
    ungrouped = one("SELECT name FROM customers ORDER BY age DESC LIMIT 2")
    assert ungrouped.ranking == "SELECT customers.rowid AS g0, age AS k0 FROM customers ORDER BY age DESC"


@pytest.mark.parametrize("sql", [
    "SELECT name FROM customers ORDER BY age",  # no LIMIT: nothing is cut
    "SELECT name FROM customers ORDER BY age LIMIT 1 OFFSET 2",
    "SELECT DISTINCT name FROM customers ORDER BY age LIMIT 1",
    "SELECT name FROM customers ORDER BY id LIMIT 1",  # a key column never moves
    "SELECT name FROM customers ORDER BY upper(name) LIMIT 1",  # a function of a column: no step
    "SELECT count(*) FROM orders ORDER BY 1 LIMIT 1",  # one row
    "SELECT name FROM (SELECT * FROM customers) AS s ORDER BY age LIMIT 1",  # not a base table
    "SELECT name FROM customers UNION SELECT 'x' ORDER BY 1 LIMIT 1",
])
def test_a_gold_whose_ties_cannot_be_broken_gets_no_witness(sql: str) -> None:
    assert one(sql) is None


@pytest.mark.parametrize(("value", "up", "expected"), [
    (5, True, "6"), (5, False, "4"), (Decimal("30.50"), True, "30.51"), (Decimal("7"), False, "6"),
    (dt.date(2024, 1, 1), False, "2023-12-31"), ("2024-02-28", True, "2024-02-29"),
    (123.5, True, "123.6"), (0.25, False, "0.249"), ("Ann", True, None), (True, True, None),
])
def test_a_nudge_is_one_unit_of_the_value_s_grid(value: object, up: bool, expected: str | None) -> None:
    assert _step(value, up) == expected
