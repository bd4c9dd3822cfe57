"""A copy of a row that reaches the output only through a correlated subquery takes the rows
that subquery reads with it (issue 31, ``clones.CloneWitness.children``).

TPC-DS q35 groups customers who bought in a store in 2002 (``EXISTS (SELECT * FROM
store_sales ... WHERE c.c_customer_sk = ss_customer_sk AND d_year = 2002 ...)``) and reports
``avg(cd_dep_count)`` per group. Where each group holds one customer, ``sum`` for ``avg``
coincides; a second customer in a group tells them apart. The witness "a copy of a customer
row that reaches the output" gave the copy a fresh key and none of the sales: the copy failed
the EXISTS and reached nothing (six of q35's ten coincidences missed on a development set).
Now the copy gets copies of its source's sales that satisfy each correlated subquery.

Here the same shape on a small DuckDB database: one customer a state bought in 2002."""
from __future__ import annotations

from pathlib import Path

import duckdb

from tests.core.variants.conftest import assert_caught_beside_a_rewrite

GOLD = ("SELECT c_state, count(*) AS n, avg(c_kids) AS kids FROM customer AS c WHERE EXISTS (SELECT * FROM "
        "store_sales WHERE c.c_customer_sk = ss_customer_sk AND ss_year = 2002) GROUP BY c_state ORDER BY c_state")


def make_shop(path: Path) -> None:
    """Twenty states of 100 customers; the first of each state bought in 2002, the others in
    2000 and 2001 only."""
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE customer (c_customer_sk INTEGER PRIMARY KEY, c_state VARCHAR NOT NULL, "
                "c_kids INTEGER NOT NULL)")
    con.execute("INSERT INTO customer SELECT i, 'S' || CAST(i % 20 AS VARCHAR), 1 + i % 3 FROM range(2000) t(i)")
    con.execute("CREATE TABLE store_sales (ss_ticket INTEGER PRIMARY KEY, ss_customer_sk INTEGER NOT NULL, "
                "ss_year INTEGER NOT NULL, ss_amount INTEGER NOT NULL)")
    con.execute("INSERT INTO store_sales SELECT t, t % 2000, CASE WHEN t % 2000 < 20 THEN 2000 + t % 3 "
                "ELSE 2000 + t % 2 END, 5 + t % 17 FROM range(1, 12001) s(t)")
    con.close()


def test_a_second_customer_in_a_group_takes_the_sales_its_exists_reads(tmp_path: Path) -> None:
    path = tmp_path / "shop.duckdb"
    make_shop(path)
    wrong = GOLD.replace("avg(c_kids)", "sum(c_kids)")
    right = GOLD.replace("EXISTS (SELECT * FROM store_sales WHERE c.c_customer_sk = ss_customer_sk AND "
                         "ss_year = 2002)", "c_customer_sk IN (SELECT ss_customer_sk FROM store_sales WHERE "
                         "ss_year = 2002)")
    assert_caught_beside_a_rewrite(path, tmp_path, GOLD, wrong, right)


EITHER_GOLD = (
    "SELECT c_state, count(*) AS n FROM customer AS c WHERE EXISTS (SELECT * FROM store_sales, date_dim WHERE "
    "c.c_customer_sk = ss_customer_sk AND ss_date_sk = d_date_sk AND d_year = 2002 AND d_qoy < 4) AND (EXISTS "
    "(SELECT * FROM web_sales, date_dim WHERE c.c_customer_sk = ws_customer_sk AND ws_date_sk = d_date_sk AND "
    "d_year = 2002 AND d_qoy < 4) OR EXISTS (SELECT * FROM catalog_sales, date_dim WHERE c.c_customer_sk = "
    "cs_customer_sk AND cs_date_sk = d_date_sk AND d_year = 2002 AND d_qoy < 4)) GROUP BY c_state ORDER BY c_state")


def make_channels(path: Path) -> None:
    """TPC-DS at SF 0.01 in small: store and web sales in 2001 and 2002 (web sales by half of
    the customers), catalog sales in 2001 only, so no catalog sale passes ``d_year = 2002`` and
    a changed bound on its quarter changes nothing on the pinned data."""
    con = duckdb.connect(str(path))
    # as TPC-DS's calendar, referenced by its date too: facts about dates no variant moves
    con.execute("CREATE TABLE date_dim (d_date_sk INTEGER PRIMARY KEY, d_date DATE NOT NULL UNIQUE, "
                "d_year INTEGER NOT NULL, d_qoy INTEGER NOT NULL)")
    con.execute("INSERT INTO date_dim SELECT i, d, year(d), quarter(d) FROM (SELECT i, DATE '2001-01-01' + "
                "CAST(i - 360 AS INTEGER) AS d FROM range(360, 1080) r(i))")
    con.execute("CREATE TABLE holiday (h_date DATE PRIMARY KEY REFERENCES date_dim (d_date))")
    con.execute("INSERT INTO holiday VALUES (DATE '2001-12-25'), (DATE '2002-12-20')")
    con.execute("CREATE TABLE customer (c_customer_sk INTEGER PRIMARY KEY, c_state VARCHAR NOT NULL)")
    con.execute("INSERT INTO customer SELECT i, 'S' || CAST(i % 12 AS VARCHAR) FROM range(600) t(i)")
    for table, prefix, last in (("store_sales", "ss", 1079), ("web_sales", "ws", 1079), ("catalog_sales", "cs", 719)):
        con.execute(f"CREATE TABLE {table} ({prefix}_ticket_number INTEGER PRIMARY KEY, {prefix}_customer_sk "
                    f"INTEGER NOT NULL REFERENCES customer, {prefix}_date_sk INTEGER NOT NULL REFERENCES date_dim)")
        step, buyers = {"store_sales": (7, 600), "web_sales": (11, 300), "catalog_sales": (13, 600)}[table]
        con.execute(f"INSERT INTO {table} SELECT {last} * 100 + t * {step}, (t * {step}) % {buyers}, "
                    f"360 + (t * 37) % ({last} - 359) "
                    f"FROM range(1, 3001) s(t)")
    con.close()


def test_a_customer_given_a_sale_in_the_quarter_no_sale_of_its_channel_reaches(tmp_path: Path) -> None:
    path = tmp_path / "channels.duckdb"
    make_channels(path)
    catalog = "cs_date_sk = d_date_sk AND d_year = 2002 AND d_qoy < 4"
    wrong = EITHER_GOLD.replace(catalog, catalog.replace("d_qoy < 4", "d_qoy <= 4"))
    right = EITHER_GOLD.replace(catalog, "cs_date_sk = d_date_sk AND d_year = 2002 AND NOT d_qoy >= 4")
    assert wrong != EITHER_GOLD and right != EITHER_GOLD
    assert_caught_beside_a_rewrite(path, tmp_path, EITHER_GOLD, wrong, right)
