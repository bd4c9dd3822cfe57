"""SQLite text that is not valid UTF-8 (Spider and BIRD files hold some): the database opens
and hashes, and its values are compared by their bytes, never by a lossy decode that would
make two different strings equal."""
from __future__ import annotations

import sqlite3
from pathlib import Path

import pyarrow as pa
import pytest

from pytest_sqleval.api import Grader
from pytest_sqleval.engines.sqlite_sandbox import MIXED_TYPE, SQLiteSandbox
from tests.sqleval_helpers import sandbox_hash

#: (id, name as hex bytes): 1 and 2 differ in one invalid byte, 3 is the same bytes as 1
ROWS = [(1, "61FF62"), (2, "61FE62"), (3, "61FF62"), (4, "6F6B")]


def build(path: Path, rows: list[tuple[int, str]] = ROWS) -> Path:
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE person (id INTEGER PRIMARY KEY, name TEXT, note)")
    for pid, hexname in rows:
        con.execute(f"INSERT INTO person VALUES ({pid}, CAST(X'{hexname}' AS TEXT), 'n{pid}')")
    con.commit()
    con.close()
    return path


def content_hash(path: Path) -> str:
    return sandbox_hash(SQLiteSandbox, path)


def test_a_database_with_invalid_utf8_opens_and_hashes_by_its_bytes(tmp_path: Path) -> None:
    a = content_hash(build(tmp_path / "a.sqlite"))
    assert a == content_hash(build(tmp_path / "again.sqlite", list(reversed(ROWS))))  # order-independent
    # one invalid byte changed: a lossy decode would render both as 'a\ufffdb'
    changed = [(1, "61FD62"), *ROWS[1:]]
    assert content_hash(build(tmp_path / "b.sqlite", changed)) != a
    # the invalid text is not the valid text a replacement decode would give, nor the blob of its bytes
    con = sqlite3.connect(tmp_path / "c.sqlite")
    con.execute("CREATE TABLE person (id INTEGER PRIMARY KEY, name TEXT, note)")
    con.executemany("INSERT INTO person VALUES (?, ?, ?)",
                    [(i, bytes.fromhex(h).decode("utf-8", "replace"), f"n{i}") for i, h in ROWS])
    con.commit()
    con.close()
    assert content_hash(tmp_path / "c.sqlite") != a


def test_invalid_text_comes_back_as_its_bytes(tmp_path: Path) -> None:
    box = SQLiteSandbox(build(tmp_path / "p.sqlite"))
    try:
        table = box.run("SELECT name FROM person ORDER BY id").table
        assert table.schema.types == [pa.binary()]
        assert table.column(0).to_pylist() == [bytes.fromhex(h) for _, h in ROWS]
        assert box.run("SELECT note FROM person").table.schema.types == [pa.string()]  # valid text stays text
        mixed = box.run("SELECT name FROM person UNION ALL SELECT 7").table
        assert mixed.schema.types == [MIXED_TYPE]
    finally:
        box.close()


@pytest.mark.parametrize("pred, gold, passes", [
    ("SELECT name FROM person WHERE id = 1", "SELECT name FROM person WHERE id = 1", True),
    ("SELECT name FROM person WHERE id = 3", "SELECT name FROM person WHERE id = 1", True),  # same bytes
    ("SELECT name FROM person WHERE id = 2", "SELECT name FROM person WHERE id = 1", False),  # one byte apart
    ("SELECT name FROM person WHERE id IN (2, 3)", "SELECT name FROM person WHERE id IN (1, 2)", True),
    ("SELECT name FROM person WHERE id IN (1, 3)", "SELECT name FROM person WHERE id IN (1, 2)", False),
    ("SELECT name FROM person", "SELECT name FROM person ORDER BY id", True),
    ("SELECT count(DISTINCT name) FROM person", "SELECT 3", True),  # SQLite itself tells them apart
])
def test_invalid_text_is_graded_by_its_bytes(tmp_path: Path, pred: str, gold: str, passes: bool) -> None:
    with Grader(build(tmp_path / "g.sqlite"), dialect="sqlite", cache_dir=tmp_path / "cache") as grader:
        verdict = grader.compare(pred, gold)
    assert verdict.passed is passes, verdict
