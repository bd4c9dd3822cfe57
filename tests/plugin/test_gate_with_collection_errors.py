"""A run that could not collect everything never passes the gate, however well the cases it
collected did."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import pytest

from tests.sqleval_helpers import SHOP_CASES, sqleval_ini  # noqa: F401  (autouse fixture)


# -- collection errors and the gate ----------------------------------------------
@pytest.mark.parametrize("broken", ["test_module", "suite"])
def test_gate_fails_a_run_with_collection_errors(pytester: pytest.Pytester, shop_suite: Path,
                                                 make_suite: Callable[..., Path], broken: str) -> None:
    """Every collected case passes, but something could not be collected: pytest alone
    exits 1, and the gate must not turn that into 0."""
    if broken == "test_module":
        pytester.makepyfile(test_broken="import no_such_module_sqleval\n")
        culprit = "test_broken.py"
    else:
        make_suite(SHOP_CASES[:1], folder="other", manifest_extra="bogus_key = 1\n")
        culprit = "other/questions.jsonl"
    result = pytester.runpytest("--continue-on-collection-errors", "--sqleval-min-pass-rate=0.5")
    result.assert_outcomes(passed=6, errors=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["gate PASSED: backend gold pass rate 1.000 >= 0.500",
                                 f"gate FAILED: 1 collection error(s) occurred: {culprit}*"])
    summary = json.loads((pytester.path / "sqleval-results" / "summary.json").read_text())
    assert summary["run"]["exit_status"] == 1

