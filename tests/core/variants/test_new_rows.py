"""New rows, not only copies: the witnesses that write rows the pinned data lacks.

Each coincidence below returns the gold's rows on the pinned database and no subset,
duplicate, shuffle, boundary value or moved clone of its rows can tell it apart:

- a group of exactly one row for ``HAVING count(*) >= 2`` (every order with lines has three,
  and a subset keeps an order's lines together): a new order (a fresh key) with one new line;
- a dropped filter on a dimension whose every other row also fails another filter of the
  gold (no Tennessee store is small): a new store row copied from a joined one, with
  ``s_type`` set to a value another store holds, referenced by a new sale;
- a group's ``sum`` at exactly the ``HAVING`` bound: one new sale whose quantity brings it
  there (the quantity is a value between the column's least and greatest);
- a date bound moved by a day on SQLite, where dates are text and no row sits on the bound:
  a new row on the bound (a day is in a text column's domain when every value is an ISO day).

Equivalent rewrites still pass on every variant, and every key and reference holds."""
from __future__ import annotations

import sqlite3
from pathlib import Path

import duckdb
import pytest

from pytest_sqleval.core.api import Grader
from pytest_sqleval.core.variants.clones import clone_witnesses
from pytest_sqleval.core.variants.constraints import observe_constraints
from tests.rows import scalar


def make_shops(path: Path) -> int:
    """Stores keyed by a text code (a natural key: no variant rewrites a store's attributes);
    7 stores, 5 with sales, the Tennessee one big, and no store small in Tennessee. Returns
    the ``HAVING sum`` bound no group's sum is at or beside."""
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE store (s_code VARCHAR PRIMARY KEY, s_state VARCHAR NOT NULL, s_type VARCHAR NOT NULL)")
    con.execute("CREATE TABLE sales (ticket INTEGER PRIMARY KEY, store_code VARCHAR NOT NULL REFERENCES store(s_code), "
                "qty INTEGER NOT NULL, price DECIMAL(7,2) NOT NULL)")
    con.execute("INSERT INTO store VALUES ('S1', 'TN', 'big'), ('S2', 'TX', 'small'), ('S3', 'CA', 'small'), "
                "('S4', 'NY', 'big'), ('S5', 'WA', 'small'), ('S6', 'OR', 'small'), ('S7', 'TX', 'big')")
    con.execute("INSERT INTO sales SELECT t, 'S' || (1 + t % 5), 1 + (t * 7) % 9, 1 + (t % 7) * 1.25 "
                "FROM range(1, 301) s(t)")
    # orders of three lines each (a subset keeps an order's lines together), every fifth order without lines
    con.execute("CREATE TABLE orders (o_id INTEGER PRIMARY KEY, o_note VARCHAR NOT NULL)")
    con.execute("CREATE TABLE lines (o_id INTEGER NOT NULL REFERENCES orders(o_id), line_no INTEGER NOT NULL, "
                "amount INTEGER NOT NULL, PRIMARY KEY (o_id, line_no))")
    con.execute("INSERT INTO orders SELECT o, 'n' || (o % 3) FROM range(1, 101) t(o)")
    con.execute("INSERT INTO lines SELECT o, k, 1 + (o * k) % 7 FROM range(1, 101) t(o), range(1, 4) u(k) "
                "WHERE o % 5 <> 0")
    sums = sorted(r[0] for r in con.execute("SELECT sum(qty) FROM sales GROUP BY store_code").fetchall())
    con.close()
    # a bound between the two smallest sums, at least 2 from each
    bound = next(b for b in range(sums[0] - 40, sums[-1]) if all(abs(b - s) > 2 for s in sums)
                 and sums[0] < b + 10)
    return int(bound)


