"""The library API takes several golds (queries and result files) and a column policy,
and its verdict names the gold that matched, as a pytest run's record does."""
from __future__ import annotations

from pathlib import Path

import pytest

from pytest_sqleval import compare
from pytest_sqleval.core.api import Grader
from pytest_sqleval.core.errors import GoldError

GOLDS = ["SELECT id FROM customers WHERE id <= 2", "SELECT id, name FROM customers WHERE id <= 3"]


def test_a_prediction_matching_the_second_gold_passes_and_says_so(shop_db: Path) -> None:
    verdict = compare("SELECT id, name FROM customers WHERE id < 4", GOLDS, shop_db)
    assert verdict.passed and verdict.matched_gold == {"index": 1, "kind": "sql", "source": GOLDS[1]}
    assert [g["index"] for g in verdict.layers["golds"]["golds"]] == [0, 1]
    single = compare("SELECT id FROM customers WHERE id < 3", GOLDS[0], shop_db)  # one gold: as before
    assert single.passed and "golds" not in single.layers and single.matched_gold == {"index": 0, "kind": "sql",
                                                                                         "source": None}


def test_a_failure_is_compared_with_the_nearest_gold(shop_db: Path) -> None:
    verdict = compare("SELECT id, name FROM customers WHERE id <= 4", GOLDS, shop_db)
    assert not verdict.passed and verdict.matched_gold is None
    assert verdict.layers["golds"]["compared"] == 1 and verdict.layers["compare"]["reason"] == "row_count"


def test_a_column_policy_and_a_result_file_gold(shop_db: Path, tmp_path: Path) -> None:
    with Grader(shop_db, columns="superset") as grader:
        extra = grader.compare("SELECT name, id, 1 AS one FROM customers WHERE id <= 3", GOLDS)
        assert extra.passed and extra.matched_gold["index"] == 1  # type: ignore[index]
        assert extra.layers["compare"]["column_mapping"] == [1, 0]
    with Grader(shop_db, condition_cols=[0]) as grader:
        assert grader.compare("SELECT id, 'x' AS name FROM customers WHERE id <= 3", GOLDS[1]).passed
    csv = tmp_path / "gold.csv"
    csv.write_text("id\n1\n2\n3\n4\n")
    verdict = compare("SELECT id FROM customers WHERE id <= 4", GOLDS, shop_db, gold_results=[csv])
    assert verdict.passed and verdict.matched_gold == {"index": 2, "kind": "result", "source": str(csv)}


def test_bad_golds_are_clear_errors(shop_db: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="gold_sql must be a query or a list of queries"):
        compare("SELECT 1", [], shop_db)
    with pytest.raises(ValueError, match="is not one of .csv, .parquet, .jsonl"):
        compare("SELECT 1", GOLDS, shop_db, gold_results=["gold.txt"])
    with pytest.raises(GoldError, match="gold 2 .*missing.csv.* cannot be read"):
        compare("SELECT 1", GOLDS, shop_db, gold_results=[tmp_path / "missing.csv"])
