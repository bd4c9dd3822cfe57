"""A LIMIT gold that keeps only the groups far from their partition's average (issue 31,
TPC-DS's per-brand, per-month sums filtered by ``abs(sum - avg) / avg > 0.1``): a new month
made of one copy of a brand's only sale sums what that sale's month sums, so the average
stays put and neither month is kept; the growth stopped at no row. Two copies of the sale
in a new month, then one in the next, and so on, keep the brand's months around an average
that each of them is far from.

Where the variant's partitions have too few groups left to fill (TPC-DS q53/q63/q89:
per-manufacturer quarters, 12 of 101 rows), a new manufacturer with one quarter is its own
average: no row kept. A unit that makes a new partition gives it groups of 2p, p and p (two
copies of a sale in its quarter, one in each of two others, each at least a quarter from
their average): three rows per unit."""
from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

from pytest_sqleval.core.variants.constraints import observe_constraints
from tests.core.variants.conftest import assert_grown_past_limit
from tests.rows import scalar

LIMIT = 12  # two brands with a sale each: one month of each only, 2 x 12 months at most
GOLD = ("SELECT * FROM (SELECT i_brand, d_moy, sum(ss_sales_price) AS total, "
        "avg(sum(ss_sales_price)) OVER (PARTITION BY i_brand) AS avg_total "
        "FROM store_sales, item, date_dim WHERE ss_item_sk = i_item_sk AND ss_sold_date_sk = d_date_sk "
        "AND d_year = 2000 GROUP BY i_brand, d_moy) AS m "
        f"WHERE avg_total > 0 AND abs(total - avg_total) / avg_total > 0.1 ORDER BY total - avg_total, i_brand, d_moy "
        f"LIMIT {LIMIT}")
QUARTERS = ("SELECT * FROM (SELECT i_manufact_id, d_qoy, sum(ss_sales_price) AS total, "
            "avg(sum(ss_sales_price)) OVER (PARTITION BY i_manufact_id) AS avg_total "
            "FROM store_sales, item, date_dim WHERE ss_item_sk = i_item_sk AND ss_sold_date_sk = d_date_sk "
            "AND d_year = 2000 GROUP BY i_manufact_id, d_qoy) AS m "
            "WHERE avg_total > 0 AND abs(total - avg_total) / avg_total > 0.1 "
            f"ORDER BY avg_total, total, i_manufact_id LIMIT {LIMIT}")  # 2 manufacturers x 4 quarters: 8 rows at most


def make_shop(path: Path, quarters: bool = False) -> None:
    """A day of each month (``quarters``: of each quarter) of 1999 and 2000; items 1-4 of brand
    A (manufacturer 1), 5-8 of brand B (2); on the pinned data A sells in the first period (10)
    and the second (30), B in the first (20) and the third (50): 4 rows of the gold; the
    sales of 1999 are none of its rows."""
    period, periods, maker = ("d_qoy", 4, "i_manufact_id INTEGER") if quarters else ("d_moy", 12, "i_brand VARCHAR")
    con = duckdb.connect(str(path))
    con.execute(f"CREATE TABLE date_dim (d_date_sk INTEGER PRIMARY KEY, d_year INTEGER, {period} INTEGER)")
    con.execute(f"CREATE TABLE item (i_item_sk INTEGER PRIMARY KEY, i_item_id VARCHAR, {maker})")
    con.execute("CREATE TABLE store_sales (ss_item_sk INTEGER, ss_ticket_number INTEGER, ss_sold_date_sk INTEGER, "
                "ss_sales_price DECIMAL(7,2), PRIMARY KEY (ss_item_sk, ss_ticket_number))")
    con.executemany("INSERT INTO date_dim VALUES (?, ?, ?)",
                    [(100 * y + m, 1999 + y, m) for y in (0, 1) for m in range(1, periods + 1)])
    con.executemany("INSERT INTO item VALUES (?, ?, ?)",
                    [(k, f"AAAAAAAA{k:04d}", (1 if k <= 4 else 2) if quarters else "brand A" if k <= 4 else "brand B")
                     for k in range(1, 9)])
    con.executemany("INSERT INTO store_sales VALUES (?, ?, ?, ?)",
                    [(1, 1, 101, 10.0), (2, 2, 102, 30.0), (5, 3, 101, 20.0), (6, 4, 103, 50.0), (3, 5, 1, 7.0),
                     (1, 6, 2, 7.0), (5, 7, 3, 7.0)])
    con.close()


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("window") / "shop.duckdb"
    make_shop(path)
    return path


def _grown(pinned: Path, gold: str, tmp_path: Path) -> duckdb.DuckDBPyConnection:
    """A variant of ``pinned`` keeping each maker's first-period sale only (no row of the gold),
    grown past ``LIMIT`` for ``gold``; read-only, every copy a sale of an item and a day that exist."""
    c = observe_constraints(pinned, golds=([gold], "duckdb"))
    variant = tmp_path / pinned.name
    shutil.copy(pinned, variant)
    con = duckdb.connect(str(variant))
    con.execute("DELETE FROM store_sales WHERE ss_sold_date_sk <> 101")
    assert_grown_past_limit(con, c, pinned, gold, 0, LIMIT)
    con = duckdb.connect(str(variant), read_only=True)
    assert scalar(con, "SELECT count(*) FROM store_sales WHERE ss_item_sk NOT IN (SELECT i_item_sk FROM item) "
                       "OR ss_sold_date_sk NOT IN (SELECT d_date_sk FROM date_dim)") == 0
    return con


def test_a_brand_with_one_sale_gets_months_far_from_its_average(shop: Path, tmp_path: Path) -> None:
    """The gold (4 rows pinned) is grown past its LIMIT with new months of those sales, every
    kept row still far from its brand's average, each copy with its own ticket."""
    con = _grown(shop, GOLD, tmp_path)
    try:
        assert scalar(con, "SELECT count(*) - count(DISTINCT ss_ticket_number) FROM store_sales") == 0
        assert scalar(con, "SELECT count(DISTINCT i_brand) FROM store_sales, item WHERE ss_item_sk = i_item_sk") == 2
    finally:
        con.close()


def test_new_manufacturers_get_three_quarters_far_from_their_average(tmp_path: Path) -> None:
    """Two manufacturers' four quarters cannot fill the LIMIT: new manufacturers are made, each
    with groups kept (a one-quarter manufacturer is its own average)."""
    make_shop(tmp_path / "quarters.duckdb", quarters=True)
    grown = tmp_path / "grown"
    grown.mkdir()
    con = _grown(tmp_path / "quarters.duckdb", QUARTERS, grown)
    try:
        assert scalar(con, "SELECT count(*) - count(DISTINCT (ss_item_sk, ss_ticket_number)) FROM store_sales") == 0
        assert scalar(con, "SELECT count(DISTINCT i_manufact_id) FROM store_sales, item "
                           "WHERE ss_item_sk = i_item_sk") > 2
    finally:
        con.close()
