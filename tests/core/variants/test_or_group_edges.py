"""Edge witnesses for the terms of an OR's AND-groups (issue 31, ``pathedges._group_terms``), for
an IN list inside an IN subquery, and a pair witness for a comparison of two tables' columns.

TPC-DS q13 and q48 filter by an OR of AND-groups, each naming a demographic, a price range and
the join itself: ``(ss_cdemo_sk = cd_demo_sk AND cd_gender = 'F' AND cd_education_status =
'Unknown' AND ss_sales_price BETWEEN 30 AND 44) OR (...)``. Where no pinned sale passes a
group, an ``=`` flipped to ``<>`` in it, or a state member changed to one no store has,
returns the gold's rows. Only a sale whose price is in that group's range, joined to a row on
the term's edge, tells them apart. Before, the join named only inside the groups was no join
(no edge, no witness), and a copy of a sale reaching by another group kept its price outside
this one's range; and a subset, knowing no reference from sales to stores, left sales whose store it dropped.

The star is ``test_path_edges``': 2000's sales are male college graduates' in Tennessee stores."""
from __future__ import annotations

from pathlib import Path

from pytest_sqleval.core.variants.constraints import observe_constraints
from pytest_sqleval.core.variants.joinpath import gold_joins
from pytest_sqleval.core.variants.pathedges import path_golds
from pytest_sqleval.core.variants.separators import near_misses
from tests.core.variants.conftest import assert_caught_on_variants
from tests.core.variants.test_path_edges import make_star

PEOPLE = ("SELECT sum(ss_quantity) AS qty FROM store_sales, customer_demographics, date_dim "
          "WHERE ss_sold_date_sk = d_date_sk AND d_year = 2000 "
          "AND ((ss_cdemo_sk = cd_demo_sk AND cd_gender = 'M' AND cd_education_status = 'College' "
          "AND ss_sales_price BETWEEN 5 AND 20) "
          "OR (ss_cdemo_sk = cd_demo_sk AND cd_gender = 'F' AND cd_education_status = 'Unknown' "
          "AND ss_sales_price BETWEEN 30 AND 44))")
STORES = ("SELECT count(*) AS n, sum(ss_quantity) AS qty FROM store_sales, store, date_dim "
          "WHERE ss_sold_date_sk = d_date_sk AND d_year = 2000 "
          "AND ((ss_store_sk = s_store_sk AND s_state IN ('TN', 'GA') AND ss_quantity BETWEEN 1 AND 5) "
          "OR (ss_store_sk = s_store_sk AND s_state = 'OH' AND ss_quantity BETWEEN 6 AND 9))")
COINCIDENCES = [
    (PEOPLE, PEOPLE.replace("cd_gender = 'F'", "cd_gender <> 'F'")),
    (STORES, STORES.replace("'GA'", "'KY'")),
]
EQUIVALENTS = [
    (PEOPLE, PEOPLE.replace("AND ((ss_cdemo_sk = cd_demo_sk AND", "AND ss_cdemo_sk = cd_demo_sk AND ((")
     .replace("OR (ss_cdemo_sk = cd_demo_sk AND", "OR (")),
    (STORES, STORES.replace("IN ('TN', 'GA')", "IN ('GA', 'TN')").replace("BETWEEN 6 AND 9", ">= 6 AND ss_quantity <= 9")),
]


def test_a_join_every_group_repeats_is_a_join(tmp_path: Path) -> None:
    path = tmp_path / "star.duckdb"
    make_star(path)
    joins = gold_joins([PEOPLE, STORES], "duckdb", {"store_sales": {"ss_cdemo_sk", "ss_store_sk", "ss_sold_date_sk"},
                                                    "customer_demographics": {"cd_demo_sk"}, "store": {"s_store_sk"},
                                                    "date_dim": {"d_date_sk"}})
    assert {("store_sales", "ss_cdemo_sk", "customer_demographics", "cd_demo_sk"),
            ("store_sales", "ss_store_sk", "store", "s_store_sk")} <= joins
    c = observe_constraints(path, golds=([PEOPLE, STORES], "duckdb"))
    found = {g.sql: g for g in path_golds([PEOPLE, STORES], "duckdb", "duckdb", c.tables, c.dependencies)}
    grouped = {(p.attribute, p.rendered) for g in found.values() for p in g.probes if p.sources_sql}
    assert {("cd_gender", "cd_gender = 'F'"), ("cd_education_status", "cd_education_status = 'Unknown'"),
            ("s_state", "s_state IN ('TN', 'GA')"), ("s_state", "s_state = 'OH'")} <= grouped
    # a copy for the second group is made of a sale in its price range: the OR stands in as that group's terms
    probe = next(p for p in found[PEOPLE].probes if p.rendered == "cd_gender = 'F'")
    assert "BETWEEN 30 AND 44" in probe.sources_sql and "BETWEEN 5 AND 20" not in probe.sources_sql


