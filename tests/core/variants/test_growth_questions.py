"""The growth's questions are answered in Python, with DuckDB's answers (issue 31: the
Vantage first build). Each was a DuckDB query, about 500 a Vantage variant at 8 ms each,
mostly planning."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_sqleval.core.variants import build as build_mod
from pytest_sqleval.core.variants.build import build_variants
from tests.core.variants.test_variants_build import make_duckdb


@pytest.mark.parametrize("make", ["shop", "shops"])
def test_the_growth_asks_duckdb_no_question_and_keeps_the_rows_its_questions_kept(
        make: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """("a kept child row, added since, whose reference no kept parent row holds?")
    DuckDB variants answer it from the keep tables' dependency columns held in Python; the
    rows kept, so each variant's content, are those DuckDB's answers keep (two schemas:
    declared and observed references, text and integer keys)."""
    db = tmp_path / f"{make}.duckdb"
    if make == "shop":
        make_duckdb(db)
    else:
        from tests.core.variants.test_new_rows import make_shops
        make_shops(db)
    monkeypatch.setattr(build_mod, "BUILD_PROCESSES", 1)  # every variant here, where it is counted
    sql_questions: list[int] = []
    ask_duckdb = build_mod._Builder.any_missing_of

    def counted(self: Any, deps: list[Any], since: int = 0) -> dict[Any, bool]:
        sql_questions.append(len(deps))
        return ask_duckdb(self, deps, since)

    monkeypatch.setattr(build_mod._Builder, "any_missing_of", counted)
    held = build_variants(db, tmp_path / "held", count=6, seed=5)
    assert sql_questions == []

    monkeypatch.setattr(build_mod._DuckDBBuilder, "any_missing_of", counted)  # DuckDB answers, as before
    asked = build_variants(db, tmp_path / "asked", count=6, seed=5)
    assert sum(sql_questions) > 6
    assert [(v.kind, v.content_hash) for v in held] == [(v.kind, v.content_hash) for v in asked]


def make_people(path: Path, collate: str = "") -> None:
    """People referencing a city by a text code (``collate``: its collation) and a day by a date."""
    import duckdb
    con = duckdb.connect(str(path))
    con.execute(f"CREATE TABLE city (code VARCHAR {collate} PRIMARY KEY, name VARCHAR)")
    con.execute("CREATE TABLE day (d DATE PRIMARY KEY, weekday INTEGER)")
    con.execute("CREATE TABLE person (id BIGINT PRIMARY KEY, code VARCHAR REFERENCES city (code), "
                "born DATE REFERENCES day (d), n SMALLINT)")
    con.execute("INSERT INTO city SELECT 'c' || i, 'name ' || i FROM range(300) t(i)")
    con.execute("INSERT INTO day SELECT DATE '2000-01-01' + i::INTEGER, i % 7 FROM range(500) t(i)")
    con.execute("INSERT INTO person SELECT i, 'c' || (i * 7 % 300), DATE '2000-01-01' + (i * 13 % 500)::INTEGER, "
                "i % 50 FROM range(3000) t(i)")
    con.close()


@pytest.mark.parametrize("make", ["shop", "people"])
def test_the_growth_inserts_the_rows_of_the_values_python_holds_as_its_semi_join_did(
        make: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The growth's inserts take the missing values Python already holds as an ``IN`` list
    (planning the semi-join over the two keep tables was most of their cost); the rows added,
    so each variant's content, are the semi-join's (whole-number, text and date keys)."""
    db = tmp_path / f"{make}.duckdb"
    if make == "shop":
        make_duckdb(db)
    else:
        make_people(db)
    monkeypatch.setattr(build_mod, "BUILD_PROCESSES", 1)
    lists: list[int] = []
    as_list = build_mod._DuckDBBuilder._missing_in

    def counted(self: Any, dep: Any, since: int) -> Any:
        given = as_list(self, dep, since)
        lists.append(given is not None)
        return given

    monkeypatch.setattr(build_mod._DuckDBBuilder, "_missing_in", counted)
    listed = build_variants(db, tmp_path / "listed", count=6, seed=5)
    assert sum(lists) > 0
    monkeypatch.setattr(build_mod._DuckDBBuilder, "_missing_in", lambda self, dep, since: None)
    joined = build_variants(db, tmp_path / "joined", count=6, seed=5)
    assert [(v.kind, v.content_hash) for v in listed] == [(v.kind, v.content_hash) for v in joined]


def test_a_collated_key_is_grown_by_duckdbs_equality(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Under ``COLLATE NOCASE`` a child's 'A' is covered by the parent's 'a' in DuckDB, not in
    Python: such a database's growth keeps the semi-join (no ``IN`` list)."""
    db = tmp_path / "nocase.duckdb"
    make_people(db, "COLLATE NOCASE")
    monkeypatch.setattr(build_mod, "BUILD_PROCESSES", 1)
    lists: list[bool] = []
    as_list = build_mod._DuckDBBuilder._missing_in
    monkeypatch.setattr(build_mod._DuckDBBuilder, "_missing_in",
                        lambda self, dep, since: lists.append(as_list(self, dep, since) is not None))
    build_variants(db, tmp_path / "v", count=2, seed=5)
    assert lists and not any(lists)
