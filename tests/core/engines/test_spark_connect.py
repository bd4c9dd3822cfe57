"""The Spark engine over Spark Connect, on a real Connect server this module starts on
loopback (pyspark's bundled Spark, 127.0.0.1 only, a token of its own): an existing catalog
graded with nothing loaded, its content hash read from its tables, the local engine's whole
hostile list refused over Connect too, timeouts that leave nothing on the server, and a
graded suite end to end. One server for the test session (``conftest.py``), restarted by
the backstop once."""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Iterator

import pytest

from pytest_sqleval.core.engines import display_location, engine_dialect, engine_name
from pytest_sqleval.core.engines.base import Limits
from pytest_sqleval.core.engines.spark_sandbox import wrapped
from tests.core.engines.test_spark import SPARK_ESCAPES, _spark_missing
from tests.sqleval_helpers import read_results, sqleval_ini  # noqa: F401  (fixture)


@pytest.fixture(scope="module")
def source(spark_source: Path) -> Path:
    return spark_source


@pytest.fixture(scope="module")
def server(connect_server: Any) -> Any:
    """The session's Connect server (``conftest.py``): its start is paid once per session."""
    return connect_server


@pytest.fixture(scope="module")
def sandbox(server: Any) -> Iterator[Any]:
    from pytest_sqleval.core.engines.spark_connect import ConnectSandbox
    # a wall-time limit (Connect): wide enough for a loaded CI machine; the runaway's test sets its own
    sb = ConnectSandbox(server.url, Limits(timeout_s=60.0, max_rows=1000), server=server)
    yield sb
    sb.close()


@pytest.fixture
def admin(server: Any) -> Iterator[Any]:
    """A session of the server's owner (not the sandbox's): changes the catalog under test."""
    from pytest_sqleval.core.engines.spark_connect import close_client, connect_session
    spark = connect_session(server.url)
    yield spark
    close_client(spark, release=True)


# -- choosing it: no server --------------------------------------------------------------------
URL = "sc://spark.example:15002/;token=s3cret;user_id=grader"


def test_an_sc_location_selects_spark_and_its_token_never_shows() -> None:
    assert engine_name(URL) == "spark" and engine_dialect(URL) == "spark"
    shown = display_location(URL)
    assert "s3cret" not in shown and shown == "sc://spark.example:15002/;token=***;user_id=grader"


def _suite(tmp_path: Path, database: str, source: Path) -> Path:
    (tmp_path / "q.jsonl").write_text('{"id": "a", "question": "q", "gold_sql": "SELECT 1"}\n')
    shutil.copy(source, tmp_path / "db.duckdb")
    manifest = tmp_path / "sqleval.toml"
    manifest.write_text(f'[suite]\nquestions = "q.jsonl"\ndatabase = "{database}"\ndialect = "duckdb"\n')
    return manifest


def test_a_manifest_names_a_connect_server_as_its_database(tmp_path: Path, source: Path) -> None:
    from pytest_sqleval.core.cases import load_manifest
    assert load_manifest(_suite(tmp_path, URL, source)).database == URL


def test_the_remote_option_takes_every_suite_to_the_server(tmp_path: Path, source: Path) -> None:
    from pytest_sqleval.core.cases import load_manifest
    assert load_manifest(_suite(tmp_path, "db.duckdb", source), spark_remote=URL).database == URL
    assert load_manifest(tmp_path / "sqleval.toml").database == tmp_path / "db.duckdb"  # the run's choice, not kept


