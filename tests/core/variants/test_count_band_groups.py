"""A count band over tickets: witnesses copy whole groups (issue 31, ``clones.CloneWitness.whole``).

TPC-DS q34 counts each ticket's lines that pass its filters (a day of the month, a year, a
household) in a derived table and keeps the tickets of 15 to 20 lines. A wrong bound on the day
(``BETWEEN 25 AND 29``) coincides wherever no ticket of that many lines falls on the 29th, and on
the pinned data none does. A variant tells them apart only with such a ticket there: one copied
line is a ticket of one line, outside the band, and a subset splits the pinned tickets so the
gold is empty on most variants (7 of 8 on every seed measured). The witness copies the source
ticket whole, every line moved alike, under one fresh ticket number; where no ticket reaches the
output on a variant, one of the pinned data's is copied in first, with the customer the enclosing
query joins it to (no foreign key names it).

Here the same shape on a small DuckDB star: many tickets of one to three lines, five of five
lines on days passing the filter, none on the 4th or the 29th."""
from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from pytest_sqleval.core.variants.build import MANIFEST_NAME, read_manifest
from tests.core.variants.conftest import assert_caught_beside_a_rewrite


def make_tickets(path: Path) -> None:
    """Two years of 30-day months (``d_dom`` 1-30); 40 customers; tickets 1-400 of one to three
    lines on any day; tickets 1001-1005 of five lines on the 2nd, 3rd, 26th and 27th, and
    1006 of five lines on the 15th."""
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE date_dim (d_date_sk INTEGER PRIMARY KEY, d_dom INTEGER NOT NULL, d_year INTEGER NOT NULL)")
    con.execute("INSERT INTO date_dim SELECT i, 1 + i % 30, 2000 + i // 360 FROM range(720) t(i)")
    con.execute("CREATE TABLE customer (c_customer_sk INTEGER PRIMARY KEY, c_last_name VARCHAR NOT NULL)")
    con.execute("INSERT INTO customer SELECT i, 'name' || lpad(CAST(i AS VARCHAR), 2, '0') FROM range(1, 41) t(i)")
    con.execute("CREATE TABLE store_sales (ss_ticket_number INTEGER NOT NULL, ss_item_sk INTEGER NOT NULL, "
                "ss_sold_date_sk INTEGER, ss_customer_sk INTEGER, ss_price DECIMAL(7,2) NOT NULL)")
    con.execute("INSERT INTO store_sales SELECT t, item, (t * 37) % 720, 1 + t % 40, 1 + (t * 13 + item) % 50 "
                "FROM range(1, 401) a(t), range(1, 4) b(item) WHERE item <= 1 + (t * 7) % 3")
    for ticket, day in ((1001, 1), (1002, 2), (1003, 25), (1004, 26), (1005, 391), (1006, 14)):
        con.execute(f"INSERT INTO store_sales SELECT {ticket}, item, {day}, {ticket % 40 + 1}, 10 + item "
                    f"FROM range(1, 6) b(item)")
    con.close()


GOLD = ("SELECT c_last_name, ss_ticket_number, cnt FROM (SELECT ss_ticket_number, ss_customer_sk, count(*) AS cnt "
        "FROM store_sales, date_dim WHERE store_sales.ss_sold_date_sk = date_dim.d_date_sk "
        "AND (date_dim.d_dom BETWEEN 1 AND 3 OR date_dim.d_dom BETWEEN 25 AND 28) AND date_dim.d_year IN (2000, 2001) "
        "GROUP BY ss_ticket_number, ss_customer_sk) AS dn, customer "
        "WHERE ss_customer_sk = c_customer_sk AND cnt BETWEEN 5 AND 6 ORDER BY c_last_name, ss_ticket_number")


@pytest.mark.parametrize("wrong", [GOLD.replace("BETWEEN 25 AND 28", "BETWEEN 25 AND 29"),
                                   GOLD.replace("BETWEEN 1 AND 3", "BETWEEN 1 AND 4")],
                         ids=["upper-edge-of-the-second-range", "upper-edge-of-the-first-range"])
def test_a_day_bound_under_a_ticket_band_is_caught(tmp_path: Path, wrong: str) -> None:
    path = tmp_path / "tickets.duckdb"
    make_tickets(path)
    right = GOLD.replace("store_sales.ss_sold_date_sk = date_dim.d_date_sk",
                         "date_dim.d_date_sk = store_sales.ss_sold_date_sk")
    assert_caught_beside_a_rewrite(path, tmp_path, GOLD, wrong, right)
    said = [read_manifest(f) for f in (tmp_path / "cache").rglob(MANIFEST_NAME)]
    assert any("copied with the rest of its group (ss_ticket_number, ss_customer_sk)" in sentence
               for record in said for sentence in record.get("sentences", [])), said
    variants = sorted((tmp_path / "cache").rglob("variant-*.duckdb"))
    assert variants
    shown = 0
    for variant in variants:
        con = duckdb.connect(str(variant), read_only=True)
        assert con.execute("SELECT count(*) FROM store_sales WHERE ss_sold_date_sk NOT IN "
                           "(SELECT d_date_sk FROM date_dim)").fetchone() == (0,)
        assert con.execute("SELECT count(*) - count(DISTINCT (ss_ticket_number, ss_item_sk)) "
                           "FROM store_sales").fetchone() == (0,)
        shown += bool(con.execute(GOLD).fetchall())
        con.close()
    assert shown == len(variants)  # the gold answers something on every variant: a ticket copied in whole
