"""Spark's errors as the runtime error taxonomy, where pyspark hands over a raw Java error.

A runtime failure inside a subquery (``SELECT (SELECT a FROM t)`` on two rows) reaches
Python as ``Py4JJavaError: ... Exception thrown in awaitResult``: no condition, no SQLSTATE,
and a message that says nothing. The condition is in the stack's "Caused by" line; the case's
failure must read as on DuckDB (the same category) with that one line, not the JVM stack.
No JVM is needed: the text is the one Spark 4.3 wrote (the stack trimmed)."""
from __future__ import annotations

import duckdb

from pytest_sqleval.core.engines.duckdb_sandbox import classify_error as duckdb_error
from pytest_sqleval.core.engines.spark_sandbox import classify_error

AWAIT_RESULT = """An error occurred while calling o2217.getResult.
: org.apache.spark.SparkException: Exception thrown in awaitResult:
\tat org.apache.spark.util.SparkThreadUtils$.awaitResult(SparkThreadUtils.scala:56)
\tat py4j.ClientServerConnection.run(ClientServerConnection.java:108)
\tat java.base/java.lang.Thread.run(Thread.java:840)
Caused by: org.apache.spark.SparkException: [SCALAR_SUBQUERY_TOO_MANY_ROWS] More than one row returned by a subquery used as an expression. SQLSTATE: 21000
== SQL (line 2, position 23) ==
SELECT * FROM (SELECT (SELECT a FROM main.t) AS x) q
                      ^^^^^^^^^^^^^^^^^^^^^^

\tat org.apache.spark.sql.errors.QueryExecutionErrors$.multipleRowScalarSubqueryError(QueryExecutionErrors.scala:2720)
"""


class Py4JJavaError(Exception):
    """What pyspark raises for a Java error it does not convert: only its text carries anything."""


def test_a_java_error_pyspark_did_not_convert_reads_as_its_cause() -> None:
    err = classify_error(Py4JJavaError(AWAIT_RESULT))
    assert err.exception == "SCALAR_SUBQUERY_TOO_MANY_ROWS"
    assert err.message.startswith("[SCALAR_SUBQUERY_TOO_MANY_ROWS] More than one row returned by a subquery")
    assert "awaitResult" not in err.message and "\tat " not in err.message
    con = duckdb.connect()
    con.execute("CREATE TABLE t(a INT); INSERT INTO t VALUES (1), (2)")
    try:
        con.execute("SELECT (SELECT a FROM t) AS x").fetchall()
    except duckdb.Error as exc:
        assert err.category == duckdb_error(exc).category  # the same failure, the same class on both engines
    else:
        raise AssertionError("DuckDB answered a scalar subquery of two rows")


def test_a_cancelled_job_stays_a_timeout_whatever_its_cause_says() -> None:
    text = ("An error occurred while calling o99.toArrow.\n: org.apache.spark.SparkException: Job 7 cancelled "
            "part of cancelled job tags sqleval-1\n\tat org.apache.spark.scheduler.DAGScheduler.x(DAGScheduler.scala:1)\n")
    assert classify_error(Py4JJavaError(text)).category == "timeout"
