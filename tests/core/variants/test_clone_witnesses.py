"""Clone witnesses on a small star schema: a fact row cloned through the gold's join path
and moved at one edge catches what no subset, duplicate or shuffle of the pinned rows can
(a HAVING bound no group meets, a dropped filter on a dimension every joined fact row
passes), while equivalent rewrites still pass on every variant."""
from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from pytest_sqleval.core.api import Grader
from pytest_sqleval.core.variants.clones import clone_witnesses
from pytest_sqleval.core.variants.constraints import observe_constraints
from tests.rows import scalar


def make_star(path: Path) -> None:
    """Sales in 2000 only (the calendar holds 1999-2000, referenced by its date: a natural key,
    so no variant rewrites a date's year), shipped in the first half of 2001; per category
    150, 30, 20 and 10 sales."""
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE date_dim (d_date DATE PRIMARY KEY, d_year INTEGER NOT NULL, d_moy INTEGER NOT NULL)")
    con.execute("CREATE TABLE item (i_id INTEGER PRIMARY KEY, i_category VARCHAR NOT NULL)")
    con.execute("CREATE TABLE store (s_id INTEGER PRIMARY KEY, s_state VARCHAR NOT NULL)")
    con.execute("CREATE TABLE sales (ticket INTEGER PRIMARY KEY, sold DATE NOT NULL REFERENCES date_dim(d_date), "
                "item_id INTEGER NOT NULL REFERENCES item(i_id), store_id INTEGER NOT NULL REFERENCES store(s_id), "
                "qty INTEGER NOT NULL, price DECIMAL(7,2) NOT NULL, shipped DATE NOT NULL)")
    con.execute("INSERT INTO date_dim SELECT d::DATE, year(d), month(d) FROM "
                "range(DATE '1999-01-01', DATE '2001-01-01', INTERVAL 1 DAY) t(d)")
    con.execute("INSERT INTO item SELECT i, 'cat' || (i % 4) FROM range(1, 41) t(i)")
    con.execute("INSERT INTO store VALUES (1, 'TN'), (2, 'TX'), (3, 'CA'), (4, 'NY'), (5, 'WA')")
    # category of item i is i % 4: tickets 1..150 -> cat0, 151..180 -> cat1, 181..200 -> cat2, 201..210 -> cat3
    con.execute("""INSERT INTO sales SELECT t, DATE '2000-01-01' + CAST((t * 37) % 200 AS INTEGER),
        CASE WHEN t <= 150 THEN 4 * (1 + t % 10) WHEN t <= 180 THEN 1 + 4 * (t % 10)
             WHEN t <= 200 THEN 2 + 4 * (t % 10) ELSE 3 + 4 * (t % 10) END,
        1 + t % 5, 1 + t % 9, 1 + (t % 7) * 1.25, DATE '2001-01-04' + CAST((t * 37) % 200 AS INTEGER)
        FROM range(1, 211) s(t)""")
    con.close()


BY_STATE = ("SELECT s.s_state, count(*), sum(f.qty) FROM sales f JOIN date_dim d ON f.sold = d.d_date "
            "JOIN store s ON f.store_id = s.s_id WHERE d.d_year = 2000 GROUP BY s.s_state")
BIG_CATEGORIES = ("SELECT i.i_category, count(*) FROM sales f JOIN item i ON f.item_id = i.i_id "
                  "GROUP BY i.i_category HAVING count(*) >= 50")
SHIPPED_IN_2001 = "SELECT count(*), sum(f.qty) FROM sales f WHERE f.shipped <= DATE '2001-12-31'"
GOLDS = [BY_STATE, BIG_CATEGORIES, SHIPPED_IN_2001]

COINCIDENCES = [  # wrong, and right on the pinned data
    BY_STATE.replace(" WHERE d.d_year = 2000", ""),  # the dropped dimension filter
    BY_STATE.replace("d.d_year = 2000", "d.d_year <= 2000"),  # an operator no joined row tells apart
    BIG_CATEGORIES.replace(">= 50", ">= 51"),  # a HAVING bound no group meets
    BIG_CATEGORIES.replace(">= 50", "> 50"),
    SHIPPED_IN_2001.split(" WHERE ")[0],  # the upper bound on time, past every pinned row, dropped
]
EQUIVALENTS = [
    BY_STATE.replace("d.d_year = 2000", "d.d_date BETWEEN DATE '2000-01-01' AND DATE '2000-12-31'"),
    BY_STATE.replace("FROM sales f JOIN date_dim d ON f.sold = d.d_date", "FROM date_dim d JOIN sales f ON d.d_date = f.sold"),
    BIG_CATEGORIES.replace("count(*) >= 50", "NOT count(f.ticket) < 50"),
    BIG_CATEGORIES.replace("count(*) >= 50", "count(*) > 49"),
    SHIPPED_IN_2001.replace("<= DATE '2001-12-31'", "< DATE '2002-01-01'"),
]


