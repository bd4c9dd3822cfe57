"""Pathological sizes end within the case's limits: huge predictions are graded by execution,
grounding and structure are not quadratic, a layer that cannot cope or runs over the case's
budget leaves evidence and execution decides, and Spider's DISTINCT-free re-run is cut at
the case limit."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest

from tests.hosts import host_of
from tests.sqleval_helpers import sqleval_ini  # noqa: F401


# -- pathological sizes, layers that cannot cope, the layer budget ------------
AND_CHAIN = "SELECT count(*) FROM customers WHERE " + " AND ".join(f"id <> {100000 + i}" for i in range(3000))
UNION_1200 = " UNION ".join(f"SELECT {i} AS x" for i in range(1200))
IN_20000 = "SELECT count(*) FROM customers WHERE id IN (" + ", ".join(str(i) for i in range(20000)) + ")"
OR_12000 = "SELECT count(*) FROM customers WHERE " + " OR ".join(f"id = {i}" for i in range(12000))


def test_pathological_predictions_are_graded_within_the_case_limit(pytester: pytest.Pytester,
                                                                   make_suite: Callable[..., Path]) -> None:
    """A 3,000-term AND chain and a 1,200-branch UNION once raised RecursionError in the
    structural layer (a traceback, a lost case); an IN of 20,000 values spent ~20 s there
    (quadratic; ``test_grounding_and_structure_are_not_quadratic`` measures that in CPU time).
    Each is now graded by execution, counted, and no layer fails on it."""
    cases = [{"id": "and3000", "question": "a", "gold_sql": "SELECT count(*) FROM customers"},
             {"id": "union1200", "question": "u", "gold_sql": "SELECT range AS x FROM range(1200)"},
             {"id": "in20000", "question": "i", "gold_sql": "SELECT count(*) FROM customers"}]
    make_suite(cases, manifest_extra="[limits]\ntimeout_s = 2\n")
    preds = {"and3000": AND_CHAIN, "union1200": UNION_1200, "in20000": IN_20000}
    (pytester.path / "preds.jsonl").write_text("".join(json.dumps({"id": k, "sql": v}) + "\n" for k, v in preds.items()))
    result = pytester.runpytest("--sqleval-backend=predictions:preds.jsonl", "--sqleval-min-pass-rate=1")
    result.assert_outcomes(passed=3)
    assert result.ret == 0
    summary = json.loads((pytester.path / "sqleval-results" / "summary.json").read_text())
    assert summary["cases_lost"] == 0
    records = {r["case_id"]: r for r in map(json.loads, (pytester.path / "sqleval-results" / "results.jsonl")
                                            .read_text().splitlines())}
    for rec in records.values():  # run within the limit, each layer ran to its end (or was skipped, over budget)
        assert rec["execution"]["ok"] is True and rec["failure_kind"] is None, (rec["case_id"], rec["execution"])
        for layer in ("grounding", "structure"):
            assert "layer_error" not in (rec["layers"].get(layer) or {}), (rec["case_id"], layer, rec["layers"][layer])


def test_grounding_and_structure_are_not_quadratic(shop_grader: Any) -> None:
    """12,000 OR'ed predicates (157 KB): grounding took ~30 s (sqlglot walks from every
    column up a 12,000-deep chain); an IN of 20,000 values ~20 s in the structural layer
    (literals replaced one by one, re-indexing the list each time). Generous bounds."""
    import time
    from pytest_sqleval.core.grading.grounding import CatalogIndex, ground
    from pytest_sqleval.core.grading.parse import parse_sql
    from pytest_sqleval.core.grading.structure import compare_structure
    index = CatalogIndex(shop_grader._grader.catalog)
    gold = parse_sql("SELECT count(*) FROM customers", "duckdb").expression
    assert gold is not None
    for sql in (OR_12000, IN_20000):
        # measured against a baseline taken in the same run (sqlglot's own parse, linear in
        # the input), in this process's CPU time, so other processes on a loaded machine
        # slow neither: quadratic layers were 40-50x the parse
        started = time.process_time()
        tree = parse_sql(sql, "duckdb").expression
        parsed = time.process_time() - started
        assert tree is not None
        started = time.process_time()
        grounded = ground(tree, index)
        structure = compare_structure(tree, gold, "duckdb")
        layers = time.process_time() - started
        assert layers < 10 * parsed + 0.5, (sql[:60], layers, parsed)
        assert grounded.ok is True and structure.clauses["where"]["match"] is False
    bad = parse_sql(OR_12000.replace("id = 7 OR", "idd = 7 OR"), "duckdb").expression
    assert [c["name"] for c in ground(bad, index).hallucinated_columns] == ["idd"]  # regrouping loses nothing


def test_a_layer_that_cannot_cope_leaves_evidence_and_execution_decides(shop_grader: Any,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_sqleval.core.grading import layers, pipeline

    def recurse(*args: Any, **kw: Any) -> Any:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(layers.grounding, "ground", recurse)
    monkeypatch.setattr(layers.structure, "compare_structure", recurse)
    monkeypatch.setattr(pipeline, "diagnose", recurse)
    right = shop_grader.compare("SELECT count(*) FROM customers", "SELECT count(*) AS n FROM customers")
    assert right.passed
    assert right.layers["grounding"]["layer_error"] == "recursion" and right.layers["grounding"]["ok"] is None
    assert right.layers["structure"]["layer_error"] == "recursion"
    wrong = shop_grader.compare("SELECT count(*) + 1 FROM customers", "SELECT count(*) AS n FROM customers")
    assert not wrong.passed and wrong.error_class == "wrong_metric"
    assert wrong.layers["diagnostics"]["layer_error"] == "recursion"


def test_layers_over_the_case_budget_are_skipped_with_evidence(shop_grader: Any,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A budget already spent: grounding, structure and diagnostics record
    ``skipped: over budget``; parse and safety still run, execution still decides."""
    from pytest_sqleval.core.grading import pipeline
    monkeypatch.setattr(pipeline, "layer_budget", lambda limits: 0.0)
    right = shop_grader.compare("SELECT count(*) FROM orders", "SELECT count(*) FROM orders")
    assert right.passed and right.layers["safety"]["ok"]
    for layer in ("grounding", "structure"):
        assert right.layers[layer]["skipped"] == "over budget", layer
    wrong = shop_grader.compare("SELECT count(*) FROM orders WHERE id > 1", "SELECT count(*) FROM orders")
    assert not wrong.passed and wrong.layers["diagnostics"]["skipped"] == "over budget"
    from pytest_sqleval.reports.terminal import render_failure
    assert "structure: not available (over budget)" in render_failure(
        {"status": "failed", "layers": {k: v for k, v in wrong.layers.items() if k not in ("execution", "compare")},
         "compare": wrong.layers["compare"], "execution": wrong.layers["execution"], "case_id": "x",
         "explanation": wrong.explanation, "error_class": wrong.error_class, "failure_kind": wrong.failure_kind,
         "generated_sql": "SELECT", "gold_sql": "SELECT", "backend": "b", "stale_tables": [],
         "confidence": wrong.confidence, "question": "q"})


