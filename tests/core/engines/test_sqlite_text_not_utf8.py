"""SQLite text that is not valid UTF-8 (Spider and BIRD files hold some): the database opens
and hashes, and its values are compared by their bytes, never by a lossy decode that would
make two different strings equal."""
from __future__ import annotations

import sqlite3
from pathlib import Path

import pyarrow as pa
import pytest

from pytest_sqleval.core.api import Grader
from pytest_sqleval.core.engines.sqlite_sandbox import MIXED_TYPE, SQLiteSandbox
from tests.rows import table_of
from tests.sqleval_helpers import read_results, sandbox_hash

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
        table = table_of(box.run("SELECT name FROM person ORDER BY id"))
        assert table.schema.types == [pa.binary()]
        assert table.column(0).to_pylist() == [bytes.fromhex(h) for _, h in ROWS]
        assert table_of(box.run("SELECT note FROM person")).schema.types == [pa.string()]  # valid text stays text
        mixed = table_of(box.run("SELECT name FROM person UNION ALL SELECT 7"))
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


# -- database variants ----------------------------------------------------------------------------
def build_bigger(path: Path) -> Path:
    """``build``'s table with enough rows to make variants of: invalid text in ``name`` on a
    third of them, and a child table whose key points at it."""
    rows = [(i, "61FF62" if i % 3 == 0 else ("61FE62" if i % 3 == 1 else "6F6B")) for i in range(1, 61)]
    build(path, rows)
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE pet (pid INTEGER PRIMARY KEY, owner INTEGER REFERENCES person(id), kind TEXT)")
    for i in range(1, 121):
        kind = "CAST(X'64FF67' AS TEXT)" if i % 4 == 0 else f"'{('cat', 'dog', 'eel')[i % 3]}'"
        con.execute(f"INSERT INTO pet VALUES ({i}, {1 + i % 60}, {kind})")
    con.commit()
    con.close()
    return path


#: (gold, prediction, verdict with variants)
VARIANT_CASES = [
    ("SELECT count(*) FROM person WHERE id > 30", "SELECT count(id) FROM person WHERE id >= 31", "passed"),
    ("SELECT name FROM person WHERE id = 3", "SELECT name FROM person WHERE id = 6", "passed"),  # same bytes here
    ("SELECT p.kind, count(*) FROM pet p JOIN person o ON o.id = p.owner GROUP BY p.kind",
     "SELECT kind, count(*) FROM pet GROUP BY kind", "passed"),
    ("SELECT count(*) FROM pet WHERE kind = 'cat'", "SELECT count(*) FROM pet WHERE kind = 'cat' AND pid > 0", "passed"),
    ("SELECT count(*) FROM person WHERE id > 30", "SELECT 30", "failed"),  # right on the file only: a variant says so
]


def test_a_sqlite_suite_with_invalid_utf8_is_graded_with_variants(pytester: pytest.Pytester) -> None:
    """``--sqleval-variants``: the variants are built from the file (read, sampled, shuffled,
    boundary values written) whatever its text holds; every case was an error, 'cannot build
    the variants ...: Could not decode to UTF-8 column'."""
    import json
    root = pytester.path / "suite"
    root.mkdir()
    db = build_bigger(root / "pets.sqlite")
    (root / "questions.jsonl").write_text("".join(
        json.dumps({"id": f"q{i}", "question": f"question {i}", "gold_sql": gold}) + "\n"
        for i, (gold, _, _) in enumerate(VARIANT_CASES)))
    (root / "sqleval.toml").write_text(f'[suite]\nname = "pets"\nquestions = "questions.jsonl"\n'
                                       f'database = "{db}"\ndialect = "sqlite"\n')
    (pytester.path / "pred.jsonl").write_text("".join(
        json.dumps({"id": f"q{i}", "sql": pred}) + "\n" for i, (_, pred, _) in enumerate(VARIANT_CASES)))
    result = pytester.runpytest("suite", "--sqleval-backend=predictions:pred.jsonl", "--sqleval-variants=3",
                                "-p", "no:cacheprovider")
    assert "cannot build the variants" not in result.stdout.str()
    assert "decode" not in result.stdout.str()
    records = {r["case_id"]: r for r in read_results(pytester.path)}
    assert [records[f"q{i}"]["status"] for i in range(len(VARIANT_CASES))] == [v for _, _, v in VARIANT_CASES], records
    assert records[f"q{len(VARIANT_CASES) - 1}"]["failure_kind"] == "coincidental_pass"


