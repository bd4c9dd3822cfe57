"""A statement a sandbox rule refuses is reported as that refusal on every engine: the rule's
name (the safety layer's: multiple_statements, not_a_query, file_or_system_access) in the
error, the explanation, ``blocked_reason`` and the failure text; class ``other``,
``unsafe_statement``, never a hallucinated column."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_sqleval.core.api import Grader
from pytest_sqleval.core.cases import Limits
from pytest_sqleval.core.engines import open_sandbox
from pytest_sqleval.reports.terminal import render_failure
from tests.core.grading.test_missing_functions import _record
from tests.rows import error_of

ENGINE = {"duckdb": "DuckDB", "sqlite": "SQLite", "postgres": "PostgreSQL"}
#: rule -> engine -> a statement only that rule of that engine's sandbox refuses
REFUSED = {
    "multiple_statements": dict.fromkeys(("duckdb", "sqlite", "postgres"), "SELECT 1; SELECT 2"),
    "not_a_query": dict.fromkeys(("duckdb", "sqlite", "postgres"), "DELETE FROM singer"),
    "file_or_system_access": {"sqlite": "SELECT load_extension('x')", "postgres": "SELECT pg_sleep(0)"},
}
CASES = [(rule, engine, sql) for rule, by_engine in REFUSED.items() for engine, sql in by_engine.items()]


@pytest.mark.parametrize("rule, engine, sql", CASES, ids=[f"{e}-{r}" for r, e, _ in CASES])
def test_each_sandbox_names_the_rule_it_refused_by(request: pytest.FixtureRequest, rule: str, engine: str,
                                                    sql: str) -> None:
    db = request.getfixturevalue(f"{engine}_shop" if engine != "postgres" else "pg_shop")
    box = open_sandbox(db, Limits(timeout_s=5))
    try:
        error = error_of(box.run(sql))
    finally:
        box.close()
    assert (error.category, error.exception, error.subject) == ("permission_error", "Refused", rule), error
    assert error.message.startswith(f"refused ({rule}): ")


#: engine -> SQL the safety layer lets through and the engine's sandbox refuses, and by which rule
PAST_THE_SAFETY_LAYER = {
    "sqlite": ("SELECT name FROM pragma_table_info('singer')", "not_a_query"),  # reads sqlite_master to plan
    "postgres": ("SELECT pg_sleep(0)", "file_or_system_access"),  # a function PUBLIC may not run here
}


@pytest.mark.parametrize("engine", PAST_THE_SAFETY_LAYER)
def test_a_refusal_by_the_engine_sandbox_reads_as_that_refusal(request: pytest.FixtureRequest, engine: str,
                                                               tmp_path: Path) -> None:
    db = request.getfixturevalue(f"{engine}_shop" if engine != "postgres" else "pg_shop")
    sql, rule = PAST_THE_SAFETY_LAYER[engine]
    with Grader(db, dialect=engine, cache_dir=tmp_path) as grader:
        verdict = grader.compare(sql, "SELECT name FROM singer WHERE singer_id = 1")
    error: dict[str, Any] = verdict.layers["execution"]["error"]
    assert verdict.layers["safety"]["ok"] and error["subject"] == rule
    assert (verdict.error_class, verdict.failure_kind) == ("other", "unsafe_statement")
    detail = error["message"].split("): ", 1)[1]
    assert verdict.explanation == f"refused by the {ENGINE[engine]} sandbox ({rule}): {detail}"
    assert verdict.blocked_reason == f"sandbox:{rule}" and verdict.severity == "critical"
    assert verdict.layers["diagnostics"]["most_likely"] is None
    lines = render_failure(_record(verdict, sql, engine)).splitlines()
    assert lines[0] == "q1 [model]: other (unsafe_statement, confidence 0.95)"
    assert f"  why: {verdict.explanation}" in lines
    assert f"  the {ENGINE[engine]} sandbox refused it: {rule} - {detail}" in lines
