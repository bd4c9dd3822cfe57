"""Where the Spark engine's tables come from and what loading them costs: a SQLite file
(Spider's layout) mirrored under SQLite's typing rule, the columns kept in the mirror's index
so Spark infers nothing, tables registered when a query first names them, and the run's
``--sqleval-engine`` carried by the run itself (two runs in one process do not see each
other's). The tests that need a JVM are marked ``spark``; the rest run without Java."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any, Iterator

import pytest

from pytest_sqleval.core.engines import engine_name
from pytest_sqleval.core.engines.base import Limits
from pytest_sqleval.core.engines.spark_sandbox import (MIRROR_INDEX, SparkSettings, is_sqlite_file, mirror,
                                                       parse_location, source_hash, spark_location,
                                                       sqlite_affinity, sqlite_column_type)
from tests.core.engines.test_spark import _spark_missing

#: a Spider-like database: SQLite's loose typing as Spider's files have it (declared types
#: that say nothing, '' for a missing number, dates as text, a column that is only NULL)
SHOP = """
CREATE TABLE customer (id INTEGER PRIMARY KEY, name TEXT, age number, joined DATE, note BLOB, score REAL, x);
INSERT INTO customer VALUES (1, 'Ann', 34, '2009-01-05', NULL, 1.5, NULL), (2, 'Bo', '', '2010-02-01', NULL, 2, NULL),
                            (3, 'Cy', 51, '2008-12-31', NULL, NULL, NULL), (4, 'Di', 27.5, NULL, NULL, 3.25, NULL);
