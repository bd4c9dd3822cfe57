"""Each layer's evidence is a frozen typed value beside its layer (``grading/layers/``): the
record holds it in today's form (``to_dict``), the engine wire's dicts become it in one
place (``from_record``), and a name that changes on either side is an error in a test,
never a silent None in a user's run."""
from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from pytest_sqleval.core.grading.compare import CompareResult
from pytest_sqleval.core.grading.execute import timeout_record
from pytest_sqleval.core.grading.layers import (CompareEvidence, ExecutionEvidence, GroundingEvidence, LayerFailure,
                                                OfficialEvidence, ParseEvidence, SafetyEvidence, StructureEvidence,
                                                VariantsEvidence, record_form)
from pytest_sqleval.core.grading.verdict import Evidence, classify

COMPARE = CompareResult(False, "values", 3, 3, ["a"], ["a"], ["integer"], ["integer"], column_matches=[False],
                        gold_columns_found_at={0: 0}).to_dict()
EXECUTION = {"ok": False, "error": {"category": "too_large", "message": "over", "exception": "TooLarge",
                                    "rows_over": 10, "cap": "max_rows"},
             "elapsed_ms": 1.5, "rows": None, "columns": None, "over_cap": {"cap": 10, "gold_rows": 3, "by": "max_rows"}}
pytestmark = pytest.mark.filterwarnings("error::DeprecationWarning")  # the grader reads no evidence by key

VARIANTS = {"chosen": 2, "graded": 1, "evidence": {"why": "x"},
            "mismatch": {"variant": 1, "kind": "subset", "gold_rows": 2, "gold_problem": None,
                         "execution": {"ok": True, "error": None, "elapsed_ms": 1.0, "rows": 2, "columns": ["a"]},
                         "match": False, "compare": COMPARE, "gold_preview": [[1]], "pred_preview": [[2]]}}


@pytest.mark.parametrize(("kind", "record"), [
    (ParseEvidence, {"ok": False, "dialect": "duckdb", "statements": 0, "error": {"message": "x", "line": 1, "col": 2}}),
    (ParseEvidence, {"ok": True, "dialect": "duckdb", "statements": 1, "error": None, "layer_error": "recursion: x"}),
    (SafetyEvidence, {"ok": False, "reason": "layer_error", "detail": "boom", "layer_error": "KeyError"}),
    (GroundingEvidence, {"ok": None, "hallucinated_tables": [], "hallucinated_columns": [], "tables": [], "note": None,
                         "skipped": "over budget", "detail": "spent"}),
    (StructureEvidence, {"normalized_match": True, "exact_match": False, "no_values_exact_match": False,
                         "distance": 0.5, "differing_clauses": ["where"], "clauses": {"where": {"match": False}}}),
    (ExecutionEvidence, EXECUTION),
    (ExecutionEvidence, timeout_record("stopped", 12.0)),
    (CompareEvidence, {**COMPARE, "gold_ambiguous": "a LIMIT cuts ties", "sidebyside": {"bird": True}}),
    (OfficialEvidence, {"sidebyside": {"spider": True}, "rewrites": [{"rewrite": "value -> 1"}]}),
    (VariantsEvidence, VARIANTS),
    (VariantsEvidence, {"error": "killed"}),
])
def test_the_record_form_is_todays_and_reads_back(kind: Any, record: dict[str, Any]) -> None:
    evidence = kind.from_record(record)
    assert evidence.to_dict() == record
    assert record_form(evidence) == record


@pytest.mark.parametrize(("kind", "record"), [
    (CompareEvidence, {**{k: v for k, v in COMPARE.items() if k != "match"}, "matched": False}),
    (ExecutionEvidence, {**EXECUTION, "rows_returned": 3}),
    (VariantsEvidence, {**VARIANTS, "mismatch": {**VARIANTS["mismatch"], "variant_index": 1}}),
])
def test_a_renamed_key_on_the_wire_is_an_error_not_a_none(kind: Any, record: dict[str, Any]) -> None:
    with pytest.raises(TypeError):
        kind.from_record(record)


