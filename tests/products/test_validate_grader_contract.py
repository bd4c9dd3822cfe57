"""``validate`` checks a suite under the comparison contract the grader grades it with:
the same ``ComparePolicy`` for every case, resolved against its gold by one function
(``grading.pipeline.case_contract``), compared by the grader's own ``Comparator``. Where
validate used to derive a contract of its own, it said things about a suite the grader
contradicts: a Spider-layout suite compared by column position, an empty gold the suite
allows reported as unusable, and frozen answers held to tolerances of validate's own."""
from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path
from typing import Any, Iterator

import pytest

from pytest_sqleval.core.cases import ComparePolicy, collect_cases, load_manifest
from pytest_sqleval.core.engines import open_sandbox
from pytest_sqleval.core.pool import GraderPool
from pytest_sqleval.products import validate
from pytest_sqleval.products.validate import GOLD_ANSWERS
from tests.products.test_validate import Capture

SQLEVAL_CASES = [
    {"id": "ordered", "question": "Orders per status", "gold_sql":
        "SELECT status, count(*) AS n FROM orders GROUP BY status ORDER BY n DESC, status"},
    {"id": "hidden_key", "question": "Customer ids by region", "gold_sql": "SELECT id FROM customers ORDER BY region, id"},
    {"id": "bag", "question": "Regions", "gold_sql": "SELECT DISTINCT region FROM customers"},
    {"id": "overrides", "question": "Real customers", "gold_sql": "SELECT count(*) FROM customers WHERE NOT is_test",
     "order_matters": True, "compare": {"float_rel_tol": 0.01, "float_abs_tol": 0.5, "column_order": "any"}},
    {"id": "unordered", "question": "Statuses", "gold_sql": "SELECT status FROM orders GROUP BY status ORDER BY status",
     "order_matters": False},
    {"id": "none", "question": "Nothing", "gold_sql": "SELECT id FROM customers WHERE id < 0", "expected_shape": "empty"},
]
SPIDER_CASES = [
    {"db_id": "shop", "question": "How many orders?", "query": "SELECT count(*) FROM orders"},
    {"db_id": "shop", "question": "Status and count", "query":
        "SELECT status, count(*) FROM orders GROUP BY status ORDER BY count(*) DESC, status"},
    {"db_id": "shop", "question": "Ids and regions", "query": "SELECT id, region FROM customers"},
]


def sqleval_suite(root: Path, db: Path, cases: list[dict[str, Any]], compare: str = "") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "questions.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    (root / "sqleval.toml").write_text(f'[suite]\nname = "{root.name}"\nquestions = "questions.jsonl"\n'
                                       f'database = "{db}"\ndialect = "duckdb"\n' + compare)
    return root


def spider_suite(root: Path, db: Path) -> Path:
    """A Spider-layout suite whose every db_id is one DuckDB file (the layout's column rule: any order)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "dev.json").write_text(json.dumps(SPIDER_CASES))
    (root / "sqleval.toml").write_text(f'[suite]\nname = "{root.name}"\nlayout = "spider"\ndatabase = "{db}"\n'
                                       'dialect = "duckdb"\n')
    return root


@pytest.fixture
def pool(tmp_path: Path) -> Iterator[GraderPool]:
    pool = GraderPool(tmp_path / "cache")
    yield pool
    pool.close()


def validate_contracts(root: Path) -> dict[str, tuple[ComparePolicy, ComparePolicy]]:
    """Each case's policy and spec as ``validate`` checks it (its gold preparation step)."""
    manifest = load_manifest(root / "sqleval.toml")
    cases = [case for case, _ in collect_cases(manifest, manifest.questions)]
    assert manifest.database is not None
    db = open_sandbox(manifest.database, manifest.limits)
    try:
        golds = validate._prepare(cases, manifest, db.dialect, db.catalog(), validate.Validation())
    finally:
        db.close()
    return {g.case.id: (g.policy, g.spec) for g in golds}


def grader_contracts(root: Path, pool: GraderPool) -> dict[str, tuple[ComparePolicy, ComparePolicy]]:
    """Each case's policy and spec as a pytest run grades it (the run's grader pool)."""
    manifest = load_manifest(root / "sqleval.toml")
    out = {}
    for case, case_manifest in collect_cases(manifest, manifest.questions):
        grader = pool.for_case(case_manifest, case)
        out[case.id] = (grader.policy_for(case), grader.gold(case.gold_sql, case).policy)
    return out


