"""Golds whose answer is not unique because a LIMIT keeps some of several equally valid
rows: a top-level LIMIT without ORDER BY (any k rows of the whole result are the answer)
and a LIMIT inside a subquery or CTE that cuts through tied rows (the outer answer
depends on which of them it kept: the gold is run once per valid choice, and a prediction
passes if it gives any of those answers). Where that cannot be evaluated, a mismatch is a
case error saying why; an equally valid prediction is never failed as a wrong join, on
DuckDB and on SQLite alike."""
from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import duckdb
import pytest

from pytest_sqleval.core.api import Grader
from pytest_sqleval.core.errors import GoldError
from tests.sqleval_helpers import by_case, read_results, read_summary, sqleval_ini  # noqa: F401  (autouse fixture)

#: Three airlines: Aer and Blu tie at 4 flights, Cal has 2.
AIRLINES = """
CREATE TABLE airlines (id INTEGER, name TEXT);
INSERT INTO airlines VALUES (1, 'Aer'), (2, 'Blu'), (3, 'Cal');
CREATE TABLE flights (id INTEGER, airline INTEGER, dest TEXT);
INSERT INTO flights VALUES (1, 1, 'X'), (2, 1, 'Y'), (3, 1, 'X'), (4, 1, 'Z'), (5, 2, 'X'), (6, 2, 'Y'),
                           (7, 2, 'Y'), (8, 2, 'Z'), (9, 3, 'X'), (10, 3, 'Z');
"""

TWO_AIRLINES = "SELECT name FROM airlines LIMIT 2"  # no ORDER BY: any two airlines
BUSIEST_IN = ("SELECT name FROM airlines WHERE id IN "
              "(SELECT airline FROM flights GROUP BY airline ORDER BY count(*) DESC LIMIT 1)")
BUSIEST_CTE = ("WITH busiest AS (SELECT airline, count(*) AS n FROM flights GROUP BY airline ORDER BY n DESC LIMIT 1) "
               "SELECT a.name FROM airlines a JOIN busiest b ON a.id = b.airline")


def _build(path: Path, engine: str) -> Path:
    if engine == "duckdb":
        con = duckdb.connect(str(path))
        con.execute(AIRLINES)
    else:
        con = sqlite3.connect(path)
        con.executescript(AIRLINES)
    con.close()
    return path


