"""Re-running last run's failures: pytest's ``--lf``, ``--ff`` and ``--sw`` pick the same
cases on pytest 8 and 9, and ``-k <error class>`` finds last run's class for a case and
backend whatever backend list the next run names.

pytest 9 compares structured node ids: ``questions.jsonl::q06[gold]`` read back from its
cache has the name ``q06`` and the parameter ``gold``; an item whose id were derived from
its name ``q06[gold]`` would never equal it, and ``--lf`` would re-run everything."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Callable

import pytest

from tests.sqleval_helpers import LEAN, NAIVE_CLASSES, NAIVE_SQL, SHOP_CASES, sqleval_ini  # noqa: F401  (autouse fixture)

FAILING = sorted(cid for cid, cls in NAIVE_CLASSES.items() if cls)  # q02..q06, one error class each
TWO = "--sqleval-backend=gold,predictions:naive.jsonl"
ONE = "--sqleval-backend=predictions:naive.jsonl"
_VERBOSE = re.compile(r"^\S+?\.jsonl::(\S+) (?:PASSED|FAILED|ERROR)\b")


@pytest.fixture
def naive(make_suite: Callable[..., Path], write_predictions: Callable[..., Path]) -> Callable[..., None]:
    """The six shop cases under ``suite[v2]/``: a bracket in the path, so that nothing may cut
    a node id at its first ``[``. ``naive(q02=SQL)`` rewrites the naive predictions."""
    make_suite(SHOP_CASES, folder="suite[v2]")

    def write(**overrides: str) -> None:
        write_predictions(dict(NAIVE_SQL, **overrides), name="naive.jsonl")

    write()
    return write


def ran(result: pytest.RunResult) -> list[str]:
    """Item names in the order they ran, from ``-v`` lines (``suite[v2]/questions.jsonl::q02[naive] FAILED``)."""
    return [m.group(1) for m in map(_VERBOSE.match, result.outlines) if m]


def failed_names(backends: str) -> list[str]:
    return FAILING if backends == ONE else [f"{cid}[naive]" for cid in FAILING]


@pytest.mark.parametrize("backends", [ONE, TWO], ids=["one_backend", "two_backends"])
def test_lf_and_ff_rerun_exactly_last_runs_failures(pytester: pytest.Pytester, naive: Any, backends: str) -> None:
    items = 6 if backends == ONE else 12
    pytester.runpytest(backends).assert_outcomes(passed=items - 5, failed=5)

    last_failed = pytester.runpytest(backends, "--lf", "-v")
    last_failed.assert_outcomes(failed=5)  # the others are not even collected
    last_failed.stdout.fnmatch_lines(["run-last-failure: rerun previous 5 failures*"])
    assert sorted(ran(last_failed)) == failed_names(backends)

    failed_first = pytester.runpytest(backends, "--ff", "-v")
    failed_first.assert_outcomes(passed=items - 5, failed=5)
    failed_first.stdout.fnmatch_lines(["run-last-failure: rerun previous 5 failures first*"])
    order = ran(failed_first)
    assert len(order) == items and sorted(order[:5]) == failed_names(backends)


def test_lf_after_an_xdist_run(pytester: pytest.Pytester, naive: Any) -> None:
    """Under xdist the controller writes pytest's cache from the workers' reports."""
    pytester.runpytest_subprocess(*LEAN, "-n", "2", TWO, timeout=120).assert_outcomes(passed=7, failed=5)
    result = pytester.runpytest(TWO, "--lf", "-v")
    result.assert_outcomes(failed=5)
    assert sorted(ran(result)) == failed_names(TWO)


def test_sw_stops_at_the_first_failing_case_and_resumes_from_it(pytester: pytest.Pytester, naive: Any) -> None:
    first = pytester.runpytest(TWO, "--sw", "-v")
    first.assert_outcomes(passed=3, failed=1)  # q01[gold], q01[naive], q02[gold], then q02[naive] fails
    assert ran(first) == ["q01[gold]", "q01[naive]", "q02[gold]", "q02[naive]"]

    again = pytester.runpytest(TWO, "--sw", "-v")
    again.assert_outcomes(failed=1, deselected=3)
    again.stdout.fnmatch_lines(["stepwise: skipping 3 already passed items*"])
    assert ran(again) == ["q02[naive]"]

    naive(q02=SHOP_CASES[1]["gold_sql"])  # fixed: the run goes on to the next failing case
    fixed = pytester.runpytest(TWO, "--sw", "-v")
    fixed.assert_outcomes(passed=2, failed=1, deselected=3)
    assert ran(fixed) == ["q02[naive]", "q03[gold]", "q03[naive]"]


def _error_classes(root: Path) -> dict[str, str]:
    return json.loads((root / ".pytest_cache" / "v" / "sqleval" / "error_classes").read_text())


def _selected(pytester: pytest.Pytester, backends: str, expr: str) -> list[str]:
    result = pytester.runpytest(backends, "-v", "-k", expr)
    return sorted(ran(result))


def test_k_error_class_whatever_backend_list_the_next_run_names(pytester: pytest.Pytester, naive: Any) -> None:
    pytester.runpytest(TWO).assert_outcomes(passed=7, failed=5)
    # one entry per (suite, case id, backend label), the suite being its questions file
    assert _error_classes(pytester.path) == {f"suite[v2]/questions.jsonl::{cid}|naive": NAIVE_CLASSES[cid]
                                             for cid in FAILING}

    assert _selected(pytester, ONE, "stale_table") == ["q02"]  # the item is named q02 now, not q02[naive]
    assert _selected(pytester, "--sqleval-backend=predictions:naive.jsonl,gold", "stale_table or wrong_metric") \
        == ["q02[naive]", "q04[naive]"]
    assert _selected(pytester, "--sqleval-backend=gold", "stale_table") == []  # gold never failed

    naive(q02=SHOP_CASES[1]["gold_sql"])
    pytester.runpytest(ONE, "-k", "q02").assert_outcomes(passed=1, deselected=5)  # a subset run, one backend
    assert _error_classes(pytester.path) == {f"suite[v2]/questions.jsonl::{cid}|naive": NAIVE_CLASSES[cid]
                                             for cid in FAILING if cid != "q02"}
    assert _selected(pytester, TWO, "stale_table") == []  # q02 passes now: its keyword is gone
    assert _selected(pytester, TWO, "wrong_metric or other") == ["q04[naive]", "q06[naive]"]  # the others kept theirs
