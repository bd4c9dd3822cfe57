"""A dropped join to a dimension of one row (TPC-DS's ``store`` at SF 0.01) is caught, whether
the copy that shows it needs a partner row or sits under a window (issue 31).

With one store, ``FROM store_sales, store`` without ``ss_store_sk = s_store_sk`` equals the join
but for a sale whose store is NULL. The witness "a copy of a sale that reaches the output, its
``ss_store_sk`` NULL" makes one; two shapes kept it from mattering:

- TPC-DS q50 joins each sale to its return by ticket, item and customer. The copy takes a fresh
  ticket (``clones.fresh_columns``), so no return met it and it reached nothing. Now it takes a
  copy of its source's return, moved onto the fresh ticket (``clones.ChildRows``).
- TPC-DS q63 keeps the (manager, month) groups whose sum is more than 10 % from the manager's
  monthly average, ``avg(sum(ss_sales_price)) OVER (PARTITION BY i_manager_id)``. That window
  was read as a band on the groups, and the witness query it made was not SQL: no copy was
  written. A window's output is no band now (``witnesses.band_terms``)."""
from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from tests.core.variants.conftest import assert_caught_beside_a_rewrite

RETURNS_GOLD = (
    "SELECT s_store_name, sum(CASE WHEN sr_day - ss_day <= 30 THEN 1 ELSE 0 END) AS early, "
    "sum(CASE WHEN sr_day - ss_day > 30 THEN 1 ELSE 0 END) AS late FROM store_sales, store_returns, store "
    "WHERE ss_ticket_number = sr_ticket_number AND ss_item_sk = sr_item_sk AND ss_customer_sk = sr_customer_sk "
    "AND sr_day >= 200 AND ss_store_sk = s_store_sk GROUP BY s_store_name ORDER BY s_store_name")

WINDOW_GOLD = (
    "SELECT * FROM (SELECT ss_manager, sum(ss_price) AS sum_sales, avg(sum(ss_price)) OVER (PARTITION BY "
    "ss_manager) AS avg_sales FROM store_sales, store WHERE ss_store_sk = s_store_sk AND ss_month <= 6 "
    "GROUP BY ss_manager, ss_month) AS tmp WHERE abs(sum_sales - avg_sales) / avg_sales > 0.1 "
    "ORDER BY ss_manager, avg_sales, sum_sales")


def make_shop(path: Path) -> None:
    """One store; 3,000 sales of 3 lines per ticket, every fifth ticket's lines returned once,
    by the same ticket, item and customer; 30 sales with no store."""
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE date_dim (d_date_sk INTEGER PRIMARY KEY, d_year INTEGER NOT NULL)")
    con.execute("INSERT INTO date_dim SELECT i, 1990 + i // 365 FROM range(1, 4000) r(i)")
    # as TPC-DS's: a one-row table's every column is unique, its opening date a reference too, so
    # no copy of the store may take a fresh key: no new store, only a sale with a NULL one
    con.execute("CREATE TABLE store (s_store_sk INTEGER PRIMARY KEY, s_store_name VARCHAR NOT NULL, "
                "s_open_date_sk INTEGER NOT NULL REFERENCES date_dim)")
    con.execute("INSERT INTO store VALUES (1, 'ought', 2451)")
    con.execute("CREATE TABLE store_sales (ss_ticket_number INTEGER NOT NULL, ss_item_sk INTEGER NOT NULL, "
                "ss_customer_sk INTEGER NOT NULL, ss_store_sk INTEGER REFERENCES store, ss_day INTEGER NOT NULL, "
                "ss_month INTEGER NOT NULL, ss_manager INTEGER NOT NULL, ss_price INTEGER NOT NULL)")
    con.execute("INSERT INTO store_sales SELECT t // 3, 1 + (t * 7) % 50, 1 + (t // 3) % 97, 1, (t * 13) % 365, "
                "1 + t % 12, 1 + t % 9, 1 + (t * 31) % 47 + (t % 12) * (t % 5) FROM range(3000) r(t)")
    # as TPC-DS's, a few sales with no store (never returned, all after June): the column may hold NULL
    con.execute("INSERT INTO store_sales SELECT 5001 + 5 * t, 1 + t, 1 + t, NULL, 100 + t, 9, 1 + t % 9, 10 + t "
                "FROM range(30) r(t)")
    con.execute("CREATE TABLE store_returns (sr_ticket_number INTEGER NOT NULL, sr_item_sk INTEGER NOT NULL, "
                "sr_customer_sk INTEGER NOT NULL, sr_day INTEGER NOT NULL)")
    con.execute("INSERT INTO store_returns SELECT ss_ticket_number, ss_item_sk, ss_customer_sk, ss_day + "
                "(ss_ticket_number * 11) % 60 FROM store_sales WHERE ss_ticket_number % 5 = 0")
    con.close()


@pytest.mark.parametrize("gold", [RETURNS_GOLD, WINDOW_GOLD], ids=["a-sale-and-its-return", "under-a-window"])
def test_a_dropped_join_to_the_one_store_is_caught(tmp_path: Path, gold: str) -> None:
    path = tmp_path / "shop.duckdb"
    make_shop(path)
    wrong = gold.replace(" AND ss_store_sk = s_store_sk", "").replace("ss_store_sk = s_store_sk AND ", "")
    right = gold.replace("ss_store_sk = s_store_sk", "s_store_sk = ss_store_sk AND ss_store_sk IS NOT NULL")
    assert wrong != gold and right != gold
    assert_caught_beside_a_rewrite(path, tmp_path, gold, wrong, right)
