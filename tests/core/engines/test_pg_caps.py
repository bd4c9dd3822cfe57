"""PostgreSQL result caps: like DuckDB and SQLite, a fetched result may hold at most
``result_byte_cap(limits)`` bytes (``max_bytes``, and at most ``memory_limit / 8``); a
result over it is refused as ``resource_exceeded`` naming the cap."""
from __future__ import annotations

import pytest

from pytest_sqleval.core.cases import Limits
from pytest_sqleval.core.engines import open_sandbox
from pytest_sqleval.core.engines.duckdb_sandbox import result_byte_cap
from tests.engine_databases import PgServer
from tests.rows import error_of, table_of


@pytest.fixture(scope="module")
def pg_caps(pg: PgServer) -> str:
    return pg.create_db("caps")


def test_postgres_caps_a_result_at_an_eighth_of_memory_limit(pg_caps: str) -> None:
    limits = Limits(memory_limit="1MB")  # max_bytes stays 2 GiB: the memory limit is the cap
    cap = result_byte_cap(limits)
    assert cap == 125_000
    width = 1000  # one text column of `width` characters per row (counted as its length)
    box = open_sandbox(pg_caps, limits)
    try:
        at_cap = box.run(f"SELECT repeat('x', {width}) AS s FROM generate_series(1, {cap // width})")
        over = box.run(f"SELECT repeat('x', {width}) AS s FROM generate_series(1, {cap // width + 1})")
        after = box.run("SELECT 1 AS one")
    finally:
        box.close()
    assert at_cap.error is None and table_of(at_cap).num_rows == cap // width
    assert over.table is None and over.truncated
    assert error_of(over).category == "resource_exceeded" and error_of(over).exception == "ResultTooLarge"
    assert f"{cap} bytes" in error_of(over).message and "memory_limit 1MB / 8" in error_of(over).message
    assert table_of(after).column(0).to_pylist() == [1]  # the session is still usable


def test_postgres_max_bytes_still_caps_below_the_memory_share(pg_caps: str) -> None:
    limits = Limits(memory_limit="1GB", max_bytes=5_000)
    box = open_sandbox(pg_caps, limits)
    try:
        over = box.run("SELECT repeat('x', 1000) AS s FROM generate_series(1, 6)")
    finally:
        box.close()
    assert error_of(over).category == "resource_exceeded"
    assert "5000 bytes (max_bytes)" in error_of(over).message
