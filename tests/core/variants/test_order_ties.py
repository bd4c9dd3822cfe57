"""A middle ORDER BY key dropped or reversed where no two pinned output rows tie before it (issue 31).

TPC-DS q34 orders its tickets of 15-20 lines by ``c_last_name, c_first_name, c_salutation,
c_preferred_cust_flag DESC, ss_ticket_number``; its four customers on the pinned data have four
last names, so ``c_first_name`` dropped or reversed returned the gold's rows in the gold's order
on every variant of held-out seeds 1029-1031. An ordered gold of up to ``ORDER_TIES`` pinned rows
now gets, per earlier sort key, a copy of the customer it orders last that ties with it on the
keys before and sorts apart on that one, the other way on the last key, each copy with the
ticket's lines (``OutputWriter._apart_values``); the lines of one ticket share the copy's
new ticket number, as the declared key of a line (ticket, item) asks. The join of a derived
table with one table (``dn, customer``) is a gold join too (``joinpath.gold_joins``): without it
a one-gold build saw no reference from the lines to the customer and froze the customer's
columns. Both mutants and both joins fail on main 9edb05c; the equivalents pass."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_sqleval.core.api import Grader
from pytest_sqleval.core.variants.joinpath import gold_joins
from tests.core.variants.conftest import assert_coincidence_caught, graded_with_variants

GOLD = ("SELECT c_last_name, c_first_name, c_salutation, c_flag, ticket, cnt "
        "FROM (SELECT ticket, customer_sk, count(*) AS cnt FROM line, shop WHERE shop_sk = s_sk "
        "AND s_county = 'Williamson' GROUP BY ticket, customer_sk) AS dn, customer "
        "WHERE customer_sk = c_sk AND cnt BETWEEN 3 AND 5 "
        "ORDER BY c_last_name, c_first_name, c_salutation, c_flag DESC, ticket")
WRONG = {
    "first_name_dropped": GOLD.replace("c_last_name, c_first_name, c_salutation, c_flag DESC",
                                       "c_last_name, c_salutation, c_flag DESC"),
    "first_name_reversed": GOLD.replace("c_first_name, c_salutation, c_flag DESC",
                                        "c_first_name DESC, c_salutation, c_flag DESC"),
}
EQUIVALENTS = {
    "joined_explicitly": GOLD.replace("AS dn, customer WHERE customer_sk = c_sk AND",
                                      "AS dn JOIN customer ON customer_sk = c_sk WHERE"),
    "band_as_comparisons": GOLD.replace("cnt BETWEEN 3 AND 5", "cnt >= 3 AND cnt <= 5"),
}
NAMES = [("Adams", "Ann", "Ms.", "N"), ("Baker", "Bob", "Mr.", "Y"), ("Clark", "Cy", "Dr.", "N"),
         ("Davis", "Dee", "Mrs.", "Y"), ("Adams", "Bob", "Mr.", "N"), ("Baker", "Ann", "Ms.", "Y"),
         ("Clark", "Dee", "Mrs.", "N"), ("Davis", "Cy", "Dr.", "Y")]  # no name column is unique


def make_tickets(path: Path) -> None:
    """Eight customers, two of each last name; customers 1-4 (four last names) each bought one ticket of 4 lines in
    Williamson (the gold's four rows), 5-8 tickets of 2 lines (outside the band) or elsewhere."""
    import duckdb
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE customer (c_sk INTEGER PRIMARY KEY, c_last_name VARCHAR, c_first_name VARCHAR, "
                "c_salutation VARCHAR, c_flag VARCHAR)")
    con.execute("CREATE TABLE shop (s_sk INTEGER PRIMARY KEY, s_county VARCHAR)")
    con.execute("CREATE TABLE line (ticket INTEGER, item INTEGER, customer_sk INTEGER REFERENCES customer (c_sk), "
                "shop_sk INTEGER REFERENCES shop (s_sk), PRIMARY KEY (ticket, item))")
    con.executemany("INSERT INTO customer VALUES (?, ?, ?, ?, ?)", [(i + 1, *n) for i, n in enumerate(NAMES)])
    con.executemany("INSERT INTO shop VALUES (?, ?)", [(1, "Williamson"), (2, "Ziebach")])
    lines = []
    for c in range(1, 9):
        ticket = 100 + c
        shop, count = (1, 4) if c <= 4 else (1, 2) if c <= 6 else (2, 4)
        lines += [(ticket, item, c, shop) for item in range(1, count + 1)]
    con.executemany("INSERT INTO line VALUES (?, ?, ?, ?)", lines)
    con.close()


@pytest.fixture(scope="module")
def tickets(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Grader]]:
    yield from graded_with_variants(tmp_path_factory, "tickets", make_tickets, GOLD)


def test_a_derived_table_joined_with_one_table_is_a_gold_join() -> None:
    columns = {"customer": {"c_sk", "c_last_name"}, "line": {"ticket", "customer_sk"}}
    joins = gold_joins(["SELECT c_last_name FROM (SELECT ticket, customer_sk FROM line) AS dn, customer "
                        "WHERE customer_sk = c_sk"], "duckdb", columns)
    assert ("line", "customer_sk", "customer", "c_sk") in joins


@pytest.mark.parametrize("name", sorted(WRONG))
def test_a_middle_key_changed_is_caught(tickets: tuple[Path, Grader], name: str) -> None:
    assert_coincidence_caught(tickets[0] / "tickets.duckdb", tickets[1], WRONG[name], GOLD)
    assert "sorts apart" in tickets[1].compare(WRONG[name], GOLD).explanation


@pytest.mark.parametrize("name", sorted(EQUIVALENTS))
def test_equivalents_pass_on_every_variant(tickets: tuple[Path, Grader], name: str) -> None:
    verdict = tickets[1].compare(EQUIVALENTS[name], GOLD)
    assert verdict.passed, (name, verdict.explanation)
