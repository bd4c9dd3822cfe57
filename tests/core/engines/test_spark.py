"""The Spark engine on a real local Spark: choosing it, the mirror and its cache, the
sandbox (every escape the issue lists, with Spark's own parser as the second wall behind
the gate), timeouts that stop work, row and byte caps, Spark's errors in the project's
taxonomy. One Spark session for the test session (a JVM takes seconds to start; the
database and its mirror are ``conftest.py``'s); the tests that need none run without Java."""
from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from pytest_sqleval.core.engines import engine_dialect, engine_name
from pytest_sqleval.core.engines.base import Limits
from pytest_sqleval.core.engines.spark_sandbox import (SparkSettings, gate, parse_location, settings_from_table,
                                                       spark_location, wrapped)
from pytest_sqleval.core.errors import BadInputError, UsageError
from tests.core.engines.conftest import spark_missing
from tests.rows import table_of

_spark_missing = spark_missing  # the name the other Spark test modules import


@pytest.fixture(scope="module")
def source(spark_source: Path) -> Path:
    return spark_source


@pytest.fixture(scope="module")
def location(source: Path, spark_cache: Path) -> str:
    return spark_location(source, SparkSettings(cache_dir=str(spark_cache)))


@pytest.fixture(scope="module")
def sandbox(location: str) -> Iterator[Any]:
    missing = _spark_missing()
    if missing:
        pytest.skip(missing)
    from pytest_sqleval.core.engines.spark_sandbox import SparkSandbox
    sb = SparkSandbox(location, Limits(timeout_s=3.0, max_rows=1000))
    yield sb
    sb.close()


# -- choosing the engine: no JVM ------------------------------------------------------------
def test_a_spark_location_selects_the_spark_engine_and_dialect(location: str, source: Path) -> None:
    assert engine_name(location) == "spark" and engine_dialect(location) == "spark"
    assert engine_name(source) == "duckdb"  # the file alone stays on DuckDB
    path, settings = parse_location(spark_location(source, SparkSettings(master="local[3]", conf={"a.b": "1"})))
    assert path == source.resolve() and settings.master == "local[3]" and settings.conf == {"a.b": "1"}


def _suite(tmp_path: Path, source: Path, extra: str) -> Path:
    (tmp_path / "q.jsonl").write_text('{"id": "a", "question": "q", "gold_sql": "SELECT 1"}\n')
    shutil.copy(source, tmp_path / "db.duckdb")
    manifest = tmp_path / "sqleval.toml"
    manifest.write_text(f'[suite]\nquestions = "q.jsonl"\ndatabase = "db.duckdb"\n{extra}')
    return manifest


def test_engine_spark_in_a_manifest_grades_its_file_on_spark(tmp_path: Path, source: Path) -> None:
    from pytest_sqleval.core.cases import load_manifest
    manifest = load_manifest(_suite(tmp_path, source, 'engine = "spark"\n[spark]\nmaster = "local[1]"\n'))
    assert isinstance(manifest.database, str) and engine_name(manifest.database) == "spark"
    path, settings = parse_location(manifest.database)
    assert path == (tmp_path / "db.duckdb").resolve() and settings.master == "local[1]"


def test_the_engine_override_takes_every_suite_to_spark(tmp_path: Path, source: Path) -> None:
    from pytest_sqleval.core.cases import load_manifest
    manifest = load_manifest(_suite(tmp_path, source, ""), engine="spark")
    assert engine_name(manifest.database) == "spark"
    assert engine_name(load_manifest(tmp_path / "sqleval.toml").database) == "duckdb"


@pytest.mark.parametrize("extra, says", [
    ('engine = "oracle"\n', "unknown engine 'oracle'"),
    ('engine = "spark"\n[spark]\nconf = { "spark.sql.runSQLOnFiles" = "true" }\n', "may not set spark.sql.runSQLOnFiles"),
    ('engine = "spark"\n[spark]\nconf = { "spark.driver.extraJavaOptions" = "-Dx=1" }\n', "may not set"),
    ('engine = "spark"\n[spark]\nmastr = "local[1]"\n', "unknown key"),
])
def test_a_bad_spark_manifest_is_one_clear_error(tmp_path: Path, source: Path, extra: str, says: str) -> None:
    from pytest_sqleval.core.cases import load_manifest
    with pytest.raises(BadInputError, match=says) as info:
        load_manifest(_suite(tmp_path, source, extra))
    assert "sqleval.toml" in str(info.value)


