"""Where queries run (``[limits] isolation``): every engine in the engine process by
default; ``auto`` serves SQLite in the grading process, with every sandbox guarantee;
DuckDB always runs in the engine process. The hostile corpus is refused in the grading
process too, a runaway query stops at its limit there, and a bad value is a clear
manifest error."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from grader_tests.test_hostile import HOSTILE, refused
from pytest_sqleval.core.api import Grader
from pytest_sqleval.core.cases import load_manifest
from pytest_sqleval.core.engines.base import Limits
from pytest_sqleval.core.engines.host import EngineProcess, InProcessEngine
from pytest_sqleval.core.errors import BadInputError
from tests.engine_databases import build_sqlite
from tests.hosts import host_of

GOLD = "SELECT country, count(*) FROM singer GROUP BY country"
NORMAL = "SELECT s.country AS c, count(s.singer_id) AS n FROM singer s GROUP BY 1"
RUNAWAY = ("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) "
           "SELECT country, count(*) FROM singer, (SELECT max(n) FROM r) GROUP BY country")


def engine_of(grader: Grader) -> object:
    """What serves the grader's queries: its engine host's process (or this one)."""
    return host_of(grader._grader).process


def child_running(grader: Grader) -> bool:
    """Whether the grader's engine runs in a child process."""
    process = engine_of(grader)
    return isinstance(process, EngineProcess) and process.proc is not None


@pytest.mark.parametrize("isolation, served_by", [("auto", InProcessEngine), ("process", EngineProcess)])
def test_sqlite_is_served_where_isolation_says(tmp_path: Path, isolation: str, served_by: type) -> None:
    db = build_sqlite(tmp_path / "singers.sqlite")
    with Grader(db, dialect="sqlite", cache_dir=tmp_path / "cache", limits=Limits(isolation=isolation)) as grader:
        assert isinstance(engine_of(grader), served_by)
        assert grader.compare(NORMAL, GOLD).passed
        children = child_running(grader)
        assert children == (isolation == "process")


def test_the_default_is_the_engine_process(tmp_path: Path) -> None:
    db = build_sqlite(tmp_path / "singers.sqlite")
    assert Limits().isolation == "process"
    with Grader(db, dialect="sqlite", cache_dir=tmp_path / "cache") as grader:
        assert isinstance(engine_of(grader), EngineProcess)


def test_duckdb_always_runs_in_the_engine_process(tmp_path: Path) -> None:
    import duckdb
    db = tmp_path / "singers.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE singer (country TEXT)")
    con.execute("INSERT INTO singer VALUES ('US'), ('UK'), ('US')")
    con.close()
    with Grader(db, cache_dir=tmp_path / "cache", limits=Limits(isolation="auto")) as grader:
        assert isinstance(engine_of(grader), EngineProcess)
        assert grader.compare("SELECT country, count(*) FROM singer GROUP BY 1", GOLD).passed


def test_in_process_sqlite_refuses_the_hostile_corpus_and_leaves_the_database_as_it_was(tmp_path: Path) -> None:
    db = build_sqlite(tmp_path / "singers.sqlite")
    before = db.read_bytes()
    with Grader(db, dialect="sqlite", cache_dir=tmp_path / "cache", limits=Limits(isolation="auto")) as grader:
        assert isinstance(engine_of(grader), InProcessEngine)
        escaped = {}
        for param in HOSTILE:
            verdict = grader.compare(param.values[0], GOLD)
            if verdict.passed or not refused(verdict):
                escaped[param.id] = verdict.failure_kind
        assert not escaped, escaped
        assert grader.compare(NORMAL, GOLD).passed
    assert db.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["cache", "singers.sqlite"]  # no journal, WAL or file written beside it


def test_a_runaway_query_stops_at_its_limit_in_the_grading_process(tmp_path: Path) -> None:
    db = build_sqlite(tmp_path / "singers.sqlite")
    with Grader(db, dialect="sqlite", cache_dir=tmp_path / "cache",
                limits=Limits(timeout_s=0.3, isolation="auto")) as grader:
        assert isinstance(engine_of(grader), InProcessEngine)
        verdict = grader.compare(RUNAWAY, GOLD)
        assert not verdict.passed
        assert verdict.layers["execution"]["error"]["category"] in ("timeout", "unfinished")
        assert grader.compare(NORMAL, GOLD).passed  # the connection serves the next case


@pytest.mark.parametrize("value", ["thread", "Process", "none"])
def test_an_unknown_isolation_is_a_manifest_error_naming_the_line(tmp_path: Path, value: str) -> None:
    build_sqlite(tmp_path / "shop.sqlite")
    (tmp_path / "questions.jsonl").write_text('{"id": "q1", "question": "q", "gold_sql": "SELECT 1"}\n')
    manifest = tmp_path / "sqleval.toml"
    manifest.write_text('[suite]\nname = "s"\nquestions = "questions.jsonl"\ndatabase = "shop.sqlite"\n'
                        f'dialect = "sqlite"\n\n[limits]\nisolation = "{value}"\n')
    with pytest.raises(BadInputError) as err:
        load_manifest(manifest)
    message = str(err.value)
    assert "sqleval.toml:8" in message and "limits.isolation" in message and "process, auto" in message
