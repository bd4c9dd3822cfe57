"""The structural diff of a prediction is made in the engine process beside its execution
when its gold's answer is stored already (issue 35): the grading process, pytest's critical
path in a serial run, no longer makes it, and every verdict and every piece of evidence is
the one a grader that makes the diff itself gives (an in-process engine, ``isolation =
"auto"``, and a first run, whose engine process runs the golds, still make it here)."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pytest_sqleval.core.cases import BenchmarkCase
from pytest_sqleval.core.engines.base import Limits
from pytest_sqleval.core.grading.layers import structure as structure_layer
from pytest_sqleval.core.grading.layers import StructureEvidence
from pytest_sqleval.core.grading.parse import parse_sql
from pytest_sqleval.core.grading.pipeline import SuiteGrader
from pytest_sqleval.core.grading.structure import compare_structure
from tests.hosts import host_of

from .test_gold_analysis import GOLD, PREDICTIONS, pets_db

GOLDS = [GOLD, "SELECT name FROM owner ORDER BY name", "SELECT count(*) FROM pet WHERE age > 3"]
UNSAFE = "DELETE FROM pet"  # refused by safety: never sent, its diff (it parses) made here as before


def never_behind(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests grade case by case, nothing sent ahead, so each grade waits for its
    answer and the engine would count as the slower process, the diff kept here
    (``EngineHost.behind``): what they pin is the diff made in the engine."""
    from pytest_sqleval.core.engines.host import EngineHost
    monkeypatch.setattr(EngineHost, "behind", property(lambda self: False))