CREATE TABLE purchase (customer_id INTEGER, amount REAL, tag BLOB);
INSERT INTO purchase VALUES (1, 10.0, x'00ff'), (1, 2.5, x'01'), (2, 7.0, NULL), (3, 1.0, x'02');
CREATE VIEW big AS SELECT customer_id, sum(amount) AS total FROM purchase GROUP BY customer_id HAVING sum(amount) > 5;
"""
PETS = """
CREATE TABLE pets (petid INTEGER, pettype VARCHAR(20), weight REAL, age INTEGER);
INSERT INTO pets VALUES (1, 'cat', 3.5, 2), (2, 'dog', 12.0, 3), (3, 'dog', 9.3, 1), (4, 'cat', 4.1, 5);
"""


def sqlite_db(path: Path, script: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path)
    con.executescript(script)
    con.close()
    return path


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sqlite_db(tmp_path_factory.mktemp("sqlite-src") / "shop.sqlite", SHOP)


@pytest.fixture(scope="module")
def sandbox(shop: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    missing = _spark_missing()
    if missing:
        pytest.skip(missing)
    from pytest_sqleval.core.engines.spark_sandbox import SparkSandbox
    sb = SparkSandbox(spark_location(shop, SparkSettings(cache_dir=str(tmp_path_factory.mktemp("cache")))),
                      Limits(timeout_s=30.0, max_rows=1000))
    yield sb
    sb.close()


# -- SQLite's typing rule: no JVM ----------------------------------------------------------
@pytest.mark.parametrize("declared, affinity", [
    ("INTEGER", "INTEGER"), ("BIGINT", "INTEGER"), ("VARCHAR(20)", "TEXT"), ("CLOB", "TEXT"), ("BLOB", "BLOB"),
    ("", "BLOB"), ("REAL", "REAL"), ("double precision", "REAL"), ("FLOAT", "REAL"), ("number", "NUMERIC"),
    ("DATE", "NUMERIC"), ("DECIMAL(10,2)", "NUMERIC"), ("CHARINT", "INTEGER"),  # INT is looked for first
])
def test_sqlite_affinity_follows_sqlites_own_rules(declared: str, affinity: str) -> None:
    assert sqlite_affinity(declared) == affinity


@pytest.mark.parametrize("declared, classes, spark", [
    ("INTEGER", {"integer", "null"}, "bigint"), ("number", {"integer", "real"}, "double"),
    ("number", {"integer", "text"}, "string"),  # Spider's '' for a missing number: text, as SQLite holds it
    ("TEXT", {"text"}, "string"), ("BLOB", {"blob"}, "binary"), ("BLOB", {"blob", "text"}, "string"),
    ("INTEGER", {"null"}, "bigint"), ("number", set(), "double"), ("", set(), "string"), ("DATE", {"text"}, "string"),
])
def test_a_sqlite_column_is_typed_by_the_values_it_holds(declared: str, classes: set[str], spark: str) -> None:
    assert sqlite_column_type(declared, classes) == spark


def test_a_sqlite_file_is_mirrored_by_the_rule_and_once(shop: Path, tmp_path: Path) -> None:
    pytest.importorskip("pyspark", reason="the mirror's Spark types come from pyspark (pip install 'pytest-sqleval[spark]')")
    import pyarrow.parquet as pq

    from pytest_sqleval.core.engines.sqlite_sandbox import SQLiteSandbox
    assert is_sqlite_file(shop)
    digest = source_hash(shop, tmp_path)
    db = SQLiteSandbox(shop)
    try:
        assert digest == db.content_hash()  # the hash the file has on SQLite: one gold cache key for both
    finally:
        db.close()
    tables = {t.table: t for t in mirror(shop, digest, tmp_path)}
    assert set(tables) == {"customer", "purchase", "big"}  # the view too, as rows
    assert dict(tables["customer"].columns) == {"id": "bigint", "name": "string", "age": "string", "joined": "string",
                                                "note": "string", "score": "double", "x": "string"}
    assert dict(tables["purchase"].columns) == {"customer_id": "bigint", "amount": "double", "tag": "binary"}
    rows = pq.read_table(Path(tables["customer"].folder)).to_pylist()
    assert [r["age"] for r in rows] == ["34", "", "51", "27.5"]  # SQLite's own CAST(v AS TEXT)
    assert [r["score"] for r in rows] == [1.5, 2.0, None, 3.25]
    index = tmp_path / digest / MIRROR_INDEX
    before = index.stat().st_mtime_ns
    assert mirror(shop, digest, tmp_path) == list(tables.values()) and index.stat().st_mtime_ns == before


def test_a_spider_suite_on_spark_opens_each_database_file(tmp_path: Path) -> None:
    from pytest_sqleval.core.cases import collect_cases, load_manifest
    root = _spider_suite(tmp_path)
    manifest = load_manifest(root / "sqleval.toml", engine="spark")
    pairs = collect_cases(manifest, root / "dev.json")
    sources = {case.id: parse_location(str(m.database))[0] for case, m in pairs}
    assert all(engine_name(m.database) == "spark" for _, m in pairs)
    assert sources["0"] == (root / "database" / "shop" / "shop.sqlite").resolve()
    assert sources["3"] == (root / "database" / "pets" / "pets.sqlite").resolve()


# -- the run's engine does not leak: no JVM --------------------------------------------------
_RECORD_DATABASES = """
import json, os
def pytest_collection_modifyitems(items):
    with open(os.environ["SQLEVAL_SEEN"], "a") as fh:
        for item in items:
            manifest = getattr(item, "manifest", None)
            if manifest is not None:
                fh.write(json.dumps(str(manifest.database)) + "\\n")
"""


def _seen(path: Path) -> list[str]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_two_runs_in_one_process_keep_their_own_engine(pytester: pytest.Pytester, make_suite: Any,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A run that chose Spark and stopped at configuration (a bad option) used to leave its
    engine in a module global for whatever read a manifest next in the process (library
    code, the next run until its own configuration reset it). (The manifest module is
    imported out here, as in any process that read a manifest before, so pytester's
    in-process runs share the one module.)"""
    from pytest_sqleval.core.cases import load_manifest
    suite = make_suite([{"id": "a", "question": "q", "gold_sql": "SELECT 1"}])
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makeconftest(_RECORD_DATABASES)
    seen = pytester.path / "seen.jsonl"
    monkeypatch.setenv("SQLEVAL_SEEN", str(seen))
    (pytester.path / "a_file").write_text("")
    first = pytester.runpytest("--sqleval-engine=spark", "--sqleval-results=a_file", "--co", "-p", "no:cacheprovider")
    assert first.ret == pytest.ExitCode.USAGE_ERROR
    assert engine_name(load_manifest(suite / "sqleval.toml").database) == "duckdb"
    second = pytester.runpytest("suite", "--sqleval-engine=spark", "--co", "-p", "no:cacheprovider")
    assert second.ret == pytest.ExitCode.OK
    assert engine_name(load_manifest(suite / "sqleval.toml").database) == "duckdb"
    third = pytester.runpytest("suite", "--co", "-p", "no:cacheprovider")
    assert third.ret == pytest.ExitCode.OK
    spark_db, duck_db = _seen(seen)
    assert engine_name(spark_db) == "spark" and engine_name(duck_db) == "duckdb"


