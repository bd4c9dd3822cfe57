"""LIMIT golds whose new output rows must pass a filter on the dimension or have a fact
that is no sale (issue 31; TPC-DS's held-out golds, described: a UNION ALL of channels grouped
by an item id under ``i_item_id IN (SELECT i_item_id FROM item WHERE i_category IN (...))``,
and a count of customers grouped by demographics under EXISTS on their sales). TPC-DS's item
ids are shared by an item's versions of other categories, and every encoded id (``i_item_id``,
``c_customer_id``) is also a ``t_time_id``: an item with a fresh id fails the filter when its
source is another category's version, and breaks that observed inclusion whatever the source;
a customer could not be copied at all (its id had no fresh value). ``outputs.py`` passes over
sources whose new item row fails the item's own conjuncts, and gives new ids a value every
referenced column holds, so that both golds are lifted past their LIMIT on some variants.
A correct rewrite passes on every variant."""
from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import duckdb
import pytest

from pytest_sqleval.core.variants.constraints import observe_constraints
from tests.core.variants.conftest import assert_limit_move_caught, assert_passes_on_variants, output_rows
from tests.rows import scalar

CHANNELS = ("SELECT i_item_id, sum(total) AS total FROM ("
            "SELECT i_item_id, sum(ss_sales_price) AS total FROM store_sales, item, date_dim WHERE ss_item_sk = "
            "i_item_sk AND ss_sold_date_sk = d_date_sk AND d_moy = 3 AND i_item_id IN (SELECT i_item_id FROM item "
            "WHERE i_category IN ('Music')) GROUP BY i_item_id UNION ALL "
            "SELECT i_item_id, sum(ws_sales_price) AS total FROM web_sales, item, date_dim WHERE ws_item_sk = "
            "i_item_sk AND ws_sold_date_sk = d_date_sk AND d_moy = 3 AND i_item_id IN (SELECT i_item_id FROM item "
            "WHERE i_category IN ('Music')) GROUP BY i_item_id) AS t GROUP BY i_item_id ORDER BY i_item_id, total "
            "LIMIT 6")
PEOPLE = ("SELECT cd_gender, cd_dep_count, count(*) AS cnt, max(cd_dep_count) AS most FROM customer AS c, "
          "customer_demographics WHERE cd_demo_sk = c.c_current_cdemo_sk AND EXISTS (SELECT * FROM store_sales, "
          "date_dim WHERE c.c_customer_sk = ss_customer_sk AND ss_sold_date_sk = d_date_sk AND d_moy < 4) AND "
          "EXISTS (SELECT * FROM web_sales WHERE c.c_customer_sk = ws_bill_customer_sk) "
          "GROUP BY cd_gender, cd_dep_count ORDER BY cd_gender, cd_dep_count LIMIT 5")
GOLDS = [CHANNELS, PEOPLE]
COINCIDENCES = [(g.replace(f"LIMIT {n}", f"LIMIT {m}"), g) for g, n in ((CHANNELS, 6), (PEOPLE, 5))
                for m in (n - 1, n + 1)]
EQUIVALENTS = [
    (CHANNELS.replace("i_category IN ('Music')", "i_category = 'Music'"), CHANNELS),
    (PEOPLE.replace("d_moy < 4", "d_moy <= 3"), PEOPLE),
]


