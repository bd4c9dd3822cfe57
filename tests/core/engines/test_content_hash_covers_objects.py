"""The content hash covers every object a query can read through, not only tables: a
function, a type, a view's definition, a trigger or a sequence that changes changes the hash,
so a gold answer cached under the old hash is not reused (it would fail a correct prediction)."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Callable

import duckdb
import pytest

from pytest_sqleval.core.cases import Limits
from pytest_sqleval.core.engines import open_sandbox
from pytest_sqleval.core.engines.duckdb_sandbox import DuckDBSandbox
from pytest_sqleval.core.engines.sqlite_sandbox import SQLiteSandbox
from tests.sqleval_helpers import read_results, sandbox_hash
from tests.engine_databases import PgServer

PG_OBJECTS = [
    "CREATE TABLE sale (id INTEGER, amount NUMERIC(10, 2), mood TEXT)",
    "INSERT INTO sale VALUES (1, 100.00, 'ok'), (2, 50.50, 'sad')",
    "CREATE FUNCTION vat(x NUMERIC) RETURNS NUMERIC LANGUAGE sql IMMUTABLE AS 'SELECT x * 0.20'",
    "CREATE FUNCTION net(x NUMERIC) RETURNS NUMERIC LANGUAGE plpgsql AS $$BEGIN RETURN x / 1.2; END$$",
    "CREATE TYPE feeling AS ENUM ('ok', 'sad')",
    "CREATE TYPE pair AS (a INTEGER, b TEXT)",
    "CREATE DOMAIN positive AS NUMERIC CHECK (VALUE > 0)",
    "CREATE SEQUENCE ticket START 10",
    "CREATE MATERIALIZED VIEW big_sale AS SELECT id FROM sale WHERE amount > 60",
    "CREATE VIEW small_sale AS SELECT id FROM sale WHERE amount < 60",
]

#: (what changed, the statement): each must change the hash of a database built by PG_OBJECTS
PG_CHANGES = [
    ("sql function body", "CREATE OR REPLACE FUNCTION vat(x NUMERIC) RETURNS NUMERIC LANGUAGE sql IMMUTABLE "
                          "AS 'SELECT x * 0.25'"),
    ("plpgsql function body", "CREATE OR REPLACE FUNCTION net(x NUMERIC) RETURNS NUMERIC LANGUAGE plpgsql "
                              "AS $$BEGIN RETURN x / 1.25; END$$"),
    ("function volatility", "ALTER FUNCTION vat(NUMERIC) VOLATILE"),
    ("new overload", "CREATE FUNCTION vat(x INTEGER) RETURNS NUMERIC LANGUAGE sql AS 'SELECT x * 0.20'"),
    ("enum label", "ALTER TYPE feeling ADD VALUE 'glad'"),
    ("enum order", "ALTER TYPE feeling ADD VALUE 'meh' BEFORE 'ok'"),
    ("composite attribute", "ALTER TYPE pair ADD ATTRIBUTE c DATE"),
    ("domain constraint", "ALTER DOMAIN positive ADD CONSTRAINT small CHECK (VALUE < 1000)"),
    ("sequence value", "SELECT setval('ticket', 42)"),
    ("view definition", "CREATE OR REPLACE VIEW small_sale AS SELECT id FROM sale WHERE amount < 61"),
    ("column collation", 'ALTER TABLE sale ALTER COLUMN mood TYPE TEXT COLLATE "POSIX"'),
]


@pytest.fixture(scope="module")
def pg_objects(pg: PgServer) -> Callable[[str, list[str]], str]:  # noqa: F811
    import psycopg

    def build(name: str, extra: list[str]) -> str:
        pg.create_db(name)
        with psycopg.connect(pg.url(name), autocommit=True) as con:
            for stmt in [*PG_OBJECTS, *extra]:
                con.execute(stmt)
            con.execute("GRANT SELECT ON ALL TABLES IN SCHEMA public TO grader")
            con.execute("GRANT SELECT ON ALL SEQUENCES IN SCHEMA public TO grader")
        return pg.url(name, "grader")
    return build


def pg_hash(url: str) -> str:
    return sandbox_hash(lambda where: open_sandbox(where, Limits()), url)


def test_postgres_hash_covers_functions_types_sequences_and_views(pg_objects: Callable[[str, list[str]], str],
                                                                  pg: PgServer) -> None:  # noqa: F811
    import psycopg
    base = pg_hash(pg_objects("objects_base", []))
    assert pg_hash(pg_objects("objects_same", [])) == base  # a rebuild keeps its hash
    url = pg_objects("objects_changed", [])
    seen = {base}
    for what, stmt in PG_CHANGES:
        with psycopg.connect(pg.url("objects_changed"), autocommit=True) as con:
            con.execute(stmt)
        now = pg_hash(url)
        assert now not in seen, f"the hash did not change with the {what}"
        seen.add(now)
    with psycopg.connect(pg.url("objects_changed"), autocommit=True) as con:  # same rows, new definition
        con.execute("DROP MATERIALIZED VIEW big_sale")
        con.execute("CREATE MATERIALIZED VIEW big_sale AS SELECT id FROM sale WHERE amount > 70")
    assert pg_hash(url) not in seen, "the hash did not change with the materialized view's definition"


def test_postgres_hash_covers_the_search_path(pg: PgServer) -> None:  # noqa: F811
    import psycopg
    pg.create_db("objects_path")  # (its view reads `singer`, which `other` does not shadow)
    with psycopg.connect(pg.url("objects_path"), autocommit=True) as con:
        for stmt in ("CREATE TABLE sale (id INTEGER)", "INSERT INTO sale VALUES (1)", "CREATE SCHEMA other",
                     "CREATE TABLE other.sale (id INTEGER)", "INSERT INTO other.sale VALUES (2)",
                     "GRANT USAGE ON SCHEMA other TO grader", "GRANT SELECT ON ALL TABLES IN SCHEMA public TO grader",
                     "GRANT SELECT ON ALL TABLES IN SCHEMA other TO grader"):
            con.execute(stmt)
    plain = pg_hash(pg.url("objects_path", "grader"))
    with psycopg.connect(pg.url("objects_path"), autocommit=True) as con:
        con.execute("ALTER ROLE grader IN DATABASE objects_path SET search_path = other, public")
    try:  # `SELECT id FROM sale` now answers 2, not 1
        assert pg_hash(pg.url("objects_path", "grader")) != plain
    finally:
        with psycopg.connect(pg.url("objects_path"), autocommit=True) as con:
            con.execute("ALTER ROLE grader IN DATABASE objects_path RESET search_path")


def sqlite_hash(path: Path) -> str:
    return sandbox_hash(SQLiteSandbox, path)


def test_sqlite_hash_covers_views_triggers_collations_and_generated_columns(tmp_path: Path) -> None:
    path = tmp_path / "t.sqlite"
    con = sqlite3.connect(path)
    con.executescript("CREATE TABLE sale (id INTEGER, amount REAL); INSERT INTO sale VALUES (1, 100), (2, 50);"
                      "CREATE TABLE audit (id INTEGER);"
                      "CREATE VIEW big AS SELECT id FROM sale WHERE amount > 60;"
                      "CREATE TRIGGER keep AFTER INSERT ON sale BEGIN INSERT INTO audit VALUES (new.id); END;")
    con.commit()
    seen = {sqlite_hash(path)}
    for stmt in ("DROP VIEW big; CREATE VIEW big AS SELECT id FROM sale WHERE amount > 70;",
                 "DROP TRIGGER keep; CREATE TRIGGER keep AFTER INSERT ON sale BEGIN "
                 "INSERT INTO audit VALUES (new.id * 2); END;",
                 "DROP TRIGGER keep;",
                 # the same rows, but `WHERE name = 'JOE'` now finds 'joe'
                 "CREATE TABLE person (name TEXT); INSERT INTO person VALUES ('joe');",
                 "DROP TABLE person; CREATE TABLE person (name TEXT COLLATE NOCASE); INSERT INTO person VALUES ('joe');",
                 # a generated column: pragma_table_info leaves it out of the rows
                 "CREATE TABLE gross (net REAL, vat REAL AS (net * 0.2)); INSERT INTO gross VALUES (100);",
                 "DROP TABLE gross; CREATE TABLE gross (net REAL, vat REAL AS (net * 0.25)); "
                 "INSERT INTO gross VALUES (100);"):
        con.executescript(stmt)
        con.commit()
        now = sqlite_hash(path)
        assert now not in seen, stmt
        seen.add(now)
    con.close()


def duck_hash(path: Path) -> str:
    return sandbox_hash(DuckDBSandbox, path)


def test_duckdb_hash_covers_view_definitions_sequences_enum_labels_and_collations(tmp_path: Path) -> None:
    path = tmp_path / "t.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE sale (id INTEGER, amount DOUBLE); INSERT INTO sale VALUES (1, 100), (2, 50);"
                "CREATE VIEW big AS SELECT id FROM sale WHERE amount > 60;"
                "CREATE SEQUENCE ticket START 10; CREATE TYPE feeling AS ENUM ('ok', 'sad')")
    con.close()
    seen = {duck_hash(path)}
    for stmt in ("CREATE OR REPLACE VIEW big AS SELECT id FROM sale WHERE amount > 70",  # the same rows here
                 "SELECT nextval('ticket')",
                 "DROP TYPE feeling; CREATE TYPE feeling AS ENUM ('ok', 'sad', 'glad')",
                 "DROP TYPE feeling; CREATE TYPE feeling AS ENUM ('sad', 'ok', 'glad')",
                 "CREATE TABLE person (name VARCHAR); INSERT INTO person VALUES ('joe')",
                 # the same rows, but `WHERE name = 'JOE'` now finds 'joe'
                 "DROP TABLE person; CREATE TABLE person (name VARCHAR COLLATE nocase); "
                 "INSERT INTO person VALUES ('joe')"):
        con = duckdb.connect(str(path))
        con.sql(stmt).fetchall() if stmt.startswith("SELECT") else con.execute(stmt)  # nextval runs when fetched
        con.close()
        now = duck_hash(path)
        assert now not in seen, stmt
        seen.add(now)


def test_a_cached_gold_is_not_reused_after_the_function_it_calls_changes(pytester: pytest.Pytester,
                                                                          pg: PgServer) -> None:  # noqa: F811
    import psycopg
    pg.create_db("vat_suite")
    with psycopg.connect(pg.url("vat_suite"), autocommit=True) as con:
        con.execute("CREATE FUNCTION vat(x NUMERIC) RETURNS NUMERIC LANGUAGE sql AS 'SELECT x * 0.20'")
    suite = pytester.path / "vat"
    suite.mkdir()
    (suite / "questions.jsonl").write_text(json.dumps(
        {"id": "vat", "question": "What is the VAT on 100?", "gold_sql": "SELECT vat(100) AS v"}) + "\n")
    (suite / "sqleval.toml").write_text(f'[suite]\nname = "vat"\nquestions = "questions.jsonl"\n'
                                        f'database = "{pg.url("vat_suite", "admin", "role=grader")}"\n'
                                        'dialect = "postgres"\n')
    (pytester.path / "pred.jsonl").write_text(json.dumps({"id": "vat", "sql": "SELECT 100 * 0.25 AS v"}) + "\n")
    args = ("vat", "--sqleval-backend=predictions:pred.jsonl", "-p", "no:cacheprovider")
    pytester.runpytest(*args).assert_outcomes(failed=1)  # the rate is 20 %: the prediction is wrong
    first = read_results(pytester.path)[0]["content_hash"]
    with psycopg.connect(pg.url("vat_suite"), autocommit=True) as con:  # the rate becomes 25 %
        con.execute("CREATE OR REPLACE FUNCTION vat(x NUMERIC) RETURNS NUMERIC LANGUAGE sql AS 'SELECT x * 0.25'")
    result = pytester.runpytest(*args)  # same cache directory: a gold cached under the old hash must not answer
    result.assert_outcomes(passed=1)
    assert read_results(pytester.path)[0]["content_hash"] != first
