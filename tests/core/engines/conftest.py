"""What the Spark tests share, one of each per test session (under xdist, per worker: each
worker has its own JVMs): the singer database with its mirror, built once, and one Spark
Connect server serving that mirror. The local Spark session is the process's already
(``spark_sandbox.session``): every local sandbox of a session shares its JVM.

A JVM takes 4-13 s of a quiet machine to start (and much more on a loaded one), and a
mirror is a DuckDB COPY per table: a module that built its own paid both again."""
from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.engine_databases import build_duckdb


def spark_missing() -> str | None:
    """Why a local Spark cannot start here (no pyspark, no Java), or None."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return "pyspark is not installed (pip install 'pytest-sqleval[spark]')"
    if not (shutil.which("java") or os.environ.get("JAVA_HOME")):
        return "no Java on the PATH and no JAVA_HOME: Spark needs Java 17 or 21"
    return None


@pytest.fixture(scope="session")
def spark_source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The singer database (DuckDB) with a schema of its own (``sales.orders``, 5,000 rows)
    and a table of every type the Arrow path carries (``typed``)."""
    import duckdb
    path = build_duckdb(tmp_path_factory.mktemp("spark-src") / "singers.duckdb")
    con = duckdb.connect(str(path))
    con.execute("CREATE SCHEMA sales")
    con.execute("CREATE TABLE sales.orders AS SELECT range AS id, range % 7 AS k FROM range(5000)")
    con.execute("CREATE TABLE typed (d DECIMAL(10,2), day DATE, ts TIMESTAMP, tstz TIMESTAMPTZ, f DOUBLE, "
                "t TIME, tags VARCHAR[], s STRUCT(a INTEGER, b VARCHAR))")
    con.execute("INSERT INTO typed VALUES (1.50, '2024-02-29', '2024-01-01 10:00:00', '2024-01-01 10:00:00+00', "
                "'NaN', '10:30:00', ['x', 'y'], {'a': 1, 'b': 'z'}), (NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)")
    con.close()
    return path


@pytest.fixture(scope="session")
def spark_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The session's mirror cache: ``spark_source`` is mirrored into it once, for the local
    sandboxes and the Connect server alike."""
    return tmp_path_factory.mktemp("spark-cache")


#: the singer database's schemas -> the Connect server's databases
CONNECT_SCHEMAS = {"main": "default", "sales": "sales"}


@pytest.fixture(scope="session")
def connect_server(spark_source: Path, spark_cache: Path) -> Iterator[Any]:
    """One Spark Connect server for the session, on loopback, whose catalog already holds
    the singer database's tables (external Parquet tables over the session's mirror,
    registered after each start): what a grading run finds. Tests that restart it leave it
    serving the same catalog."""
    missing = spark_missing()
    if missing:
        pytest.skip(missing)
    from pytest_sqleval.core.engines.spark_connect import LocalConnectServer
    from pytest_sqleval.core.engines.spark_sandbox import _spark_ident, mirror, source_hash
    tables = mirror(spark_source, source_hash(spark_source, spark_cache), spark_cache)
    init = [f"CREATE DATABASE IF NOT EXISTS {_spark_ident(db)}" for db in sorted(set(CONNECT_SCHEMAS.values()))]
    init += [f"CREATE TABLE {_spark_ident(CONNECT_SCHEMAS[t.schema])}.{_spark_ident(t.table)} USING parquet "
             f"LOCATION '{t.folder}'" for t in tables]
    server = LocalConnectServer(master="local[2]", memory="1g", init_sql=tuple(init))
    server.start()
    yield server
    server.stop()