def build_valid(path: Path) -> Path:
    """A Spider-sized database of valid text (non-ASCII too), with keys, a foreign key,
    free columns to shuffle and a table without a key (duplicated in some variants)."""
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE city (cid INTEGER PRIMARY KEY, name TEXT NOT NULL, country TEXT)")
    con.execute("CREATE TABLE visit (vid INTEGER PRIMARY KEY, cid INTEGER REFERENCES city(cid), guest TEXT, "
                "spent REAL, note BLOB)")
    con.execute("CREATE TABLE tag (label TEXT, weight INTEGER)")
    names = ["Zürich", "Kraków", "São Paulo", "Reykjavík", "Ōsaka", "Dublin", "Lyon", "Köln"]
    con.executemany("INSERT INTO city VALUES (?, ?, ?)",
                    [(i, f"{names[i % 8]} {i}", ("CH", "PL", None, "JP")[i % 4]) for i in range(1, 41)])
    con.executemany("INSERT INTO visit VALUES (?, ?, ?, ?, ?)",
                    [(i, 1 + i * 7 % 40, f"guest ✓{i % 13}", i * 1.25 if i % 5 else None, bytes([i % 256, 255]))
                     for i in range(1, 151)])
    con.executemany("INSERT INTO tag VALUES (?, ?)", [(f"étiquette {i % 9}", i % 4) for i in range(30)])
    con.commit()
    con.close()
    return path


#: the variants of ``build_valid``'s database (count 6, seed 11) as built before invalid text
#: was read: making the builder read it must not change a variant of a valid database.
VALID_VARIANT_HASHES = [('subset', 'a8d5dca040e8ace8972cf8d9dff32adfd5fcb60a1c7ed8743f7e6062a94a2025'),
    ('subset+duplicates', '5f08b2606b8a55044209312710d15eef698a1a156e4705ed469bfaa8936bfc35'),
    ('subset+shuffle', 'e94a958b1e008189208dfb37f366d9bc17a54d7a5de7d135a56b19590de37b76'),
    ('subset', '5999368ca7e40f42023259efda94aa4e32a137709272c2ca3820034e9f3af4f6'),
    ('subset+duplicates', 'be9169b61e0011924187b31d607502486eb01f32bd8052102b6a99bf9cda1e5e'),
    ('subset+shuffle', '7dfc7248574553c23becb66c8d1686910eb3abb5bc89cb050ef3de2b14f1dfbc')]


def test_the_variants_of_a_valid_database_are_unchanged(tmp_path: Path) -> None:
    from pytest_sqleval.core.variants.build import build_variants
    variants = build_variants(build_valid(tmp_path / "valid.sqlite"), tmp_path / "out", count=6, seed=11)
    assert [(v.kind, v.content_hash) for v in variants] == VALID_VARIANT_HASHES


def test_variants_keep_invalid_text_as_text_of_the_same_bytes(tmp_path: Path) -> None:
    """Sampled, duplicated and shuffled, a value stays what it was: TEXT of its bytes (not a
    blob, not a replacement decode)."""
    from pytest_sqleval.core.variants.build import build_variants
    db = build_bigger(tmp_path / "pets.sqlite")
    variants = build_variants(db, tmp_path / "out", count=3, seed=5)
    assert [v.kind for v in variants] == ["subset", "subset+duplicates", "subset+shuffle"]
    names: set[tuple[str, str]] = set()
    kinds: set[tuple[str, str]] = set()
    for v in variants:
        con = sqlite3.connect(v.path)
        try:
            names |= set(con.execute("SELECT DISTINCT typeof(name), hex(name) FROM person").fetchall())
            kinds |= set(con.execute("SELECT DISTINCT typeof(kind), hex(kind) FROM pet").fetchall())
        finally:
            con.close()
    assert names <= {("text", "61FF62"), ("text", "61FE62"), ("text", "6F6B")} and ("text", "61FF62") in names, names
    assert kinds <= {("text", x.encode().hex().upper()) for x in ("cat", "dog", "eel")} | {("text", "64FF67")}
    assert ("text", "64FF67") in kinds
