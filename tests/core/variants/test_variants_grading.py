"""Grading with database variants: a wrong query that matches the gold only by coincidence
on the pinned database fails as ``coincidental_pass`` (with the variant and both results
in its failure text), a correct rewrite and the gold still pass, a gold empty on the
pinned database is graded where a variant gives it rows, and the summary puts the
snapshot's accuracy beside the test-suite accuracy."""
from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from tests.sqleval_helpers import read_results, read_summary, sqleval_ini  # noqa: F401  (fixture)

CASES = [
    {"id": "big", "question": "How many orders of 100 or more?", "gold_sql": "SELECT count(*) FROM orders WHERE amount >= 100"},
    {"id": "exact", "question": "Which orders are for exactly 100?", "gold_sql": "SELECT id FROM orders WHERE amount = 100"},
    {"id": "fr", "question": "Revenue from French customers", "gold_sql":
        "SELECT sum(o.amount) FROM orders o JOIN customers c ON c.id = o.customer_id WHERE c.country = 'FR'"},
]
PREDICTIONS = {
    "big": "SELECT count(*) FROM orders WHERE amount > 100",  # no order is exactly 100 on the pinned data
    "exact": "SELECT id FROM orders WHERE amount = 101",  # empty, like the gold, on the pinned data
    "fr": "SELECT sum(amount) FROM orders WHERE customer_id IN (SELECT id FROM customers WHERE country = 'FR')",
}


def make_db(path: Path) -> None:
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name VARCHAR NOT NULL, country VARCHAR NOT NULL)")
    con.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id), "
                "amount INTEGER NOT NULL)")
    con.execute("INSERT INTO customers SELECT i, 'c' || i, CASE WHEN i % 3 = 0 THEN 'FR' ELSE 'DE' END "
                "FROM range(1, 41) t(i)")
    # amounts skip 100 and 101: the boundary is empty on the pinned data
    con.execute("INSERT INTO orders SELECT i, 1 + i % 40, CASE WHEN i % 2 = 0 THEN 40 + i % 50 ELSE 110 + i % 50 END "
                "FROM range(1, 401) t(i)")
    con.close()


def write_suite(where: Path, cases: list[dict], predictions: dict[str, str], count: int) -> Path:
    """``where/suite`` (the shop database, its questions, ``[variants] count``) and ``where/preds.jsonl``."""
    root = where / "suite"
    root.mkdir()
    make_db(root / "shop.duckdb")
    (root / "questions.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    (root / "sqleval.toml").write_text('[suite]\nname = "shop"\nquestions = "questions.jsonl"\n'
                                       f'database = "shop.duckdb"\n\n[variants]\ncount = {count}\n')
    (where / "preds.jsonl").write_text("".join(json.dumps({"id": k, "sql": v}) + "\n" for k, v in predictions.items()))
    return root


@pytest.fixture
def suite(pytester: pytest.Pytester) -> Path:
    return write_suite(pytester.path, CASES, PREDICTIONS, 4)


def test_a_coincidence_on_the_database_fails_on_a_variant(pytester: pytest.Pytester, suite: Path) -> None:
    result = pytester.runpytest(str(suite), "--sqleval-backend=gold,predictions:preds.jsonl", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=4, failed=2)
    records = {(r["case_id"], r["backend"]): r for r in read_results(pytester.path)}
    assert all(records[(c["id"], "gold")]["status"] == "passed" for c in CASES)  # the gold passes everywhere
    big = records[("big", "preds")]
    assert (big["status"], big["failure_kind"]) == ("failed", "coincidental_pass")
    assert big["compare"]["match"]  # it did match on the pinned database
    mismatch = big["layers"]["variants"]["mismatch"]
    assert mismatch["compare"]["gold_rows"] == mismatch["compare"]["pred_rows"] == 1  # one count each, different
    exact = records[("exact", "preds")]  # a gold empty on the pinned database is graded on a variant
    assert exact["failure_kind"] == "coincidental_pass"
    assert records[("fr", "preds")]["status"] == "passed"  # a correct rewrite passes on every variant
    assert records[("fr", "preds")]["layers"]["variants"]["graded"] >= 1
    b = read_summary(pytester.path)["backends"]["preds"]
    assert (b["coincidental_passes"], b["snapshot_accuracy"], b["test_suite_accuracy"]) == (2, 1.0, pytest.approx(1 / 3, abs=1e-6))
    out = result.stdout.str()
    assert "matches on the database, not on variant" in out and "gold result there:" in out
    assert "coincidental pass(es) caught" in out