def test_without_pyspark_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch, location: str) -> None:
    from pytest_sqleval.core.engines import open_sandbox
    monkeypatch.setitem(sys.modules, "pyspark", None)  # import pyspark raises ImportError
    with pytest.raises(UsageError, match=r"pip install 'pytest-sqleval\[spark\]'"):
        open_sandbox(location, Limits())


# -- the gate: sqlglot, no JVM ------------------------------------------------------------
SPARK_ESCAPES = [
    pytest.param("SELECT * FROM text.`/etc/passwd`", "missing_table", id="file_by_path"),
    pytest.param("SELECT * FROM parquet.`/tmp`", "missing_table", id="parquet_by_path"),
    pytest.param("SELECT reflect('java.lang.System', 'getenv', 'HOME')", "permission_error", id="reflect"),
    pytest.param("SELECT java_method('java.lang.System', 'getProperty', 'user.home')", "permission_error",
                 id="java_method"),
    pytest.param("SELECT upper(reflect('java.lang.System', 'getenv', 'HOME')) AS h", "permission_error",
                 id="reflect_nested"),
    pytest.param("SET spark.sql.runSQLOnFiles=true", "permission_error", id="set"),
    pytest.param("SET -v", "permission_error", id="set_v"),
    pytest.param("RESET", "permission_error", id="reset"),
    pytest.param("ADD JAR /tmp/evil.jar", "permission_error", id="add_jar"),
    pytest.param("CACHE TABLE singer", "permission_error", id="cache"),
    pytest.param("UNCACHE TABLE singer", "permission_error", id="uncache"),
    pytest.param("CREATE TEMP VIEW singer AS SELECT 1 AS singer_id", "permission_error", id="temp_view_shadow"),
    pytest.param("CREATE OR REPLACE TEMPORARY VIEW concert AS SELECT 1 AS x", "permission_error", id="temp_view"),
    pytest.param("INSERT OVERWRITE DIRECTORY '/tmp/sqleval_spark_out' USING parquet SELECT * FROM singer",
                 "permission_error", id="insert_overwrite_directory"),
    pytest.param("EXECUTE IMMEDIATE 'SELECT 1'", "permission_error", id="execute_immediate"),
    pytest.param("BEGIN SELECT 1; END", "permission_error", id="begin_end"),
    pytest.param("BEGIN\n  DECLARE x INT DEFAULT 1;\n  SELECT x;\nEND", "permission_error", id="begin_declare"),
    pytest.param("DECLARE VARIABLE v INT DEFAULT 1", "permission_error", id="declare_variable"),
    pytest.param("DROP TABLE singer", "permission_error", id="drop"),
    pytest.param("INSERT INTO singer VALUES (9, 'x', 'y', 1, 1.0)", "permission_error", id="insert"),
    pytest.param("CREATE TABLE stolen USING parquet AS SELECT * FROM singer", "permission_error", id="ctas"),
    pytest.param("USE sales", "permission_error", id="use"),
    pytest.param("REFRESH TABLE singer", "permission_error", id="refresh"),
    pytest.param("SHOW TABLES", "permission_error", id="show"),
    pytest.param("DESCRIBE singer", "permission_error", id="describe"),
    pytest.param("EXPLAIN SELECT 1", "permission_error", id="explain"),
    pytest.param("ANALYZE TABLE singer COMPUTE STATISTICS", "permission_error", id="analyze"),
    pytest.param("SELECT 1; SELECT 2", "permission_error", id="two_selects"),
    pytest.param("SELECT * FROM singer; DROP TABLE singer", "permission_error", id="select_then_drop"),
    pytest.param("LOAD DATA LOCAL INPATH '/etc/passwd' INTO TABLE singer", "permission_error", id="load_data"),
    pytest.param("MSCK REPAIR TABLE singer", "permission_error", id="msck"),
    pytest.param("CREATE FUNCTION f AS 'com.evil.F' USING JAR '/tmp/e.jar'", "permission_error", id="create_function"),
]


