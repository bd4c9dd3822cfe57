"""``-n auto`` on a suite too small to gain from xdist workers runs serially and says so in
one line; a suite whose last run took long enough gets its workers, as does ``-n auto``
when the user fixed the count (``PYTEST_XDIST_AUTO_NUM_WORKERS``)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.sqleval_helpers import LEAN, sqleval_ini, shop_suite  # noqa: F401  (fixtures)

SERIAL_LINE = "sqleval: -n auto: running serially: 6 cases expected to take about * s*"


def run_summary(pytester: pytest.Pytester) -> dict:
    return json.loads((pytester.path / "sqleval-results" / "summary.json").read_text())


def test_a_small_suite_runs_serially_under_n_auto_and_says_so(pytester: pytest.Pytester, shop_suite: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTEST_XDIST_AUTO_NUM_WORKERS", raising=False)
    result = pytester.runpytest_subprocess(*LEAN, "suite", "-n", "auto", "-p", "no:cacheprovider", timeout=120)
    result.assert_outcomes(passed=6)
    result.stdout.fnmatch_lines([SERIAL_LINE])
    result.stdout.no_fnmatch_line("*created: *worker*")
    assert run_summary(pytester)["run"]["xdist_workers"] == 0
    memory = json.loads((pytester.path / ".sqleval-cache" / "case_seconds.json").read_text())
    assert memory["suite/questions.jsonl"]["cases"] == 6  # what the next -n auto run decides from


@pytest.mark.parametrize("how", ["last run was long", "worker count fixed"])
def test_n_auto_starts_workers_when_they_can_pay_off_or_are_asked_for(
        pytester: pytest.Pytester, shop_suite: Path, monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    monkeypatch.delenv("PYTEST_XDIST_AUTO_NUM_WORKERS", raising=False)
    if how == "last run was long":  # six cases of ten seconds each, as a previous run measured them
        cache = pytester.path / ".sqleval-cache"
        cache.mkdir()
        (cache / "case_seconds.json").write_text(json.dumps({"suite/questions.jsonl": {"cases": 6, "seconds": 60.0}}))
    else:
        monkeypatch.setenv("PYTEST_XDIST_AUTO_NUM_WORKERS", "2")
    result = pytester.runpytest_subprocess(*LEAN, "suite", "-n", "auto", "-p", "no:cacheprovider", timeout=120)
    result.assert_outcomes(passed=6)
    result.stdout.no_fnmatch_line("*running serially*")
    assert run_summary(pytester)["run"]["xdist_workers"] >= 1
