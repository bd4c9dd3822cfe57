"""Copies passing one AND-group of an OR alone, moved to a dimension row of that group
(issue 31, ``clones._disjunct_witnesses``).

TPC-DS q48 sums the quantities of a year's sales by an OR of AND-groups, each joining the
sale's address and bounding its net profit: ``(ss_addr_sk = ca_address_sk AND ca_state IN
('CO', 'OH', 'TX') AND ss_net_profit BETWEEN 0 AND 2000) OR (... IN ('OR', 'MN', 'KY') ...
BETWEEN 150 AND 3000) OR (...)``. Where no sale of the year lives in a group's states, a
bound of that group dropped, or one of its members dropped, sums the same. A copy of a sale
reaching through another group changes nothing: its edge copy (``ss_net_profit = 149``) must
pass the rest of its group, and no row does. Only a copy moved to an address of that group's
states, its profit inside the group's range (or just outside it), tells them apart.

The star is ``test_path_edges``': 2000's sales are all in Tennessee stores."""
from __future__ import annotations

from pathlib import Path

from tests.core.variants.conftest import assert_caught_on_variants
from tests.core.variants.test_path_edges import make_star

GOLD = ("SELECT sum(ss_quantity) AS qty FROM store_sales, store, customer_demographics, date_dim "
        "WHERE ss_sold_date_sk = d_date_sk AND d_year = 2000 "
        "AND ((ss_cdemo_sk = cd_demo_sk AND cd_gender = 'M' AND cd_education_status = 'College' "
        "AND ss_sales_price BETWEEN 5 AND 30) "
        "OR (ss_cdemo_sk = cd_demo_sk AND cd_gender = 'F' AND cd_education_status = 'Unknown' "
        "AND ss_sales_price BETWEEN 31 AND 44)) "
        "AND ((ss_store_sk = s_store_sk AND s_state IN ('TN', 'KY') AND ss_quantity BETWEEN 1 AND 9) "
        "OR (ss_store_sk = s_store_sk AND s_state IN ('OH', 'GA') AND ss_quantity BETWEEN 2 AND 5))")
COINCIDENCES = [
    (GOLD, GOLD.replace(" AND ss_quantity BETWEEN 2 AND 5", "")),  # a bound of a group no 2000 sale reaches
    (GOLD, GOLD.replace("BETWEEN 2 AND 5", "BETWEEN 2 AND 6")),
    (GOLD, GOLD.replace("IN ('OH', 'GA')", "IN ('OH')")),  # a member of that group
]
EQUIVALENTS = [
    (GOLD, GOLD.replace("AND ((ss_store_sk = s_store_sk AND", "AND ss_store_sk = s_store_sk AND ((")
     .replace("OR (ss_store_sk = s_store_sk AND s_state", "OR (s_state")),
    (GOLD, GOLD.replace("IN ('OH', 'GA')", "IN ('GA', 'OH')").replace("BETWEEN 2 AND 5",
                                                                      ">= 2 AND ss_quantity <= 5")),
]


def test_a_group_no_sale_reaches_is_told_apart_by_a_moved_copy(tmp_path: Path) -> None:
    path = tmp_path / "star.duckdb"
    make_star(path)
    assert_caught_on_variants(path, tmp_path, [GOLD], COINCIDENCES, EQUIVALENTS,
                              (("ss_sold_date_sk", "date_dim", "d_date_sk"), ("ss_store_sk", "store", "s_store_sk"),
                               ("ss_cdemo_sk", "customer_demographics", "cd_demo_sk")))