@pytest.mark.parametrize("sql, category", SPARK_ESCAPES)
def test_the_gate_refuses_everything_but_a_query(sql: str, category: str) -> None:
    refused = gate(sql)
    if category == "permission_error":
        assert refused is not None and refused.category == "permission_error", sql
    else:  # a query in form: the locked settings answer it (on Spark, below)
        assert refused is None


@pytest.mark.parametrize("sql", ["SELECT 1", "WITH a AS (SELECT 1 AS x) SELECT x FROM a",
                                 "SELECT * FROM singer ORDER BY age DESC LIMIT 2", "VALUES (1), (2)",
                                 "SELECT 1 UNION ALL SELECT 2", "SELECT 1;", "SELECT '${env:HOME}' AS h"])
def test_the_gate_lets_queries_through(sql: str) -> None:
    assert gate(sql) is None


# -- on Spark (the ``sandbox`` fixture skips, naming what is missing, without pyspark or Java) --
@pytest.mark.spark
@pytest.mark.parametrize("sql, category", SPARK_ESCAPES)
def test_each_escape_fails_on_spark_and_changes_nothing(sandbox: Any, sql: str, category: str) -> None:
    before = sandbox.catalog()
    out = sandbox.run(sql)
    assert out.table is None and out.error is not None and out.error.category == category, (sql, out.error)
    assert "root:" not in out.error.message  # /etc/passwd never read
    assert not Path("/tmp/sqleval_spark_out").exists()
    after = sandbox.run("SELECT count(*) FROM singer")
    assert after.error is None and after.table.column(0).to_pylist() == [5]
    assert sandbox.catalog() == before


@pytest.mark.spark
def test_env_substitution_is_off(sandbox: Any) -> None:
    out = sandbox.run("SELECT '${env:HOME}' AS h, '${system:user.home}' AS u")
    assert out.error is None and out.table.to_pylist() == [{"h": "${env:HOME}", "u": "${system:user.home}"}]


@pytest.mark.spark
@pytest.mark.parametrize("command", ["SET spark.sql.runSQLOnFiles=true", "CACHE TABLE singer",
                                     "EXECUTE IMMEDIATE 'SELECT 1'", "BEGIN SELECT 1; END", "ADD JAR /tmp/evil.jar",
                                     "CREATE TEMP VIEW singer AS SELECT 1 AS x",
                                     "INSERT OVERWRITE DIRECTORY '/tmp/sqleval_spark_out' USING parquet SELECT 1"])
def test_spark_itself_refuses_a_command_the_gate_let_through(sandbox: Any, command: str) -> None:
    """The second wall: past the gate, the query runs as a subquery, and Spark's parser
    accepts nothing else there."""
    from pytest_sqleval.core.engines.spark_sandbox import classify_error
    with pytest.raises(Exception) as info:
        sandbox.spark.sql(wrapped(command))
    assert classify_error(info.value).category == "syntax_error"
    assert not Path("/tmp/sqleval_spark_out").exists()


@pytest.mark.spark
def test_order_by_and_limit_survive_the_wrapping(sandbox: Any) -> None:
    out = sandbox.run("SELECT name, age FROM singer ORDER BY age DESC, name LIMIT 3")
    assert out.error is None and out.table.to_pylist() == [
        {"name": "Joe", "age": 52}, {"name": "Ann", "age": 43}, {"name": "Bo", "age": 30}]
    out = sandbox.run("SELECT id FROM sales.orders ORDER BY id DESC LIMIT 2;")
    assert out.table.column(0).to_pylist() == [4999, 4998]


@pytest.mark.spark
def test_results_are_typed_through_arrow(sandbox: Any) -> None:
    import datetime as dt
    import decimal
    import math
    out = sandbox.run("SELECT d, day, ts, tstz, f, t, tags, s FROM typed ORDER BY d NULLS LAST")
    assert out.error is None
    first, second = out.table.to_pylist()
    assert first["d"] == decimal.Decimal("1.50") and first["day"] == dt.date(2024, 2, 29)
    assert first["ts"] == dt.datetime(2024, 1, 1, 10) and first["ts"].tzinfo is None  # TIMESTAMP stays naive (NTZ)
    assert first["tstz"] == dt.datetime(2024, 1, 1, 10, tzinfo=dt.timezone.utc)
    assert math.isnan(first["f"]) and first["t"] == "10:30:00"  # Spark has no TIME: mirrored as text
    assert first["tags"] == ["x", "y"] and first["s"] == {"a": 1, "b": "z"}
    assert all(v is None for v in second.values())


