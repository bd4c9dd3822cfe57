"""A whole run with a per-engine gold: a case's ``gold_sql_<engine>`` replaces its default
gold on that engine (here DuckDB, the suite's own, so no JVM is needed; on Spark the same
path runs, tests/core/engines/test_spark_golds.py), the record names the text graded, and
a case's ``gold_sql_spark`` changes nothing on DuckDB."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest

from tests.sqleval_helpers import sqleval_ini, write_predictions  # noqa: F401  (fixtures)

OWN = "SELECT count(*) AS n FROM customers"
CASES = [
    {"id": "own_duckdb", "question": "How many customers?", "gold_sql": "SELECT count(*) + 100 AS n FROM customers",
     "gold_sql_duckdb": OWN},
    {"id": "spark_only", "question": "How many customers?", "gold_sql": OWN,
     "gold_sql_spark": "SELECT count(*) + 100 AS n FROM customers"},
]


def _records(pytester: pytest.Pytester) -> dict[str, dict[str, Any]]:
    lines = (pytester.path / "sqleval-results" / "results.jsonl").read_text().splitlines()
    return {r["case_id"]: r for r in map(json.loads, lines)}


def test_the_engines_own_gold_is_graded_and_named(pytester: pytest.Pytester, make_suite: Callable[..., Path],
                                                  write_predictions: Callable[..., Path]) -> None:
    make_suite(CASES)
    write_predictions({"own_duckdb": OWN, "spark_only": OWN}, name="preds.jsonl")
    result = pytester.runpytest("--sqleval-backend=predictions:preds.jsonl", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    records = _records(pytester)
    own = records["own_duckdb"]
    assert own["gold_sql"] == OWN and own["gold"]["engine"] == "duckdb" and own["gold"]["source"] == OWN
    assert own["matched_gold"] == {"index": 0, "kind": "sql", "source": OWN, "engine": "duckdb"}
    other = records["spark_only"]  # its Spark gold is not DuckDB's
    assert other["gold_sql"] == OWN and "engine" not in other["gold"] and "engine" not in other["matched_gold"]
