"""The PostgreSQL sandbox refuses what a prediction could reach around it: functions reached
by quoting, schema qualification or an unlisted SQL-running function, a session killed from
inside, a role undone with ``set_config``, and a superuser connection."""
from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from pytest_sqleval.core.cases import Limits
from pytest_sqleval.core.engines import open_sandbox
from pytest_sqleval.core.engines.postgres_sandbox import PostgresSandbox
from tests.engine_databases import PgServer
from tests.rows import table_of
from tests.sqleval_helpers import read_results, sqleval_ini  # noqa: F401  (fixture)


# -- the PostgreSQL sandbox ----------------------------------------------------------------
ORDERS_SQL = [
    "CREATE TABLE orders (id integer PRIMARY KEY, amount numeric)",
    "INSERT INTO orders SELECT i, i * 10 FROM generate_series(1, 7) AS g(i)",
    "CREATE TABLE orders_old AS SELECT * FROM orders",
    # not executable by PUBLIC, and one that runs with its owner's (a superuser's) rights
    "CREATE FUNCTION admin_only() RETURNS int LANGUAGE sql AS 'SELECT 1'",
    "REVOKE EXECUTE ON FUNCTION admin_only() FROM PUBLIC",
    "CREATE FUNCTION as_owner() RETURNS int LANGUAGE sql SECURITY DEFINER AS 'SELECT 1'",
    "GRANT SELECT ON ALL TABLES IN SCHEMA public TO grader",
    "DO $$BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'filereader') THEN "
    "CREATE ROLE filereader LOGIN; END IF; END$$",
    "GRANT pg_read_server_files TO filereader",
]


@pytest.fixture(scope="module")
def pg_hard(pg: PgServer) -> str:
    """The singer database plus ``orders`` and a deprecated ``orders_old`` with the same
    rows, read as ``grader`` (SELECT only)."""
    import psycopg
    url = pg.create_db("hard2")
    with psycopg.connect(pg.url("hard2"), autocommit=True) as con:
        for stmt in ORDERS_SQL:
            con.execute(stmt)
    return url


