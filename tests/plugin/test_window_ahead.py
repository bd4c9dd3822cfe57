"""A window of cases sent to the engine ahead of their turn (issue 35): while pytest grades
and reports one case, the golds of the next ``GOLD_CASES_AHEAD`` are asked and the
executions of the next ``CASES_AHEAD`` sent once their golds are answered, so the engine
process is not idle waiting for pytest. What a user relies on: the window is bounded (what
this process keeps ahead and what waits in the engine's pipe), and every case's record is
the one a run without the window writes, a case whose gold fails in the middle of the
window included: it gets its own clear error, and its neighbours their own verdicts."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest

from pytest_sqleval.core.grading.pipeline import CASES_AHEAD, GOLD_CASES_AHEAD

GOLDS = ["SELECT count(*) FROM customers", "SELECT max(id) FROM customers",
         "SELECT id, name FROM customers WHERE id <= 3 ORDER BY id", "SELECT name FROM customers WHERE id = 2",
         "SELECT nope FROM customers",  # fails on the database: the case's own error
         "SELECT min(id), max(id) FROM customers", "SELECT DISTINCT region FROM customers",
         "SELECT id FROM customers WHERE id < 0",  # no rows: an empty gold, the case's own error
         "SELECT count(*) FROM orders", "SELECT max(id) FROM orders", "SELECT count(DISTINCT region) FROM customers",
         "SELECT id FROM customers ORDER BY id LIMIT 2",
         "SELECT id FROM customers ORDER BY id LIMIT 2"]  # a paraphrased question: the same gold, the same prediction
PREDS = ["SELECT count(id) FROM customers", "SELECT max(id) FROM customers",
         "SELECT id, name FROM customers WHERE id < 4 ORDER BY id", "SELECT name FROM customers WHERE id = 3",
         "SELECT id FROM customers", "SELECT min(id), max(id) FROM customers", "SELECT nme FROM customers",
         "SELECT id FROM customers", "SELECT count(*) FROM orders", "SELECT min(id) FROM orders",
         "SELECT count(region) FROM customers", "SELECT id FROM customers ORDER BY id LIMIT 2",
         "SELECT id FROM customers ORDER BY id LIMIT 2"]

CONFTEST = '''
import json, os
from pytest_sqleval.core.grading import pipeline
real_submit, real_walk = pipeline.SuiteGrader.submit, pipeline.SuiteGrader._walk_ahead
if os.environ.get("NO_WINDOW"):  # no case further ahead than the next, whose execution goes at the end of ours
    pipeline.CASES_AHEAD = pipeline.GOLD_CASES_AHEAD = 0

def submit(self, sql, gold):
    real_submit(self, sql, gold)
    process = self.host.process
    with open(os.environ["LOG"], "a") as fh:  # what is kept ahead, each time a case is sent ahead
        fh.write(json.dumps({"graded_ahead": len(self._ahead), "golds_ahead": len(self._analysed_ahead),
                             "unread": len(process.pending), "held": len(process.held)}) + "\\n")

def walk(self, sql, gold, ahead=False):
    if not ahead:  # a case whose execution was not sent ahead: sent at its own turn
        with open(os.environ["LOG"], "a") as fh:
            fh.write(json.dumps({"at_its_turn": sql}) + "\\n")
    return real_walk(self, sql, gold, ahead)

pipeline.SuiteGrader.submit = submit
pipeline.SuiteGrader._walk_ahead = walk
'''


def _run(pytester: pytest.Pytester, name: str, window: bool, *extra: str) -> tuple[Any, list[dict[str, Any]],
                                                                                    list[dict[str, Any]]]:
    log = pytester.path / f"{name}.log"
    log.write_text("")
    pytester._monkeypatch.setenv("LOG", str(log))
    pytester._monkeypatch.setenv("NO_WINDOW", "" if window else "1")
    results = pytester.path / f"{name}-results"
    outcome = pytester.runpytest_subprocess("suite", "--sqleval-backend=predictions:preds.jsonl", "-p", "no:cacheprovider",
                                            "-p", "no:randomly", f"--sqleval-cache-dir={pytester.path / name}",
                                            f"--sqleval-results={results}", *extra)
    records = [json.loads(line) for line in (results / "results.jsonl").read_text().splitlines()]
    return outcome, [json.loads(line) for line in log.read_text().splitlines()], records


def _verdicts(records: list[dict[str, Any]]) -> dict[str, Any]:
    keep = ("status", "error_class", "failure_kind", "explanation", "case_error", "case_error_kind", "compare",
            "exact_match", "no_values_exact_match", "normalized_match", "executed_sql", "sidebyside")
    return {r["case_id"]: {**{k: r.get(k) for k in keep},
                           "layers": {k: v for k, v in (r.get("layers") or {}).items() if k != "execution"}}
            for r in records}


@pytest.fixture
def suite(pytester: pytest.Pytester, make_suite: Callable[..., Path]) -> None:
    make_suite([{"id": f"q{i:02d}", "question": "?", "gold_sql": g} for i, g in enumerate(GOLDS)])
    (pytester.path / "preds.jsonl").write_text("".join(json.dumps({"id": f"q{i:02d}", "sql": p}) + "\n"
                                                       for i, p in enumerate(PREDS)))
    pytester.makeconftest(CONFTEST)


@pytest.mark.usefixtures("suite")
def test_the_window_is_bounded_and_every_record_is_the_one_without_it(pytester: pytest.Pytester) -> None:
    for rerun in (False, True):  # a first run (golds analysed and run in the engine) and a rerun (golds stored)
        windowed, log, records = _run(pytester, "window", True)
        plain, _, plain_records = _run(pytester, "plain", False)
        windowed.assert_outcomes(passed=7, failed=4, errors=2)
        plain.assert_outcomes(passed=7, failed=4, errors=2)
        assert _verdicts(records) == _verdicts(plain_records), f"rerun={rerun}"
        assert len(records) == len(GOLDS)
        sent = [e for e in log if "graded_ahead" in e]
        assert max(e["graded_ahead"] for e in sent) <= CASES_AHEAD + 1  # this case's own, and the window's
        assert max(e["golds_ahead"] for e in sent) <= GOLD_CASES_AHEAD
        if rerun:  # every gold stored: each case's execution goes as soon as it enters the window,
            assert max(e["graded_ahead"] for e in sent) == CASES_AHEAD + 1
            assert [e for e in log if "at_its_turn" in e] == []  # the paraphrased question's too
    errors = {r["case_id"]: r for r in records if r["status"] == "error"}
    assert sorted(errors) == ["q04", "q07"]
    assert "gold query fails on the database" in errors["q04"]["case_error"]
    assert "gold query returns no rows" in errors["q07"]["case_error"]
    assert all(r["status"] in ("passed", "failed") for r in records if r["case_id"] not in errors)


@pytest.mark.usefixtures("suite")
def test_x_stops_at_the_first_failure_whatever_was_sent_ahead(pytester: pytest.Pytester) -> None:
    """-x: the cases sent ahead of the first failure are never reported, recorded or
    waited for; the run ends at once, and a rerun grades them as ever."""
    outcome, _, records = _run(pytester, "x", True, "-x")
    outcome.assert_outcomes(passed=3, failed=1)  # q03 is the first to fail
    assert [r["case_id"] for r in records] == ["q00", "q01", "q02", "q03"]
    _, _, rerun = _run(pytester, "x", True)
    _, _, plain = _run(pytester, "plain", False)
    assert _verdicts(rerun) == _verdicts(plain)
