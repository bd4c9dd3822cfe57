"""Numbers and folders a user gives are checked before anything runs: one usage error
(exit code 4) that names the option, what it accepts and the fix, no traceback, no case
generated or graded. Manifest numbers go through the same parsers, as collection errors
naming file, line and key."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from tests.sqleval_helpers import INI, SHOP_CASES, sqleval_ini  # noqa: F401  (autouse fixture)

#: every numeric option, with what its message must say it accepts
NUMERIC_OPTIONS = {
    "--sqleval-concurrency": "a whole number from 1 to 1024",
    "--sqleval-generation-timeout": "a finite number of seconds greater than 0 and at most 86400",
    "--sqleval-variants": "a whole number from 0 to 64",
    "--sqleval-min-pass-rate": "a finite number from 0 to 1",
}
BAD_NUMBERS = ["0", "-1", "nan", "inf", "abc"]
#: values some options accept: 0 variants and a pass rate of 0 are legitimate
ACCEPTED = {("--sqleval-variants", "0"), ("--sqleval-min-pass-rate", "0")}


def _assert_usage_error(result: pytest.RunResult, needles: list[str], calls: list[str], root: Path) -> None:
    out = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR, out
    assert "Traceback" not in out and "INTERNALERROR" not in out, out
    for needle in needles:
        assert needle in out, out
    assert calls == [], "a case was generated before the error"
    assert not (root / "sqleval-results").exists(), "a case was graded before the error"


@pytest.mark.parametrize("option, value", [(o, v) for o in NUMERIC_OPTIONS for v in BAD_NUMBERS
                                           if (o, v) not in ACCEPTED])
def test_a_bad_number_on_the_command_line_is_one_usage_error(
        pytester: pytest.Pytester, make_suite: Callable[..., Path], recording_backend: Callable[[], list[str]],
        option: str, value: str) -> None:
    make_suite(SHOP_CASES[:2])
    result = pytester.runpytest("--sqleval-backend=recbackend:generate", f"{option}={value}")
    _assert_usage_error(result, [option, NUMERIC_OPTIONS[option], repr(value)], recording_backend(), pytester.path)


@pytest.mark.parametrize("value", ["-0.5", "1.5", "nan", "inf", "abc"])
def test_a_bad_number_in_the_ini_goes_through_the_options_parser(
        pytester: pytest.Pytester, make_suite: Callable[..., Path], recording_backend: Callable[[], list[str]],
        value: str) -> None:
    pytester.makeini(f"{INI}sqleval_min_pass_rate = {value}\n")
    make_suite(SHOP_CASES[:2])
    result = pytester.runpytest("--sqleval-backend=recbackend:generate")
    _assert_usage_error(result, ["sqleval_min_pass_rate", "--sqleval-min-pass-rate", NUMERIC_OPTIONS[
        "--sqleval-min-pass-rate"]], recording_backend(), pytester.path)


def test_good_numbers_still_run(pytester: pytest.Pytester, make_suite: Callable[..., Path],
                                recording_backend: Callable[[], list[str]]) -> None:
    make_suite(SHOP_CASES[:2])
    result = pytester.runpytest("--sqleval-backend=recbackend:generate", "--sqleval-concurrency=2",
                                "--sqleval-generation-timeout=30", "--sqleval-variants=0", "--sqleval-min-pass-rate=0.5")
    result.assert_outcomes(passed=2)
    assert result.ret == pytest.ExitCode.OK


@pytest.mark.parametrize("section, key, value, accepted", [
    ("limits", "timeout_s", "0", "greater than 0"),
    ("limits", "timeout_s", "nan", "greater than 0"),
    ("limits", "timeout_s", "inf", "greater than 0"),
    ("limits", "timeout_s", "-1", "greater than 0"),
    ("limits", "max_rows", "0", "a whole number at least 1"),
    ("limits", "max_bytes", "-1", "a whole number at least 1"),
    ("limits", "threads", "0", "a whole number from 1 to 1024"),
    ("compare", "float_rel_tol", "nan", "a finite number at least 0"),
    ("compare", "float_abs_tol", "-inf", "a finite number at least 0"),
    ("variants", "count", "65", "a whole number from 0 to 64"),
    ("variants", "seed", "-1", "a whole number at least 0"),
])
def test_a_bad_number_in_the_manifest_names_file_line_key_and_range(
        pytester: pytest.Pytester, make_suite: Callable[..., Path], recording_backend: Callable[[], list[str]],
        section: str, key: str, value: str, accepted: str) -> None:
    make_suite(SHOP_CASES[:2], manifest_extra=f"[{section}]\n{key} = {value}\n")
    result = pytester.runpytest("--sqleval-backend=recbackend:generate")
    out = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.INTERRUPTED, out  # a collection error, as every manifest mistake
    assert "Traceback" not in out and "INTERNALERROR" not in out, out
    assert "sqleval.toml:7" in out and f"field '{section}.{key}'" in out and accepted in out, out
    assert recording_backend() == []


@pytest.mark.parametrize("option", ["--sqleval-results", "--sqleval-cache-dir", "--sqleval-ablation-dir"])
def test_an_output_folder_that_cannot_be_made_is_one_usage_error_before_grading(
        pytester: pytest.Pytester, make_suite: Callable[..., Path], recording_backend: Callable[[], list[str]],
        option: str) -> None:
    make_suite(SHOP_CASES[:2])
    (pytester.path / "afile").write_text("not a folder")
    result = pytester.runpytest("--sqleval-backend=recbackend:generate", f"{option}=afile/out")
    _assert_usage_error(result, [f"{option}={pytester.path / 'afile' / 'out'}", "is a file, not a folder",
                                 f"fix: point {option} at a folder you can write"], recording_backend(), pytester.path)


def test_an_output_path_that_is_a_file_is_one_usage_error(
        pytester: pytest.Pytester, make_suite: Callable[..., Path], recording_backend: Callable[[], list[str]]) -> None:
    make_suite(SHOP_CASES[:2])
    (pytester.path / "afile").write_text("not a folder")
    result = pytester.runpytest("--sqleval-backend=recbackend:generate", "--sqleval-results=afile")
    _assert_usage_error(result, ["--sqleval-results=", "it exists and is not a folder"], recording_backend(),
                        pytester.path)


def test_a_default_results_folder_that_cannot_be_made_stops_before_grading(
        pytester: pytest.Pytester, make_suite: Callable[..., Path], recording_backend: Callable[[], list[str]]) -> None:
    make_suite(SHOP_CASES[:2])
    (pytester.path / "sqleval-results").write_text("a file where the default folder goes")
    result = pytester.runpytest("--sqleval-backend=recbackend:generate")
    out = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR, out
    assert "Traceback" not in out and "INTERNALERROR" not in out, out
    assert "--sqleval-results=" in out and "it exists and is not a folder" in out, out
    assert recording_backend() == []


def test_an_unusable_output_folder_does_not_stop_a_run_without_benchmarks(pytester: pytest.Pytester) -> None:
    """The default folders are checked only when cases are to run: an ordinary test run is untouched."""
    pytester.makepyfile(test_plain="def test_ok():\n    pass\n")
    (pytester.path / "sqleval-results").write_text("a file")
    pytester.runpytest().assert_outcomes(passed=1)
