"""Hostile statements: refused with a clear class, never passed, and the database unchanged.

All statements go through one Grader; after each, a normal query still passes on it. The
database content hash is checked on that Grader and, at the end, on a fresh Grader (the
hash a Grader reports is computed when it opens the database). The sandbox underneath is
also checked on its own, as a second wall behind the safety layer."""
from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from grader_tests.helpers import describe
from pytest_sqleval.core.api import Grader, Verdict
from pytest_sqleval.core.engines.duckdb_sandbox import DuckDBSandbox

GOLD = "SELECT status, count(*) FROM orders GROUP BY status"
NORMAL = "SELECT o.status AS s, count(o.id) AS n FROM orders o GROUP BY 1"

HOSTILE = [
    pytest.param("COPY orders TO '/tmp/sqleval_hostile_copy.csv'", id="copy_table_to_file"),
    pytest.param("COPY (SELECT * FROM customers) TO '/tmp/sqleval_hostile_copy.parquet' (FORMAT parquet)",
                 id="copy_query_to_file"),
    pytest.param("SELECT * FROM read_csv('/etc/passwd')", id="read_csv_etc_passwd"),
    pytest.param("SELECT * FROM READ_CSV_AUTO('/etc/passwd')", id="read_csv_auto_upper"),
    pytest.param("SELECT * FROM '/etc/passwd'", id="from_path_string"),
    pytest.param("FROM '/etc/passwd'", id="from_first_path"),
    pytest.param('SELECT * FROM "/etc/passwd"', id="from_quoted_identifier_path"),
    pytest.param("SELECT * FROM glob('/*')", id="glob_root"),
    pytest.param("SELECT * FROM read_text('/etc/hostname')", id="read_text"),
    pytest.param("SELECT content FROM read_blob('/etc/hostname')", id="read_blob"),
    pytest.param("SELECT status, count(*) FROM orders GROUP BY status UNION ALL "
                 "SELECT content, 1 FROM read_text('/etc/hostname')", id="read_text_inside_union"),
    pytest.param("WITH f AS (SELECT * FROM read_csv('/etc/passwd')) SELECT count(*) FROM f", id="read_csv_inside_cte"),
    pytest.param("SELECT * FROM read_parquet('https://example.com/x.parquet')", id="read_parquet_url"),
    pytest.param("ATTACH '/tmp/sqleval_hostile.duckdb' AS other", id="attach"),
    pytest.param("DETACH shop", id="detach"),
    pytest.param("INSTALL httpfs", id="install"),
    pytest.param("LOAD httpfs", id="load"),
    pytest.param("SET threads = 64", id="set"),
    pytest.param("SET lock_configuration = false", id="set_unlock"),
    pytest.param("RESET memory_limit", id="reset"),
    pytest.param("PRAGMA database_list", id="pragma"),
    pytest.param("SELECT getenv('HOME')", id="getenv"),
    pytest.param("SELECT 1; SELECT 2", id="two_selects"),
    pytest.param("SELECT status, count(*) FROM orders GROUP BY status; DROP TABLE orders", id="select_then_drop"),
    pytest.param("CREATE TEMP VIEW orders AS SELECT 1 AS id", id="temp_view_shadowing_orders"),
    pytest.param("INSERT INTO orders VALUES (999, 1, now(), 'complete', NULL)", id="insert"),
    pytest.param("UPDATE orders SET status = 'complete'", id="update"),
    pytest.param("DELETE FROM orders", id="delete"),
    pytest.param("DROP TABLE orders", id="drop"),
    pytest.param("CREATE TABLE stolen AS SELECT * FROM customers", id="create_table"),
    pytest.param("CREATE MACRO m() AS 1", id="create_macro"),
    pytest.param("SELECT * INTO stolen FROM orders", id="select_into"),
    pytest.param("SELECT * FROM query('select 1')", id="query_table_function"),
    pytest.param("SELECT * FROM query_table('orders')", id="query_table"),
    pytest.param("CHECKPOINT", id="checkpoint"),
    pytest.param("CALL pragma_version()", id="call"),
    pytest.param("SELECT * FROM read_csv('/proc/self/environ')", id="proc_self_environ"),
    pytest.param("SELECT * FROM read_csv('pipe:cat /etc/passwd')", id="pipe_reader"),
    pytest.param("SELECT * FROM 'pipe:ls'", id="pipe_path_string"),
    pytest.param("SELECT * FROM read_json('s3://bucket/key.json')", id="read_json_s3"),
    pytest.param("SELECT * FROM sniff_csv('/etc/passwd')", id="sniff_csv"),
    pytest.param("SELECT * FROM parquet_metadata('/tmp/x.parquet')", id="parquet_metadata"),
    pytest.param("EXPORT DATABASE '/tmp/sqleval_hostile_export'", id="export_database"),
    pytest.param("USE memory", id="use_other_catalog"),
    pytest.param("SELECT 1 /* harmless */; /* then */ DROP TABLE orders -- done", id="comment_hidden_second_statement"),
    pytest.param("SELECT 1;\u037e DROP TABLE orders", id="unicode_greek_question_mark"),
    pytest.param("ＳＥＬＥＣＴ * FROM read_csv('/etc/passwd')", id="fullwidth_keyword"),
    pytest.param("SELECT * FROM read_csv/**/('/etc/passwd')", id="comment_inside_call"),
    pytest.param("BEGIN TRANSACTION", id="begin_transaction"),
    pytest.param("SELECT * FROM duckdb_secrets()", id="secrets"),
    pytest.param("CREATE OR REPLACE TEMP TABLE customers AS SELECT 1 AS id", id="temp_table_shadowing"),
]

