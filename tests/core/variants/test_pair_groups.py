"""Group witnesses on a table keyed by two references (issue 31, ``groups.Identity.pair``).

TPC-H's ``partsupp`` is keyed by (part, supplier), both references, with no declared key; a
copy of one of its rows duplicates that key whatever else it changes, so no group witness
was written there. q11 sums each part's stock value over the suppliers of one nation and
keeps the parts above a share of the nation's total: where each part has one such supplier,
``HAVING avg(...)`` keeps the same parts. The witness is a copy of the one row of a part
whose value lies under the threshold and over its half, moved to another supplier of that
nation the part has no row with: its sum then crosses the threshold, its average does not.
The same identity lets a count bound be reached on a line table keyed by (order, product)."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from pytest_sqleval.core.api import Grader

from .conftest import assert_coincidence_caught, assert_rewrites_pass_keeping_rows, graded_with_variants


def make_stock(path: Path) -> None:
    """Two nations of 6 suppliers; 120 parts, each stocked by one supplier of nation 1 (its
    value spread from 1 to 120 times 100) and two of nation 2."""
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE nation (n_nationkey INTEGER NOT NULL, n_name VARCHAR NOT NULL)")
    con.execute("INSERT INTO nation VALUES (1, 'GERMANY'), (2, 'FRANCE')")
    con.execute("CREATE TABLE supplier (s_suppkey INTEGER NOT NULL, s_nationkey INTEGER NOT NULL)")
    con.execute("INSERT INTO supplier SELECT i, 1 + i % 2 FROM range(1, 13) t(i)")
    con.execute("CREATE TABLE part (p_partkey INTEGER NOT NULL, p_name VARCHAR NOT NULL)")
    con.execute("INSERT INTO part SELECT p, 'part ' || p FROM range(1, 121) t(p)")
    con.execute("CREATE TABLE partsupp (ps_partkey INTEGER NOT NULL, ps_suppkey INTEGER NOT NULL, "
                "ps_availqty INTEGER NOT NULL, ps_supplycost DECIMAL(15,2) NOT NULL)")
    # a German supplier is even (2, 4, ..., 12); a French one odd
    con.execute("INSERT INTO partsupp SELECT p, 2 * (1 + p % 6), 1 + (p * 37) % 120, 100.00 FROM range(1, 121) t(p)")
    con.execute("INSERT INTO partsupp SELECT p, 1 + 2 * ((p + k) % 6), 5 + (p * 13) % 50, 3.50 "
                "FROM range(1, 121) t(p), range(2) u(k)")
    con.close()


GOLD = ("SELECT ps_partkey, sum(ps_supplycost * ps_availqty) AS value FROM partsupp, supplier, nation "
        "WHERE ps_suppkey = s_suppkey AND s_nationkey = n_nationkey AND n_name = 'GERMANY' GROUP BY ps_partkey "
        "HAVING sum(ps_supplycost * ps_availqty) > (SELECT sum(ps_supplycost * ps_availqty) * 0.01 "
        "FROM partsupp, supplier, nation WHERE ps_suppkey = s_suppkey AND s_nationkey = n_nationkey "
        "AND n_name = 'GERMANY') ORDER BY value DESC, ps_partkey")
AVG = GOLD.replace("HAVING sum(", "HAVING avg(", 1)
REWRITE = ("SELECT ps.ps_partkey, sum(ps.ps_availqty * ps.ps_supplycost) AS value FROM nation n "
           "JOIN supplier s ON s.s_nationkey = n.n_nationkey JOIN partsupp ps ON ps.ps_suppkey = s.s_suppkey "
           "WHERE n.n_name = 'GERMANY' GROUP BY ps.ps_partkey HAVING sum(ps.ps_availqty * ps.ps_supplycost) > "
           "(SELECT 0.01 * sum(ps_supplycost * ps_availqty) FROM partsupp, supplier, nation "
           "WHERE ps_suppkey = s_suppkey AND s_nationkey = n_nationkey AND n_name = 'GERMANY') "
           "ORDER BY value DESC, ps.ps_partkey")


@pytest.fixture(scope="module")
def stock(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Grader]]:
    yield from graded_with_variants(tmp_path_factory, "stock", make_stock, GOLD)


def test_avg_for_sum_against_a_threshold_is_caught_where_each_part_has_one_supplier(
        stock: tuple[Path, Grader]) -> None:
    folder, graded = stock
    assert_coincidence_caught(folder / "stock.duckdb", graded, AVG, GOLD)


def test_rewrites_pass_and_every_part_keeps_one_row_per_supplier(stock: tuple[Path, Grader]) -> None:
    folder, graded = stock
    assert_rewrites_pass_keeping_rows(folder, graded, GOLD, [REWRITE],
                                      (("partsupp", "ps_suppkey", "supplier", "s_suppkey"),
                                       ("partsupp", "ps_partkey", "part", "p_partkey")), ())
    for variant in sorted((folder / "cache").rglob("variant-*.duckdb")):
        con = duckdb.connect(str(variant), read_only=True)
        try:
            assert con.execute("SELECT count(*) FROM (SELECT ps_partkey, ps_suppkey FROM partsupp "
                               "GROUP BY ALL HAVING count(*) > 1)").fetchone() == (0,), variant.name
        finally:
            con.close()
