"""Spider's official verdict runs the prediction its evaluator runs, not the one written:
``evaluation.py`` replaces every ``value`` in the prediction (a plain, case-sensitive
substring: in identifiers and strings too) with ``1``, ``exec_eval.postprocess`` joins
``> =``, ``< =`` and ``! =`` in both queries, and each query has ``YEAR(CURDATE())``
replaced by ``2020`` as it runs. Our own verdict grades the prediction as written, and its
failure text says what the official evaluator does with it.

The expected official verdicts below were checked against test-suite-sql-eval's
``evaluation.py --etype exec`` itself (``bench/official_agreement.py``)."""
from __future__ import annotations

import json
import sqlite3
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_sqleval.core.api import Grader
from pytest_sqleval.core.grading.peers import spider_variant
from pytest_sqleval.core.grading.spider_text import official_prediction, official_rewrites
from tests.sqleval_helpers import read_results, sqleval_ini  # noqa: F401  (fixture)

DB = """
CREATE TABLE singer (singer_id INTEGER PRIMARY KEY, name TEXT, country TEXT, age INTEGER, net_worth REAL);
INSERT INTO singer VALUES (1, 'Joe', 'France', 52, 1.1), (2, 'Ann', 'France', 43, 2.2), (3, 'Bo', 'US', 30, 0.1),
                          (4, 'Cy', 'US', 30, 0.2), (5, 'Di', 'UK', 25, NULL);
CREATE TABLE stock (item TEXT, value INTEGER, value_id INTEGER, label TEXT);
INSERT INTO stock VALUES ('pen', 3, 1, 'value'), ('ink', 1, 2, '1'), ('pad', 2, 2, 'plain');
"""

#: gold, prediction, ours (as written), Spider's official verdict, the rewrites it makes -- and why
CRAFTED = [
    # the placeholder of a value-less model: no such column as written; `age > 1` counts all 5, as the gold does
    ("SELECT count(*) FROM singer WHERE age > 1", "SELECT count(*) FROM singer WHERE age > value",
     False, True, ["value_placeholder"]),
    # ... and where `1` is not the gold's value, wrong under both
    ("SELECT name FROM singer WHERE age > 40", "SELECT name FROM singer WHERE age > value",
     False, False, ["value_placeholder"]),
    # inside an identifier: `value_id` becomes `1_id`, which SQLite cannot tokenize
    ("SELECT item FROM stock WHERE value_id = 2", "SELECT item FROM stock WHERE value_id = 2",
     True, False, ["value_placeholder"]),
    # inside a string: 'value' becomes '1', another row
    ("SELECT item FROM stock WHERE label = 'value'", "SELECT item FROM stock WHERE label = 'value'",
     True, False, ["value_placeholder"]),
    # a real column named value: sum(value) becomes sum(1); the gold is never rewritten
    ("SELECT sum(value) FROM stock", "SELECT sum(value) FROM stock", True, False, ["value_placeholder"]),
    # an alias: `AS 1` is a syntax error where the prediction as written runs
    ("SELECT count(*) FROM singer", "SELECT count(*) AS value FROM singer", True, False, ["value_placeholder"]),
    # case-sensitive: `Value` is left alone, and is no column
    ("SELECT count(*) FROM singer WHERE age > 1", "SELECT count(*) FROM singer WHERE age > Value", False, False, []),
    # spaced operators: a parse error as written, joined by the official evaluator
    ("SELECT name FROM singer WHERE country != 'US'", "SELECT name FROM singer WHERE country ! = 'US'",
     False, True, ["spaced_operator"]),
    ("SELECT count(*) FROM singer WHERE age >= 30", "SELECT count(*) FROM singer WHERE age > = 30",
     False, True, ["spaced_operator"]),
    ("SELECT count(*) FROM singer WHERE age <= 30", "SELECT count(*) FROM singer WHERE age < = 30",
     False, True, ["spaced_operator"]),
    ("SELECT count(*) FROM singer WHERE age <= 30", "SELECT count(*) FROM singer WHERE age < = 43",
     False, False, ["spaced_operator"]),
    # two spaces are not one: left as written, a syntax error under both
    ("SELECT count(*) FROM singer WHERE age >= 30", "SELECT count(*) FROM singer WHERE age >  = 30", False, False, []),
    # joined, then DISTINCT dropped from both: the same bag
    ("SELECT DISTINCT country FROM singer WHERE age != 30", "SELECT DISTINCT country FROM singer WHERE age ! = 30",
     False, True, ["spaced_operator"]),
    # both rewrites at once: `age > 1 AND country != 'UK'`
    ("SELECT count(*) FROM singer WHERE age > 1 AND country != 'UK'",
     "SELECT count(*) FROM singer WHERE age > value AND country ! = 'UK'",
     False, True, ["value_placeholder", "spaced_operator"]),
    # MySQL's current year, which SQLite has not: 2020 at execution
    ("SELECT name FROM singer WHERE age > 30", "SELECT name FROM singer WHERE age > YEAR(CURDATE()) - 1990",
     False, True, ["current_year"]),
    # nothing to rewrite: both verdicts as before
    ("SELECT name FROM singer WHERE age > 40", "SELECT name FROM singer WHERE age > 40", True, True, []),
]


@pytest.fixture(scope="module")
def grader(tmp_path_factory: pytest.TempPathFactory) -> Any:
    path = tmp_path_factory.mktemp("official") / "concert.sqlite"
    con = sqlite3.connect(path)
    con.executescript(DB)
    con.close()
    with Grader(path, dialect="sqlite", column_order="any") as g:
        yield g


