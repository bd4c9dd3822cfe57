"""SQLite and PostgreSQL engines: the same sandbox rules, taxonomy and verdicts as DuckDB.

PostgreSQL tests start a throwaway server (initdb + pg_ctl from Debian's ``postgresql``
package, in a temporary directory on a free port, as the ``postgres`` user when run as
root). They skip, saying why, only where the server binaries are absent."""
from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path
from typing import Any, Callable

import pyarrow as pa
import pytest

from pytest_sqleval.core.api import Grader
from pytest_sqleval.core.cases import Limits
from pytest_sqleval.core.engines import engine_dialect, engine_name, open_sandbox
from pytest_sqleval.core.engines.sqlite_sandbox import MIXED_TYPE, SQLiteSandbox
from pytest_sqleval.core.grading.compare import Comparator, CompareSpec
from tests.engine_databases import CONCERTS, SINGERS, PgServer, build_sqlite, ddl
from tests.rows import error_of, scalar, table_of
from tests.sqleval_helpers import LEAN, read_results, read_summary, sqleval_ini  # noqa: F401  (fixture)


@pytest.fixture(params=["duckdb", "sqlite", "postgres"])
def engine_db(request: pytest.FixtureRequest) -> tuple[str, Any]:
    return request.param, request.getfixturevalue({"duckdb": "duckdb_shop", "sqlite": "sqlite_shop",
                                                   "postgres": "pg_shop"}[request.param])


# -- selection ----------------------------------------------------------------------------
def test_database_location_selects_the_engine(tmp_path: Path, sqlite_shop: Path) -> None:
    oddly_named = tmp_path / "spider.data"
    oddly_named.write_bytes(sqlite_shop.read_bytes())
    assert [engine_name(x) for x in ("a.duckdb", "a.sqlite", "b.db", oddly_named, "postgresql://u@h/db",
                                     "postgres://h/db")] == ["duckdb", "sqlite", "sqlite", "sqlite", "postgres", "postgres"]
    assert engine_dialect("x.sqlite3") == "sqlite" and engine_dialect("postgresql://h/d") == "postgres"
    with pytest.raises(ValueError, match="unsupported database URL scheme 'mysql'"):
        engine_name("mysql://h/db")


# -- SQLite: types ------------------------------------------------------------------------
def test_sqlite_result_types_are_inferred_from_values(tmp_path: Path) -> None:
    path = tmp_path / "types.sqlite"
    con = sqlite3.connect(path)
    con.executescript("CREATE TABLE t (a, b, c, d, e); INSERT INTO t VALUES (1, 1, 'x', NULL, 1), "
                      "(2, 2.5, 'y', NULL, '1'), (NULL, 3, NULL, NULL, x'00ff');")
    con.close()
    box = SQLiteSandbox(path)
    try:
        table = table_of(box.run("SELECT a, b, c, d, e FROM t"))
        empty = table_of(box.run("SELECT a, c FROM t WHERE 0"))
        text_one, int_one = table_of(box.run("SELECT '1'")), table_of(box.run("SELECT 1"))
    finally:
        box.close()
    assert table.schema.types == [pa.int64(), pa.float64(), pa.string(), pa.null(), MIXED_TYPE]
    assert table.column("b").to_pylist() == [1.0, 2.5, 3.0]  # int mixed with real -> float64
    assert table.column("e").to_pylist()[:2] == [{"number": 1.0, "text": None, "blob": None},
                                                  {"number": None, "text": "1", "blob": None}]
    assert empty.num_rows == 0 and empty.schema.types == [pa.null(), pa.null()]
    # a string never equals a number, even when SQLite would happily compare them
    assert not Comparator().compare(int_one, text_one, CompareSpec()).match


# -- the error taxonomy and the bounds on every engine -------------------------------------
TAXONOMY = [
    ("SELECT nope FROM singer", "missing_column"),
    ("SELECT * FROM no_such_table", "missing_table"),
    ("SELECT singer_id FROM singer s JOIN concert c ON s.singer_id = c.singer_id", "ambiguous_reference"),
    ("SELECT sum(count(*)) FROM singer", "invalid_aggregation"),
    ("SELEC 1", "syntax_error"),
]