# Resource bombs: not refused up front (they are valid SELECTs) but bounded by the engine's
# time, memory, temp-space and result caps, or by the parser's depth.
BOMBS = [
    pytest.param("SELECT count(*) FROM range(100000) a, range(100000) b, range(1000) c", id="cross_join"),
    pytest.param("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT max(n) FROM r",
                 id="infinite_recursive_cte"),
    pytest.param("SELECT md5(repeat('ab', 400000000))", id="huge_uninterruptible_string"),
    pytest.param("SELECT * FROM range(100000000) ORDER BY random()", id="sort_spilling_to_temp"),
    pytest.param("SELECT " + "(" * 3000 + "1" + ")" * 3000, id="deep_nesting"),
    pytest.param("SELECT * FROM range(50000000) t(i)", id="result_over_row_cap"),
]


def refused(v: Verdict) -> bool:
    """Refused by the safety layer, by the engine with a permission error, or never run
    because it does not parse (EXPORT DATABASE, look-alike unicode keywords)."""
    err = (v.layers.get("execution") or {}).get("error") or {}
    return v.failure_kind in ("unsafe_statement", "parse_error") or err.get("category") == "permission_error"


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def hostile_grader(shop_db: Path) -> Iterator[Grader]:
    with Grader(shop_db) as grader:
        yield grader


@pytest.fixture(scope="module")
def baseline(shop_db: Path, hostile_grader: Grader) -> dict[str, str]:
    return {"content_hash": hostile_grader.content_hash, "file": file_digest(shop_db)}


@pytest.mark.parametrize("sql", HOSTILE)
def test_hostile_statement_is_refused(sql: str, hostile_grader: Grader, baseline: dict[str, str]) -> None:
    v = hostile_grader.compare(sql, GOLD)
    assert not v.passed, describe(v)
    assert refused(v), describe(v)
    assert v.error_class == "other"
    assert v.explanation.startswith(("refused", "does not parse"))
    # the same Grader still grades a normal prediction, on unchanged data
    after = hostile_grader.compare(NORMAL, GOLD)
    assert after.passed, describe(after)
    assert hostile_grader.content_hash == baseline["content_hash"]


