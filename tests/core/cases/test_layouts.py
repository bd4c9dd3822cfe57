"""Benchmark layouts read as they come (Spider, BIRD, sql-create-context), and the
side-by-side verdicts of BIRD's and Spider's own execution checks."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from pytest_sqleval.core.cases import read_layout_predictions
from pytest_sqleval.core.grading.peers import (bird_equal, side_by_side, spider_equal, spider_order_matters,
                                         spider_variant)
from pytest_sqleval.reports.sidebyside import summarize_sidebyside
from tests.sqleval_helpers import LEAN, read_results, read_summary, sqleval_ini  # noqa: F401  (fixture)

CONCERT = """
CREATE TABLE singer (singer_id INTEGER PRIMARY KEY, name TEXT, country TEXT, age INTEGER, net_worth REAL);
INSERT INTO singer VALUES (1, 'Joe', 'France', 52, 1.1), (2, 'Ann', 'France', 43, 2.2), (3, 'Bo', 'US', 30, 0.1),
                          (4, 'Cy', 'US', 30, 0.2), (5, 'Di', 'UK', 25, NULL);
CREATE TABLE concert (concert_id INTEGER, singer_id INTEGER, year TEXT);
INSERT INTO concert VALUES (1, 1, '2014'), (2, 1, '2015'), (3, 2, '2014'), (4, 3, '2015');
"""
PETS = """
CREATE TABLE pets (petid INTEGER, pettype TEXT, weight REAL, age INTEGER);
INSERT INTO pets VALUES (1, 'cat', 3.5, 2), (2, 'dog', 12.0, 3), (3, 'dog', 9.3, 1), (4, 'cat', 4.1, 5);
"""

#: (db_id, gold, prediction, what BIRD / Spider say differently from us, and why)
SPIDER = [
    ("concert", "SELECT count(*) FROM singer", "SELECT count(*) FROM singer"),
    ("concert", "SELECT country FROM singer", "SELECT DISTINCT country FROM singer"),  # BIRD, Spider: duplicates
    ("concert", "SELECT name, age FROM singer WHERE age > 40",
     "SELECT age, name FROM singer WHERE age > 40"),  # Spider: column_order
    ("concert", "SELECT sum(net_worth) FROM singer", "SELECT total(net_worth * 10) / 10 FROM singer"),  # float_noise
    ("concert", "SELECT name FROM singer ORDER BY age DESC, name",
     "SELECT name FROM singer ORDER BY age, name"),  # BIRD: order
    ("concert", "SELECT country, count(*) FROM singer WHERE singer_id IN "
                "(SELECT singer_id FROM singer ORDER BY age LIMIT 4) GROUP BY country",
     "SELECT country, count(*) FROM singer WHERE age < 50 GROUP BY country ORDER BY country DESC"),  # Spider: order
    ("pets", "SELECT count(*) FROM pets WHERE pettype = 'dog'", "SELECT count(petid) FROM pets WHERE pettype = 'dog'"),
    ("pets", "SELECT max(age) FROM pets", ""),  # an empty line: not parsed, not executed
    ("pets", "SELECT max(age) FROM pets", "SELECT max(years) FROM pets"),
    ("concert", "SELECT DISTINCT country FROM singer",
     "SELECT country FROM singer GROUP BY country"),  # Spider drops DISTINCT from the gold: duplicates
]


def sqlite_db(path: Path, script: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path)
    con.executescript(script)
    con.close()
    return path


@pytest.fixture
def spider(pytester: pytest.Pytester) -> Path:
    """A Spider-layout folder with two databases and one-SQL-per-line predictions (pred.sql)."""
    root = pytester.path / "spider"
    sqlite_db(root / "database" / "concert" / "concert.sqlite", CONCERT)
    sqlite_db(root / "database" / "pets" / "pets.sqlite", PETS)
    dev = [{"db_id": db, "question": f"question {i}", "query": gold, "query_toks": gold.split(), "sql": {"x": 1}}
           for i, (db, gold, _) in enumerate(SPIDER)]
    (root / "dev.json").write_text(json.dumps(dev, indent=2))
    (root / "tables.json").write_text(json.dumps([{"db_id": "concert"}, {"db_id": "pets"}]))
    (root / "sqleval.toml").write_text('[suite]\nname = "spider_dev"\nlayout = "spider"\ntables = "tables.json"\n')
    lines = [pred for _, _, pred in SPIDER]
    lines[0] += "\tconcert"  # the gold file's "SQL<TAB>db_id" shape is accepted too
    (pytester.path / "pred.sql").write_text("\n".join(lines) + "\n\n")
    return root


def test_spider_layout_with_two_databases_and_one_sql_per_line(pytester: pytest.Pytester, spider: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("pytest_sqleval.core.pool.MAX_OPEN_DATABASES", 1)  # case 9 reopens concert after pets
    result = pytester.runpytest("spider", "--sqleval-backend=predictions:pred.sql", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=6, failed=4)  # the spider layout compares columns as Spider does (any order)
    out = result.stdout.str()
    assert "execution accuracy 60.0%" in out
    assert "official rules on all 10 cases: ours 60.0% (6 passed; 60.0% of the 10 we grade, 0 we do not)" in out
    assert ("BIRD set comparison: 60.0% (6 passed); differs from ours on 4 (2 pass where we fail, 2 fail where we "
            "pass): duplicates 1, order 1, column_order 1, float_noise 1") in out
    assert ("Spider test-suite comparison: 40.0% (4 passed); differs from ours on 4 (1 pass where we fail, 3 fail "
            "where we pass): distinct_stripping 2, order 1, float_noise 1") in out
    records = {r["case_id"]: r for r in read_results(pytester.path)}
    assert [records[str(i)]["pass"] for i in range(10)] == [True, False, True, True, False, True, True, False, False,
                                                            True]
    assert {r["suite"] for r in records.values()} == {"spider_dev/concert", "spider_dev/pets"}
    assert records["0"]["engine"] == "sqlite" and records["0"]["content_hash"] != records["6"]["content_hash"]
    assert records["9"]["content_hash"] == records["0"]["content_hash"]
    assert records["0"]["case_metadata"] == {"db_id": "concert"}  # tokens and the parsed tree are left out
    # a first run: no gold answer was in the store when it began, the one two cases share neither
    # (9 distinct golds each executed once: the store's files, below)
    assert not any(r["gold"]["cached"] for r in records.values())
    sbs: dict[str, Any] = {cid: (r["compare"] or {}).get("sidebyside") for cid, r in records.items()}
    assert sbs["1"]["bird_reason"] == "duplicates" and sbs["1"]["spider_distinct_removed"]
    assert sbs["2"]["bird_reason"] == "column_order" and sbs["5"]["spider_reason"] == "order"
    assert sbs["9"]["spider"] is False and sbs["9"]["spider_reason"] == "distinct_stripping"
    assert records["7"]["failure_kind"] == "parse_error" and records["8"]["error_class"] == "hallucinated_column"
    summary = read_summary(pytester.path)["backends"]["pred"]
    assert summary["execution_accuracy"] == pytest.approx(6 / 10)
    side = summary["sidebyside"]
    assert (side["cases"], side["executed"], side["ungraded"], side["ours_passed"]) == (10, 9, 0, 6)
    assert side["bird"]["reasons"] == {"duplicates": 1, "order": 1, "column_order": 1, "float_noise": 1}
    assert side["spider"]["reasons"] == {"distinct_stripping": 2, "order": 1, "float_noise": 1}
    assert {c["case_id"] for c in side["spider"]["cases"]} == {"1", "3", "5", "9"}

    # gold answers are cached per database: a rerun executes no gold query, not even Spider's DISTINCT-free variant
    cache = pytester.path / ".sqleval-cache" / "gold"
    files = sorted(cache.glob("*.arrow"))
    assert len([f for f in files if ".spider-" not in f.name]) == 9  # ten cases, two share a gold on one database
    assert len([f for f in files if ".spider-" in f.name]) == 1
    pytester.runpytest("spider", "--sqleval-backend=predictions:pred.sql", "-p", "no:cacheprovider")
    assert all(r["gold"]["cached"] for r in read_results(pytester.path))
    assert sorted(cache.glob("*.arrow")) == files


def test_spider_layout_under_xdist_gives_the_serial_results(pytester: pytest.Pytester, spider: Path) -> None:
    (pytester.path / "pred.jsonl").write_text(
        "".join(json.dumps({"id": str(i), "sql": p}) + "\n" for i, (_, _, p) in enumerate(SPIDER)))
    pytester.runpytest("spider", "--sqleval-backend=predictions:pred.jsonl", "-p", "no:cacheprovider")
    serial = (pytester.path / "sqleval-results" / "results.jsonl").read_text()
    result = pytester.runpytest_subprocess(*LEAN, "-n", "2", "spider", "--sqleval-backend=predictions:pred.jsonl",
                                           "-p", "no:cacheprovider", timeout=120)
    result.assert_outcomes(passed=6, failed=4)
    strip = lambda text: [{k: v for k, v in json.loads(line).items() if k not in ("grading_ms", "run_metadata",  # noqa: E731
                                                                                  "generation", "gold", "execution")}
                          for line in text.splitlines()]
    assert strip((pytester.path / "sqleval-results" / "results.jsonl").read_text()) == strip(serial)


BIRD = [
    {"question_id": 0, "db_id": "cards", "question": "How many cards are rare?", "evidence": "rare refers to rarity = 'rare'",
     "SQL": "SELECT count(*) FROM cards WHERE rarity = 'rare'", "difficulty": "simple"},
    {"question_id": 1, "db_id": "cards", "question": "Which artists drew rare cards?", "evidence": "",
     "SQL": "SELECT artist FROM cards WHERE rarity = 'rare'", "difficulty": "moderate"},
    {"question_id": 2, "db_id": "cards", "question": "Average price of rare cards?", "evidence": "price in dollars",
     "SQL": "SELECT avg(price) FROM cards WHERE rarity = 'rare'", "difficulty": "challenging"},
]
CARDS = """
CREATE TABLE cards (id INTEGER, artist TEXT, rarity TEXT, price REAL);
INSERT INTO cards VALUES (1, 'Rebecca', 'rare', 0.1), (2, 'Rebecca', 'rare', 0.2), (3, 'Mark', 'common', 1.0),
                         (4, 'Quinton', 'rare', 0.4);
