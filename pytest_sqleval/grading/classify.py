"""Classify layer: the benchmark-level error class of a failed case, by precedence.

hallucinated_column -> stale_table -> wrong_metric -> wrong_join -> other, with the
finer failure kind and a one-line explanation that carries the evidence."""
from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

ERROR_CLASSES = ("hallucinated_column", "stale_table", "wrong_metric", "wrong_join", "other")


@dataclass
class Classification:
    error_class: str | None
    failure_kind: str | None  # parse_error, unsafe_statement, timeout, runtime_error, projection_mismatch, ...
    explanation: str
    confidence: float

    def to_dict(self) -> dict[str, Any]:
        return {"error_class": self.error_class, "failure_kind": self.failure_kind,
                "explanation": self.explanation, "confidence": self.confidence}


def table_names(tree: exp.Expression | None) -> list[str]:
    """Catalog tables a query reads, as ``schema.table`` or ``table``.

    Names are resolved by sqlglot's scopes, the way the engine resolves them: a name
    refers to a CTE only where that CTE is visible (after it in its ``WITH``, in the query
    it belongs to, in its own body only when recursive) and only when it is unqualified.
    So ``WITH orders_old AS (SELECT * FROM orders_old)`` reads the table ``orders_old``,
    and a CTE's name never hides a table that a subquery, set operation, lateral or
    nested CTE reads. A table node that no scope accounts for counts as a table."""
    if tree is None:
        return []
    from sqlglot.optimizer.scope import traverse_scope
    out: set[str] = set()
    seen: set[int] = set()
    try:
        scopes = traverse_scope(tree)
    except Exception:  # an unusual tree: every table node below counts as a table
        scopes = []
    for scope in scopes:
        ctes = {name.lower() for name in scope.cte_sources}
        for t in scope.tables:
            seen.add(id(t))
            if not t.db and t.name.lower() in ctes and not _reads_itself_without_recursion(t):
                continue  # a visible CTE
            if isinstance(t.this, exp.Identifier):
                out.add(".".join(p for p in (t.db, t.name) if p).lower())
    for t in tree.find_all(exp.Table):
        if id(t) not in seen and isinstance(t.this, exp.Identifier):
            out.add(".".join(p for p in (t.db, t.name) if p).lower())
    return sorted(out)


def _reads_itself_without_recursion(table: exp.Table) -> bool:
    """A name inside the body of a ``WITH RECURSIVE`` CTE of the same name whose body is
    not a set operation: sqlglot sees the CTE, the engine reads the table (DuckDB binds
    ``WITH RECURSIVE t AS (SELECT * FROM t)`` to the table ``t``)."""
    name = table.name.lower()
    node = table.parent
    while node is not None:
        if isinstance(node, exp.CTE) and node.alias_or_name.lower() == name:
            with_ = node.parent
            if not (isinstance(with_, exp.With) and with_.args.get("recursive")):
                return False  # not recursive: sqlglot's scopes already decided
            return not isinstance(node.this, _SET_OPERATIONS)
        node = node.parent
    return False


_SET_OPERATIONS = tuple(t for t in (getattr(exp, n, None) for n in ("SetOperation", "Union", "Except", "Intersect"))
                        if isinstance(t, type))


def deprecated_refs(tables: list[str], patterns: tuple[str, ...]) -> list[str]:
    """Tables matching a deprecated pattern (``*_old``, ``legacy.*``, ...); bare patterns match the table name."""
    hits = []
    for name in tables:
        bare = name.rsplit(".", 1)[-1]
        for pat in patterns:
            pat = pat.lower()
            if fnmatch.fnmatchcase(name, pat) or ("." not in pat and fnmatch.fnmatchcase(bare, pat)):
                hits.append(name)
                break
    return hits


def join_structure(tree: exp.Expression | None) -> dict[str, Any]:
    """Tables, join kinds and join conditions: enough to say whether a row-count error is a join error."""
    if tree is None:
        return {"tables": [], "joins": []}
    joins = []
    for j in tree.find_all(exp.Join):
        kind = " ".join(p for p in (j.side, j.kind) if p) or "INNER"
        on = j.args.get("on")
        using = j.args.get("using")
        cond = on.sql(normalize=True) if on is not None else (
            "USING " + ",".join(u.name for u in using) if using else "none")
        joins.append(f"{kind.upper()} {j.this.sql(normalize=True) if j.this is not None else '?'} ON {cond}")
    return {"tables": table_names(tree), "joins": sorted(joins)}


