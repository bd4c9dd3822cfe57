"""Golds whose answer is not unique because a LIMIT keeps some of several equally valid
rows: a top-level LIMIT without ORDER BY (any k rows of the whole result are the answer)
and a LIMIT inside a subquery or CTE that cuts through tied rows (the outer answer
depends on which of them it kept). Such a gold is graded tie-aware where that is sound,
and otherwise a mismatch is a case error saying why; an equally valid prediction is never
failed as a wrong join, on DuckDB and on SQLite alike."""
from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import duckdb
import pytest

from pytest_sqleval.api import Grader
from pytest_sqleval.errors import GoldError
from tests.sqleval_helpers import by_case, read_results, read_summary, sqleval_ini, write_predictions  # noqa: F401  (fixtures)

#: Three airlines with 4 flights each: every airline ties on its number of flights.
AIRLINES = """
CREATE TABLE airlines (id INTEGER, name TEXT);
INSERT INTO airlines VALUES (1, 'Aer'), (2, 'Blu'), (3, 'Cal');
CREATE TABLE flights (id INTEGER, airline INTEGER, dest TEXT);
INSERT INTO flights VALUES (1, 1, 'X'), (2, 1, 'Y'), (3, 1, 'X'), (4, 1, 'Z'), (5, 2, 'X'), (6, 2, 'Y'),
                           (7, 2, 'Y'), (8, 2, 'Z'), (9, 3, 'X'), (10, 3, 'Z'), (11, 3, 'Z'), (12, 3, 'Y');
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
def test_a_mismatch_with_a_subquery_limit_through_ties_is_not_graded(grader: Grader, gold: str) -> None:
    """Every airline has 4 flights, so the subquery's LIMIT 1 keeps any of them: whichever
    airline the prediction names, it is never failed, and one other than the engine's choice
    is a case error that says why."""
    verdicts = [grader.compare(f"SELECT name FROM airlines WHERE name = '{name}'", gold) for name in ("Aer", "Blu", "Cal")]
    assert sorted(v.status for v in verdicts) == ["error", "error", "passed"], [v.explanation for v in verdicts]
    for v in verdicts:
        if v.status == "error":
            assert v.case_error_kind == "gold_error"
            assert "LIMIT 1 inside a subquery cuts through rows tied on its ORDER BY keys" in v.case_error
            assert "tiebreaker" in v.case_error


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
]
PREDICTIONS = {
    "any_two": "SELECT DISTINCT a.name FROM airlines a JOIN flights f ON a.id = f.airline WHERE a.id > 1",
    "busiest_a": "SELECT a.name FROM airlines a JOIN flights f ON a.id = f.airline WHERE a.id = 1 GROUP BY a.name",
    "busiest_b": "SELECT a.name FROM airlines a JOIN flights f ON a.id = f.airline WHERE a.id = 2 GROUP BY a.name",
    "busiest_c": "SELECT a.name FROM airlines a JOIN flights f ON a.id = f.airline WHERE a.id = 3 GROUP BY a.name",
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
    assert records["any_two"]["status"] == "passed", records["any_two"]["explanation"]
    assert records["any_two"]["tie_only"] is True
    busiest = [records[f"busiest_{x}"] for x in "abc"]
    assert sorted(r["status"] for r in busiest) == ["error", "error", "passed"]
    assert not any(r["error_class"] == "wrong_join" for r in records.values())
    for r in busiest:
        if r["status"] == "error":
            assert r["failure_kind"] == "gold_error" and "cuts through rows tied" in r["case_error"]
    result.assert_outcomes(passed=2, failed=2)  # a case error at grading is not a pass: pytest shows it failed
    assert read_summary(pytester.path)["overall"]["case_errors"] == {"gold_error": 2}
    result.stdout.fnmatch_lines(["*NOT GRADED (case error) (gold_error)*"])
