"""Unit tests of the safety layer (``grading.safety.check_safety``), called directly on
a parsed tree and statement count.

grader_tests/test_hostile.py runs a hostile corpus end to end through a Grader and a real
database; here the layer's own contract is pinned: which statement shapes pass, and for
each refused one the reason category (``not_a_query``, ``file_or_system_access``,
``multiple_statements``) and the node or function named in the detail."""
from __future__ import annotations

import pytest

from pytest_sqleval.core.grading.parse import parse_sql
from pytest_sqleval.core.grading.safety import DENIED_FUNCTIONS, SafetyResult, check_safety


def safety(sql: str, dialect: str = "duckdb") -> SafetyResult:
    parsed = parse_sql(sql, dialect)
    assert parsed.ok, parsed.error
    return check_safety(parsed.expression, parsed.statements)


@pytest.mark.parametrize("sql", [
    pytest.param("SELECT 1", id="select-literal"),
    pytest.param("SELECT id, amount FROM orders WHERE amount > 1 ORDER BY 1 LIMIT 3", id="select"),
    pytest.param("FROM orders", id="duckdb-from-first"),
    pytest.param("(SELECT 1)", id="parenthesized"),
    pytest.param("WITH a AS (SELECT 1 AS x) SELECT x FROM a", id="with"),
    pytest.param("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT * FROM r",
                 id="with-recursive"),
    pytest.param("SELECT 1 UNION SELECT 2", id="union"),
    pytest.param("SELECT 1 INTERSECT SELECT 1", id="intersect"),
    pytest.param("SELECT 1 EXCEPT SELECT 2", id="except"),
    pytest.param("SELECT * FROM (VALUES (1, 2)) t(a, b)", id="values-in-from"),
    pytest.param("SELECT * FROM range(10)", id="range-table-function"),
    pytest.param("SELECT * FROM main.orders", id="qualified-table"),
    pytest.param("SELECT * FROM orders_old", id="deprecated-table-is-not-a-safety-matter"),
    pytest.param("SELECT * FROM t WHERE a IN (SELECT b FROM u)", id="subquery"),
    pytest.param("SELECT lower(name), count(*) FROM t GROUP BY 1", id="ordinary-functions"),
    pytest.param("SELECT 'read_csv(/etc/passwd)' AS s", id="denied-name-inside-a-string-literal"),
    pytest.param("SELECT read_csv FROM t", id="column-named-like-a-denied-function"),
])
def test_allowed_queries(sql: str) -> None:
    assert safety(sql).to_dict() == {"ok": True, "reason": None, "detail": None}


@pytest.mark.parametrize(("sql", "detail"), [
    # writes
    pytest.param("INSERT INTO t VALUES (1)", "INSERT statements are not allowed", id="insert"),
    pytest.param("UPDATE t SET a = 1", "UPDATE statements are not allowed", id="update"),
    pytest.param("DELETE FROM t", "DELETE statements are not allowed", id="delete"),
    pytest.param("MERGE INTO t USING s ON t.a = s.a WHEN MATCHED THEN DELETE", "MERGE statements", id="merge"),
    # DDL
    pytest.param("CREATE TABLE x (a INT)", "CREATE statements", id="create-table"),
    pytest.param("CREATE VIEW v AS SELECT 1", "CREATE statements", id="create-view"),
    pytest.param("DROP TABLE t", "DROP statements", id="drop"),
    pytest.param("ALTER TABLE t ADD COLUMN b INT", "ALTER statements", id="alter"),
    pytest.param("TRUNCATE TABLE t", "TRUNCATETABLE statements", id="truncate"),
    pytest.param("COMMENT ON TABLE t IS 'x'", "COMMENT statements", id="comment-on"),
    # catalogs, settings, extensions
    pytest.param("ATTACH 'x.db' AS x", "ATTACH statements", id="attach"),
    pytest.param("DETACH x", "DETACH statements", id="detach"),
    pytest.param("USE memory", "USE statements", id="use"),
    pytest.param("PRAGMA database_list", "PRAGMA statements", id="pragma"),
    pytest.param("SET threads = 4", "SET statements", id="set"),
    pytest.param("INSTALL httpfs", "INSTALL statements", id="install"),
    pytest.param("COPY t TO 'x.csv'", "COPY statements", id="copy"),
    pytest.param("BEGIN", "TRANSACTION statements", id="begin"),
    pytest.param("GRANT SELECT ON t TO u", "GRANT statements", id="grant"),
    pytest.param("DESCRIBE t", "DESCRIBE statements", id="describe"),
    pytest.param("SHOW TABLES", "SHOW statements", id="show"),
    pytest.param("SUMMARIZE t", "SUMMARIZE statements", id="summarize"),
    # a query-shaped statement that is not SELECT / WITH
    pytest.param("VALUES (1, 2)", "VALUES statements", id="bare-values"),
    # commands sqlglot keeps as raw text
    pytest.param("RESET threads", "COMMAND statements", id="reset-as-command"),
    pytest.param("LOAD httpfs", "COMMAND statements", id="load-as-command"),
    pytest.param("CALL pragma_version()", "COMMAND statements", id="call-as-command"),
    pytest.param("EXPLAIN SELECT 1", "COMMAND statements", id="explain-as-command"),
    # forbidden nodes nested inside an otherwise valid query
    pytest.param("SELECT * INTO t2 FROM t", "INTO inside the query", id="select-into"),
    pytest.param("WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d", "DELETE inside the query",
                 id="delete-in-cte"),
])
def test_refused_as_not_a_query(sql: str, detail: str) -> None:
    res = safety(sql)
    assert (res.ok, res.reason) == (False, "not_a_query")
    assert res.detail is not None and detail in res.detail


