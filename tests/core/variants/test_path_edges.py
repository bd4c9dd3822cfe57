"""Edge witnesses through the join path (issue 31, ``pathedges.py``).

TPC-DS-shaped: a five-table star (sales, dates, items, demographics, stores) with no declared
key, joined by the golds (``ss_sold_date_sk = d_date_sk``). Every sale a gold's other
filters keep sits inside each dimension filter, so a near-miss that drops or moves one
dimension filter returns the gold's rows on the pinned data; only a sale joined to a
dimension row on that filter's edge, and passing every other filter, tells them apart; for
an OR on one dimension, a row for each truth value of its disjuncts; for a dimension of a
dimension (a customer's address), a copy of the middle row moved to it.

Equivalent rewrites pass on every variant."""
from __future__ import annotations

from pathlib import Path

import duckdb

from pytest_sqleval.core.variants.constraints import observe_constraints
from pytest_sqleval.core.variants.pathedges import path_golds
from tests.core.variants.conftest import assert_caught_on_variants


def make_star(path: Path) -> None:
    """Sales of 2000, months 3-5, in Tennessee stores, bought by male college graduates
    ("inside"), and sales of 2001 joined to any store and demographic ("outside"). The
    dimensions hold every other value (months 1-12 of both years, women, other degrees, other
    states), which no inside sale joins."""
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE date_dim (d_date_sk INTEGER NOT NULL, d_date DATE NOT NULL, d_year INTEGER NOT NULL, "
                "d_moy INTEGER NOT NULL)")
    day = "DATE '2000-01-01' + CAST(i AS INTEGER)"
    con.execute(f"INSERT INTO date_dim SELECT 2451000 + i, {day}, year({day}), month({day}) FROM range(731) t(i)")
    con.execute("CREATE TABLE item (i_item_sk INTEGER NOT NULL, i_item_id VARCHAR NOT NULL, "
                "i_category VARCHAR NOT NULL)")
    con.execute("INSERT INTO item SELECT i, 'ITEM' || lpad(CAST(i AS VARCHAR), 4, '0'), "
                "['Books', 'Music', 'Home'][1 + i % 3] FROM range(1, 31) t(i)")
    con.execute("CREATE TABLE customer_demographics (cd_demo_sk INTEGER NOT NULL, cd_gender VARCHAR NOT NULL, "
                "cd_education_status VARCHAR NOT NULL)")
    con.execute("INSERT INTO customer_demographics SELECT i, CASE WHEN i % 2 = 0 THEN 'M' ELSE 'F' END, "
                "['Primary', 'College', 'Advanced Degree', 'Unknown'][1 + i // 2 % 4] FROM range(1, 41) t(i)")
    con.execute("CREATE TABLE store (s_store_sk INTEGER NOT NULL, s_state VARCHAR NOT NULL)")
    con.execute("INSERT INTO store SELECT i, ['TN', 'GA', 'OH'][1 + i % 3] FROM range(1, 10) t(i)")
    con.execute("CREATE TABLE customer_address (ca_address_sk INTEGER NOT NULL, ca_state VARCHAR NOT NULL)")
    con.execute("INSERT INTO customer_address SELECT i, ['TN', 'KY', 'OH', 'GA'][1 + i % 4] FROM range(1, 21) t(i)")
    con.execute("CREATE TABLE customer (c_customer_sk INTEGER NOT NULL, c_current_addr_sk INTEGER NOT NULL)")
    con.execute("INSERT INTO customer SELECT i, 1 + i % 20 FROM range(50) t(i)")
    con.execute("CREATE TABLE store_sales (ss_sold_date_sk INTEGER NOT NULL, ss_item_sk INTEGER NOT NULL, "
                "ss_cdemo_sk INTEGER NOT NULL, ss_store_sk INTEGER NOT NULL, ss_ticket_number INTEGER NOT NULL, "
                "ss_quantity INTEGER NOT NULL, ss_sales_price DECIMAL(7,2) NOT NULL, ss_customer_sk INTEGER NOT NULL)")
    # inside: 2000-03-01 .. 2000-05-31 (days 60-151), TN stores (3, 6, 9), male college graduates (2, 10, 18, ...),
    # customers living in Tennessee (3, 7, 11, ...: addresses 4, 8, 12, ...)
    con.execute("INSERT INTO store_sales SELECT 2451000 + 60 + i % 92, 1 + i % 30, 2 + 8 * (i % 5), 3 * (1 + i % 3), "
                "1000 + i, 1 + i % 9, 5 + i % 40, [3, 7, 11, 15, 19][1 + i % 5] FROM range(300) t(i)")
    # outside: 2001, any store, any demographic
    con.execute("INSERT INTO store_sales SELECT 2451000 + 366 + i % 365, 1 + i % 30, 1 + i % 40, 1 + i % 9, "
                "5000 + i, 1 + i % 7, 3 + i % 50, i % 50 FROM range(900) t(i)")
    con.close()


STAR = ("store_sales, customer_demographics, date_dim, store, item WHERE ss_sold_date_sk = d_date_sk "
        "AND ss_item_sk = i_item_sk AND ss_store_sk = s_store_sk AND ss_cdemo_sk = cd_demo_sk")
RESULTS = (f"WITH results AS (SELECT i_item_id, ss_quantity AS agg1, ss_sales_price AS agg2 FROM {STAR} "
           "AND cd_gender = 'M' AND cd_education_status = 'College' AND d_year = 2000 AND d_moy BETWEEN 3 AND 5 "
           "AND s_state = 'TN') "
           "SELECT i_item_id, avg(agg1) AS agg1, sum(agg2) AS agg2 FROM results GROUP BY i_item_id ORDER BY i_item_id")
