"""Spider-style aggregate, HAVING and edge witnesses (issue 31, ``separators.py``, ``witnesses.py``).

A small SQLite database of the Spider kind: text keys declared, a few rows per group, and
attributes unique only because the sample is small (each department in its own building,
each store in its own city, every route of its own length). Each wrong query below returns
the gold's rows on it, and on main (39ba168) no variant told it apart:

- ``sum`` for ``avg`` and ``max`` for ``min`` grouped by such an attribute: every group holds
  one row, and a copy of a row got a fresh value in every observed-unique column, the group
  key among them (a new group of one, never a second row in the group);
- the same swap in the ORDER BY only: the separating writer compared answers as bags;
- ``HAVING sum(qty) > 10`` moved to ``> 11`` on order lines whose key is two references (no
  copy can take a fresh key): no group summed to 11;
- a date bound moved a day where the date is in the table's key (a departure's day):
  no witness writes a key column;
- ``dept_code IN (SELECT ... WHERE budget > 300000)`` dropped where every instructor is in
  such a department, and ``distance > 1150`` written ``>= 1150`` on a column unique by chance: the literal-edge near-misses were never made
  (their conjunct probe ran on a detached copy), and the observer counts such a column a key.

Equivalent rewrites pass on every variant, and every declared key and reference holds."""
from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_sqleval.core.api import Grader
from pytest_sqleval.core.variants.constraints import observe_constraints
from pytest_sqleval.core.variants.separators import near_misses
from pytest_sqleval.core.variants.witnesses import unique_by_chance
from tests.rows import scalar


