"""Side-by-side verdicts in the run's summary: per backend, BIRD's and Spider's verdicts
(``grading.peers``) on every case, their scores beside ours, and where and why they differ;
Spider 2.0's too on a suite whose cases carry its standard (the spider2-lite layout), which
passes a prediction if any gold CSV matches it under that CSV's condition_cols.

Every case carries both verdicts: a graded case in ``compare.sidebyside``, a case we do
not grade (its gold cannot be trusted) in the record's ``sidebyside``, and a prediction
that did not run to a result (no SQL, a parse error, a refusal, a runtime error, a
timeout) is wrong under both rules, as both evaluators score an exception or a timeout.
A rule's score is over every case of the run, as the official evaluators count it.

The reasons for a disagreement with our verdict: ``duplicates`` (the bags differ but the
sets do not), ``distinct_stripping`` (Spider's removal of every DISTINCT decided it),
``distinct_in_count`` (that removal inside ``COUNT(DISTINCT ...)``, Spider's known bug),
``value_placeholder``, ``spaced_operator``, ``current_year`` (Spider's evaluator rewrote the
prediction before running it: ``value`` -> ``1``, ``! =`` -> ``!=``, ``YEAR(CURDATE())`` -> ``2020``),
``order`` (same bag, different sequence; or ties and ORDER BY in a subquery),
``column_order`` (equal only under a column permutation), ``ties`` (we accepted another
valid top-k through a LIMIT's tie group), ``float_noise`` (equal within our tolerance,
not exactly), ``nulls`` (NULL or NaN cells the rule treats differently), ``types`` (equal
by Python ``==`` across types we keep apart, such as True and 1), ``deprecated_table``
(our stale-table rule), ``other``. A case we do not grade is counted apart, by why
(``empty_gold``, ``gold_problem``).
"""
from __future__ import annotations

from collections import Counter
from typing import Any, Callable, Iterable, Mapping

from ..core.records import GRADED, CaseRecord, as_records, peer_verdicts

__all__ = ["GRADED", "REASONS", "RULES", "peer_verdicts", "sidebyside_lines", "summarize_sidebyside"]


RULES = ("bird", "spider")  # on every case; Spider 2.0's ("spider2") where a case carries its standard
LABELS = {"bird": "BIRD set comparison", "spider": "Spider test-suite comparison", "spider2": "Spider 2.0 comparison"}
REASONS = ("duplicates", "distinct_stripping", "distinct_in_count", "value_placeholder", "spaced_operator",
           "current_year", "order", "column_order", "ties", "float_noise", "nulls", "types", "deprecated_table", "other")


# -- the run -----------------------------------------------------------------------------
def summarize_sidebyside(records: Iterable[CaseRecord | Mapping[str, Any]]) -> dict[str, Any] | None:
    """Per backend: the score under each rule over every case, ours beside it, and where
    and why each rule's verdict differs from ours. ``None`` when no case has a verdict of
    theirs (nothing was executed)."""
    records = as_records(records)
    decided = [(r, v) for r in records if (v := peer_verdicts(r)) is not None]
    if not any(r.execution or r.sidebyside for r, _ in decided):
        return None
    graded = [r for r in records if r.status in GRADED]
    ours_passed = sum(1 for r in graded if r.status == "passed")
    out: dict[str, Any] = {"cases": len(records), "graded": len(graded), "ungraded": len(records) - len(graded),
                           "executed": sum(1 for r in graded if r.execution), "ours_passed": ours_passed,
                           "ours_accuracy": round(ours_passed / len(graded), 6) if graded else None,
                           "ours_accuracy_all": round(ours_passed / len(records), 6) if records else None}
    rules = RULES + (("spider2",) if any(v.get("spider2") is not None for _, v in decided) else ())
    for rule in rules:
        passed = 0
        lenient = stricter = 0
        reasons: Counter[str] = Counter()
        ungraded: Counter[str] = Counter()
        ungraded_passed = 0
        cases: list[dict[str, Any]] = []
        undecided = len(records) - len(decided)
        for r, sbs in decided:
            verdict = sbs.get(rule)
            if verdict is None:
                undecided += 1
                continue
            passed += verdict
            if r.status not in GRADED:  # a case we do not grade
                why = sbs.get("ungraded") or "no_prediction"
                ungraded[why] += 1
                ungraded_passed += verdict
                cases.append({"case_id": r.case_id, "suite": r.suite, "ours": None, rule: verdict,
                              "reason": why})
                continue
            ours = r.status == "passed"
            if verdict == ours:
                continue
            reason = sbs.get(f"{rule}_reason") or "other"
            if verdict and (r.compare or {}).get("match") and r.stale_tables:
                reason = "deprecated_table"
            lenient += verdict
            stricter += not verdict
            reasons[reason] += 1
            cases.append({"case_id": r.case_id, "suite": r.suite, "ours": ours, rule: verdict,
                          "reason": reason})
        scored = len(records) - undecided
        out[rule] = {"passed": passed, "accuracy": round(passed / scored, 6) if scored else None,
                     "undecided": undecided, "differs": lenient + stricter, "passes_where_we_fail": lenient,
                     "fails_where_we_pass": stricter, "reasons": {k: reasons[k] for k in REASONS if reasons[k]},
                     "ungraded_by_us": {"cases": sum(ungraded.values()), "passed": ungraded_passed,
                                        "why": dict(sorted(ungraded.items()))},
                     "cases": cases[:50]}
    return out


def sidebyside_lines(name: str, backend: dict[str, Any]) -> list[str]:
    """Terminal lines for one backend: BIRD's and Spider's scores over every case beside
    ours; the structural rates where nothing was executed (e.g. sql-create-context)."""
    entry = backend.get("sidebyside")
    pct: Callable[[float | None], str] = lambda x: "n/a" if x is None else f"{100 * x:.1f}%"  # noqa: E731
    if not entry:
        if backend.get("exact_match_rate") is None:
            return []
        return [f"    without execution: exact match {pct(backend['exact_match_rate'])} | no-values exact match "
                f"{pct(backend.get('no_values_exact_match_rate'))} | parse {pct(backend.get('parse_rate'))} | "
                f"schema adherence {pct(backend.get('grounding_rate'))}"]
    lines = [f"    official rules on all {entry['cases']} cases: ours {pct(entry['ours_accuracy_all'])} "
             f"({entry['ours_passed']} passed; {pct(entry['ours_accuracy'])} of the {entry['graded']} we grade, "
             f"{entry['ungraded']} we do not)"]
    for rule, label in LABELS.items():
        if rule not in entry:
            continue
        e = entry[rule]
        why = ", ".join(f"{k} {v}" for k, v in e["reasons"].items())
        ung = e["ungraded_by_us"]
        lines.append(f"      {label}: {pct(e['accuracy'])} ({e['passed']} passed); differs from ours on {e['differs']} "
                     f"({e['passes_where_we_fail']} pass where we fail, {e['fails_where_we_pass']} fail where we pass)"
                     + (f": {why}" if why else "")
                     + (f"; on the {ung['cases']} we do not grade it passes {ung['passed']} ("
                        + ", ".join(f"{k} {v}" for k, v in ung["why"].items()) + ")" if ung["cases"] else "")
                     + (f"; {e['undecided']} undecided" if e["undecided"] else ""))
    return lines
