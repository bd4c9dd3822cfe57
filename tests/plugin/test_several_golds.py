"""Whole runs of cases with several golds, result-file golds and column policies: the pass,
the record naming the gold matched, the failure text naming the nearest gold and how the
prediction differs from each, and a bad result file as one collection error."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest

from pytest_sqleval.core.records import RECORD_VERSION, CaseRecord
from tests.sqleval_helpers import sqleval_ini, write_predictions  # noqa: F401  (fixtures)

CASES: list[dict[str, Any]] = [
    {"id": "two_sqls", "question": "Customers 1 and 2",
     "gold_sql": ["SELECT id FROM customers WHERE id < 3", "SELECT id, name FROM customers WHERE id < 3"]},
    {"id": "csv_gold", "question": "Signups of customers 1 and 2", "gold_results": ["gold/csv_gold.csv"],
     "compare": {"columns": "superset"}},
    {"id": "sql_and_csv", "question": "Regions of customers 1 and 2",
     "gold_sql": "SELECT id, region FROM customers WHERE id < 3", "gold_results": ["gold/regions_b.csv"]},
    {"id": "condition", "question": "Names of customers 1 and 2", "gold_sql": "SELECT id, name FROM customers WHERE id < 3",
     "compare": {"condition_cols": [1]}},
]

PREDICTIONS = {
    "two_sqls": "SELECT id, name FROM customers WHERE id < 3",  # the second gold
    "csv_gold": "SELECT name, CAST(signup AS VARCHAR) AS signup, id FROM customers WHERE id < 3",  # extra column, text dates
    "sql_and_csv": "SELECT id, upper(region) FROM customers WHERE id < 3",  # the CSV's spelling
    "condition": "SELECT name FROM customers WHERE id < 4",  # a row too many: fails, nearest is the one gold
}


def _suite(make_suite: Callable[..., Path]) -> Path:
    root = make_suite(CASES)
    (root / "gold").mkdir()
    (root / "gold" / "csv_gold.csv").write_text("id,signup\n1,2024-01-08\n2,2024-01-15\n")
    (root / "gold" / "regions_b.csv").write_text("id,region\n1,SOUTH\n2,EAST\n")
    return root


def _records(pytester: pytest.Pytester) -> dict[str, dict[str, Any]]:
    lines = (pytester.path / "sqleval-results" / "results.jsonl").read_text().splitlines()
    return {r["case_id"]: r for r in map(json.loads, lines)}


def test_several_golds_a_csv_gold_and_column_policies_in_one_run(
        pytester: pytest.Pytester, make_suite: Callable[..., Path], write_predictions: Callable[..., Path]) -> None:
    _suite(make_suite)
    write_predictions(PREDICTIONS, name="preds.jsonl")
    result = pytester.runpytest("--sqleval-backend=predictions:preds.jsonl", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3, failed=1)
    records = _records(pytester)
    assert records["two_sqls"]["record_version"] == RECORD_VERSION
    assert records["two_sqls"]["matched_gold"] == {"index": 1, "kind": "sql",
                                                   "source": "SELECT id, name FROM customers WHERE id < 3"}
    assert records["csv_gold"]["matched_gold"] == {"index": 0, "kind": "result", "source": "gold/csv_gold.csv"}
    assert records["csv_gold"]["compare"]["column_mapping"] == [2, 1]
    assert records["csv_gold"]["layers"]["golds"]["structural"] is False
    assert "structure" not in records["csv_gold"]["layers"]  # a result file has no SQL to diff
    # the peers' verdicts read the gold ours compared with first (the one matched), then the others
    peers = {c: {k: v for k, v in records[c]["compare"]["sidebyside"].items() if k in ("bird", "spider", "bird_gold",
                                                                                      "spider_gold", "compared_gold")}
             for c in ("two_sqls", "sql_and_csv")}
    assert peers == {"two_sqls": {"bird": True, "spider": True, "compared_gold": 1},
                     "sql_and_csv": {"bird": False, "spider": False, "compared_gold": 0}}  # it matched the CSV: no SQL
    assert "sidebyside" not in records["csv_gold"]["compare"]  # no SQL gold: no peer verdict
    assert records["sql_and_csv"]["matched_gold"]["index"] == 1
    golds = records["sql_and_csv"]["layers"]["golds"]["golds"]
    assert [(g["index"], g["match"]) for g in golds] == [(0, False), (1, True)]
    read = CaseRecord.from_json_dict(records["two_sqls"])
    assert read.alternative_gold and not read.column_policy
    assert CaseRecord.from_json_dict(records["csv_gold"]).column_policy
    result.stdout.fnmatch_lines(["*layer compare: row_count; rows 3 vs gold 2*"])


def test_a_failure_names_the_nearest_gold_and_how_it_differs_from_each(
        pytester: pytest.Pytester, make_suite: Callable[..., Path], write_predictions: Callable[..., Path]) -> None:
    _suite(make_suite)
    write_predictions({"two_sqls": "SELECT id FROM customers WHERE id < 4"}, name="preds.jsonl")
    result = pytester.runpytest("--sqleval-backend=predictions:preds.jsonl", "-k", "two_sqls", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*golds: compared with the nearest, gold 0*",
                                 "*gold 0 [[]sql[]] SELECT id FROM customers WHERE id < 3: differs: row_count*",
                                 "*gold 1 [[]sql[]] SELECT id, name FROM customers WHERE id < 3: differs: arity_mismatch*"])
    record = _records(pytester)["two_sqls"]
    assert record["matched_gold"] is None and record["layers"]["golds"]["compared"] == 0


@pytest.mark.parametrize(("text", "edit", "says"), [
    ("id,region\n1,SOUTH\n2\n", {}, "field 'gold_results': case 'sql_and_csv': result file*regions_b.csv "
                                        "line 3 has 1 fields, the header has 2*"),
    (None, {}, "field 'gold_results': case 'sql_and_csv': result file*regions_b.csv does not exist*"),
    ("id,region\n1,SOUTH\nx,EAST\n", {"gold_types": {"id": "INTEGER"}},
     "field 'gold_results': case 'sql_and_csv': result file*regions_b.csv*cannot be typed as INTEGER*"),
    ("id,region\n1,SOUTH\n", {"compare": {"condition_cols": [0, 2]}},
     "field 'compare.condition_cols': case 'sql_and_csv': condition_cols names gold column(s) [[]2[]] but result "
     "file*regions_b.csv has 2 column(s)*"),
])
def test_a_bad_result_file_is_one_collection_error_naming_case_and_file(
        pytester: pytest.Pytester, make_suite: Callable[..., Path], text: str | None, edit: dict[str, Any],
        says: str) -> None:
    """Missing, ragged, untypable, or lacking a column its condition_cols names: the run
    stops at collection with one error naming the line, the case and the file."""
    cases = [dict(c, **edit) if c["id"] == "sql_and_csv" else c for c in CASES]
    root = make_suite(cases)
    (root / "gold").mkdir()
    (root / "gold" / "csv_gold.csv").write_text("id,signup\n1,2024-01-08\n2,2024-01-15\n")
    if text is not None:
        (root / "gold" / "regions_b.csv").write_text(text)
    result = pytester.runpytest("--sqleval-backend=gold", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines([f"*questions.jsonl:3: {says}"])
    assert "Traceback" not in result.stdout.str()


def test_the_reports_show_which_gold_matched_and_what_leniency_contributed(
        pytester: pytest.Pytester, make_suite: Callable[..., Path], write_predictions: Callable[..., Path]) -> None:
    from pytest_sqleval.reports.ablation import ablation_rows, render_markdown
    _suite(make_suite)
    write_predictions(PREDICTIONS, name="preds.jsonl")
    pytester.runpytest("--sqleval-backend=predictions:preds.jsonl", "-p", "no:cacheprovider")
    records = list(_records(pytester).values())
    (row,) = ablation_rows(records)
    assert (row.passed, row.alternative_gold_passes, row.column_policy_passes, row.lenient_passes) == (3, 2, 1, 3)
    assert row.gold_matches == {"two_sqls": "gold 1 (sql)", "csv_gold": "gold 0 (result gold/csv_gold.csv) + columns by values",
                                "sql_and_csv": "gold 1 (result gold/regions_b.csv)", "condition": "none"}
    text = render_markdown([row])
    assert "| preds | 3 | 2 | 1 | 0 | 0.0 |" in text and "| two_sqls | gold 1 (sql) |" in text
    page = (pytester.path / "sqleval-results" / "report.html").read_text()
    assert "Several golds and column policies" in page and "gold 1 (result gold/regions_b.csv)" in page


def test_the_gold_backend_passes_every_sql_case_and_has_no_answer_for_a_result_file_only_case(
        pytester: pytest.Pytester, make_suite: Callable[..., Path]) -> None:
    _suite(make_suite)
    result = pytester.runpytest("--sqleval-backend=gold", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3, failed=1)
    record = _records(pytester)["csv_gold"]
    assert record["failure_kind"] == "no_prediction" and "result-file golds only" in record["explanation"]
