"""Spider-style near-misses on years, small bounds and COUNT DISTINCT (issue 31, the misses of
the held-out Spider-style sets: literals on years moved by one, a dropped conjunct on a joined
table, ``count(DISTINCT x)`` written ``count(x)``).

A small SQLite database of the Spider kind, text keys declared. Each wrong query returns the
gold's rows on it, and on main (172a032) no variant told it apart:

- ``T2.founded < 1990`` dropped where the five airlines were founded 1944-1972, and ``opened
  BETWEEN 2002 AND 2007`` moved to 2001 where the stores opened from 2002: the witness is a row
  at the literal or beside it, and a year column was held to its pinned range (a code or
  calendar domain), though five airlines' years with gaps are a sample, not a calendar;
- ``count(DISTINCT o.cust_id)`` over the orders of Japanese stores, where no store is
  Japanese: the gold answers 0, which counted as a value, so no tuple was built for it, and no
  order reaches it to copy;
- ``hired_year >= 2016`` moved to 2015 and to 2017: the separating writer set a reaching row to
  2015 for one, then the comparison flipped set the same row back to 2016 for the other.

Equivalent rewrites pass on every variant, and every declared key and reference holds."""
from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from pytest_sqleval.core.api import Grader

FOUNDED = "SELECT T1.name FROM crew AS T1 JOIN airline AS T2 ON T1.airline_code = T2.code " \
          "WHERE T2.founded < 1990 AND T1.hired_year > 2018"
OPENED = "SELECT city FROM store WHERE opened BETWEEN 2002 AND 2007"
JAPAN = "SELECT count(DISTINCT T1.cust_id) FROM orders AS T1 JOIN store AS T2 ON T1.store_code = T2.store_code " \
        "WHERE T2.country_code = 'JP'"
PILOTS = "SELECT name FROM crew WHERE role = 'pilot' AND hired_year >= 2016"
GOLDS = [FOUNDED, OPENED, JAPAN, PILOTS]

WRONG = {
    FOUNDED: [FOUNDED.replace("T2.founded < 1990 AND ", "")],
    OPENED: [OPENED.replace("2002", "2001")],
    JAPAN: [JAPAN.replace("count(DISTINCT T1.cust_id)", "count(T1.cust_id)")],
    PILOTS: [PILOTS.replace("2016", "2015"), PILOTS.replace("2016", "2017")],
}
REWRITES = {
    FOUNDED: ["SELECT c.name FROM airline AS a JOIN crew AS c ON a.code = c.airline_code "
              "WHERE c.hired_year > 2018 AND a.founded < 1990"],
    OPENED: ["SELECT city FROM store WHERE opened >= 2002 AND opened <= 2007"],
    JAPAN: ["SELECT count(*) FROM (SELECT DISTINCT o.cust_id FROM orders AS o JOIN store AS s "
            "ON o.store_code = s.store_code WHERE s.country_code = 'JP')"],
    PILOTS: ["SELECT name FROM crew WHERE hired_year >= 2016 AND role = 'pilot'"],
}


