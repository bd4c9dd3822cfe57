"""One comparison contract: each case's ``ComparePolicy`` is made once, when its suite is read
(``BenchmarkCase.policy``), and that very object is what the grader and ``validate`` resolve
against the gold and compare under; it crosses to the engine process by one conversion each
way (``to_wire`` / ``from_wire``). Precedence, lowest first: ``ComparePolicy``'s defaults, the
layout's column rule, the suite's ``[compare]``, the case's own keys. There is no command-line
option for the contract; the library API's keywords set the suite level of its one gold."""
from __future__ import annotations

import json
import re
from dataclasses import fields
from pathlib import Path
from typing import Any, Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_sqleval.core.api import library_policy
from pytest_sqleval.core.cases import COMPARE_SETTINGS, ComparePolicy, collect_cases, load_manifest
from pytest_sqleval.core.engines import open_sandbox
from pytest_sqleval.core.grading.engine_side import request_policy
from pytest_sqleval.core.pool import GraderPool
from pytest_sqleval.products import validate
from pytest_sqleval.products.validate import GOLD_ANSWERS
from tests.products.test_validate import Capture
from tests.products.test_validate_grader_contract import spider_suite, sqleval_suite

PACKAGE = Path(__file__).resolve().parents[3] / "pytest_sqleval"


@pytest.fixture
def pool(tmp_path: Path) -> Iterator[GraderPool]:
    pool = GraderPool(tmp_path / "cache")
    yield pool
    pool.close()


def _cases(root: Path) -> list[tuple[Any, Any]]:
    manifest = load_manifest(root / "sqleval.toml")
    return collect_cases(manifest, manifest.questions)


# -- one object ------------------------------------------------------------------------------
def test_validate_and_the_grader_compare_a_case_under_the_same_policy_object(
        tmp_path: Path, shop_db: Path, pool: GraderPool, monkeypatch: pytest.MonkeyPatch) -> None:
    cases = [{"id": "tol", "question": "Real customers", "gold_sql": "SELECT count(*) FROM customers WHERE NOT is_test",
              "compare": {"float_rel_tol": 0.01, "column_order": "any"}},
             {"id": "ordered", "question": "Ids", "gold_sql": "SELECT id FROM customers ORDER BY id"}]
    root = sqleval_suite(tmp_path / "s", shop_db, cases, "[compare]\nfloat_abs_tol = 1e-6\n")
    pairs = _cases(root)
    resolved_from: list[ComparePolicy] = []  # the policy each resolution started from, in order
    for_gold = ComparePolicy.for_gold

    def spy(self: ComparePolicy, order: Any) -> ComparePolicy:
        resolved_from.append(self)
        return for_gold(self, order)
    monkeypatch.setattr(ComparePolicy, "for_gold", spy)

    manifest = load_manifest(root / "sqleval.toml")
    assert manifest.database is not None
    db = open_sandbox(manifest.database, manifest.limits)
    try:
        golds = validate._prepare([c for c, _ in pairs], manifest, db.dialect, db.catalog(), validate.Validation())
    finally:
        db.close()
    by_validate = list(resolved_from)
    resolved_from.clear()
    answers = {case.id: pool.for_case(case_manifest, case).gold(case.gold_sql, case) for case, case_manifest in pairs}
    by_grader = list(resolved_from)

    for i, (case, case_manifest) in enumerate(pairs):
        assert case.policy is not None
        assert by_validate[i] is case.policy and by_grader[i] is case.policy, case.id  # the same object
        assert golds[i].policy is case.policy
        assert pool.for_case(case_manifest, case).policy_for(case) is case.policy
        assert golds[i].spec == answers[case.id].policy  # resolved alike, every field
    assert pairs[0][0].policy.float_rel_tol == 0.01 and pairs[0][0].policy.float_abs_tol == 1e-6
    assert answers["ordered"].policy.ordered and not answers["tol"].policy.ordered


# -- Spider with columns by position ---------------------------------------------------------
def _spider_case(root: Path) -> tuple[Any, Any]:
    """The Spider suite's ``SELECT id, region FROM customers`` case."""
    return next((c, m) for c, m in _cases(root) if c.gold_sql == "SELECT id, region FROM customers")


def _swap_frozen_columns(root: Path, case_id: str) -> None:
    """The frozen answer with its two columns swapped: the same answer under any column
    order, a different one by position."""
    path = root / GOLD_ANSWERS
    doc = json.loads(path.read_text())
    entry = doc["answers"][case_id]
    entry["data"] = [[r[1], r[0]] for r in entry["data"]]
    entry["kinds"], entry["columns"], entry["types"] = (entry[k][::-1] for k in ("kinds", "columns", "types"))
    path.write_text(json.dumps(doc))


@pytest.mark.parametrize("column_order", ["position", None])
def test_a_spider_suite_is_compared_by_its_column_rule_in_validate_and_in_grading_alike(
        tmp_path: Path, shop_db: Path, pool: GraderPool, column_order: str | None) -> None:
    """Spider's layout compares columns in any order; ``[compare] column_order = "position"``
    overrides it, and then validate and the grader both compare by position."""
    root = spider_suite(tmp_path / "sp", shop_db)
    if column_order is not None:
        with open(root / "sqleval.toml", "a") as fh:
            fh.write(f'[compare]\ncolumn_order = "{column_order}"\n')
    by_position = column_order == "position"
    case, case_manifest = _spider_case(root)
    assert case.policy.column_order == ("position" if by_position else "any")

    grader = pool.for_case(case_manifest, case)
    verdict = grader.grade("SELECT region, id FROM customers", grader.gold(case.gold_sql, case))
    assert verdict.passed is not by_position

    assert Capture(threads=(1,)).run(root) == 0  # freezes the answers
    _swap_frozen_columns(root, case.id)
    run = Capture(threads=(1,))
    assert run.run(root) == (1 if by_position else 0), run.err
    drift = [line for line in run.err if f"{case.id}: the gold answer differs from the one frozen" in line]
    assert bool(drift) is by_position, run.err


