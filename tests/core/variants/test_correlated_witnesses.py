"""Conjuncts inside a correlated EXISTS / NOT EXISTS (issue 31, ``clones._Correlation``).

TPC-DS's customer golds keep a customer when a store sale of theirs falls in a year's first
quarters (``EXISTS (... d_year = 2001 AND d_qoy < 4)``) and no web sale falls in a month
window (``NOT EXISTS (... d_moy BETWEEN 4 AND 4 + 2)``). On the pinned data every customer
with a fourth-quarter sale also has an earlier one, and no kept customer bought on the web in
March: dropping ``d_qoy < 4`` or moving the window to March changes nothing. Only a row of the
subquery's tables tells them apart, given to a customer who passes every other condition and
whose passing then turns on it; a sale copied from one that already qualifies changes nothing
(its customer is in the output either way).

Equivalent rewrites pass on every variant."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from pytest_sqleval.core.api import Grader

from .conftest import assert_coincidence_caught, assert_rewrites_pass_keeping_rows, graded_with_variants


def make_shop(path: Path) -> None:
    """Customers 1-40 bought in store in every quarter of 2001; 41-60 only in 2000. Odd
    customers among 1-40 bought on the web in May 2001; the others in October."""
    con = duckdb.connect(str(path))
    day = "DATE '2000-01-01' + CAST(i AS INTEGER)"
    con.execute("CREATE TABLE date_dim (d_date_sk INTEGER NOT NULL, d_date DATE NOT NULL, d_year INTEGER NOT NULL, "
                "d_qoy INTEGER NOT NULL, d_moy INTEGER NOT NULL)")
    con.execute(f"INSERT INTO date_dim SELECT 2451000 + i, {day}, year({day}), quarter({day}), month({day}) "
                "FROM range(731) t(i)")
    con.execute("CREATE TABLE customer (c_customer_sk INTEGER NOT NULL, c_customer_id VARCHAR NOT NULL, "
                "c_state VARCHAR NOT NULL)")
    con.execute("INSERT INTO customer SELECT i, 'CUST' || lpad(CAST(i AS VARCHAR), 4, '0'), "
                "CASE WHEN i % 3 = 0 THEN 'GA' ELSE 'TN' END FROM range(1, 61) t(i)")
    con.execute("CREATE TABLE store_sales (ss_sold_date_sk INTEGER NOT NULL, ss_customer_sk INTEGER NOT NULL, "
                "ss_ticket_number INTEGER NOT NULL, ss_quantity INTEGER NOT NULL)")
    # 2001's days start at 2451366; one sale a quarter (days 20, 110, 200, 290 of 2001) for 1-40
    con.execute("INSERT INTO store_sales SELECT 2451366 + 20 + 90 * (i % 4), 1 + i // 4, 1000 + i, 1 + i % 9 "
                "FROM range(160) t(i)")
    con.execute("INSERT INTO store_sales SELECT 2451000 + 5 * i, 41 + i % 20, 3000 + i, 1 + i % 5 FROM range(60) t(i)")
    con.execute("CREATE TABLE web_sales (ws_sold_date_sk INTEGER NOT NULL, ws_bill_customer_sk INTEGER NOT NULL, "
                "ws_order_number INTEGER NOT NULL, ws_quantity INTEGER NOT NULL)")
    # May 2001 (days 125-134 of the year) for odd customers, October (days 280-289) for even ones
    con.execute("INSERT INTO web_sales SELECT 2451366 + CASE WHEN i % 2 = 1 THEN 125 ELSE 280 END + i % 10, "
                "1 + i % 40, 5000 + i, 1 + i % 4 FROM range(80) t(i)")
    con.close()


GOLD = ("SELECT c_customer_id FROM customer c WHERE c_state = 'TN' "
        "AND EXISTS (SELECT * FROM store_sales, date_dim WHERE c.c_customer_sk = ss_customer_sk "
        "AND ss_sold_date_sk = d_date_sk AND d_year = 2001 AND d_qoy < 4) "
        "AND NOT EXISTS (SELECT * FROM web_sales, date_dim WHERE c.c_customer_sk = ws_bill_customer_sk "
        "AND ws_sold_date_sk = d_date_sk AND d_year = 2001 AND d_moy BETWEEN 4 AND 4 + 2) "
        "ORDER BY c_customer_id")
COINCIDENCES = [
    GOLD.replace(" AND d_qoy < 4", ""),  # a fourth-quarter sale of a customer with no earlier one
    GOLD.replace("d_qoy < 4", "d_qoy < 5"),
    GOLD.replace("BETWEEN 4 AND 4 + 2", "BETWEEN 3 AND 4 + 2"),  # a March web sale of a kept customer
]
EQUIVALENTS = [
    GOLD.replace("d_qoy < 4", "d_qoy <= 3"),
    GOLD.replace("BETWEEN 4 AND 4 + 2", "BETWEEN 4 AND 6"),
    GOLD.replace("EXISTS (SELECT * FROM store_sales, date_dim WHERE c.c_customer_sk = ss_customer_sk AND",
                 "c.c_customer_sk IN (SELECT ss_customer_sk FROM store_sales, date_dim WHERE"),
]


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Grader]]:
    yield from graded_with_variants(tmp_path_factory, "shop", make_shop, GOLD)


@pytest.mark.parametrize("wrong", COINCIDENCES, ids=["qoy-dropped", "qoy-moved", "window-moved"])
def test_a_conjunct_inside_a_correlated_subquery_is_caught(graded: tuple[Path, Grader], wrong: str) -> None:
    folder, grader = graded
    assert_coincidence_caught(folder / "shop.duckdb", grader, wrong, GOLD)


def test_equivalent_rewrites_pass_and_the_variants_keep_dates_and_tickets(graded: tuple[Path, Grader]) -> None:
    folder, grader = graded
    assert_rewrites_pass_keeping_rows(folder, grader, GOLD, EQUIVALENTS,
                                      references=(("store_sales", "ss_sold_date_sk", "date_dim", "d_date_sk"),
                                                  ("web_sales", "ws_sold_date_sk", "date_dim", "d_date_sk")),
                                      numbers=(("store_sales", "ss_ticket_number"), ("web_sales", "ws_order_number")))