def local_diffs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every structural diff made in this (the grading) process from here on."""
    seen: list[str] = []
    real = structure_layer.compare_structure

    def counting(pred: Any, gold: Any, dialect: str, budget: Any = None, pred_sql: str | None = None) -> Any:
        seen.append(pred_sql or "")
        return real(pred, gold, dialect, budget, pred_sql=pred_sql)
    monkeypatch.setattr(structure_layer, "compare_structure", counting)
    return seen


def graded(grader: SuiteGrader) -> list[dict[str, Any]]:
    out = []
    for i, gold_sql in enumerate(GOLDS):
        case = BenchmarkCase(id=f"q{i}", question="?", gold_sql=gold_sql)
        gold = grader.case_gold(case)
        for sql in [*PREDICTIONS, UNSAFE]:
            v = grader.grade(sql, gold, gold_sql=gold_sql)
            out.append({"sql": sql, "status": v.status, "error_class": v.error_class, "failure_kind": v.failure_kind,
                        "layers": {k: v.layers[k] for k in ("structure", "compare", "official") if k in v.layers}})
    return out


def graded_in_process(db: Path, cache_dir: Path) -> list[dict[str, Any]]:
    """The verdicts of a grader whose SQLite is served in this process: the diff made here,
    the reference the engine-process runs are held to."""
    here = SuiteGrader(db, dialect="sqlite", cache_dir=cache_dir, limits=Limits(isolation="auto"))
    try:
        assert here.host is not None and here.host.in_process
        return graded(here)
    finally:
        here.close()


def test_the_engine_process_makes_the_structure_diff_and_the_verdicts_are_the_same(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    never_behind(monkeypatch)
    db = pets_db(tmp_path / "pets.sqlite")
    expected = graded_in_process(db, tmp_path / "here")  # the diff made here, as before
    seen = local_diffs(monkeypatch)
    first = SuiteGrader(db, dialect="sqlite", cache_dir=tmp_path / "moved")
    try:  # a first run: each gold runs in the engine process, which is busy enough; the diffs are made here
        assert graded(first) == expected
    finally:
        first.close()
    assert len(seen) == len(GOLDS) * (len(PREDICTIONS) + 1)
    seen.clear()
    moved = SuiteGrader(db, dialect="sqlite", cache_dir=tmp_path / "moved")
    try:  # a rerun: every gold answer stored
        assert moved.host is not None and not moved.host.in_process
        got = graded(moved)
    finally:
        moved.close()
    assert seen == [UNSAFE] * len(GOLDS)  # only the query that was never sent to an engine
    assert got == expected
    assert any(g["layers"]["structure"]["exact_match"] for g in got)  # the evidence is there, not left out
    assert any(g["layers"]["structure"]["differing_clauses"] for g in got)


def test_the_engine_answers_a_grade_request_with_the_structure_evidence(tmp_path: Path) -> None:
    db = pets_db(tmp_path / "pets.sqlite")
    g = SuiteGrader(db, dialect="sqlite", cache_dir=tmp_path / "cache")
    try:
        gold = g.gold(GOLD)
        assert gold.analysis is not None and gold.analysis.structure is not None
        sql = PREDICTIONS[1]
        answer = host_of(g).call("grade", {"sql": sql, "gold_key": gold.key, "spec": gold.policy.to_wire(),
                                       "gold_sql": gold.sql, "structure": {
                                           "sql": sql, "dialect": "sqlite", "gold": gold.analysis.structure.to_json(),
                                           "budget_s": 5.0}})
    finally:
        g.close()
    tree = parse_sql(sql, "sqlite").expression
    assert tree is not None
    local = compare_structure(tree, gold.analysis.structure, "sqlite", pred_sql=sql)
    assert answer["structure"] == local.to_dict()
    assert StructureEvidence.from_record(answer["structure"]).distance == local.distance > 0


def test_a_spent_budget_is_the_same_evidence_in_the_engine(tmp_path: Path) -> None:
    db = pets_db(tmp_path / "pets.sqlite")
    g = SuiteGrader(db, dialect="sqlite", cache_dir=tmp_path / "cache")
    try:
        gold = g.gold(GOLD)
        assert gold.analysis is not None and gold.analysis.structure is not None
        sql = PREDICTIONS[4]
        answer = host_of(g).call("grade", {"sql": sql, "gold_key": gold.key, "spec": gold.policy.to_wire(),
                                       "gold_sql": gold.sql, "structure": {
                                           "sql": sql, "dialect": "sqlite", "gold": gold.analysis.structure.to_json(),
                                           "budget_s": 0.0}})
    finally:
        g.close()
    evidence = StructureEvidence.from_record(answer["structure"])
    assert evidence == replace(StructureEvidence(), skipped="over budget", detail=evidence.detail)
    assert evidence.detail and "budget" in evidence.detail


def test_a_killed_execution_leaves_the_diff_to_the_grading_process(shop_db: Path, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    never_behind(monkeypatch)
    count, bomb = "SELECT count(*) FROM customers", "SELECT md5(repeat('ab', 400000000))"  # ignores its interrupt
    limits = Limits(timeout_s=1)
    warm = SuiteGrader(shop_db, cache_dir=tmp_path, limits=limits)
    try:
        warm.gold(count)  # stored: the diff of a prediction against it is sent to the engine
    finally:
        warm.close()
    seen = local_diffs(monkeypatch)
    g = SuiteGrader(shop_db, cache_dir=tmp_path, limits=limits)
    try:
        gold = g.gold(count)
        assert gold.cached
        v = g.grade(bomb, gold, gold_sql=count)
        assert host_of(g).restarts == 1 and v.failure_kind == "timeout"
        assert g.grade(count, gold, gold_sql=count).passed  # a fresh engine makes the next one's diff
    finally:
        g.close()
    assert seen == [bomb]  # the killed engine gave no diff: made here, as before the work moved
    assert v.layers["structure"]["differing_clauses"]


def test_a_query_stopped_at_its_limit_still_gets_its_diff_from_the_engine(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = pets_db(tmp_path / "pets.sqlite")
    slow = ("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) "
            "SELECT count(*) FROM r, owner")  # interrupted at its limit: the engine answers
    limits = Limits(timeout_s=0.5)
    warm = SuiteGrader(db, dialect="sqlite", cache_dir=tmp_path / "cache", limits=limits)
    try:
        warm.gold(GOLDS[2])
    finally:
        warm.close()
    seen = local_diffs(monkeypatch)
    g = SuiteGrader(db, dialect="sqlite", cache_dir=tmp_path / "cache", limits=limits)
    try:
        gold = g.gold(GOLDS[2])
        v = g.grade(slow, gold, gold_sql=GOLDS[2])
    finally:
        g.close()
    assert v.layers["execution"]["error"] is not None and v.failure_kind == "timeout"
    assert seen == []
    assert v.layers["structure"]["differing_clauses"]


def test_a_huge_prediction_keeps_its_diff_in_the_grading_process(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine would parse it again (an IN of 20,000 values: seconds); it is parsed here already."""
    never_behind(monkeypatch)
    from pytest_sqleval.core.grading.layers.send import STRUCTURE_SQL_MAX
    db = pets_db(tmp_path / "pets.sqlite")
    huge = "SELECT count(*) FROM pet WHERE age IN (" + ", ".join(str(i) for i in range(2000)) + ")"
    assert len(huge) > STRUCTURE_SQL_MAX
    warm = SuiteGrader(db, dialect="sqlite", cache_dir=tmp_path / "cache")
    try:
        warm.gold(GOLDS[2])
    finally:
        warm.close()
    seen = local_diffs(monkeypatch)
    g = SuiteGrader(db, dialect="sqlite", cache_dir=tmp_path / "cache")
    try:
        gold = g.gold(GOLDS[2])
        assert gold.cached
        v = g.grade(huge, gold, gold_sql=GOLDS[2])
        assert g.grade(PREDICTIONS[4], gold, gold_sql=GOLDS[2]).status == "failed"
    finally:
        g.close()
    assert seen == [huge]  # the short one's diff was made in the engine
    assert v.layers["structure"]["differing_clauses"]


