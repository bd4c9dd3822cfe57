"""A backend's exception shows the backend's own traceback in the case's report, in every
``--tb`` style."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from tests.sqleval_helpers import SHOP_CASES, sqleval_ini  # noqa: F401


# -- a backend's own traceback ---------------------------------------------------
BOOM = '''
def _call_model(case):
    raise RuntimeError("model exploded")


def generate(case):
    if case.id == "q01":
        return _call_model(case)
    return case.gold_sql
'''


@pytest.mark.parametrize("tb", ["auto", "short", "long", "no"])
def test_a_backend_exception_shows_the_backends_own_traceback(
        pytester: pytest.Pytester, make_suite: Callable[..., Path], tb: str) -> None:
    make_suite(SHOP_CASES[:2])
    pytester.makepyfile(boom=BOOM)
    result = pytester.runpytest("--sqleval-backend=boom:generate", f"--tb={tb}")
    result.assert_outcomes(passed=1, errors=1)
    out = result.stdout.str()
    if tb == "no":
        assert "_call_model" not in out
        return
    assert "backend generate failed on q01: RuntimeError: model exploded" in out
    assert "boom.py:2" in out and "boom.py:7" in out  # both of the backend's frames, by file and line
    assert 'raise RuntimeError("model exploded")' in out
    assert "return _call_model(case)" in out  # the user's calling frame
    report = out.split("ERROR at setup")[1].split("sqleval summary")[0]
    assert "pytest_sqleval" not in report and "asyncio" not in report and "concurrent" not in report  # no plumbing
    if tb == "long":
        assert "def _call_model(case):" in out and "def generate(case):" in out

