"""Tie-breaking witnesses: with database variants on, the grader builds variants on which a
gold's ``ORDER BY ... LIMIT k`` no longer cuts through tied rows (one more flight for one
airline, a sum or a date moved one unit), so a pass that rested only on the tie is
confirmed there, or refuted as a ``coincidental_pass``, and an ``undecidable`` case is
decided. The tables here are small enough that no subset of them is drawn (they stay
whole), so without the witnesses no variant could tell."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import duckdb
import pytest

from pytest_sqleval.core.api import Grader
from pytest_sqleval.core.variants.build import MANIFEST_NAME, read_manifest
from tests.sqleval_helpers import read_results

# -- the motivating case: Spider's flight_2, every airline with as many flights -----------------
FLIGHTS = """
CREATE TABLE airlines (uid INTEGER PRIMARY KEY, Airline TEXT, Abbreviation TEXT, Country TEXT);
CREATE TABLE airports (AirportCode TEXT PRIMARY KEY, City TEXT);
CREATE TABLE flights (Airline INTEGER, FlightNo INTEGER, SourceAirport TEXT, DestAirport TEXT,
                      PRIMARY KEY (Airline, FlightNo),
                      FOREIGN KEY (SourceAirport) REFERENCES airports(AirportCode),
                      FOREIGN KEY (DestAirport) REFERENCES airports(AirportCode));
INSERT INTO airlines VALUES (1, 'Aer', 'AE', 'USA'), (2, 'Blu', 'BL', 'USA'), (3, 'Cal', 'CA', 'USA'),
                            (4, 'Dan', 'DA', 'USA');
