"""Spider 2.0's official verdict recorded beside ours on a spider2-lite suite, end to end:
every gold CSV of a case tried, each under its own condition_cols and the case's
ignore_order, shown in the record, the terminal's "official rules" lines and report.html."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.sqleval_helpers import read_results

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "suites" / "spider2_lite"
JOIN = "FROM orders AS o JOIN customers AS c ON c.customer_id = o.customer_id"

#: backend -> case -> (its prediction (None: the fixture's submission file), ours, Spider 2.0's,
#: the index of the gold CSV Spider 2.0 matched (the case's golds: its gold SQL first, then its CSVs))
EXPECTED: dict[str, dict[str, tuple[str | None, bool, bool, int | None]]] = {
    "submission": {
        "local001": (None, True, True, 1),  # agree: the same answer, a column unnamed
        "local002": (None, True, True, 1),  # agree: names and counts, the _b CSV (its own condition_cols [0])
        "local003": (None, True, True, 1),  # agree: rounded averages within 0.01 of the CSV
        "local004": (None, False, True, 1),  # differ: NULL written as 0, which Spider 2.0 counts as 0
    },
    "wrong": {
        # differ: each column sorted on its own (ignore_order), so Spider 2.0 pairs 30.0 with Porto's row
        "local001": ("SELECT 'Lisbon', 30.0 UNION ALL SELECT 'Porto', 42.75", False, True, 1),
        # agree: the names alone are the _b CSV's own condition_cols [0] (local002 has no gold SQL, so _b is
        # gold 1), and our strict verdict reads each CSV's own list too
        "local002": (f"SELECT c.name {JOIN} WHERE o.status = 'delivered' GROUP BY c.name HAVING COUNT(*) > 1",
                     True, True, 1),
        # agree: it does not run (a hallucinated column), both fail
        "local003": ("SELECT s.name, AVG(sc.scor) FROM students s JOIN scores sc USING (student_id) GROUP BY s.name",
                     False, False, None),
        # agree: order reversed, and ignore_order is false for local004: both fail
        "local004": ("SELECT order_id, amount FROM orders ORDER BY order_id DESC", False, False, None),
    },
}


@pytest.fixture
def graded(pytester: pytest.Pytester) -> tuple[Any, dict[tuple[str, str], dict[str, Any]], str]:
    shutil.copytree(FIXTURE, pytester.path / "spider2-lite")
    wrong = pytester.path / "wrong"
    wrong.mkdir()
    for case, (sql, *_) in EXPECTED["wrong"].items():
        assert sql is not None
        (wrong / f"{case}.sql").write_text(sql + "\n")
    result = pytester.runpytest("spider2-lite", "--sqleval-backend=predictions:spider2-lite/submission,predictions:wrong",
                                "-p", "no:cacheprovider", "-W", "ignore::UserWarning")
    recs = {(r["backend"], r["case_id"]): r for r in read_results(pytester.path)}
    page = (pytester.path / "sqleval-results" / "report.html").read_text(encoding="utf-8")
    return result, recs, page


def verdicts(record: dict[str, Any]) -> dict[str, Any]:
    return (record.get("compare") or {}).get("sidebyside") or record.get("sidebyside") or {}


def test_spider2_official_verdict_beside_ours_in_record_terminal_and_report(
        graded: tuple[Any, dict[tuple[str, str], dict[str, Any]], str]) -> None:
    result, recs, page = graded
    # the record, verdict by verdict
    got = {backend: {case: (recs[(backend, case)]["pass"], verdicts(recs[(backend, case)]).get("spider2"),
                            verdicts(recs[(backend, case)]).get("spider2_gold"))
                     for case in cases}
           for backend, cases in EXPECTED.items()}
    assert got == {backend: {case: (ours, official, gold) for case, (_, ours, official, gold) in cases.items()}
                   for backend, cases in EXPECTED.items()}
    assert recs[("wrong", "local002")]["matched_gold"]["source"].endswith("local002_b.csv")
    # the terminal's "official rules" lines
    result.stdout.fnmatch_lines([
        "backend submission:*",
        "*official rules on all 4 cases: ours 75.0%*",
        "*Spider 2.0 comparison: 100.0% (4 passed); differs from ours on 1 (1 pass where we fail, 0 fail where we pass)"
        ": nulls 1",  # local004: NULL written as 0
        "backend wrong:*",
        "*official rules on all 4 cases: ours 25.0%*",
        "*Spider 2.0 comparison: 50.0% (2 passed); differs from ours on 1 (1 pass where we fail, 0 fail where we pass)"
        ": other 1",  # local001: each column sorted on its own
    ])
    # report.html, beside BIRD's and Spider's
    data = json.loads(re.search(r"const D = (\{.*?\});\n", page, re.S).group(1))  # type: ignore[union-attr]
    shown = {(r["backend"], data["cases"][r["c"]]["id"]): r["sidebyside"] for r in data["runs"]}
    assert {k: v["spider2"] for k, v in shown.items()} == {
        (backend, case): official for backend, cases in EXPECTED.items() for case, (_, _, official, _) in cases.items()}
    assert "<th>Spider 2.0</th>" in page


def test_a_suite_of_another_layout_has_no_spider2_verdict(pytester: pytest.Pytester, shop_suite: Path) -> None:
    result = pytester.runpytest("suite", "--sqleval-backend=gold", "-p", "no:cacheprovider")
    assert all("spider2" not in verdicts(r) for r in read_results(pytester.path))
    assert "Spider 2.0 comparison" not in result.stdout.str()


def test_a_case_we_do_not_grade_still_gets_spider2s_verdict_from_its_csvs(pytester: pytest.Pytester) -> None:
    """Our gold query returns nothing (an empty gold: we give no verdict); Spider 2.0 compares
    with the gold CSV alone, so its verdict stands."""
    suite = pytester.path / "spider2-lite"
    shutil.copytree(FIXTURE, suite)
    (suite / "evaluation_suite/gold/sql/local001.sql").write_text("SELECT city FROM customers WHERE 1 = 0\n")
    pytester.runpytest("spider2-lite", "--sqleval-backend=predictions:spider2-lite/submission", "-k", "local001",
                       "-p", "no:cacheprovider", "-W", "ignore::UserWarning")
    (rec,) = read_results(pytester.path)
    assert rec["status"] == "error" and rec["sidebyside"]["ungraded"] == "empty_gold"
    assert rec["sidebyside"]["spider2"] is True and rec["sidebyside"]["spider2_gold"] == 1