@pytest.fixture(scope="module")
def star(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("star") / "star.duckdb"
    make_star(path)
    return path


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cache")  # one build of the variants for the module


@pytest.mark.parametrize("wrong", COINCIDENCES)
def test_a_coincidence_no_pinned_row_can_show_is_caught_by_a_clone_witness(star: Path, cache: Path,
                                                                          wrong: str) -> None:
    gold = next(g for g in GOLDS if g.split(" FROM ")[0] == wrong.split(" FROM ")[0])
    with Grader(star, cache_dir=cache / "plain") as plain:
        assert plain.compare(wrong, gold).passed  # the coincidence on the pinned database
    with Grader(star, cache_dir=cache, variants=4, variant_golds=GOLDS) as graded:
        verdict = graded.compare(wrong, gold)
    assert (verdict.passed, verdict.failure_kind) == (False, "coincidental_pass")
    # the failure says what the variant holds that the database lacks
    if gold != SHIPPED_IN_2001:  # (a boundary row there, not a clone)
        assert ("date_dim.d_year = " if gold == BY_STATE else "rows (the gold's HAVING") in verdict.explanation


@pytest.mark.parametrize("right", EQUIVALENTS)
def test_an_equivalent_rewrite_passes_on_every_variant(star: Path, cache: Path, right: str) -> None:
    gold = next(g for g in GOLDS if g.split(" FROM ")[0] == right.split(" FROM ")[0])
    with Grader(star, cache_dir=cache, variants=4, variant_golds=GOLDS) as graded:
        verdict = graded.compare(right, gold)
    assert verdict.passed, verdict.explanation


def test_witnesses_keep_every_reference_and_key(star: Path, cache: Path) -> None:
    with Grader(star, cache_dir=cache, variants=4, variant_golds=GOLDS):
        pass
    built = sorted(cache.rglob("rows-*/variant-*.duckdb"))
    assert len(built) == 4
    cloned = 0
    for variant in built:
        con = duckdb.connect(str(variant), read_only=True)
        assert scalar(con, "SELECT count(*) FROM sales WHERE sold NOT IN (SELECT d_date FROM date_dim) "
                           "OR item_id NOT IN (SELECT i_id FROM item)") == 0
        assert scalar(con, "SELECT count(*) - count(DISTINCT ticket) FROM sales") == 0
        cloned += scalar(con, "SELECT count(*) FROM sales WHERE ticket > 210")
        con.close()
    assert cloned > 0


def test_the_witnesses_of_a_star_join_follow_its_foreign_keys(star: Path) -> None:
    c = observe_constraints(star)
    found = clone_witnesses(GOLDS, "duckdb", c.tables, c.dependencies)
    moved = [w for w in found if w.moved]
    assert {w.table for w in found} == {"main.sales"}
    assert {w.moved for w in moved} == {("sold",)}  # the store has no filter: nothing moves through it
    assert any("fails only `d.d_year = 2000`" in w.what for w in moved)
    grouped = [w for w in found if w.grouped]
    assert [w.what.split("exactly ")[1].split(" ")[0] for w in grouped] == ["51", "50", "49"]


def test_the_witness_sentences_survive_the_record() -> None:
    from pytest_sqleval.core.grading.layers.variants import VariantMismatch
    mismatch = VariantMismatch(3, "subset+boundary", witnesses=("a sales row moved to date_dim.d_year = 1999",))
    assert mismatch.to_dict()["witnesses"] == ["a sales row moved to date_dim.d_year = 1999"]
    assert VariantMismatch.from_record(mismatch.to_dict()) == mismatch
    assert "witnesses" not in VariantMismatch(3, "subset").to_dict()


def test_a_gold_that_leaves_its_columns_bare_gets_its_moved_witnesses(star: Path) -> None:
    """TPC-DS and TPC-H name no table in their conjuncts: beside the moved path's copied tables,
    a bare ``d_year`` named two of them, and every moved witness's query failed."""
    bare = ("SELECT s_state, count(*), sum(qty) FROM sales, date_dim, store WHERE sold = d_date AND store_id = s_id "
            "AND d_year = 2000 GROUP BY s_state")
    c = observe_constraints(star)
    moved = [w for w in clone_witnesses([bare], "duckdb", c.tables, c.dependencies) if w.moved]
    assert any("fails only `d_year = 2000`" in w.what for w in moved)
    con = duckdb.connect(str(star), read_only=True)
    try:
        found_rows = [con.execute(w.rows_sql, [1]).fetchall() for w in moved]  # each raised, ambiguous
        assert any(found_rows)  # the year before 2000: the calendar holds no 2001
    finally:
        con.close()