@pytest.mark.spark
@pytest.mark.parametrize("sql, category", [
    ("SELECT nope FROM singer", "missing_column"),
    ("SELECT * FROM nope", "missing_table"),
    ("SELECT * FROM nowhere.singer", "missing_table"),
    ("SELECT frobnicate(age) FROM singer", "missing_function"),
    ("SELECT singer_id FROM singer JOIN concert USING (year)", "missing_column"),
    ("SELECT singer_id FROM singer, concert", "ambiguous_reference"),
    ("SELECT country, age FROM singer GROUP BY country", "invalid_aggregation"),
    ("SELECT sum(max(age)) FROM singer", "invalid_aggregation"),
    ("SELECT age / 0 FROM singer", "division_by_zero"),
    ("SELECT CAST(name AS INT) FROM singer", "type_mismatch"),
    ("SELECT age + array(1) FROM singer", "type_mismatch"),
    ("SELECT age FROM singer WHERE", "syntax_error"),
])
def test_spark_errors_read_as_the_project_taxonomy(sandbox: Any, sql: str, category: str) -> None:
    out = sandbox.run(sql)
    assert out.error is not None and out.error.category == category, out.error
    assert "\tat " not in out.error.message and "JVM" not in out.error.message  # one clear line, no stack
    if category == "missing_function":
        assert out.error.subject == "frobnicate"


@pytest.mark.spark
def test_an_error_points_into_the_query_as_written(sandbox: Any) -> None:
    """Spark runs the query one line down (inside the wrapping subquery); its positions
    are given back in the query's own lines."""
    out = sandbox.run("SELECT nope FROM singer")
    assert out.error is not None and "line 1 pos 7" in out.error.message, out.error
    out = sandbox.run("SELECT age FROM singer WHERE age >> = 3")  # refused by the gate: Spark never sees it
    assert out.error is not None and out.error.category == "syntax_error" and out.error.exception == "Refused"


@pytest.mark.spark
def test_results_past_the_row_cap_stop_inside_spark(sandbox: Any) -> None:
    out = sandbox.run("SELECT * FROM sales.orders", max_rows=10)
    assert out.table is None and out.truncated and out.error is not None
    assert out.error.category == "resource_exceeded" and out.error.rows_over == 10 and out.error.cap == "max_rows"
    assert sandbox.run("SELECT * FROM sales.orders", max_rows=5000).table.num_rows == 5000


@pytest.mark.spark
def test_results_past_the_byte_cap_are_refused(location: str, sandbox: Any) -> None:
    from pytest_sqleval.core.engines.spark_sandbox import SparkSandbox
    small = SparkSandbox(location, Limits(max_bytes=2000))
    try:
        out = small.run("SELECT id, k FROM sales.orders")
        assert out.error is not None and out.error.category == "resource_exceeded" and out.truncated
        assert small.run("SELECT id FROM sales.orders LIMIT 10").error is None
    finally:
        small.close()


