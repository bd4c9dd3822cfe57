"""Collection: one item per case (and backend), only manifest-owned JSONL, bad input as
one clear collection error, labels as markers."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any, Callable

import pytest

from tests.sqleval_helpers import SHOP_CASES, sqleval_ini  # noqa: F401  (autouse fixture)

IDS = [c["id"] for c in SHOP_CASES]


def collected(result: pytest.RunResult) -> list[str]:
    return [line.strip() for line in result.outlines if "::" in line and not line.startswith(" ")]


def assert_clean_error(result: pytest.RunResult) -> str:
    """A user error: no traceback, no INTERNALERROR; returns the whole output."""
    out = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in out, out
    assert "INTERNALERROR" not in out, out
    return out


def test_one_item_per_case(pytester: pytest.Pytester, shop_suite: Path) -> None:
    result = pytester.runpytest("--collect-only", "-q")
    assert result.ret == pytest.ExitCode.OK
    assert collected(result) == [f"suite/questions.jsonl::{cid}" for cid in IDS]


def test_one_item_per_case_and_backend(pytester: pytest.Pytester, shop_suite: Path,
                                       write_predictions: Callable[..., Path]) -> None:
    write_predictions({"q01": "SELECT 1"}, name="naive.jsonl")
    result = pytester.runpytest("--collect-only", "-q", "--sqleval-backend=gold,predictions:naive.jsonl")
    assert result.ret == pytest.ExitCode.OK
    assert collected(result) == [f"suite/questions.jsonl::{cid}[{b}]" for cid in IDS for b in ("gold", "naive")]


def test_repeated_backend_labels_stay_distinct(pytester: pytest.Pytester, shop_suite: Path) -> None:
    result = pytester.runpytest("--collect-only", "-q", "--sqleval-backend=gold,gold")
    assert collected(result)[:2] == ["suite/questions.jsonl::q01[gold]", "suite/questions.jsonl::q01[gold2]"]


def test_only_jsonl_named_by_a_manifest_is_collected(pytester: pytest.Pytester, shop_suite: Path) -> None:
    (pytester.path / "data").mkdir()
    (pytester.path / "data" / "questions.jsonl").write_text("this is not json\n")  # no manifest here
    (shop_suite / "drafts.jsonl").write_text("{broken\n")  # next to a manifest that names another file
    (pytester.path / "stray.jsonl").write_text(json.dumps(SHOP_CASES[0]) + "\n")
    result = pytester.runpytest("--collect-only", "-q")
    assert result.ret == pytest.ExitCode.OK
    assert collected(result) == [f"suite/questions.jsonl::{cid}" for cid in IDS]
    assert "error" not in result.stdout.str().lower()


GOOD = {"id": "q01", "question": "How many customers?", "gold_sql": "SELECT count(*) FROM customers"}
BAD_LINES = {
    "invalid_json": ('{"id": "q02", "question": "x", "gold_sql": "SELECT 1"', None, "not valid JSON"),
    "missing_gold_sql": (json.dumps({"id": "q02", "question": "x", "gold": "SELECT 1"}), "gold_sql", "missing"),
    "non_string_question": (json.dumps({"id": "q02", "question": 42, "gold_sql": "SELECT 1"}), "question",
                            "must be a non-empty string"),
    "bad_tags_type": (json.dumps({**GOOD, "id": "q02", "tags": {"a": 1}}), "tags", "list of strings"),
    "duplicate_id": (json.dumps(GOOD), "id", "duplicate id 'q01' (first on line 1)"),
    "bad_expected_shape": (json.dumps({**GOOD, "id": "q02", "expected_shape": "matrix"}), "expected_shape",
                           "scalar, table, empty"),
}


@pytest.mark.parametrize("kind", list(BAD_LINES))
def test_bad_jsonl_line_is_one_collection_error(pytester: pytest.Pytester, make_suite: Callable[..., Path],
                                                kind: str) -> None:
    line, field, problem = BAD_LINES[kind]
    make_suite(json.dumps(GOOD) + "\n" + line + "\n")
    result = pytester.runpytest()
    out = assert_clean_error(result)
    assert result.ret == pytest.ExitCode.INTERRUPTED  # what pytest returns for collection errors
    result.assert_outcomes(errors=1)
    assert "suite/questions.jsonl:2: " in out
    if field:
        assert f"field '{field}'" in out
    assert problem in out
    assert "fix: " in out


BAD_MANIFESTS = {
    "unknown_key": ('databse = "other.duckdb"\n', ["sqleval.toml:6", "field 'databse'", "did you mean 'database'",
                                                   "fix: known keys"]),
    "bad_toml": ("[limits\ntimeout_s = 1\n", ["sqleval.toml", "not valid TOML", "fix: "]),
    "unknown_section": ("[limit]\ntimeout_s = 1\n", ["unknown section [limit]", "did you mean 'limits'"]),
    "bad_limit_type": ('[limits]\ntimeout_s = "soon"\n', ["field 'limits.timeout_s'",
                                                                 "expected a finite number of seconds greater than 0"]),
}


@pytest.mark.parametrize("kind", list(BAD_MANIFESTS))
def test_bad_manifest_is_one_clear_error(pytester: pytest.Pytester, make_suite: Callable[..., Path],
                                         kind: str) -> None:
    extra, needles = BAD_MANIFESTS[kind]
    make_suite(SHOP_CASES, manifest_extra=extra)
    result = pytester.runpytest()
    out = assert_clean_error(result)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.assert_outcomes(errors=1)
    for needle in needles:
        assert needle in out


def test_manifest_naming_a_missing_database_is_one_clear_error(pytester: pytest.Pytester,
                                                               make_suite: Callable[..., Path]) -> None:
    make_suite(SHOP_CASES, database=pytester.path / "nowhere.duckdb")
    result = pytester.runpytest()
    out = assert_clean_error(result)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.assert_outcomes(errors=1)
    assert "sqleval.toml:4: field 'suite.database'" in out
    assert "nowhere.duckdb does not exist" in out
    assert "fix: " in out


@pytest.mark.parametrize("suite_keys, needles", [
    ('questions = "question.jsonl"', ["sqleval.toml:3: field 'suite.questions'", "question.jsonl does not exist"]),
    ('question = "questions.jsonl"', ["field 'question'", "did you mean 'questions'"]),
], ids=["questions_file_missing", "questions_key_misspelt"])
def test_a_manifest_no_questions_file_answers_to_is_still_an_error(pytester: pytest.Pytester, shop_db: Path,
                                                                    suite_keys: str, needles: list[str]) -> None:
    """Otherwise a typo in the manifest ends as a silent "no tests ran"."""
    root = pytester.path / "suite"
    root.mkdir()
    (root / "questions.jsonl").write_text(json.dumps(GOOD) + "\n")
    (root / "sqleval.toml").write_text(f'[suite]\nname = "s"\n{suite_keys}\ndatabase = "{shop_db}"\n')
    result = pytester.runpytest()
    out = assert_clean_error(result)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.assert_outcomes(errors=1)
    for needle in needles:
        assert needle in out


@pytest.mark.parametrize("expr, expected", [
    ("revenue", ["q04", "q05"]),  # tag
    ("easy and not stale_trap", ["q01"]),  # difficulty and tag
    ("customers", ["q01", "q03"]),  # category
    ("t_3_tables", ["q03"]),  # a tag that is not an identifier: "3 tables"
])
def test_labels_are_markers_even_with_strict_markers(pytester: pytest.Pytester, shop_suite: Path,
                                                     expr: str, expected: list[str]) -> None:
    result = pytester.runpytest("--collect-only", "-q", "--strict-markers", "-m", expr)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    assert collected(result) == [f"suite/questions.jsonl::{cid}" for cid in expected]


def test_marker_selection_runs_under_strict_markers(pytester: pytest.Pytester, shop_suite: Path) -> None:
    result = pytester.runpytest("--strict-markers", "-m", "revenue")
    assert result.ret == pytest.ExitCode.OK
    result.assert_outcomes(passed=2, deselected=4)


@pytest.fixture
def spawned(monkeypatch: pytest.MonkeyPatch) -> list[subprocess.Popen[bytes]]:
    """Every engine process the runs of a test start (real ones), in order."""
    from pytest_sqleval.core.engines import host
    procs: list[subprocess.Popen[bytes]] = []
    real_spawn = host.spawn_child

    def spawn(*args: Any) -> subprocess.Popen[bytes]:
        procs.append(real_spawn(*args))
        return procs[-1]

    monkeypatch.setattr(host, "spawn_child", spawn)
    return procs


def test_engine_starts_once_as_collection_reads_the_suite_and_grades_its_cases(
        pytester: pytest.Pytester, shop_suite: Path, spawned: list[subprocess.Popen[bytes]]) -> None:
    """The engine process is started as collection reads the suite (its start-up overlaps
    the rest of collection) and that same process grades the cases; it ends with the run."""
    pytester.runpytest_inprocess("-q").assert_outcomes(passed=len(IDS))
    assert len(spawned) == 1
    assert spawned[0].poll() is not None


@pytest.mark.parametrize("args", [
    ["--collect-only", "-q"],
    ["-q", "-k", "no_such_case"],  # every case deselected
    ["-q", "-m", "no_such_label"],
    ["-q", "--fixtures"],
    ["--help"],
], ids=["collect-only", "k-selects-nothing", "m-selects-nothing", "fixtures", "help"])
def test_a_run_that_grades_nothing_starts_no_engine_process(
        pytester: pytest.Pytester, shop_suite: Path, spawned: list[subprocess.Popen[bytes]], args: list[str]) -> None:
    result = pytester.runpytest_inprocess(*args)
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    assert spawned == []


@pytest.mark.parametrize("listing", ["--setup-plan", "--setup-only"])
def test_a_run_that_only_shows_setups_grades_nothing_and_keeps_the_last_results(
        pytester: pytest.Pytester, shop_suite: Path, spawned: list[subprocess.Popen[bytes]], listing: str) -> None:
    """``--setup-plan`` / ``--setup-only`` run no test: no case is graded, none is reported
    lost, and the results of the last real run are neither overwritten nor emptied."""
    pytester.runpytest_inprocess("-q").assert_outcomes(passed=len(IDS))
    results = pytester.path / "sqleval-results"
    before = {name: (results / name).read_bytes() for name in ("results.jsonl", "summary.json")}
    spawned.clear()
    result = pytester.runpytest_inprocess("-q", listing)
    out = result.stdout.str()
    assert result.ret == pytest.ExitCode.OK, out
    assert "LOST" not in out and "INTERNALERROR" not in out, out
    assert spawned == []
    assert {name: (results / name).read_bytes() for name in before} == before


CHILDREN = Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children")  # Linux: this thread's child processes


@pytest.mark.skipif(not CHILDREN.exists(), reason="reads the child processes from /proc")
def test_an_engine_started_for_cases_a_plugin_then_deselects_ends_with_collection(
        pytester: pytest.Pytester, shop_suite: Path, spawned: list[subprocess.Popen[bytes]]) -> None:
    """A deselection no option announces (a plugin's) is seen only once collection ends:
    the process started as the suite was read is ended then, not left running to the end."""
    pytester.makeconftest(f"""
        import pytest
        from pathlib import Path

        @pytest.hookimpl(trylast=True)
        def pytest_collection_modifyitems(config, items):
            config.hook.pytest_deselected(items=list(items))
            items[:] = []

        def pytest_sessionfinish(session):
            Path("children.txt").write_text(Path({str(CHILDREN)!r}).read_text())
    """)
    result = pytester.runpytest_inprocess("-q")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED, result.stdout.str()
    assert len(spawned) == 1
    assert str(spawned[0].pid) not in (pytester.path / "children.txt").read_text().split()


def test_a_run_interrupted_during_collection_leaves_no_engine_process(
        pytester: pytest.Pytester, shop_suite: Path, spawned: list[subprocess.Popen[bytes]]) -> None:
    """Ctrl-C after the suite was read (its engine process started and opening the
    database) but before collection ended: the run stops and the process is gone."""
    pytester.makeconftest("""
        def pytest_collection_modifyitems(items):
            raise KeyboardInterrupt
    """)
    result = pytester.runpytest_inprocess("-q", no_reraise_ctrlc=True)
    assert result.ret == pytest.ExitCode.INTERRUPTED, result.stdout.str()
    assert len(spawned) == 1
    assert spawned[0].poll() is not None


def test_an_xdist_controller_starts_no_engine_process(
        pytester: pytest.Pytester, shop_suite: Path, spawned: list[subprocess.Popen[bytes]]) -> None:
    """Under ``-n 2`` the workers grade, each with its own engine process; the controller
    (this process) grades nothing and starts none."""
    pytester.runpytest_inprocess("-n", "2", "-q").assert_outcomes(passed=len(IDS))
    assert spawned == []


def test_an_unexpected_collection_failure_is_reported_not_a_crash(pytester: pytest.Pytester, shop_suite: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A failure that is not a user error (not a SqlevalError) gets pytest's own report of a
    collection error, with its traceback, rather than crashing the report of it."""
    import pytest_sqleval.core.cases as cases

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the reader fell over")

    monkeypatch.setattr(cases, "collect_cases", broken)
    result = pytester.runpytest_inprocess("--collect-only", "-q")
    out = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.INTERRUPTED, out
    assert "RuntimeError: the reader fell over" in out
    assert "INTERNALERROR" not in out
