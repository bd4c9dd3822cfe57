"""Diagnostic layer: which part of the query is most likely wrong, and how sure we are.

Scores in 0..1 for projection, filter, join, grouping, aggregate and top-k errors, from
two independent sources: the result comparison (what the rows say) and the structural
diff (what the SQL says). They back the error class with evidence; they do not decide it."""
from __future__ import annotations

import re
from typing import Any

_AGG = re.compile(r"\b(sum|avg|count|min|max|median|stddev\w*|var\w*|any_value|string_agg|list|approx_\w+)\s*\(", re.I)
DIMENSIONS = ("projection", "filter", "join", "grouping", "aggregate", "topk")


def _share(clause: dict[str, Any] | None) -> float:
    if not clause or clause["match"]:
        return 0.0
    total = len(clause["gold"]) + len(clause["extra"])
    return 1.0 if total == 0 else min(1.0, (len(clause["missing"]) + len(clause["extra"])) / total)


def _aggregates(items: list[str]) -> list[str]:
    return sorted(m.group(1).lower() for it in items for m in _AGG.finditer(it))


def diagnose(*, compare: dict[str, Any] | None, structure: dict[str, Any] | None,
             classification: dict[str, Any]) -> dict[str, Any]:
    """Error scores, flags, the per-column mismatch map, evidence strength and ambiguity."""
    clauses = (structure or {}).get("clauses", {})
    c = compare or {}
    scores = dict.fromkeys(DIMENSIONS, 0.0)
    g, p = c.get("gold_rows"), c.get("pred_rows")
    explosion = bool(g and p and p >= 2 * g)
    if c.get("reason") == "arity_mismatch":
        scores["projection"] = 1.0
    elif c.get("reason") == "type_mismatch":
        scores["projection"] = 0.8
    else:
        scores["projection"] = 0.4 * _share(clauses.get("select"))
    where = _share(clauses.get("where"))
    subset = c.get("row_precision") == 1.0 and (c.get("row_recall") or 0) < 1.0
    superset = c.get("row_recall") == 1.0 and (c.get("row_precision") or 0) < 1.0
    scores["filter"] = min(1.0, 0.5 * bool(where) + 0.2 * where + 0.3 * (subset or superset))
    join = max(_share(clauses.get("joins")), _share(clauses.get("from")))
    scores["join"] = min(1.0, 0.6 * bool(join) + 0.3 * explosion + 0.1 * join)
    group = _share(clauses.get("group_by"))
    scores["grouping"] = min(1.0, 0.6 * bool(group) + 0.3 * (g is not None and g != p) * bool(group) + 0.1 * group)
    sel = clauses.get("select") or {}
    agg_changed = _aggregates(sel.get("gold", [])) != _aggregates(sel.get("predicted", []))
    values_only = c.get("reason") == "values" and g == p
    scores["aggregate"] = min(1.0, 0.6 * agg_changed + 0.3 * (values_only and agg_changed) + 0.2 * values_only)
    limit = _share(clauses.get("limit"))
    scores["topk"] = min(1.0, 0.6 * bool(limit) + 0.3 * bool(c.get("order_only")) + 0.1 * _share(clauses.get("order_by")))
    scores = {k: round(v, 3) for k, v in scores.items()}
    ranked = sorted(scores.items(), key=lambda kv: -kv[1])
    ambiguous = ranked[0][1] >= 0.5 and ranked[1][1] >= 0.5 and ranked[0][1] - ranked[1][1] < 0.15
    confidence = float(classification.get("confidence") or 0.0)
    if ambiguous:
        confidence = round(confidence * 0.8, 3)
    signals = sum(1 for v in scores.values() if v >= 0.5)
    strength = "strong" if confidence >= 0.85 else "moderate" if confidence >= 0.65 or signals >= 2 else "weak"
    columns = []
    for i, gold_name in enumerate(c.get("gold_columns") or []):
        pred_cols = c.get("pred_columns") or []
        matches = c.get("column_matches") or []
        columns.append({"position": i + 1, "gold_column": gold_name,
                        "predicted_column": pred_cols[i] if i < len(pred_cols) else None,
                        "gold_kind": (c.get("gold_kinds") or [None] * (i + 1))[i],
                        "predicted_kind": (c.get("pred_kinds") or [])[i] if i < len(c.get("pred_kinds") or []) else None,
                        "match": bool(matches[i]) if i < len(matches) else False})
    return {"scores": scores, "most_likely": ranked[0][0] if ranked[0][1] > 0 else None,
            "ordering_only": bool(c.get("order_only")), "cardinality_explosion": explosion,
            "cardinality_ratio": c.get("cardinality_ratio"), "column_map": columns,
            "confidence": confidence, "evidence_strength": strength, "ambiguous": ambiguous}
