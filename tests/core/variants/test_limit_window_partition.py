"""A LIMIT gold that keeps only the groups far from their window partition's average, where
the variant's partitions have too few groups left to fill (issue 31, TPC-DS q53/q63/q89:
per-manufacturer quarters filtered by ``abs(sum - avg) / avg > 0.1``, 12 of 101 rows). A new
manufacturer with one quarter is its own average: no row kept. A unit that makes a new
partition groups of 2p, p and p (two copies of a sale in its quarter, one in each of two others,
each at least a quarter from their average) adds three rows per unit."""
from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

from pytest_sqleval.core.variants.constraints import observe_constraints
from tests.core.variants.conftest import assert_grown_past_limit
from tests.rows import scalar

LIMIT = 12  # two manufacturers of four quarters each: 8 rows at most without a new manufacturer
GOLD = ("SELECT * FROM (SELECT i_manufact_id, d_qoy, sum(ss_sales_price) AS total, "
        "avg(sum(ss_sales_price)) OVER (PARTITION BY i_manufact_id) AS avg_total "
        "FROM store_sales, item, date_dim WHERE ss_item_sk = i_item_sk AND ss_sold_date_sk = d_date_sk "
        "AND d_year = 2000 GROUP BY i_manufact_id, d_qoy) AS m "
        "WHERE avg_total > 0 AND abs(total - avg_total) / avg_total > 0.1 ORDER BY avg_total, total, i_manufact_id "
        f"LIMIT {LIMIT}")


def make_shop(path: Path) -> None:
    """A day of each quarter of 1999 and 2000; items 1-4 of manufacturer 1, 5-8 of 2; on the
    pinned data manufacturer 1 sells in the first quarter (10) and the second (30),
    manufacturer 2 in the first (20) and the third (50): 4 rows of the gold; the sales of 1999
    are none of its rows."""
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE date_dim (d_date_sk INTEGER PRIMARY KEY, d_year INTEGER, d_qoy INTEGER)")
    con.execute("CREATE TABLE item (i_item_sk INTEGER PRIMARY KEY, i_item_id VARCHAR, i_manufact_id INTEGER)")
    con.execute("CREATE TABLE store_sales (ss_item_sk INTEGER, ss_ticket_number INTEGER, ss_sold_date_sk INTEGER, "
                "ss_sales_price DECIMAL(7,2), PRIMARY KEY (ss_item_sk, ss_ticket_number))")
    con.executemany("INSERT INTO date_dim VALUES (?, ?, ?)",
                    [(100 * y + q, 1999 + y, q) for y in (0, 1) for q in range(1, 5)])
    con.executemany("INSERT INTO item VALUES (?, ?, ?)",
                    [(k, f"AAAAAAAA{k:04d}", 1 if k <= 4 else 2) for k in range(1, 9)])
    con.executemany("INSERT INTO store_sales VALUES (?, ?, ?, ?)",
                    [(1, 1, 101, 10.0), (2, 2, 102, 30.0), (5, 3, 101, 20.0), (6, 4, 103, 50.0), (3, 5, 1, 7.0),
                     (1, 6, 2, 7.0), (5, 7, 3, 7.0)])
    con.close()


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("partition") / "shop.duckdb"
    make_shop(path)
    return path


def test_new_manufacturers_get_two_quarters_far_from_their_average(shop: Path, tmp_path: Path) -> None:
    """On a variant that keeps each manufacturer's first-quarter sale only (no row of the gold),
    the gold is grown past its LIMIT: new manufacturers, each with two groups kept; every
    copy a sale of an item and a day that exist, with its own ticket."""
    c = observe_constraints(shop, golds=([GOLD], "duckdb"))
    variant = tmp_path / shop.name
    shutil.copy(shop, variant)
    con = duckdb.connect(str(variant))
    con.execute("DELETE FROM store_sales WHERE ss_sold_date_sk <> 101")
    assert_grown_past_limit(con, c, shop, GOLD, 0, LIMIT)
    con = duckdb.connect(str(variant), read_only=True)
    try:
        assert scalar(con, "SELECT count(*) FROM store_sales WHERE ss_item_sk NOT IN (SELECT i_item_sk FROM item) "
                           "OR ss_sold_date_sk NOT IN (SELECT d_date_sk FROM date_dim)") == 0
        assert scalar(con, "SELECT count(*) - count(DISTINCT (ss_item_sk, ss_ticket_number)) FROM store_sales") == 0
        assert scalar(con, "SELECT count(DISTINCT i_manufact_id) FROM store_sales, item "
                           "WHERE ss_item_sk = i_item_sk") > 2
    finally:
        con.close()
