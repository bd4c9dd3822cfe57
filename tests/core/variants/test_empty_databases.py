"""Variants on Spider-shaped SQLite databases with no row at all (Spider train's geo, imdb,
scholar, ... hold none), and with foreign keys SQLite stores but could never enforce.

- A declared foreign key naming a column its parent lacks (imdb: ``tags.kid`` references
  ``keyword("kid")``, keyword has ``id``; restaurants: ``RESTAURANT("RESTAURANT_ID")``)
  constrains nothing: on main it became a dependency and the variant build failed for every
  case of the database (``no such column: x.kid``).
- A gold on an empty database answers nothing there, and copies of rows cannot help: the
  rows its join path needs are made from scratch (``nonempty.py``), with fresh keys, its
  literals, every reference satisfied and no NULL (every column of an empty table is
  observed NOT NULL). On main every such gold stayed ungraded."""
from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from pytest_sqleval.core.api import Grader
from pytest_sqleval.core.errors import GoldError

IMDB = """
CREATE TABLE "movie" ("mid" int, "title" text, "release_year" int, "budget" text, primary key("mid"));
CREATE TABLE "director" ("did" int, "gender" text, "name" text, "nationality" text, "birth_year" int,
                         primary key("did"));
CREATE TABLE "directed_by" ("id" int, "msid" int, "did" int, primary key("id"),
                            foreign key("msid") references "movie"("mid"),
                            foreign key("did") references "director"("did"));
CREATE TABLE "keyword" ("id" int, "keyword" text, primary key("id"));
CREATE TABLE "tags" ("id" int, "msid" int, "kid" int, primary key("id"),
                     foreign key("msid") references "movie"("mid"),
                     foreign key("kid") references `keyword`("kid"));
CREATE TABLE "state" ("state_name" text, "population" int, "capital" text, primary key("state_name"));
"""

# Spider's golds write strings in double quotes
GOLD = ('SELECT t2.name FROM director AS t2 JOIN directed_by AS t1 ON t2.did = t1.did '
        'JOIN movie AS t3 ON t3.mid = t1.msid WHERE t3.title = "James Bond"')
WRONG = GOLD.replace('"James Bond"', '"Skyfall"')  # empty on the pinned database too
REWRITE = ("SELECT d.name FROM movie m, directed_by b, director d "
           "WHERE b.msid = m.mid AND d.did = b.did AND m.title = 'James Bond'")
STATE = 'SELECT population FROM state WHERE state_name = "texas"'
STATE_WRONG = 'SELECT population FROM state WHERE state_name = "ohio"'
TAGGED = ('SELECT t3.title FROM tags AS t2 JOIN movie AS t3 ON t2.msid = t3.mid '
          'JOIN keyword AS t1 ON t2.kid = t1.id WHERE t1.keyword = "nuclear weapons"')
TAGGED_WRONG = TAGGED.replace('"nuclear weapons"', '"spy"')


@pytest.fixture(scope="module")
def imdb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("empty") / "imdb.sqlite"
    con = sqlite3.connect(path)
    con.executescript(IMDB)
    con.close()
    return path


