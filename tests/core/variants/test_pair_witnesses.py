"""Two columns of one row compared, and the comparison flipped (issue 31, TPC-H q21).

TPC-H q21 counts a supplier's late line items, ``l1.l_receiptdate > l1.l_commitdate``; a
prediction with ``>=`` returns the gold's rows wherever no reaching line item was received
on the day it was committed, which the pinned data below never holds, nor any subset of it.
On main (8925df3) no variant told them apart (the literal-edge witnesses need a literal).
A reaching row with one column set to its own other column's value does. The equivalent
rewrites pass on every variant."""
from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_sqleval.core.api import Grader
from pytest_sqleval.core.variants.constraints import observe_constraints
from pytest_sqleval.core.variants.separators import near_misses
from tests.core.variants.conftest import graded_with_variants, made


def make_items(path: Path) -> None:
    import duckdb
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE supplier (s_suppkey INTEGER, s_name VARCHAR, s_nation VARCHAR)")
    con.execute("CREATE TABLE lineitem (l_orderkey INTEGER, l_linenumber INTEGER, l_suppkey INTEGER, "
                "l_quantity INTEGER, l_commitdate DATE, l_receiptdate DATE)")
    con.executemany("INSERT INTO supplier VALUES (?, ?, ?)",
                    [(i, f"Supplier#{i:09d}", "SAUDI ARABIA" if i % 3 == 0 else "CANADA") for i in range(1, 13)])
    day = dt.date(1995, 1, 1)
    rows = []
    for o in range(1, 61):
        for n in range(1, 4):
            commit = day + dt.timedelta(days=(o * 7 + n * 3) % 200)
            late = (o + n) % 3 == 0
            receipt = commit + dt.timedelta(days=(1 + (o + n) % 9) * (1 if late else -1))  # never the same day
            rows.append((o, n, 1 + (o * 5 + n) % 12, 1 + (o * n) % 50, commit, receipt))
    con.executemany("INSERT INTO lineitem VALUES (?, ?, ?, ?, ?, ?)", rows)
    con.close()


GOLD = ("SELECT s_name, count(*) AS numwait FROM supplier, lineitem l1 WHERE s_suppkey = l1.l_suppkey "
        "AND l1.l_receiptdate > l1.l_commitdate AND s_nation = 'SAUDI ARABIA' GROUP BY s_name ORDER BY numwait DESC, s_name")
WRONG = GOLD.replace("l1.l_receiptdate > l1.l_commitdate", "l1.l_receiptdate >= l1.l_commitdate")
EQUIVALENTS = {
    "sides_swapped": GOLD.replace("l1.l_receiptdate > l1.l_commitdate", "l1.l_commitdate < l1.l_receiptdate"),
    "difference": GOLD.replace("l1.l_receiptdate > l1.l_commitdate", "l1.l_receiptdate - l1.l_commitdate > 0"),
}


@pytest.fixture(scope="module")
def items(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Grader]]:
    yield from graded_with_variants(tmp_path_factory, "items", make_items, GOLD)


def test_the_flip_coincides_on_the_pinned_database(tmp_path: Path) -> None:
    with Grader(made(tmp_path, "items", make_items), dialect="duckdb") as graded:
        assert graded.compare(WRONG, GOLD).passed


def test_the_flip_is_a_near_miss_with_a_pair_target(tmp_path: Path) -> None:
    path = made(tmp_path, "items", make_items)
    found = [m for m in near_misses([GOLD], "duckdb", observe_constraints(path).tables) if "flipped" in m.what]
    assert any(t.edits == ("pair=l_commitdate",) and t.column == "l_receiptdate" for m in found for t in m.targets)


def test_the_flip_is_caught(items: tuple[Path, Grader]) -> None:
    verdict = items[1].compare(WRONG, GOLD)
    assert (verdict.passed, verdict.failure_kind) == (False, "coincidental_pass"), verdict.explanation


@pytest.mark.parametrize("name", sorted(EQUIVALENTS))
def test_equivalents_pass_on_every_variant(items: tuple[Path, Grader], name: str) -> None:
    verdict = items[1].compare(EQUIVALENTS[name], GOLD)
    assert verdict.passed, (name, verdict.explanation)
