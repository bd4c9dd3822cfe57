"""The controller holds no case's evidence once its record is in the journal (issue 35:
a 10,000-case run under 400 MB), and the outputs it then streams (results.jsonl,
summary.json, report.html) are byte for byte those built from every record whole."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import pytest

from pytest_sqleval.core.records import CaseRecord
from pytest_sqleval.reports import html
from pytest_sqleval.reports.summary import summarize
from tests.sqleval_helpers import NAIVE_SQL, SHOP_CASES, read_results, sqleval_ini  # noqa: F401  (autouse fixture)

# Run inside the inner pytest, after the plugin has written the run's outputs: what the
# controller still holds of each case, written down for the test to read.
HELD = '''
import json
import pytest

@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session):
    from pytest_sqleval.plugin.items import SESSION_KEY
    sink = session.config.stash[SESSION_KEY].sink
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    reports = [r for reps in reporter.stats.values() for r in reps if hasattr(r, "user_properties")]
    held = {
        "records": len(sink.records),
        "reports_with_record": sum(1 for r in reports for p in r.user_properties if p[0] == "sqleval"),
        "items_with_record": sum(1 for it in session.items if getattr(it, "record", None) is not None
                                 or any(p[0] == "sqleval" for p in it.user_properties)),
        "items_with_gold": sum(1 for it in session.items if getattr(it, "_gold", None) is not None),
        "layers": sorted({k for r in sink.records.values() for k in r.layers}),
        "previews": sum(1 for r in sink.records.values() if "preview" in (r.execution or {}) and r.execution["preview"]),
        "gold": sum(1 for r in sink.records.values() if r.gold is not None),
    }
    with open("held.json", "w") as fh:
        json.dump(held, fh)
'''


@pytest.fixture
def two_backends(write_predictions: Callable[..., Path], shop_suite: Path) -> str:
    """``naive`` (one right, five wrong) and ``partial`` (gold for q01-q05, none for q06):
    passes, failures of every class, a case without a prediction, each case under two backends."""
    write_predictions(NAIVE_SQL, name="naive.jsonl", model="naive-model", prompt_version="v0")
    write_predictions({c["id"]: c["gold_sql"] for c in SHOP_CASES[:5]}, name="partial.jsonl")
    return "--sqleval-backend=predictions:naive.jsonl,predictions:partial.jsonl"


def test_the_controller_keeps_no_evidence_once_a_case_is_logged(pytester: pytest.Pytester, two_backends: str) -> None:
    pytester.makeconftest(HELD)
    result = pytester.runpytest(two_backends)
    result.assert_outcomes(passed=6, failed=6)
    held = json.loads((pytester.path / "held.json").read_text())
    assert held["records"] == 12
    assert held["reports_with_record"] == 0  # pytest keeps every report to the end of the run
    assert held["items_with_record"] == 0 and held["items_with_gold"] == 0
    assert held["previews"] == 0 and held["gold"] == 0
    assert set(held["layers"]) <= {"variants", "golds"}  # the two the summary reads
    assert len(read_results(pytester.path)) == 12  # and results.jsonl has every record whole
    assert all(r["layers"].get("structure") for r in read_results(pytester.path) if r["status"] != "error"
               and r["generated_sql"])


# The reference: every record whole, as it arrived (copied before the plugin's sink sees
# the report), and the outputs made from all of them at once at the end of the run.
WHOLE = '''
import copy, json
import pytest

WHOLE = {}

@pytest.hookimpl(tryfirst=True)
def pytest_runtest_logreport(report):
    for key, value in report.user_properties:
        if key == "sqleval" and report.nodeid not in WHOLE:
            WHOLE[report.nodeid] = copy.deepcopy(value)

@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session):
    from pytest_sqleval.core.records import CaseRecord
    from pytest_sqleval.plugin.items import SESSION_KEY
    from pytest_sqleval.reports.html import render_report
    from pytest_sqleval.reports.summary import summarize
    state = session.config.stash[SESSION_KEY]
    records = [CaseRecord.from_json_dict(WHOLE[k]) for k in sorted(WHOLE)]
    summary = summarize(records, expected=state.summary["cases_expected"], run=state.summary["run"])
    with open("whole-summary.json", "w", encoding="utf-8") as fh:
        fh.write(json.dumps(summary, indent=2, default=str) + "\\n")
    with open("whole-report.html", "w", encoding="utf-8") as fh:
        fh.write(render_report(records, summary, page_dir=state.run.results_dir))
    with open("whole-results.jsonl", "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(r.to_json_dict(), default=str, sort_keys=True) + "\\n" for r in records)
'''


FULL_BUDGET = html.DETAIL_BUDGET


@pytest.mark.parametrize("budget", [FULL_BUDGET, 6000])
def test_streamed_outputs_equal_those_built_from_every_record(pytester: pytest.Pytester, two_backends: str,
                                                              monkeypatch: pytest.MonkeyPatch, budget: int) -> None:
    """The run's results.jsonl, summary.json and report.html, made from lean records, the
    pages' entries as text and the journal, equal those made from every record whole; a
    small budget makes the page cut most cases."""
    monkeypatch.setattr(html, "DETAIL_BUDGET", budget)
    pytester.makeconftest(WHOLE)
    result = pytester.runpytest(two_backends)  # in process: the budget applies to the inner run
    result.assert_outcomes(passed=6, failed=6)
    folder = pytester.path / "sqleval-results"
    for name in ("results.jsonl", "summary.json", "report.html"):
        assert (folder / name).read_bytes() == (pytester.path / f"whole-{name}").read_bytes(), name
    page = (folder / "report.html").read_text(encoding="utf-8")
    left_out = int(page.split('"detail_left_out":', 1)[1].split("}", 1)[0])
    assert (left_out > 0) == (budget < FULL_BUDGET)


def test_a_cut_entry_made_from_its_text_equals_one_made_from_its_record(tmp_path: Path) -> None:
    """``_RunText.cut`` (no record at hand) against ``_run(..., cut=True)`` (the record), on
    records with and without a result, a trace and characters the page escapes."""
    base = {"backend": "b", "status": "failed", "case_id": "q1", "suite": "s", "nodeid": "s::q1",
            "generated_sql": "SELECT '<x>'", "compare": {"extra_rows": [[1]], "missing_rows": []},
            "layers": {"parse": {"ok": True, "note": "</script>"}}}
    rows = [[i, f"v{i} é <b>"] for i in range(30)]
    variants = [
        base,
        {**base, "execution": {"preview": rows, "rows": 30, "columns": ["a", "b"]}},
        {**base, "execution": {"preview": rows[:3], "rows": 3}, "backend_metadata": {
            "trace": [{"kind": "llm", "text": "<hi>"}], "trace_report": str(tmp_path / "t.md")}},
        {**base, "execution": {"preview": "not rows"}, "backend_metadata": {"trace_report": "x.md"}},
    ]
    for data in variants:
        rec = CaseRecord.from_json_dict(data)
        text = html._RunText.of(html._run(rec, tmp_path))
        assert text.text == html._json(html._run(rec, tmp_path))
        assert text.cut() == html._json(html._run(rec, tmp_path, cut=True)), data


def test_the_budget_counts_the_evidence_as_the_page_holds_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An entry costs the budget the bytes of its preview, layers and trace as the page writes
    them (read off its text, not written out a second time): a budget of exactly the page's
    evidence cuts nothing, one byte less cuts one entry (the passed one, last in line)."""
    rows = [[i, f"v{i} <b>"] for i in range(8)]
    records = [CaseRecord.from_json_dict({
        "backend": "b", "status": status, "case_id": f"q{i}", "suite": "s", "nodeid": f"s::q{i}",
        "execution": {"preview": rows[:i + 2], "rows": i + 2, "columns": ["a", "b"]},
        "layers": {"parse": {"ok": True, "dialect": "duckdb"}, "grounding": {"ok": True, "tables": ["t", "u"]}}})
        for i, status in enumerate(("failed", "passed", "failed"))]

    def page_evidence(text: str) -> int:  # each run's preview, layers and trace, as written on the page
        data = json.loads(text[text.index('{"cases":['):text.index(',"limits":')] + "}")
        return sum(len(html._json(run["preview"])) + len(',"layers":') + len(html._json(run["layers"]))
                   + len(',"trace":') + len(html._json(run["trace"])) for run in data["runs"])

    whole = html.render_report(records, None)
    total = page_evidence(whole)
    monkeypatch.setattr(html, "DETAIL_BUDGET", total)
    assert '"detail_left_out":0}' in html.render_report(records, None)
    monkeypatch.setattr(html, "DETAIL_BUDGET", total - 1)
    cut = html.render_report(records, None)
    assert '"detail_left_out":1}' in cut
    assert json.loads(cut[cut.index('{"cases":['):cut.index(',"limits":')] + "}")["runs"][1]["layers"] is None
