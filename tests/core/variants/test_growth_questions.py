"""The growth's questions are answered in Python, with DuckDB's answers (issue 31: the
Vantage first build). Each was a DuckDB query, about 500 a Vantage variant at 8 ms each,
mostly planning."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_sqleval.core.variants import build as build_mod
from pytest_sqleval.core.variants.build import build_variants
from tests.core.variants.test_new_rows import make_shops
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
