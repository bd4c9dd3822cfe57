"""Run outputs: results.jsonl and summary.json, identical with and without xdist,
pytest-json-report metadata, and the failure text a person reads."""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Callable

import pytest

from tests.sqleval_helpers import (LEAN, NAIVE_CLASSES, NAIVE_SQL, SHOP_CASES, by_case,  # noqa: F401  (autouse fixture)
                                   read_results, read_summary, sqleval_ini)

SEED_000_FIELDS = {"case_id", "question", "gold_sql", "generated_sql", "parse_ok", "grounding_ok",
                   "hallucinated_tables", "hallucinated_columns", "pass", "backend", "backend_metadata", "schema",
                   "complexity", "category", "error_class", "content_hash"}
VOLATILE = {"elapsed_ms", "grading_ms", "duration_ms", "cached", "run_id", "xdist_workers"}


def strip_volatile(obj: Any) -> Any:
    """Drop timings, cache flags and run ids, at any depth."""
    if isinstance(obj, dict):
        return {k: strip_volatile(v) for k, v in obj.items() if k not in VOLATILE}
    if isinstance(obj, list):
        return [strip_volatile(v) for v in obj]
    return obj


@pytest.fixture
def naive_and_partial(write_predictions: Callable[..., Path], shop_suite: Path) -> str:
    """Two predictions backends: ``naive`` (one right, five wrong in five error classes) and
    ``partial`` (the gold for q01-q05, nothing for q06: a no_prediction failure)."""
    write_predictions(NAIVE_SQL, name="naive.jsonl", model="naive-model", prompt_version="v0")
    write_predictions({c["id"]: c["gold_sql"] for c in SHOP_CASES[:5]}, name="partial.jsonl")
    return "--sqleval-backend=predictions:naive.jsonl,predictions:partial.jsonl"


def test_results_and_summary(pytester: pytest.Pytester, naive_and_partial: str) -> None:
    result = pytester.runpytest(naive_and_partial)
    result.assert_outcomes(passed=6, failed=6, errors=0)
    records = read_results(pytester.path)
    summary = read_summary(pytester.path)
    assert len(records) == 12
    for rec in records:
        assert SEED_000_FIELDS <= set(rec), SEED_000_FIELDS - set(rec)
    naive = by_case([r for r in records if r["backend"] == "naive"])
    cases = {c["id"]: c for c in SHOP_CASES}
    for cid, rec in naive.items():
        assert rec["question"] == cases[cid]["question"]
        assert rec["gold_sql"] == cases[cid]["gold_sql"]
        assert rec["generated_sql"] == NAIVE_SQL[cid]
        assert (rec["complexity"], rec["category"], rec["schema"]) == (cases[cid]["complexity"],
                                                                      cases[cid]["category"], None)
        assert rec["pass"] is (NAIVE_CLASSES[cid] is None)
        assert rec["error_class"] == NAIVE_CLASSES[cid], cid
        assert rec["parse_ok"] is True
        assert rec["backend_metadata"] == {"model": "naive-model", "prompt_version": "v0"}
        assert rec["content_hash"] == summary["suites"]["suite"]["content_hash"]
    assert naive["q03"]["grounding_ok"] is False
    assert [(h["name"], h["line"], h["col"]) for h in naive["q03"]["hallucinated_columns"]] == [("is_deleted", 2, 7)]
    assert naive["q03"]["hallucinated_tables"] == []
    assert naive["q01"]["grounding_ok"] is True and naive["q01"]["hallucinated_columns"] == []
    assert naive["q02"]["stale_tables"] == ["orders_old"]

    b = summary["backends"]
    assert {k: b["naive"][k] for k in ("cases", "passed", "failed", "errors")} == {
        "cases": 6, "passed": 1, "failed": 5, "errors": 0}
    assert b["naive"]["pass_rate"] == pytest.approx(1 / 6, abs=1e-6)
    assert b["naive"]["parse_rate"] == 1.0
    assert b["naive"]["grounding_rate"] == pytest.approx(5 / 6, abs=1e-6)
    assert b["naive"]["error_classes"] == {"hallucinated_column": 1, "stale_table": 1, "wrong_metric": 1,
                                           "wrong_join": 1, "other": 1}
    # a missing prediction is a wrong answer: it counts against the pass rate and execution accuracy alike
    assert (b["partial"]["passed"], b["partial"]["failed"], b["partial"]["errors"]) == (5, 1, 0)
    assert b["partial"]["pass_rate"] == b["partial"]["execution_accuracy"] == pytest.approx(5 / 6, abs=1e-6)
    assert b["partial"]["case_errors"] == {} and b["partial"]["no_prediction"] == 1
    assert b["partial"]["error_classes"] == {**dict.fromkeys(b["naive"]["error_classes"], 0), "other": 1}
    assert summary["overall"]["cases"] == 12 and summary["overall"]["passed"] == 6
    assert b["naive"]["slices"]["difficulty"]["hard"]["cases"] == 2
    assert b["naive"]["slices"]["category"]["customers"]["passed"] == 1
    assert summary["cases_expected"] == 12 and summary["cases_lost"] == 0
    assert summary["run"]["exit_status"] == result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*sqleval summary*", "backend naive: 6 cases, 1 passed, 5 failed, 0 errors*"])