def test_a_manifest_read_inside_a_spark_run_keeps_its_own_engine(pytester: pytest.Pytester, make_suite: Any) -> None:
    """Library code (``load_manifest``, ``Grader``) called during a run that chose Spark reads
    the manifest as written: the run's choice is the run's, not the process's."""
    suite = make_suite([{"id": "a", "question": "q", "gold_sql": "SELECT 1"}])
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(test_library=f"""
        from pytest_sqleval.core.cases import load_manifest
        from pytest_sqleval.core.engines import engine_name

        def test_reads_duckdb():
            assert engine_name(load_manifest({str(suite / 'sqleval.toml')!r}).database) == "duckdb"
    """)
    result = pytester.runpytest("test_library.py", "--sqleval-engine=spark", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


# -- on a real local Spark ---------------------------------------------------------------------
def _run(sb: Any, sql: str) -> list[tuple[Any, ...]]:
    outcome = sb.run(sql)
    assert outcome.error is None, outcome.error
    return [tuple(r.values()) for r in outcome.table.to_pylist()]


@pytest.mark.spark
def test_sqlite_data_reads_on_spark_as_on_sqlite(sandbox: Any, shop: Path) -> None:
    con = sqlite3.connect(shop)
    try:
        for sql in ("SELECT name, score FROM customer ORDER BY id", "SELECT count(*) FROM customer WHERE age = ''",
                    "SELECT customer_id, total FROM big ORDER BY customer_id",
                    "SELECT c.name, sum(p.amount) FROM customer c JOIN purchase p ON p.customer_id = c.id "
                    "GROUP BY c.name ORDER BY c.name", "SELECT joined FROM customer WHERE joined > '2009-06' ORDER BY 1"):
            assert _run(sandbox, sql) == con.execute(sql).fetchall(), sql
    finally:
        con.close()


@pytest.mark.spark
def test_difference_sqlite_compares_a_numeric_column_with_a_number_looking_literal_as_numbers(
        sandbox: Any, shop: Path) -> None:
    """A DATE column has NUMERIC affinity in SQLite, so '2009' becomes the integer 2009 and
    every text date is greater than it (text sorts after numbers); Spark compares text."""
    sql = "SELECT joined FROM customer WHERE joined > '2009' ORDER BY 1"
    con = sqlite3.connect(shop)
    try:
        assert con.execute(sql).fetchall() == [("2008-12-31",), ("2009-01-05",), ("2010-02-01",)]
    finally:
        con.close()
    assert _run(sandbox, sql) == [("2009-01-05",), ("2010-02-01",)]


#: each row of docs/explanation/spark.md's "SQLite and Spark" table that a Spider run met:
#: the query, SQLite's answer, and Spark's answer or its error (category, condition)
SQLITE_DIFFERENCES = [
    pytest.param("SELECT name FROM customer WHERE name LIKE '%a%' ORDER BY 1", [("Ann",)], [], id="like-case"),
    pytest.param("SELECT 7 / 2", [(3,)], [(3.5,)], id="integer-division"),
    pytest.param("SELECT c.name, count(*) FROM customer c JOIN purchase p ON p.customer_id = c.id "
                 "GROUP BY p.customer_id ORDER BY 2, 1", [("Bo", 1), ("Cy", 1), ("Ann", 2)],
                 ("invalid_aggregation", "MISSING_AGGREGATION"), id="bare-column"),
    pytest.param("SELECT avg(age) FROM customer", [(28.125,)], ("type_mismatch", "CAST_INVALID_INPUT"),
                 id="arithmetic-over-text"),
    pytest.param("SELECT name FROM customer WHERE id = (SELECT customer_id FROM purchase WHERE amount > 2)",
                 [("Ann",)], ("unknown_error", "SCALAR_SUBQUERY_TOO_MANY_ROWS"), id="scalar-subquery-of-two-rows"),
]


@pytest.mark.spark
@pytest.mark.parametrize("sql, on_sqlite, on_spark", SQLITE_DIFFERENCES)
def test_difference_sqlite_and_spark(sandbox: Any, shop: Path, sql: str, on_sqlite: list[tuple[Any, ...]],
                                     on_spark: Any) -> None:
    """Spider's golds and predictions meet these; each is an engine difference, not the
    grader's: SQLite answers, Spark answers otherwise or refuses with one clear error."""
    con = sqlite3.connect(shop)
    try:
        assert con.execute(sql).fetchall() == on_sqlite
    finally:
        con.close()
    if isinstance(on_spark, list):
        assert _run(sandbox, sql) == on_spark
        return
    error = sandbox.run(sql).error
    assert error is not None and (error.category, error.exception.split(".")[0]) == on_spark
    assert error.message.startswith(f"[{error.exception}]") and "\tat " not in error.message


@pytest.mark.spark
def test_the_indexed_columns_are_what_spark_infers(sandbox: Any) -> None:
    """Registered with the index's columns, Spark infers nothing: they must be what it would."""
    for t in sandbox.tables:
        inferred = sandbox.spark.read.parquet(t.folder).schema
        assert t.columns == tuple((f.name, f.dataType.simpleString()) for f in inferred.fields), t.table


@pytest.mark.spark
def test_a_table_is_registered_when_a_query_first_names_it(sandbox: Any) -> None:
    from pytest_sqleval.core.engines import spark_sandbox
    spark_sandbox._ACTIVE["owner"] = None  # as a fresh process would find the catalog
    sandbox._activate()
    names = lambda: {r.tableName for r in sandbox.spark.sql("SHOW TABLES IN main").collect()}  # noqa: E731
    assert names() == set()
    assert _run(sandbox, "SELECT count(*) FROM purchase") == [(4,)]
    assert names() == {"purchase"}
    assert sandbox.catalog()["main"]["customer"]["age"] == "string" and names() == {"purchase"}
    missing = sandbox.run("SELECT * FROM nowhere")
    assert missing.error is not None and missing.error.category == "missing_table"
    assert names() == {"purchase", "customer", "big"}  # a name sqlglot may not see: all registered, run again


@pytest.mark.spark
def test_a_name_sqlglot_cannot_see_is_found_on_the_second_try(sandbox: Any) -> None:
    from pytest_sqleval.core.engines import spark_sandbox
    spark_sandbox._ACTIVE["owner"] = None
    sandbox._activate()
    assert _run(sandbox, "SELECT count(*) FROM IDENTIFIER('main.customer')") == [(4,)]


# -- a Spider-layout suite graded end to end on Spark ------------------------------------------
#: (db_id, gold, prediction); the verdicts are SQLite's on these cases
CASES = [
    ("shop", "SELECT count(*) FROM customer", "SELECT count(id) FROM customer"),
    ("shop", "SELECT name FROM customer WHERE score > 2", "SELECT name FROM customer WHERE score >= 2"),
    ("shop", "SELECT name, joined FROM customer WHERE joined < '2010-01-01'",
     "SELECT joined, name FROM customer WHERE joined < '2010-01-01' AND joined IS NOT NULL"),
    ("pets", "SELECT count(*) FROM pets WHERE pettype = 'dog'", "SELECT count(*) FROM pets WHERE weight > 9"),
    ("pets", "SELECT max(age) FROM pets", "SELECT max(years) FROM pets"),
    ("pets", "SELECT avg(weight) FROM pets", "SELECT sum(weight) / count(*) FROM pets"),
]
VERDICTS = {"0": "passed", "1": "failed", "2": "passed", "3": "passed", "4": "failed", "5": "passed"}


def _spider_suite(root: Path) -> Path:
    folder = root / "spider"
    sqlite_db(folder / "database" / "shop" / "shop.sqlite", SHOP)
    sqlite_db(folder / "database" / "pets" / "pets.sqlite", PETS)
    dev = [{"db_id": db, "question": f"question {i}", "query": gold, "query_toks": gold.split(), "sql": {}}
           for i, (db, gold, _) in enumerate(CASES)]
    (folder / "dev.json").write_text(json.dumps(dev, indent=1))
    (folder / "tables.json").write_text(json.dumps([{"db_id": "shop"}, {"db_id": "pets"}]))
    (folder / "sqleval.toml").write_text('[suite]\nname = "spider_dev"\nlayout = "spider"\ntables = "tables.json"\n'
                                         '[spark]\nmaster = "local[1]"\n'
                                         '[limits]\ntimeout_s = 60\n')  # opening a database: 10 x the limit (a JVM on a loaded machine)
    (root / "pred.sql").write_text("\n".join(p for _, _, p in CASES) + "\n")
    return folder


@pytest.mark.spark
def test_a_spider_suite_is_graded_on_spark_as_on_sqlite(pytester: pytest.Pytester, tmp_path: Path) -> None:
    missing = _spark_missing()
    if missing:
        pytest.skip(missing)
    _spider_suite(pytester.path)
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    verdicts = {}
    for engine in ([], ["--sqleval-engine=spark"]):
        # on Spark in a process of its own: what reaches its terminal is what a user sees
        run = pytester.runpytest_subprocess if engine else pytester.runpytest
        result = run("spider", "--sqleval-backend=predictions:pred.sql", "-p", "no:cacheprovider",
                     f"--sqleval-results=out{len(engine)}", *engine)
        records = [json.loads(line) for line in (pytester.path / f"out{len(engine)}" / "results.jsonl").read_text()
                   .splitlines()]
        verdicts[bool(engine)] = {r["case_id"]: r["status"] for r in records}
        engines = {r.get("engine") for r in records}
        assert engines == {"spark" if engine else "sqlite"}, (engines, result.stdout.str()[-3000:])
    assert verdicts[False] == VERDICTS
    assert verdicts[True] == VERDICTS
    # Spark's own output never reaches the terminal: no JVM log line, no stack; the case whose
    # prediction Spark refuses (``max(years)``: no such column) fails with Spark's one line
    out, err = result.stdout.str(), result.stderr.str()
    assert not any(word in out + err for word in ("WARN", "log4j", "JVM stacktrace", "\tat org.", "Traceback",
                                                   "RETRIES_EXCEEDED", "SparkContext")), (out[-3000:], err[-3000:])
    assert "missing_column" in out and err.strip() == "", err[-3000:]


# -- SQLite's double-quoted strings, transpiled: no JVM ------------------------------------------
@pytest.mark.parametrize("sqlite, spark", [
    ('SELECT airline FROM airlines WHERE abbreviation = "UAL"', "SELECT airline FROM airlines WHERE abbreviation = 'UAL'"),
    ('SELECT name FROM teacher WHERE "little lever" != hometown', "SELECT name FROM teacher WHERE 'little lever' <> hometown"),
    ('SELECT a FROM t WHERE b IN ("p", "q") AND c LIKE "%a%"', "SELECT a FROM t WHERE b IN ('p', 'q') AND c LIKE '%a%'"),
    ('SELECT a FROM t WHERE "name" = \'x\'', "SELECT a FROM t WHERE `name` = 'x'"),  # a quoted column stays one
    ('SELECT a FROM t AS T1 JOIN u AS T2 ON T1."x" = T2."y"', "SELECT a FROM t AS T1 JOIN u AS T2 ON T1.`x` = T2.`y`"),
])
def test_sqlites_double_quoted_strings_reach_spark_as_strings(sqlite: str, spark: str) -> None:
    """Spider's golds write strings in double quotes, which SQLite reads as strings when no
    column has the name; Spark would look for a column `UAL` (a gold error on 20 % of Spider dev)."""
    import sqlglot

    from pytest_sqleval.core.grading.parse import engine_sql
    assert engine_sql(sqlglot.parse_one(sqlite, read="sqlite"), sqlite, "sqlite", "spark") == spark


def test_a_sqlite_golds_order_checks_reach_spark_with_its_strings() -> None:
    """The SQL of a gold's ORDER BY ... LIMIT checks (the probe with LIMIT n+1, the whole tie
    group) is the engine's too: Spider dev's world_1 gold 713 failed on Spark without it."""
    from pytest_sqleval.core.grading.gold_analysis import analyse
    gold = ('SELECT T2.Language FROM country AS T1 JOIN countrylanguage AS T2 ON T1.Code = T2.CountryCode '
            'WHERE T1.Name = "Aruba" ORDER BY Percentage DESC LIMIT 1')
    info = analyse(gold, "sqlite", "spark").order
    assert info.probe_sql is not None and info.full_sql is not None
    for sql in (info.probe_sql, info.full_sql, info.augmented_sql or ""):
        assert "`Aruba`" not in sql and ("'Aruba'" in sql or not sql)