TOTAL = (f"SELECT count(*) AS n, sum(ss_sales_price) AS total FROM {STAR} AND cd_education_status IN ('College') "
         "AND d_date BETWEEN CAST('2000-03-01' AS DATE) AND CAST('2000-05-31' AS DATE) AND s_state = 'TN'")
EITHER = (f"SELECT i_category, count(*) AS n FROM {STAR} AND (cd_education_status = 'College' OR cd_gender = 'X') "
          "AND d_year = 2000 AND s_state = 'TN' GROUP BY i_category ORDER BY i_category")
HOMES = ("SELECT count(*) AS n FROM store_sales, customer, customer_address, date_dim WHERE ss_customer_sk = "
         "c_customer_sk AND c_current_addr_sk = ca_address_sk AND ss_sold_date_sk = d_date_sk "
         "AND ca_state IN ('TN', 'KY') AND d_year = 2000")
COINCIDENCES = [
    (HOMES, HOMES.replace("('TN', 'KY')", "('TN', 'OH')")),
    (EITHER, EITHER.replace("cd_gender = 'X'", "cd_gender <> 'X'")),
    (RESULTS, RESULTS.replace(" AND cd_education_status = 'College'", "")),
    (RESULTS, RESULTS.replace("BETWEEN 3 AND 5", "BETWEEN 3 AND 6")),
    (RESULTS, RESULTS.replace("BETWEEN 3 AND 5", "BETWEEN 2 AND 5")),
    (TOTAL, TOTAL.replace("'2000-05-31'", "'2000-06-01'")),
    (TOTAL, TOTAL.replace("IN ('College')", "<> 'Primary'")),
]
EQUIVALENTS = [
    (RESULTS, RESULTS.replace("d_moy BETWEEN 3 AND 5", "d_moy >= 3 AND d_moy <= 5")),
    (RESULTS, RESULTS.replace("cd_gender = 'M' AND cd_education_status = 'College'",
                              "cd_education_status = 'College' AND 'M' = cd_gender")),
    (TOTAL, TOTAL.replace("count(*)", "count(1)").replace("IN ('College')", "= 'College'")),
    (HOMES, HOMES.replace("IN ('TN', 'KY')", "IN ('KY', 'TN')")),
    (EITHER, EITHER.replace("(cd_education_status = 'College' OR cd_gender = 'X')",
                            "(cd_gender = 'X' OR 'College' = cd_education_status)")),
]


def test_edge_probes_reach_dimension_filters_inside_a_cte(tmp_path: Path) -> None:
    path = tmp_path / "star.duckdb"
    make_star(path)
    golds = [RESULTS, TOTAL, EITHER, HOMES]
    c = observe_constraints(path, golds=(golds, "duckdb"))
    found = path_golds(golds, "duckdb", "duckdb", c.tables, c.dependencies)
    assert len(found) == 4
    probes = {(p.parent.rsplit(".", 1)[-1], p.attribute) for g in found for p in g.probes}
    assert {("customer_demographics", "cd_education_status"), ("date_dim", "d_moy"),
            ("date_dim", "d_date"), ("store", "s_state"), ("customer_address", "ca_state")} <= probes
    con = duckdb.connect(str(path), read_only=True)
    moy = next(p for g in found for p in g.probes if p.attribute == "d_moy")
    rows = con.execute(moy.targets_sql, [7] * moy.parts).fetchall()
    # per bound: the bound itself and the nearest month of 2000 past it (the month inside it tells nothing more)
    assert {(int(passes), value) for _, _, passes, value, _ in rows} == {(0, 2), (1, 3), (0, 6), (1, 5)}
    con.close()


def test_dimension_filter_near_misses_are_caught_on_a_star(tmp_path: Path) -> None:
    path = tmp_path / "star.duckdb"
    make_star(path)
    golds = [RESULTS, TOTAL, EITHER, HOMES]
    assert_caught_on_variants(path, tmp_path, golds, COINCIDENCES, EQUIVALENTS,
                              (("ss_sold_date_sk", "date_dim", "d_date_sk"),
                               ("ss_cdemo_sk", "customer_demographics", "cd_demo_sk")))


def test_a_having_gold_over_the_same_tables_guards_the_edits(tmp_path: Path) -> None:
    """A group witness holds a HAVING gold's group at exactly its bound; a fact copy joined to
    that group would move it off (test_clone_witnesses' ``>= 51`` against ``>= 50``): such a
    gold is a guard of every gold whose leaves read one of its tables, and of no other."""
    path = tmp_path / "star.duckdb"
    make_star(path)
    big = ("SELECT i_category, count(*) FROM store_sales, item WHERE ss_item_sk = i_item_sk "
           "GROUP BY i_category HAVING count(*) >= 400")
    states = "SELECT s_state, count(*) FROM store GROUP BY s_state HAVING count(*) > 2"
    golds = [RESULTS, big, states, HOMES]
    c = observe_constraints(path, golds=(golds, "duckdb"))
    found = {g.sql: g for g in path_golds(golds, "duckdb", "duckdb", c.tables, c.dependencies)}
    assert set(found) == {RESULTS, HOMES}
    assert [s.lower() for s in found[RESULTS].guards] == [big.lower(), states.lower()]  # it reads store_sales, store
    assert [s.lower() for s in found[HOMES].guards] == [big.lower()]  # store_sales, not store
