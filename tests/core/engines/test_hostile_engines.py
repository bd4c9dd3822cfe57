"""The hostile corpus of grader_tests/test_hostile.py, through a full Grader on every
engine available: DuckDB there, SQLite and PostgreSQL here. Each statement is refused,
the next normal query passes, and the content hash does not move."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest

from grader_tests.test_hostile import HOSTILE, refused
from pytest_sqleval.core.api import Grader
from tests.engine_databases import PgServer, build_sqlite

GOLD = "SELECT country, count(*) FROM singer GROUP BY country"
NORMAL = "SELECT s.country AS c, count(s.singer_id) AS n FROM singer s GROUP BY 1"


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def engine_grader(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Grader]:
    if request.param == "sqlite":
        location: Any = build_sqlite(tmp_path_factory.mktemp("hostile") / "singers.sqlite")
    else:
        server: PgServer = request.getfixturevalue("pg")
        location = server.create_db("hostile")
    with Grader(location) as grader:
        yield grader


def test_the_whole_corpus_is_refused_on_each_engine(engine_grader: Grader) -> None:
    before = engine_grader.content_hash
    escaped = {}
    for param in HOSTILE:
        sql = param.values[0]
        v = engine_grader.compare(sql, GOLD)
        if v.passed or not refused(v):
            escaped[param.id] = (v.failure_kind, (v.layers.get("execution") or {}).get("error"))
        assert engine_grader.compare(NORMAL, GOLD).passed, param.id
    assert not escaped, escaped
    with Grader(engine_grader._grader.database) as fresh:  # recomputed from the database, not remembered
        assert fresh.content_hash == before
    assert len(HOSTILE) >= 50