INSERT INTO airports VALUES ('AAA', 'Aston'), ('BBB', 'Bury'), ('CCC', 'Crewe');
"""
MOST = ("SELECT T1.Airline FROM airlines AS T1 JOIN flights AS T2 ON T2.Airline = T1.uid GROUP BY T1.uid "
        "ORDER BY count(*) DESC LIMIT 1")
FEWEST = ("SELECT T1.Airline FROM airlines AS T1 JOIN flights AS T2 ON T2.Airline = T1.uid GROUP BY T1.uid "
          "ORDER BY count(*) ASC LIMIT 1")


def flight_2(path: Path, flights: dict[int, int]) -> Path:
    """``flights[uid]`` flights for each airline, between the three airports."""
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path)
    con.executescript(FLIGHTS)
    airports = ("AAA", "BBB", "CCC")
    con.executemany("INSERT INTO flights VALUES (?, ?, ?, ?)",
                    [(a, n, airports[n % 3], airports[(n + 1) % 3]) for a, count in flights.items()
                     for n in range(1, count + 1)])
    con.commit()
    con.close()
    return path


#: (db_id, gold, prediction, status without variants, status with them)
CASES = [
    # every airline has 3 flights: undecidable on the database, decided on the variants
    ("flight_2", MOST, "SELECT Airline FROM airlines LIMIT 1", "undecidable", "failed"),
    ("flight_2", MOST, "SELECT T1.Airline FROM airlines AS T1 JOIN flights AS T2 ON T1.uid = T2.Airline "
                       "GROUP BY T1.Airline ORDER BY count(*) DESC, T1.Airline DESC LIMIT 1", "undecidable", "passed"),
    ("flight_2", MOST, MOST, "passed", "passed"),
    ("flight_2", FEWEST, "SELECT Airline FROM airlines ORDER BY Airline DESC LIMIT 1", "undecidable", "failed"),
    ("flight_2", FEWEST, "SELECT T1.Airline FROM airlines AS T1 JOIN flights AS T2 ON T1.uid = T2.Airline "
                         "GROUP BY T1.uid ORDER BY count(T2.FlightNo), T1.uid DESC LIMIT 1", "undecidable", "passed"),
    # Blu and Cal tie at the top: a pass naming either outright rests on the tie
    ("flight_3", MOST, "SELECT Airline FROM airlines WHERE uid = 2", "passed", "failed"),
    ("flight_3", MOST, "SELECT Airline FROM airlines WHERE uid = 3", "passed", "failed"),
    ("flight_3", MOST, "SELECT T1.Airline FROM airlines AS T1 JOIN flights AS T2 ON T1.uid = T2.Airline "
                       "GROUP BY T1.Airline ORDER BY count(*) DESC, T1.Airline DESC LIMIT 1", "passed", "passed"),
]


@pytest.fixture
def spider(pytester: pytest.Pytester) -> Path:
    root = pytester.path / "spider"
    flight_2(root / "database" / "flight_2" / "flight_2.sqlite", {1: 3, 2: 3, 3: 3, 4: 3})
    flight_2(root / "database" / "flight_3" / "flight_3.sqlite", {1: 2, 2: 3, 3: 3, 4: 1})
    dev = [{"db_id": db, "question": f"question {i}", "query": gold} for i, (db, gold, *_) in enumerate(CASES)]
    (root / "dev.json").write_text(json.dumps(dev, indent=2))
    (root / "sqleval.toml").write_text('[suite]\nname = "spider_dev"\nlayout = "spider"\n')
    (pytester.path / "pred.sql").write_text("\n".join(c[2] for c in CASES) + "\n")
    return root


def _records(pytester: pytest.Pytester, *options: str) -> dict[int, dict[str, Any]]:
    pytester.runpytest("spider", "--sqleval-backend=predictions:pred.sql", "-p", "no:cacheprovider", *options)
    return {int(r["case_id"]): r for r in read_results(pytester.path)}


def test_a_tie_only_or_undecidable_pass_is_decided_on_a_tie_breaking_variant(pytester: pytest.Pytester,
                                                                              spider: Path) -> None:
    before = _records(pytester)
    assert [before[i]["status"] for i in range(len(CASES))] == [c[3] for c in CASES]
    assert sorted(before[i]["tie_only"] for i in (5, 6)) == [False, True]
    after = _records(pytester, "--sqleval-variants=4")
    assert [after[i]["status"] for i in range(len(CASES))] == [c[4] for c in CASES], \
        [(i, after[i]["status"], after[i]["explanation"][:200]) for i in range(len(CASES))]
    for i, case in enumerate(CASES):
        record = after[i]
        if case[4] == "failed":  # refuted on a variant where the gold's top is unique
            assert record["failure_kind"] == "coincidental_pass", record["explanation"]
            assert "variant" in record["explanation"]
        else:  # confirmed there: a pass that no longer rests on the tie alone
            assert record["pass"] is True and record["layers"]["variants"]["graded"] >= 1, record["explanation"]
    assert before[7]["tie_only"] is True  # Cal, where the gold returned Blu
    assert all("confirmed on" in after[i]["explanation"] for i in (1, 4, 7))  # no longer resting on the tie


# -- the sort keys a witness moves, on DuckDB -------------------------------------------------
def shop(path: Path) -> Path:
    """Four customers with three orders each: the same count, amounts (100, 200, 300: sum 600,
    average 200), prices (max 30.50) and days (2024-01-01 .. 03) for every customer."""
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name VARCHAR)")
    con.execute("INSERT INTO customers VALUES (1, 'Ann'), (2, 'Bob'), (3, 'Cyd'), (4, 'Dee')")
    con.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, customer INTEGER REFERENCES customers(id), "
                "amount INTEGER, price DECIMAL(8, 2), day DATE)")
    con.executemany("INSERT INTO orders VALUES (?, ?, ?, ?, ?)",
                    [(3 * (c - 1) + j, c, 100 * j, f"{10 * j}.50", f"2024-01-0{j}") for c in range(1, 5)
                     for j in range(1, 4)])
    con.close()
    return path


JOINED = "SELECT c.name FROM customers c JOIN orders o ON o.customer = c.id GROUP BY c.id, c.name ORDER BY {} LIMIT 1"
NO_JOIN = "SELECT name FROM customers LIMIT 1"
LAST = "SELECT name FROM customers ORDER BY name DESC LIMIT 1"

KEYS = [  # (gold, a wrong query that returns a tie member, a right one that breaks the tie otherwise, what moves)
    pytest.param(JOINED.format("count(*) DESC"), NO_JOIN,
                 "SELECT c.name FROM customers c JOIN orders o ON o.customer = c.id GROUP BY c.name "
                 "ORDER BY count(o.id) DESC, c.name DESC LIMIT 1", "main.orders+rows", id="count-desc"),
    pytest.param(JOINED.format("count(*)"), LAST,
                 "SELECT c.name FROM customers c JOIN orders o ON o.customer = c.id GROUP BY c.name "
                 "ORDER BY count(*), c.name DESC LIMIT 1", "main.orders+rows", id="count-asc"),
    pytest.param(JOINED.format("sum(o.amount) DESC"), NO_JOIN,
                 "SELECT c.name FROM orders o JOIN customers c ON c.id = o.customer GROUP BY c.name "
                 "ORDER BY sum(amount) DESC, c.name DESC LIMIT 1", "main.orders.amount", id="sum-desc"),
    pytest.param(JOINED.format("max(o.price) DESC"), NO_JOIN,  # at the column's maximum: the others move down
                 "SELECT c.name FROM orders o JOIN customers c ON c.id = o.customer GROUP BY c.name "
                 "ORDER BY max(price) DESC, c.name DESC LIMIT 1", "main.orders.price", id="max-desc"),
    pytest.param(JOINED.format("avg(o.amount)"), LAST,
                 "SELECT c.name FROM orders o JOIN customers c ON c.id = o.customer GROUP BY c.name "
                 "ORDER BY avg(amount), c.name DESC LIMIT 1", "main.orders.amount", id="avg-asc"),
    pytest.param("SELECT id FROM orders ORDER BY day DESC LIMIT 1", "SELECT id FROM orders ORDER BY id DESC LIMIT 1",
                 "SELECT id FROM orders ORDER BY day DESC, id LIMIT 1", "main.orders.day", id="column-desc"),
]


@pytest.mark.parametrize(("gold", "wrong", "right", "moved"), KEYS)
def test_each_kind_of_sort_key_is_moved_one_step(tmp_path: Path, gold: str, wrong: str, right: str,
                                                 moved: str) -> None:
    database = shop(tmp_path / "shop.duckdb")
    with Grader(database, cache_dir=tmp_path / "plain") as plain:
        assert plain.compare(wrong, gold).status in ("passed", "undecidable")  # the tie alone lets it through
    with Grader(database, cache_dir=tmp_path / "cache", variants=4, variant_golds=[gold]) as graded:
        refuted, confirmed = graded.compare(wrong, gold), graded.compare(right, gold)
    assert refuted.status == "failed" and refuted.failure_kind == "coincidental_pass", refuted.explanation
    assert confirmed.status == "passed" and confirmed.layers["variants"]["graded"] >= 1, confirmed.explanation
    built = read_manifest(next((tmp_path / "cache" / "variants").glob(f"*/*/rows-*/{MANIFEST_NAME}")))
    # a witness, not luck: the tie writer's move, or a clone witness's copied row (which, turned by
    # the variant's index, makes another member the unique top on each variant)
    table = moved.split("+")[0].rsplit(".", 1)[0] if "+" not in moved else moved.split("+")[0]
    witnesses = (moved, f"{table} (new rows)")
    assert any(w in (v["params"].get("boundary_rows") or {}) for v in built["variants"] for w in witnesses)


def test_tie_breaking_variants_are_the_same_built_twice(tmp_path: Path) -> None:
    """Deterministic: which members move, and which row is copied, does not depend on the
    build (a frozen variant's content hash must not)."""
    from pytest_sqleval.core.variants.distill import VariantSet
    database = shop(tmp_path / "shop.duckdb")
    golds = [JOINED.format("count(*) DESC"), JOINED.format("count(*)"), JOINED.format("sum(o.amount) DESC")]
    one, two = (VariantSet.build(database, tmp_path / name, 4, gold_sqls=golds) for name in ("one", "two"))
    assert [v.content_hash for v in one.pool] == [v.content_hash for v in two.pool]
    assert all("orders+rows" in str(v.params.get("boundary_rows")) for v in one.pool)