def make_shop(path: Path) -> None:
    """2000 by day; a ``time_dim`` whose 300 ids hold every item and customer id; 8 items,
    4 ids each with a Music and a Books version; 6 demographics rows (gender by dependants),
    4 customers on 3 of them; sales of every item in March (store and web), store sales of
    every customer in January-March and web sales of each."""
    days = [dt.date(2000, 1, 1) + dt.timedelta(days=n) for n in range(366)]
    dates = [(2451545 + n, d, d.year, d.month) for n, d in enumerate(days)]
    ids = [f"AAAAAAAA{n:04d}" for n in range(300)]
    times = [(n, ids[n]) for n in range(300)]
    items = [(i, ids[(i - 1) // 2], "Music" if i % 2 else "Books") for i in range(1, 9)]
    demos = [(k, g, n) for k, (g, n) in enumerate([(g, n) for g in ("F", "M") for n in range(3)], start=1)]
    people = [(c, ids[200 + c], (1, 2, 4, 1)[c - 1]) for c in range(1, 5)]
    march = 2451545 + 60
    store = [(march + t, 1 + t % 8, 1 + t % 4, 1000 + t, 2.5 + t) for t in range(16)]
    store += [(2451545 + 20 * c, 1 + c, c, 2000 + c, 3.0) for c in range(1, 5)]
    web = [(march + t, 1 + t % 8, 1 + t % 4, 5000 + t, 1.5 + t) for t in range(12)]
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE date_dim (d_date_sk INTEGER, d_date DATE, d_year INTEGER, d_moy INTEGER)")
    con.execute("CREATE TABLE time_dim (t_time_sk INTEGER, t_time_id VARCHAR)")
    con.execute("CREATE TABLE item (i_item_sk INTEGER, i_item_id VARCHAR, i_category VARCHAR)")
    con.execute("CREATE TABLE customer_demographics (cd_demo_sk INTEGER, cd_gender VARCHAR, cd_dep_count INTEGER)")
    con.execute("CREATE TABLE customer (c_customer_sk INTEGER, c_customer_id VARCHAR, c_current_cdemo_sk INTEGER)")
    con.execute("CREATE TABLE store_sales (ss_sold_date_sk INTEGER, ss_item_sk INTEGER, ss_customer_sk INTEGER, "
                "ss_ticket_number INTEGER, ss_sales_price DECIMAL(7,2))")
    con.execute("CREATE TABLE web_sales (ws_sold_date_sk INTEGER, ws_item_sk INTEGER, ws_bill_customer_sk INTEGER, "
                "ws_order_number INTEGER, ws_sales_price DECIMAL(7,2))")
    con.executemany("INSERT INTO date_dim VALUES (?, ?, ?, ?)", dates)
    con.executemany("INSERT INTO time_dim VALUES (?, ?)", times)
    con.executemany("INSERT INTO item VALUES (?, ?, ?)", items)
    con.executemany("INSERT INTO customer_demographics VALUES (?, ?, ?)", demos)
    con.executemany("INSERT INTO customer VALUES (?, ?, ?)", people)
    con.executemany("INSERT INTO store_sales VALUES (?, ?, ?, ?, ?)", store)
    con.executemany("INSERT INTO web_sales VALUES (?, ?, ?, ?, ?)", web)
    con.close()


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("filtered")
    make_shop(root / "shop.duckdb")
    return root / "shop.duckdb", root / "cache"


def test_the_golds_return_fewer_rows_than_their_limit_on_the_pinned_data(shop: tuple[Path, Path]) -> None:
    path, _ = shop
    assert output_rows(path, CHANNELS) == 4  # 4 item ids, each with a Music version
    assert output_rows(path, PEOPLE) == 3  # 4 customers on 3 demographics rows


@pytest.mark.parametrize("wrong,gold", COINCIDENCES, ids=["channels-5", "channels-7", "people-4", "people-6"])
def test_a_limit_moved_by_one_is_caught_on_a_variant(shop: tuple[Path, Path], wrong: str, gold: str) -> None:
    path, cache = shop
    assert_limit_move_caught(path, cache, wrong, gold, GOLDS)


@pytest.mark.parametrize("right,gold", EQUIVALENTS, ids=["channels", "people"])
def test_a_correct_rewrite_passes_on_every_variant(shop: tuple[Path, Path], right: str, gold: str) -> None:
    path, cache = shop
    assert_passes_on_variants(path, cache, right, gold, GOLDS)


def test_new_items_and_customers_keep_the_filter_and_every_observed_inclusion(shop: tuple[Path, Path],
                                                                             tmp_path: Path) -> None:
    """On a copy of the pinned data, each gold is lifted past its LIMIT: new items are Music
    versions (their source's category: the gold's filter holds), new customers have their own
    sales; every item and customer id is still a ``t_time_id`` and unique where it was."""
    from pytest_sqleval.core.variants.outputs import OutputWriter, output_growths
    path, _ = shop
    variant = tmp_path / path.name
    shutil.copy(path, variant)
    c = observe_constraints(path, golds=(GOLDS, "duckdb"))
    assert any(d.child == "main.customer" and d.child_columns == ("c_customer_id",) and d.origin == "observed"
               for d in c.dependencies)
    growths = output_growths(GOLDS, "duckdb", "duckdb", c.tables, c.dependencies)
    assert len(growths) == 2
    con = duckdb.connect(str(variant))
    writer = OutputWriter(con, "duckdb", c, path, 0)
    try:
        for g in growths:
            assert writer.grow(g)
            assert scalar(con, g.count_sql) > g.limit
    finally:
        writer.close()
        con.close()
    con = duckdb.connect(str(variant), read_only=True)
    try:
        assert scalar(con, "SELECT count(*) FROM item WHERE i_item_sk > 8 AND i_category <> 'Music'") == 0
        assert scalar(con, "SELECT count(*) FROM item") > 8 and scalar(con, "SELECT count(*) FROM customer") > 4
        outside = scalar(con, "SELECT count(*) FROM (SELECT i_item_id AS v FROM item UNION ALL SELECT c_customer_id "
                              "FROM customer) WHERE v NOT IN (SELECT t_time_id FROM time_dim)")
        assert outside == 0
        assert scalar(con, "SELECT count(*) - count(DISTINCT c_customer_id) FROM customer") == 0
        assert scalar(con, "SELECT count(*) - count(DISTINCT c_customer_sk) FROM customer") == 0
        lonely = scalar(con, "SELECT count(*) FROM customer WHERE c_customer_sk NOT IN "
                             "(SELECT ws_bill_customer_sk FROM web_sales)")
        assert lonely == 0
    finally:
        con.close()
