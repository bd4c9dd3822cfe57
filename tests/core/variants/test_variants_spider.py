"""Variants on a Spider-shaped suite (SQLite databases, one folder per db_id): a gold that
returns nothing on its database is graded on the variants where it returns rows, so a
wrong prediction that is empty too fails as a coincidence and a right one passes; only
a gold empty everywhere stays ungraded."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.sqleval_helpers import read_results, read_summary

CONCERT = "\n".join(
    ["CREATE TABLE singer (singer_id INTEGER PRIMARY KEY, name TEXT NOT NULL, country TEXT NOT NULL, age INTEGER);"]
    # ages 20..60 except 41: the gold below is empty on the pinned database
    + [f"INSERT INTO singer VALUES ({i}, 'n{i}', '{('France', 'US', 'UK')[i % 3]}', {20 + i % 41 if i % 41 != 21 else 20});"
       for i in range(1, 121)])
PETS = "\n".join(
    ["CREATE TABLE pets (petid INTEGER PRIMARY KEY, pettype TEXT NOT NULL, weight REAL, age INTEGER);"]
    + [f"INSERT INTO pets VALUES ({i}, '{('cat', 'dog')[i % 2]}', {1 + i % 13}.5, {1 + i % 9});" for i in range(1, 81)])

#: (db_id, gold, prediction, the verdict with variants)
CASES = [
    ("concert", "SELECT name FROM singer WHERE age = 41", "SELECT name FROM singer WHERE age BETWEEN 41 AND 41", "passed"),
    ("concert", "SELECT count(*) FROM singer WHERE age = 41 AND country = 'US'",
     "SELECT count(*) FROM singer WHERE age = 41 AND country = 'UK'", "failed"),
    ("concert", "SELECT name FROM singer WHERE age = 41", "SELECT name FROM singer WHERE age > 60", "failed"),
    ("pets", "SELECT petid FROM pets WHERE 1 = 0", "SELECT petid FROM pets WHERE 1 = 0", "error"),  # empty everywhere
    ("pets", "SELECT count(*) FROM pets WHERE pettype = 'dog'", "SELECT count(petid) FROM pets WHERE pettype = 'dog'",
     "passed"),
]


@pytest.fixture
def spider(pytester: pytest.Pytester) -> Path:
    root = pytester.path / "spider"
    for db_id, script in (("concert", CONCERT), ("pets", PETS)):
        path = root / "database" / db_id / f"{db_id}.sqlite"
        path.parent.mkdir(parents=True)
        con = sqlite3.connect(path)
        con.executescript(script)
        con.close()
    dev = [{"db_id": db, "question": f"question {i}", "query": gold} for i, (db, gold, _, _) in enumerate(CASES)]
    (root / "dev.json").write_text(json.dumps(dev, indent=2))
    (root / "sqleval.toml").write_text('[suite]\nname = "spider_dev"\nlayout = "spider"\n')
    (pytester.path / "pred.sql").write_text("\n".join(p for _, _, p, _ in CASES) + "\n")
    return root


def test_an_empty_gold_is_graded_on_the_variants_where_it_has_rows(pytester: pytest.Pytester, spider: Path) -> None:
    before = pytester.runpytest("spider", "--sqleval-backend=predictions:pred.sql", "-p", "no:cacheprovider")
    before.assert_outcomes(passed=2, errors=3)  # three golds return no row on their database: ungraded
    after = pytester.runpytest("spider", "--sqleval-backend=predictions:pred.sql", "--sqleval-variants=4",
                               "-p", "no:cacheprovider")
    records = {int(r["case_id"]): r for r in read_results(pytester.path)}
    assert [records[i]["status"] for i in range(len(CASES))] == [c[3] for c in CASES]
    assert records[1]["failure_kind"] == records[2]["failure_kind"] == "coincidental_pass"
    assert "empty" in records[3]["explanation"]
    after.assert_outcomes(passed=2, failed=2, errors=1)  # ungraded: 3 of 5 before, 1 of 5 after
    assert read_summary(pytester.path)["backends"]["pred"]["coincidental_passes"] == 2


def test_a_database_the_generator_cannot_read_is_every_case_s_error_naming_it(pytester: pytest.Pytester,
                                                                                spider: Path) -> None:
    """Not "cannot open the suite's database" (it opens): the variants are what failed, once
    per database, and the error says how to run without them."""
    pytester.makeconftest("""
        from pytest_sqleval.core.variants import distill
        CALLS = []
        def broken(database, *args, **kwargs):
            CALLS.append(database)
            raise IndexError("tuple index out of range")
        distill.VariantSet.build = broken
        def pytest_unconfigure(config):
            print("builds:", len(CALLS))
    """)
    result = pytester.runpytest_subprocess("spider", "--sqleval-backend=predictions:pred.sql", "--sqleval-variants=4",
                                "-p", "no:cacheprovider", "-s")
    result.assert_outcomes(errors=len(CASES))
    records = read_results(pytester.path)
    assert all(r["explanation"].startswith("cannot build the variants of ") and "IndexError" in r["explanation"]
               and "run without --sqleval-variants" in r["explanation"] for r in records)
    result.stdout.fnmatch_lines(["*builds: 2"])  # one per database, not one per case


def test_duckdb_2_0_0_s_internal_error_in_the_builder_says_to_upgrade(pytester: pytest.Pytester, spider: Path) -> None:
    """DuckDB 2.0.0 fails a variant-builder query on the bundled Vantage warehouse with an
    internal error that 2.0.1 fixed (seen in session 56, ``hr.employee_history``'s growth):
    the error says to upgrade, on one line, not "report the schema as a bug" with DuckDB's
    backtrace."""
    pytester.makeconftest("""
        import duckdb
        from pytest_sqleval.core.variants import distill
        class InternalException(Exception):
            pass
        def broken(database, *args, **kwargs):
            raise InternalException("INTERNAL Error: ExpressionExecutor::Execute called with a result vector\\n"
                                    "Stack Trace:\\n/lib/_duckdb.so(+0x306e9f1)")
        distill.VariantSet.build = broken
        duckdb.__version__ = "2.0.0"
    """)
    result = pytester.runpytest_subprocess("spider", "--sqleval-backend=predictions:pred.sql", "--sqleval-variants=4",
                                           "-p", "no:cacheprovider")
    result.assert_outcomes(errors=len(CASES))
    for record in read_results(pytester.path):
        assert "InternalException: INTERNAL Error: ExpressionExecutor" in record["explanation"]
        assert "pip install 'duckdb>=2.0.1'" in record["explanation"] and "Stack Trace" not in record["explanation"]