@pytest.mark.spark
def test_a_query_past_its_time_limit_is_stopped_and_the_next_one_runs(sandbox: Any) -> None:
    out = sandbox.run("SELECT count(*) FROM range(100000000000) a", timeout_s=1.0)
    assert out.error is not None and out.error.category == "timeout", out.error
    assert "cancelled" in out.error.message
    again = sandbox.run("SELECT count(*) FROM singer")
    assert again.error is None and again.table.column(0).to_pylist() == [5]
    tracker = sandbox.spark.sparkContext.statusTracker()
    deadline = time.monotonic() + 10.0  # the scheduler lists a cancelled job until it has torn it down
    while list(tracker.getActiveJobsIds()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert list(tracker.getActiveJobsIds()) == []  # the runaway's work is gone, not left computing


@pytest.mark.spark
def test_a_rerun_loads_nothing(location: str, sandbox: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_sqleval.core.engines import spark_sandbox
    from pytest_sqleval.core.engines.duckdb_sandbox import DuckDBSandbox
    from pytest_sqleval.core.engines.spark_sandbox import SparkSandbox

    def no_copy(*args: Any) -> Any:
        raise AssertionError("the mirror was written again")

    monkeypatch.setattr(spark_sandbox, "_copy_duckdb", no_copy)
    monkeypatch.setattr(DuckDBSandbox, "content_hash", no_copy)  # the source's hash is read back, not computed
    again = SparkSandbox(location, Limits())
    try:
        assert again.content_hash() == sandbox.content_hash()
        assert table_of(again.run("SELECT count(*) FROM sales.orders")).column(0).to_pylist() == [5000]
    finally:
        again.close()
    assert sandbox.run("SELECT count(*) FROM singer").table.column(0).to_pylist() == [5]  # its tables come back


@pytest.mark.spark
def test_the_content_hash_is_the_sources(sandbox: Any, source: Path) -> None:
    from pytest_sqleval.core.engines.duckdb_sandbox import DuckDBSandbox
    duck = DuckDBSandbox(source)
    try:
        assert sandbox.content_hash() == duck.content_hash()
    finally:
        duck.close()


# -- known differences from DuckDB (docs/explanation/spark.md), each shown -----------------
def _both(sandbox: Any, source: Path, duckdb_sql: str) -> tuple[Any, Any]:
    """The DuckDB result of ``duckdb_sql`` and the Spark result of its sqlglot transpilation."""
    import duckdb
    import sqlglot
    con = duckdb.connect(str(source), read_only=True)
    try:
        duck = con.sql(duckdb_sql).to_arrow_table()
    finally:
        con.close()
    spark = sandbox.run(sqlglot.transpile(duckdb_sql, read="duckdb", write="spark")[0])
    return duck, spark


@pytest.mark.spark
def test_difference_avg_of_a_decimal_is_a_decimal(sandbox: Any, source: Path) -> None:
    import decimal
    import pyarrow as pa
    duck, spark = _both(sandbox, source, "SELECT avg(d) FROM typed")
    assert pa.types.is_floating(duck.schema.types[0]) and duck.column(0).to_pylist() == [1.5]
    assert pa.types.is_decimal(spark.table.schema.types[0]) and spark.table.column(0).to_pylist() == [decimal.Decimal("1.5")]


@pytest.mark.spark
def test_difference_date_plus_interval_is_a_date(sandbox: Any, source: Path) -> None:
    import datetime as dt
    duck, spark = _both(sandbox, source, "SELECT DATE '2024-01-31' + INTERVAL 1 MONTH AS d")
    assert duck.column(0).to_pylist() == [dt.datetime(2024, 2, 29)]
    assert spark.error is None and spark.table.column(0).to_pylist() == [dt.date(2024, 2, 29)]


@pytest.mark.spark
def test_difference_division_by_zero_raises_under_ansi(sandbox: Any, source: Path) -> None:
    duck, spark = _both(sandbox, source, "SELECT age / (age - age) FROM singer WHERE singer_id = 1")
    assert duck.column(0).to_pylist() == [float("inf")]
    assert spark.error is not None and spark.error.category == "division_by_zero"


@pytest.mark.spark
def test_difference_time_columns_are_text(sandbox: Any) -> None:
    assert sandbox.catalog()["main"]["typed"]["t"] == "string"


@pytest.mark.spark
def test_difference_timestamp_is_timestamp_ntz(sandbox: Any) -> None:
    columns = sandbox.catalog()["main"]["typed"]
    assert columns["ts"] == "timestamp_ntz" and columns["tstz"] == "timestamp"


@pytest.mark.spark
def test_same_null_ordering_once_transpiled(sandbox: Any, source: Path) -> None:
    """Spark sorts NULL first ascending, DuckDB last; sqlglot writes DuckDB's order out."""
    duck, spark = _both(sandbox, source, "SELECT net_worth FROM singer ORDER BY net_worth")
    assert spark.error is None and spark.table.column(0).to_pylist() == duck.column(0).to_pylist()
    assert duck.column(0).to_pylist()[-1] is None


def test_the_engine_option_takes_only_known_engines(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--sqleval-engine=oracle")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--sqleval-engine*invalid choice*'oracle'*"])
