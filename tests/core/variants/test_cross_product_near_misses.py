"""A near-miss whose plan on the pinned database is a cross product (a join condition made
``<>``) is left out of the distillation unrun (``MUTANT_PLAN_ROWS``), as one that overruns
its time budget was: decided by the content, whatever the budget or the machine's load.
Near-misses of an ordinary plan still run and are told apart."""
from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from pytest_sqleval.core.grading.pipeline import SuiteGrader
from pytest_sqleval.core.variants.distill import MUTANT_PLAN_ROWS

GOLD = "SELECT count(*) AS n FROM a JOIN b ON b.a_id = a.id WHERE a.g = 1"
CROSS = "SELECT count(*) AS n FROM a JOIN b ON b.a_id <> a.id WHERE a.g = 1"  # about 2.7e8 pairs planned
WIDER = "SELECT count(*) AS n FROM a JOIN b ON b.a_id = a.id WHERE a.g <= 1"


@pytest.fixture
def grader(tmp_path: Path):
    path = tmp_path / "ab.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE a AS SELECT i AS id, i % 3 AS g FROM range(20000) t(i)")
    con.execute("CREATE TABLE b AS SELECT i AS id, (i * 7) % 20000 AS a_id FROM range(20000) t(i)")
    con.close()
    out = SuiteGrader(path, cache_dir=tmp_path / "cache")
    try:
        yield out
    finally:
        out.close()


def _killed(grader: SuiteGrader, mutants: list[str], **request: object) -> list[bool | None]:
    gold = grader.gold(GOLD)
    answer = grader.host.call("distill", {"gold": gold.request, "variants": [], "mutants": mutants, **request})
    return answer["killed"][0]


def test_a_cross_product_near_miss_is_left_out_by_its_plan_whatever_its_time_budget(grader) -> None:
    asked = {"mutant_timeout_s": 60.0, "mutant_plan_rows": MUTANT_PLAN_ROWS}
    assert _killed(grader, [CROSS, WIDER], **asked) == [None, True]
    # the same near-miss run (no plan bound, the same budget) finishes and is told apart: the plan decided
    assert _killed(grader, [CROSS], mutant_timeout_s=60.0) == [True]