def _bypass_name_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the statement checks stay: what the session itself does against a call the
    name check missed."""
    monkeypatch.setattr("pytest_sqleval.core.engines.postgres_sandbox.denied_call", lambda tokens, names=(): None)


HOSTILE_CALLS = [
    ("quoted_query_to_xml", """SELECT * FROM "query_to_xml"('SELECT count(*) AS n FROM orders_old', true, false, '')"""),
    ("qualified_query_to_xml", "SELECT pg_catalog.query_to_xml('SELECT 1 AS n', true, false, '')"),
    ("qualified_quoted_query_to_xml", """SELECT "pg_catalog"."query_to_xml"('SELECT 1 AS n', true, false, '')"""),
    ("query_to_xmlschema", "SELECT query_to_xmlschema('SELECT 1 AS n', true, false, '')"),
    ("query_to_xml_and_xmlschema", "SELECT query_to_xml_and_xmlschema('SELECT 1 AS n', true, false, '')"),
    ("table_to_xml_reads_a_named_table", "SELECT table_to_xml('orders_old', true, false, '')"),
    ("ts_stat_runs_sql_text", "SELECT * FROM ts_stat('SELECT to_tsvector(name) FROM singer')"),
    ("comment_between_name_and_paren", "SELECT query_to_xml/**/('SELECT 1 AS n', true, false, '')"),
    ("unicode_escaped_name", """SELECT U&"\\0071uery_to_xml"('SELECT 1 AS n', true, false, '')"""),
    ("quoted_terminate_backend", """SELECT "pg_terminate_backend"(pg_backend_pid())::int"""),
    ("quoted_cancel_backend", """SELECT "pg_cancel_backend"(pg_backend_pid())"""),
    ("set_config_role", "SELECT set_config('role', 'none', false)"),
    ("quoted_set_config_role", """SELECT "set_config"('role', 'none', false)"""),
    ("qualified_set_config_role", """SELECT pg_catalog."set_config"('role', 'none', true)"""),
    ("pg_read_file_through_query_to_xml",
     "SELECT query_to_xml('SELECT pg_read_file(''/etc/hostname'') AS f', true, false, '')"),
    ("quoted_pg_read_file", """SELECT "pg_read_file"('/etc/hostname')"""),
    ("large_object", """SELECT "lo_get"(1)"""),
    ("quoted_sleep", """SELECT "pg_sleep"(0.01)"""),
    ("quoted_advisory_lock", """SELECT "pg_advisory_lock"(42)"""),
    ("catalog_not_executable_by_public", "SELECT admin_only()"),
    ("catalog_security_definer", """SELECT "as_owner"()"""),
]


@pytest.mark.parametrize("sql", [s for _, s in HOSTILE_CALLS], ids=[i for i, _ in HOSTILE_CALLS])
def test_postgres_sandbox_refuses_a_denied_call_however_it_is_spelt(pg: PgServer, pg_hard: str, sql: str) -> None:
    for url in (pg_hard, pg.url("hard2", "admin", "role=grader")):
        box = open_sandbox(url, Limits(timeout_s=5))
        try:
            out = box.run(sql)
            assert out.error is not None, (url, out.table)
            assert out.error.category == "permission_error" and out.error.message.startswith("refused"), out.error
            # the session is still there, still the reader
            after = box.run("SELECT current_user, count(*) FROM singer")
            assert after.error is None and table_of(after).to_pylist() == [{"current_user": "grader", "count": 5}]
        finally:
            box.close()


def test_postgres_name_check_leaves_ordinary_calls_alone(pg_hard: str) -> None:
    box = open_sandbox(pg_hard, Limits(timeout_s=5))
    try:
        out = box.run("SELECT left(name, 1) AS i, coalesce(age, 0) AS a, 'query_to_xml(' AS s, $$set_config(1)$$ AS t "
                      "FROM singer WHERE xmlparse(content '<a/>') IS NOT NULL ORDER BY singer_id LIMIT 1")
        assert out.error is None, out.error
        assert table_of(out).to_pylist() == [{"i": "J", "a": 52, "s": "query_to_xml(", "t": "set_config(1)"}]
    finally:
        box.close()


@pytest.mark.parametrize("url_of", [
    lambda pg: pg.url("hard2"),
    lambda pg: pg.url("hard2", "admin", "role=admin"),
    lambda pg: pg.url("hard2", "filereader"),
    lambda pg: pg.url("hard2", "admin", "role=filereader"),
], ids=["superuser", "superuser_as_role", "file_reader", "file_reader_as_role"])
def test_postgres_refuses_to_grade_as_a_role_that_reads_server_files(pg: PgServer, pg_hard: str,
                                                                     url_of: Callable[[PgServer], str]) -> None:
    with pytest.raises(ConnectionError) as info:
        PostgresSandbox(url_of(pg), Limits(timeout_s=5))
    msg = str(info.value)
    assert "refusing to grade" in msg and ("superuser" in msg or "pg_read_server_files" in msg), msg
    assert "?role=" in msg and "GRANT SELECT" in msg, msg


def test_postgres_server_refuses_what_the_name_check_missed(pg: PgServer, pg_hard: str,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """With the name check off, the reader role itself keeps files and the role shut."""
    _bypass_name_checks(monkeypatch)
    box = open_sandbox(pg.url("hard2", "admin", "role=grader"), Limits(timeout_s=5))
    try:
        for sql in ("SELECT pg_read_file('/etc/hostname')",
                    "SELECT query_to_xml('SELECT pg_read_file(''/etc/hostname'') AS f', true, false, '')"):
            out = box.run(sql)
            assert out.error is not None and out.error.category == "permission_error", (sql, out)
        # a role undone inside one query does not outlive it
        assert box.run("SELECT set_config('role', 'none', false)").error is None
        assert table_of(box.run("SELECT current_user")).column(0).to_pylist() == ["grader"]
    finally:
        box.close()


def test_postgres_session_killed_from_inside_is_reopened(pg_hard: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _bypass_name_checks(monkeypatch)
    box = open_sandbox(pg_hard, Limits(timeout_s=5))
    try:
        out = box.run("SELECT pg_terminate_backend(pg_backend_pid())")
        assert out.error is not None and out.table is None
        for _ in range(2):
            again = box.run("SELECT current_user, current_setting('transaction_read_only') AS ro, "
                            "current_setting('TimeZone') AS tz, count(*) FROM singer")
            assert again.error is None, again.error
            assert table_of(again).to_pylist() == [{"current_user": "grader", "ro": "on", "tz": "UTC", "count": 5}]
        assert box.reconnects == 1
    finally:
        box.close()


def test_postgres_session_killed_while_idle_is_reopened_before_the_next_query(pg: PgServer, pg_hard: str) -> None:
    import psycopg
    box = open_sandbox(pg_hard, Limits(timeout_s=5))
    try:
        pid = table_of(box.run("SELECT pg_backend_pid()")).column(0).to_pylist()[0]
        with psycopg.connect(pg.url("hard2"), autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s, 5000)", (pid,))
        out = box.run("SELECT count(*) FROM orders")
        assert out.error is None and table_of(out).column(0).to_pylist() == [7], out.error
        assert box.reconnects == 1
    finally:
        box.close()


def test_a_postgres_suite_survives_hostile_calls(pytester: pytest.Pytester, pg: PgServer, pg_hard: str) -> None:
    """The issue's run: SELECT-only role, dialect postgres. The quoted query_to_xml that read
    the deprecated table is not a pass, the quoted terminate does not take the later cases
    with it, and the content hash does not move."""
    suite = pytester.path / "pgsuite"
    suite.mkdir()
    gold_n = "SELECT count(*) AS n FROM orders"
    cases = [{"id": "xml", "question": "How many orders?", "gold_sql": gold_n},
             {"id": "kill", "question": "How many orders?", "gold_sql": gold_n},
             {"id": "after1", "question": "How many singers?", "gold_sql": "SELECT count(*) FROM singer"},
             {"id": "after2", "question": "Total order amount?", "gold_sql": "SELECT sum(amount) FROM orders"}]
    (suite / "questions.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    (suite / "sqleval.toml").write_text(f'[suite]\nname = "pg"\nquestions = "questions.jsonl"\n'
                                        f'database = "{pg_hard}"\ndialect = "postgres"\n')
    preds = {"xml": """SELECT (xpath('/table/row/n/text()', "query_to_xml"('SELECT count(*) AS n FROM orders_old', """
                    """true, false, '')))[1]::text::int AS n""",
             "kill": """SELECT "pg_terminate_backend"(pg_backend_pid())::int""",
             "after1": "SELECT count(*) FROM singer",
             "after2": "SELECT sum(amount) FROM orders"}
    (pytester.path / "hostile.jsonl").write_text("".join(json.dumps({"id": k, "sql": v}) + "\n"
                                                         for k, v in preds.items()))
    result = pytester.runpytest("pgsuite", "--sqleval-backend=predictions:hostile.jsonl", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=2)
    records = {r["case_id"]: r for r in read_results(pytester.path)}
    assert not records["xml"]["pass"] and not records["kill"]["pass"]
    assert records["after1"]["pass"] and records["after2"]["pass"]
    assert len({r["content_hash"] for r in records.values()}) == 1

