"""A query the engine cannot interrupt is killed with its engine process: the case times
out, the next case is graded by a fresh engine, and the cases queued behind it keep their
own verdicts."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_sqleval.core.api import Grader
from pytest_sqleval.core.cases import Limits

from tests.hosts import host_of
from tests.sqleval_helpers import INI


# -- runaway queries ---------------------------------------------------------------------
def test_an_uninterruptible_query_is_killed_and_the_next_case_is_graded(shop_db: Path) -> None:
    """A single huge scalar ignores DuckDB's interrupt; the engine process is killed."""
    with Grader(shop_db, limits=Limits(timeout_s=1)) as g:
        v = g.compare("SELECT md5(repeat('ab', 400000000))", "SELECT count(*) FROM orders")
        assert not v.passed and v.failure_kind == "timeout"
        assert v.layers["execution"]["error"]["exception"] == "ProcessKilled"
        assert "CPU time, over the limit of 1 s" in v.explanation  # killed for its CPU time, not the wall's
        assert g.compare("SELECT count(*) FROM orders", "SELECT count(*) FROM orders").passed
        assert host_of(g._grader).restarts == 1


def test_requests_queued_behind_a_killed_query_go_to_a_fresh_engine(shop_db: Path, tmp_path: Path) -> None:
    """Grading ahead queues the next case behind the running one; when the running one is
    killed, the queued ones are neither lost nor blamed for it."""
    from pytest_sqleval.core.grading.pipeline import SuiteGrader
    count, bomb, wrong = "SELECT count(*) FROM customers", "SELECT md5(repeat('ab', 400000000))", "SELECT count(*) FROM orders"
    g = SuiteGrader(shop_db, limits=Limits(timeout_s=1), cache_dir=tmp_path)
    try:
        gold = g.gold(count)
        for sql in (bomb, count, wrong):
            g.submit(sql, gold)
        assert [p.ticket.sent for p in g._ahead.values()] == [True, True, True]  # both queued behind the running one
        assert g.grade(count, gold).passed  # read behind the killed one, answered by a fresh engine
        assert g.grade(bomb, gold).failure_kind == "timeout"
        assert host_of(g).restarts == 1
        verdict = g.grade(wrong, gold)
        assert not verdict.passed and verdict.failure_kind != "timeout" and verdict.executed_sql == wrong
    finally:
        g.close()


def test_grading_ahead_keeps_every_verdict_with_its_own_case(
        pytester: pytest.Pytester, make_suite: Any, write_predictions: Any) -> None:
    count = "SELECT count(*) FROM customers"
    sqls = {"a_ok": count, "b_killed": "SELECT md5(repeat('ab', 400000000))", "c_ok": count,
            "d_wrong": "SELECT count(*) + 1 FROM customers", "e_ok": count}
    make_suite([{"id": cid, "question": f"case {cid}", "gold_sql": count} for cid in sqls],
               manifest_extra="[limits]\ntimeout_s = 1\n")
    write_predictions(sqls, name="p.jsonl")
    pytester.makeini(INI)
    result = pytester.runpytest("--sqleval-backend=predictions:p.jsonl", "-p", "no:randomly")
    result.assert_outcomes(passed=3, failed=2)
    records = {r["case_id"]: r for r in map(json.loads, (pytester.path / "sqleval-results" / "results.jsonl").read_text().splitlines())}
    assert {cid: r["executed_sql"] for cid, r in records.items()} == sqls
    assert records["b_killed"]["failure_kind"] == "timeout"
    assert records["d_wrong"]["error_class"] is not None and records["d_wrong"]["failure_kind"] != "timeout"

