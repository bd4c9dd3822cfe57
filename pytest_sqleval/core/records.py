"""The per-case record: one JSON object with every layer's evidence.

Field names follow seed 000 (case_id, question, gold_sql, generated_sql, parse_ok,
grounding_ok, hallucinated_tables, hallucinated_columns, pass, backend,
backend_metadata, schema, complexity, category) plus the execution grader's evidence."""
from __future__ import annotations

from typing import Any

#: 2: status ``undecidable``; ``tie_only``; number kinds integer/decimal/float (were integer/number);
#: failure kinds no_prediction, unfinished, undecidable_ties; error ``subject``, ``rows_over``/``cap``
RECORD_VERSION = 2
EVIDENCE_CHARS = 2000  # characters of one text value in a record's evidence; the cut is stated
_EVIDENCE = ("explanation", "case_error", "rationale", "judge", "warnings", "execution", "compare", "layers", "gold")


def bounded(value: Any, limit: int = EVIDENCE_CHARS) -> Any:
    """``value`` with every text in it cut to ``limit`` characters, saying so. Result values
    are already bounded where they are previewed (``grading.compare.clip``); this is the
    record's own wall, for evidence a layer or an engine message copied in whole."""
    if isinstance(value, str):
        return value if len(value) <= limit else f"{value[:limit]}… ({len(value):,} characters, truncated)"
    if isinstance(value, dict):
        return {k: bounded(v, limit) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [bounded(v, limit) for v in value]
    return value


def build_record(*, case: Any, backend: Any, nodeid: str, suite: dict[str, Any], status: str,
                 generation: Any = None, verdict: Any = None, gold: Any = None, case_error: str | None = None,
                 case_error_kind: str | None = None, sidebyside: dict[str, Any] | None = None) -> dict[str, Any]:
    """``status`` is passed | failed | undecidable | error; an error is never a graded failure,
    and undecidable (the database cannot tell, ``verdict._tie_verdict``) is not a pass. The case's
    inputs (question, SQL texts) and the backend's metadata are kept whole; the evidence is
    bounded (see ``bounded``). ``sidebyside``: BIRD's and Spider's verdicts on a case we do
    not grade; a case with a comparison carries them in ``compare.sidebyside``, one without
    where the grader found them anyway (a result over the row cap, a query Spider's
    evaluator rewrites) in its ``official`` layer, and one whose prediction ran to no
    result otherwise is wrong under both (``sidebyside.peer_verdicts``)."""
    from .sidebyside import peer_verdicts
    record = _record(case=case, backend=backend, nodeid=nodeid, suite=suite, status=status, generation=generation,
                     verdict=verdict, gold=gold, case_error=case_error, case_error_kind=case_error_kind)
    if sidebyside is None and record["compare"] is None:  # computed without a comparison of ours (layers.OfficialLayer)
        sidebyside = (record["layers"].get("official") or {}).get("sidebyside")
    record["sidebyside"] = sidebyside
    if sidebyside is None and record["compare"] is None:
        record["sidebyside"] = peer_verdicts(record)
    for key in _EVIDENCE:
        record[key] = bounded(record[key])
    return record


def with_fields(record: dict[str, Any], added: list[dict[str, Any] | None]) -> dict[str, Any]:
    """``record`` with the fields plugins add (``pytest_sqleval_record_fields``); a plugin
    may add fields, never replace the record's own."""
    for fields in added:
        for key, value in (fields or {}).items():
            if key in record:
                from .errors import UsageError
                raise UsageError(f"a pytest_sqleval_record_fields hook returned {key!r}, a field the record "
                                 "already has; fix: give the plugin's field a name of its own (e.g. prefixed)")
            record[key] = value
    return record


def _record(*, case: Any, backend: Any, nodeid: str, suite: dict[str, Any], status: str, generation: Any,
            verdict: Any, gold: Any, case_error: str | None, case_error_kind: str | None) -> dict[str, Any]:
    from .grading.verdict import severity
    adjudication = verdict.adjudication if verdict is not None else None
    judgement = verdict.judgement if verdict is not None else None
    grounding = verdict.grounding if verdict is not None else {}
    layers = verdict.layers if verdict is not None else {}
    structure = layers.get("structure") or {}
    failure_kind = (verdict.failure_kind if verdict is not None and status != "error" else case_error_kind)
    error_class = verdict.error_class if verdict is not None and status == "failed" else None
    return {
        "record_version": RECORD_VERSION,
        "case_id": case.id,
        "suite": suite.get("name"),
        "nodeid": nodeid,
        "question": case.question,
        "gold_sql": case.gold_sql,
        "generated_sql": generation.sql if generation is not None else None,
        "backend": backend.label,
        "backend_spec": backend.spec,
        "backend_metadata": {**backend.metadata, **(generation.metadata if generation is not None else {})},
        "status": status,
        "pass": status == "passed",
        "tie_only": bool(verdict is not None and verdict.tie_only and status == "passed"),
        "parse_ok": verdict.parse_ok if verdict is not None else None,
        "grounding_ok": grounding.get("ok"),
        "hallucinated_tables": grounding.get("hallucinated_tables", []),
        "hallucinated_columns": grounding.get("hallucinated_columns", []),
        "error_class": error_class,
        "failure_kind": failure_kind if status != "passed" else None,
        "explanation": case_error if status == "error" else (verdict.explanation if verdict is not None else None),
        "confidence": verdict.confidence if verdict is not None else None,
        "severity": severity(status, failure_kind, error_class),
        "case_error": case_error,
        "deterministic_verdict": adjudication.deterministic_verdict if adjudication is not None else None,
        "decided_by": adjudication.decided_by if adjudication is not None else None,
        "equivalence": judgement.equivalence if judgement is not None else None,
        "rationale": judgement.rationale if judgement is not None else None,
        "ai_advisory_verdict": adjudication.ai_advisory_verdict if adjudication is not None else None,
        "verdict_consistency_flag": adjudication.verdict_consistency_flag if adjudication is not None else None,
        "judge": judgement.to_dict() if judgement is not None else None,
        "blocked_reason": verdict.blocked_reason if layers else None,
        "warnings": adjudication.warnings if adjudication is not None else [],
        "exact_match": structure.get("exact_match"),
        "no_values_exact_match": structure.get("no_values_exact_match"),
        "normalized_match": structure.get("normalized_match"),
        "stale_tables": verdict.stale_tables if verdict is not None else [],
        "difficulty": case.difficulty,
        "expected_shape": case.expected_shape,
        "complexity": case.complexity,
        "category": case.category,
        "schema": case.schema,
        "tags": list(case.tags),
        "case_metadata": case.metadata,
        "execution": layers.get("execution"),
        "compare": layers.get("compare"),
        "layers": {k: v for k, v in layers.items() if k not in ("execution", "compare")},
        "executed_sql": verdict.executed_sql if verdict is not None else None,
        "gold": gold.to_dict() if gold is not None else None,
        "generation": {"cached": generation.cached, "elapsed_ms": generation.elapsed_ms,
                       "error": generation.error} if generation is not None else None,
        "database": suite.get("database"),
        "content_hash": suite.get("content_hash"),
        "engine": suite.get("engine"),
        "engine_version": suite.get("engine_version"),
        "grading_ms": verdict.duration_ms if verdict is not None else None,
        "run_metadata": suite.get("run_metadata", {}),
    }
