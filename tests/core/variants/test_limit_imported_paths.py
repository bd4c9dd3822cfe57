"""A LIMIT gold on a variant that keeps none of its reaching rows: one reaching path of the
pinned data is copied in (``CloneWriter.import_row``) with the rows it references (issue 31).
TPC-DS's item refers to other items (its class, category and manager ids are all item keys:
observed inclusions of ``item`` in itself), and so did the copy of a path: the referenced
item was refused for being of the same table, so no item, customer or catalog page could be
copied into a subset variant and most LIMIT golds were never grown there. The referenced
rows come along, a cycle of them (item 1's class is item 2, ..., item 8's is item 1) held by
the rows being copied."""
from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

from pytest_sqleval.core.variants.constraints import observe_constraints
from tests.rows import scalar

CYCLE = 8  # items 1..8 are the classes: item k's class is item k % 8 + 1
GOLD = ("SELECT i_item_id, sum(total) AS total FROM (SELECT i_item_id, sum(ss_sales_price) AS total "
        "FROM store_sales, item WHERE ss_item_sk = i_item_sk AND i_category IN ('Music', 'Books') "
        "GROUP BY i_item_id) AS t GROUP BY i_item_id ORDER BY i_item_id LIMIT 8")


def make_shop(path: Path) -> None:
    """40 items of 4 categories, each of one of 8 classes (an item key); two sales of every
    third item."""
    cats = ("Music", "Books", "Home", "Shoes")
    items = [(k, f"AAAAAAAA{k:04d}", k % CYCLE + 1, cats[k % 4]) for k in range(1, 41)]
    sales = [(k, 1000 + 2 * k + n, 1.5 + k % 3) for k in range(1, 41) if k % 3 == 0 for n in (0, 1)]
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE item (i_item_sk INTEGER, i_item_id VARCHAR, i_class_id INTEGER, i_category VARCHAR)")
    con.execute("CREATE TABLE store_sales (ss_item_sk INTEGER, ss_ticket_number INTEGER, "
                "ss_sales_price DECIMAL(7,2))")
    con.executemany("INSERT INTO item VALUES (?, ?, ?, ?)", items)
    con.executemany("INSERT INTO store_sales VALUES (?, ?, ?)", sales)
    con.close()


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("imported") / "shop.duckdb"
    make_shop(path)
    return path


def test_a_path_whose_item_refers_to_other_items_is_copied_into_an_empty_variant(shop: Path,
                                                                                tmp_path: Path) -> None:
    """On a variant with no item and no sale, the gold (6 rows on the pinned data, LIMIT
    8) is grown past its LIMIT: the copied path's item brings the items its class id names,
    around the cycle, and every class id is still an item key."""
    from pytest_sqleval.core.variants.outputs import OutputWriter, output_growths
    c = observe_constraints(shop, golds=([GOLD], "duckdb"))
    assert any(d.child == "main.item" and d.child_columns == ("i_class_id",) and d.parent == "main.item"
               for d in c.dependencies)
    variant = tmp_path / shop.name
    shutil.copy(shop, variant)
    con = duckdb.connect(str(variant))
    con.execute("DELETE FROM store_sales")
    con.execute("DELETE FROM item")
    growths = output_growths([GOLD], "duckdb", "duckdb", c.tables, c.dependencies)
    assert len(growths) == 1
    writer = OutputWriter(con, "duckdb", c, shop, 0)
    try:
        assert writer.grow(growths[0])
        assert scalar(con, growths[0].count_sql) > 8
    finally:
        writer.close()
        con.close()
    con = duckdb.connect(str(variant), read_only=True)
    try:
        assert scalar(con, "SELECT count(*) FROM item WHERE i_class_id NOT IN (SELECT i_item_sk FROM item)") == 0
        assert scalar(con, "SELECT count(*) - count(DISTINCT i_item_sk) FROM item") == 0
        assert scalar(con, "SELECT count(*) FROM item WHERE i_item_sk <= 8") == CYCLE  # the whole cycle came in
    finally:
        con.close()
