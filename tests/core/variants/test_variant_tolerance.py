"""Tolerance on a variant means what it means on the pinned database: a sum rounded within
the suite's relative tolerance there passes on a smaller variant, where the same absolute
error is a larger relative one; an error beyond the pinned slack still fails there."""
from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from pytest_sqleval.core.api import Grader
from pytest_sqleval.core.cases.model import ComparePolicy
from pytest_sqleval.core.grading.engine_side import variant_policy

GOLD = "SELECT sum(x) FROM t"


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("tol") / "tol.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, x DOUBLE NOT NULL)")
    con.execute("INSERT INTO t SELECT i, 1.25 FROM range(1, 4002) r(i)")  # sum 5001.25 on the pinned data
    con.close()
    return path


@pytest.mark.parametrize("pred, passes", [
    ("SELECT round(sum(x)) FROM t", True),  # 0.25 off: 5e-5 relative on the pinned data, 2.5e-4 on a fifth of it
    ("SELECT sum(x) + CASE WHEN count(*) < 4000 THEN 0.8 ELSE 0.2 END FROM t", False),  # 0.8 > the pinned slack, 0.5
])
def test_a_rounded_sum_within_tolerance_on_the_database_passes_on_its_variants(db: Path, tmp_path: Path,
                                                                               pred: str, passes: bool) -> None:
    with Grader(db, cache_dir=tmp_path, float_rel_tol=1e-4) as plain:
        assert plain.compare(pred, GOLD).passed
    with Grader(db, cache_dir=tmp_path, float_rel_tol=1e-4, variants=4, variant_golds=[GOLD]) as graded:
        verdict = graded.compare(pred, GOLD)
    assert verdict.passed is passes, verdict.explanation
    if not passes:
        assert verdict.failure_kind == "coincidental_pass"


def test_the_slack_is_the_smallest_float_columns_on_the_pinned_answer() -> None:
    spec = ComparePolicy(float_rel_tol=1e-4, float_abs_tol=1e-9)
    pinned = pa.table({"n": pa.array([1, 5000], pa.int64()), "big": [10.0, -5000.0], "small": [0.5, 2.0]})
    assert variant_policy(spec, pinned).float_abs_tol == pytest.approx(2e-4)  # the small column's 2.0
    assert variant_policy(spec, pa.table({"n": pa.array([3], pa.int64())})) == spec  # no float column
    assert variant_policy(spec, None) == spec