def test_failure_text_shows_question_sqls_class_and_evidence(pytester: pytest.Pytester, shop_suite: Path,
                                                             write_predictions: Callable[..., Path]) -> None:
    write_predictions(NAIVE_SQL, name="naive.jsonl")
    result = pytester.runpytest("--sqleval-backend=predictions:naive.jsonl")
    out = result.stdout.str()
    sections = {cid: _section(out, cid) for cid in NAIVE_SQL if cid != "q01"}
    cases = {c["id"]: c for c in SHOP_CASES}
    for cid, text in sections.items():
        assert f"{cid} [naive]: {NAIVE_CLASSES[cid]} (" in text
        assert f"question: {cases[cid]['question']}" in text
        assert NAIVE_SQL[cid].splitlines()[0] in text.split("predicted SQL:")[1].split("gold SQL:")[0]
        assert cases[cid]["gold_sql"] in text.split("gold SQL:")[1]
    assert "deprecated tables referenced: orders_old" in sections["q02"]
    assert "hallucinated columns: is_deleted (line 2, col 7)" in sections["q03"]
    assert "missing_column" in sections["q03"]
    q04 = sections["q04"]  # the differing rows, both sides
    assert "gold rows missing from the prediction:\n      ('complete', 182)" in q04
    assert "predicted rows not in the gold:\n      ('complete', 40)" in q04
    assert "extra join to order_lines" in sections["q05"]
    assert "1 columns where the gold has 2" in sections["q06"]
    assert "Traceback" not in out


def _section(out: str, cid: str) -> str:
    """One failure's text: from its ``____ q0N [naive] ____`` header to the next header."""
    start = out.index(f" {cid} [naive] _")
    rest = out[start:].split("\n", 1)[1]
    end = min(i for i in (rest.find("\n___"), rest.find("\n==="), len(rest)) if i >= 0)
    return rest[:end]


def test_results_under_xdist_equal_serial(pytester: pytest.Pytester, naive_and_partial: str) -> None:
    pytester.runpytest(naive_and_partial).assert_outcomes(passed=6, failed=6, errors=0)
    serial_results = read_results(pytester.path)
    serial_summary = read_summary(pytester.path)
    shutil.rmtree(pytester.path / "sqleval-results")

    result = pytester.runpytest_subprocess(*LEAN, "-n", "2", naive_and_partial, timeout=120)
    result.assert_outcomes(passed=6, failed=6, errors=0)
    xdist_summary = read_summary(pytester.path)
    assert xdist_summary["run"]["xdist_workers"] == 2
    assert strip_volatile(read_results(pytester.path)) == strip_volatile(serial_results)
    assert strip_volatile(xdist_summary) == strip_volatile(serial_summary)


def test_json_report_carries_records_and_the_gated_exit_code(pytester: pytest.Pytester, shop_suite: Path,
                                                             write_predictions: Callable[..., Path]) -> None:
    write_predictions(NAIVE_SQL, name="naive.jsonl")
    args = ["--sqleval-backend=predictions:naive.jsonl", "--json-report", "--json-report-file=report.json"]
    for gate, expected in (("0.1", pytest.ExitCode.OK), ("0.5", pytest.ExitCode.TESTS_FAILED)):
        result = pytester.runpytest(*args, f"--sqleval-min-pass-rate={gate}")
        assert result.ret == expected
        report = json.loads((pytester.path / "report.json").read_text())
        assert report["exitcode"] == result.ret, gate
    tests = {t["nodeid"].split("::")[-1]: t for t in report["tests"]}
    assert sorted(tests) == sorted(NAIVE_SQL)
    for cid, entry in tests.items():
        record = entry["metadata"]["sqleval"]
        assert record["case_id"] == cid
        assert record["error_class"] == NAIVE_CLASSES[cid]
        assert entry["outcome"] == ("passed" if NAIVE_CLASSES[cid] is None else "failed")


def test_the_sink_takes_the_typed_record_its_item_offers_not_a_copy_read_back(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Serial: the item that graded a case offers its record with the JSON object its report
    carries; the sink keeps that record, where it read every one back from JSON (issue 35).
    A report whose object is another (a worker's, a plugin's edit) is read from its JSON."""
    from types import SimpleNamespace

    from pytest_sqleval.core.records import CaseRecord
    from pytest_sqleval.reports.sink import ResultsSink, lean_record
    reads = []
    real = CaseRecord.from_json_dict.__func__  # type: ignore[attr-defined]
    monkeypatch.setattr(CaseRecord, "from_json_dict",
                        classmethod(lambda cls, data, **kw: reads.append(data) or real(cls, data, **kw)))
    sink = ResultsSink(tmp_path / "results", "run1")
    try:
        def report(nodeid: str, data: dict[str, Any]) -> Any:
            return SimpleNamespace(nodeid=nodeid, failed=False, duration=0.1,
                                   user_properties=[("sqleval_case", nodeid), ("sqleval", data)])
        mine = CaseRecord(backend="gold", status="passed", case_id="q1", nodeid="s/q.jsonl::q1")
        data = mine.to_json_dict()
        sink.offer(mine.nodeid, mine, data)
        sink.on_report(report(mine.nodeid, data))
        assert sink.records[mine.nodeid] == lean_record(mine) and reads == []  # kept lean (the journal has it whole)
        other = CaseRecord(backend="gold", status="failed", case_id="q2", nodeid="s/q.jsonl::q2")
        sink.offer(other.nodeid, other, other.to_json_dict())
        sink.on_report(report(other.nodeid, dict(other.to_json_dict(), extra_field=1)))
        assert len(reads) == 1 and sink.records[other.nodeid].extra == {"extra_field": 1}
        lines = (tmp_path / "results").glob(".results.run1.*.partial.jsonl")
        assert [json.loads(x)["case_id"] for x in next(lines).read_text().splitlines()] == ["q1", "q2"]
    finally:
        sink.close_journal(remove=True)