@pytest.fixture(scope="module")
def shops(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    path = tmp_path_factory.mktemp("shops") / "shops.duckdb"
    return path, make_shops(path)


def golds(bound: int) -> dict[str, str]:
    return {
        "one": ("SELECT o.o_id, count(*) FROM lines l JOIN orders o ON l.o_id = o.o_id "
                "GROUP BY o.o_id HAVING count(*) >= 2"),
        "type": ("SELECT count(*), sum(f.qty) FROM sales f JOIN store s ON f.store_code = s.s_code "
                 "WHERE s.s_state = 'TN' AND s.s_type = 'big'"),
        "sum": ("SELECT f.store_code, sum(f.qty) FROM sales f GROUP BY f.store_code "
                f"HAVING sum(f.qty) > {bound}"),
    }


def coincidences(g: dict[str, str], bound: int) -> list[tuple[str, str]]:
    return [
        ("one", g["one"].replace(">= 2", ">= 1")),
        ("type", g["type"].replace(" AND s.s_type = 'big'", "")),
        ("sum", g["sum"].replace(f"> {bound}", f">= {bound}")),
        ("sum", g["sum"].replace(f"> {bound}", f"> {bound + 1}")),
    ]


def equivalents(g: dict[str, str], bound: int) -> list[tuple[str, str]]:
    return [
        ("one", g["one"].replace("count(*) >= 2", "count(l.line_no) > 1")),
        ("type", g["type"].replace("s.s_state = 'TN' AND s.s_type = 'big'", "s.s_type = 'big' AND s.s_state = 'TN'")),
        ("sum", g["sum"].replace(f"> {bound}", f">= {bound + 1}")),  # integer quantities
    ]


def _case_ids(pairs: list[tuple[str, str]]) -> list[str]:
    return [f"{k}-{i}" for i, (k, _) in enumerate(pairs)]


@pytest.mark.parametrize("which", range(4), ids=_case_ids(coincidences(golds(0), 0)))
def test_a_coincidence_only_a_new_row_can_show_is_caught(shops: tuple[Path, int], tmp_path_factory: pytest.TempPathFactory,
                                                         which: int) -> None:
    path, bound = shops
    g = golds(bound)
    kind, wrong = coincidences(g, bound)[which]
    cache = path.parent / "cache"
    with Grader(path, cache_dir=cache / "plain") as plain:
        assert plain.compare(wrong, g[kind]).passed  # the coincidence on the pinned database
    with Grader(path, cache_dir=cache, variants=4, variant_golds=list(g.values())) as graded:
        verdict = graded.compare(wrong, g[kind])
    assert (verdict.passed, verdict.failure_kind) == (False, "coincidental_pass"), verdict.explanation
    if kind == "sum":  # the record says which rows the variant holds (the first three witnesses)
        assert "group's sum to exactly" in verdict.explanation


@pytest.mark.parametrize("which", range(3))
def test_an_equivalent_rewrite_passes_on_every_variant(shops: tuple[Path, int], which: int) -> None:
    path, bound = shops
    g = golds(bound)
    kind, right = equivalents(g, bound)[which]
    with Grader(path, cache_dir=path.parent / "cache", variants=4, variant_golds=list(g.values())) as graded:
        verdict = graded.compare(right, g[kind])
    assert verdict.passed, verdict.explanation


def test_new_rows_keep_every_key_and_reference(shops: tuple[Path, int]) -> None:
    path, bound = shops
    with Grader(path, cache_dir=path.parent / "cache", variants=4, variant_golds=list(golds(bound).values())):
        pass
    with Grader(path, cache_dir=path.parent / "cache", variants=4, variant_golds=list(golds(bound).values())) as g:
        said = [s for i in range(4) for s in g._grader.variant_set.witnesses(i, golds(bound)["type"])]
    assert any(s.startswith("a new store row with store.s_type = 'small' (fails only `s.s_type = 'big'`)")
               for s in said), said
    built = sorted((path.parent / "cache").rglob("rows-*/variant-*.duckdb"))
    assert len(built) == 4
    new_stores = 0
    for variant in built:
        con = duckdb.connect(str(variant), read_only=True)
        assert scalar(con, "SELECT count(*) FROM sales WHERE store_code NOT IN (SELECT s_code FROM store)") == 0
        assert scalar(con, "SELECT count(*) - count(DISTINCT s_code) FROM store") == 0
        assert scalar(con, "SELECT count(*) FROM sales WHERE qty NOT BETWEEN 1 AND 9") == 0
        assert scalar(con, "SELECT count(*) FROM store WHERE s_type NOT IN ('big', 'small')") == 0
        new_stores += scalar(con, "SELECT count(*) FROM store WHERE s_code NOT IN "
                                  "('S1', 'S2', 'S3', 'S4', 'S5', 'S6', 'S7')")
        con.close()
    assert new_stores > 0


def test_a_new_key_every_row_of_a_child_uses_gets_a_child_row_too(tmp_path: Path) -> None:
    """Every store has sales here (a total dependency, which a correct query may rely on): a
    new store comes with a copy of one of its source's sales, so every store still has one."""
    path = tmp_path / "total.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE store (s_code VARCHAR PRIMARY KEY, s_state VARCHAR NOT NULL)")
    con.execute("CREATE TABLE sales (ticket INTEGER PRIMARY KEY, store_code VARCHAR NOT NULL REFERENCES store(s_code), "
                "qty INTEGER NOT NULL)")
    con.execute("INSERT INTO store VALUES ('S1', 'TN'), ('S2', 'TX'), ('S3', 'CA')")
    con.execute("INSERT INTO sales SELECT t, 'S' || (1 + t % 3), t % 5 FROM range(1, 301) s(t)")
    con.close()
    gold = ("SELECT s.s_code, count(*) FROM sales f JOIN store s ON f.store_code = s.s_code "
            "GROUP BY s.s_code HAVING count(*) >= 2")
    c = observe_constraints(path)
    assert any(d.origin == "total" and d.child == "main.store" for d in c.dependencies)
    assert [w for w in clone_witnesses([gold], "duckdb", c.tables, c.dependencies) if w.parent is not None]
    with Grader(path, cache_dir=tmp_path / "cache", variants=2, variant_golds=[gold]):
        pass
    new_stores = 0
    for variant in sorted((tmp_path / "cache").rglob("rows-*/variant-*.duckdb")):
        con = duckdb.connect(str(variant), read_only=True)
        assert scalar(con, "SELECT count(*) FROM store WHERE s_code NOT IN (SELECT store_code FROM sales)") == 0
        new_stores += scalar(con, "SELECT count(*) FROM store WHERE s_code NOT IN ('S1', 'S2', 'S3')")
        con.close()
    assert new_stores > 0


