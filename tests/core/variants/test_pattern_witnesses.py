"""A ``NOT IN (SELECT ... WHERE c LIKE 'p')`` that no pinned row matches (issue 31, TPC-H q16).

TPC-H q16 keeps the parts' suppliers ``NOT IN`` those with a comment like
``'%Customer%Complaints%'``; at scale factor 0.01 no supplier has such a comment, so the
gold without that conjunct, and the gold with another pattern, return its rows on the pinned
data and on every subset of it: no row fails the conjunct, and the separating writer could
only copy rows that do. On main (8925df3) no variant told them apart. A supplier that a
reaching part-supplier row refers to, its comment set to a text the pattern matches, does.
Every comment differs, as in TPC-H, so the observer counts the column unique: the text
written must be one no supplier holds yet.
The equivalent rewrites pass on every variant."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_sqleval.core.api import Grader
from pytest_sqleval.core.variants.constraints import observe_constraints
from pytest_sqleval.core.variants.separators import near_misses
from tests.core.variants.conftest import graded_with_variants, made


def make_parts(path: Path) -> None:
    import duckdb
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE supplier (s_suppkey INTEGER, s_name VARCHAR, s_comment VARCHAR)")
    con.execute("CREATE TABLE part (p_partkey INTEGER, p_brand VARCHAR, p_size INTEGER)")
    con.execute("CREATE TABLE partsupp (ps_partkey INTEGER, ps_suppkey INTEGER, ps_availqty INTEGER)")
    words = ["carefully final deposits", "quickly even requests", "blithely ironic packages", "slyly bold accounts",
             "furiously regular ideas", "pending theodolites nag"]
    con.executemany("INSERT INTO supplier VALUES (?, ?, ?)",
                    [(i, f"Supplier#{i:09d}", f"{words[i % 6]} {words[(i * 5) % 6]} {i}") for i in range(1, 21)])  # each comment differs, as in TPC-H: observed unique
    con.executemany("INSERT INTO part VALUES (?, ?, ?)",
                    [(i, f"Brand#{1 + i % 5}{1 + i % 3}", 1 + (i * 7) % 12) for i in range(1, 41)])
    con.executemany("INSERT INTO partsupp VALUES (?, ?, ?)",
                    [(p, 1 + (p * 3 + k * 7) % 20, 100 + (p * 37 + k * 11) % 900) for p in range(1, 41) for k in range(4)])
    con.close()


GOLD = ("SELECT p_brand, p_size, count(DISTINCT ps_suppkey) AS supplier_cnt FROM partsupp, part "
        "WHERE p_partkey = ps_partkey AND p_brand <> 'Brand#45' AND ps_suppkey NOT IN "
        "(SELECT s_suppkey FROM supplier WHERE s_comment LIKE '%Customer%Complaints%') "
        "GROUP BY p_brand, p_size ORDER BY supplier_cnt DESC, p_brand, p_size")
COINCIDENCES = {
    "not_in_dropped": GOLD.replace("AND ps_suppkey NOT IN (SELECT s_suppkey FROM supplier WHERE s_comment LIKE "
                                   "'%Customer%Complaints%') ", ""),
    "pattern_changed": GOLD.replace("'%Customer%Complaints%'", "'Brand#45'"),
}
EQUIVALENTS = {
    "not_exists": ("SELECT p_brand, p_size, count(DISTINCT ps_suppkey) AS supplier_cnt FROM partsupp "
                   "JOIN part ON p_partkey = ps_partkey WHERE p_brand <> 'Brand#45' AND NOT EXISTS "
                   "(SELECT 1 FROM supplier WHERE s_suppkey = ps_suppkey AND s_comment LIKE '%Customer%Complaints%') "
                   "GROUP BY p_brand, p_size ORDER BY supplier_cnt DESC, p_brand, p_size"),
    "pattern_split": GOLD.replace("s_comment LIKE '%Customer%Complaints%'",
                                  "s_comment LIKE '%Customer%' AND s_comment LIKE '%Customer%Complaints%'"),
}


@pytest.fixture(scope="module")
def parts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Grader]]:
    yield from graded_with_variants(tmp_path_factory, "parts", make_parts, GOLD)


def test_the_shapes_coincide_on_the_pinned_database(tmp_path: Path) -> None:
    with Grader(made(tmp_path, "parts", make_parts), dialect="duckdb") as graded:
        for name, wrong in COINCIDENCES.items():
            assert graded.compare(wrong, GOLD).passed, name


def test_the_dropped_not_in_has_a_pattern_target(tmp_path: Path) -> None:
    path = made(tmp_path, "parts", make_parts)
    tables = observe_constraints(path).tables
    found = [m for m in near_misses([GOLD], "duckdb", tables) if "NOT" in m.what]
    assert "s_comment" in tables["main.supplier"].observed_unique and "s_comment" not in tables["main.supplier"].free
    assert any(t.column == "s_comment" and t.edits == ("like=Customer Complaints",) for m in found for t in m.targets)


@pytest.mark.parametrize("name", sorted(COINCIDENCES))
def test_coincidences_are_caught(parts: tuple[Path, Grader], name: str) -> None:
    verdict = parts[1].compare(COINCIDENCES[name], GOLD)
    assert (verdict.passed, verdict.failure_kind) == (False, "coincidental_pass"), (name, verdict.explanation)


@pytest.mark.parametrize("name", sorted(EQUIVALENTS))
def test_equivalents_pass_on_every_variant(parts: tuple[Path, Grader], name: str) -> None:
    verdict = parts[1].compare(EQUIVALENTS[name], GOLD)
    assert verdict.passed, (name, verdict.explanation)
