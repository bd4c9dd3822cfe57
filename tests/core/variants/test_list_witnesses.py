"""A list of literals dropped from one branch of an OR (issue 31, TPC-H q19).

TPC-H q19 sums the revenue of three kinds of line, each a branch of an OR with its brand,
``p_container IN (...)``, a quantity range and a size range. At scale 0.01 every part of
Brand#12 that passes the rest of its branch has a listed container, so a prediction
without ``p_container IN ('SM CASE', 'SM BOX', ...)`` returns the gold's sum, on the pinned
data and on every subset of it. On main (664f38a) no variant told them apart: the dropped
conjunct's witnesses copy a row that fails it, and none exists. A reaching part set to the
container column's least or greatest value (one the column holds, outside the list) does.
The equivalent rewrites pass on every variant."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_sqleval.core.api import Grader
from pytest_sqleval.core.variants.constraints import observe_constraints
from pytest_sqleval.core.variants.separators import near_misses
from tests.core.variants.conftest import graded_with_variants, made

BRANDS = {"Brand#12": ("SM CASE", "SM BOX"), "Brand#23": ("MED BAG", "MED BOX"), "Brand#34": ("JUMBO PKG", "WRAP CASE")}


def make_parts(path: Path) -> None:
    import duckdb
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE part (p_partkey INTEGER PRIMARY KEY, p_brand VARCHAR, p_container VARCHAR, p_size INTEGER)")
    con.execute("CREATE TABLE lineitem (l_orderkey INTEGER, l_linenumber INTEGER, l_partkey INTEGER, "
                "l_quantity INTEGER, l_extendedprice DECIMAL(12, 2))")
    brands = sorted(BRANDS)
    parts = [(p, brands[p % 3], BRANDS[brands[p % 3]][p % 2], 1 + p % 9) for p in range(1, 61)]
    con.executemany("INSERT INTO part VALUES (?, ?, ?, ?)", parts)
    con.executemany("INSERT INTO lineitem VALUES (?, ?, ?, ?, ?)",
                    [(o, n, 1 + (o * 7 + n) % 60, 1 + (o * n) % 30, 100 + (o * 13 + n) % 900)
                     for o in range(1, 81) for n in range(1, 4)])
    con.close()


GOLD = ("SELECT sum(l_extendedprice) AS revenue FROM lineitem, part WHERE (p_partkey = l_partkey AND p_brand = 'Brand#12' "
        "AND p_container IN ('SM CASE', 'SM BOX') AND l_quantity >= 1 AND l_quantity <= 11) OR (p_partkey = l_partkey "
        "AND p_brand = 'Brand#23' AND p_container IN ('MED BAG', 'MED BOX') AND l_quantity >= 10 AND l_quantity <= 20)")
WRONG = GOLD.replace("AND p_container IN ('SM CASE', 'SM BOX') ", "")
EQUIVALENTS = {
    "in_as_ors": GOLD.replace("p_container IN ('SM CASE', 'SM BOX')", "(p_container = 'SM CASE' OR p_container = 'SM BOX')"),
    "between": GOLD.replace("l_quantity >= 1 AND l_quantity <= 11", "l_quantity BETWEEN 1 AND 11"),
}


@pytest.fixture(scope="module")
def parts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Grader]]:
    yield from graded_with_variants(tmp_path_factory, "parts", make_parts, GOLD)


def test_the_dropped_list_coincides_on_the_pinned_database(tmp_path: Path) -> None:
    with Grader(made(tmp_path, "parts", make_parts), dialect="duckdb") as graded:
        assert graded.compare(WRONG, GOLD).passed


def test_the_dropped_list_sets_the_container_outside_it(tmp_path: Path) -> None:
    path = made(tmp_path, "parts", make_parts)
    found = [m for m in near_misses([GOLD], "duckdb", observe_constraints(path).tables) if "SM CASE" in m.what]
    assert any(t.table == "main.part" and t.column == "p_container" and "outside=least" in t.edits
               for m in found for t in m.targets)


def test_the_dropped_list_is_caught(parts: tuple[Path, Grader]) -> None:
    verdict = parts[1].compare(WRONG, GOLD)
    assert (verdict.passed, verdict.failure_kind) == (False, "coincidental_pass"), verdict.explanation


@pytest.mark.parametrize("name", sorted(EQUIVALENTS))
def test_equivalents_pass_on_every_variant(parts: tuple[Path, Grader], name: str) -> None:
    verdict = parts[1].compare(EQUIVALENTS[name], GOLD)
    assert verdict.passed, (name, verdict.explanation)
