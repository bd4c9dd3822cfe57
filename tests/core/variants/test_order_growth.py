"""An ORDER BY over few output rows, a key reversed or dropped (issue 31, TPC-H q18 and q20).

TPC-H q18 returns two orders at scale 0.01, ordered by ``o_totalprice DESC, o_orderdate``;
the dearer one is also the older, so ``ORDER BY o_orderdate`` alone, or ``o_orderdate DESC``
as the second key, returns the gold's rows in the gold's order, and so does every subset of
the pinned data. q20 returns one supplier, so ``ORDER BY s_name DESC`` coincides; q21 one
supplier under ``numwait DESC, s_name``. On main (664f38a) no variant told q18's or q21's
apart (both fail there): the clone witnesses' LIMIT growth copies one line of an order (its
``sum(l_quantity) > 300`` then fails) and the tie witnesses are for ungrouped golds. A copy
of the order the gold puts last, with all its lines, a fresh key and the earliest date does
(a tie on the first key, sorting first on the second); a copy of the supplier whose late
lines each sit in a copy of their order does for q21. The q20-shaped case passes on main
too (on this small database a copy of the supplier alone reaches); here it guards the copy
with its part-supplies. The equivalent rewrites pass on every variant."""
from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_sqleval.core.api import Grader
from pytest_sqleval.core.variants.constraints import observe_constraints
from pytest_sqleval.core.variants.outputs import order_growths
from tests.core.variants.conftest import graded_with_variants, made


#: the orders past ``sum(l_quantity) > 300``: their price and date (17 dearer and older than 42)
TWO_BIG = {17: (480000, dt.date(1995, 10, 21)), 42: (420000, dt.date(1997, 4, 9))}


def make_orders(path: Path, big_orders: dict[int, tuple[int, dt.date]] = TWO_BIG) -> None:
    import duckdb
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE customer (c_custkey INTEGER PRIMARY KEY, c_name VARCHAR)")
    con.execute("CREATE TABLE orders (o_orderkey INTEGER PRIMARY KEY, o_custkey INTEGER, o_totalprice DECIMAL(12, 2), "
                "o_orderdate DATE)")
    con.execute("CREATE TABLE lineitem (l_orderkey INTEGER, l_linenumber INTEGER, l_quantity INTEGER)")
    con.executemany("INSERT INTO customer VALUES (?, ?)", [(c, f"Customer#{c:09d}") for c in range(1, 21)])
    day = dt.date(1992, 3, 1)
    orders, lines = [], []
    for o in range(1, 61):
        big = o in big_orders
        price, date = big_orders.get(o, (1000 + o % 7 * 313, day + dt.timedelta(days=o % 9 * 37)))
        orders.append((o, 1 + o % 20, price, date))
        for n in range(1, 8 if big else 4):
            lines.append((o, n, 45 if big else 1 + (o * n) % 30))
    con.executemany("INSERT INTO orders VALUES (?, ?, ?, ?)", orders)
    con.executemany("INSERT INTO lineitem VALUES (?, ?, ?)", lines)
    con.close()


GOLD = ("SELECT c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice, sum(l_quantity) FROM customer, orders, "
        "lineitem WHERE o_orderkey IN (SELECT l_orderkey FROM lineitem GROUP BY l_orderkey HAVING sum(l_quantity) > 300) "
        "AND c_custkey = o_custkey AND o_orderkey = l_orderkey GROUP BY c_name, c_custkey, o_orderkey, o_orderdate, "
        "o_totalprice ORDER BY o_totalprice DESC, o_orderdate LIMIT 100")
