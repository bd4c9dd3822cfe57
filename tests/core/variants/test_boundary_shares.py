"""Boundary values take shares of the rows a variant holds (issue 31).

A variant is a subset: a few per cent of a large table's rows. The boundary values of the
golds' literals (``boundaries.BoundaryRows``) were given to shares of the *pinned* table's
rows, so on a subset they wrote over most of its rows: 216 of a TPC-DS variant's 293
``household_demographics`` rows took one of three vehicle counts, and the quantities of an
order a HAVING push had brought to a sum of exactly 300 were rewritten. Now each value goes
to 1 % of the variant's rows (at least 2), at most a quarter of them per column, and the
literals' edges still show: a moved literal is caught beside an equivalent rewrite."""
from __future__ import annotations

from pathlib import Path

import duckdb

from pytest_sqleval.core.api import Grader

GOLD = "SELECT count(*) FROM payment WHERE amount < 500 OR amount = 700 OR amount > 900"


def make_payments(path: Path) -> None:
    """40,000 payments, amounts 0-999.5 on a grid of 0.5, none at 700 or 900 (the gold's edges)."""
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE payment (id INTEGER PRIMARY KEY, amount DECIMAL(8,1) NOT NULL, note VARCHAR)")
    con.execute("INSERT INTO payment SELECT i, CASE WHEN (i * 37 % 2000) / 2.0 IN (700, 900) THEN (i * 37 % 2000) "
                "/ 2.0 + 0.5 ELSE (i * 37 % 2000) / 2.0 END, 'n' || (i % 13) FROM range(40000) t(i)")
    con.close()


def test_boundary_values_change_at_most_a_quarter_of_a_variants_rows(tmp_path: Path) -> None:
    path = tmp_path / "payments.duckdb"
    make_payments(path)
    wrong = GOLD.replace("amount > 900", "amount >= 900")
    with Grader(path, cache_dir=tmp_path / "cache", variants=4, variant_golds=[GOLD]) as graded:
        pool = graded._grader.variant_set.pool
        caught = graded.compare(wrong, GOLD)
        kept = graded.compare(GOLD.replace("amount < 500", "NOT amount >= 500"), GOLD)
    assert (caught.passed, caught.failure_kind) == (False, "coincidental_pass"), caught.explanation
    assert kept.passed, kept.explanation
    subsets = 0
    for variant in pool:
        written = (variant.params.get("boundary_rows") or {}).get("main.payment.amount", 0)
        con = duckdb.connect(str(variant.path), read_only=True)
        held = con.execute("SELECT count(*) FROM payment").fetchone()[0]
        con.close()
        subsets += held < 40000 // 2
        assert written <= 0.25 * held + 9 * 2, (variant.index, written, held)  # 9 values, each at least 2 rows
    assert subsets, "the shape this test guards: a variant holding a small share of the table"
