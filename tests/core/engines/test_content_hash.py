"""The content hash: defined over a canonical rendering the project controls, so a pin
survives engine releases, and covering everything a query can see.

The DuckDB hash is computed in SQL for speed; ``canonical.render_field`` states the same
rule in Python without the engine's help. These tests hold the two to each other, value
by value, on every supported type and on generated data."""
from __future__ import annotations

import datetime as dt
import decimal
import math
from pathlib import Path

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_sqleval.core.engines.canonical import duckdb_lanes_sql, render_field, row_lanes
from pytest_sqleval.core.engines.duckdb_sandbox import DuckDBSandbox
from pytest_sqleval.core.engines.sqlite_sandbox import SQLiteSandbox
from tests.sqleval_helpers import sandbox_hash

ALL_TYPES = """
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE TABLE t (
    b BOOLEAN, i8 TINYINT, i64 BIGINT, h HUGEINT, u UBIGINT,
    d2 DECIMAL(12,2), d0 DECIMAL(18,0), d10 DECIMAL(38,10),
    f FLOAT, x DOUBLE, day DATE, ts TIMESTAMP, tz TIMESTAMPTZ, tm TIME,
    s VARCHAR, bl BLOB, id UUID, m mood,
    l INTEGER[], ls VARCHAR[], st STRUCT(a INTEGER, b VARCHAR), arr DOUBLE[2]
);
INSERT INTO t VALUES
 (true, -5, -9007199254740993, 170141183460469231731687303715884105727, 18446744073709551615,
  -393.90, 12345678901234567, -0.5000000001, 0.1, 0.1, DATE '2025-11-30', TIMESTAMP '2024-06-30 23:59:59.999999',
  TIMESTAMPTZ '2024-01-01 10:00:00+02', TIME '10:11:12.5', 'héllo|wörld', '\\xAA\\x00'::BLOB,
  '123e4567-e89b-12d3-a456-426614174000', 'happy', [1, NULL, 3], ['a', '', NULL], {'a': 1, 'b': 'x'}, [1.5, -0.0]),
 (false, 0, 0, -1, 0, -0.50, 0, 0, -0.0, -0.0, DATE '1969-12-31', TIMESTAMP '1900-01-01 00:00:00',
  TIMESTAMPTZ '1970-01-01 00:00:00+00', TIME '00:00:00', '', ''::BLOB, NULL, 'sad', [], [], {'a': NULL, 'b': NULL}, NULL),
 (NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 'nan'::DOUBLE, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
  NULL, NULL, NULL, NULL, [1e300, -1e-300]),
 (true, 1, 1, 1, 1, 0.01, 1, 1, 'inf'::FLOAT, '-inf'::DOUBLE, DATE '2000-02-29', TIMESTAMP '2000-02-29 12:00:00',
  NULL, TIME '23:59:59.999999', 'N', '\\x1F'::BLOB, NULL, 'ok', [NULL], [NULL], NULL, NULL);
"""


def sql_lanes(con: duckdb.DuckDBPyConnection, relation: str) -> tuple[int, int, int]:
    cur = con.cursor()  # DuckDB 2.0: a connection with an unfinished result takes no new query
    shape = cur.sql(f"SELECT * FROM {relation}")
    row = cur.execute(duckdb_lanes_sql(relation, list(zip(shape.columns, shape.types)))).fetchone()
    assert row is not None
    a, b, c = row
    return a, b, c


def python_lanes(con: duckdb.DuckDBPyConnection, relation: str) -> tuple[int, int, int]:
    # through Arrow: DuckDB 2.0.0 needs pytz to hand a TIMESTAMPTZ to Python directly
    table = con.cursor().sql(f"SELECT * FROM {relation}").to_arrow_table()
    rows = [tuple(r.values()) for r in table.to_pylist()]
    lanes = [row_lanes(render_field(v) for v in row) for row in rows]
    return len(rows), sum(a for a, _ in lanes), sum(b for _, b in lanes)


@pytest.fixture
def con():
    c = duckdb.connect()
    c.execute("SET TimeZone = 'America/New_York'")  # a session time zone must not change the hash
    yield c
    c.close()


def test_sql_rendering_equals_the_python_rule_on_every_type(con) -> None:
    con.cursor().execute(ALL_TYPES).fetchall()
    assert sql_lanes(con, "t") == python_lanes(con, "t")
    # value by value too, so a failure names the column
    for column in con.cursor().sql("SELECT * FROM t").columns:
        rel = f"(SELECT {column} FROM t)"
        assert sql_lanes(con, rel) == python_lanes(con, rel), column


@pytest.mark.parametrize("value, text", [
    (None, "N"), (True, "t"), (0, "0"), (-12, "-12"),
    (decimal.Decimal("-393.90"), "-393:-90"), (decimal.Decimal("-0.50"), "0:-50"), (decimal.Decimal("7.00"), "7:0"),
    (0.1, "0.10000000000000001"), (-0.0, "0"), (math.inf, "inf"), (math.nan, "nan"), (1e300, "1.0000000000000001e+300"),
    ("", "0:"), ("héllo", "6:héllo"), (b"\xaa\x00", "AA00"),
    (dt.date(1970, 1, 2), "1"), (dt.datetime(1970, 1, 1, 0, 0, 1), "1000000"),
    (dt.datetime(1970, 1, 1, 2, tzinfo=dt.timezone(dt.timedelta(hours=2))), "0"), (dt.time(0, 0, 1, 5), "1000005"),
    ([1, None], "[1\x1fN]"), ({"a": "x", "b": None}, "{1:x\x1fN}"),
])
def test_each_value_has_one_stated_text(value, text) -> None:
    assert render_field(value) == text


