"""Passes that rest only on a tie: when a gold's ``ORDER BY ... LIMIT k`` cuts through tied
rows, any valid top-k is accepted, so a wrong query whose rows fall into the tie group
matches by chance. The grader records such a pass as tie-only (with the tie group's size,
the rows the gold ranks and k), counts it apart, and when every ranked row ties (every
airline has as many flights) says the case is undecidable on this database: not a pass.
The official-compatible verdicts stay what the official evaluators say."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pytest

from pytest_sqleval.core.api import Grader
from pytest_sqleval.reports.summary import rates
from tests.sqleval_helpers import by_case, read_results, read_summary, sqleval_ini  # noqa: F401  (autouse fixture)

BUSIEST = ("SELECT a.name FROM airlines a JOIN flights f ON a.id = f.airline GROUP BY a.name "
           "ORDER BY count(*) DESC LIMIT 1")
NO_JOIN = "SELECT name FROM airlines LIMIT 1"  # never looks at the flights


def airlines(path: Path, flights: dict[int, int]) -> Path:
    """Airlines 1 Aer, 2 Blu, 3 Cal, 4 Dan with ``flights[id]`` flights each."""
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE airlines (id INTEGER, name TEXT)")
    con.execute("INSERT INTO airlines VALUES (1, 'Aer'), (2, 'Blu'), (3, 'Cal'), (4, 'Dan')")
    con.execute("CREATE TABLE flights (id INTEGER, airline INTEGER)")
    rows = [(i, a) for i, a in enumerate((a for a, n in sorted(flights.items()) for _ in range(n)), 1)]
    con.executemany("INSERT INTO flights VALUES (?, ?)", rows)
    con.close()
    return path


ALL_TIED = {1: 5, 2: 5, 3: 5, 4: 5}  # every airline at 5 flights: any airline is "the busiest"
TWO_TIED = {1: 2, 2: 5, 3: 5, 4: 1}  # Blu and Cal tie at the top
UNIQUE = {1: 5, 2: 6, 3: 5, 4: 5}  # Blu alone at the top


@pytest.mark.parametrize("flights, pred, status, tie_only", [
    (ALL_TIED, NO_JOIN, "undecidable", False),
    (ALL_TIED, "SELECT name FROM airlines ORDER BY name DESC LIMIT 1", "undecidable", False),
    (ALL_TIED, BUSIEST, "passed", False),  # the gold's own SQL: decided by the SQL, not the data
    (ALL_TIED, "SELECT 'Eve'", "failed", False),
    (TWO_TIED, "SELECT name FROM airlines WHERE id = 4", "failed", False),
    (UNIQUE, "SELECT a.name FROM airlines a JOIN flights f ON a.id = f.airline GROUP BY 1 ORDER BY count(*) DESC "
             "LIMIT 1", "passed", False),
    (UNIQUE, NO_JOIN, "failed", False),
], ids=["no-join", "any-airline", "gold-itself", "not-an-airline", "outside-the-group", "unique-top", "unique-no-join"])
def test_a_pass_through_ties_is_told_apart(tmp_path: Path, flights: dict[int, int], pred: str, status: str,
                                           tie_only: bool) -> None:
    with Grader(airlines(tmp_path / "air.duckdb", flights), cache_dir=tmp_path / "cache") as g:
        verdict = g.compare(pred, BUSIEST)
    assert (verdict.status, verdict.tie_only) == (status, tie_only), verdict.explanation
    if status == "undecidable":
        assert not verdict.passed and verdict.failure_kind == "undecidable_ties" and verdict.error_class is None
        assert "undecidable on this database" in verdict.explanation
        tie = verdict.layers["compare"]["tie_group"]
        assert (tie["limit"], tie["group_rows"], tie["candidates"], tie["all_tied"]) == (1, 4, 4, True)


def test_the_other_tied_row_passes_as_tie_only(tmp_path: Path) -> None:
    """Blu and Cal tie at the top of four airlines: the one the gold did not return passes,
    marked tie-only, with the evidence (2 tied of 4 ranked, k = 1); the gold's own passes plainly."""
    with Grader(airlines(tmp_path / "air.duckdb", TWO_TIED), cache_dir=tmp_path / "cache") as g:
        gold_row = g.compare("SELECT 'x'", BUSIEST).layers["compare"]["missing_rows"][0][0]
        other = "Cal" if gold_row == "Blu" else "Blu"
        own = g.compare(f"SELECT name FROM airlines WHERE name = '{gold_row}'", BUSIEST)
        tied = g.compare(f"SELECT name FROM airlines WHERE name = '{other}'", BUSIEST)
    assert own.status == "passed" and not own.tie_only
    assert tied.status == "passed" and tied.tie_only, tied.explanation
    assert "only through its tie group" in tied.explanation
    tie = tied.layers["compare"]["tie_group"]
    assert (tie["tie_only"], tie["group_rows"], tie["candidates"], tie["limit"], tie["all_tied"]) == (True, 2, 4, 1, False)


