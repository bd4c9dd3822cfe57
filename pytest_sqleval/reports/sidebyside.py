"""Side-by-side verdicts in the run's summary: per backend, how BIRD's and Spider's
verdicts (``grading.peers``, recorded with each case's comparison) differ from ours, and why.

The reasons for a disagreement with our verdict: ``duplicates`` (the bags differ but the
sets do not, or DISTINCT removal decided it), ``order`` (same bag, different sequence;
or ties and ORDER BY in a subquery), ``column_order`` (equal only under a column
permutation), ``float_noise`` (equal within our tolerance, not exactly), ``nulls`` (NULL
or NaN cells the rule treats differently), ``types`` (equal by Python ``==`` across
types we keep apart, such as True and 1), ``deprecated_table`` (our stale-table rule),
``other``.
"""
from __future__ import annotations

from collections import Counter
from typing import Any

RULES = ("bird", "spider")
REASONS = ("duplicates", "order", "column_order", "float_noise", "nulls", "types", "deprecated_table", "other")


# -- the run -----------------------------------------------------------------------------
def summarize_sidebyside(records: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Per backend: accuracy under each rule over the cases we executed, and where and why
    each rule's verdict differs from ours. ``None`` when nothing was executed."""
    executed = [r for r in records if r.get("status") in ("passed", "failed") and r.get("execution")]
    if not executed:
        return None
    not_executed = sum(1 for r in records if r.get("status") in ("passed", "failed") and not r.get("execution"))
    out: dict[str, Any] = {"executed": len(executed), "not_executed": not_executed,
                           "ours_passed": sum(1 for r in executed if r["status"] == "passed")}
    for rule in RULES:
        passed = undecided = 0
        lenient = stricter = 0
        reasons: Counter[str] = Counter()
        cases: list[dict[str, Any]] = []
        for r in executed:
            ours = r["status"] == "passed"
            sbs = (r.get("compare") or {}).get("sidebyside")
            verdict = False if r.get("compare") is None else (sbs or {}).get(rule)
            if verdict is None:
                undecided += 1
                continue
            passed += verdict
            if verdict == ours:
                continue
            reason = (sbs or {}).get(f"{rule}_reason") or "other"
            if verdict and (r.get("compare") or {}).get("match") and r.get("stale_tables"):
                reason = "deprecated_table"
            lenient += verdict
            stricter += not verdict
            reasons[reason] += 1
            cases.append({"case_id": r["case_id"], "suite": r.get("suite"), "ours": ours, rule: verdict,
                          "reason": reason})
        decided = len(executed) - undecided
        out[rule] = {"passed": passed, "accuracy": round(passed / decided, 6) if decided else None,
                     "undecided": undecided, "differs": lenient + stricter, "passes_where_we_fail": lenient,
                     "fails_where_we_pass": stricter, "reasons": {k: reasons[k] for k in REASONS if reasons[k]},
                     "cases": cases[:50]}
    out["ours_accuracy"] = round(out["ours_passed"] / len(executed), 6)
    return out


def sidebyside_lines(name: str, backend: dict[str, Any]) -> list[str]:
    """Terminal lines for one backend: BIRD's and Spider's verdicts beside ours where cases
    were executed; the structural rates where nothing was (e.g. sql-create-context)."""
    entry = backend.get("sidebyside")
    if not entry:
        if backend.get("exact_match_rate") is None:
            return []
        pct = lambda x: "n/a" if x is None else f"{100 * x:.1f}%"  # noqa: E731
        return [f"    without execution: exact match {pct(backend['exact_match_rate'])} | no-values exact match "
                f"{pct(backend.get('no_values_exact_match_rate'))} | parse {pct(backend.get('parse_rate'))} | "
                f"schema adherence {pct(backend.get('grounding_rate'))}"]
    lines = [f"    side by side on {entry['executed']} executed cases: ours {100 * entry['ours_accuracy']:.1f}%"]
    for rule, label in (("bird", "BIRD set comparison"), ("spider", "Spider test-suite comparison")):
        e = entry[rule]
        acc = "n/a" if e["accuracy"] is None else f"{100 * e['accuracy']:.1f}%"
        why = ", ".join(f"{k} {v}" for k, v in e["reasons"].items())
        lines.append(f"      {label}: {acc}; differs from ours on {e['differs']} "
                     f"({e['passes_where_we_fail']} pass where we fail, {e['fails_where_we_pass']} fail where we pass)"
                     + (f": {why}" if why else "") + (f"; {e['undecided']} undecided" if e["undecided"] else ""))
    return lines