@pytest.mark.parametrize("sql, category", TAXONOMY, ids=[c for _, c in TAXONOMY])
def test_error_taxonomy_is_shared(engine_db: tuple[str, Any], sql: str, category: str) -> None:
    engine, db = engine_db
    box = open_sandbox(db, Limits(timeout_s=5))
    try:
        outcome = box.run(sql)
    finally:
        box.close()
    assert outcome.error is not None and outcome.error.category == category, (engine, outcome.error)


RUNAWAY = "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT count(*) FROM r"
#: a runaway still running after this was never cancelled (left alone it runs for ever): the
#: test's safety net against a hang, not a speed (the wall bound is at most 0.5 s + 30 s)
CANCELLED_WITHIN_S = 600.0


def _bounded(run: Callable[[], Any], seconds: float) -> Any:
    """``run()``'s answer, waited for at most ``seconds`` (in a daemon thread, so a hang fails the test)."""
    got: list[Any] = []
    worker = threading.Thread(target=lambda: got.append(run()), daemon=True)
    worker.start()
    worker.join(seconds)
    assert got, f"no answer within {seconds:g} s: the statement was never cancelled"
    return got[0]


def _running(pg: PgServer) -> list[str]:
    """What the ``grader`` role's backends are running now (seen by the superuser): the
    sandbox reads through a server-side cursor, so a statement runs as its ``FETCH``."""
    import psycopg
    with psycopg.connect(pg.url(), autocommit=True) as con:
        return [r[0] for r in con.execute("SELECT query FROM pg_stat_activity "
                                          "WHERE usename = 'grader' AND state = 'active'").fetchall()]


@pytest.mark.parametrize("engine", ["sqlite", "postgres"])
def test_timeout_row_cap_and_engine_specific_errors(request: pytest.FixtureRequest, engine: str) -> None:
    db = request.getfixturevalue(f"{engine}_shop" if engine == "sqlite" else "pg_shop")
    box = open_sandbox(db, Limits(timeout_s=0.5, max_rows=3))
    try:
        runaway = _bounded(lambda: box.run(RUNAWAY), CANCELLED_WITHIN_S)
        still_running = _running(request.getfixturevalue("pg")) if engine == "postgres" else []
        capped = box.run("SELECT * FROM singer")
        fine = box.run("SELECT * FROM singer WHERE singer_id <= 3")
        division = box.run("SELECT 1 / 0")
        after = box.run("SELECT count(*) FROM french")
    finally:
        box.close()
    # the runaway was stopped as a timeout (PostgreSQL's after a second attempt at ten times the
    # limit) and the server runs it no more: the statement was cancelled, not just abandoned
    assert runaway.error is not None and runaway.error.category == "timeout"
    assert engine == "sqlite" or "exceeded the time limit twice" in runaway.error.message
    assert still_running == []
    assert capped.error is not None and capped.error.category == "resource_exceeded" and capped.truncated
    assert fine.table is not None and fine.table.num_rows == 3
    # SQLite yields NULL for 1/0; PostgreSQL raises it
    assert (table_of(division).column(0).to_pylist() == [None]) if engine == "sqlite" else \
        error_of(division).category == "division_by_zero"
    assert table_of(after).column(0).to_pylist() == [2]  # the connection is still usable after a timeout


