"""A function the engine does not have is a dialect error, not a hallucinated column: on
DuckDB, SQLite and PostgreSQL its error category is ``missing_function``, its class is
``other``, and the verdict's explanation, the advice and the failure text all name the
function and the engine, and agree with each other."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable

import pytest
import sqlglot

from pytest_sqleval.core.api import Grader
from pytest_sqleval.core.cases import BenchmarkCase, Limits
from pytest_sqleval.core.engines import open_sandbox
from pytest_sqleval.core.grading.grounding import CatalogIndex, ground
from pytest_sqleval.core.grading.verdict import classify
from pytest_sqleval.core.records import build_record
from pytest_sqleval.reports.terminal import render_failure
from tests.rows import error_of, table_of
from tests.sqleval_helpers import by_case, read_results, sqleval_ini  # noqa: F401  (autouse fixture)

ENGINE = {"duckdb": "DuckDB", "sqlite": "SQLite", "postgres": "PostgreSQL"}
GOLD = "SELECT name FROM singer WHERE singer_id = 1"
#: engine -> (a call of a function it does not have, that function's name as the engine names it)
MISSING = {
    "duckdb": [("SELECT date_format(age, '%Y') FROM singer", "date_format"),
               ("SELECT to_pinyin(name) FROM singer", "to_pinyin"),
               ("SELECT * FROM no_such_table_function(1)", "no_such_table_function"),  # DuckDB: Table Function
               ("SELECT my_agg(age) OVER () FROM singer", "my_agg")],  # DuckDB: Aggregate Function
    "sqlite": [("SELECT to_pinyin(name) FROM singer", "to_pinyin"),
               ("SELECT my_agg(age) OVER () FROM singer", "my_agg")],
    "postgres": [("SELECT to_pinyin(name) FROM singer", "to_pinyin"),
                 ("SELECT * FROM no_such_table_function(1)", "no_such_table_function"),
                 ("SELECT my_agg(age) OVER () FROM singer", "my_agg")],
}


def _record(verdict: Any, sql: str, engine: str) -> dict[str, Any]:
    case = BenchmarkCase(id="q1", question="Who is singer 1?", gold_sql=GOLD)
    return build_record(case=case, backend=SimpleNamespace(label="model", spec="predictions:x", metadata={}),
                        nodeid="x::q1", suite={"name": "shop", "engine": engine}, status="failed",
                        generation=SimpleNamespace(sql=sql, metadata={}, cached=False, elapsed_ms=0.0, error=None),
                        verdict=verdict)


CALLS = [(engine, sql, name) for engine, calls in MISSING.items() for sql, name in calls]


@pytest.mark.parametrize("engine, sql, name", CALLS, ids=[f"{e}-{n}" for e, _, n in CALLS])
def test_a_missing_function_reads_the_same_in_class_category_diagnosis_and_text(
        request: pytest.FixtureRequest, engine: str, sql: str, name: str, tmp_path: Path) -> None:
    db = request.getfixturevalue(f"{engine}_shop" if engine != "postgres" else "pg_shop")
    with Grader(db, dialect=engine, cache_dir=tmp_path) as grader:
        verdict = grader.compare(sql, GOLD)
    error = verdict.layers["execution"]["error"]
    said = f"calls {name}, which {ENGINE[engine]} does not have: a dialect error, not a missing column"
    assert (verdict.error_class, verdict.failure_kind) == ("other", "runtime_error:missing_function"), error
    assert (error["category"], error["subject"]) == ("missing_function", name)
    assert verdict.explanation == said
    diagnostics = verdict.layers["diagnostics"]
    assert diagnostics["most_likely"] is None  # the error names the part: no result to blame
    assert diagnostics["advice"][0].startswith(f"{name} is not a {ENGINE[engine]} function: write it with the "
                                               f"{ENGINE[engine]} function that does the same")
    text = render_failure(_record(verdict, sql, engine))
    lines = text.splitlines()
    assert lines[0] == "q1 [model]: other (runtime_error:missing_function, confidence 0.95)"
    assert f"  why: {said}" in lines
    assert any(line.startswith("  layer execute failed: missing_function: ") and name in line for line in lines)
    assert f"  what to do: {diagnostics['advice'][0]}" in lines
    assert "hallucinated" not in text and "most likely" not in text and "does not exist: look" not in text


def test_a_postgres_function_of_that_name_with_other_argument_types_is_a_type_mismatch(pg_shop: str) -> None:
    """42883 is PostgreSQL's error for both; only a name the server has nowhere is missing."""
    box = open_sandbox(pg_shop, Limits(timeout_s=5))
    try:
        overload = box.run("SELECT round(net_worth, 1) FROM singer")  # round(double precision, integer)
        operator = box.run("SELECT name = 1 FROM singer")  # operator does not exist: text = integer
        missing = box.run("SELECT public.to_pinyin(name) FROM singer")
        after = box.run("SELECT count(*) FROM singer")  # the lookup left the session usable
    finally:
        box.close()
    assert error_of(overload).category == "type_mismatch" and error_of(overload).subject is None
    assert error_of(operator).category == "type_mismatch"
    assert (error_of(missing).category, error_of(missing).subject) == ("missing_function", "public.to_pinyin")
    assert table_of(after).column(0).to_pylist() == [5]


