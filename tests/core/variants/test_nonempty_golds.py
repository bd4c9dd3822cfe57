"""A gold that answers nothing (or NULLs only) on a Spider-shaped SQLite database is graded
on a variant that holds a tuple built from its AST (``core/variants/nonempty.py``): a wrong
prediction that is empty there too fails as a coincidence, the gold's equivalent rewrites
pass, every constraint of the database still holds in every variant, and a gold that no
variant keeping those constraints can answer stays a gold error.

On main these golds were ungraded with variants: ``'Korea'`` is no country of the pinned
data and 2020 lies outside its years (a calendar domain), so no boundary row wrote either."""
from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from pytest_sqleval.core.api import Grader
from pytest_sqleval.core.errors import GoldError

SCHEMA = "\n".join(
    ["CREATE TABLE singer (singer_id INTEGER PRIMARY KEY, name TEXT NOT NULL, country TEXT NOT NULL, age INTEGER);",
     "CREATE TABLE concert (concert_id INTEGER PRIMARY KEY, concert_name TEXT NOT NULL, year INTEGER NOT NULL);",
     "CREATE TABLE singer_in_concert (concert_id INTEGER NOT NULL REFERENCES concert (concert_id), "
     "singer_id INTEGER NOT NULL REFERENCES singer (singer_id), PRIMARY KEY (concert_id, singer_id));"]
    + [f"INSERT INTO singer VALUES ({i}, 'n{i}', '{('France', 'US', 'UK')[i % 3]}', {20 + i % 30});"
       for i in range(1, 41)]
    + [f"INSERT INTO concert VALUES ({i}, 'c{i}', {2010 + i % 5});" for i in range(1, 11)]
    # singers 36-40 sang in no concert, the others in one or two
    + [f"INSERT INTO singer_in_concert VALUES ({1 + i % 10}, {1 + (i * 3) % 35});" for i in range(60)])

# Spider writes strings in double quotes; SQLite reads a name that is no column as a string
GOLD = ('SELECT T1.name FROM singer AS T1 JOIN singer_in_concert AS T2 ON T1.singer_id = T2.singer_id '
        'JOIN concert AS T3 ON T2.concert_id = T3.concert_id WHERE T3.year = 2020 AND T1.country = "Korea"')
WRONG = GOLD.replace('"Korea"', '"Japan"')  # empty on the pinned data too
REWRITE = ("SELECT s.name FROM concert c, singer_in_concert x, singer s WHERE 'Korea' = s.country "
           "AND x.singer_id = s.singer_id AND c.concert_id = x.concert_id AND c.year = 2020")
NULLS = ("SELECT sum(T1.age) FROM singer T1 JOIN singer_in_concert T2 ON T1.singer_id = T2.singer_id "
         "WHERE T1.country = 'Korea'")  # one row of NULL on the pinned data
NULLS_WRONG = NULLS.replace("'Korea'", "'Japan'")
NULLS_REWRITE = ("SELECT sum(age) FROM singer WHERE country = 'Korea' AND singer_id IN "
                 "(SELECT singer_id FROM singer_in_concert)")  # one row per singer: equal while singers are unique
IMPOSSIBLE = "SELECT name FROM singer WHERE singer_id IS NULL"  # a primary key is never NULL, on any variant


@pytest.fixture(scope="module")
def concert(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("nonempty") / "concert_singer.sqlite"
    con = sqlite3.connect(path)
    con.executescript(SCHEMA)
    con.close()
    return path


def test_an_empty_gold_is_graded_on_a_variant_holding_its_tuple(concert: Path, tmp_path: Path) -> None:
    with Grader(concert, dialect="sqlite", cache_dir=tmp_path / "c") as plain:
        with pytest.raises(GoldError):  # empty on the pinned database: ungraded without variants
            plain.compare(WRONG, GOLD)
    with Grader(concert, dialect="sqlite", cache_dir=tmp_path / "v", variants=4,
                variant_golds=[GOLD, NULLS, IMPOSSIBLE]) as grader:
        verdict = grader.compare(WRONG, GOLD)
        assert (verdict.passed, verdict.failure_kind) == (False, "coincidental_pass"), verdict.explanation
        assert "new rows in" in verdict.explanation, verdict.explanation  # the witness that caught it
        for sql in (GOLD, REWRITE):
            assert grader.compare(sql, GOLD).passed, sql
        wrong_nulls = grader.compare(NULLS_WRONG, NULLS)
        assert (wrong_nulls.passed, wrong_nulls.failure_kind) == (False, "coincidental_pass"), wrong_nulls.explanation
        for sql in (NULLS, NULLS_REWRITE):
            assert grader.compare(sql, NULLS).passed, sql
        with pytest.raises(GoldError) as caught:  # no tuple keeps the primary key: still a gold error
            grader.compare("SELECT name FROM singer WHERE 1 = 0", IMPOSSIBLE)
        assert "nor on any of its" in str(caught.value)


def test_the_tuples_keep_every_key_reference_and_not_null_and_are_deterministic(concert: Path, tmp_path: Path) -> None:
    from pytest_sqleval.core.variants.boundaries import BoundaryRows
    from pytest_sqleval.core.variants.build import build_variants

    def build(where: Path) -> list[str]:
        rows = BoundaryRows(concert, [GOLD, NULLS], "sqlite", 0)
        try:
            variants = build_variants(concert, where, count=4, rows=rows)
        finally:
            rows.close()
        holding = 0
        for v in variants:
            con = sqlite3.connect(v.path)
            try:
                assert con.execute("PRAGMA foreign_key_check").fetchall() == [], v.kind
                for table, key in (("singer", "singer_id"), ("concert", "concert_id"),
                                   ("singer_in_concert", "concert_id, singer_id")):
                    assert con.execute(f"SELECT {key} FROM {table} GROUP BY {key} HAVING count(*) > 1").fetchall() == []
                nulls = con.execute("SELECT count(*) FROM singer WHERE name IS NULL OR country IS NULL").fetchone()
                assert nulls == (0,)
                holding += bool(con.execute(GOLD).fetchall())
            finally:
                con.close()
        assert holding >= 1  # some variant answers the gold
        return [v.content_hash for v in variants]

    assert build(tmp_path / "a") == build(tmp_path / "b")
