"""The package type-checks: mypy, configured in pyproject.toml ([tool.mypy]: strict on the
whole package but the modules the redesign rewrites next, which a listed override leaves out),
reports no error. mypy is in the ``test`` extra, so a missing mypy fails; the types it checks
against are the locked versions' (requirements/test.lock), so an environment on other
versions (``tox -e oldest``, ``tox -e newest``) skips."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
import tomllib
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "requirements" / "test.lock"
TIMEOUT_S = 600  # a cold run: about 12 s of CPU (mypy 2.4.1); minutes on a loaded machine


def off_lock() -> list[str]:
    """The installed distributions at another version than the lock pins here (the build
    backend aside: the lock pins it for the package's build, not for this environment)."""
    build = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["build-system"]["requires"]
    build_names = {Requirement(r).name.lower() for r in build}
    off = []
    for line in LOCK.read_text(encoding="utf-8").splitlines():
        if not line or line[0] in " #":
            continue
        pin = Requirement(line)
        if pin.name.lower() in build_names or pin.marker is not None and not pin.marker.evaluate():
            continue
        try:
            installed = version(pin.name)
        except PackageNotFoundError:  # not installed: mypy reports what it misses
            continue
        if not pin.specifier.contains(installed, prereleases=True):
            off.append(f"{pin.name} {installed} (locked {pin.specifier})")
    return off


def test_mypy_reports_no_error(tmp_path: Path) -> None:
    if importlib.util.find_spec("mypy") is None:
        pytest.fail("mypy is not installed: install the test extra "
                    "(pip install -c requirements/test.lock -e '.[test]')")
    off = off_lock()
    if off:
        pytest.skip(f"types are checked on the locked versions; installed here: {', '.join(off[:5])}")
    # a cache of its own: the result does not depend on an earlier run's
    proc = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
                           "--cache-dir", str(tmp_path / "mypy-cache")],
                          cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT_S)
    assert proc.returncode == 0, f"mypy exited {proc.returncode}:\n{proc.stdout}{proc.stderr}"
    assert proc.stdout.startswith("Success: no issues found"), proc.stdout