WRONG = {
    "first_key_dropped": GOLD.replace("ORDER BY o_totalprice DESC, o_orderdate", "ORDER BY o_orderdate"),
    "second_key_reversed": GOLD.replace("o_totalprice DESC, o_orderdate", "o_totalprice DESC, o_orderdate DESC"),
}
EQUIVALENTS = {
    "ordinals": GOLD.replace("ORDER BY o_totalprice DESC, o_orderdate", "ORDER BY 5 DESC, 4"),
    "exists": GOLD.replace("o_orderkey IN (SELECT l_orderkey FROM lineitem GROUP BY l_orderkey HAVING sum(l_quantity) "
                           "> 300)", "EXISTS (SELECT 1 FROM lineitem big WHERE big.l_orderkey = o_orderkey "
                                     "HAVING sum(big.l_quantity) > 300)"),
}


def make_suppliers(path: Path) -> None:
    import duckdb
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE supplier (s_suppkey INTEGER PRIMARY KEY, s_name VARCHAR, s_nation VARCHAR)")
    con.execute("CREATE TABLE partsupp (ps_partkey INTEGER, ps_suppkey INTEGER, ps_availqty INTEGER)")
    con.executemany("INSERT INTO supplier VALUES (?, ?, ?)",
                    [(s, f"Supplier#{s:09d}", "CANADA" if s % 4 == 1 else "PERU") for s in range(1, 21)])
    con.executemany("INSERT INTO partsupp VALUES (?, ?, ?)",
                    [(p, s, 9000 if (p, s) == (3, 13) else 100 + (p * s) % 4000) for p in range(1, 9)
                     for s in range(1, 21)])
    con.close()


SUPPLIER_GOLD = ("SELECT s_name FROM supplier WHERE s_suppkey IN (SELECT ps_suppkey FROM partsupp WHERE "
                 "ps_availqty > 5000) AND s_nation = 'CANADA' ORDER BY s_name")
SUPPLIER_WRONG = SUPPLIER_GOLD.replace("ORDER BY s_name", "ORDER BY s_name DESC")


def make_waits(path: Path) -> None:
    import duckdb
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE supplier (s_suppkey INTEGER PRIMARY KEY, s_name VARCHAR, s_nation VARCHAR)")
    con.execute("CREATE TABLE orders (o_orderkey INTEGER PRIMARY KEY, o_orderstatus VARCHAR)")
    con.execute("CREATE TABLE lineitem (l_orderkey INTEGER, l_linenumber INTEGER, l_suppkey INTEGER, "
                "l_commitdate DATE, l_receiptdate DATE)")
    con.executemany("INSERT INTO supplier VALUES (?, ?, ?)",
                    [(s, f"Supplier#{s:09d}", "SAUDI ARABIA" if s % 3 == 0 else "PERU") for s in range(1, 13)])
    con.executemany("INSERT INTO orders VALUES (?, ?)", [(o, "F" if o % 5 else "O") for o in range(1, 41)])
    day, lines = dt.date(1995, 1, 1), []
    for o in range(1, 41):
        for n in range(1, 4):
            s = 1 + (o + n * 4) % 12
            late = (s == 3 and o <= 20) or (s % 3 != 0 and (o + n) % 2 == 0)
            commit = day + dt.timedelta(days=(o * 3 + n) % 17)  # repeated: no date is a key
            lines.append((o, n, s, commit, commit + dt.timedelta(days=4 if late else -2)))
    con.executemany("INSERT INTO lineitem VALUES (?, ?, ?, ?, ?)", lines)
    con.close()

WAITS_GOLD = ("SELECT s_name, count(*) AS numwait FROM supplier, lineitem l1, orders WHERE s_suppkey = l1.l_suppkey "
        "AND o_orderkey = l1.l_orderkey AND o_orderstatus = 'F' AND l1.l_receiptdate > l1.l_commitdate "
        "AND EXISTS (SELECT * FROM lineitem l2 WHERE l2.l_orderkey = l1.l_orderkey AND l2.l_suppkey <> l1.l_suppkey) "
        "AND NOT EXISTS (SELECT * FROM lineitem l3 WHERE l3.l_orderkey = l1.l_orderkey AND l3.l_suppkey <> l1.l_suppkey "
        "AND l3.l_receiptdate > l3.l_commitdate) AND s_nation = 'SAUDI ARABIA' GROUP BY s_name "
        "ORDER BY numwait DESC, s_name LIMIT 100")