# -- a pytest run: records, summary.json, the terminal and the HTML report ---------------------
def test_a_run_counts_tie_only_and_undecidable_apart(pytester: pytest.Pytester, make_suite: Any,
                                                     write_predictions: Any) -> None:
    tied = make_suite([{"id": "tied_nojoin", "question": "Which airline has the most flights?", "gold_sql": BUSIEST},
                       {"id": "tied_other", "question": "Which airline has the most flights?", "gold_sql": BUSIEST}],
                      folder="tied", database=airlines(pytester.path / "tied.duckdb", ALL_TIED))
    unique = make_suite([{"id": "unique_right", "question": "Which airline has the most flights?", "gold_sql": BUSIEST},
                         {"id": "unique_nojoin", "question": "Which airline has the most flights?", "gold_sql": BUSIEST}],
                        folder="unique", database=airlines(pytester.path / "unique.duckdb", UNIQUE))
    two = make_suite([{"id": "two_blu", "question": "Which airline has the most flights?", "gold_sql": BUSIEST},
                      {"id": "two_cal", "question": "Which airline has the most flights?", "gold_sql": BUSIEST}],
                     folder="two", database=airlines(pytester.path / "two.duckdb", TWO_TIED))
    preds = write_predictions({
        "tied_nojoin": NO_JOIN, "tied_other": "SELECT name FROM airlines ORDER BY name DESC LIMIT 1",
        "unique_right": BUSIEST.replace("a.name FROM", "a.name AS airline FROM"), "unique_nojoin": NO_JOIN,
        "two_blu": "SELECT name FROM airlines WHERE id = 2", "two_cal": "SELECT name FROM airlines WHERE id = 3"})
    result = pytester.runpytest(str(tied), str(unique), str(two), f"--sqleval-backend=predictions:{preds}",
                                "-p", "no:cacheprovider")
    records = by_case(read_results(pytester.path))
    assert {c: r["status"] for c, r in records.items()} == {
        "tied_nojoin": "undecidable", "tied_other": "undecidable", "unique_right": "passed", "unique_nojoin": "failed",
        "two_blu": "passed", "two_cal": "passed"}
    assert sorted(records[c]["tie_only"] for c in ("two_blu", "two_cal")) == [False, True]
    assert not any(records[c]["tie_only"] for c in ("tied_nojoin", "tied_other", "unique_right"))
    for c in ("tied_nojoin", "tied_other"):
        r = records[c]
        assert r["pass"] is False and r["failure_kind"] == "undecidable_ties" and r["error_class"] is None
        assert r["compare"]["tie_group"]["all_tied"] is True
        # Spider's evaluator compares with the row the gold happened to return, as it always did
        assert r["compare"]["sidebyside"]["spider"] is (not r["compare"]["tie_group"]["tie_only"])

    overall = read_summary(pytester.path)["overall"]
    assert (overall["passed"], overall["failed"], overall["undecidable"], overall["errors"]) == (3, 1, 2, 0)
    assert overall["tie_only_passes"] == 1
    assert overall["pass_rate"] == pytest.approx(3 / 6) and overall["execution_accuracy"] == pytest.approx(3 / 6)
    assert overall == rates(list(records.values()))
    result.assert_outcomes(passed=3, failed=3)  # undecidable is not a pass
    result.stdout.fnmatch_lines(["*tied_nojoin*UNDECIDABLE on this database, not a pass (undecidable_ties)*",
                                 "*3 passed, 1 failed, 2 undecidable, 0 errors*",
                                 "*ties: 1 pass(es) rest only on a tie group*2 undecidable on this database*"])
    page = (pytester.path / "sqleval-results" / "report.html").read_text()
    assert "tie-only passes" in page and "undecidable" in page


def test_a_variant_where_the_top_is_unique_decides_an_undecidable_case(tmp_path: Path) -> None:
    """With database variants, a variant on which the gold's answer is deterministic (a
    subset that leaves one airline with the most flights) tells the two apart: the query
    that ranks passes, confirmed there; the one without the join is a coincidence."""
    with Grader(airlines(tmp_path / "air.duckdb", ALL_TIED), cache_dir=tmp_path / "cache", variants=4) as g:
        right = g.compare("SELECT a.name FROM airlines a JOIN flights f ON a.id = f.airline GROUP BY 1 "
                          "ORDER BY count(*) DESC, 1 DESC LIMIT 1", BUSIEST)
        wrong = g.compare(NO_JOIN, BUSIEST)
    assert right.status == "passed" and right.layers["variants"]["graded"] >= 1, right.explanation
    assert "confirmed on" in right.explanation
    assert wrong.status == "failed" and wrong.failure_kind == "coincidental_pass", wrong.explanation