def test_a_foreign_key_naming_no_column_of_its_parent_is_no_dependency(tmp_path: Path) -> None:
    from pytest_sqleval.core.variants.constraints import observe_constraints
    path = tmp_path / "restaurants.sqlite"
    con = sqlite3.connect(path)
    con.executescript("""
        CREATE TABLE "GEOGRAPHIC" ("CITY_NAME" text, "REGION" text, primary key("CITY_NAME"));
        CREATE TABLE "RESTAURANT" ("ID" int, "NAME" text, "CITY_NAME" text, primary key("ID"),
                                   foreign key ("city_name") references `GEOGRAPHIC`("city_name"));
        CREATE TABLE "LOCATION" ("RESTAURANT_ID" int, "CITY_NAME" text, primary key("RESTAURANT_ID"),
                                 foreign key ("RESTAURANT_ID") references `RESTAURANT`("RESTAURANT_ID"));
        INSERT INTO GEOGRAPHIC VALUES ('alameda', 'bay area'), ('san jose', 'bay area');
        INSERT INTO RESTAURANT VALUES (1, 'jamerican cuisine', 'alameda'), (2, 'la taqueria', 'san jose');
        INSERT INTO LOCATION VALUES (1, 'alameda'), (2, 'san jose');""")
    con.close()
    declared = [(d.child, d.child_columns, d.parent, d.parent_columns)
                for d in observe_constraints(path).dependencies if d.origin == "declared"]
    # the column names as the tables spell them; LOCATION's reference names no RESTAURANT column
    assert declared == [("RESTAURANT", ("CITY_NAME",), "GEOGRAPHIC", ("CITY_NAME",))]
    gold = ('SELECT t1.NAME FROM RESTAURANT AS t1 JOIN LOCATION AS t2 ON t1.ID = t2.RESTAURANT_ID '
            'WHERE t2.CITY_NAME = "alameda"')
    with Grader(path, dialect="sqlite", cache_dir=tmp_path / "v", variants=4, variant_golds=[gold]) as grader:
        assert grader.compare(gold, gold).passed  # main: "cannot build the variants ...: no such column: x.RESTAURANT_ID"


def test_a_gold_on_a_database_with_no_rows_is_graded_on_rows_made_from_scratch(imdb: Path, tmp_path: Path) -> None:
    golds = [GOLD, STATE, TAGGED]
    with Grader(imdb, dialect="sqlite", cache_dir=tmp_path / "plain") as plain:
        with pytest.raises(GoldError):  # nothing to answer on the pinned database
            plain.compare(WRONG, GOLD)
    with Grader(imdb, dialect="sqlite", cache_dir=tmp_path / "v", variants=4, variant_golds=golds) as grader:
        for wrong, gold in ((WRONG, GOLD), (STATE_WRONG, STATE), (TAGGED_WRONG, TAGGED)):
            verdict = grader.compare(wrong, gold)
            assert (verdict.passed, verdict.failure_kind) == (False, "coincidental_pass"), verdict.explanation
        for sql in (GOLD, REWRITE):
            assert grader.compare(sql, GOLD).passed, sql
        for gold in golds:
            assert grader.compare(gold, gold).passed, gold


def test_rows_made_from_scratch_keep_keys_references_and_not_null(imdb: Path, tmp_path: Path) -> None:
    from pytest_sqleval.core.variants.boundaries import BoundaryRows
    from pytest_sqleval.core.variants.build import build_variants

    def build(where: Path) -> list[str]:
        rows = BoundaryRows(imdb, [GOLD, STATE, TAGGED], "sqlite", 0)
        try:
            variants = build_variants(imdb, where, count=4, rows=rows)
        finally:
            rows.close()
        answered = set()
        for v in variants:
            con = sqlite3.connect(v.path)
            try:
                # every declared reference but tags.kid -> keyword(kid), which names no column of keyword
                for child, col, parent, key in (("directed_by", "msid", "movie", "mid"),
                                                ("directed_by", "did", "director", "did"),
                                                ("tags", "msid", "movie", "mid")):
                    assert con.execute(f"SELECT count(*) FROM {child} WHERE {col} NOT IN "
                                       f"(SELECT {key} FROM {parent})").fetchone() == (0,), (v.kind, child, col)
                tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
                for table in tables:
                    cols = [r[1] for r in con.execute(f"PRAGMA table_info({table})")]
                    key = cols[0]  # each table's primary key
                    assert con.execute(f"SELECT {key} FROM {table} GROUP BY {key} HAVING count(*) > 1").fetchall() == []
                    # an empty table's columns are all observed NOT NULL: no NULL is written
                    assert con.execute(f"SELECT count(*) FROM {table} WHERE "
                                       f"{' OR '.join(f'{c} IS NULL' for c in cols)}").fetchone() == (0,), table
                for i, gold in enumerate((GOLD, STATE, TAGGED)):
                    if con.execute(gold.replace('"', "'")).fetchall():
                        answered.add(i)
            finally:
                con.close()
        assert answered == {0, 1, 2}  # each gold answers on some variant
        return [v.content_hash for v in variants]

    assert build(tmp_path / "a") == build(tmp_path / "b")
