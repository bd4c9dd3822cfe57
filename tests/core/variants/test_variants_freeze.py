"""``validate`` freezes a suite's database variants and each gold's choice among them into
``variants.frozen.json``: a run on a fresh cache then distils nothing and grades as before,
a variant that builds to other content than was frozen is one clear error, and a run with
other settings (another count) leaves the record alone."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_sqleval import cli
from tests.sqleval_helpers import read_results
from tests.core.variants.test_variants_grading import CASES, PREDICTIONS, write_suite


@pytest.fixture
def suite(pytester: pytest.Pytester) -> Path:
    return write_suite(pytester.path, CASES, PREDICTIONS, 4)


def grade(pytester: pytest.Pytester, cache: str, *extra: str) -> pytest.RunResult:
    return pytester.runpytest("suite", "--sqleval-backend=gold,predictions:preds.jsonl", f"--sqleval-cache-dir={cache}",
                              "-p", "no:cacheprovider", *extra)


def distilled(cache: Path) -> list[Path]:
    return [p for p in (cache / "variants" / "distilled").rglob("*.json")] if cache.exists() else []


def test_a_frozen_suite_distils_nothing_and_grades_the_same(pytester: pytest.Pytester, suite: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["validate", str(suite)]) == 0
    out = capsys.readouterr().out
    assert "golds' choices of 4" in out and "froze the variants" in out
    record = json.loads((suite / "variants.frozen.json").read_text())
    assert [v["kind"].endswith("+boundary") for v in record["variants"]] == [True] * 4  # the golds' rows in each
    assert set(record["choices"]) and len(record["choices"]) == len(CASES)
    assert all(c["variants"] and set(c["variants"]) <= {0, 1, 2, 3} for c in record["choices"].values())

    grade(pytester, "fresh").assert_outcomes(passed=4, failed=2)
    assert distilled(pytester.path / "fresh") == []  # every choice came from the frozen record
    kinds = {(r["case_id"], r["backend"]): r["failure_kind"] for r in read_results(pytester.path)}
    assert kinds[("big", "preds")] == kinds[("exact", "preds")] == "coincidental_pass"

    grade(pytester, "other", "--sqleval-variants=2").assert_outcomes(passed=4, failed=2)
    assert distilled(pytester.path / "other")  # another count: the record is not used, choices are made


def test_a_variant_built_otherwise_than_frozen_is_one_clear_error(pytester: pytest.Pytester, suite: Path) -> None:
    assert cli.main(["validate", str(suite)]) == 0
    path = suite / "variants.frozen.json"
    record = json.loads(path.read_text())
    record["variants"][1]["content_hash"] = "0" * 64
    path.write_text(json.dumps(record))
    result = grade(pytester, "fresh")
    out = result.stdout.str()
    assert result.ret != 0 and "Traceback" not in out
    assert "variants.frozen.json: variant 1" in out and "python -m pytest_sqleval validate" in out
    assert cli.main(["validate", str(suite)]) == 1  # validate says the generator is not stable, and keeps the file
    assert json.loads(path.read_text())["variants"][1]["content_hash"] == "0" * 64


def test_validate_freezes_the_suites_native_variants_as_a_run_builds_them(pytester: pytest.Pytester, suite: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """The suite generator's own variants (its conftest's ``pytest_sqleval_native_variants``)
    are in the pool ``validate`` freezes, as in a run's: every other variant's content depends
    on how many there are, so a record frozen without them was refused by every run."""
    from tests.core.variants.test_variants_native import CONFTEST
    (suite / "conftest.py").write_text(CONFTEST)
    assert cli.main(["validate", str(suite)]) == 0
    capsys.readouterr()
    record = json.loads((suite / "variants.frozen.json").read_text())
    assert [v["kind"] for v in record["variants"]][-1] == "native"
    grade(pytester, "fresh").assert_outcomes(passed=4, failed=2)
    assert distilled(pytester.path / "fresh") == []


def test_a_record_frozen_without_the_runs_native_variants_says_where_validate_asks(
        pytester: pytest.Pytester, suite: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.core.variants.test_variants_native import CONFTEST
    assert cli.main(["validate", str(suite)]) == 0
    (suite / "conftest.py").write_text(CONFTEST)  # a hook the record was not frozen with
    result = grade(pytester, "fresh")
    out = result.stdout.str()
    assert result.ret != 0 and "Traceback" not in out
    assert "frozen with 0 native variant(s)" in out and "this run has 1" in out and "conftest.py" in out
    assert cli.main(["validate", str(suite)]) == 0  # the fix the message gives
    capsys.readouterr()
    grade(pytester, "again").assert_outcomes(passed=4, failed=2)


def test_a_conftest_validate_cannot_import_is_bad_input_naming_it(pytester: pytest.Pytester, suite: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    (suite / "conftest.py").write_text("import no_such_module_here\n\ndef pytest_sqleval_native_variants(): ...\n")
    assert cli.main(["validate", str(suite)]) == 2
    err = capsys.readouterr().err
    assert f"{suite / 'conftest.py'}:1: cannot be imported" in err and "ModuleNotFoundError" in err
    assert "fix: make it importable" in err
    assert not (suite / "variants.frozen.json").exists()


def test_validate_refuses_a_negative_variant_count(suite: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["validate", str(suite), "--variants", "-1"]) == 2
    assert "--variants -1: expected 0 or more variants" in capsys.readouterr().err
    assert not (suite / "variants.frozen.json").exists()


def test_a_frozen_suite_builds_its_variants_where_the_engine_estimates_otherwise(
        pytester: pytest.Pytester, suite: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another DuckDB release estimates the builder's plans otherwise (with filter pushdown
    off, 2 M plan rows became 253 M), so a query one release runs the other refuses, and it
    builds other variants. The record keeps the queries its build refused, and a run
    replays them: the frozen variants build on either. Without the refusals (a record from
    before they were kept), the run stops at the frozen evidence it cannot reproduce."""
    from pytest_sqleval.core.engines import watchdog
    from pytest_sqleval.core.variants import build
    assert cli.main(["validate", str(suite)]) == 0
    path = suite / "variants.frozen.json"
    record = json.loads(path.read_text())
    assert all(isinstance(v["refused"], list) for v in record["variants"])
    monkeypatch.setattr(build, "BUILD_PROCESSES", 1)  # every variant built in this process, under the patch
    monkeypatch.setattr(watchdog, "ROWS_PER_S", watchdog.ROWS_PER_S / 10 ** 7)  # every plan estimated far larger
    grade(pytester, "elsewhere").assert_outcomes(passed=4, failed=2)
    for entry in record["variants"]:
        del entry["refused"]
    path.write_text(json.dumps(record))
    result = grade(pytester, "unreplayed")
    assert result.ret != 0 and "cannot reproduce the frozen evidence" in result.stdout.str()


def test_a_changed_gold_is_refrozen_by_validate_and_a_run_says_to(pytester: pytest.Pytester, suite: Path) -> None:
    """A gold's boundary rows are in every variant, so changing it builds other variants.
    Validate then freezes them afresh (it used to call the generator unstable and keep the
    old file, and the run kept sending the user back to validate); a run before that says
    the record is for other golds and names the fix."""
    assert cli.main(["validate", str(suite)]) == 0
    questions = suite / "questions.jsonl"
    first, *rest = questions.read_text().splitlines()
    case = json.loads(first)
    assert ">= 100" in case["gold_sql"]
    questions.write_text("\n".join([json.dumps({**case, "gold_sql": case["gold_sql"].replace(">= 100", ">= 90")}),
                                    *rest]) + "\n")
    result = grade(pytester, "stale")
    out = result.stdout.str()
    assert result.ret != 0 and "Traceback" not in out
    assert "frozen for other golds than this suite's" in out and "python -m pytest_sqleval validate" in out
    assert cli.main(["validate", str(suite)]) == 0  # no "the variant generator is not stable"
    grade(pytester, "refrozen").assert_outcomes(passed=4, failed=2)
    assert distilled(pytester.path / "refrozen") == []