def make_trips(path: Path) -> None:
    """SQLite, dates as text, two trips every other day: no trip on 2020-03-02."""
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE trip (id INTEGER PRIMARY KEY, day TEXT NOT NULL, km INTEGER NOT NULL)")
    con.executemany("INSERT INTO trip VALUES (?, date('2020-01-01', ?), ?)",
                    [(i, f"+{2 * (i // 2)} days", 1 + i % 30) for i in range(240)])
    con.commit()
    con.close()


TRIPS = "SELECT count(*), sum(km) FROM trip WHERE day < '2020-03-02'"


def test_a_date_bound_moved_by_a_day_on_text_dates_is_caught(tmp_path: Path) -> None:
    path = tmp_path / "trips.sqlite"
    make_trips(path)
    wrong = TRIPS.replace("<", "<=")
    with Grader(path, cache_dir=tmp_path / "plain") as plain:
        assert plain.compare(wrong, TRIPS).passed
    with Grader(path, cache_dir=tmp_path / "cache", variants=4, variant_golds=[TRIPS]) as graded:
        verdict = graded.compare(wrong, TRIPS)
        right = graded.compare(TRIPS.replace("day < '2020-03-02'", "NOT day >= '2020-03-02'"), TRIPS)
    assert (verdict.passed, verdict.failure_kind) == (False, "coincidental_pass"), verdict.explanation
    assert right.passed, right.explanation



def test_a_group_key_takes_a_pinned_value_the_variant_lacks(tmp_path: Path) -> None:
    """``GROUP BY model HAVING count(*) >= 2`` to ``>= 1``: where every model the variant holds
    has many rows, a copy given a model the pinned data holds and the variant lacks is a
    group of exactly one."""
    import shutil

    from pytest_sqleval.core.variants.boundaries import Domain
    from pytest_sqleval.core.variants.clones import CloneWriter
    pinned, variant = tmp_path / "pinned.duckdb", tmp_path / "variant.duckdb"
    con = duckdb.connect(str(pinned))
    con.execute("CREATE TABLE aircraft (id INTEGER PRIMARY KEY, model VARCHAR NOT NULL, seats INTEGER NOT NULL)")
    con.execute("INSERT INTO aircraft SELECT i, chr(CAST(65 + i % 5 AS INTEGER)), 100 + i FROM range(50) t(i)")
    con.close()
    shutil.copy(pinned, variant)
    con = duckdb.connect(str(variant))
    con.execute("DELETE FROM aircraft WHERE model = 'E'")
    gold = "SELECT model, avg(seats) FROM aircraft GROUP BY model HAVING count(*) >= 2"
    c = observe_constraints(pinned)
    (regroup,) = [w for w in clone_witnesses([gold], "duckdb", c.tables, c.dependencies) if w.regroup]
    domain = Domain(pinned, "duckdb", c.tables)
    writer = CloneWriter(con, "duckdb", c.tables, c.dependencies, lambda sql, params: con.execute(sql, params).fetchall(),
                         pinned_values=domain.values)
    assert writer.write(regroup, 0)
    domain.close()
    assert con.execute("SELECT model, count(*) FROM aircraft WHERE model = 'E' GROUP BY 1").fetchall() == [("E", 1)]
    assert scalar(con, "SELECT count(*) - count(DISTINCT id) FROM aircraft") == 0
    assert "model = 'E'" in writer.sentences[regroup.gold][0]
    con.close()


def test_a_gold_that_leaves_its_columns_bare_gets_its_new_row_witnesses(shops: tuple[Path, int]) -> None:
    """TPC-DS names no table in its conjuncts: beside the new parent row's second copy of the
    store (``s__n``), a bare ``s_state`` named two tables and every such witness's query
    failed ("Ambiguous reference"), so no new row was written for a dropped filter."""
    path, _ = shops
    bare = ("SELECT count(*), sum(qty) FROM sales f JOIN store s ON store_code = s_code "
            "WHERE s_state = 'TN' AND s_type = 'big'")
    c = observe_constraints(path)
    new = [w for w in clone_witnesses([bare], "duckdb", c.tables, c.dependencies)
           if w.moved and "a new store row" in w.what]
    assert any("fails only `s_type = 'big'`" in w.what for w in new), [w.what for w in new]
    con = duckdb.connect(str(path), read_only=True)
    try:
        found = [con.execute(w.rows_sql, [1] * w.rows_sql.count("?")).fetchall() for w in new]  # each raised before
        assert any(found)  # a small store's type: TX, CA, WA and OR hold one
    finally:
        con.close()
