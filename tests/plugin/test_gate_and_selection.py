"""The pass-rate gate decides exit 0/1 and leaves pytest's other exit codes alone;
``-k <error class>`` re-selects the cases that last failed that way."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest

from tests.sqleval_helpers import INI, LEAN, NAIVE_SQL, SHOP_CASES, sqleval_ini  # noqa: F401  (autouse fixture)


@pytest.fixture
def gold_and_partial(shop_suite: Path, write_predictions: Callable[..., Path]) -> str:
    """``gold`` passes 6/6; ``partial`` passes 4/6 = 0.667 (one wrong, one with no prediction,
    which fails). Were the missing answer left out of the rate, ``partial`` would have 4/5 = 0.8."""
    sqls = {c["id"]: c["gold_sql"] for c in SHOP_CASES[:5]}
    sqls["q02"] = NAIVE_SQL["q02"]
    write_predictions(sqls, name="partial.jsonl")
    return "--sqleval-backend=gold,predictions:partial.jsonl"


@pytest.mark.parametrize("cli, ini, expected", [
    ("0.6", None, pytest.ExitCode.OK),  # every backend meets it, though two cases failed
    (None, "0.7", pytest.ExitCode.TESTS_FAILED),  # partial misses it: the missing answer counts against it
    ("0.6", "0.7", pytest.ExitCode.OK),  # the option overrides the ini key
])
def test_gate(pytester: pytest.Pytester, gold_and_partial: str, cli: str | None, ini: str | None,
              expected: pytest.ExitCode) -> None:
    if ini is not None:
        pytester.makeini(INI + f"sqleval_min_pass_rate = {ini}\n")
    args = [gold_and_partial] + ([f"--sqleval-min-pass-rate={cli}"] if cli else [])
    result = pytester.runpytest(*args)
    result.assert_outcomes(passed=10, failed=2)
    assert result.ret == expected
    rate = float(cli or ini)
    result.stdout.fnmatch_lines([f"gate PASSED: backend gold pass rate 1.000 >= {rate:.3f}",
                                 f"gate {'PASSED' if expected == 0 else 'FAILED'}: backend partial pass rate 0.667 "
                                 f"{'>=' if expected == 0 else '<'} {rate:.3f}"])
    summary = json.loads((pytester.path / "sqleval-results" / "summary.json").read_text())
    assert summary["run"]["exit_status"] == expected and summary["run"]["min_pass_rate"] == rate


def test_gate_counts_failed_plain_tests_and_runs_stopped_early(pytester: pytest.Pytester, shop_suite: Path) -> None:
    pytester.makepyfile(test_plain="def test_plain():\n    assert False\n")
    result = pytester.runpytest("--sqleval-min-pass-rate=0.5")
    result.assert_outcomes(passed=6, failed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["gate FAILED: 1 non-benchmark test(s) failed"])

    (pytester.path / "test_plain.py").unlink()
    predictions = pytester.path / "preds.jsonl"
    predictions.write_text("".join(json.dumps({"id": c["id"], "sql": c["gold_sql"] if c["id"] != "q02" else "SELECT 0"})
                                   + "\n" for c in SHOP_CASES))
    result = pytester.runpytest("--sqleval-min-pass-rate=0.5", "-x", "--sqleval-backend=predictions:preds.jsonl")
    result.assert_outcomes(passed=1, failed=1)  # 1/2 >= 0.5, but four cases were never graded
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["gate FAILED: the run stopped early*"])


@pytest.mark.parametrize("value", ["abc", "80", "-0.1"])
@pytest.mark.parametrize("where", ["option", "ini"])
def test_a_bad_gate_value_is_a_usage_error(pytester: pytest.Pytester, shop_suite: Path, value: str, where: str) -> None:
    if where == "ini":
        pytester.makeini(INI + f"sqleval_min_pass_rate = {value}\n")
        result = pytester.runpytest()
    else:
        result = pytester.runpytest(f"--sqleval-min-pass-rate={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "sqleval_min_pass_rate" in err if where == "ini" else "--sqleval-min-pass-rate" in err
    assert repr(value) in err
    assert "Traceback" not in err + result.stdout.str()


def _bad_jsonl(make_suite: Callable[..., Path], pytester: pytest.Pytester) -> list[str]:
    make_suite('{"id": "q01"\n')
    return []


def _nothing(make_suite: Callable[..., Path], pytester: pytest.Pytester) -> list[str]:
    return []


def _all_deselected(make_suite: Callable[..., Path], pytester: pytest.Pytester) -> list[str]:
    make_suite(SHOP_CASES)
    return ["-k", "no_such_case"]


def _bad_backend(make_suite: Callable[..., Path], pytester: pytest.Pytester) -> list[str]:
    make_suite(SHOP_CASES)
    return ["--sqleval-backend=gld"]


@pytest.mark.parametrize("setup, pytest_says", [
    (_bad_jsonl, pytest.ExitCode.INTERRUPTED),  # a collection error: pytest returns 2
    (_nothing, pytest.ExitCode.NO_TESTS_COLLECTED),
    (_all_deselected, pytest.ExitCode.NO_TESTS_COLLECTED),
    (_bad_backend, pytest.ExitCode.USAGE_ERROR),
], ids=["collection_error", "no_tests", "all_deselected", "usage_error"])
def test_the_gate_leaves_exit_codes_2_to_5_alone(pytester: pytest.Pytester, make_suite: Callable[..., Path],
                                                 setup: Callable[..., list[str]], pytest_says: pytest.ExitCode) -> None:
    args = setup(make_suite, pytester)
    without = pytester.runpytest(*args).ret
    assert without == pytest_says  # what pytest itself returns
    assert pytester.runpytest(*args, "--sqleval-min-pass-rate=0").ret == pytest_says


# -- -k <error class> ----------------------------------------------------------------------
def _error_class_cache(root: Path) -> dict[str, Any]:
    return json.loads((root / ".pytest_cache" / "v" / "sqleval" / "error_classes").read_text())


def _selected(result: pytest.RunResult) -> list[str]:
    return sorted(line.split("::", 1)[1].split(" ", 1)[0] for line in result.outlines
                  if line.startswith(("PASSED ", "FAILED ", "ERROR ")) and "::" in line)


def test_k_error_class_reselects_last_failures_merged_per_case(pytester: pytest.Pytester, shop_suite: Path,
                                                               write_predictions: Callable[..., Path]) -> None:
    write_predictions(NAIVE_SQL, name="naive.jsonl")
    spec = "--sqleval-backend=predictions:naive.jsonl"
    pytester.runpytest(spec).assert_outcomes(passed=1, failed=5)

    result = pytester.runpytest(spec, "-rA", "-k", "stale_table")
    result.assert_outcomes(failed=1, deselected=5)
    assert _selected(result) == ["q02"]

    fixed = dict(NAIVE_SQL, q02=SHOP_CASES[1]["gold_sql"])
    write_predictions(fixed, name="naive.jsonl")
    pytester.runpytest(spec, "-k", "q02 or q03").assert_outcomes(passed=1, failed=1, deselected=4)
    cache = _error_class_cache(pytester.path)
    assert sorted(k.split("::")[1] for k in cache) == ["q03|naive", "q04|naive", "q05|naive", "q06|naive"]

    # q02 passes now and lost its keyword; q04, not in the last run, kept its entry
    result = pytester.runpytest(spec, "-rA", "-k", "stale_table or wrong_metric or hallucinated_column")
    assert _selected(result) == ["q03", "q04"]


def test_k_error_class_after_an_xdist_run(pytester: pytest.Pytester, shop_suite: Path,
                                          write_predictions: Callable[..., Path]) -> None:
    write_predictions(NAIVE_SQL, name="naive.jsonl")
    spec = "--sqleval-backend=gold,predictions:naive.jsonl"
    first = pytester.runpytest_subprocess(*LEAN, "-n", "2", spec, timeout=120)
    first.assert_outcomes(passed=7, failed=5)
    result = pytester.runpytest(spec, "-rA", "-k", "stale_table")
    result.assert_outcomes(failed=1, deselected=11)
    assert _selected(result) == ["q02[naive]"]
