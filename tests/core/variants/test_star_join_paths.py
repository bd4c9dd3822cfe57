"""Variants on a TPC-DS-shaped star schema: no declared key or reference, surrogate keys
named ``*_sk`` that no name rule links (``ss_sold_date_sk`` to ``d_date_sk``), a fact
table whose only key is composite (ticket, item). The golds' own join columns make the
references (``joinpath``), so a variant keeps every fact row's dimension rows, and clone
witnesses follow the path; a gold ``ORDER BY ... LIMIT 20`` with fewer than 20 rows gets
a variant with more (new items through the path), where LIMIT 19 and 21 differ."""
from __future__ import annotations

import datetime as dt
import sqlite3
from pathlib import Path

import duckdb
import pytest

from pytest_sqleval.core.api import Grader
from pytest_sqleval.core.variants.constraints import observe_constraints
from tests.rows import scalar

BOOKS = ("SELECT i_item_id, sum(ss_quantity) AS q FROM store_sales, item, date_dim WHERE ss_item_sk = i_item_sk "
         "AND ss_sold_date_sk = d_date_sk AND d_year = 2000 AND i_category = 'Books' "
         "GROUP BY i_item_id ORDER BY q DESC, i_item_id LIMIT 20")
BY_CATEGORY = ("SELECT i_category, count(*) AS n, sum(ss_quantity) AS q FROM store_sales, date_dim, item "
               "WHERE ss_sold_date_sk = d_date_sk AND ss_item_sk = i_item_sk AND i_manufact_id <= 10 "
               "GROUP BY i_category ORDER BY i_category")
GOLDS = [BOOKS, BY_CATEGORY]
COINCIDENCES = [BOOKS.replace("LIMIT 20", "LIMIT 19"), BOOKS.replace("LIMIT 20", "LIMIT 21")]
EQUIVALENTS = [
    BOOKS.replace("FROM store_sales, item, date_dim WHERE ss_item_sk = i_item_sk AND ss_sold_date_sk = d_date_sk",
                  "FROM store_sales JOIN item ON i_item_sk = ss_item_sk JOIN date_dim ON d_date_sk = ss_sold_date_sk"),
    # leans on the reference every sale keeps: its item exists, so the join drops no sale
    BY_CATEGORY.replace("FROM store_sales, date_dim, item WHERE ss_sold_date_sk = d_date_sk AND ",
                        "FROM store_sales, item WHERE "),
]