def test_every_comparison_field_is_in_the_evidence() -> None:
    """A field the comparison gains must be typed here too (from_record would refuse it)."""
    assert {f.name for f in dataclasses.fields(CompareResult)} <= set(CompareEvidence.__dataclass_fields__)


def test_evidence_is_frozen_and_has_no_stray_attributes() -> None:
    parse = ParseEvidence(True, "duckdb", 1, None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        parse.ok = False  # type: ignore[misc]
    with pytest.raises(AttributeError):
        parse.okay  # type: ignore[attr-defined]  # noqa: B018


def test_the_verdict_reads_typed_evidence_and_a_plugin_reads_its_own_by_name() -> None:
    layers: dict[str, Any] = {"parse": ParseEvidence(True, "duckdb", 1, None), "safety": SafetyEvidence(True),
                              "execution": ExecutionEvidence.from_record(EXECUTION), "compare": None,
                              "mine": {"star": True}, "broken": LayerFailure({"layer_error": "RuntimeError"})}
    evidence = Evidence(sql="SELECT 1", layers=layers, stale=[], executed=True,
                        joins_gold={"tables": [], "joins": []})
    assert evidence.execution is layers["execution"] and evidence.execution.error.category == "too_large"
    assert evidence.get("mine") == {"star": True} and evidence.get("broken") == {"layer_error": "RuntimeError"}
    assert evidence.record_layers()["execution"] == EXECUTION
    cls = classify(parse=evidence.parse, safety=evidence.safety, grounding=None, execution=evidence.execution,
                   compare=None, stale=[], joins_pred={"tables": [], "joins": []}, joins_gold={"tables": [], "joins": []})
    assert cls.failure_kind == "cardinality_mismatch" and "more than 10 rows" in cls.explanation


def _without_database(exact: bool) -> Evidence:
    layers: dict[str, Any] = {"parse": ParseEvidence(True, "duckdb", 1, None), "safety": SafetyEvidence(True),
                              "structure": StructureEvidence(exact, exact, exact, 0.0, [] if exact else ["joins"])}
    return Evidence(sql="SELECT 1", layers=layers, stale=[], executed=False, joins_gold={"tables": [], "joins": []})


def test_the_steps_after_the_layers_decide_without_a_database() -> None:
    """assess -> classification -> decide, as the pipeline runs them: without a database and
    without a judge, exact match decides, and a failure is classified again from the diff."""
    from pytest_sqleval.core.grading.verdict import assess, classification, decide
    same = _without_database(exact=True)
    assessment = assess(same)
    verdict = decide(same, assessment, classification(same, assessment))
    assert verdict.passed and verdict.adjudication is not None and verdict.adjudication.decided_by == "exact_match"
    assert verdict.layers["structure"]["exact_match"] is True  # the record form
    assert verdict.evidence["structure"] is same.layers["structure"]  # the typed value
    other = _without_database(exact=False)
    assessment = assess(other)
    assert assessment.passed  # provisional: it parses and is safe; exact match decides next
    verdict = decide(other, assessment, classification(other, assessment))
    assert not verdict.passed and (verdict.error_class, verdict.failure_kind) == ("wrong_join", "not_exact_match")
    assert verdict.layers["classify"]["failure_kind"] == "not_exact_match"


def test_a_plugin_that_reads_builtin_evidence_by_key_still_can_for_one_release() -> None:
    """``candidate.layers["parse"]["ok"]`` in a plugin's layer: the record form answers, with a warning."""
    parse = ParseEvidence(False, "duckdb", 0, {"message": "x", "line": 1, "col": 1})
    with pytest.warns(DeprecationWarning, match=r"read \.ok instead"):
        assert parse["ok"] is False
    with pytest.warns(DeprecationWarning):
        assert parse.get("error") == {"message": "x", "line": 1, "col": 1} and parse.get("nothing", 3) == 3
