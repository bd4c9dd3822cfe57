"""DuckDB's PIVOT without an IN list only reads, so it runs: DuckDB makes it a MULTI statement
(a temporary enum type per pivoted column, then the query), and the sandbox checks that
what that statement ends in is a query. Whatever a sandbox rule refuses is reported as that
refusal, naming the rule, and never as a hallucinated column."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from pytest_sqleval.core.api import Grader
from pytest_sqleval.core.engines.duckdb_sandbox import DuckDBSandbox
from pytest_sqleval.core.grading.verdict import blocked_reason, classify
from tests.rows import error_of, table_of
from tests.sqleval_helpers import by_case, read_results, sqleval_ini  # noqa: F401  (autouse fixture)

GOLD = ("SELECT region, count(*) FILTER (WHERE NOT is_test) AS \"false\", count(*) FILTER (WHERE is_test) AS \"true\" "
        "FROM customers GROUP BY region")
#: a dynamic PIVOT, written every way a model writes one: each returns the gold's answer
PIVOTS = {
    "statement": "PIVOT customers ON is_test USING count(*) GROUP BY region",
    "subquery": "SELECT region, \"false\", \"true\" FROM (PIVOT customers ON is_test USING count(*) GROUP BY region)",
    "cte": ("WITH p AS (PIVOT customers ON is_test USING count(*) GROUP BY region) "
            "SELECT region, \"false\", \"true\" FROM p"),
    "from_first": "FROM (PIVOT customers ON is_test USING count(*) GROUP BY region) SELECT region, \"false\", \"true\"",
    "semicolon": "PIVOT customers ON is_test USING count(*) GROUP BY region;",
    "comment": "PIVOT customers ON is_test USING count(*) GROUP BY region -- per region",
}
#: a dynamic PIVOT inside what is not a query: the sandbox refuses each, by its rule
NOT_QUERIES = {
    "explain": ("EXPLAIN PIVOT customers ON is_test USING count(*)", "not_a_query"),
    "copy": ("COPY (PIVOT customers ON is_test USING count(*)) TO 'leak.csv'", "not_a_query"),
    "create": ("CREATE TABLE t AS PIVOT customers ON is_test USING count(*)", "not_a_query"),
    "insert": ("INSERT INTO customers SELECT * FROM (PIVOT customers ON is_test USING count(*))", "not_a_query"),
    "cte_delete": ("WITH p AS (PIVOT customers ON is_test USING count(*)) DELETE FROM customers", "not_a_query"),
    "set_variable": ("SET VARIABLE x = (SELECT count(*) FROM (PIVOT customers ON is_test USING count(*)))",
                     "not_a_query"),
    "second_statement": ("SELECT 1; PIVOT customers ON is_test USING count(*)", "multiple_statements"),
}


@pytest.mark.parametrize("form", PIVOTS)
def test_a_dynamic_pivot_is_graded_like_any_query(shop_db: Path, tmp_path: Path, form: str) -> None:
    with Grader(shop_db, cache_dir=tmp_path) as grader:
        verdict = grader.compare(PIVOTS[form], GOLD)
    assert verdict.passed, (verdict.error_class, verdict.explanation)
    assert verdict.layers["safety"]["ok"] and verdict.layers["grounding"]["ok"]


def test_a_dynamic_pivot_with_a_missing_column_is_a_hallucinated_column_found_by_grounding(
        shop_db: Path, tmp_path: Path) -> None:
    with Grader(shop_db, cache_dir=tmp_path) as grader:
        verdict = grader.compare("PIVOT customers ON is_tset USING count(*) GROUP BY region", GOLD)
    assert (verdict.error_class, verdict.failure_kind) == ("hallucinated_column", "runtime_error:missing_column")
    assert [h["name"] for h in verdict.layers["grounding"]["hallucinated_columns"]] == ["is_tset"]


@pytest.mark.parametrize("name", NOT_QUERIES)
def test_a_pivot_inside_what_is_not_a_query_is_refused_by_its_rule(shop_db: Path, name: str) -> None:
    sql, rule = NOT_QUERIES[name]
    before = shop_db.read_bytes()
    box = DuckDBSandbox(shop_db)
    try:
        outcome = box.run(sql)
        types = box._conn.cursor().execute("SELECT type_name FROM duckdb_types() WHERE NOT internal").fetchall()
    finally:
        box.close()
    assert outcome.table is None and outcome.error is not None
    assert (outcome.error.category, outcome.error.exception, outcome.error.subject) == (
        "permission_error", "Refused", rule)
    assert outcome.error.message.startswith(f"refused ({rule}): ")
    assert types == [] and shop_db.read_bytes() == before


def test_a_dynamic_pivot_leaves_nothing_for_the_next_query(shop_db: Path) -> None:
    box = DuckDBSandbox(shop_db)
    try:
        ran = box.run(PIVOTS["statement"])
        cur = box._conn.cursor()
        left = cur.execute("SELECT type_name FROM duckdb_types() WHERE NOT internal").fetchall()
        cur.close()
    finally:
        box.close()
    assert ran.error is None and table_of(ran).num_rows == 4
    assert left == []  # its enum types lived on the query's own cursor


def test_a_sandbox_refusal_is_classified_as_that_refusal_not_as_what_grounding_saw(shop_db: Path) -> None:
    box = DuckDBSandbox(shop_db)
    try:
        error = error_of(box.run(NOT_QUERIES["explain"][0])).to_dict()
    finally:
        box.close()
    cls = classify(parse={"ok": True}, safety={"ok": True},
                   grounding={"ok": False, "hallucinated_tables": [],
                              "hallucinated_columns": [{"name": "is_test", "line": 1, "col": 26}]},
                   execution={"ok": False, "error": error}, compare=None, stale=[],
                   joins_pred={"tables": [], "joins": []}, joins_gold={"tables": [], "joins": []}, engine="duckdb")
    assert (cls.error_class, cls.failure_kind) == ("other", "unsafe_statement")
    assert cls.explanation == ("refused by the DuckDB sandbox (not_a_query): exactly one SELECT statement allowed, "
                               "got MULTI")
    assert blocked_reason({"parse": {"ok": True}, "safety": {"ok": True},
                           "execution": {"ok": False, "error": error}}) == "sandbox:not_a_query"


def test_a_dynamic_pivot_under_pytest(pytester: pytest.Pytester, make_suite: Callable[..., Path],
                                      write_predictions: Callable[..., Path]) -> None:
    make_suite([{"id": "by_region", "question": "Test and real customers per region", "gold_sql": GOLD},
                {"id": "typo", "question": "Test and real customers per region", "gold_sql": GOLD}])
    write_predictions({"by_region": PIVOTS["subquery"],
                       "typo": ("SELECT region, \"true\" FROM "
                                "(PIVOT customers ON is_test USING count(*) GROUP BY regoin)")})
    result = pytester.runpytest("--sqleval-backend=predictions:naive.jsonl", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    records = by_case(read_results(pytester.path))
    assert records["by_region"]["status"] == "passed"
    assert records["typo"]["error_class"] == "hallucinated_column"
    assert "regoin" in records["typo"]["explanation"]


def test_grounding_reads_a_pivot_statement_against_its_source() -> None:
    """A suite without a database is graded on grounding alone: a PIVOT's columns are the
    source's, and what the PIVOT returns (columns made from the data) is not a missing name."""
    import sqlglot

    from pytest_sqleval.core.grading.grounding import CatalogIndex, ground
    index = CatalogIndex({"main": {"customers": {"id": "INTEGER", "region": "VARCHAR", "is_test": "BOOLEAN"}}})
    for form, sql in PIVOTS.items():
        result = ground(sqlglot.parse_one(sql, read="duckdb"), index)
        assert result.ok and result.tables == ["main.customers"], (form, result)
    typo = ground(sqlglot.parse_one("PIVOT customers ON is_tset USING count(*) GROUP BY regoin", read="duckdb"), index)
    assert [h["name"] for h in typo.hallucinated_columns] == ["is_tset", "regoin"]
