"""The import paths from before the core / plugin / products split still work for one
release: the same module object under both names, with a warning that names the new path."""
from __future__ import annotations

import subprocess
import sys

import pytest

from pytest_sqleval._moved import MOVED, new_name


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_name_is_the_new_module_and_says_where_it_went(old: str) -> None:
    code = (f"import importlib, sys, warnings\n"
            f"warnings.simplefilter('error', DeprecationWarning)\n"
            f"try:\n    importlib.import_module({old!r})\n"
            f"except DeprecationWarning as w:\n    print('WARNED', w)\n"
            f"warnings.simplefilter('ignore')\n"
            f"old = importlib.import_module({old!r}); new = importlib.import_module({MOVED[old]!r})\n"
            f"print('SAME', old is new, new.__spec__.name)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120).stdout
    first = min((o for o in MOVED if old == o or old.startswith(o + ".")), key=len)  # a parent warns first
    assert f"WARNED {first} is now {MOVED[first]}; the old name goes in 0.3" in out
    assert f"SAME True {MOVED[old]}" in out


def test_a_submodule_of_an_old_package_is_loaded_once() -> None:
    code = ("import warnings; warnings.simplefilter('ignore')\n"
            "from pytest_sqleval.grading.compare import CompareSpec as A\n"
            "from pytest_sqleval.core.grading.compare import CompareSpec as B\n"
            "print(A is B)\n")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120).stdout.strip() == "True"


def test_an_old_module_runs_with_python_m() -> None:
    done = subprocess.run([sys.executable, "-W", "ignore", "-m", "pytest_sqleval.warehouse", "--help"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "build" in done.stdout


def test_names_that_never_moved_are_left_alone() -> None:
    assert new_name("pytest_sqleval.reports.html") is None
    assert new_name("pytest_sqleval.core.grading") is None
    assert new_name("pytest_sqleval.warehouse.validate") == "pytest_sqleval.products.validate"
    assert new_name("pytest_sqleval.warehouse.fill") == "pytest_sqleval.products.warehouse.fill"