def test_grounding_does_not_count_an_unknown_function_as_a_missing_name() -> None:
    index = CatalogIndex({"main": {"singer": {"singer_id": "INTEGER", "name": "VARCHAR", "age": "INTEGER"}}})
    for sql in ("SELECT date_format(age, '%Y') FROM singer", "SELECT * FROM no_such_table_function(1)",
                "SELECT my_agg(age) OVER (PARTITION BY name) FROM singer s WHERE to_pinyin(s.name) > ''"):
        result = ground(sqlglot.parse_one(sql, read="duckdb"), index)
        assert result.ok and not result.hallucinated_columns and not result.hallucinated_tables, (sql, result)


#: (engine error, grounding's missing names) -> not a hallucinated column, whatever grounding saw
NOT_A_NAME_ERROR = {
    "missing_function": {"category": "missing_function", "message": "no such function: to_pinyin",
                         "exception": "OperationalError", "subject": "to_pinyin"},
    "refusal": {"category": "permission_error", "exception": "Refused", "subject": "not_a_query",
                "message": "refused (not_a_query): exactly one SELECT statement allowed, got MULTI"},
    "timeout": {"category": "timeout", "message": "INTERRUPT Error: Interrupted!", "exception": "InterruptException"},
}


@pytest.mark.parametrize("kind", NOT_A_NAME_ERROR)
def test_grounding_evidence_does_not_turn_another_engine_error_into_a_hallucinated_column(kind: str) -> None:
    cls = classify(parse={"ok": True}, safety={"ok": True},
                   grounding={"ok": False, "hallucinated_tables": [],
                              "hallucinated_columns": [{"name": "month", "line": 1, "col": 31}]},
                   execution={"ok": False, "error": NOT_A_NAME_ERROR[kind]}, compare=None, stale=[],
                   joins_pred={"tables": [], "joins": []}, joins_gold={"tables": [], "joins": []}, engine="sqlite")
    assert cls.error_class == "other", cls
    assert {"missing_function": "runtime_error:missing_function", "refusal": "unsafe_statement",
            "timeout": "timeout"}[kind] == cls.failure_kind
    if kind == "refusal":
        assert cls.explanation == ("refused by the SQLite sandbox (not_a_query): exactly one SELECT statement "
                                   "allowed, got MULTI")


def test_date_format_under_pytest_is_a_dialect_error(pytester: pytest.Pytester, make_suite: Callable[..., Path],
                                                     write_predictions: Callable[..., Path]) -> None:
    make_suite([{"id": "signup_year", "question": "Each customer's signup year",
                 "gold_sql": "SELECT id, strftime(signup, '%Y') FROM customers"}])
    write_predictions({"signup_year": "SELECT id, date_format(signup, '%Y') FROM customers"})
    result = pytester.runpytest("--sqleval-backend=predictions:naive.jsonl", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    rec = by_case(read_results(pytester.path))["signup_year"]
    said = "calls date_format, which DuckDB does not have: a dialect error, not a missing column"
    assert (rec["error_class"], rec["failure_kind"], rec["explanation"]) == (
        "other", "runtime_error:missing_function", said)
    assert rec["execution"]["error"]["category"] == "missing_function"
    assert not rec["hallucinated_columns"] and rec["grounding_ok"] is True
    result.stdout.fnmatch_lines([
        "*signup_year [[]naive[]]: other (runtime_error:missing_function, confidence 0.95)",
        f"*  why: {said}",
        "*  layer execute failed: missing_function: Catalog Error: Scalar Function with name date_format "
        "does not exist!",
        "*  what to do: date_format is not a DuckDB function: write it with the DuckDB function that does the same*",
    ])
    result.stdout.re_match_lines([r"\s+hallucinated_column\s+0\s*$", r"\s+other\s+1\s+#+$"])  # the summary's count