def make_airlines(path: Path) -> None:
    con = sqlite3.connect(path)
    con.executescript("""
        CREATE TABLE country (code TEXT PRIMARY KEY, name TEXT NOT NULL);
        CREATE TABLE store (store_code TEXT PRIMARY KEY, city TEXT, country_code TEXT REFERENCES country(code),
                            opened INTEGER);
        CREATE TABLE customer (cust_id TEXT PRIMARY KEY, name TEXT NOT NULL, country_code TEXT REFERENCES country(code));
        CREATE TABLE orders (order_id TEXT PRIMARY KEY, cust_id TEXT REFERENCES customer(cust_id),
                             store_code TEXT REFERENCES store(store_code), status TEXT);
        CREATE TABLE airline (code TEXT PRIMARY KEY, name TEXT NOT NULL, founded INTEGER);
        CREATE TABLE crew (crew_id TEXT PRIMARY KEY, name TEXT NOT NULL, airline_code TEXT REFERENCES airline(code),
                           role TEXT, hired_year INTEGER);
    """)
    con.executemany("INSERT INTO country VALUES (?, ?)", [("US", "United States"), ("FR", "France"), ("JP", "Japan")])
    # no store is Japanese; the stores opened in four years from 2002, none in 2001
    opened = [2002, 2011, 2002, 2019, 2020, 2011, 2020]
    cities = ["Austin", "Boston", "Denver", "Miami", "Reno", "Tampa", "Omaha"]
    con.executemany("INSERT INTO store VALUES (?, ?, ?, ?)",
                    [(f"ST{i:03d}", c, "US" if i % 2 else "FR", y) for i, (c, y) in enumerate(zip(cities, opened))])
    con.executemany("INSERT INTO customer VALUES (?, ?, ?)",
                    [(f"CU{i:03d}", f"Customer {i}", ("US", "FR", "JP")[i % 3]) for i in range(24)])
    con.executemany("INSERT INTO orders VALUES (?, ?, ?, ?)",
                    [(f"O{i:03d}", f"CU{(i * 7) % 24:03d}", f"ST{i % 7:03d}", ("shipped", "open")[i % 2])
                     for i in range(40)])
    # five airlines founded 1944-1972: none at or after 1990
    con.executemany("INSERT INTO airline VALUES (?, ?, ?)",
                    [("DE", "Delta Air", 1958), ("EM", "Ember Air", 1972), ("FJ", "Fjord Air", 1944),
                     ("GR", "Grove Air", 1952), ("HA", "Harbor Air", 1948)])
    # one crew member a year 1995-2022; the pilots hired from 2015 on were hired in 2019 and 2022
    roles = {2019: "pilot", 2022: "pilot"}
    con.executemany("INSERT INTO crew VALUES (?, ?, ?, ?, ?)",
                    [(f"K{i:03d}", f"Crew {i}", ("DE", "EM", "FJ", "GR", "HA")[i % 5],
                      roles.get(1995 + i, "attendant" if i % 3 else ("pilot" if 1995 + i < 2015 else "copilot")),
                      1995 + i) for i in range(28)])
    con.commit()
    con.close()


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Grader]:
    root = tmp_path_factory.mktemp("literal_neighbours")
    path = root / "airlines.sqlite"
    make_airlines(path)
    grader = Grader(path, dialect="sqlite", cache_dir=root / "cache", variants=8, variant_golds=GOLDS)
    return path, grader


@pytest.mark.parametrize("gold", GOLDS, ids=["founded_dropped", "opened_moved", "count_distinct", "hired_moved"])
def test_the_near_miss_coincides_on_the_pinned_data_and_fails_on_a_variant(graded: tuple[Path, Grader],
                                                                            gold: str) -> None:
    path, grader = graded
    pinned = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        answer = sorted(pinned.execute(gold).fetchall())
        for wrong in WRONG[gold]:
            assert sorted(pinned.execute(wrong).fetchall()) == answer, wrong  # a coincidence on the pinned data
    finally:
        pinned.close()
    for wrong in WRONG[gold]:
        verdict = grader.compare(wrong, gold)
        assert (verdict.passed, verdict.failure_kind) == (False, "coincidental_pass"), (wrong, verdict.explanation)


@pytest.mark.parametrize("gold", GOLDS, ids=["founded_dropped", "opened_moved", "count_distinct", "hired_moved"])
def test_equivalent_rewrites_pass_on_every_variant(graded: tuple[Path, Grader], gold: str) -> None:
    _, grader = graded
    for sql in [gold, *REWRITES[gold]]:
        verdict = grader.compare(sql, gold)
        assert verdict.passed, (sql, verdict.explanation)


def test_every_variant_keeps_the_keys_and_references(graded: tuple[Path, Grader]) -> None:
    _, grader = graded
    variant_set = grader._grader.variant_set
    assert variant_set is not None
    for variant in variant_set.pool:
        con = sqlite3.connect(f"file:{variant.path}?mode=ro", uri=True)
        try:
            assert con.execute("PRAGMA foreign_key_check").fetchall() == [], variant.kind
            for table, key in (("country", "code"), ("store", "store_code"), ("customer", "cust_id"),
                               ("orders", "order_id"), ("airline", "code"), ("crew", "crew_id")):
                assert con.execute(f"SELECT {key} FROM {table} GROUP BY {key} HAVING count(*) > 1").fetchall() == []
            # the years written stay whole years of the calendar
            assert con.execute("SELECT count(*) FROM airline WHERE founded NOT BETWEEN 1800 AND 2200 "
                               "OR founded <> round(founded)").fetchone() == (0,)
        finally:
            con.close()