@pytest.mark.parametrize("layout", ["sqleval", "spider"])
def test_validate_and_the_grader_agree_on_every_field_of_the_contract(tmp_path: Path, shop_db: Path,
                                                                      pool: GraderPool, layout: str) -> None:
    if layout == "spider":
        root = spider_suite(tmp_path / "sp", shop_db)
    else:
        root = sqleval_suite(tmp_path / "sq", shop_db, SQLEVAL_CASES,
                             "[compare]\nfloat_rel_tol = 0.001\nfloat_abs_tol = 1e-6\n")
    ours, theirs = validate_contracts(root), grader_contracts(root, pool)
    assert sorted(ours) == sorted(theirs) and ours
    for cid in theirs:
        for kind, index in (("policy", 0), ("resolved", 1)):
            for f in fields(ComparePolicy):  # every field, so a field added later is compared too
                assert getattr(ours[cid][index], f.name) == getattr(theirs[cid][index], f.name), (cid, kind, f.name)
    specs = [spec for _, spec in theirs.values()]
    if layout == "spider":  # the layout's own rule reaches validate: Spider compares columns in any order
        assert {s.column_order for s in specs} == {"any"}
    else:
        assert {s.column_order for s in specs} == {"position", "any"}
        assert {s.ordered for s in specs} == {True, False}
        assert theirs["overrides"][1].float_rel_tol == 0.01 and theirs["ordered"][1].float_rel_tol == 0.001
        assert theirs["none"][0].allow_empty and not theirs["bag"][0].allow_empty




def test_an_empty_gold_the_suite_allows_is_not_a_problem_for_validate(tmp_path: Path, shop_db: Path,
                                                                     pool: GraderPool) -> None:
    """``[compare] allow_empty = true``: the grader grades an empty gold (a matching empty
    answer passes); validate used to report it as unusable, reading only expected_shape."""
    cases = [{"id": "e", "question": "Customers with a negative id", "gold_sql": "SELECT id FROM customers WHERE id < 0"}]
    root = sqleval_suite(tmp_path / "allow", shop_db, cases, "[compare]\nallow_empty = true\n")
    run = Capture(threads=(1, 2))
    assert run.run(root) == 0, run.err
    assert not [line for line in run.err if "no rows" in line]
    manifest = load_manifest(root / "sqleval.toml")
    case, case_manifest = collect_cases(manifest, manifest.questions)[0]
    grader = pool.for_case(case_manifest, case)
    verdict = grader.grade("SELECT id FROM customers WHERE id < -5", grader.gold(case.gold_sql, case))
    assert verdict.passed


BIG = "SELECT count(*) * 1000000007 AS n FROM customers"  # an exact number in the billions


def _edit_frozen(root: Path, case_id: str, edit: Any) -> None:
    path = root / GOLD_ANSWERS
    doc = json.loads(path.read_text())
    entry = doc["answers"][case_id]
    entry["data"] = [[edit(x) for x in row] for row in entry["data"]]
    path.write_text(json.dumps(doc))


def test_a_frozen_exact_number_off_by_one_is_drift_as_the_grader_sees_it(tmp_path: Path, shop_db: Path,
                                                                       pool: GraderPool) -> None:
    """Two exact numbers compare exactly in the grader; validate's own comparison took any
    two numbers within 1e-6 relative as equal, so a drifted count in the billions passed."""
    root = sqleval_suite(tmp_path / "big", shop_db, [{"id": "big", "question": "Big", "gold_sql": BIG}])
    assert Capture(threads=(1, 2)).run(root) == 0  # freezes the answer
    _edit_frozen(root, "big", lambda x: x + 1)
    frozen = json.loads((root / GOLD_ANSWERS).read_text())["answers"]["big"]["data"][0][0]
    run = Capture(threads=(1, 2))
    assert run.run(root) == 1
    assert [line for line in run.err if "big: the gold answer differs from the one frozen" in line], run.err
    manifest = load_manifest(root / "sqleval.toml")
    case, case_manifest = collect_cases(manifest, manifest.questions)[0]
    grader = pool.for_case(case_manifest, case)
    assert not grader.grade(f"SELECT {frozen}::BIGINT", grader.gold(case.gold_sql, case)).passed


def test_frozen_answers_are_held_to_the_suites_own_tolerance(tmp_path: Path, shop_db: Path, pool: GraderPool) -> None:
    """A suite that grades floats within 1e-3 relative: a frozen float 1e-4 off is the same
    answer to the grader, and so to validate (which used 1e-6 of its own)."""
    cases = [{"id": "ratio", "question": "Ratio", "gold_sql": "SELECT CAST(count(*) AS DOUBLE) / 7 AS r FROM customers"}]
    root = sqleval_suite(tmp_path / "tol", shop_db, cases, "[compare]\nfloat_rel_tol = 0.001\n")
    assert Capture(threads=(1, 2)).run(root) == 0
    _edit_frozen(root, "ratio", lambda x: x * (1 + 1e-4))
    frozen = json.loads((root / GOLD_ANSWERS).read_text())["answers"]["ratio"]["data"][0][0]
    run = Capture(threads=(1, 2))
    assert run.run(root) == 0, run.err
    assert any("1 frozen answers for this content hash; 0 differ" in line for line in run.out), run.out
    manifest = load_manifest(root / "sqleval.toml")
    case, case_manifest = collect_cases(manifest, manifest.questions)[0]
    grader = pool.for_case(case_manifest, case)
    assert grader.grade(f"SELECT {frozen!r}::DOUBLE", grader.gold(case.gold_sql, case)).passed
