"""PostgreSQL's 'infinity' and '-infinity' dates and timestamps (the open end of a type-2
dimension's ``valid_to``) load and are graded: infinity equals infinity, never a finite date,
and is stored as DuckDB stores it, so both engines give the same Arrow values."""
from __future__ import annotations

from pathlib import Path
import duckdb
import pyarrow as pa
import pytest

from pytest_sqleval.core.api import Grader
from pytest_sqleval.core.cases import Limits
from pytest_sqleval.core.engines import open_sandbox
from tests.engine_databases import PgServer
from tests.rows import table_of

ROWS = ("(1, DATE '2020-01-01', DATE '2022-06-30', TIMESTAMP '2022-06-30 10:00:00', "
        "TIMESTAMPTZ '2022-06-30 10:00:00+02'), "
        "(1, DATE '2022-07-01', 'infinity', 'infinity', 'infinity'), "
        "(2, '-infinity', 'infinity', '-infinity', '-infinity'), "
        "(3, DATE '2021-01-01', DATE '9999-12-31', TIMESTAMP '9999-12-31 00:00:00', NULL)")


@pytest.fixture(scope="module")
def scd(pg: PgServer) -> str:  # noqa: F811
    import psycopg
    pg.create_db("scd")
    with psycopg.connect(pg.url("scd")) as con:
        con.execute("CREATE TABLE dim_customer (customer_id INTEGER, valid_from DATE, valid_to DATE, "
                    "closed_at TIMESTAMP, closed_tz TIMESTAMPTZ)")
        con.execute(f"INSERT INTO dim_customer VALUES {ROWS}")
        con.execute("GRANT SELECT ON ALL TABLES IN SCHEMA public TO grader")
    return pg.url("scd", "grader")


CASES = [
    ("SELECT valid_to FROM dim_customer WHERE customer_id = 2",
     "SELECT valid_to FROM dim_customer WHERE customer_id = 2", True),
    ("SELECT customer_id FROM dim_customer WHERE valid_to = 'infinity'",
     "SELECT customer_id FROM dim_customer WHERE valid_to > DATE '9999-12-31'", True),
    ("SELECT customer_id, valid_to FROM dim_customer WHERE valid_to = 'infinity'",
     "SELECT customer_id, valid_to FROM dim_customer WHERE valid_to > CURRENT_DATE", False),  # + 9999-12-31
    ("SELECT DATE '9999-12-31' AS d", "SELECT valid_to FROM dim_customer WHERE customer_id = 2", False),
    ("SELECT valid_from FROM dim_customer WHERE customer_id = 2",
     "SELECT valid_to FROM dim_customer WHERE customer_id = 2", False),  # -infinity is not infinity
    ("SELECT closed_at, closed_tz FROM dim_customer WHERE customer_id IN (1, 2)",
     "SELECT closed_at, closed_tz FROM dim_customer WHERE customer_id < 3", True),
    ("SELECT TIMESTAMP 'infinity' AS t", "SELECT closed_at FROM dim_customer WHERE valid_to = 'infinity' "
     "AND customer_id = 1", True),
    ("SELECT TIMESTAMPTZ '-infinity' AS t", "SELECT closed_tz FROM dim_customer WHERE customer_id = 2", True),
    ("SELECT TIMESTAMP '-infinity' AS t", "SELECT closed_tz FROM dim_customer WHERE customer_id = 2", False),
    ("SELECT valid_to FROM dim_customer ORDER BY valid_to", "SELECT valid_to FROM dim_customer ORDER BY valid_to",
     True),
    ("SELECT valid_to FROM dim_customer ORDER BY valid_to DESC",
     "SELECT valid_to FROM dim_customer ORDER BY valid_to", False),
    ("SELECT array_agg(valid_to ORDER BY valid_to) FROM dim_customer",
     "SELECT array_agg(valid_to ORDER BY valid_to) FROM dim_customer", True),
    ("SELECT array_agg(valid_to ORDER BY valid_to DESC) FROM dim_customer",
     "SELECT array_agg(valid_to ORDER BY valid_to) FROM dim_customer", False),
]


@pytest.mark.parametrize("pred, gold, passes", CASES)
def test_infinite_dates_are_graded_on_postgres(scd: str, tmp_path: Path, pred: str, gold: str, passes: bool) -> None:
    with Grader(scd, dialect="postgres", cache_dir=tmp_path) as grader:
        verdict = grader.compare(pred, gold)
    assert verdict.failure_kind is None or not verdict.failure_kind.startswith(("runtime", "gold")), verdict
    assert verdict.passed is passes, verdict


def test_postgres_stores_infinity_as_duckdb_does(scd: str) -> None:
    sql = ("SELECT DATE 'infinity' AS d, DATE '-infinity' AS nd, TIMESTAMP 'infinity' AS ts, "
           "TIMESTAMP '-infinity' AS nts, TIMESTAMPTZ 'infinity' AS tz, DATE '2024-02-29' AS f")
    box = open_sandbox(scd, Limits())
    try:
        got = box.run(sql)
    finally:
        box.close()
    assert got.error is None, got.error
    relation = duckdb.sql(sql.replace("TIMESTAMPTZ 'infinity'", "'infinity'::TIMESTAMPTZ"))
    assert relation is not None
    duck = relation.to_arrow_table()

    for name in duck.column_names:
        p, d = table_of(got).column(name), duck.column(name)
        assert pa.types.is_timestamp(p.type) == pa.types.is_timestamp(d.type)
        assert bool(getattr(p.type, "tz", None)) == bool(getattr(d.type, "tz", None))
        assert storage(p) == storage(d), name


def storage(col: pa.ChunkedArray) -> list[int | None]:
    """A date or timestamp column's storage integers (infinity is beyond Python's dates)."""
    return col.combine_chunks().view(pa.int32() if pa.types.is_date32(col.type) else pa.int64()).to_pylist()
