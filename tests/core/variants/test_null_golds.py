"""A gold whose answer is rows of NULLs only is as uninformative as an empty one: ``SELECT
avg(amount) ... WHERE amount = 100`` over a database where no amount is 100 gives one row of
NULL, and so does every wrong query that also matches nothing. Like an empty gold it is
graded on the variants where its answer has a value; where none has, it is a case error
naming the fix (``"expected_shape": "null"``, ``allow_null`` in the library), on every
surface: the library API, a pytest run and ``validate``."""
from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from pytest_sqleval.core.api import Grader
from pytest_sqleval.core.errors import GoldError
from pytest_sqleval.products.validate import validate_suite
from tests.sqleval_helpers import read_results, sqleval_ini  # noqa: F401  (fixture)

# on the pinned data no amount is 100 or 101; no order lacks a customer, on any variant either
# (NOT NULL is kept; a gold asking for a country no row holds, 'ZZ', now gets a variant tuple)
NULL_HERE = "SELECT avg(o.amount), max(o.id) FROM orders o WHERE o.amount = 100"
NULL_EVERYWHERE = ("SELECT avg(o.amount) FROM orders o JOIN customers c ON c.id = o.customer_id "
                   "WHERE o.customer_id IS NULL")
WRONG_HERE = "SELECT avg(o.amount), max(o.id) FROM orders o WHERE o.amount = 101"  # NULLs too, on the pinned data
WRONG_EVERYWHERE = "SELECT avg(o.amount) FROM orders o WHERE o.customer_id < 0"


def make_db(path: Path) -> Path:
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name VARCHAR NOT NULL, country VARCHAR NOT NULL)")
    con.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id), "
                "amount INTEGER NOT NULL)")
    con.execute("INSERT INTO customers SELECT i, 'c' || i, CASE WHEN i % 3 = 0 THEN 'FR' ELSE 'DE' END "
                "FROM range(1, 41) t(i)")
    con.execute("INSERT INTO orders SELECT i, 1 + i % 40, CASE WHEN i % 2 = 0 THEN 40 + i % 50 ELSE 110 + i % 50 END "
                "FROM range(1, 401) t(i)")
    con.close()
    return path


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_db(tmp_path_factory.mktemp("nulls") / "shop.duckdb")


def test_library_without_variants_an_all_null_gold_is_a_gold_error_naming_the_fix(shop: Path, tmp_path: Path) -> None:
    with Grader(shop, cache_dir=tmp_path / "c") as grader:
        with pytest.raises(GoldError) as caught:
            grader.compare(WRONG_EVERYWHERE, NULL_EVERYWHERE)
    assert "only NULLs" in str(caught.value) and '"expected_shape": "null"' in str(caught.value)


def test_library_allow_null_grades_the_declared_null_answer(shop: Path, tmp_path: Path) -> None:
    with Grader(shop, cache_dir=tmp_path / "c", allow_null=True) as grader:
        assert grader.compare(WRONG_EVERYWHERE, NULL_EVERYWHERE).passed
        assert not grader.compare("SELECT avg(amount) FROM orders", NULL_EVERYWHERE).passed


def test_library_with_variants_graded_where_it_has_a_value_else_a_gold_error(shop: Path, tmp_path: Path) -> None:
    golds = [NULL_HERE, NULL_EVERYWHERE]
    with Grader(shop, cache_dir=tmp_path / "c", variants=4, variant_golds=golds) as grader:
        verdict = grader.compare(WRONG_HERE, NULL_HERE)  # the boundary rows give some variant an amount of 100
        assert (verdict.passed, verdict.failure_kind) == (False, "coincidental_pass"), verdict.explanation
        assert grader.compare(NULL_HERE.replace("o.amount = 100", "100 = o.amount"), NULL_HERE).passed
        with pytest.raises(GoldError) as caught:
            grader.compare(WRONG_EVERYWHERE, NULL_EVERYWHERE)
    assert "nor on any of its" in str(caught.value) and '"expected_shape": "null"' in str(caught.value)


def _suite(where: Path, cases: list[dict], variants: int) -> Path:
    root = where / "suite"
    root.mkdir(parents=True)
    make_db(root / "shop.duckdb")
    (root / "questions.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    (root / "sqleval.toml").write_text('[suite]\nname = "shop"\nquestions = "questions.jsonl"\n'
                                       f'database = "shop.duckdb"\n\n[variants]\ncount = {variants}\n')
    return root


CASES = [
    {"id": "nulls", "question": "Mean amount of Andorran orders?", "gold_sql": NULL_EVERYWHERE},
    {"id": "declared", "question": "Mean amount of Andorran orders (none)?", "gold_sql": NULL_EVERYWHERE,
     "expected_shape": "null"},
]


def test_a_run_reports_the_all_null_gold_as_a_case_error_and_grades_the_declared_one(pytester: pytest.Pytester) -> None:
    suite = _suite(pytester.path, CASES, 0)
    (pytester.path / "preds.jsonl").write_text("".join(json.dumps({"id": c["id"], "sql": WRONG_EVERYWHERE}) + "\n"
                                                       for c in CASES))
    result = pytester.runpytest(str(suite), "--sqleval-backend=predictions:preds.jsonl", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, errors=1)
    records = {r["case_id"]: r for r in read_results(pytester.path)}
    assert records["nulls"]["status"] == "error" and "only NULLs" in records["nulls"]["case_error"]
    assert records["declared"]["status"] == "passed"


def _validate(suite: Path) -> tuple[int, list[str]]:
    """Exit code and every line ``validate`` printed (problems go to ``err``)."""
    lines: list[str] = []
    code = validate_suite(suite, out=lines.append, err=lines.append, freeze=False)
    return code, lines


def test_validate_flags_an_all_null_gold_unless_declared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, lines = _validate(_suite(tmp_path / "a", CASES, 0))
    flagged = [line for line in lines if "only NULLs" in line]
    assert code == 1 and len(flagged) == 1 and "nulls" in flagged[0] and '"expected_shape": "null"' in flagged[0]
    code, lines = _validate(_suite(tmp_path / "b", [CASES[1]], 0))
    assert code == 0, lines


def test_validate_with_variants_accepts_a_gold_some_variant_gives_a_value(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    cases = [{"id": "here", "question": "Mean amount of orders of exactly 100?", "gold_sql": NULL_HERE}]
    code, lines = _validate(_suite(tmp_path / "a", cases, 4))
    assert code == 0, lines
    code, lines = _validate(_suite(tmp_path / "b", cases + [CASES[0]], 4))
    flagged = [line for line in lines if "only NULLs" in line]
    assert code == 1 and len(flagged) == 1 and "nulls" in flagged[0], lines