# -- Spider's DISTINCT-free re-run is bounded -----------------------------------------
#: 5 ms as written (DISTINCT: 40 customers, one 'ab'); without DISTINCT, 200, and a single
#: uninterruptible scalar over 200 MB (~16 s on the test machine)
RERUN_BOMB = ("SELECT length(regexp_replace(repeat('ab', CASE WHEN (SELECT count(DISTINCT customer_id) FROM orders) "
              "= 40 THEN 1 ELSE 100000000 END), 'b', 'cc', 'g')) AS n")


def test_the_distinct_free_rerun_is_cut_at_the_case_limit(shop_db: Path, tmp_path: Path) -> None:
    """Uncut, the re-run ends after ~16 s with Spider's verdict; cut at the limit (in CPU
    time, the wall bound behind it), it gives none, the engine process is restarted once,
    and the next case runs on the fresh one."""
    from pytest_sqleval.core.api import Grader
    from pytest_sqleval.core.cases import Limits
    with Grader(shop_db, cache_dir=tmp_path, limits=Limits(timeout_s=1)) as grader:
        grader.compare("SELECT 3 AS n", "SELECT 3 AS n")  # the gold stored, the engine warm
        verdict = grader.compare(RERUN_BOMB, "SELECT 3 AS n")
        assert verdict.passed  # the prediction's own run decides
        assert verdict.layers["execution"]["ok"] is True and verdict.layers["execution"]["error"] is None
        sbs = verdict.layers["compare"]["sidebyside"]
        assert sbs["bird"] is True and sbs["spider"] is None
        assert "did not finish within the case's limits" in sbs["note"]
        assert host_of(grader._grader).restarts == 1  # killed: a single scalar does not take an interrupt
        assert grader.compare("SELECT count(*) FROM orders", "SELECT count(*) FROM orders").passed  # a fresh engine
