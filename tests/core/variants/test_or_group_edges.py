"""Edge witnesses for the terms of an OR's AND-groups (issue 31, ``pathedges._group_terms``).

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