def make_campus(path: Path) -> None:
    con = sqlite3.connect(path)
    con.executescript("""
        CREATE TABLE department (dept_code TEXT PRIMARY KEY, name TEXT NOT NULL, building TEXT, budget REAL);
        CREATE TABLE instructor (instr_id TEXT PRIMARY KEY, name TEXT NOT NULL,
                                 dept_code TEXT REFERENCES department(dept_code), hired_year INTEGER);
        CREATE TABLE store (store_code TEXT PRIMARY KEY, city TEXT, floor_area INTEGER);
        CREATE TABLE orders (order_id TEXT PRIMARY KEY, order_date TEXT);
        CREATE TABLE product (sku TEXT PRIMARY KEY, name TEXT NOT NULL, price REAL);
        CREATE TABLE order_line (order_id TEXT REFERENCES orders(order_id), sku TEXT REFERENCES product(sku),
                                 qty INTEGER, unit_price REAL, PRIMARY KEY (order_id, sku));
        CREATE TABLE route (route_no TEXT PRIMARY KEY, src TEXT, distance INTEGER);
        CREATE TABLE departure (route_no TEXT REFERENCES route(route_no), dep_date TEXT, passengers INTEGER,
                                PRIMARY KEY (route_no, dep_date));
    """)
    depts = [("AMB", "Amber Studies", "Grove Hall", 335000), ("BIR", "Birch Studies", "Delta Hall", 190000),
             ("CED", "Cedar Studies", "Umber Hall", 870000), ("DEL", "Delta Studies", "Cedar Hall", 125000),
             ("EMB", "Ember Studies", "Harbor Hall", 725000), ("FJO", "Fjord Studies", "Birch Hall", 185000)]
    con.executemany("INSERT INTO department VALUES (?, ?, ?, ?)", depts)
    # every instructor is in a department with a budget over 300000: only a row moved to another
    # department (or a new one) shows the IN dropped
    people = [(f"I{i:03d}", f"Teacher {i}", d, 2000 + i) for i, d in enumerate("AMB AMB CED CED CED EMB EMB EMB".split())]
    con.executemany("INSERT INTO instructor VALUES (?, ?, ?, ?)", people)
    con.executemany("INSERT INTO store VALUES (?, ?, ?)",
                    [("ST000", "Austin", 1200), ("ST001", "Boston", 3400), ("ST002", "Denver", 2750),
                     ("ST003", "Miami", 900), ("ST004", "Reno", 4100), ("ST005", "Tampa", 1650)])
    con.executemany("INSERT INTO product VALUES (?, ?, ?)",
                    [(f"P{i:02d}", f"Product {i}", 5 + 3 * i) for i in range(12)])
    con.executemany("INSERT INTO orders VALUES (?, ?)",
                    [(f"O{i:02d}", f"2019-{1 + i % 12:02d}-{1 + i % 27:02d}") for i in range(16)])
    # per order two or three lines of even quantities summing to 4, 8, 12, 14, 16 or 18: never 11,
    # whatever a shuffle of the quantities does
    sums = [4, 8, 12, 14, 16, 18]
    lines = []
    for i in range(16):
        total, width = sums[i % len(sums)], 2 + i % 2
        qty = [2 * (total // 2 // width + (1 if k < total // 2 % width else 0)) for k in range(width)]
        lines += [(f"O{i:02d}", f"P{(i + 5 * k) % 12:02d}", q, 5 + 3 * ((i + 5 * k) % 12)) for k, q in enumerate(qty)]
    con.executemany("INSERT INTO order_line VALUES (?, ?, ?, ?)", lines)
    con.executemany("INSERT INTO route VALUES (?, ?, ?)",
                    [(f"R{i:02d}", "AUS" if i % 2 else "BOS", 400 + 370 * i) for i in range(10)])
    days = ["2022-06-30", "2022-07-04", "2022-07-10", "2022-07-20", "2022-08-02", "2022-09-15", "2022-11-30"]
    con.executemany("INSERT INTO departure VALUES (?, ?, ?)",
                    [(f"R{i % 10:02d}", days[i % len(days)], 40 + 13 * i) for i in range(28)])
    con.commit()
    con.close()


BUDGETS = "SELECT building, sum(budget) FROM department GROUP BY building ORDER BY sum(budget) DESC"
AREAS = "SELECT city, max(floor_area) FROM store GROUP BY city ORDER BY max(floor_area) DESC LIMIT 3"
HEAVY = ("SELECT T1.order_id, sum(T2.qty * T2.unit_price) FROM orders AS T1 JOIN order_line AS T2 "
         "ON T1.order_id = T2.order_id WHERE T1.order_date < '2019-11-11' GROUP BY T1.order_id HAVING sum(T2.qty) > 10")
SUMMER = "SELECT sum(passengers) FROM departure WHERE dep_date BETWEEN '2022-07-16' AND '2022-12-31'"
RICH = ("SELECT name FROM instructor WHERE hired_year < 2010 AND dept_code IN "
        "(SELECT dept_code FROM department WHERE budget > 300000)")
LONG = "SELECT route_no FROM route WHERE distance > 1150 AND src = 'AUS'"
GOLDS = [BUDGETS, AREAS, HEAVY, SUMMER, RICH, LONG]

COINCIDENCES = {
    "sum_avg_by_chance_unique_key": (BUDGETS, BUDGETS.replace("building, sum(budget)", "building, avg(budget)")),
    "sum_avg_in_order_by_only": (BUDGETS, BUDGETS.replace("ORDER BY sum(budget)", "ORDER BY avg(budget)")),
    "max_min_by_chance_unique_key": (AREAS, AREAS.replace("city, max(floor_area)", "city, min(floor_area)")),
    "having_sum_bound_moved": (HEAVY, HEAVY.replace("> 10", "> 11")),
    "date_bound_in_a_key_moved": (SUMMER, SUMMER.replace("2022-07-16", "2022-07-15")),
    "in_subquery_conjunct_dropped": (RICH, "SELECT name FROM instructor WHERE hired_year < 2010"),
    "operator_on_a_chance_unique_column": (LONG, LONG.replace("> 1150", ">= 1150")),
}
EQUIVALENTS = {
    "budgets_aliased": (BUDGETS, "SELECT d.building, sum(d.budget) AS total FROM department AS d GROUP BY 1 "
                                 "ORDER BY total DESC"),
    "areas_by_position": (AREAS, "SELECT city, max(floor_area) FROM store GROUP BY city ORDER BY 2 DESC LIMIT 3"),
    "heavy_comma_join": (HEAVY, "SELECT o.order_id, sum(l.qty * l.unit_price) FROM order_line AS l, orders AS o "
                                "WHERE l.order_id = o.order_id AND o.order_date < '2019-11-11' GROUP BY o.order_id "
                                "HAVING sum(l.qty) >= 11"),
    "summer_two_comparisons": (SUMMER, "SELECT sum(passengers) FROM departure WHERE dep_date >= '2022-07-16' "
                                       "AND dep_date <= '2022-12-31'"),
    "rich_join": (RICH, "SELECT T1.name FROM instructor AS T1 JOIN department AS T2 ON T1.dept_code = T2.dept_code "
                        "WHERE T2.budget > 300000 AND T1.hired_year < 2010"),
    "long_sides_swapped": (LONG, "SELECT route_no FROM route WHERE src = 'AUS' AND 1150 < distance"),
}


@pytest.fixture(scope="module")
def campus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Grader]]:
    folder = tmp_path_factory.mktemp("campus")
    path = folder / "campus.sqlite"
    make_campus(path)
    with Grader(path, dialect="sqlite", cache_dir=folder / "cache", variants=8, variant_golds=GOLDS,
                column_order="any") as graded:
        yield folder, graded