def test_shadowing_temp_view_does_not_leak_into_the_next_query(hostile_grader: Grader) -> None:
    assert refused(hostile_grader.compare("CREATE TEMP VIEW orders AS SELECT 1 AS id", GOLD))
    v = hostile_grader.compare("SELECT count(*) FROM orders", "SELECT count(*) FROM orders WHERE id BETWEEN 1 AND 200")
    assert v.passed, describe(v)
    assert v.layers["execution"]["rows"] == 1


def test_all_hostile_in_a_row_leave_the_database_unchanged(shop_db: Path, hostile_grader: Grader,
                                                           baseline: dict[str, str]) -> None:
    """Self-contained (xdist may spread the parametrized cases over workers): every
    statement in sequence on one Grader, then a fresh Grader must see the same content."""
    for param in HOSTILE:
        sql = param.values[0]
        assert refused(hostile_grader.compare(sql, GOLD)), sql
    assert hostile_grader.compare(NORMAL, GOLD).passed
    with Grader(shop_db) as fresh:
        assert fresh.content_hash == baseline["content_hash"]
        assert fresh.compare(NORMAL, GOLD).passed
    assert file_digest(shop_db) == baseline["file"]
    assert not Path("/tmp/sqleval_hostile_copy.csv").exists()
    assert not Path("/tmp/sqleval_hostile.duckdb").exists()


# -- the sandbox alone, without the safety layer in front of it ------------------------------
SANDBOX_ONLY = [
    "COPY orders TO '/tmp/sqleval_hostile_copy.csv'",
    "SELECT * FROM read_csv('/etc/passwd')",
    "SELECT * FROM glob('/*')",
    "SELECT * FROM read_text('/etc/hostname')",
    "ATTACH '/tmp/sqleval_hostile.duckdb' AS other",
    "INSTALL httpfs",
    "LOAD httpfs",
    "SET threads = 64",
    "RESET memory_limit",
    "PRAGMA database_list",
    "SELECT 1; SELECT 2",
    "CREATE TEMP VIEW orders AS SELECT 1 AS id",
    "INSERT INTO orders VALUES (999, 1, now(), 'complete', NULL)",
    "DROP TABLE orders",
    "CREATE TABLE stolen AS SELECT 1",
]


def test_sandbox_refuses_on_its_own(shop_db: Path) -> None:
    sandbox = DuckDBSandbox(shop_db)
    try:
        before = sandbox.content_hash()
        for sql in SANDBOX_ONLY:
            outcome = sandbox.run(sql)
            assert outcome.table is None and outcome.error is not None, sql
            assert outcome.error.category == "permission_error", (sql, outcome.error)
        # the path-as-table form reaches no file: the filesystem is off, so it is just a missing table
        outcome = sandbox.run("SELECT * FROM '/etc/passwd'")
        assert outcome.table is None and outcome.error.category in ("permission_error", "missing_table")
        assert sandbox.run("SELECT count(*) FROM orders").table.to_pylist() == [{"count_star()": 200}]
        assert sandbox.content_hash() == before
    finally:
        sandbox.close()


@pytest.fixture(scope="module")
def bomb_grader(shop_db: Path) -> Iterator[Grader]:
    from pytest_sqleval.core.cases import Limits
    with Grader(shop_db, limits=Limits(timeout_s=1, max_rows=1_000_000, memory_limit="1GB")) as grader:
        yield grader


@pytest.mark.parametrize("sql", BOMBS)
def test_resource_bomb_is_bounded_and_the_grader_survives(sql: str, bomb_grader: Grader, baseline: dict[str, str]) -> None:
    v = bomb_grader.compare(sql, GOLD)
    assert not v.passed, describe(v)
    err = (v.layers.get("execution") or {}).get("error") or {}
    assert v.failure_kind in ("timeout", "parse_error") or err.get("category") in (
        "timeout", "resource_exceeded"), describe(v)
    assert bomb_grader.compare(NORMAL, GOLD).passed
    assert bomb_grader.content_hash == baseline["content_hash"]


def test_the_corpus_has_at_least_fifty_statements() -> None:
    assert len(HOSTILE) + len(BOMBS) >= 50
