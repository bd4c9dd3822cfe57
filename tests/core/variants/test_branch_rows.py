"""A join predicate dropped in one branch of an INTERSECT (issue 31, ``clones._branch_witnesses``).

Three channels' (customer name, date) sets, intersected and counted. On the pinned data no
two channels share a tuple (store and web sales on other days, catalog sales by other
customers), so the gold counts 0, and so does a near-miss whose branch lost its customer or
date join (a cross product of its customers and its dates): nothing it adds is in the other
two branches. A variant with a tuple in every branch gives the gold a count, and one with a
tuple in two branches and a row of the third on that tuple's customer (or date) tells the
cross product apart.

Equivalent rewrites pass on every variant."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from pytest_sqleval.core.api import Grader

from .conftest import assert_coincidence_caught, assert_rewrites_pass_keeping_rows, graded_with_variants


def make_channels(path: Path) -> None:
    """Customers 1-10 buy in store on even days and on the web on odd days; customers 11-20
    buy from the catalog; every day of 2000, month sequence 1200-1211. Each channel numbers
    its sales in a range of its own (shared numbers would be an observed reference)."""
    con = duckdb.connect(str(path))
    day = "DATE '2000-01-01' + CAST(i AS INTEGER)"
    con.execute("CREATE TABLE date_dim (d_date_sk INTEGER NOT NULL, d_date DATE NOT NULL, "
                "d_month_seq INTEGER NOT NULL)")
    con.execute(f"INSERT INTO date_dim SELECT 2451000 + i, {day}, 1200 + month({day}) - 1 FROM range(366) t(i)")
    con.execute("CREATE TABLE customer (c_customer_sk INTEGER NOT NULL, c_first_name VARCHAR NOT NULL, "
                "c_last_name VARCHAR NOT NULL)")
    con.execute("INSERT INTO customer SELECT i, ['Ann', 'Bo', 'Cy', 'Di', 'Ed'][1 + i % 5], "
                "'Name' || CAST(i AS VARCHAR) FROM range(1, 21) t(i)")
    for table, p, customer, customers, parity, first in (("store_sales", "ss", "ss_customer_sk", 1, 0, 100),
                                                         ("web_sales", "ws", "ws_bill_customer_sk", 1, 1, 1000),
                                                         ("catalog_sales", "cs", "cs_bill_customer_sk", 11, 0, 5000)):
        number = "ss_ticket_number" if p == "ss" else f"{p}_order_number"
        con.execute(f"CREATE TABLE {table} ({p}_sold_date_sk INTEGER NOT NULL, {customer} INTEGER NOT NULL, "
                    f"{number} INTEGER NOT NULL, {p}_quantity INTEGER NOT NULL)")
        con.execute(f"INSERT INTO {table} SELECT 2451000 + 2 * ((i * 7) % 90) + {parity}, {customers} + i % 10, "
                    f"{first} + i, 1 + i % 9 FROM range(120) t(i)")
    con.close()


def branch(sales: str, date: str, customer: str) -> str:
    return (f"SELECT DISTINCT c_last_name, c_first_name, d_date FROM {sales}, date_dim, customer "
            f"WHERE {sales}.{date} = date_dim.d_date_sk AND {sales}.{customer} = customer.c_customer_sk "
            f"AND d_month_seq BETWEEN 1200 AND 1200 + 11")


STORE = branch("store_sales", "ss_sold_date_sk", "ss_customer_sk")
CATALOG = branch("catalog_sales", "cs_sold_date_sk", "cs_bill_customer_sk")
WEB = branch("web_sales", "ws_sold_date_sk", "ws_bill_customer_sk")
GOLD = f"SELECT count(*) FROM ({STORE} INTERSECT {CATALOG} INTERSECT {WEB}) AS hot"
DROPPED = [
    GOLD.replace("AND catalog_sales.cs_bill_customer_sk = customer.c_customer_sk ", ""),
    GOLD.replace("store_sales.ss_sold_date_sk = date_dim.d_date_sk AND ", ""),
]
EQUIVALENTS = [
    f"SELECT count(*) FROM ({WEB} INTERSECT {STORE} INTERSECT {CATALOG}) AS hot",
    ("SELECT count(*) FROM (SELECT c_last_name, c_first_name, d_date FROM store_sales "
     "JOIN date_dim ON ss_sold_date_sk = d_date_sk JOIN customer ON ss_customer_sk = c_customer_sk "
     f"WHERE d_month_seq BETWEEN 1200 AND 1211 INTERSECT {CATALOG} INTERSECT {WEB}) AS hot"),
]


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Grader]]:
    yield from graded_with_variants(tmp_path_factory, "channels", make_channels, GOLD)


def test_a_join_dropped_in_one_branch_of_an_intersect_is_caught(graded: tuple[Path, Grader]) -> None:
    folder, grader = graded
    for wrong in DROPPED:  # each a coincidence on the pinned data: every count is 0
        assert_coincidence_caught(folder / "channels.duckdb", grader, wrong, GOLD)


def test_equivalent_intersections_pass_and_the_variants_keep_the_references(graded: tuple[Path, Grader]) -> None:
    folder, grader = graded
    channels = (("store_sales", "ss_ticket_number", "ss_customer_sk"),
                ("catalog_sales", "cs_order_number", "cs_bill_customer_sk"),
                ("web_sales", "ws_order_number", "ws_bill_customer_sk"))
    assert_rewrites_pass_keeping_rows(folder, grader, GOLD, EQUIVALENTS,
                                      references=tuple((s, c, "customer", "c_customer_sk") for s, _, c in channels),
                                      numbers=tuple((s, n) for s, n, _ in channels))
