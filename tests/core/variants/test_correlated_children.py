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