def test_terms_of_an_or_of_and_groups_are_caught(tmp_path: Path) -> None:
    path = tmp_path / "star.duckdb"
    make_star(path)
    assert_caught_on_variants(path, tmp_path, [PEOPLE, STORES], COINCIDENCES, EQUIVALENTS,
                              (("ss_sold_date_sk", "date_dim", "d_date_sk"),
                               ("ss_cdemo_sk", "customer_demographics", "cd_demo_sk"),
                               ("ss_store_sk", "store", "s_store_sk")))


def test_an_in_list_inside_an_in_subquery_gets_a_row_per_member(tmp_path: Path) -> None:
    """TPC-DS q56's ``i_item_id IN (SELECT i_item_id FROM item WHERE i_color IN (...))``: a
    member no reaching sale's item has ('Home' here: 2000's sales are of every category, so the
    list is cut to one category 2000 does not sell in a month) is told apart from another only by
    a sale of an item whose id the subquery gives for that member."""
    path = tmp_path / "star.duckdb"
    make_star(path)
    gold = ("SELECT i_item_id, sum(ss_quantity) AS q FROM store_sales, item, date_dim WHERE ss_item_sk = i_item_sk "
            "AND ss_sold_date_sk = d_date_sk AND d_year = 2000 "
            "AND i_item_id IN (SELECT i_item_id FROM item WHERE i_category IN ('Books', 'Home')) "
            "GROUP BY i_item_id ORDER BY i_item_id")
    c = observe_constraints(path, golds=([gold], "duckdb"))
    (found,) = path_golds([gold], "duckdb", "duckdb", c.tables, c.dependencies)
    probe = next(p for p in found.probes if p.attribute == "i_item_id")
    assert probe.members == 2
    import duckdb
    con = duckdb.connect(str(path), read_only=True)
    rows = con.execute(probe.targets_sql, [7] * probe.parts).fetchall()
    con.close()
    categories = {n: ["Books", "Music", "Home"][int(r[3][4:]) % 3] for r in rows for n in [r[4]]}
    assert [categories[0], categories[1]] == ["Books", "Home"]  # a member's row each, passing
    assert {int(r[2]) for r in rows if r[4] < 2} == {1}
    assert ("Music", 0) in {(categories[r[4]], int(r[2])) for r in rows}  # beside a member, outside the list


def test_a_comparison_of_two_tables_columns_gets_a_pair_witness(tmp_path: Path) -> None:
    """TPC-DS q72's ``inv_quantity_on_hand < cs_quantity``, flipped to ``<=``, differs only on an
    inventory row whose quantity equals the sale's it is joined to: the inventory row is set,
    in place, to that sale's quantity (``pair=`` with no column of its own)."""
    import duckdb
    path = tmp_path / "stock.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE catalog_sales AS SELECT i % 7 AS cs_item_sk, 1 + i % 5 AS cs_quantity, "
                "1000 + i AS cs_order_number FROM range(40) t(i)")
    con.execute("CREATE TABLE inventory AS SELECT i AS inv_item_sk, 3 * (i % 3) AS inv_quantity_on_hand, 1 AS inv_warehouse_sk "
                "FROM range(7) t(i)")
    con.close()
    gold = ("SELECT cs_item_sk, count(*) AS n FROM catalog_sales, inventory WHERE cs_item_sk = inv_item_sk "
            "AND inv_quantity_on_hand < cs_quantity GROUP BY cs_item_sk ORDER BY cs_item_sk")
    c = observe_constraints(path, golds=([gold], "duckdb"))
    flipped = [m for m in near_misses([gold], "duckdb", c.tables) if "flipped" in m.what]
    assert flipped and "<=" in flipped[0].sql
    assert ("main.inventory", "inv_quantity_on_hand", ("pair=",)) in {(t.table, t.column, t.edits)
                                                                     for t in flipped[0].targets}
