"""LIMIT golds whose pinned output is short because the pinned dimension holds few of the
groups they make (TPC-DS q36/q86's ROLLUP of categories and classes, q63/q89's monthly sales of
brands against their mean; issue 31): every category already meets each of its own two classes
and every Books brand each month the gold reads, so no existing item or date row a sale could be
moved to makes a new group, and LIMIT n - 1, n and n + 1 agree there. ``outputs.py`` adds new
item rows whose grouped names are each another item's (a Books item of a Music brand, a Books
item of a Music class) and a copy of a sale on each: new groups of values the pinned data holds,
on some variants, where the LIMIT moved by one is told apart. A correct rewrite passes on every
variant."""
from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import duckdb
import pytest

from pytest_sqleval.core.variants.constraints import observe_constraints
from tests.core.variants.conftest import assert_limit_move_caught, assert_passes_on_variants, output_rows
from tests.rows import scalar

CLASSES = ("SELECT i_category, i_class, sum(ss_sales_price) AS sales, grouping(i_category) + grouping(i_class) "
           "AS lochierarchy FROM store_sales, item, date_dim WHERE ss_item_sk = i_item_sk AND ss_sold_date_sk = "
           "d_date_sk AND d_year = 2000 GROUP BY ROLLUP (i_category, i_class) "
           "ORDER BY lochierarchy DESC, i_category, i_class LIMIT 12")
MONTHS = ("SELECT * FROM (SELECT i_brand, d_moy, sum(ss_sales_price) AS sales, avg(sum(ss_sales_price)) OVER "
          "(PARTITION BY i_brand) AS avg_sales FROM store_sales, item, date_dim WHERE ss_item_sk = i_item_sk "
          "AND ss_sold_date_sk = d_date_sk AND d_year = 2000 AND d_moy BETWEEN 1 AND 4 AND i_category = 'Books' "
          "GROUP BY i_brand, d_moy) AS t WHERE abs(sales - avg_sales) / avg_sales > 0.1 "
          "ORDER BY sales - avg_sales, i_brand, d_moy LIMIT 10")
GOLDS = [CLASSES, MONTHS]
COINCIDENCES = [(g.replace(f"LIMIT {n}", f"LIMIT {m}"), g) for g, n in ((CLASSES, 12), (MONTHS, 10))
                for m in (n - 1, n + 1)]
EQUIVALENTS = [
    (CLASSES.replace("FROM store_sales, item, date_dim WHERE ss_item_sk = i_item_sk AND ss_sold_date_sk = d_date_sk",
                     "FROM store_sales JOIN item ON i_item_sk = ss_item_sk JOIN date_dim ON d_date_sk = "
                     "ss_sold_date_sk WHERE TRUE"), CLASSES),
    (MONTHS.replace("d_moy BETWEEN 1 AND 4", "d_moy >= 1 AND d_moy <= 4"), MONTHS),
]


def make_shop(path: Path) -> None:
    """2000 by day; 12 items: Books (classes fiction, history; brands b1, b2), Music (pop,
    rock; m1, m2), Home (decor, kitchen; h1, h2), two items per class; 240 sales, each item
    sold in each of January-April with prices that differ by month."""
    days = [dt.date(2000, 1, 1) + dt.timedelta(days=n) for n in range(366)]
    dates = [(2451545 + n, d, d.year, d.month) for n, d in enumerate(days)]
    kinds = [("Books", "fiction", "b1"), ("Books", "history", "b2"), ("Music", "pop", "m1"), ("Music", "rock", "m2"),
             ("Home", "decor", "h1"), ("Home", "kitchen", "h2")]
    items = [(i, f"AAAAAAAA{i:04d}", *kinds[(i - 1) // 2]) for i in range(1, 13)]
    sales = [(2451545 + 31 * (t % 4) + t // 12, 1 + t % 12, 1000 + t, 1 + t % 5, (1 + t % 4) * 2.5 + (t % 12) * 0.1)
             for t in range(240)]
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE date_dim (d_date_sk INTEGER, d_date DATE, d_year INTEGER, d_moy INTEGER)")
    con.execute("CREATE TABLE item (i_item_sk INTEGER, i_item_id VARCHAR, i_category VARCHAR, i_class VARCHAR, "
                "i_brand VARCHAR)")
    con.execute("CREATE TABLE store_sales (ss_sold_date_sk INTEGER, ss_item_sk INTEGER, ss_ticket_number INTEGER, "
                "ss_quantity INTEGER, ss_sales_price DECIMAL(7,2))")
    con.executemany("INSERT INTO date_dim VALUES (?, ?, ?, ?)", dates)
    con.executemany("INSERT INTO item VALUES (?, ?, ?, ?, ?)", items)
    con.executemany("INSERT INTO store_sales VALUES (?, ?, ?, ?, ?)", sales)
    con.close()



@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("groups")
    make_shop(root / "shop.duckdb")
    return root / "shop.duckdb", root / "cache"


def test_the_golds_return_fewer_rows_than_their_limit_on_the_pinned_data(shop: tuple[Path, Path]) -> None:
    path, _ = shop
    assert output_rows(path, CLASSES) == 10  # 6 classes, 3 categories, 1 total
    assert 0 < output_rows(path, MONTHS) <= 8  # 2 Books brands by 4 months, those off their mean


@pytest.mark.parametrize("wrong,gold", COINCIDENCES, ids=["classes-11", "classes-13", "months-9", "months-11"])
def test_a_limit_moved_by_one_is_caught_on_a_variant(shop: tuple[Path, Path], wrong: str, gold: str) -> None:
    path, cache = shop
    assert_limit_move_caught(path, cache, wrong, gold, GOLDS)


@pytest.mark.parametrize("right,gold", EQUIVALENTS, ids=["classes", "months"])
def test_a_correct_rewrite_passes_on_every_variant(shop: tuple[Path, Path], right: str, gold: str) -> None:
    path, cache = shop
    assert_passes_on_variants(path, cache, right, gold, GOLDS)


def test_the_new_groups_hold_only_names_the_pinned_data_holds(shop: tuple[Path, Path], tmp_path: Path) -> None:
    """On a copy of the pinned data, each gold is lifted past its LIMIT by new item rows,
    each with a key of its own and every name one the pinned items hold, and sales that
    reference existing rows."""
    from pytest_sqleval.core.variants.outputs import OutputWriter, output_growths
    path, _ = shop
    variant = tmp_path / path.name
    shutil.copy(path, variant)
    c = observe_constraints(path, golds=(GOLDS, "duckdb"))
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
        assert scalar(con, "SELECT count(*) - count(DISTINCT i_item_sk) FROM item") == 0
        assert scalar(con, "SELECT count(*) FROM item") > 12
        names = con.execute("SELECT count(DISTINCT i_category), count(DISTINCT i_class), count(DISTINCT i_brand) "
                            "FROM item").fetchone()
        assert tuple(names or ()) == (3, 6, 6)  # only values the pinned data holds
        dangling = scalar(con, "SELECT count(*) FROM store_sales WHERE ss_item_sk NOT IN (SELECT i_item_sk FROM item) "
                               "OR ss_sold_date_sk NOT IN (SELECT d_date_sk FROM date_dim)")
        assert dangling == 0
    finally:
        con.close()
    said = [s for sentences in writer.written.sentences.values() for s in sentences]
    assert any("another row's i_class" in s or "another row's i_category" in s for s in said), said
    assert any("past its LIMIT 12" in s for s in said) and any("past its LIMIT 10" in s for s in said), said