_decimals = st.decimals(min_value=-10**9, max_value=10**9, places=2, allow_nan=False, allow_infinity=False)
_doubles = st.floats(allow_nan=True, allow_infinity=True, width=64)
_texts = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=12)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.tuples(st.none() | _decimals, st.none() | _doubles, st.none() | _texts,
                               st.none() | st.dates(min_value=dt.date(1, 1, 1), max_value=dt.date(9999, 12, 31))),
                     max_size=25))
def test_generated_tables_hash_the_same_in_sql_and_in_python(con, rows) -> None:
    cur = con.cursor()
    cur.execute("CREATE OR REPLACE TABLE g (d DECIMAL(12,2), x DOUBLE, s VARCHAR, day DATE)").fetchall()
    if rows:
        cur.executemany("INSERT INTO g VALUES (?, ?, ?, ?)", rows).fetchall()
    assert sql_lanes(con, "g") == python_lanes(con, "g")


# -- what the hash covers ------------------------------------------------------------------
def _db(path: Path, *statements: str) -> Path:
    c = duckdb.connect(str(path))
    for stmt in ("CREATE TABLE t (k INTEGER PRIMARY KEY, amount DECIMAL(12,2), note VARCHAR)",
                 "INSERT INTO t VALUES (1, 10.50, 'a'), (2, -3.25, NULL), (3, 0.00, 'c')",
                 "CREATE VIEW v AS SELECT k, amount * 2 AS twice FROM t",
                 "CREATE MACRO plus_tax(x) AS x * 1.2", *statements):
        c.execute(stmt)
    c.close()
    return path


def _hash(path: Path) -> str:
    return sandbox_hash(DuckDBSandbox, path)


@pytest.mark.parametrize("change", [
    "CREATE OR REPLACE MACRO plus_tax(x) AS x * 1.25",                      # a persistent macro redefined
    "CREATE OR REPLACE VIEW v AS SELECT k, amount * 3 AS twice FROM t",   # a view's answer
    "COMMENT ON COLUMN t.note IS 'free text'",                            # what an analyst reads
    "COMMENT ON TABLE t IS 'orders'",
    "UPDATE t SET amount = 10.51 WHERE k = 1",                             # one cent
    "UPDATE t SET note = '' WHERE k = 2",                                  # NULL vs ''
    "CREATE SEQUENCE s START 5",
    "CREATE TYPE mood AS ENUM ('sad', 'ok')",
    "CREATE TABLE t2 (k INTEGER)",                                         # an empty table
], ids=["macro", "view", "column-comment", "table-comment", "value", "null-vs-empty", "sequence", "type", "empty-table"])
def test_everything_a_query_can_see_changes_the_hash(tmp_path: Path, change: str) -> None:
    assert _hash(_db(tmp_path / "a.duckdb")) != _hash(_db(tmp_path / "b.duckdb", change))


def test_rebuilt_reordered_content_keeps_its_hash(tmp_path: Path) -> None:
    a = _db(tmp_path / "a.duckdb")
    b = tmp_path / "b.duckdb"
    c = duckdb.connect(str(b))
    c.execute("CREATE MACRO plus_tax(x) AS x * 1.2")
    c.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, amount DECIMAL(12,2), note VARCHAR)")
    c.execute("INSERT INTO t VALUES (3, 0.00, 'c'), (2, -3.25, NULL), (1, 10.50, 'a')")
    c.execute("CREATE VIEW v AS SELECT k, amount * 2 AS twice FROM t")
    c.close()
    assert a.read_bytes() != b.read_bytes()
    assert _hash(a) == _hash(b)


def test_sqlite_keeps_storage_classes_apart(tmp_path: Path) -> None:
    import sqlite3

    def db(name: str, value: str) -> str:
        path = tmp_path / name
        c = sqlite3.connect(path)
        c.execute("CREATE TABLE t (x)")
        c.execute(f"INSERT INTO t VALUES ({value})")
        c.commit()
        c.close()
        return sandbox_hash(SQLiteSandbox, path)

    hashes = {db(f"{i}.sqlite", v) for i, v in enumerate(["1", "1.0", "'1'", "x'31'", "NULL"])}
    assert len(hashes) == 5


def test_a_sqlite_table_wider_than_a_function_call_hashes_every_column(tmp_path: Path) -> None:
    """SQLite caps a function's arguments (127): a wider table (some BIRD tables are wide)
    is hashed in parts, and a change in its last column still changes the hash."""
    import sqlite3

    def db(name: str, last: int) -> str:
        path = tmp_path / name
        c = sqlite3.connect(path)
        c.execute("CREATE TABLE wide (" + ", ".join(f"c{i} INTEGER" for i in range(300)) + ")")
        c.execute("INSERT INTO wide VALUES (" + ", ".join(["1"] * 299 + [str(last)]) + ")")
        c.commit()
        c.close()
        return sandbox_hash(SQLiteSandbox, path)

    one = db("a.sqlite", 1)
    assert db("b.sqlite", 1) == one
    assert db("c.sqlite", 2) != one
