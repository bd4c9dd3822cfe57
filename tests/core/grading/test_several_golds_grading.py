"""The grader on a case of several golds: each gold executed once and stored (a rerun
executes none), the prediction executed once and compared per gold, the nearest gold
for a failure, and a ``condition_cols`` beyond an SQL gold's columns a case error."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import pytest

from pytest_sqleval.core.cases import collect_cases, load_manifest
from pytest_sqleval.core.errors import GoldError
from pytest_sqleval.core.pool import GraderPool


def _suite(root: Path, db: Path, cases: list[dict[str, Any]], files: dict[str, str] | None = None) -> list[Any]:
    root.mkdir(parents=True, exist_ok=True)
    (root / "questions.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    (root / "sqleval.toml").write_text(f'[suite]\nname = "s"\nquestions = "questions.jsonl"\ndatabase = "{db}"\n')
    for name, text in (files or {}).items():
        (root / name).write_text(text)
    manifest = load_manifest(root / "sqleval.toml")
    return collect_cases(manifest, manifest.questions)


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "cache"


@pytest.fixture
def pool(cache: Path) -> Iterator[GraderPool]:
    pool = GraderPool(cache)
    yield pool
    pool.close()


FIVE = [f"SELECT id{', name' * (k > 0)}{', region' * (k > 1)} FROM customers WHERE id <= {2 + k % 3}" for k in range(5)]


def test_five_golds_cost_their_execution_once_and_a_rerun_executes_none(tmp_path: Path, shop_db: Path, cache: Path,
                                                                         pool: GraderPool) -> None:
    ((case, manifest),) = _suite(tmp_path / "s", shop_db, [{"id": "q", "question": "?", "gold_sql": FIVE}])
    grader = pool.for_case(manifest, case)
    gold = grader.case_gold(case)
    assert [g.index for g in [gold, *gold.alternatives]] == [0, 1, 2, 3, 4]
    assert grader.gold_executions == 5
    verdict = grader.grade(FIVE[3], gold, gold_sql=case.gold_sql)
    golds = verdict.layers["golds"]
    assert verdict.passed and golds["matched"] == 3 and [g["index"] for g in golds["golds"]] == [0, 1, 2, 3]
    assert not grader.grade("SELECT 1", gold).passed
    assert grader.gold_executions == 5  # grading compares with the stored answers
    again = GraderPool(cache)
    try:
        rerun = again.for_case(manifest, case)
        rerun.case_gold(case)
        assert rerun.gold_executions == 0
    finally:
        again.close()


def test_a_failure_is_diagnosed_against_the_nearest_gold(tmp_path: Path, shop_db: Path, pool: GraderPool) -> None:
    golds = ["SELECT count(*) FROM customers", "SELECT id, name FROM customers WHERE id <= 3"]
    ((case, manifest),) = _suite(tmp_path / "s", shop_db, [{"id": "q", "question": "?", "gold_sql": golds}])
    grader = pool.for_case(manifest, case)
    gold = grader.case_gold(case)
    verdict = grader.grade("SELECT id, name FROM customers WHERE id <= 4", gold, gold_sql=case.gold_sql)
    assert not verdict.passed
    assert verdict.layers["golds"]["compared"] == 1 and verdict.layers["compare"]["reason"] == "row_count"
    structure = verdict.layers["structure"]  # diffed against gold 1, the nearest: only its WHERE differs
    assert structure["differing_clauses"] == ["where"], structure


def test_condition_cols_beyond_an_sql_golds_columns_is_a_case_error(tmp_path: Path, shop_db: Path,
                                                                    pool: GraderPool) -> None:
    ((case, manifest),) = _suite(tmp_path / "s", shop_db, [{"id": "q", "question": "?", "gold_sql": "SELECT id FROM customers",
                                                            "compare": {"condition_cols": [0, 3]}}])
    with pytest.raises(GoldError, match=r"condition_cols names gold column\(s\) \[3\], but the gold has 1 column"):
        pool.for_case(manifest, case).case_gold(case)


def test_a_result_file_gold_is_stored_once_and_read_back(tmp_path: Path, shop_db: Path, cache: Path,
                                                         pool: GraderPool) -> None:
    ((case, manifest),) = _suite(tmp_path / "s", shop_db, [{"id": "q", "question": "?", "gold_results": ["g.csv"],
                                                            "gold_types": {"total": "DECIMAL(10,2)"}}],
                                 files={"g.csv": "id,total\n1,1.5\n2,2.25\n"})
    grader = pool.for_case(manifest, case)
    gold = grader.case_gold(case)
    assert (gold.kind, gold.cached, gold.types) == ("result", False, ["int64", "decimal128(10, 2)"])
    stored = sorted((p.name, p.stat().st_mtime_ns) for p in (cache / "gold").iterdir())
    assert not grader.case_gold(case).cached  # read back, but stored by this run: not in the store when it began
    assert sorted((p.name, p.stat().st_mtime_ns) for p in (cache / "gold").iterdir()) == stored  # not written again
    again = GraderPool(cache)
    try:
        assert again.for_case(manifest, case).case_gold(case).cached  # a rerun's: in the store when it began
    finally:
        again.close()
    verdict = grader.grade("SELECT 2 AS id, 2.25::DOUBLE AS t UNION ALL SELECT 1, 1.5", gold)
    assert verdict.passed and verdict.layers["golds"]["structural"] is False
    assert "structure" not in verdict.layers
