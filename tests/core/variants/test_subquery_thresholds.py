"""Bounds inside a scalar subquery an outer column is compared with (issue 31, ``thresholds``).

TPC-H q20 keeps a supplier when a part-supplier pair of it has more available than half of
what it shipped in 1994: ``ps_availqty > (SELECT 0.5 * sum(l_quantity) FROM lineitem WHERE
l_partkey = ps_partkey AND l_suppkey = ps_suppkey AND l_shipdate >= date '1994-01-01' AND
l_shipdate < date '1995-01-01')``. Here every line ships in 1994 and every pair has far more
available than it ever ships: dropping either bound changes nothing on any subset of the
rows. Only a line of a kept supplier's pair shipped just outside the year, with the pair's
availability between the two sums (or a pair with no line of the year, where the gold's sum
is NULL and the near-miss's is not), tells them apart; the rows query of the correlated
subquery, rendered alone, never ran, so no separating witness was ever tried.

Equivalent rewrites pass on every variant."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from pytest_sqleval.core.api import Grader

from .conftest import assert_coincidence_caught, assert_rewrites_pass_keeping_rows, graded_with_variants


def make_supply(path: Path) -> None:
    """Suppliers 1-12 each hold one forest part (part k for supplier k), odd ones in Canada;
    parts 13-60 are held by two suppliers each. Three lines per pair, all shipped in 1994,
    quantities 1-50; every availability 1000 or more."""
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE nation (n_nationkey INTEGER NOT NULL PRIMARY KEY, n_name VARCHAR NOT NULL)")
    con.execute("INSERT INTO nation VALUES (0, 'FRANCE'), (1, 'CANADA'), (2, 'PERU')")
    con.execute("CREATE TABLE supplier (s_suppkey INTEGER NOT NULL PRIMARY KEY, s_name VARCHAR NOT NULL, "
                "s_nationkey INTEGER NOT NULL REFERENCES nation (n_nationkey))")
    con.execute("INSERT INTO supplier SELECT i, 'Supplier#' || lpad(CAST(i AS VARCHAR), 3, '0'), "
                "CASE WHEN i % 2 = 1 THEN 1 ELSE 0 END FROM range(1, 25) t(i)")
    con.execute("CREATE TABLE part (p_partkey INTEGER NOT NULL PRIMARY KEY, p_name VARCHAR NOT NULL)")
    con.execute("INSERT INTO part SELECT i, CASE WHEN i <= 12 THEN 'forest green ' ELSE 'misty blue ' END "
                "|| CAST(i AS VARCHAR) FROM range(1, 61) t(i)")
    con.execute("CREATE TABLE partsupp (ps_partkey INTEGER NOT NULL REFERENCES part (p_partkey), "
                "ps_suppkey INTEGER NOT NULL REFERENCES supplier (s_suppkey), ps_availqty INTEGER NOT NULL, "
                "PRIMARY KEY (ps_partkey, ps_suppkey))")
    con.execute("INSERT INTO partsupp SELECT i, i, 1000 + 37 * i FROM range(1, 13) t(i)")
    con.execute("INSERT INTO partsupp SELECT i, 1 + i % 24, 1000 + 53 * i FROM range(13, 61) t(i)")
    con.execute("INSERT INTO partsupp SELECT i, 1 + (i + 7) % 24, 1200 + 29 * i FROM range(13, 61) t(i)")
    con.execute("CREATE TABLE lineitem (l_orderkey INTEGER NOT NULL, l_linenumber INTEGER NOT NULL, "
                "l_partkey INTEGER NOT NULL, l_suppkey INTEGER NOT NULL, l_quantity DECIMAL(15, 2) NOT NULL, "
                "l_shipdate DATE NOT NULL)")
    con.execute("INSERT INTO lineitem SELECT 100 + row_number() OVER (ORDER BY ps_partkey, ps_suppkey), k, "
                "ps_partkey, ps_suppkey, 1 + (ps_partkey * 7 + k * 13) % 50, "
                "DATE '1994-02-01' + CAST((ps_partkey * 11 + k * 97) % 300 AS INTEGER) "
                "FROM partsupp, range(1, 4) t(k)")
    con.close()


GOLD = ("SELECT s_name FROM supplier, nation WHERE s_suppkey IN (SELECT ps_suppkey FROM partsupp "
        "WHERE ps_partkey IN (SELECT p_partkey FROM part WHERE p_name LIKE 'forest%') "
        "AND ps_availqty > (SELECT 0.5 * sum(l_quantity) FROM lineitem WHERE l_partkey = ps_partkey "
        "AND l_suppkey = ps_suppkey AND l_shipdate >= CAST('1994-01-01' AS DATE) "
        "AND l_shipdate < CAST('1995-01-01' AS DATE))) "
        "AND s_nationkey = n_nationkey AND n_name = 'CANADA' ORDER BY s_name")
COINCIDENCES = [
    GOLD.replace("AND l_shipdate >= CAST('1994-01-01' AS DATE) ", ""),  # a line shipped in 1993
    GOLD.replace(" AND l_shipdate < CAST('1995-01-01' AS DATE)", ""),  # a line shipped in 1995
]
EQUIVALENTS = [
    GOLD.replace("ps_availqty > (SELECT 0.5 * sum(l_quantity) FROM lineitem WHERE l_partkey = ps_partkey "
                 "AND l_suppkey = ps_suppkey AND l_shipdate >= CAST('1994-01-01' AS DATE) "
                 "AND l_shipdate < CAST('1995-01-01' AS DATE))",
                 "(SELECT 0.5 * sum(l_quantity) FROM lineitem WHERE l_suppkey = ps_suppkey "
                 "AND l_partkey = ps_partkey AND l_shipdate BETWEEN CAST('1994-01-01' AS DATE) "
                 "AND CAST('1994-12-31' AS DATE)) < ps_availqty"),
    GOLD.replace("0.5 * sum(l_quantity)", "sum(l_quantity) / 2"),
]


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Grader]]:
    yield from graded_with_variants(tmp_path_factory, "supply", make_supply, GOLD)


@pytest.mark.parametrize("wrong", COINCIDENCES, ids=["lower-bound-dropped", "upper-bound-dropped"])
def test_a_bound_inside_a_correlated_scalar_subquery_is_caught(graded: tuple[Path, Grader], wrong: str) -> None:
    folder, grader = graded
    assert_coincidence_caught(folder / "supply.duckdb", grader, wrong, GOLD)


def test_equivalent_rewrites_pass_and_the_variants_keep_their_references(graded: tuple[Path, Grader]) -> None:
    folder, grader = graded
    assert_rewrites_pass_keeping_rows(folder, grader, GOLD, EQUIVALENTS,
                                      references=(("partsupp", "ps_partkey", "part", "p_partkey"),
                                                  ("partsupp", "ps_suppkey", "supplier", "s_suppkey"),
                                                  ("lineitem", "l_partkey", "part", "p_partkey")),
                                      numbers=())
