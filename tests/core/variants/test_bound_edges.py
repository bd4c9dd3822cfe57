"""Edge rows on both sides of a bound, through the join path (issue 31, ``pathedges.py``).

TPC-DS-shaped (held-out seed 1010's misses, in golds of this test's own): sales per item over a
date window, a before/after split of that window by a ``CASE``, and an ``IN`` list of colours.
Sales fall on three weekdays only, and every bound of the golds sits on a day with no sale, as
do the days beside it; no sale has the list's last colour. So a bound moved one day either way,
the split's ``<`` written ``<=``, or the last colour swapped for another, returns the gold's rows
on the pinned data: only a sale joined to the day *on* the bound (an inward move, a flip), to
the day past it (an outward move), or to an item of that colour tells them apart. Before, the
edge witnesses wrote only the two days outside a range, never a row on it, nor on a split, and
always the same two members of a list.

Equivalent rewrites pass on every variant."""
from __future__ import annotations

from pathlib import Path

import duckdb

from pytest_sqleval.core.variants.constraints import observe_constraints
from pytest_sqleval.core.variants.pathedges import path_golds
from tests.core.variants.conftest import assert_caught_on_variants

COLOURS = ["red", "blue", "green", "pink", "gray", "white"]


def make_shop(path: Path) -> None:
    """Two years of days; 12 items, two of each colour; 400 sales of red and blue items on
    days 2-4 of each week (day numbers mod 7) of 2000."""
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE date_dim (d_date_sk INTEGER NOT NULL, d_date DATE NOT NULL, d_year INTEGER NOT NULL)")
    day = "DATE '2000-01-01' + CAST(i AS INTEGER)"
    con.execute(f"INSERT INTO date_dim SELECT 2451000 + i, {day}, year({day}) FROM range(731) t(i)")
    con.execute("CREATE TABLE item (i_item_sk INTEGER NOT NULL, i_item_id VARCHAR NOT NULL, "
                "i_color VARCHAR NOT NULL)")
    con.execute(f"INSERT INTO item SELECT i, 'ITEM' || lpad(CAST(i AS VARCHAR), 4, '0'), {COLOURS}[1 + i % 6] "
                "FROM range(12) t(i)")
    con.execute("CREATE TABLE store_sales (ss_sold_date_sk INTEGER NOT NULL, ss_item_sk INTEGER NOT NULL, "
                "ss_ticket_number INTEGER NOT NULL, ss_quantity INTEGER NOT NULL, "
                "ss_sales_price DECIMAL(7,2) NOT NULL)")
    # items 0, 1, 6, 7 (red, blue); days 2-4 of each week, days 30-330 of 2000
    con.execute("INSERT INTO store_sales SELECT 2451000 + 28 + 7 * (i % 43) + 2 + i % 3, [0, 1, 6, 7][1 + i % 4], "
                "1000 + i, 1 + i % 9, 5 + i % 40 FROM range(400) t(i)")
    # web orders shipped 2-4 or 8-10 days after the sale: none 5-7 days after
    con.execute("CREATE TABLE web_sales (ws_sold_date_sk INTEGER NOT NULL, ws_ship_date_sk INTEGER NOT NULL, "
                "ws_order_number INTEGER NOT NULL, ws_quantity INTEGER NOT NULL)")
    con.execute("INSERT INTO web_sales SELECT 2451000 + 20 + i % 150, "
                "2451000 + 20 + i % 150 + [2, 3, 4, 8, 9, 10][1 + i % 6], 5000 + i, 1 + i % 7 FROM range(300) t(i)")
    con.close()


STAR = "store_sales, item, date_dim WHERE ss_item_sk = i_item_sk AND ss_sold_date_sk = d_date_sk"
# day 56 (2000-02-26) and day 315 (2000-11-11) are days 0 of their weeks: no sale on them or beside them
WINDOW = (f"SELECT i_item_id, sum(ss_sales_price) AS sales FROM {STAR} "
          "AND d_date BETWEEN CAST('2000-02-26' AS DATE) AND CAST('2000-11-11' AS DATE) "
          "GROUP BY i_item_id ORDER BY i_item_id")
# day 175 (2000-06-24): a day 0 too
SPLIT = ("SELECT i_item_id, sum(CASE WHEN d_date < CAST('2000-06-24' AS DATE) THEN ss_quantity ELSE 0 END) AS before_, "
         "sum(CASE WHEN d_date >= CAST('2000-06-24' AS DATE) THEN ss_quantity ELSE 0 END) AS after_ "
         f"FROM {STAR} AND d_year = 2000 GROUP BY i_item_id ORDER BY i_item_id")
