"""The engine process's start-up (issue 35): started before any database is named, it
imports what its first request will need while no request has come (``prestart(warm)``),
so that work overlaps the grading process's collection instead of delaying the first case."""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from pytest_sqleval.core.cases import Limits
from pytest_sqleval.core.engines.host import EngineProcess
from pytest_sqleval.core.grading.pipeline import SuiteGrader
from pytest_sqleval.core.pool import ENGINE_WARM


def _loaded(pid: int) -> str:
    """The files the process has mapped: an imported extension module's shared library is one."""
    return Path(f"/proc/{pid}/maps").read_text()


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads the process's mapped files from /proc")
def test_a_started_engine_imports_what_grading_needs_before_its_first_request(shop_db: Path, tmp_path: Path) -> None:
    process = EngineProcess()
    process.prestart(("pytest_sqleval.no_such_module", *ENGINE_WARM))  # one it cannot import: skipped
    try:
        assert process.proc is not None
        pid = process.proc.pid
        deadline = time.monotonic() + 60
        while "pyarrow" not in _loaded(pid) or "duckdb" not in _loaded(pid):  # warmed with no request sent
            assert time.monotonic() < deadline, "the engine process did not import DuckDB and pyarrow"
            time.sleep(0.05)
        host, ticket = SuiteGrader.start_engine(shop_db, Limits(timeout_s=5), tmp_path, process)
        assert host.result(ticket)["engine"] == "duckdb"  # the same child serves the database
        assert process.proc.pid == pid and process.restarts == 0
        host.close()
    finally:
        process.close()


def test_every_module_an_engine_warms_exists() -> None:
    """A renamed module would silently warm nothing (the child skips what it cannot import)."""
    import importlib.util
    assert all(importlib.util.find_spec(name) is not None for name in ENGINE_WARM)