def spider_verdict(verdict: Any) -> bool | None:
    """Spider's verdict where a record keeps it: beside our comparison, else in the
    ``official`` layer, else wrong (the prediction ran to no result)."""
    compare = verdict.layers.get("compare")
    if compare is not None:
        return compare["sidebyside"]["spider"]
    found = (verdict.layers.get("official") or {}).get("sidebyside")
    return found["spider"] if found is not None else False


@pytest.mark.parametrize("gold, pred, ours, spider, rewrites", CRAFTED, ids=[c[1] for c in CRAFTED])
def test_spider_runs_the_prediction_its_evaluator_rewrites(grader: Any, gold: str, pred: str, ours: bool,
                                                           spider: bool, rewrites: list[str]) -> None:
    verdict = grader.compare(pred, gold)
    assert verdict.passed is ours  # graded as written
    assert spider_verdict(verdict) is spider
    found = (verdict.layers.get("official") or {}).get("rewrites") or []
    assert [r["rewrite"] for r in found] == rewrites


def test_a_rewrite_that_decides_is_named_as_the_reason(grader: Any) -> None:
    verdict = grader.compare("SELECT count(*) FROM singer WHERE age > = 30", "SELECT count(*) FROM singer WHERE age >= 30")
    sbs = verdict.layers["official"]["sidebyside"]
    assert (sbs["spider"], sbs["spider_reason"], sbs["bird"]) == (True, "spaced_operator", False)
    verdict = grader.compare("SELECT item FROM stock WHERE label = 'value'", "SELECT item FROM stock WHERE label = 'value'")
    assert verdict.layers["compare"]["sidebyside"]["spider_reason"] == "value_placeholder"
    assert verdict.layers["compare"]["sidebyside"]["bird"] is True  # BIRD runs it as written


def test_the_official_rewrite_is_string_replacement_in_the_official_order() -> None:
    assert official_prediction("SELECT value_id, 'value', Value FROM values_t WHERE a ! = 1 AND b > = 2") == \
        "SELECT 1_id, '1', Value FROM 1s_t WHERE a != 1 AND b >= 2"
    assert spider_variant("SELECT DISTINCT value FROM t WHERE y < = YEAR( CURDATE( ) ) ", "sqlite", prediction=True) \
        == "SELECT  1 FROM t WHERE y <= 2020"
    assert spider_variant("SELECT value FROM t", "sqlite") == "SELECT value FROM t"  # the gold keeps its `value`
    where = official_rewrites("SELECT a\nFROM t WHERE b ! = 1 AND c ! = 2")
    assert where == [{"rewrite": "spaced_operator", "text": "! =", "count": 2, "line": 2, "col": 16, "becomes": "!="}]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="value! =<>1_'x\n", max_size=40))
def test_the_official_rewrite_is_idempotent_and_leaves_nothing_to_rewrite(sql: str) -> None:
    """So the engine may apply it to a query rewritten already (``OfficialLayer`` sends one)."""
    once = official_prediction(sql)
    assert official_prediction(once) == once
    assert official_rewrites(once) == []
    assert once == sql or official_rewrites(sql)


def test_the_failure_text_names_the_rewrite_and_the_official_verdict(pytester: pytest.Pytester) -> None:
    root = pytester.path / "spider"
    (root / "database" / "concert").mkdir(parents=True)
    con = sqlite3.connect(root / "database" / "concert" / "concert.sqlite")
    con.executescript(DB)
    con.close()
    cases = [("SELECT name FROM singer WHERE country != 'US'", "SELECT name FROM singer WHERE country ! = 'US'"),
             ("SELECT count(*) FROM singer WHERE age > 1", "SELECT count(*) FROM singer WHERE age > value"),
             # a case we do not grade (an empty gold): Spider's verdict on the rewritten query all the same
             ("SELECT name FROM singer WHERE age > 90", "SELECT name FROM singer WHERE age ! = age"),
             # a gold that does not parse as written (we do not grade it): Spider joins its operator too
             ("SELECT name FROM singer WHERE country ! = 'US'", "SELECT name FROM singer WHERE country != 'US'")]
    (root / "dev.json").write_text(json.dumps([{"db_id": "concert", "question": f"q{i}", "query": g}
                                               for i, (g, _) in enumerate(cases)]))
    (root / "sqleval.toml").write_text('[suite]\nname = "spider_dev"\nlayout = "spider"\n')
    (pytester.path / "pred.sql").write_text("\n".join(p for _, p in cases) + "\n")
    result = pytester.runpytest("spider", "--sqleval-backend=predictions:pred.sql", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=2, errors=2)
    result.stdout.fnmatch_lines([
        "*graded as written; Spider's official evaluator rewrites it before running it: the spaced operator '! =' "
        "(line 1, col 39): joined to '!='; its verdict on the rewritten query: pass",
        "*graded as written; Spider's official evaluator rewrites it before running it: the placeholder 'value' "
        "(line 1, col 41): every 'value' becomes '1'; its verdict on the rewritten query: pass"])
    records = {r["case_id"]: r for r in read_results(pytester.path)}
    assert [records[k]["sidebyside"]["spider"] for k in "0123"] == [True, True, True, True]
    assert [records[k]["sidebyside"]["bird"] for k in "0123"] == [False, False, False, False]  # run as written
    assert records["2"]["status"] == "error" and records["2"]["sidebyside"]["ungraded"] == "empty_gold"
    assert records["3"]["status"] == "error" and records["3"]["sidebyside"]["ungraded"] == "gold_problem"
    assert "Spider test-suite comparison: 100.0% (4 passed); differs from ours on 2" in result.stdout.str()