def make_star(path: Path) -> None:
    """1999-2000 by day; 60 items in four categories, item ids shared by pairs (as TPC-DS's
    history rows share ``i_item_id``), Books only on items 1-12 (six ids, six output rows
    where the gold takes 20); 300 sales in 2000, three lines a ticket."""
    days = [dt.date(1999, 1, 1) + dt.timedelta(days=n) for n in range(731)]
    dates = [(2451180 + n, d.isoformat(), d.year, d.month) for n, d in enumerate(days)]
    items = [(i, f"AAAAAAAA{(i + 1) // 2:04d}", "Books" if i <= 12 else ("Music", "Home", "Sports")[i % 3], i % 17)
             for i in range(1, 61)]
    in_2000 = [sk for sk, _, year, _ in dates if year == 2000]
    sales = [(in_2000[(t * 37) % 100], 1 + (t * 7) % 60, 1 + t // 3, 1 + t % 9, f"{1 + (t % 11) * 1.5:.2f}")
             for t in range(300)]
    if path.suffix == ".duckdb":
        con: duckdb.DuckDBPyConnection | sqlite3.Connection = duckdb.connect(str(path))
        types = ("INTEGER", "DATE", "VARCHAR", "DECIMAL(7,2)")
    else:
        con = sqlite3.connect(path)
        types = ("INTEGER", "TEXT", "TEXT", "REAL")
    i, d, v, m = types
    con.execute(f"CREATE TABLE date_dim (d_date_sk {i}, d_date {d}, d_year {i}, d_moy {i})")
    con.execute(f"CREATE TABLE item (i_item_sk {i}, i_item_id {v}, i_category {v}, i_manufact_id {i})")
    con.execute(f"CREATE TABLE store_sales (ss_sold_date_sk {i}, ss_item_sk {i}, ss_ticket_number {i}, "
                f"ss_quantity {i}, ss_sales_price {m})")
    con.executemany("INSERT INTO date_dim VALUES (?, ?, ?, ?)", dates)
    con.executemany("INSERT INTO item VALUES (?, ?, ?, ?)", items)
    con.executemany("INSERT INTO store_sales VALUES (?, ?, ?, ?, ?)", sales)
    if isinstance(con, sqlite3.Connection):
        con.commit()
    con.close()


@pytest.fixture(scope="module", params=["duckdb", "sqlite"])
def star(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    root = tmp_path_factory.mktemp(f"star-{request.param}")
    path = root / f"star.{request.param}"
    make_star(path)
    return path, root / "cache", request.param


def test_a_gold_join_is_a_reference_where_the_data_agrees(star: tuple[Path, Path, str]) -> None:
    path, _, dialect = star
    plain = observe_constraints(path)
    joined = observe_constraints(path, golds=(GOLDS, dialect))
    assert not [d for d in plain.dependencies if d.origin != "total"]  # no name rule links *_sk columns
    found = {(d.child, d.child_columns, d.parent, d.parent_columns) for d in joined.dependencies
             if d.origin == "observed"}
    schema = "main." if dialect == "duckdb" else ""
    assert found == {(f"{schema}store_sales", ("ss_item_sk",), f"{schema}item", ("i_item_sk",)),
                     (f"{schema}store_sales", ("ss_sold_date_sk",), f"{schema}date_dim", ("d_date_sk",))}


def test_a_limit_no_pinned_answer_reaches_is_told_apart(star: tuple[Path, Path, str]) -> None:
    path, cache, dialect = star
    with Grader(path, dialect=dialect, cache_dir=cache / "plain") as plain:
        for wrong in COINCIDENCES:
            assert plain.compare(wrong, BOOKS).passed  # six rows: LIMIT 19, 20 and 21 agree on the pinned data
    with Grader(path, dialect=dialect, cache_dir=cache, variants=4, variant_golds=GOLDS) as graded:
        for wrong in COINCIDENCES:
            verdict = graded.compare(wrong, BOOKS)
            assert (verdict.passed, verdict.failure_kind) == (False, "coincidental_pass"), wrong
            # told apart by the rows grown past the LIMIT, or first by a variant whose witness already
            # brings the output to the LIMIT (a moved copy of a reaching sale): either way by its row count
            assert "past its LIMIT 20" in verdict.explanation or "row count" in verdict.explanation


@pytest.mark.parametrize("right", EQUIVALENTS)
def test_an_equivalent_rewrite_passes_on_every_variant(star: tuple[Path, Path, str], right: str) -> None:
    path, cache, dialect = star
    gold = BOOKS if "LIMIT" in right else BY_CATEGORY
    with Grader(path, dialect=dialect, cache_dir=cache, variants=4, variant_golds=GOLDS) as graded:
        verdict = graded.compare(right, gold)
    assert verdict.passed, verdict.explanation


def test_every_variant_keeps_the_references_and_no_duplicate_sale(star: tuple[Path, Path, str]) -> None:
    path, cache, dialect = star
    with Grader(path, dialect=dialect, cache_dir=cache, variants=4, variant_golds=GOLDS):
        pass
    built = sorted(cache.rglob(f"rows-*/variant-*.{dialect}"))
    assert len(built) == 4
    new_items = 0
    for variant in built:
        con = duckdb.connect(str(variant), read_only=True) if dialect == "duckdb" else sqlite3.connect(variant)
        dangling = con.execute("SELECT count(*) FROM store_sales WHERE ss_item_sk NOT IN (SELECT i_item_sk FROM item) "
                               "OR ss_sold_date_sk NOT IN (SELECT d_date_sk FROM date_dim)").fetchone()
        assert dangling is not None and dangling[0] == 0
        duplicates = con.execute("SELECT count(*) FROM (SELECT ss_ticket_number, ss_item_sk FROM store_sales "
                                 "GROUP BY 1, 2 HAVING count(*) > 1) AS d").fetchone()
        assert duplicates is not None and duplicates[0] == 0  # the composite key holds: a clone is a new ticket
        keys = con.execute("SELECT count(*) - count(DISTINCT i_item_sk) FROM item").fetchone()
        assert keys is not None and keys[0] == 0
        row = con.execute("SELECT count(*) FROM item WHERE i_item_sk > 60").fetchone()
        new_items += row[0] if row else 0
        con.close()
    assert new_items > 0  # new items through the path, for the LIMIT


def test_a_limit_gold_no_path_reaches_on_the_variant_gets_one_from_the_pinned_data(
        star: tuple[Path, Path, str], tmp_path: Path) -> None:
    """A subset of a star join often keeps no fact row that reaches the output: no row to
    clone, and LIMIT 19, 20 and 21 agree there too. The LIMIT witness copies one reaching
    path of the pinned database in (its fact row; its item and date rows exist), then
    clones it through new items until the gold has 21 rows."""
    import shutil

    from pytest_sqleval.core.variants.clones import CloneWriter, clone_witnesses
    path, _, dialect = star
    variant = tmp_path / path.name
    shutil.copy(path, variant)
    c = observe_constraints(path, golds=(GOLDS, dialect))
    (witness,) = [w for w in clone_witnesses(GOLDS, dialect, c.tables, c.dependencies) if w.limit]
    pinned = duckdb.connect(str(path), read_only=True) if dialect == "duckdb" else sqlite3.connect(path)
    con = duckdb.connect(str(variant)) if dialect == "duckdb" else sqlite3.connect(variant)
    con.execute("DELETE FROM store_sales WHERE ss_item_sk <= 12")  # no Books sale left
    assert scalar(con, witness.count_sql) == 0
    writer = CloneWriter(con, dialect, c.tables, c.dependencies, lambda sql, params: con.execute(sql, params).fetchall(),
                         pinned=lambda sql, params: pinned.execute(sql, params).fetchall())
    assert writer.write(witness, 0)
    assert scalar(con, witness.count_sql) == 21
    dangling = con.execute("SELECT count(*) FROM store_sales WHERE ss_item_sk NOT IN (SELECT i_item_sk FROM item) "
                           "OR ss_sold_date_sk NOT IN (SELECT d_date_sk FROM date_dim)").fetchone()
    assert dangling is not None and dangling[0] == 0
    duplicates = con.execute("SELECT count(*) FROM (SELECT ss_ticket_number, ss_item_sk FROM store_sales "
                             "GROUP BY 1, 2 HAVING count(*) > 1) AS d").fetchone()
    assert duplicates is not None and duplicates[0] == 0
    assert "past its LIMIT 20" in writer.sentences[witness.gold][0]
    con.close()
    pinned.close()