@pytest.fixture(scope="module", params=["duckdb", "sqlite"])
def grader(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp(f"airlines-{request.param}")
    db = _build(root / ("air.duckdb" if request.param == "duckdb" else "air.sqlite"), request.param)
    with Grader(db, cache_dir=root / "cache") as g:
        yield g


# -- a top-level LIMIT without ORDER BY: any k rows of the whole result ---------------------
@pytest.mark.parametrize("pred, status", [
    ("SELECT name FROM airlines ORDER BY name DESC LIMIT 2", "passed"),
    ("SELECT DISTINCT a.name FROM airlines a JOIN flights f ON a.id = f.airline WHERE a.id <> 1", "passed"),
    ("SELECT name FROM airlines WHERE id IN (1, 3)", "passed"),
    ("SELECT name FROM airlines", "failed"),  # three rows where the gold keeps two
    ("SELECT name FROM airlines LIMIT 1", "failed"),
    ("SELECT 'Aer' UNION ALL SELECT 'Aer'", "failed"),  # not a sub-multiset of the whole result
    ("SELECT dest FROM flights LIMIT 2", "failed"),
], ids=["other-two", "other-two-by-join", "chosen-by-id", "all-rows", "too-few", "a-row-twice", "other-table"])
def test_a_limit_without_order_by_accepts_any_k_rows_of_the_whole_result(grader: Grader, pred: str,
                                                                          status: str) -> None:
    verdict = grader.compare(pred, TWO_AIRLINES)
    assert verdict.status == status, verdict.explanation
    tie = verdict.layers["compare"]["tie_group"]
    assert (tie["limit"], tie["before"], tie["group_rows"], tie["unordered"]) == (2, 0, 3, True)


def test_a_limit_without_order_by_that_cuts_nothing_is_an_ordinary_gold(grader: Grader) -> None:
    verdict = grader.compare("SELECT name FROM airlines ORDER BY name DESC", "SELECT name FROM airlines LIMIT 5")
    assert verdict.passed and verdict.layers["compare"].get("tie_group") is None


# -- a LIMIT below the top level that cuts through ties ---------------------------------------
@pytest.mark.parametrize("gold", [BUSIEST_IN, BUSIEST_CTE], ids=["in-subquery", "cte"])
def test_a_subquery_limit_through_ties_accepts_the_answer_of_any_valid_choice(grader: Grader, gold: str) -> None:
    """Aer and Blu tie at the top, so the subquery's LIMIT 1 keeps either: both pass (the
    one the engine did not keep as tie-only, with the evidence), Cal fails."""
    aer, blu, cal = (grader.compare(f"SELECT name FROM airlines WHERE name = '{name}'", gold)
                     for name in ("Aer", "Blu", "Cal"))
    assert (aer.status, blu.status, cal.status) == ("passed", "passed", "failed"), (aer.explanation, blu.explanation)
    assert sorted([aer.tie_only, blu.tie_only]) == [False, True]
    tied = aer if aer.tie_only else blu
    tie = tied.layers["compare"]["tie_group"]
    assert (tie["nested"], tie["limit"], tie["choices"], tie["answers"], tie["group_rows"], tie["candidates"]) == (
        True, 1, 2, 2, 2, 3)
    assert "inside a subquery cuts through rows tied" in tied.explanation
    assert cal.case_error is None and cal.error_class is not None


def test_a_subquery_limit_whose_choices_cannot_be_evaluated_leaves_a_mismatch_ungraded(grader: Grader) -> None:
    """A LIMIT 2 without ORDER BY over 10 flights has 45 valid choices, more than the grader
    evaluates: a prediction that differs from the engine's answer is a case error saying why."""
    gold = "WITH two AS (SELECT airline FROM flights LIMIT 2) SELECT count(DISTINCT airline) FROM two"
    verdicts = [grader.compare(f"SELECT {n}", gold) for n in (1, 2)]
    assert sorted(v.status for v in verdicts) == ["error", "passed"], [v.explanation for v in verdicts]
    (error,) = [v for v in verdicts if v.status == "error"]
    assert error.case_error_kind == "gold_error" and error.case_error is not None
    assert "a LIMIT 2 without ORDER BY inside a subquery keeps 2 of more rows" in error.case_error
    assert "45 valid choices" in error.case_error and "tiebreaker" in error.case_error


def test_a_correlated_subquery_limit_leaves_a_mismatch_ungraded(grader: Grader) -> None:
    gold = ("SELECT name FROM airlines a WHERE (SELECT dest FROM flights f WHERE f.airline = a.id "
            "ORDER BY f.id % 2 LIMIT 1) IN ('Y', 'Z')")
    verdict = grader.compare("SELECT name FROM airlines WHERE id = 99", gold)
    assert verdict.status == "error" and verdict.case_error_kind == "gold_error" and verdict.case_error is not None
    assert "cannot be checked for ties" in verdict.case_error and "correlated" in verdict.case_error


def test_a_wrong_shape_stays_a_fail_whatever_the_tie(grader: Grader) -> None:
    """No choice of the tied rows changes the number of columns: that is the prediction's error."""
    verdict = grader.compare("SELECT name, id FROM airlines WHERE id = 1", BUSIEST_IN)
    assert verdict.status == "failed" and verdict.failure_kind == "projection_mismatch"


def test_a_subquery_limit_that_cuts_no_tie_is_graded_as_usual(grader: Grader) -> None:
    gold = "SELECT name FROM airlines WHERE id IN (SELECT airline FROM flights GROUP BY airline ORDER BY airline DESC LIMIT 1)"
    assert grader.compare("SELECT name FROM airlines WHERE id = 3", gold).passed
    wrong = grader.compare("SELECT name FROM airlines WHERE id = 2", gold)
    assert wrong.status == "failed" and wrong.case_error is None


def test_a_limit_inside_exists_is_no_tie(grader: Grader) -> None:
    gold = "SELECT name FROM airlines a WHERE EXISTS (SELECT 1 FROM flights f WHERE f.airline = a.id LIMIT 1)"
    assert grader.compare("SELECT name FROM airlines", gold).passed
    assert grader.compare("SELECT name FROM airlines WHERE id < 3", gold).status == "failed"


def test_a_limit_through_ties_with_an_offset_stays_a_gold_error(grader: Grader) -> None:
    with pytest.raises(GoldError, match="LIMIT 1 without ORDER BY keeps 1 of more rows"):
        grader.compare("SELECT 1", "SELECT name FROM airlines LIMIT 1 OFFSET 1")


# -- end to end: a pytest run ------------------------------------------------------------------
CASES: list[dict[str, Any]] = [
    {"id": "any_two", "question": "Name two airlines.", "gold_sql": TWO_AIRLINES},
    {"id": "busiest_a", "question": "Which airline has the most flights?", "gold_sql": BUSIEST_IN},
    {"id": "busiest_b", "question": "Which airline has the most flights?", "gold_sql": BUSIEST_IN},
    {"id": "busiest_c", "question": "Which airline has the most flights?", "gold_sql": BUSIEST_IN},
    {"id": "airlines_of_two", "question": "How many airlines fly two sampled flights?",
     "gold_sql": "WITH two AS (SELECT airline FROM flights LIMIT 2) SELECT count(DISTINCT airline) FROM two"},
]
PREDICTIONS = {
    "any_two": "SELECT DISTINCT a.name FROM airlines a JOIN flights f ON a.id = f.airline WHERE a.id > 1",
    "busiest_a": "SELECT a.name FROM airlines a JOIN flights f ON a.id = f.airline WHERE a.id = 1 GROUP BY a.name",
    "busiest_b": "SELECT a.name FROM airlines a JOIN flights f ON a.id = f.airline WHERE a.id = 2 GROUP BY a.name",
    "busiest_c": "SELECT a.name FROM airlines a JOIN flights f ON a.id = f.airline WHERE a.id = 3 GROUP BY a.name",
    "airlines_of_two": "SELECT 3",  # wrong whichever two flights are kept, but 45 choices are not evaluated
}


@pytest.mark.parametrize("engine", ["duckdb", "sqlite"])
def test_a_run_never_fails_an_equally_valid_prediction_as_a_wrong_join(pytester: pytest.Pytester, make_suite: Any,
                                                                      write_predictions: Any, engine: str) -> None:
    db = _build(pytester.path / ("air.duckdb" if engine == "duckdb" else "air.sqlite"), engine)
    make_suite(CASES, database=db)
    if engine == "sqlite":
        toml = pytester.path / "suite" / "sqleval.toml"
        toml.write_text(toml.read_text().replace('dialect = "duckdb"', 'dialect = "sqlite"'))
    preds = write_predictions(PREDICTIONS)
    result = pytester.runpytest("suite", f"--sqleval-backend=predictions:{preds}", "-p", "no:cacheprovider")
    records = by_case(read_results(pytester.path))
    assert {c: r["status"] for c, r in records.items()} == {
        "any_two": "passed", "busiest_a": "passed", "busiest_b": "passed", "busiest_c": "failed",
        "airlines_of_two": "error"}
    assert records["any_two"]["tie_only"] is True
    assert sorted(records[c]["tie_only"] for c in ("busiest_a", "busiest_b")) == [False, True]
    assert records["busiest_c"]["error_class"] is not None  # wrong under every valid choice: a graded fail
    ungraded = records["airlines_of_two"]
    assert ungraded["failure_kind"] == "gold_error" and "valid choices" in ungraded["case_error"]
    result.assert_outcomes(passed=3, failed=2)  # a case error at grading is not a pass: pytest shows it failed
    summary = read_summary(pytester.path)["overall"]
    assert summary["case_errors"] == {"gold_error": 1} and summary["tie_only_passes"] == 2
    result.stdout.fnmatch_lines(["*airlines_of_two*NOT GRADED (case error) (gold_error)*"])
