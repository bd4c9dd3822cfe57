"""Fixtures shared by the grader's tests: the singer database on each engine, and one
throwaway PostgreSQL server per session (each module makes its own databases on it)."""
from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from tests.engine_databases import PG_BINS, PgServer, build_duckdb, build_sqlite


@pytest.fixture(scope="session")
def pg() -> Iterator[PgServer]:
    if not PG_BINS:
        pytest.skip("PostgreSQL server binaries are absent (/usr/lib/postgresql/*/bin/initdb): "
                    "apt-get install postgresql to run the PostgreSQL engine tests")
    pytest.importorskip("psycopg", reason="psycopg 3 is not installed: pip install -e '.[postgres]'")
    server = PgServer()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def pg_shop(pg: PgServer) -> str:
    """A read-only (``grader`` role) URL of the singer database on PostgreSQL."""
    return pg.create_db("shop")


@pytest.fixture(scope="session")
def sqlite_shop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_sqlite(tmp_path_factory.mktemp("sqlite") / "shop.sqlite")


@pytest.fixture(scope="session")
def duckdb_shop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_duckdb(tmp_path_factory.mktemp("duck") / "shop.duckdb")


@pytest.fixture
def frame_kinds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The kinds of the frames the grading process reads from its engine process, in order
    (``started``, ``executed``, ``result``, ...): what a request costs in messages."""
    from pytest_sqleval.core.engines.host import _Frames
    kinds: list[str] = []
    real = _Frames.next

    def counting(self: _Frames, deadline: float | None) -> object:
        frame = real(self, deadline)
        kinds.append(frame[0])
        return frame
    monkeypatch.setattr(_Frames, "next", counting)
    return kinds