def classify(*, parse: dict[str, Any], safety: dict[str, Any] | None, grounding: dict[str, Any] | None,
             execution: dict[str, Any] | None, compare: dict[str, Any] | None, stale: list[str],
             joins_pred: dict[str, Any], joins_gold: dict[str, Any]) -> Classification:
    """Assign the error class of a failed case; the caller decides pass/fail."""
    if not parse["ok"]:
        err = parse["error"] or {}
        return Classification("other", "parse_error",
                              f"does not parse: {err.get('message')} (line {err.get('line')}, col {err.get('col')})", 0.95)
    if safety is not None and not safety["ok"]:
        return Classification("other", "unsafe_statement", f"refused as unsafe ({safety['reason']}): {safety['detail']}", 0.95)
    exec_err = (execution or {}).get("error")
    halluc = (grounding or {}).get("hallucinated_tables", []) + (grounding or {}).get("hallucinated_columns", [])
    if exec_err and (exec_err["category"] in ("missing_column", "missing_table") or halluc):
        names = ", ".join(f"{h['name']} (line {h.get('line')}, col {h.get('col')})" for h in halluc) or exec_err["message"].splitlines()[0]
        return Classification("hallucinated_column", f"runtime_error:{exec_err['category']}",
                              f"references what does not exist: {names}", 0.95)
    if stale:
        return Classification("stale_table", "deprecated_table", f"reads deprecated table {', '.join(stale)}", 0.9)
    if exec_err:
        kind = "timeout" if exec_err["category"] == "timeout" else f"runtime_error:{exec_err['category']}"
        return Classification("other", kind, f"{exec_err['category']}: {exec_err['message'].splitlines()[0]}", 0.9)
    if compare is None:
        return Classification("other", "not_compared", "the result could not be compared", 0.3)
    reason = compare["reason"]
    g, p = compare["gold_rows"], compare["pred_rows"]
    if reason == "arity_mismatch":
        found = compare.get("gold_columns_found_at") or {}
        extra = f"; the gold columns appear at positions {sorted(int(v) + 1 for v in found.values())}" if found else ""
        return Classification("other", "projection_mismatch",
                              f"{len(compare['pred_columns'])} columns where the gold has {len(compare['gold_columns'])}{extra}", 0.85)
    if reason == "type_mismatch":
        diffs = [f"column {i + 1}: {a} vs gold {b}" for i, (a, b) in
                 enumerate(zip(compare["pred_kinds"], compare["gold_kinds"])) if a != b]
        return Classification("other", "projection_mismatch", "value types differ: " + "; ".join(diffs[:3]), 0.8)
    if reason == "order_only":
        return Classification("other", "order_only", "right rows in the wrong order", 0.9)
    join_diff, strong = _join_diff(joins_pred, joins_gold)
    grain_kept = any(compare.get("column_matches") or [])
    same_grain = g == p and (grain_kept or g <= 1)
    metric = Classification("wrong_metric", "value_mismatch",
                            f"same {g} rows and grain, different values in column(s) {_bad_columns(compare)}",
                            0.8 if grain_kept else 0.65)
    if same_grain and not strong:
        return metric
    if join_diff:
        ratio = f"row count {p} vs gold {g} ({p / g:.3g}x)" if g and g != p else f"values differ on {g} rows"
        return Classification("wrong_join", "cardinality_mismatch" if g != p else "value_mismatch",
                              f"{ratio} and {join_diff}", 0.8 if strong else 0.6)
    if same_grain:
        return metric
    kind = "cardinality_mismatch" if g != p else "value_mismatch"
    return Classification("other", kind, f"row count {p} vs gold {g}; row overlap F1 {compare['row_f1']:.2f}", 0.5)


def _bad_columns(compare: dict[str, Any]) -> str:
    bad = [str(i + 1) for i, ok in enumerate(compare.get("column_matches") or []) if not ok]
    return ", ".join(bad) or "?"


def _join_diff(pred: dict[str, Any], gold: dict[str, Any]) -> tuple[str, bool]:
    """What differs in the join structure, and whether it is strong evidence
    (tables added or dropped, or a different number of joins)."""
    extra = sorted(set(pred["tables"]) - set(gold["tables"]))
    missing = sorted(set(gold["tables"]) - set(pred["tables"]))
    parts = []
    if extra:
        parts.append("an extra join to " + ", ".join(extra))
    if missing:
        parts.append("no join to " + ", ".join(missing))
    if len(pred["joins"]) != len(gold["joins"]):
        parts.append(f"{len(pred['joins'])} joins where the gold has {len(gold['joins'])}")
    strong = bool(parts)
    if not parts and pred["joins"] != gold["joins"]:
        parts.append("different join types or conditions")
    return "; ".join(parts), strong