@pytest.mark.parametrize(("sql", "detail"), [
    # file readers
    pytest.param("SELECT * FROM read_csv('x.csv')", "function read_csv() is not allowed", id="read_csv"),
    pytest.param("SELECT * FROM READ_PARQUET('a.parquet')", "function read_parquet()", id="read_parquet-upper"),
    pytest.param("SELECT * FROM read_json_auto('a.json')", "function read_json_auto()", id="read_json_auto"),
    pytest.param("SELECT * FROM glob('*')", "function glob()", id="glob"),
    pytest.param("SELECT * FROM \"read_csv\"('x.csv')", "function read_csv()", id="quoted-function-name"),
    pytest.param("SELECT * FROM system.main.read_csv('x')", "function read_csv()", id="qualified-function-name"),
    pytest.param("SELECT * FROM t, LATERAL read_csv(t.p)", "function read_csv()", id="lateral-reader"),
    pytest.param("SELECT * FROM sqlite_scan('x.db', 't')", "function sqlite_scan()", id="sqlite_scan"),
    pytest.param("SELECT pg_read_file('/etc/passwd')", "function pg_read_file()", id="pg_read_file"),
    pytest.param("SELECT count(*) FROM t WHERE a IN (SELECT 1 FROM read_text('/etc/hostname'))",
                 "function read_text()", id="reader-in-subquery"),
    # SQL in a string
    pytest.param("SELECT * FROM query('SELECT 1')", "function query()", id="query"),
    pytest.param("SELECT * FROM query_table('orders')", "function query_table()", id="query_table"),
    pytest.param("SELECT json_execute_serialized_sql('x')", "function json_execute_serialized_sql()",
                 id="json_execute_serialized_sql"),
    pytest.param("SELECT * FROM postgres_query('db', 'select 1')", "function postgres_query()", id="postgres_query"),
    # environment and settings
    pytest.param("SELECT getenv('HOME')", "function getenv()", id="getenv"),
    pytest.param("SELECT current_setting('threads')", "function current_setting()", id="current_setting"),
    pytest.param("SELECT * FROM duckdb_secrets()", "function duckdb_secrets()", id="duckdb_secrets"),
    # table names that are paths or URLs (DuckDB's replacement scans)
    pytest.param("SELECT * FROM 'data.csv'", "table name 'data.csv' looks like a file or URL", id="string-path"),
    pytest.param('SELECT * FROM "s3://b/k"', "table name 's3://b/k' looks like a file or URL", id="quoted-url"),
    pytest.param("SELECT * FROM 'orders.parquet'", "looks like a file or URL", id="parquet-extension"),
])
def test_refused_as_file_or_system_access(sql: str, detail: str) -> None:
    res = safety(sql)
    assert (res.ok, res.reason) == (False, "file_or_system_access")
    assert res.detail is not None and detail in res.detail


@pytest.mark.parametrize(("sql", "statements"), [
    pytest.param("SELECT 1; SELECT 2", 2, id="two-selects"),
    pytest.param("SELECT 1; DROP TABLE orders", 2, id="select-then-drop"),
    pytest.param("SELECT 1; SELECT 2; SELECT 3", 3, id="three"),
])
def test_refused_as_multiple_statements(sql: str, statements: int) -> None:
    res = safety(sql)
    assert res.to_dict() == {"ok": False, "reason": "multiple_statements",
                             "detail": f"{statements} statements; exactly one SELECT is allowed"}


def test_no_tree_or_zero_statements_fails_closed() -> None:
    assert check_safety(None, 1).reason == "multiple_statements"
    assert check_safety(None, 0).ok is False


def test_single_statement_count_is_required_even_with_a_tree() -> None:
    tree = parse_sql("SELECT 1", "duckdb").expression
    assert check_safety(tree, 2).to_dict()["reason"] == "multiple_statements"
    assert check_safety(tree, 1).ok is True


@pytest.mark.parametrize("name", ["read_csv", "read_parquet", "query", "getenv", "glob", "read_blob",
                                  "json_execute_serialized_sql", "sqlite_attach", "load_extension"])
def test_denied_function_list_covers_the_known_readers(name: str) -> None:
    assert name in DENIED_FUNCTIONS


@pytest.mark.parametrize("sql", ["SELECT count(*) FROM t;\n-- count rows", "SELECT count(*) FROM t; /* done */"])
def test_trailing_comment_after_semicolon_is_allowed(sql: str) -> None:
    assert safety(sql).ok is True
