"""A LIMIT gold that keeps only the groups far from their partition's average (issue 31,
TPC-DS's per-brand, per-month sums filtered by ``abs(sum - avg) / avg > 0.1``): a new month
made of one copy of a brand's only sale sums what that sale's month sums, so the average
stays put and neither month is kept; the growth stopped at no row. Two copies of the sale
in a new month, then one in the next, and so on, keep the brand's months around an average
that each of them is far from."""
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


def make_shop(path: Path) -> None:
    """A day of each month of 1999 and 2000; items 1-4 of brand A, 5-8 of brand B; on the
    pinned data brand A sells in January (10) and February (30), brand B in January (20) and
    March (50): 4 rows of the gold; the sales of 1999 are none of its rows."""
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE date_dim (d_date_sk INTEGER PRIMARY KEY, d_year INTEGER, d_moy INTEGER)")
    con.execute("CREATE TABLE item (i_item_sk INTEGER PRIMARY KEY, i_item_id VARCHAR, i_brand VARCHAR)")
    con.execute("CREATE TABLE store_sales (ss_item_sk INTEGER, ss_ticket_number INTEGER, ss_sold_date_sk INTEGER, "
                "ss_sales_price DECIMAL(7,2), PRIMARY KEY (ss_item_sk, ss_ticket_number))")
    con.executemany("INSERT INTO date_dim VALUES (?, ?, ?)",
                    [(100 * y + m, 1999 + y, m) for y in (0, 1) for m in range(1, 13)])
    con.executemany("INSERT INTO item VALUES (?, ?, ?)",
                    [(k, f"AAAAAAAA{k:04d}", "brand A" if k <= 4 else "brand B") for k in range(1, 9)])
    con.executemany("INSERT INTO store_sales VALUES (?, ?, ?, ?)",
                    [(1, 1, 101, 10.0), (2, 2, 102, 30.0), (5, 3, 101, 20.0), (6, 4, 103, 50.0), (3, 5, 1, 7.0),
                     (1, 6, 2, 7.0), (5, 7, 3, 7.0)])
    con.close()


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("window") / "shop.duckdb"
    make_shop(path)
    return path


def test_a_brand_with_one_sale_gets_months_far_from_its_average(shop: Path, tmp_path: Path) -> None:
    """On a variant that keeps each brand's January sale only (no row of the gold), the gold
    (4 rows pinned) is grown past its LIMIT with new months of those sales, every kept row
    still far from its brand's average, every copy a sale of an item and a day that exist."""
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
        assert scalar(con, "SELECT count(*) - count(DISTINCT ss_ticket_number) FROM store_sales") == 0
        assert scalar(con, "SELECT count(DISTINCT i_brand) FROM store_sales, item WHERE ss_item_sk = i_item_sk") == 2
    finally:
        con.close()