COLOURED = (f"SELECT i_color, count(*) AS n FROM {STAR} AND i_color IN ('red', 'blue', 'green', 'pink', 'gray') "
            "AND d_year = 2000 GROUP BY i_color ORDER BY i_color")
# day buckets of a difference of two day keys
DELAYS = ("SELECT d_year, sum(CASE WHEN ws_ship_date_sk - ws_sold_date_sk <= 6 THEN 1 ELSE 0 END) AS fast, "
          "sum(CASE WHEN ws_ship_date_sk - ws_sold_date_sk > 6 THEN ws_quantity ELSE 0 END) AS slow "
          "FROM web_sales, date_dim WHERE ws_ship_date_sk = d_date_sk GROUP BY d_year ORDER BY d_year")
GOLDS = [WINDOW, SPLIT, COLOURED, DELAYS]
COINCIDENCES = [
    (WINDOW, WINDOW.replace("'2000-02-26'", "'2000-02-27'")),  # inward: a sale on the 26th
    (WINDOW, WINDOW.replace("'2000-11-11'", "'2000-11-10'")),  # inward: a sale on the 11th
    (WINDOW, WINDOW.replace("'2000-11-11'", "'2000-11-12'")),  # outward: a sale on the 12th
    (SPLIT, SPLIT.replace("d_date < CAST", "d_date <= CAST")),  # a sale on the 24th
    (SPLIT, SPLIT.replace("d_date >= CAST('2000-06-24'", "d_date >= CAST('2000-06-23'")),  # on the 23rd
    (COLOURED, COLOURED.replace("'gray'", "'white'")),  # a gray item's sale
    (DELAYS, DELAYS.replace("<= 6", "< 6")),  # an order shipped 6 days after its sale
    (DELAYS, DELAYS.replace("> 6", "> 7")),  # one shipped 7 days after
]
EQUIVALENTS = [
    (WINDOW, WINDOW.replace("d_date BETWEEN CAST('2000-02-26' AS DATE) AND CAST('2000-11-11' AS DATE)",
                            "d_date >= CAST('2000-02-26' AS DATE) AND d_date <= CAST('2000-11-11' AS DATE)")),
    (SPLIT, SPLIT.replace("d_date < CAST('2000-06-24' AS DATE)", "NOT d_date >= CAST('2000-06-24' AS DATE)")),
    (COLOURED, COLOURED.replace("('red', 'blue', 'green', 'pink', 'gray')",
                                "('gray', 'pink', 'green', 'blue', 'red')")),
    (DELAYS, DELAYS.replace("ws_ship_date_sk - ws_sold_date_sk <= 6", "ws_ship_date_sk <= ws_sold_date_sk + 6")),
]


def test_a_bound_gets_a_row_on_each_side_and_a_split_is_probed(tmp_path: Path) -> None:
    path = tmp_path / "shop.duckdb"
    make_shop(path)
    c = observe_constraints(path, golds=(GOLDS, "duckdb"))
    found = {g.sql: g for g in path_golds(GOLDS, "duckdb", "duckdb", c.tables, c.dependencies)}
    window = [p for p in found[WINDOW].probes if p.attribute == "d_date"]
    con = duckdb.connect(str(path), read_only=True)
    rows = con.execute(window[0].targets_sql, [7] * window[0].parts).fetchall()
    # per bound, the day on it and the day past it: the day inside it tells nothing the bound's own day does not
    assert sorted((int(passes), str(value)) for _, _, passes, value, _ in rows) == [
        (0, "2000-02-25"), (0, "2000-11-12"), (1, "2000-02-26"), (1, "2000-11-11")]
    split = [p for p in found[SPLIT].probes if p.split]
    assert len(split) == 1  # `<` and `>=` of one split ask for the same two days
    rows = con.execute(split[0].targets_sql, [7] * split[0].parts).fetchall()
    assert sorted(str(value) for _, _, _, value, _ in rows) == ["2000-06-23", "2000-06-24"]
    # a bucket's bound on a difference of day keys: a copy shipped 6 and 7 days after its sale
    gaps = [p.gap for p in found[DELAYS].probes if p.gap is not None]
    assert gaps == [("ws_sold_date_sk", 1, ((6, True), (7, False)))]
    con.close()


def test_moved_bounds_flipped_splits_and_list_members_are_caught(tmp_path: Path) -> None:
    path = tmp_path / "shop.duckdb"
    make_shop(path)
    assert_caught_on_variants(path, tmp_path, GOLDS, COINCIDENCES, EQUIVALENTS,
                              (("ss_sold_date_sk", "date_dim", "d_date_sk"), ("ss_item_sk", "item", "i_item_sk")))