WAITS_WRONG = {
    "count_reversed": WAITS_GOLD.replace("ORDER BY numwait DESC, s_name", "ORDER BY numwait, s_name"),
    "count_dropped": WAITS_GOLD.replace("ORDER BY numwait DESC, s_name", "ORDER BY s_name"),
    "name_reversed": WAITS_GOLD.replace("ORDER BY numwait DESC, s_name", "ORDER BY numwait DESC, s_name DESC"),
}


@pytest.fixture(scope="module")
def orders(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Grader]]:
    yield from graded_with_variants(tmp_path_factory, "orders", make_orders, GOLD)


@pytest.fixture(scope="module")
def suppliers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Grader]]:
    yield from graded_with_variants(tmp_path_factory, "suppliers", make_suppliers, SUPPLIER_GOLD)


@pytest.mark.parametrize("name", sorted(WRONG))
def test_the_order_change_coincides_on_the_pinned_database(tmp_path: Path, name: str) -> None:
    with Grader(made(tmp_path, "orders", make_orders), dialect="duckdb") as graded:
        assert graded.compare(WRONG[name], GOLD).passed


def test_the_growth_copies_the_order_with_its_lines(tmp_path: Path) -> None:
    path = made(tmp_path, "orders", make_orders)
    c = observe_constraints(path)
    (growth,) = order_growths([GOLD], "duckdb", "duckdb", c.tables, c.dependencies)
    assert (growth.anchor, growth.key) == ("main.orders", "o_orderkey")
    assert growth.sort == (("o_totalprice", True), ("o_orderdate", False))
    assert growth.children == (("main.lineitem", "l_orderkey"),)


@pytest.mark.parametrize("name", sorted(WRONG))
def test_the_order_change_is_caught(orders: tuple[Path, Grader], name: str) -> None:
    verdict = orders[1].compare(WRONG[name], GOLD)
    assert (verdict.passed, verdict.failure_kind) == (False, "coincidental_pass"), verdict.explanation


@pytest.mark.parametrize("name", sorted(EQUIVALENTS))
def test_equivalents_pass_on_every_variant(orders: tuple[Path, Grader], name: str) -> None:
    verdict = orders[1].compare(EQUIVALENTS[name], GOLD)
    assert verdict.passed, (name, verdict.explanation)


def test_one_supplier_reversed_is_caught(suppliers: tuple[Path, Grader]) -> None:
    with Grader(suppliers[0] / "suppliers.duckdb", dialect="duckdb") as pinned:
        assert pinned.compare(SUPPLIER_WRONG, SUPPLIER_GOLD).passed
    verdict = suppliers[1].compare(SUPPLIER_WRONG, SUPPLIER_GOLD)
    assert (verdict.passed, verdict.failure_kind) == (False, "coincidental_pass"), verdict.explanation


@pytest.fixture(scope="module")
def waits(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Grader]]:
    yield from graded_with_variants(tmp_path_factory, "waits", make_waits, WAITS_GOLD)


@pytest.mark.parametrize("name", sorted(WAITS_WRONG))
def test_one_supplier_late_reordered_is_caught(waits: tuple[Path, Grader], name: str) -> None:
    """TPC-H q21's shape: a new supplier's late lines, each in a copy of its order, tie the
    count or make another; copied into the orders as they are, they would take the
    supplier's own orders out of the answer (a second late supplier)."""
    with Grader(waits[0] / "waits.duckdb", dialect="duckdb") as pinned:
        assert pinned.compare(WAITS_WRONG[name], WAITS_GOLD).passed
    verdict = waits[1].compare(WAITS_WRONG[name], WAITS_GOLD)
    assert (verdict.passed, verdict.failure_kind) == (False, "coincidental_pass"), verdict.explanation