def test_without_variants_the_coincidence_passes_and_the_empty_gold_is_a_case_error(
        pytester: pytest.Pytester, suite: Path) -> None:
    result = pytester.runpytest(str(suite), "--sqleval-backend=predictions:preds.jsonl", "--sqleval-variants=0",
                                "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, errors=1)
    records = {r["case_id"]: r for r in read_results(pytester.path)}
    assert records["big"]["status"] == "passed" and "variants" not in records["big"]["layers"]
    assert records["exact"]["status"] == "error" and "no rows" in records["exact"]["case_error"]


def test_a_rerun_builds_and_distils_nothing(pytester: pytest.Pytester, suite: Path) -> None:
    args = [str(suite), "--sqleval-backend=predictions:preds.jsonl", "-p", "no:cacheprovider"]
    pytester.runpytest(*args).assert_outcomes(passed=1, failed=2)
    cache = pytester.path / ".sqleval-cache" / "variants"
    files = {p: p.stat().st_mtime_ns for p in cache.rglob("*") if p.is_file() and not p.name.startswith(".")}
    pytester.runpytest(*args).assert_outcomes(passed=1, failed=2)
    changed = sorted(str(p.relative_to(cache)) for p, t in files.items() if p.stat().st_mtime_ns != t)
    assert files and not changed, changed


def test_a_rerun_grades_on_the_variants_with_the_execution_and_the_same_verdicts(
        pytester: pytest.Pytester, suite: Path) -> None:
    """Once each gold's variants are chosen, a match is run on them in the request that
    executes it (no second round trip), and the gold's own query is not run there at all:
    the verdicts and their evidence are the first run's."""
    pytester.makeconftest("""
        from pytest_sqleval.core.engines.host import EngineHost
        OPS, REAL = [], EngineHost.call
        def counted(self, op, payload, **kw):
            OPS.append(op)
            return REAL(self, op, payload, **kw)
        EngineHost.call = counted
        def pytest_unconfigure(config):
            print("variants requests:", OPS.count("variants"))
    """)
    args = [str(suite), "--sqleval-backend=gold,predictions:preds.jsonl", "-p", "no:cacheprovider", "-s"]

    def run() -> tuple[str, dict]:
        result = pytester.runpytest_subprocess(*args)
        result.assert_outcomes(passed=4, failed=2)
        return result.stdout.str(), {(r["case_id"], r["backend"]): r for r in read_results(pytester.path)}

    first_out, first = run()
    again_out, again = run()
    assert "variants requests: 0" not in first_out and "variants requests: 0" in again_out
    for key, rec in first.items():
        was, now = rec["layers"].get("variants") or {}, again[key]["layers"].get("variants") or {}
        assert (again[key]["status"], again[key]["failure_kind"]) == (rec["status"], rec["failure_kind"])
        assert (now.get("graded"), (now.get("mismatch") or {}).get("variant")) == \
            (was.get("graded"), (was.get("mismatch") or {}).get("variant")), key
    gold = again[("fr", "gold")]["layers"]["variants"]
    assert gold["same_sql_as_gold"] and gold["graded"] == gold["chosen"] >= 1


def test_a_damaged_stored_gold_answer_on_a_variant_is_computed_again(pytester: pytest.Pytester, suite: Path) -> None:
    """A variant's stored gold answer is checked against its checksum as it is read: other
    bytes are no answer, so the gold runs there again and the verdicts do not move."""
    args = [str(suite), "--sqleval-backend=predictions:preds.jsonl", "-p", "no:cacheprovider"]
    pytester.runpytest(*args).assert_outcomes(passed=1, failed=2)
    first = {r["case_id"]: (r["status"], r["failure_kind"]) for r in read_results(pytester.path)}
    stored = sorted((pytester.path / ".sqleval-cache" / "gold" / "variants").rglob("*.arrow"))
    assert stored
    for path in stored:
        path.write_bytes(path.read_bytes()[:-8] + b"garbage!")
    pytester.runpytest(*args).assert_outcomes(passed=1, failed=2)
    assert {r["case_id"]: (r["status"], r["failure_kind"]) for r in read_results(pytester.path)} == first
    assert any(not p.read_bytes().endswith(b"garbage!") for p in stored)  # those graded on: rewritten whole


def test_variants_on_an_engine_that_cannot_make_them_is_one_clear_error(pytester: pytest.Pytester) -> None:
    root = pytester.path / "pg"
    root.mkdir()
    (root / "questions.jsonl").write_text(json.dumps(CASES[0]) + "\n")
    (root / "sqleval.toml").write_text('[suite]\nname = "pg"\nquestions = "questions.jsonl"\n'
                                       'database = "postgresql://grader@localhost/shop"\n')
    result = pytester.runpytest(str(root), "--sqleval-variants=4", "-p", "no:cacheprovider")
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*database variants are not supported on this engine (postgres*"])
    assert "Traceback" not in result.stdout.str()


def test_a_match_with_the_second_gold_is_checked_on_that_golds_variants_and_by_the_peers_against_it(
        pytester: pytest.Pytester) -> None:
    """The variants and the peers' verdicts read the gold the prediction matched (the
    record's ``matched_gold``), not the case's first gold."""
    cases = [{"id": "two", "question": "How many orders of 100 or more?", "gold_sql": [
        "SELECT count(*) FROM orders WHERE amount >= 150",  # another answer: the prediction does not match it
        "SELECT count(*) FROM orders WHERE amount >= 100"]},
        {"id": "near", "question": "Orders of customer 3 and their amounts", "gold_sql": [
            "SELECT count(*) FROM orders", "SELECT id, amount FROM orders WHERE customer_id = 3"]}]
    predictions = {"two": "SELECT count(*) FROM orders WHERE amount > 100",  # equal only while no order is 100
                   "near": "SELECT id, amount FROM orders WHERE customer_id = 3 AND amount > 60"}
    suite = write_suite(pytester.path, cases, predictions, 4)
    result = pytester.runpytest(str(suite), "--sqleval-backend=predictions:preds.jsonl", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=2)
    records = {r["case_id"]: r for r in read_results(pytester.path)}
    two = records["two"]
    assert two["layers"]["golds"]["compared"] == 1 and two["compare"]["match"]  # it matched gold 1 on the database
    assert two["failure_kind"] == "coincidental_pass"  # and gold 1's variants tell it apart
    assert two["layers"]["variants"]["graded"] >= 1
    sbs = two["compare"]["sidebyside"]
    assert sbs["compared_gold"] == 1 and sbs["bird"] and "bird_gold" not in sbs  # read against gold 1 first
    near = records["near"]  # a failure: the peers read the nearest gold first, as the diagnosis does
    assert near["layers"]["golds"]["compared"] == 1 and near["compare"]["sidebyside"]["compared_gold"] == 1
    assert near["compare"]["sidebyside"]["bird"] is False


def test_a_match_with_a_result_file_gold_says_it_has_no_variants(pytester: pytest.Pytester) -> None:
    cases = [{"id": "file", "question": "How many orders of 100 or more?",
              "gold_sql": ["SELECT count(*) FROM orders WHERE amount >= 150"], "gold_results": ["big.csv"]}]
    suite = write_suite(pytester.path, cases, {"file": "SELECT count(*) FROM orders WHERE amount > 100"}, 4)
    con = duckdb.connect(str(suite / "shop.duckdb"), read_only=True)
    (suite / "big.csv").write_text(f"n\n{con.execute('SELECT count(*) FROM orders WHERE amount >= 100').fetchall()[0][0]}\n")
    con.close()
    result = pytester.runpytest(str(suite), "--sqleval-backend=predictions:preds.jsonl", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    (record,) = read_results(pytester.path)
    assert record["matched_gold"]["index"] == 1 and record["matched_gold"]["kind"] == "result"
    assert "a result file has no query to run on a database variant" in record["layers"]["variants"]["skipped"]


@pytest.mark.parametrize("failure", ["engine", "grader"])
def test_a_failed_check_on_the_variants_is_said_not_passed_off_as_checked(
        pytester: pytest.Pytester, suite: Path, monkeypatch: pytest.MonkeyPatch, failure: str) -> None:
    """When the engine process fails while choosing a gold's variants (a grader's bug, a
    crash, a timeout), a case that matched on the database keeps that verdict, and its
    record, its explanation, the summary and the terminal all say that it rests on the
    database alone: never a run that reads as checked on variants it never saw. The same
    for a bug of the grader's own while choosing them."""
    from pytest_sqleval.core.engines.host import HostCrashed
    from pytest_sqleval.core.variants.distill import VariantSet

    def broken(*args: object, **kwargs: object) -> None:  # the engine process's answer, or a bug in this process
        raise HostCrashed("IndexError: list index out of range") if failure == "engine" else IndexError(
            "list index out of range")
    monkeypatch.setattr(VariantSet, "_distill", broken)
    result = pytester.runpytest_inprocess(str(suite), "--sqleval-backend=predictions:preds.jsonl", "-p", "no:cacheprovider",
                                          "--sqleval-min-pass-rate=0")
    records = {r["case_id"]: r for r in read_results(pytester.path)}
    big = records["big"]  # a coincidence the variants would have caught
    assert big["status"] == "passed" and big["layers"]["variants"] == {"error": "IndexError: list index out of range"}
    assert "on the database only: its check on the variants failed (IndexError" in big["explanation"]
    b = read_summary(pytester.path)["backends"]["preds"]
    assert b["variant_unchecked_cases"] == 2 and b["variant_checked_cases"] == 0  # big and fr matched; exact: an error
    assert b["variant_check_error"] == "IndexError: list index out of range"
    out = result.stdout.str()
    assert "VARIANTS NOT CHECKED: 2 matching case(s) pass on the database alone" in out
    # a gate over passes that were never checked gates nothing, whatever the rate
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*gate FAILED: backend preds: 2 matching case(s) pass on the database alone, their "
                                 "check on the variants failed (IndexError: list index out of range)*"])
    exact = records["exact"]  # empty on the database: without its variants it cannot be graded, and says why
    assert exact["status"] == "error" and "its variants could not be chosen: IndexError" in exact["explanation"]
    assert "LOST" not in out
