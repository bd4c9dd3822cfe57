"""A run ends quietly: no deprecation warning from a plugin the run does not use, and no
"nanobind: leaked ..." lines at exit (DuckDB 2.0.0 counts its live objects at exit).

The plugin freezes the collected tree out of the garbage collector's view; frozen objects
are never freed, the ``duckdb`` module's own among them, unless the tree is unfrozen
before the interpreter exits."""
from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from tests.sqleval_helpers import LEAN, sqleval_ini  # noqa: F401  (autouse fixture)

ROOT = Path(__file__).resolve().parents[2]

#: Imports DuckDB before the freeze, as a user's conftest may, and records at exit (after
#: the plugin's own exit handler, which was registered later) how much is still frozen.
CONFTEST = """
import atexit, gc, pathlib
import duckdb

atexit.register(lambda: pathlib.Path({out!r}).write_text(str(gc.get_freeze_count())))
"""


def test_a_run_ends_quietly_with_nothing_frozen(pytester: pytest.Pytester, shop_suite: Path) -> None:
    pytester.makeini("[pytest]\npythonpath = .\n")  # a user's project: no pytest-asyncio settings
    out = pytester.path / "frozen_at_exit"
    pytester.makeconftest(CONFTEST.format(out=str(out)))
    # pytest-asyncio is installed here for the plugin's own tests; a user's environment has
    # no need of it (the plugin runs its own event loop), which "-p no:asyncio" stands for.
    result = pytester.runpytest_subprocess(*LEAN, "-p", "no:asyncio", timeout=120)
    result.assert_outcomes(passed=6)
    err = result.stderr.str()
    assert "nanobind" not in err and "leaked" not in err, err
    assert "Warning" not in err + result.stdout.str(), err
    assert out.read_text() == "0"


def test_pytest_asyncio_is_a_test_dependency_only() -> None:
    """Installed with the plugin, pytest-asyncio loads into every user's run and warns that
    ``asyncio_default_fixture_loop_scope`` is unset; only the plugin's own tests use it."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert not [d for d in project["dependencies"] if d.replace("_", "-").startswith("pytest-asyncio")]
    assert [d for d in project["optional-dependencies"]["test"] if d.startswith("pytest-asyncio")]


def test_a_run_without_a_benchmark_does_not_import_the_grader(pytester: pytest.Pytester) -> None:
    """Every pytest run in an environment with the plugin installed configures it: reading
    its options must not import the grader and sqlglot (0.1-0.3 s on every start)."""
    pytester.makepyfile(test_plain="import sys\n\n\ndef test_plain():\n"
                                   "    assert 'sqlglot' not in sys.modules\n"
                                   "    assert 'pytest_sqleval.core.grading.verdict' not in sys.modules\n")
    result = pytester.runpytest_subprocess(*LEAN, "-p", "no:asyncio", timeout=120)
    result.assert_outcomes(passed=1)


#: Records at exit which of the engine process's libraries the grading process loaded.
HEAVY_AT_EXIT = """
import atexit, pathlib, sys

atexit.register(lambda: pathlib.Path({out!r}).write_text(
    " ".join(m for m in ("pyarrow", "numpy", "duckdb", "pytest_sqleval.core.grading.peers") if m in sys.modules)))
"""


def test_a_graded_run_leaves_the_engines_libraries_to_the_engine_process(
        pytester: pytest.Pytester, shop_suite: Path, write_predictions: Any) -> None:
    """Results are compared in the engine process; the grading process parses, grounds and
    reports, and needs neither pyarrow, numpy nor DuckDB's bindings (about 0.4 s of CPU a
    run to import, a fixed part of a run's own cost). A prediction Spider's evaluator
    rewrites (``value``) and a failing one go through every layer of this process."""
    out = pytester.path / "heavy_at_exit"
    pytester.makeconftest(HEAVY_AT_EXIT.format(out=str(out)))
    preds = write_predictions({"q01": "SELECT count(*) FROM customers WHERE NOT is_test",
                               "q02": "SELECT count(*) FROM orders WHERE status = 'value'",
                               "q03": "SELECT region, count(*) AS n FROM customers GROUP BY region",
                               "q04": "SELECT status, count(*) AS n FROM orders GROUP BY status",
                               "q05": "SELECT 1", "q06": "SELECT 1"})
    result = pytester.runpytest_subprocess(*LEAN, "-p", "no:asyncio", f"--sqleval-backend=predictions:{preds}",
                                           timeout=120)
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) >= 3 and outcomes.get("failed", 0) >= 2, result.stdout.str()
    assert out.read_text() == "", out.read_text()