# -- hostile statements -------------------------------------------------------------------
HOSTILE_COMMON = [
    "DROP TABLE singer", "DELETE FROM singer", "UPDATE singer SET age = 0",
    "INSERT INTO singer VALUES (9, 'x', 'x', 1, 1)", "CREATE TABLE t2 (a INTEGER)",
    "ALTER TABLE singer ADD COLUMN z INTEGER", "SELECT 1; DROP TABLE singer",
]
HOSTILE = {
    "duckdb": ["ATTACH '/tmp/sqleval-x.duckdb' AS x", "INSTALL httpfs", "SET threads = 8",
               "COPY singer TO '/tmp/sqleval-leak.csv'", "SELECT * FROM read_csv('/etc/passwd')"],
    "sqlite": ["ATTACH DATABASE '/tmp/sqleval-x.db' AS x", "PRAGMA query_only = OFF", "PRAGMA writable_schema = ON",
               "SELECT load_extension('/tmp/x')", "VACUUM INTO '/tmp/sqleval-copy.db'", "BEGIN IMMEDIATE",
               "CREATE TEMP TABLE t (a)", "SELECT * FROM pragma_table_info('singer')", "REINDEX", "DETACH main"],
    "postgres": ["COPY singer TO '/tmp/sqleval-leak.csv'", "SET ROLE admin", "RESET ROLE",
                 "SELECT set_config('default_transaction_read_only', 'off', false)",
                 "SELECT pg_read_file('/etc/passwd')", "WITH d AS (DELETE FROM singer RETURNING *) SELECT * FROM d",
                 "SELECT * FROM singer FOR UPDATE", "SELECT pg_terminate_backend(pg_backend_pid())",
                 "SELECT lo_import('/etc/passwd')", "DO $$BEGIN DELETE FROM singer; END$$",
                 "SELECT nextval('no_seq')", "LOCK TABLE singer", "SELECT pg_advisory_lock(1)"],
}


def test_hostile_statements_are_refused_on_every_engine(engine_db: tuple[str, Any], tmp_path: Path) -> None:
    engine, db = engine_db
    if engine != "postgres":  # work on a copy: a refusal must not depend on the file being shared
        copy = tmp_path / Path(db).name
        copy.write_bytes(Path(db).read_bytes())
        db = copy
    box = open_sandbox(db, Limits(timeout_s=2))
    try:
        before = box.content_hash()
        outcomes = {sql: box.run(sql) for sql in HOSTILE_COMMON + HOSTILE[engine]}
        after_rows = table_of(box.run("SELECT count(*) FROM singer")).column(0).to_pylist()
        after = box.content_hash()
    finally:
        box.close()
    let_through = {sql: o.table for sql, o in outcomes.items() if o.error is None}
    assert not let_through, let_through
    # nextval on a missing sequence is refused for being missing; everything else as a permission problem
    wrong = {sql: error_of(o).category for sql, o in outcomes.items()
             if error_of(o).category != "permission_error" and "no_seq" not in sql}
    assert not wrong, wrong
    assert after_rows == [5] and after == before
    assert not Path("/tmp/sqleval-leak.csv").exists() and not Path("/tmp/sqleval-copy.db").exists()


def test_postgres_runs_as_the_suites_role(pg: PgServer, pg_shop: str) -> None:
    for url in (pg_shop, pg.url("shop", "admin", "role=grader")):
        box = open_sandbox(url, Limits())
        try:
            assert table_of(box.run("SELECT current_user")).column(0).to_pylist() == ["grader"]
            assert table_of(box.run("SELECT current_setting('transaction_read_only')")).column(0).to_pylist() == ["on"]
            assert "singer" in box.catalog()["main"]  # public, as the grader resolves unqualified names
        finally:
            box.close()


# -- content hash -------------------------------------------------------------------------
def test_sqlite_content_hash_is_order_independent_and_sensitive(tmp_path: Path) -> None:
    a = build_sqlite(tmp_path / "a.sqlite")
    b = tmp_path / "b.sqlite"
    con = sqlite3.connect(b)
    for stmt in ddl("sqlite"):
        con.execute(stmt)
    con.executemany("INSERT INTO singer VALUES (?, ?, ?, ?, ?)", list(reversed(SINGERS)))
    con.executemany("INSERT INTO concert VALUES (?, ?, ?)", CONCERTS)
    con.commit()
    con.execute("VACUUM")
    hash_of = lambda p: (lambda box: (box.content_hash(), box.close())[0])(SQLiteSandbox(p))  # noqa: E731
    ha, hb = hash_of(a), hash_of(b)
    assert ha == hb
    con.execute("UPDATE singer SET age = '52' WHERE singer_id = 1")  # INTEGER affinity: still the number 52
    con.commit()
    assert hash_of(b) == ha
    con.execute("UPDATE singer SET name = 'Joe ' WHERE singer_id = 1")
    con.commit()
    con.close()
    assert hash_of(b) != ha


