"""Aggregate rates from case records, per backend and sliced by labels."""
from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any, Callable, Iterable, Mapping

from ..core import ERROR_CLASSES
from ..core.records import CaseRecord, as_records
from .sidebyside import summarize_sidebyside

SLICES: dict[str, Callable[[CaseRecord], list[str]]] = {
    "difficulty": lambda r: [r.difficulty or "unlabelled"],
    "complexity": lambda r: [r.complexity or "unlabelled"],
    "category": lambda r: [r.category or "unlabelled"],
    "schema": lambda r: [r.schema or "unlabelled"],
    "suite": lambda r: [r.suite or "unlabelled"],
    "tags": lambda r: list(r.tags) or ["untagged"],
    "model": lambda r: [str(r.backend_metadata.get("model") or "n/a")],
    "prompt_version": lambda r: [str(r.backend_metadata.get("prompt_version") or "n/a")],
}


def rates(records: Iterable[CaseRecord | Mapping[str, Any]]) -> dict[str, Any]:
    """pass_rate counts case errors against the backend; execution_accuracy is over
    gradable cases only (errors excluded); grounding_rate is over evaluated cases. An
    undecidable case (every row the gold ranks ties) is graded and not passed: it stays in
    both denominators. ``tie_only_passes`` counts the passes that rest only on a tie group."""
    records = as_records(records)
    n = len(records)
    passed = sum(1 for r in records if r.status == "passed")
    errors = sum(1 for r in records if r.status == "error")
    undecidable = sum(1 for r in records if r.status == "undecidable")
    graded = n - errors
    parse_seen = [r for r in records if r.parse_ok is not None]
    parsed = sum(1 for r in parse_seen if r.parse_ok)
    g_eval = [r for r in records if r.grounding_ok is not None]
    classes = Counter(r.error_class for r in records if r.status == "failed")
    judged = [r for r in records if r.equivalence in ("equivalent", "partially_equivalent", "different")]
    flagged = [r for r in records if r.verdict_consistency_flag]
    structured = [r.structure_match for r in records if r.structure_match.exact_match is not None]
    return {
        "cases": n, "passed": passed, "failed": graded - passed - undecidable, "errors": errors,
        "undecidable": undecidable, "tie_only_passes": sum(1 for r in records if r.tie_only),
        "pass_rate": _ratio(passed, n),
        "execution_accuracy": _ratio(passed, graded),
        "parse_rate": _ratio(parsed, len(parse_seen)),
        "grounding_rate": _ratio(sum(1 for r in g_eval if r.grounding_ok), len(g_eval)),
        "exact_match_rate": _ratio(sum(1 for m in structured if m.exact_match), len(structured)),
        "no_values_exact_match_rate": _ratio(sum(1 for m in structured if m.no_values_exact_match),
                                             len(structured)),
        "equivalence_rate": _ratio(sum(1 for r in judged if r.equivalence == "equivalent"), len(judged)),
        "judged": len(judged),
        "judge_skipped": sum(1 for r in records if r.equivalence == "skipped"),
        "judge_agreement_rate": _ratio(sum(1 for r in flagged if r.verdict_consistency_flag == "consistent"),
                                       len(flagged)),
        # the built-in classes always (a zero says so), then any a plugin's classifier gave
        "error_classes": {**{c: classes.get(c, 0) for c in ERROR_CLASSES},
                          **{c: k for c, k in sorted(classes.items(), key=lambda ck: str(ck[0]))
                             if c not in ERROR_CLASSES and c is not None}},
        "case_errors": dict(Counter(r.failure_kind or "case_error" for r in records if r.status == "error")),
        "no_prediction": sum(1 for r in records if r.failure_kind == "no_prediction"),  # failed, class other
        **_variant_rates(records, passed, graded),
    }


def _variant_rates(records: list[CaseRecord], passed: int, graded: int) -> dict[str, Any]:
    """With database variants: execution accuracy on the snapshot alone (a coincidental
    pass counted as a pass) beside the one on the snapshot and its variants (test-suite
    accuracy), the coincidental passes caught, and the matching cases whose check on the
    variants failed (their pass rests on the database alone: counted, and the first error
    shown, so that a broken check never reads as a verified run)."""
    checked = [r for r in records if r.layer("variants").get("chosen") is not None]
    unchecked = [r for r in records if r.layer("variants").get("error")]  # matched; the variants' check failed
    if not checked and not unchecked:
        return {}
    coincidental = sum(1 for r in records if r.failure_kind == "coincidental_pass")
    return {"snapshot_accuracy": _ratio(passed + coincidental, graded), "test_suite_accuracy": _ratio(passed, graded),
            "coincidental_passes": coincidental, "variant_checked_cases": len(checked),
            "variant_unchecked_cases": len(unchecked),
            **({"variant_check_error": str(unchecked[0].layer("variants")["error"]).splitlines()[0][:200]}
               if unchecked else {})}


def _ratio(a: int, b: int) -> float | None:
    return round(a / b, 6) if b else None


def summarize(records: Iterable[CaseRecord | Mapping[str, Any]], *, expected: int | None = None,
              run: dict[str, Any] | None = None) -> dict[str, Any]:
    """The run's summary.json; ``records`` as ``CaseRecord``s or as the JSON objects of results.jsonl."""
    from .ablation import held_out_by_backend
    records = as_records(records)
    held_out = held_out_by_backend(records)  # main against held-out accuracy, when the suite holds cases out
    by_backend: dict[str, list[CaseRecord]] = defaultdict(list)
    for r in records:
        by_backend[r.backend].append(r)
    backends = {}
    for name, recs in sorted(by_backend.items()):
        entry = rates(recs)
        entry["slices"] = {}
        for dim, keyfn in SLICES.items():
            groups: dict[str, list[CaseRecord]] = defaultdict(list)
            for r in recs:
                for k in keyfn(r):
                    groups[k].append(r)
            if len(groups) > 1 or dim in ("difficulty", "category"):
                entry["slices"][dim] = {k: rates(v) for k, v in sorted(groups.items())}
        entry["judge_disagreements"] = [
            {"case_id": r.case_id, "suite": r.suite, "deterministic": r.deterministic_verdict,
             "judge": r.ai_advisory_verdict, "rationale": r.rationale}
            for r in recs if r.verdict_consistency_flag == "inconsistent"]
        entry["sidebyside"] = summarize_sidebyside(recs)  # BIRD's and Spider's verdicts beside ours
        if name in held_out:
            entry["held_out"] = held_out[name]
        backends[name] = entry
    suites = {}
    for r in records:
        if r.suite and r.content_hash:
            suites[r.suite] = {"database": r.database, "content_hash": r.content_hash,
                               "engine": r.engine, "engine_version": r.engine_version}
    return {"summary_version": 1, "run": run or {}, "overall": rates(records), "backends": backends,
            "suites": suites, "cases_expected": expected,
            "cases_lost": (expected - len(records)) if expected is not None else None}