def test_while_the_engine_is_the_slower_process_the_diff_is_made_here_with_the_same_verdicts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a suite whose queries cost the engine more than the grading process's work
    (DuckDB on a warehouse: the own-cost bench), the grading process waits for every answer
    and the engine is the critical path: the diff then stays here, where it fills a wait
    (``EngineHost.behind``), and the evidence is the same."""
    from pytest_sqleval.core.engines import host as host_module
    from tests.hosts import engine_process_of
    db = pets_db(tmp_path / "pets.sqlite")
    expected = graded_in_process(db, tmp_path / "here")
    first = SuiteGrader(db, dialect="sqlite", cache_dir=tmp_path / "moved")
    try:  # a first run stores the golds
        graded(first)
    finally:
        first.close()
    monkeypatch.setattr(host_module, "BEHIND_WEIGHT", 0.0)  # the average stays where it is set below
    seen = local_diffs(monkeypatch)
    rerun = SuiteGrader(db, dialect="sqlite", cache_dir=tmp_path / "moved")
    try:
        engine_process_of(rerun).cpu_balance = 1.0  # a second of CPU a case more than this process: far behind
        assert host_of(rerun).behind
        got = graded(rerun)
    finally:
        rerun.close()
    assert got == expected
    assert len(seen) == len(GOLDS) * (len(PREDICTIONS) + 1)  # every diff made here


def test_the_engine_is_behind_while_it_spends_more_cpu_a_case_than_this_process(shop_db: Path,
                                                                                tmp_path: Path) -> None:
    """The signal is CPU time, not waits (load on the machine does not move it): grades
    whose queries cost the engine more than this process spends between them make the
    engine behind; grades that cost it less than this process's own work bring it back."""
    import time
    heavy = "SELECT count(*) FROM range(60000000) WHERE hash(range) % 7 = 0"
    g = SuiteGrader(shop_db, limits=Limits(timeout_s=30, threads=1), cache_dir=tmp_path)
    try:
        host = host_of(g)
        gold = g.gold("SELECT count(*) FROM customers")
        g.grade("SELECT count(*) FROM customers", gold)
        assert not host.behind
        for _ in range(3):
            g.grade(heavy, gold)
        assert host.behind
        for _ in range(40):
            spin = time.process_time() + 0.01  # this process's own work between two grades
            while time.process_time() < spin:
                pass
            g.grade("SELECT count(*) FROM customers", gold)
        assert not host.behind
    finally:
        g.close()
