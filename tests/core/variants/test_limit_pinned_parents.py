"""A LIMIT gold grown through parent rows copied in from the pinned data (issue 31, TPC-DS
q86 and q89: a subset variant keeps few items, so a web sale copy is moved to a pinned item of
another class). Every item is sold in the store too (a total dependency the variants keep): a
pinned item copied in alone broke it, and the check at the end of the growth undid the whole
gold, 101 rows and all. Such an item now gets a store sale of its own (a copy of one), and a
unit that still breaks a dependency is passed over, not the gold."""
from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

from pytest_sqleval.core.variants.constraints import observe_constraints
from tests.core.variants.conftest import assert_grown_past_limit, made
from tests.rows import scalar

LIMIT = 10
GOLD = ("SELECT i_brand, sum(ws_price) AS total FROM web_sales, item WHERE ws_item_sk = i_item_sk "
        f"GROUP BY i_brand ORDER BY i_brand LIMIT {LIMIT}")
STORE = "SELECT i_brand, count(*) FROM store_sales, item WHERE ss_item_sk = i_item_sk GROUP BY i_brand"


def make_shop(path: Path) -> None:
    """40 items of 20 brands (two each); every item sold twice in the store; the web sells the
    items of brands 1-10 only (two sales each): 10 rows of the gold, its LIMIT."""
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE item (i_item_sk INTEGER PRIMARY KEY, i_brand VARCHAR)")
    con.execute("CREATE TABLE store_sales (ss_item_sk INTEGER, ss_ticket_number INTEGER, ss_price DECIMAL(7,2), "
                "PRIMARY KEY (ss_item_sk, ss_ticket_number))")
    con.execute("CREATE TABLE web_sales (ws_item_sk INTEGER, ws_order_number INTEGER, ws_price DECIMAL(7,2), "
                "PRIMARY KEY (ws_item_sk, ws_order_number))")
    con.executemany("INSERT INTO item VALUES (?, ?)", [(k, f"brand {1 + (k - 1) // 2:02d}") for k in range(1, 41)])
    con.executemany("INSERT INTO store_sales VALUES (?, ?, ?)", [(k, 100 + 2 * k + j, 1.5 * k + j) for k in range(1, 41)
                                                                  for j in (0, 1)])
    con.executemany("INSERT INTO web_sales VALUES (?, ?, ?)", [(k, 500 + 2 * k + j, 2.5 * k + j) for k in range(1, 21)
                                                                for j in (0, 1)])
    con.close()


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return made(tmp_path_factory.mktemp("pinned_parents"), "shop", make_shop)


def test_a_pinned_item_copied_in_gets_the_store_sale_every_item_has(shop: Path, tmp_path: Path) -> None:
    """On a variant that keeps the items of brands 1-3 only (3 rows of the gold), the gold is
    grown past its LIMIT with web sales moved to pinned items of other brands, each copied in
    with a store sale: every item still has one, every sale an item."""
    c = observe_constraints(shop, golds=([GOLD, STORE], "duckdb"))
    assert any(d.origin == "total" and d.child == "main.item" and d.parent == "main.store_sales"
               for d in c.dependencies)
    variant = tmp_path / shop.name
    shutil.copy(shop, variant)
    con = duckdb.connect(str(variant))
    con.execute("DELETE FROM web_sales WHERE ws_item_sk > 6")
    con.execute("DELETE FROM store_sales WHERE ss_item_sk > 6")
    con.execute("DELETE FROM item WHERE i_item_sk > 6")
    assert_grown_past_limit(con, c, shop, GOLD, 3, LIMIT)
    con = duckdb.connect(str(variant), read_only=True)
    try:
        assert scalar(con, "SELECT count(*) FROM item WHERE i_item_sk NOT IN (SELECT ss_item_sk FROM store_sales)") == 0
        assert scalar(con, "SELECT count(*) FROM web_sales WHERE ws_item_sk NOT IN (SELECT i_item_sk FROM item)") == 0
        assert scalar(con, "SELECT count(*) FROM store_sales WHERE ss_item_sk NOT IN (SELECT i_item_sk FROM item)") == 0
        assert scalar(con, "SELECT count(*) - count(DISTINCT i_item_sk) FROM item") == 0
    finally:
        con.close()


def test_a_growth_that_ends_on_its_last_count_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The window-average shop's growth takes 6 counts of the gold; with 6 allowed it is kept:
    the count its last batch ran is the one the growth is judged by, not a seventh run (TPC-DS
    q89 reached 101 rows on its sixteenth count and was undone by a seventeenth)."""
    from pytest_sqleval.core.variants import outputs
    from tests.core.variants.test_limit_window_average import GOLD as MONTHS, LIMIT as MONTHS_LIMIT, make_shop as months
    path = tmp_path / "months.duckdb"
    months(path)
    c = observe_constraints(path, golds=([MONTHS], "duckdb"))
    variant = tmp_path / "variant.duckdb"
    shutil.copy(path, variant)
    con = duckdb.connect(str(variant))
    con.execute("DELETE FROM store_sales WHERE ss_sold_date_sk <> 101")
    growth = outputs.output_growths([MONTHS], "duckdb", "duckdb", c.tables, c.dependencies)[0]
    monkeypatch.setattr(outputs, "MAX_COUNTS", 6)
    writer = outputs.OutputWriter(con, "duckdb", c, path, 0)
    try:
        assert writer.grow(growth), writer.written.tally
        assert writer.written.tally["counts"] <= 6
        assert scalar(con, growth.count_sql) > MONTHS_LIMIT
    finally:
        writer.close()
        con.close()