# -- the wire --------------------------------------------------------------------------------
#: one strategy per field: a field added to ComparePolicy without one fails the test below
FIELD_VALUES = {
    "order_matters": st.one_of(st.none(), st.booleans()),
    "float_rel_tol": st.floats(min_value=0, max_value=1, allow_nan=False),
    "float_abs_tol": st.floats(min_value=0, max_value=1e3, allow_nan=False),
    "allow_empty": st.booleans(),
    "allow_null": st.booleans(),
    "column_order": st.sampled_from(["position", "any"]),
    "sort_keys": st.one_of(st.none(), st.lists(st.integers(-8, 64), max_size=6).map(tuple)),
    "columns": st.sampled_from(["exact", "superset"]),
    "condition_cols": st.one_of(st.none(), st.lists(st.integers(0, 64), min_size=1, max_size=6, unique=True).map(tuple)),
}


def test_every_field_of_the_policy_has_a_strategy() -> None:
    assert set(FIELD_VALUES) == {f.name for f in fields(ComparePolicy)}


@settings(max_examples=300, deadline=None)
@given(st.fixed_dictionaries(FIELD_VALUES))
def test_a_policy_survives_the_engine_wire_field_for_field(values: dict[str, Any]) -> None:
    policy = ComparePolicy(**values)
    wire = policy.to_wire()
    back = ComparePolicy.from_wire(json.loads(json.dumps(wire)))  # the pipe carries JSON
    assert back == policy
    for f in fields(ComparePolicy):
        assert getattr(back, f.name) == getattr(policy, f.name), f.name
    assert request_policy({"spec": wire}) == policy  # the engine side reads it back the one way


def test_the_wire_keeps_the_gold_keys_of_position_suites() -> None:
    """A resolved policy with the defaults' column rule travels as the spec always did, so
    the gold store's keys (which hash the request) do not change."""
    resolved = ComparePolicy(order_matters=True, sort_keys=(0, 2), float_rel_tol=1e-3)
    assert resolved.to_wire() == {"ordered": True, "sort_keys": [0, 2], "float_rel_tol": 1e-3, "float_abs_tol": 1e-9}


# -- precedence ------------------------------------------------------------------------------
def test_a_case_beats_the_suite_which_beats_the_layout_which_beats_the_defaults(tmp_path: Path, shop_db: Path) -> None:
    cases = [{"id": "plain", "question": "?", "gold_sql": "SELECT 1"},
             {"id": "own", "question": "?", "gold_sql": "SELECT 1", "order_matters": False, "expected_shape": "empty",
              "compare": {"float_rel_tol": 0.5, "column_order": "position"}},
             {"id": "inner", "question": "?", "gold_sql": "SELECT 1", "compare": {"order_matters": True}}]
    root = sqleval_suite(tmp_path / "s", shop_db, cases,
                         '[compare]\nfloat_rel_tol = 0.01\norder_matters = true\ncolumn_order = "any"\n')
    policies = {case.id: case.policy for case, _ in _cases(root)}
    assert policies["plain"] == ComparePolicy(order_matters=True, float_rel_tol=0.01, column_order="any")  # the suite
    assert policies["own"] == ComparePolicy(order_matters=False, float_rel_tol=0.5, allow_empty=True)  # the case
    assert policies["inner"].order_matters is True and policies["inner"].float_rel_tol == 0.01

    spider = spider_suite(tmp_path / "sp", shop_db)
    assert {c.policy.column_order for c, _ in _cases(spider)} == {"any"}  # the layout over the defaults
    with open(spider / "sqleval.toml", "a") as fh:
        fh.write('[compare]\ncolumn_order = "position"\nfloat_abs_tol = 0.25\n')
    assert {(c.policy.column_order, c.policy.float_abs_tol) for c, _ in _cases(spider)} == {("position", 0.25)}


def test_the_library_apis_keywords_set_its_policy_over_the_defaults() -> None:
    assert library_policy({}) == ComparePolicy()
    assert library_policy({"float_rel_tol": 0.1, "column_order": "any", "order_matters": None}) == ComparePolicy(
        float_rel_tol=0.1, column_order="any")
    assert set(COMPARE_SETTINGS) == {f.name for f in fields(ComparePolicy)} - {"sort_keys"}
    with pytest.raises(TypeError, match="sort_keys"):
        library_policy({"sort_keys": [0]})  # resolved from the gold, never set


# -- no second reader ------------------------------------------------------------------------
def test_only_the_policy_builder_reads_a_cases_compare_object_and_only_one_function_the_wire() -> None:
    readers, wire = [], []
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if re.search(r"""metadata(\.get\(|\[)\s*["']compare["']""", text):
            readers.append(path.relative_to(PACKAGE).as_posix())
        wire += [path.relative_to(PACKAGE).as_posix()] * len(re.findall(r"""\[\s*["']spec["']\s*\]""", text))
    assert readers == ["core/comparison.py"]  # ComparePolicy.for_case
    assert wire == ["core/grading/engine_side.py"]  # request_policy