def test_postgres_content_hash_is_stable_and_sensitive(pg: PgServer, pg_shop: str) -> None:
    other = pg.create_db("shop_copy")
    hash_of = lambda u: (lambda box: (box.content_hash(), box.close())[0])(open_sandbox(u, Limits()))  # noqa: E731
    assert hash_of(pg_shop) == hash_of(other)
    import psycopg
    with psycopg.connect(pg.url("shop_copy")) as con:
        con.execute("UPDATE singer SET age = 53 WHERE singer_id = 1")
    assert hash_of(other) != hash_of(pg_shop)


# -- the same case, the same verdict ------------------------------------------------------
#: (gold, prediction) in SQLite's dialect: transpiled to DuckDB's and PostgreSQL's.
VERDICT_CASES = {
    "pass": ("SELECT count(*) FROM singer", "SELECT COUNT(singer_id) FROM singer"),
    "pass_float_noise": ("SELECT sum(net_worth) FROM singer", "SELECT sum(net_worth * 1.0000000001) FROM singer"),
    "pass_reordered_bag": ("SELECT name, age FROM singer WHERE age > 28",
                           "SELECT name, age FROM singer WHERE age >= 29 ORDER BY name DESC"),
    "wrong_metric": ("SELECT country, count(*) FROM singer GROUP BY country",
                     "SELECT country, sum(age) FROM singer GROUP BY country"),
    "missing_column": ("SELECT name FROM singer", "SELECT nickname FROM singer"),
    "order_only": ("SELECT name FROM singer ORDER BY age DESC, name", "SELECT name FROM singer ORDER BY age, name"),
    "join_rows": ("SELECT s.name FROM singer s JOIN concert c ON s.singer_id = c.singer_id WHERE c.year = '2014'",
                  "SELECT s.name FROM singer s JOIN concert c ON s.singer_id = c.singer_id"),
    "text_vs_number": ("SELECT age FROM singer WHERE singer_id = 1",
                       "SELECT CAST(age AS TEXT) FROM singer WHERE singer_id = 1"),
    "null_vs_zero": ("SELECT name, net_worth FROM singer WHERE singer_id = 5",  # not NULLs only: graded
                     "SELECT name, coalesce(net_worth, 0) FROM singer WHERE singer_id = 5"),
    "duplicates": ("SELECT country FROM singer", "SELECT DISTINCT country FROM singer"),
    "stale": ("SELECT name FROM singer", "SELECT name FROM singer_old"),
}


def test_the_same_case_gets_the_same_verdict_on_every_engine(duckdb_shop: Path, sqlite_shop: Path,
                                                              pg_shop: str, tmp_path: Path) -> None:
    verdicts: dict[str, dict[str, tuple]] = {}
    for engine, db in (("duckdb", duckdb_shop), ("sqlite", sqlite_shop), ("postgres", pg_shop)):
        with Grader(db, dialect="sqlite", cache_dir=tmp_path / engine) as grader:
            assert grader._grader.engine == engine
            out = {}
            for name, (gold, pred) in VERDICT_CASES.items():
                v = grader.compare(pred, gold)
                out[name] = (v.passed, v.error_class, v.failure_kind)
            verdicts[engine] = out
    assert {k: v[2] if not v[0] else "pass" for k, v in verdicts["duckdb"].items()} == {
        "pass": "pass", "pass_float_noise": "pass", "pass_reordered_bag": "pass", "wrong_metric": "value_mismatch",
        "missing_column": "runtime_error:missing_column", "order_only": "order_only",
        "join_rows": "cardinality_mismatch", "text_vs_number": "projection_mismatch", "null_vs_zero": "value_mismatch",
        "duplicates": "cardinality_mismatch", "stale": "runtime_error:missing_table"}
    assert verdicts["sqlite"] == verdicts["duckdb"], json.dumps(verdicts, indent=1)
    assert verdicts["postgres"] == verdicts["duckdb"], json.dumps(verdicts, indent=1)