def test_the_shapes_coincide_on_the_pinned_database(tmp_path: Path) -> None:
    path = tmp_path / "campus.sqlite"
    make_campus(path)
    with Grader(path, dialect="sqlite", cache_dir=tmp_path / "plain", column_order="any") as plain:
        for name, (gold, query) in {**COINCIDENCES, **EQUIVALENTS}.items():
            assert plain.compare(query, gold).passed, name
    tables = observe_constraints(path).tables
    # the attributes the swaps group by are unique only by chance; names and keys are not
    assert unique_by_chance(tables["department"], "building") and unique_by_chance(tables["store"], "city")
    assert unique_by_chance(tables["route"], "distance")
    assert not unique_by_chance(tables["department"], "name") and not unique_by_chance(tables["store"], "store_code")


def test_literal_edges_having_bounds_and_dropped_subqueries_are_near_misses(tmp_path: Path) -> None:
    path = tmp_path / "campus.sqlite"
    make_campus(path)
    found = near_misses(GOLDS, "sqlite", observe_constraints(path).tables)
    whats = {m.what for m in found}
    assert "`SUM(T2.qty) > 10` against its bound moved to 11" in whats
    assert any(w.startswith("`dep_date BETWEEN") and w.endswith("moved to 2022-07-15") for w in whats)
    assert any(w.startswith("the gold against itself without `dept_code IN (SELECT") for w in whats)
    assert "`distance > 1150` against its comparison flipped" in whats
    swap = next(m for m in found if m.what == "`SUM(budget)` against `AVG(budget)`")
    assert swap.order == (1,) and {t.keep for t in swap.targets} == {("building",)}


@pytest.mark.parametrize("name", sorted(COINCIDENCES))
def test_coincidences_are_caught(campus: tuple[Path, Grader], name: str) -> None:
    gold, wrong = COINCIDENCES[name]
    verdict = campus[1].compare(wrong, gold)
    assert (verdict.passed, verdict.failure_kind) == (False, "coincidental_pass"), (name, verdict.explanation)


@pytest.mark.parametrize("name", sorted(EQUIVALENTS))
def test_equivalents_pass_on_every_variant(campus: tuple[Path, Grader], name: str) -> None:
    gold, right = EQUIVALENTS[name]
    verdict = campus[1].compare(right, gold)
    assert verdict.passed, (name, verdict.explanation)


def test_declared_keys_and_references_hold_on_every_variant(campus: tuple[Path, Grader]) -> None:
    variants = sorted((campus[0] / "cache").rglob("variant-*.sqlite"))
    assert variants
    for variant in variants:
        con = sqlite3.connect(variant)
        assert con.execute("PRAGMA foreign_key_check").fetchall() == []
        for table, key in (("department", "dept_code"), ("store", "store_code"), ("order_line", "order_id, sku"),
                           ("departure", "route_no, dep_date"), ("route", "route_no")):
            assert scalar(con, f"SELECT count(*) FROM (SELECT 1 FROM {table} GROUP BY {key} "
                               f"HAVING count(*) > 1)") == 0, (variant.name, table)
        # names stay unique: a correct query may rely on them (DISTINCT name for IN)
        assert scalar(con, "SELECT count(*) - count(DISTINCT name) FROM department") == 0
        con.close()