"""


def test_bird_layout_with_evidence_and_its_prediction_file(pytester: pytest.Pytester) -> None:
    root = pytester.path / "bird"
    sqlite_db(root / "dev_databases" / "cards" / "cards.sqlite", CARDS)
    (root / "dev.json").write_text(json.dumps(BIRD, indent=2))
    (root / "sqleval.toml").write_text('[suite]\nname = "bird_dev"\nlayout = "bird"\n')
    sep = "\t----- bird -----\t"
    (pytester.path / "predict_dev.json").write_text(json.dumps({
        "0": f"SELECT count(id) FROM cards WHERE rarity = 'rare'{sep}cards",
        "1": f"SELECT DISTINCT artist FROM cards WHERE rarity = 'rare'{sep}cards",
        "2": f"SELECT sum(price * 10) / count(*) / 10 FROM cards WHERE rarity = 'rare'{sep}cards"}, indent=4))
    result = pytester.runpytest("bird", "--sqleval-backend=predictions:predict_dev.json", "-p", "no:cacheprovider",
                                "-m", "simple or moderate or challenging")
    result.assert_outcomes(passed=2, failed=1)
    out = result.stdout.str()
    assert "execution accuracy 66.7%" in out
    assert "BIRD set comparison: 66.7% (2 passed); differs from ours on 2 (1 pass where we fail, 1 fail where we pass): " \
           "duplicates 1, float_noise 1" in out
    records = {r["case_id"]: r for r in read_results(pytester.path)}
    assert records["0"]["case_metadata"] == {"question_id": 0, "db_id": "cards",
                                             "evidence": "rare refers to rarity = 'rare'"}
    assert records["0"]["difficulty"] == "simple" and records["0"]["suite"] == "bird_dev/cards"
    assert records["2"]["pass"] and records["2"]["compare"]["within_tolerance"]
    assert records["2"]["compare"]["sidebyside"]["bird_reason"] == "float_noise"


SCC = [
    {"question": "How many heads are older than 56?", "context": "CREATE TABLE head (age INTEGER)",
     "answer": "SELECT COUNT(*) FROM head WHERE age > 56"},
    {"question": "Name, born state and age of the heads by age?",
     "context": "CREATE TABLE head (name VARCHAR, born_state VARCHAR, age VARCHAR)",
     "answer": "SELECT name, born_state, age FROM head ORDER BY age"},
    {"question": "Distinct creation years of departments with a head?",
     "context": "CREATE TABLE department (creation VARCHAR, department_id VARCHAR); "
                "CREATE TABLE management (department_id VARCHAR, head_id VARCHAR)",
     "answer": "SELECT DISTINCT T1.creation FROM department AS T1 JOIN management AS T2 "
               "ON T1.department_id = T2.department_id"},
    {"question": "Budget of the department?", "context": "CREATE TABLE department (budget_in_billions INTEGER)",
     "answer": "SELECT budget_in_billions FROM department"},
]


def test_sql_create_context_without_a_database(pytester: pytest.Pytester) -> None:
    root = pytester.path / "scc"
    root.mkdir()
    (root / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in SCC))
    (root / "sqleval.toml").write_text('[suite]\nname = "scc"\nlayout = "sql-create-context"\nquestions = "data.jsonl"\n')
    (pytester.path / "pred.sql").write_text("\n".join([
        "SELECT COUNT(*) FROM head WHERE age > 60",  # values differ: no-values exact match only
        "SELECT name, born_state, age FROM head ORDER BY age",  # exact
        "SELECT DISTINCT creation FROM department JOIN management ON department.department_id = head_id",
        "SELECT creation FROM department",  # exists in case 2's context, not in this case's
    ]) + "\n")
    result = pytester.runpytest("scc", "--sqleval-backend=predictions:pred.sql", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=3)
    assert "without execution: exact match 25.0% | no-values exact match 50.0% | parse 100.0% | " \
           "schema adherence 75.0%" in result.stdout.str()
    records = {r["case_id"]: r for r in read_results(pytester.path)}
    assert [(records[k]["exact_match"], records[k]["no_values_exact_match"]) for k in "0123"] == [
        (False, True), (True, True), (False, False), (False, False)]
    assert records["3"]["error_class"] == "hallucinated_column"
    assert [h["name"] for h in records["3"]["hallucinated_columns"]] == ["creation"]
    assert records["0"]["decided_by"] == "exact_match" and records["0"]["execution"] is None
    summary = read_summary(pytester.path)["backends"]["pred"]
    assert (summary["exact_match_rate"], summary["no_values_exact_match_rate"], summary["parse_rate"],
            summary["grounding_rate"]) == (0.25, 0.5, 1.0, 0.75)
    assert summary["sidebyside"] is None


# -- bad input ---------------------------------------------------------------------------
def test_layout_mistakes_are_one_clear_error(pytester: pytest.Pytester, spider: Path) -> None:
    (spider / "sqleval.toml").write_text('[suite]\nlayout = "spyder"\n')
    out = pytester.runpytest("spider", "-p", "no:cacheprovider").stdout.str()
    assert "sqleval.toml:2: field 'suite.layout': unknown layout 'spyder' (did you mean 'spider'?)" in out
    assert "Traceback" not in out
    (spider / "sqleval.toml").write_text('[suite]\nlayout = "spider"\n')
    dev = json.loads((spider / "dev.json").read_text())
    del dev[1]["db_id"]
    text = json.dumps(dev, indent=2)
    (spider / "dev.json").write_text(text)
    second = [i for i, line in enumerate(text.splitlines(), 1) if line == "  {"][1]
    out = pytester.runpytest("spider", "-p", "no:cacheprovider").stdout.str()
    assert f"dev.json:{second}: field 'db_id': missing or empty (got None)" in out and "Traceback" not in out
    dev[1]["db_id"] = "gone"
    (spider / "dev.json").write_text(json.dumps(dev, indent=2))
    result = pytester.runpytest("spider", "-p", "no:cacheprovider", "-k", "1")
    result.assert_outcomes(errors=1)  # no tables.json to check against: the missing database is that case's error
    assert "gone/gone.sqlite" in result.stdout.str()
    (spider / "sqleval.toml").write_text('[suite]\nlayout = "spider"\ntables = "tables.json"\n')
    out = pytester.runpytest("spider", "-p", "no:cacheprovider").stdout.str()
    assert f"dev.json:{second}: field 'db_id': database 'gone' is not described in tables.json" in out


# -- prediction files in the benchmarks' formats ----------------------------------------
def test_prediction_files_in_benchmark_formats(tmp_path: Path) -> None:
    lines = tmp_path / "pred.sql"
    lines.write_text("SELECT 1\n\nSELECT 3\tdb_three\n\n\n")
    assert read_layout_predictions(lines) == {"0": ("SELECT 1", {}), "1": ("", {}),
                                              "2": ("SELECT 3", {"db_id": "db_three"})}
    bird = tmp_path / "predict_dev.json"
    bird.write_text(json.dumps({"0": "SELECT 1\t----- bird -----\tcards", "1": "SELECT 2"}))
    assert read_layout_predictions(bird) == {"0": ("SELECT 1", {"db_id": "cards"}), "1": ("SELECT 2", {})}
    jsonl = tmp_path / "p.jsonl"
    jsonl.write_text('{"id": "q1", "sql": "SELECT 1"}\n{"id": "q2", "sql": "SELECT 2"}\n')
    assert read_layout_predictions(jsonl) is None
    jsonl.write_text('{"id": "q1", "sql": "SELECT 1"}\n')
    assert read_layout_predictions(jsonl) is None


# -- their rules, our implementation ----------------------------------------------------
def test_bird_and_spider_rules() -> None:
    gold = [("a", 1), ("b", 2), ("b", 2)]
    assert bird_equal(gold, [("b", 2), ("a", 1)])  # sets: duplicates and order ignored
    assert not bird_equal(gold, [(1, "a"), (2, "b")])  # column order matters
    assert bird_equal([(1,)], [(1.0,)]) and bird_equal([(1,)], [(True,)]) and not bird_equal([(0.3,)], [(0.1 + 0.2,)])
    assert spider_equal(gold, [(2, "b"), (1, "a"), (2, "b")], order_matters=False)  # any column permutation
    assert not spider_equal(gold, [("a", 1), ("b", 2)], order_matters=False)  # bags: duplicates count
    assert not spider_equal(gold, [("b", 2), ("a", 1), ("b", 2)], order_matters=True)
    assert spider_equal([], [], True) and not spider_equal([(1,)], [], False)
    wide = [(i, i + 1, i + 2, i + 3, "x") for i in range(5)]
    assert spider_equal(wide, [(r[4], r[3], r[2], r[1], r[0]) for r in wide], order_matters=True)
    assert spider_order_matters("SELECT a FROM t WHERE b IN (SELECT b FROM u ORDER BY c LIMIT 1)")
    assert spider_variant("SELECT count(DISTINCT a), 'distinct' FROM t WHERE x > = 1", "sqlite") == \
        "SELECT count( a), 'distinct' FROM t WHERE x >= 1"


def test_side_by_side_reasons_and_summary() -> None:
    def table(rows: list[tuple], names: tuple[str, ...] = ("a", "b")) -> pa.Table:
        return pa.table({n: [r[i] for r in rows] for i, n in enumerate(names)})

    gold = table([("x", 1.0), ("y", float("nan"))])
    pred = table([("y", float("nan")), ("x", 1.0)])
    sbs = side_by_side(gold, pred, {"match": True}, gold_sql="SELECT a, b FROM t", pred_sql="SELECT a, b FROM t",
                       dialect="duckdb")
    assert (sbs["bird"], sbs["bird_reason"], sbs["spider"], sbs["spider_reason"]) == (False, "nulls", False, "nulls")
    rec = lambda cid, status, cmp, **kw: {"case_id": cid, "backend": "b", "status": status,  # noqa: E731
                                         "execution": {"ok": True}, "compare": cmp, "database": "db", **kw}
    summary = summarize_sidebyside([
        rec("1", "passed", {"match": True, "sidebyside": sbs}),
        rec("2", "failed", {"match": True, "sidebyside": {"bird": True, "spider": True}}, stale_tables=["t_old"]),
        rec("3", "failed", None),
        {"case_id": "4", "backend": "b", "status": "failed", "execution": None, "compare": None, "database": "db"},
        {"case_id": "5", "backend": "b", "status": "error", "execution": None, "compare": None},
    ])
    assert summary is not None
    assert (summary["cases"], summary["graded"], summary["executed"], summary["ours_passed"]) == (5, 4, 3, 1)
    assert summary["bird"]["reasons"] == {"nulls": 1, "deprecated_table": 1}
    assert summary["bird"]["passed"] == 1 and summary["bird"]["differs"] == 2
    assert summary["bird"]["undecided"] == 1  # case 5: an error of ours without a prediction's verdict


def test_spider_reruns_without_distinct_whatever_the_prediction_cost() -> None:
    """Spider's rule needs both queries run again without DISTINCT: every prediction is, so
    every case has Spider's verdict (the re-run is bounded by the case's limits; see
    tests/core/grading/test_pathological_sizes.py), and BIRD's rule needs no second execution."""
    t = pa.table({"n": [3]})
    runs: list[str] = []

    def run(sql: str) -> Any:
        runs.append(sql)
        return type("Outcome", (), {"error": None, "table": t})()

    sbs = side_by_side(t, t, {"match": True}, gold_sql="SELECT count(DISTINCT a) FROM t",
                       pred_sql="SELECT count(DISTINCT a) FROM t", dialect="duckdb", run=run, gold_variant=lambda sql: t)
    assert sbs["spider"] is True and sbs["bird"] is True and runs == ["SELECT count( a) FROM t"]


@pytest.mark.parametrize("indent", [None, 1, 4])
def test_json_array_entries_carry_the_line_they_start_on(tmp_path, indent):
    """Every entry of a Spider/BIRD JSON array names the line it starts on (errors cite
    it), however the array is laid out; counted once over the file, not once per entry."""
    from pytest_sqleval.core.cases.layouts import read_records
    entries = [{"db_id": "d", "question": f"q{i}\nwith a newline" * (i % 3), "query": "SELECT 1"} for i in range(40)]
    path = tmp_path / "dev.json"
    text = json.dumps(entries, indent=indent)
    path.write_text(text)
    decoder, starts, pos = json.JSONDecoder(), [], text.index("[") + 1
    while True:
        while text[pos] in " \t\r\n,":
            pos += 1
        if text[pos] == "]":
            break
        starts.append(text.count("\n", 0, pos) + 1)
        _, pos = decoder.raw_decode(text, pos)
    assert [line for line, _ in read_records(path)] == starts
    assert [obj for _, obj in read_records(path)] == entries
