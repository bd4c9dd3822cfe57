"""On a first run the golds are analysed in the engine process, beside their execution,
two cases ahead (issue 35): pytest's process parses the first case's gold only, and the
records are those of a run that analyses every gold in pytest's process."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest

GOLDS = ["SELECT count(*) FROM customers", "SELECT max(id) FROM customers", "SELECT id, name FROM customers "
         "WHERE id <= 3 ORDER BY id", "SELECT name FROM customers WHERE id = 2", "SELECT min(id), max(id) FROM customers",
         "SELECT DISTINCT region FROM customers"]
PREDS = ["SELECT count(id) FROM customers", "SELECT max(id) FROM customers", "SELECT id, name FROM customers "
         "WHERE id < 4 ORDER BY id", "SELECT name FROM customers WHERE id = 3", "SELECT min(id), max(id) FROM customers",
         "SELECT nme FROM customers"]

CONFTEST = '''
import json, os
from pytest_sqleval.core.engines.host import EngineHost
from pytest_sqleval.core.grading import gold_analysis, pipeline
real_submit, real_analyse = EngineHost.submit, gold_analysis.analyse

def log(entry):
    with open(os.environ["LOG"], "a") as fh:
        fh.write(json.dumps(entry) + "\\n")

def submit(self, op, payload, **kw):
    log({"op": op, "ahead": kw.get("ahead", False)})
    return real_submit(self, op, payload, **kw)

def analyse(sql, *args, **kw):  # a gold analysed in this, pytest's, process
    log({"op": "analysed here", "sql": sql})
    return real_analyse(sql, *args, **kw)

EngineHost.submit = submit
gold_analysis.analyse = analyse
if os.environ.get("NOT_AHEAD"):  # every gold analysed here, as before the work was moved
    pipeline.SuiteGrader.ask_gold_ahead = lambda self, case: None
    pipeline.SuiteGrader._ask_analysed = lambda self, *a: None
'''


def _run(pytester: pytest.Pytester, name: str, not_ahead: bool) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    log = pytester.path / f"{name}.log"
    if log.exists():
        log.unlink()
    pytester._monkeypatch.setenv("LOG", str(log))
    pytester._monkeypatch.setenv("NOT_AHEAD", "1" if not_ahead else "")
    result = pytester.runpytest_subprocess("suite", "--sqleval-backend=predictions:preds.jsonl", "-p", "no:cacheprovider",
                                           "-p", "no:randomly", f"--sqleval-cache-dir={pytester.path / name}",
                                           f"--sqleval-results={pytester.path / (name + '-results')}")
    result.assert_outcomes(passed=4, failed=2)
    records = [json.loads(line) for line in (pytester.path / (name + "-results") / "results.jsonl").read_text().splitlines()]
    return [json.loads(line) for line in log.read_text().splitlines()], records


def _verdicts(records: list[dict[str, Any]]) -> dict[str, Any]:
    keep = ("status", "error_class", "failure_kind", "explanation", "compare", "exact_match", "no_values_exact_match",
            "normalized_match", "hallucinated_columns", "executed_sql")
    return {r["case_id"]: {**{k: r.get(k) for k in keep},
                           "layers": {k: v for k, v in (r.get("layers") or {}).items() if k != "execution"}}
            for r in records}


def test_a_first_run_analyses_its_golds_in_the_engine_process_and_grades_the_same(
        pytester: pytest.Pytester, make_suite: Callable[..., Path]) -> None:
    make_suite([{"id": f"q{i}", "question": "?", "gold_sql": g} for i, g in enumerate(GOLDS)])
    (pytester.path / "preds.jsonl").write_text("".join(json.dumps({"id": f"q{i}", "sql": p}) + "\n"
                                                       for i, p in enumerate(PREDS)))
    pytester.makeconftest(CONFTEST)
    moved, moved_records = _run(pytester, "moved", not_ahead=False)
    here, here_records = _run(pytester, "here", not_ahead=True)
    assert [e["sql"] for e in moved if e["op"] == "analysed here"] == [GOLDS[0]]  # the first case's, at its setup
    assert len([e for e in here if e["op"] == "analysed here"]) == len(GOLDS)
    assert len([e for e in moved if e["op"] == "analysed_gold"]) == len(GOLDS) - 1
    assert [e for e in moved if e["op"] == "gold"] == [{"op": "gold", "ahead": False}]  # the first case's, at setup
    assert _verdicts(moved_records) == _verdicts(here_records)
    rerun, _ = _run(pytester, "moved", not_ahead=False)  # analyses stored where pytest's process reads them
    assert [e for e in rerun if e["op"] in ("analysed here", "analysed_gold", "gold")] == []
