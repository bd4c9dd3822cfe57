"""A child process (the engine host, the second variant build process) runs the grading
process's own code, never a ``pytest_sqleval`` that happens to sit in the working
directory: ``python -m`` and ``-c`` put that directory first on a child's path, so a
user's clone of another version there would have graded half of a run with other code."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import pytest_sqleval
from pytest_sqleval.core.api import Grader
from pytest_sqleval.core.childio import python_child
from tests.sqleval_helpers import sqleval_ini  # noqa: F401  (autouse fixture)


@pytest.fixture
def decoy_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory holding a ``pytest_sqleval`` package that cannot be imported."""
    decoy = tmp_path / "checkout"
    (decoy / "pytest_sqleval").mkdir(parents=True)
    (decoy / "pytest_sqleval" / "__init__.py").write_text('raise ImportError("the decoy in the working directory")\n')
    monkeypatch.chdir(decoy)
    return decoy


def test_a_child_imports_the_parents_package_not_the_working_directorys(decoy_cwd: Path) -> None:
    cmd, env = python_child("-c", "import pytest_sqleval; print(pytest_sqleval.__file__)")
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()) == Path(pytest_sqleval.__file__)


def test_the_engine_process_starts_from_a_folder_that_holds_another_checkout(decoy_cwd: Path, shop_db: Path,
                                                                             tmp_path: Path) -> None:
    with Grader(shop_db, cache_dir=tmp_path / "cache") as grader:  # DuckDB: run in the engine process
        verdict = grader.compare("SELECT count(*) FROM customers", "SELECT count(*) AS n FROM customers")
    assert verdict.passed, (verdict.error_class, verdict.explanation)