def test_the_remote_option_takes_only_sc_locations(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--sqleval-spark-remote=http://spark.example:15002")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--sqleval-spark-remote*not a Spark Connect location*sc://host:port*"])


@pytest.mark.spark
def test_an_unreachable_server_is_one_clear_error() -> None:
    if _spark_missing():
        pytest.skip(_spark_missing() or "")
    from pytest_sqleval.core.engines.spark_connect import ConnectSandbox, _free_port
    with pytest.raises(ConnectionError, match=r"cannot reach the Spark Connect server at localhost:\d+.*Fix"):
        ConnectSandbox(f"sc://localhost:{_free_port()}/;token=x")


#: a process whose threads bear a JVM's names (Linux ``comm``, as HotSpot sets them): an idle
#: ``Finalizer``, a JIT compiler thread that computes, and with ``task`` a Spark task that computes
NAMED_THREADS = """
import ctypes, sys, threading, time
prctl = ctypes.CDLL(None).prctl

def named(name, busy):
    prctl(15, name.encode()[:15], 0, 0, 0)  # PR_SET_NAME: this thread's name
    ready.release()
    while busy:
        sum(range(10000))
    time.sleep(3600)

ready = threading.Semaphore(0)
wanted = [("Finalizer", False), ("C1 CompilerThread0", True)] + [("Executor task launch worker-0", True)] * (sys.argv[1] == "task")
for name, busy in wanted:
    threading.Thread(target=named, args=(name, busy), daemon=True).start()
for _ in wanted:
    ready.acquire()
print("ready", flush=True)
time.sleep(3600)
"""


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads threads from /proc (Linux)")
@pytest.mark.parametrize("work, settles", [("none", True), ("task", False)])
def test_a_server_is_free_when_no_query_computes_whatever_its_jvm_does(work: str, settles: bool) -> None:
    """Whether the backstop restarts a server: the JVM's own threads (the JIT compiler
    warming up after a restart, the garbage collector) are busy for seconds while no query
    runs; counted, they made a freed server look busy (a restart for nothing, and a test
    that failed now and then on a loaded machine). Only what Spark runs counts."""
    import subprocess
    import sys
    from pytest_sqleval.core.engines.spark_connect import _cpu_settles
    proc = subprocess.Popen([sys.executable, "-c", NAMED_THREADS, work], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        assert _cpu_settles(proc.pid, 2.0) is settles
    finally:
        proc.kill()
        proc.wait(10)


REFUSING_SERVER = """
import socket, threading
import pytest

def test_a_port_that_is_not_a_connect_server():
    from pytest_sqleval.core.engines.spark_connect import ConnectSandbox
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()

    def hang_up():
        while True:
            listener.accept()[0].close()

    threading.Thread(target=hang_up, daemon=True).start()
    with pytest.raises(ConnectionError, match="refused the session"):
        ConnectSandbox(f"sc://localhost:{listener.getsockname()[1]}/;token=x")
"""


@pytest.mark.spark
def test_a_failed_connect_leaves_nothing_that_warns_after_the_run(pytester: pytest.Pytester) -> None:
    """A Connect client left open calls its server again when the interpreter exits
    (pyspark's clean-up, with retries), after pytest has put its warning filters back:
    ``[RETRIES_EXCEEDED]`` was printed after a run that used Connect. Every session the
    sandbox gives up on is closed, so the run ends with nothing printed after it."""
    if _spark_missing():
        pytest.skip(_spark_missing() or "")
    pytester.makepyfile(test_refused=REFUSING_SERVER)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q")
    result.assert_outcomes(passed=1)
    output = result.stdout.str() + result.stderr.str()
    assert "RETRIES_EXCEEDED" not in output and "Traceback" not in output, output[-3000:]


# -- on the server ---------------------------------------------------------------------------
@pytest.mark.spark
def test_a_wrong_token_is_refused_and_not_shown(server: Any) -> None:
    from pytest_sqleval.core.engines.spark_connect import ConnectSandbox
    with pytest.raises(ConnectionError, match="refused the session") as info:
        ConnectSandbox(server.url.replace(server.token, "not-the-token"))
    assert "not-the-token" not in str(info.value) and server.token not in str(info.value)


@pytest.mark.spark
def test_the_catalog_is_the_servers_and_nothing_is_loaded(sandbox: Any) -> None:
    catalog = sandbox.catalog()
    assert set(catalog) == {"default", "sales"} and {"singer", "concert", "french", "typed"} <= set(catalog["default"])
    assert catalog["sales"]["orders"] == {"id": "bigint", "k": "bigint"}
    assert sandbox.spark.conf.get("spark.sql.runSQLOnFiles") == "false"  # set by the sandbox's session


@pytest.fixture(scope="module")
def pristine(sandbox: Any) -> dict[str, Any]:
    """The server's catalog before any escape was tried: after each, it is still this."""
    sandbox._tables = None
    return sandbox.catalog()


@pytest.mark.spark
@pytest.mark.parametrize("sql, category", SPARK_ESCAPES)
def test_each_escape_fails_over_connect_and_changes_nothing(sandbox: Any, pristine: dict[str, Any], sql: str,
                                                            category: str) -> None:
    before = pristine
    out = sandbox.run(sql)
    assert out.table is None and out.error is not None and out.error.category == category, (sql, out.error)
    assert "root:" not in out.error.message  # /etc/passwd never read
    assert not Path("/tmp/sqleval_spark_out").exists()
    after = sandbox.run("SELECT count(*) FROM singer")
    assert after.error is None and after.table.column(0).to_pylist() == [5]
    sandbox._tables = None  # list the server's tables again
    assert sandbox.catalog() == before


@pytest.mark.spark
def test_env_substitution_is_off_over_connect(sandbox: Any) -> None:
    out = sandbox.run("SELECT '${env:HOME}' AS h, '${system:user.home}' AS u")
    assert out.error is None and out.table.to_pylist() == [{"h": "${env:HOME}", "u": "${system:user.home}"}]


@pytest.mark.spark
@pytest.mark.parametrize("command", ["SET spark.sql.runSQLOnFiles=true", "CACHE TABLE singer",
                                     "EXECUTE IMMEDIATE 'SELECT 1'", "BEGIN SELECT 1; END", "ADD JAR /tmp/evil.jar",
                                     "CREATE TEMP VIEW singer AS SELECT 1 AS x",
                                     "INSERT OVERWRITE DIRECTORY '/tmp/sqleval_spark_out' USING parquet SELECT 1"])
def test_the_server_itself_refuses_a_command_the_gate_let_through(sandbox: Any, command: str) -> None:
    from pytest_sqleval.core.engines.spark_sandbox import classify_error
    with pytest.raises(Exception) as info:
        sandbox.spark.sql(wrapped(command)).toArrow()
    assert classify_error(info.value).category == "syntax_error"
    assert not Path("/tmp/sqleval_spark_out").exists()
    assert sandbox.spark.conf.get("spark.sql.runSQLOnFiles") == "false"


@pytest.mark.spark
def test_order_by_and_limit_survive_the_wrapping_over_connect(sandbox: Any) -> None:
    out = sandbox.run("SELECT name, age FROM singer ORDER BY age DESC, name LIMIT 3")
    assert out.error is None and out.table.to_pylist() == [
        {"name": "Joe", "age": 52}, {"name": "Ann", "age": 43}, {"name": "Bo", "age": 30}]
    assert sandbox.run("SELECT id FROM sales.orders ORDER BY id DESC LIMIT 2;").table.column(0).to_pylist() == [4999, 4998]


@pytest.mark.spark
def test_results_are_typed_through_arrow_over_connect(sandbox: Any) -> None:
    import datetime as dt
    import decimal
    import math
    out = sandbox.run("SELECT d, day, ts, tstz, f, t, tags, s FROM typed ORDER BY d NULLS LAST")
    assert out.error is None
    first, second = out.table.to_pylist()
    assert first["d"] == decimal.Decimal("1.50") and first["day"] == dt.date(2024, 2, 29)
    assert first["ts"] == dt.datetime(2024, 1, 1, 10) and first["ts"].tzinfo is None
    assert first["tstz"] == dt.datetime(2024, 1, 1, 10, tzinfo=dt.timezone.utc)
    assert math.isnan(first["f"]) and first["tags"] == ["x", "y"] and first["s"] == {"a": 1, "b": "z"}
    assert all(v is None for v in second.values())


@pytest.mark.spark
@pytest.mark.parametrize("sql, category", [
    ("SELECT nope FROM singer", "missing_column"),
    ("SELECT * FROM nope", "missing_table"),
    ("SELECT frobnicate(age) FROM singer", "missing_function"),
    ("SELECT singer_id FROM singer, concert", "ambiguous_reference"),
    ("SELECT country, age FROM singer GROUP BY country", "invalid_aggregation"),
    ("SELECT age / 0 FROM singer", "division_by_zero"),
    ("SELECT CAST(name AS INT) FROM singer", "type_mismatch"),
])
def test_errors_over_connect_read_as_the_project_taxonomy(sandbox: Any, sql: str, category: str) -> None:
    out = sandbox.run(sql)
    assert out.error is not None and out.error.category == category, out.error
    assert "\tat " not in out.error.message and "JVM" not in out.error.message and "\n'" not in out.error.message


@pytest.mark.spark
def test_row_and_byte_caps_stop_inside_spark_over_connect(server: Any, sandbox: Any) -> None:
    from pytest_sqleval.core.engines.spark_connect import ConnectSandbox
    out = sandbox.run("SELECT * FROM sales.orders", max_rows=10)
    assert out.table is None and out.truncated and out.error.rows_over == 10 and out.error.cap == "max_rows"
    small = ConnectSandbox(server.url, Limits(max_bytes=2000))
    try:
        out = small.run("SELECT id, k FROM sales.orders")
        assert out.error is not None and out.error.category == "resource_exceeded" and out.truncated
        assert small.run("SELECT id FROM sales.orders LIMIT 10").error is None
    finally:
        small.close()


RUNAWAY = "SELECT count(*) FROM range(100000000000) WHERE xxhash64(id) = 0"
# In this order: the plain timeout first, on a warm server (an interrupt then lands on a running
# job; on a server just restarted it lands while the query is planned, is lost, and the backstop
# restarts the server again), the remote one next, and the backstop, which restarts, last.


@pytest.mark.spark
def test_a_query_past_its_limit_leaves_the_server_free(sandbox: Any, server: Any) -> None:
    """Interrupted until the server drops the operation; its tasks, which Spark 4.3 lets
    compute on, are ended by the backstop (a restart of the server this session started).
    Either way, once ``run`` returns the server's CPU is free and the next query runs."""
    from pytest_sqleval.core.engines.spark_connect import _cpu_settles
    out = sandbox.run(RUNAWAY, timeout_s=1.0)
    assert out.error is not None and out.error.category == "timeout", out.error
    assert "interrupted" in out.error.message and out.meta["interrupts"] >= 1
    assert _cpu_settles(server.pid, 1.0), out.meta  # free now, not later
    assert sandbox.spark.interruptAll() == []  # nothing of it is left on the server
    again = sandbox.run("SELECT count(*) FROM singer")
    assert again.error is None and again.table.column(0).to_pylist() == [5], (out.meta, again.error)


@pytest.mark.spark
def test_on_a_remote_server_a_timeout_is_marked(server: Any, sandbox: Any) -> None:
    """Without the server's process (a remote server) there is no backstop: the case says so."""
    from pytest_sqleval.core.engines.spark_connect import BACKSTOP_S, ConnectSandbox, _cpu_settles
    remote = ConnectSandbox(server.url, Limits())
    try:
        out = remote.run(RUNAWAY, timeout_s=1.0)
        assert out.error is not None and out.error.category == "timeout" and out.meta["server_may_still_run"]
        assert "remote server" in out.error.message
    finally:
        remote.close()
    if not _cpu_settles(server.pid, BACKSTOP_S):  # the interrupt was lost and its tasks compute on: they go
        server.restart()  # (rare on a warm server; the next test's backstop would restart it anyway)
        sandbox.reconnect()


@pytest.mark.spark
def test_the_backstop_restarts_a_server_that_computes_on(sandbox: Any, server: Any, admin: Any) -> None:
    """The backstop, made certain: another session keeps the server computing (work no
    interrupt of the timed-out query reaches, as a dropped operation's tasks are), so its
    CPU is not free ``BACKSTOP_S`` after the query returned, and the server is restarted:
    the work goes with it, and the catalog comes back with the server."""
    import threading
    from pytest_sqleval.core.engines.spark_connect import _cpu_settles
    restarts = server.restarts
    busy = threading.Thread(target=lambda: _swallow(lambda: admin.sql(RUNAWAY).toArrow()), daemon=True)
    busy.start()
    try:
        out = sandbox.run("SELECT count(*) FROM range(100000000000) WHERE xxhash64(id) = 1", timeout_s=1.0)
    finally:
        busy.join(60)
    assert not busy.is_alive()  # the other session's query ended with the server
    assert out.error is not None and out.error.category == "timeout", out.error
    assert out.meta.get("server_restarted") and server.restarts == restarts + 1, out.meta
    assert "the server was restarted" in out.error.message
    assert _cpu_settles(server.pid, 1.0)
    again = sandbox.run("SELECT count(*) FROM singer")
    assert again.error is None and again.table.column(0).to_pylist() == [5], again.error


def _swallow(call: Any) -> None:
    try:
        call()
    except Exception:
        pass  # its server was restarted under it: the point


@pytest.mark.spark
def test_the_content_hash_is_read_from_the_tables(server: Any, sandbox: Any, admin: Any) -> None:
    """Names, schemas and rows: the hash moves when a row or a table changes, and comes
    back when the change is undone; a second session reads the same hash."""
    from pytest_sqleval.core.engines.spark_connect import ConnectSandbox
    other = ConnectSandbox(server.url, Limits())

    def fresh() -> str:
        other._tables = other._hash = None  # read the server's tables again
        return str(other.content_hash())

    try:
        base = sandbox.content_hash()
        assert len(base) == 64 and fresh() == base
        admin.sql("CREATE DATABASE scratch")
        try:
            admin.sql("CREATE TABLE scratch.t (a INT, b STRING) USING parquet")
            with_table = fresh()
            assert with_table != base
            admin.sql("INSERT INTO scratch.t VALUES (1, NULL)")
            one_row = fresh()
            admin.sql("INSERT OVERWRITE scratch.t VALUES (NULL, '1')")  # same count, NULL moved
            assert len({with_table, one_row, fresh()}) == 3
        finally:
            admin.sql("DROP DATABASE scratch CASCADE")
        assert fresh() == base
    finally:
        other.close()


# -- a graded suite, end to end ---------------------------------------------------------------
CASES = [
    {"id": "count", "question": "How many singers?", "gold_sql": "SELECT count(*) FROM singer"},
    {"id": "by_country", "question": "Singers per country?",
     "gold_sql": "SELECT country, count(*) FROM singer GROUP BY country"},
    {"id": "oldest", "question": "The two oldest?", "gold_sql": "SELECT name FROM singer ORDER BY age DESC LIMIT 2"},
    {"id": "orders", "question": "Orders per k?", "gold_sql": "SELECT k, count(*) FROM sales.orders GROUP BY k"},
]
PREDICTIONS = {
    "count": "SELECT count(singer_id) FROM singer",
    "by_country": "SELECT country, count(*) FROM singer WHERE age > 26 GROUP BY country",  # wrong
    "oldest": "SELECT * FROM text.`/etc/passwd`",  # hostile
    "orders": "SELECT k, count(id) AS n FROM sales.orders GROUP BY 1",
}


@pytest.mark.spark
@pytest.mark.parametrize("how", ["manifest", "option"])
def test_a_suite_graded_over_connect(pytester: pytest.Pytester, server: Any, sandbox: Any, how: str,
                                     source: Path) -> None:
    suite = pytester.path / "suite"
    suite.mkdir()
    shutil.copy(source, suite / "db.duckdb")
    (suite / "questions.jsonl").write_text("".join(json.dumps(c) + "\n" for c in CASES))
    database = server.url if how == "manifest" else "db.duckdb"
    (suite / "sqleval.toml").write_text(f'[suite]\nname = "connect"\nquestions = "questions.jsonl"\n'
                                        f'database = "{database}"\ndialect = "duckdb"\n')
    (pytester.path / "preds.jsonl").write_text("".join(json.dumps({"id": k, "sql": v}) + "\n"
                                                       for k, v in PREDICTIONS.items()))
    args = ["suite", "--sqleval-backend=predictions:preds.jsonl", "-p", "no:cacheprovider"]
    if how == "option":
        args.append(f"--sqleval-spark-remote={server.url}")
    result = pytester.runpytest(*args)
    result.assert_outcomes(passed=2, failed=2)
    assert server.token not in result.stdout.str() + result.stderr.str()
    assert "JVM stacktrace" not in result.stdout.str() + result.stderr.str()
    records = {r["case_id"]: r for r in read_results(pytester.path)}
    assert records["count"]["pass"] and records["orders"]["pass"]
    assert not records["by_country"]["pass"] and not records["oldest"]["pass"]
    assert {r["engine"] for r in records.values()} == {"spark"}
    assert {r["content_hash"] for r in records.values()} == {sandbox.content_hash()}
    assert all(server.token not in json.dumps(r) for r in records.values())
