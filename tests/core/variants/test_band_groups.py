"""A dropped join predicate under a count band on tickets (issue 31, ``groups.band_terms``).

TPC-DS's shape at SF 0.01: sales grouped per (ticket, customer), the groups whose line count
lies in a band (``cnt BETWEEN 15 AND 20`` on the derived table, or the same as a HAVING),
joined to the customer. One store passes the gold's store filter, so a near-miss that drops
``ss_store_sk = s_store_sk`` pairs each kept sale with that store: the join's answer. The
sales with no store fall outside the gold's other filters. The one witness is a sale with no
store on a ticket the band keeps, a line of that ticket: a copy of it given a fresh ticket is
a group of one line, outside the band, and tells nothing apart. The copy keeps its ticket and
takes an item the ticket has no line of, so (ticket, item) stays unique.

Equivalent rewrites pass on every variant, and every variant keeps the store reference whole
and the items among the pinned ones."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from pytest_sqleval.core.api import Grader

from .conftest import assert_coincidence_caught, graded_with_variants


def make_tickets(path: Path) -> None:
    """One store in Midway; 36 tickets of 2000 in it of 8 to 25 lines, each line another item;
    one-line tickets of 2001 with no store."""
    con = duckdb.connect(str(path))
    day = "DATE '2000-01-01' + CAST(i AS INTEGER)"
    con.execute("CREATE TABLE date_dim (d_date_sk INTEGER NOT NULL, d_date DATE NOT NULL, d_year INTEGER NOT NULL)")
    con.execute(f"INSERT INTO date_dim SELECT 2451000 + i, {day}, year({day}) FROM range(731) t(i)")
    con.execute("CREATE TABLE store (s_store_sk INTEGER NOT NULL, s_store_id VARCHAR NOT NULL, "
                "s_city VARCHAR NOT NULL)")
    con.execute("INSERT INTO store VALUES (1, 'AAAAAAAABAAAAAAA', 'Midway')")
    con.execute("CREATE TABLE item (i_item_sk INTEGER NOT NULL, i_item_id VARCHAR NOT NULL)")
    con.execute("INSERT INTO item SELECT i, 'ITEM' || lpad(CAST(i AS VARCHAR), 4, '0') FROM range(1, 41) t(i)")
    con.execute("CREATE TABLE customer (c_customer_sk INTEGER NOT NULL, c_last_name VARCHAR NOT NULL, "
                "c_first_name VARCHAR NOT NULL)")
    con.execute("INSERT INTO customer SELECT i, ['Smith', 'Jones', 'Brown', 'Lee'][1 + i % 4], "
                "['Ann', 'Bob', 'Cy', 'Di', 'Ed'][1 + i % 5] FROM range(1, 21) t(i)")
    con.execute("CREATE TABLE store_sales (ss_sold_date_sk INTEGER NOT NULL, ss_item_sk INTEGER NOT NULL, "
                "ss_customer_sk INTEGER NOT NULL, ss_store_sk INTEGER, ss_ticket_number INTEGER NOT NULL, "
                "ss_quantity INTEGER NOT NULL)")
    con.execute("INSERT INTO store_sales SELECT 2451000 + 9 * t, 1 + (t * 7 + l) % 40, 1 + t % 20, 1, 1000 + t, "
                "1 + (t + l) % 9 FROM range(36) a(t), range(25) b(l) WHERE l < 8 + (t * 5) % 18")
    con.execute("INSERT INTO store_sales SELECT 2451000 + 366 + 5 * i, 1 + i % 40, 1 + i % 20, NULL, 5000 + i, "
                "1 + i % 7 FROM range(50) t(i)")
    con.close()


INNER = ("SELECT ss_ticket_number, ss_customer_sk, count(*) AS cnt FROM store_sales, date_dim, store "
         "WHERE ss_sold_date_sk = d_date_sk AND ss_store_sk = s_store_sk AND d_year = 2000 AND s_city = 'Midway' "
         "GROUP BY ss_ticket_number, ss_customer_sk")
GOLD = ("SELECT c_last_name, c_first_name, ss_ticket_number, cnt FROM (" + INNER + ") AS dn, customer "
        "WHERE ss_customer_sk = c_customer_sk AND cnt BETWEEN 15 AND 20 "
        "ORDER BY c_last_name, c_first_name, ss_ticket_number")
HAVING = GOLD.replace("GROUP BY ss_ticket_number, ss_customer_sk) AS dn, customer WHERE ss_customer_sk = c_customer_sk "
                      "AND cnt BETWEEN 15 AND 20",
                      "GROUP BY ss_ticket_number, ss_customer_sk HAVING count(*) BETWEEN 15 AND 20) AS dn, customer "
                      "WHERE ss_customer_sk = c_customer_sk")
EQUIVALENTS = [
    GOLD.replace("cnt BETWEEN 15 AND 20", "cnt >= 15 AND cnt <= 20"),
    HAVING,
    GOLD.replace("AND ss_store_sk = s_store_sk", "AND s_store_sk = ss_store_sk"),
]


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Grader]]:
    yield from graded_with_variants(tmp_path_factory, "tickets", make_tickets, GOLD)


@pytest.mark.parametrize("gold", [GOLD, HAVING], ids=["outer-band", "having-band"])
def test_a_dropped_store_join_under_a_ticket_count_band_is_caught(graded: tuple[Path, Grader], gold: str) -> None:
    folder, grader = graded
    assert_coincidence_caught(folder / "tickets.duckdb", grader, gold.replace(" AND ss_store_sk = s_store_sk", ""),
                              GOLD)


def test_equivalent_bands_pass_and_the_variants_keep_items_and_stores(graded: tuple[Path, Grader]) -> None:
    folder, grader = graded
    for right in EQUIVALENTS:
        verdict = grader.compare(right, GOLD)
        assert verdict.passed, (right, verdict.explanation)
    variants = sorted((folder / "cache").rglob("variant-*.duckdb"))
    assert variants
    for variant in variants:
        con = duckdb.connect(str(variant), read_only=True)
        try:
            # every item a copy takes is one the pinned column holds (no reference backs ss_item_sk here)
            assert con.execute("SELECT count(*) FROM store_sales WHERE ss_item_sk NOT BETWEEN 1 AND 40 "
                               "OR ss_store_sk NOT IN (SELECT s_store_sk FROM store)").fetchone() == (0,), variant.name
        finally:
            con.close()