# -- a PostgreSQL suite under pytest ------------------------------------------------------
def test_a_postgres_suite_runs_under_pytest(pytester: pytest.Pytester, pg: PgServer, pg_shop: str) -> None:
    suite = pytester.path / "pgsuite"
    suite.mkdir()
    cases = [{"id": "n", "question": "How many singers?", "gold_sql": "SELECT count(*) FROM singer"},
             {"id": "fr", "question": "French singers", "gold_sql": "SELECT name FROM french"},
             {"id": "by_country", "question": "Singers per country",
              "gold_sql": "SELECT country, count(*) AS n FROM singer GROUP BY country"}]
    (suite / "questions.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    (suite / "sqleval.toml").write_text(f'[suite]\nname = "pg"\nquestions = "questions.jsonl"\n'
                                        f'database = "{pg.url("shop", "admin", "role=grader")}"\ndialect = "duckdb"\n')
    (pytester.path / "naive.jsonl").write_text(
        json.dumps({"id": "n", "sql": "SELECT count(*) FROM singer"}) + "\n"
        + json.dumps({"id": "fr", "sql": "SELECT name FROM singer WHERE country = 'France'"}) + "\n"
        + json.dumps({"id": "by_country", "sql": "DELETE FROM singer"}) + "\n")
    result = pytester.runpytest("pgsuite", "--sqleval-backend=gold,predictions:naive.jsonl", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=5, failed=1)
    records = {(r["case_id"], r["backend"]): r for r in read_results(pytester.path)}
    gold = records[("n", "gold")]
    assert gold["engine"] == "postgres" and gold["content_hash"] and "role=grader" in gold["database"]
    assert records[("by_country", "naive")]["failure_kind"] == "unsafe_statement"
    summary = read_summary(pytester.path)
    assert summary["backends"]["naive"]["execution_accuracy"] == pytest.approx(2 / 3)
    import psycopg
    with psycopg.connect(pg.url("shop")) as con:
        assert scalar(con, "SELECT count(*) FROM singer") == 5


def test_a_spider_layout_on_postgres_selects_each_database_by_db_id(pytester: pytest.Pytester, pg: PgServer) -> None:
    pg.create_db("spider_a")
    pg.create_db("spider_b")
    root = pytester.path / "spider"
    root.mkdir()
    dev = [{"db_id": "spider_a", "question": "How many singers?", "query": "SELECT count(*) FROM singer"},
           {"db_id": "spider_b", "question": "Oldest age?", "query": "SELECT max(age) FROM singer"},
           {"db_id": "spider_b", "question": "Names of French singers", "query": "SELECT name FROM french"}]
    (root / "dev.json").write_text(json.dumps(dev))
    url = pg.url("{db_id}", "admin", "role=grader")  # SQLite-dialect gold and predictions, transpiled
    (root / "sqleval.toml").write_text(f'[suite]\nname = "sp"\nlayout = "spider"\ndatabase = "{url}"\n')
    (pytester.path / "pred.sql").write_text("SELECT count(*) FROM singer\nSELECT max(age) FROM singer\n"
                                            "SELECT name FROM singer WHERE country = 'France' LIMIT 1\n")
    result = pytester.runpytest("spider", "--sqleval-backend=predictions:pred.sql", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=1)
    records = {r["case_id"]: r for r in read_results(pytester.path)}
    assert [records[k]["suite"] for k in "012"] == ["sp/spider_a", "sp/spider_b", "sp/spider_b"]
    assert {r["engine"] for r in records.values()} == {"postgres"}
    assert "spider_b" in records["1"]["database"] and records["2"]["error_class"] is not None
