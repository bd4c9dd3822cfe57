"""Diagnostic layer: which part of the query is most likely wrong, and how sure we are.

Scores in 0..1 for projection, filter, join, grouping, aggregate and top-k errors, from
two independent sources: the result comparison (what the rows say) and the structural
diff (what the SQL says). They back the error class with evidence; they do not decide it,
and they never contradict it: ``most_likely`` is chosen among the parts a fail of that class
can lie in (none for a missing column or a stale table: the class already names the part).
``advice`` says what to do instead, from the same evidence: the live table the gold reads in
place of a deprecated one, the existing columns nearest a missing one (the engine's own
candidates), the rows a wrong join gains or loses."""
from __future__ import annotations

import re
from typing import Any, Mapping

from .layers import CompareEvidence, ExecutionEvidence, GroundingEvidence, ParseEvidence, StructureEvidence, typed

_AGG = re.compile(r"\b(sum|avg|count|min|max|median|stddev\w*|var\w*|any_value|string_agg|list|approx_\w+)\s*\(", re.I)
DIMENSIONS = ("projection", "filter", "join", "grouping", "aggregate", "topk")
#: The parts of a query a fail of each class can lie in; a class not listed may lie anywhere.
CONSISTENT: dict[str, tuple[str, ...]] = {
    "hallucinated_column": (), "stale_table": (),
    "wrong_metric": ("aggregate", "filter", "projection"), "wrong_join": ("join",),
}
#: Failure kinds whose evidence already names the part: the function the engine does not have,
#: the statement a rule refused. No part of a result is "most likely" wrong: there is none.
NAMED_PART = ("runtime_error:missing_function", "unsafe_statement")
#: The engine's own suggestions in a binder error (DuckDB: candidate bindings, "did you mean").
_CANDIDATES = re.compile(r'Candidate bindings:\s*(.+)|Did you mean "([^"]+)"', re.I)


def _share(clause: dict[str, Any] | None) -> float:
    if not clause or clause["match"]:
        return 0.0
    total = len(clause["gold"]) + len(clause["extra"])
    return 1.0 if total == 0 else min(1.0, (len(clause["missing"]) + len(clause["extra"])) / total)


def _aggregates(items: list[str]) -> list[str]:
    return sorted(m.group(1).lower() for it in items for m in _AGG.finditer(it))


def article(word: str) -> str:
    """``word`` with its indefinite article: an aggregate error, a join error."""
    return f"{'an' if word[:1].lower() in 'aeiou' else 'a'} {word}"


def _nearest(message: str) -> list[str]:
    names: list[str] = []
    for m in _CANDIDATES.finditer(message or ""):
        if m.group(1):
            names += [n.strip(' :"') for n in m.group(1).split(",")]
        elif m.group(2):
            names.append(m.group(2))
    return [n for n in dict.fromkeys(names) if n][:3]


def _names(sql: str | None, dialect: str | None, tree: Any = None) -> tuple[list[str], list[str]]:
    """The tables (schema-qualified as written; CTEs left out) and the column names a query
    reads; ``tree``: the query already parsed in ``dialect`` (the prediction's, by the parse layer)."""
    if not sql:
        return [], []
    import sqlglot
    from sqlglot import exp
    if tree is None:
        try:
            tree = sqlglot.parse_one(sql, read=dialect)
        except Exception:  # an unparsable query is reported elsewhere; here it only means no advice
            return [], []
    ctes = {c.alias_or_name for c in tree.find_all(exp.CTE)}
    tables = [".".join(p for p in (t.db, t.name) if p) for t in tree.find_all(exp.Table) if t.name and t.name not in ctes]
    columns = [c.name for c in tree.find_all(exp.Column) if c.name]
    return list(dict.fromkeys(tables)), list(dict.fromkeys(columns))


def _replacement(stale: str, live: list[str]) -> str | None:
    """The live table that stands for a deprecated one: the same name without its legacy suffix,
    else the gold's one table the prediction does not read, else the most similar name."""
    import difflib
    base = re.sub(r"_(old|v\d+|bak|legacy|deprecated)$", "", stale.split(".")[-1], flags=re.I)
    same = [t for t in live if t.split(".")[-1].lower() == base.lower()]
    if same or len(live) == 1:
        return (same or live)[0]
    close = difflib.get_close_matches(stale, live, n=1, cutoff=0.0)
    return close[0] if close else None


def advise(*, error_class: str | None, compare: CompareEvidence | None, layers: Mapping[str, Any],
           stale: list[str], gold_sql: str | None, sql: str | None = None,
           replacements: dict[str, str] | None = None, failure_kind: str | None = None,
           engine: str | None = None, tree: Any = None) -> list[str]:
    """What to do instead, in the words of the evidence the class came from; for a stale
    table, the suite's ``replacements`` first (its map, or its semantic layer's). ``layers``:
    each layer's evidence, typed or in its record form; ``tree``: ``sql`` as the parse layer
    parsed it (not parsed again for its names)."""
    execution = typed(layers, "execution", ExecutionEvidence)
    error = execution.error if execution is not None else None
    if failure_kind == "runtime_error:missing_function":
        from .verdict import engine_display
        name, where = (error.subject if error else None) or "the function", engine_display(engine)
        near = _nearest(error.message if error else "")
        return [f"{name} is not a {where} function: write it with the {where} function that does the same"
                + (f" (the engine's nearest by name: {', '.join(near)})" if near else "")]
    grounding = typed(layers, "grounding", GroundingEvidence)
    parse = typed(layers, "parse", ParseEvidence)
    dialect = parse.dialect if parse is not None else None
    if error_class in ("stale_table", "hallucinated_column"):  # the only advice that reads the gold's names
        gold_tables, gold_columns = _names(gold_sql, dialect)
    if error_class == "stale_table":
        read = {t.lower() for t in (grounding.tables if grounding is not None else None) or []}
        live = [t for t in gold_tables if t.lower() not in read and t not in stale]
        out = []
        mapped = {k.lower(): v for k, v in (replacements or {}).items()}
        for table in stale:
            named = mapped.get(table.lower()) or mapped.get(table.split(".")[-1].lower())
            new = named or _replacement(table, live)
            out.append(f"{table} is deprecated: read {named} instead (the suite's replacement for it)" if named else
                       f"{table} is deprecated: read {new}, the live table the gold reads, instead" if new else
                       f"{table} is deprecated: read the live table that superseded it instead")
        return out
    if error_class == "hallucinated_column":
        names = (grounding.hallucinated_columns + grounding.hallucinated_tables) if grounding is not None else []
        missing = [h["name"] for h in names if isinstance(h, dict)]
        what = "table" if error is not None and error.category == "missing_table" else "column"
        unique = list(dict.fromkeys(missing))
        named = ", ".join(unique) or f"the {what}"
        near = _nearest(error.message if error is not None else "")
        pred_tables, pred_columns = _names(sql, dialect, tree if parse is not None else None)
        # what the gold reads in its place: its names the prediction does not use
        gold_only = ([t for t in gold_tables if t not in pred_tables] if what == "table" else
                     [c for c in gold_columns if c not in pred_columns])
        text = f"{named} {'do' if len(unique) > 1 else 'does'} not exist"
        if near:
            text += f"; the nearest existing {what}{'s' if len(near) > 1 else ''} by name: {', '.join(near)}"
        if gold_only:
            text += f"; the gold reads {', '.join(gold_only[:3])}"
        return [text if near or gold_only else f"{text}: look the {what} up in the schema"]
    g, p = (compare.gold_rows, compare.pred_rows) if compare is not None else (None, None)
    if error_class == "wrong_join" and g is not None and p is not None and g != p:
        verb = "gains" if p > g else "loses"
        return [f"the join {verb} {abs(p - g):,} row{'s' if abs(p - g) != 1 else ''} ({p:,} returned, the gold "
                f"has {g:,}): check its keys, and whether it should be an outer join or aggregate first"]
    return []


def diagnose(*, compare: CompareEvidence | dict[str, Any] | None, structure: StructureEvidence | dict[str, Any] | None,
             classification: Any, layers: Mapping[str, Any] | None = None,
             stale: list[str] | None = None, gold_sql: str | None = None, sql: str | None = None,
             replacements: dict[str, str] | None = None, engine: str | None = None,
             tree: Any = None) -> dict[str, Any]:
    """Error scores, flags, the per-column mismatch map, evidence strength and ambiguity, and
    the most likely part and the advice, both in agreement with the error class (and with
    the failure kind, where that names the part: ``NAMED_PART``). The evidence is typed, or
    in its record form; ``classification`` a ``verdict.Classification`` (or its dict)."""
    c = typed({"compare": compare}, "compare", CompareEvidence)
    struct = typed({"structure": structure}, "structure", StructureEvidence)
    clauses = struct.clauses if struct is not None else {}
    scores = dict.fromkeys(DIMENSIONS, 0.0)
    g, p = (c.gold_rows, c.pred_rows) if c is not None else (None, None)
    reason = c.reason if c is not None else None
    explosion = bool(g and p and p >= 2 * g)
    if reason == "arity_mismatch":
        scores["projection"] = 1.0
    elif reason == "type_mismatch":
        scores["projection"] = 0.8
    else:
        scores["projection"] = 0.4 * _share(clauses.get("select"))
    where = _share(clauses.get("where"))
    precision, recall = (c.row_precision, c.row_recall) if c is not None else (None, None)
    subset = precision == 1.0 and (recall or 0) < 1.0
    superset = recall == 1.0 and (precision or 0) < 1.0
    scores["filter"] = min(1.0, 0.5 * bool(where) + 0.2 * where + 0.3 * (subset or superset))
    join = max(_share(clauses.get("joins")), _share(clauses.get("from")))
    scores["join"] = min(1.0, 0.6 * bool(join) + 0.3 * explosion + 0.1 * join)
    group = _share(clauses.get("group_by"))
    scores["grouping"] = min(1.0, 0.6 * bool(group) + 0.3 * (g is not None and g != p) * bool(group) + 0.1 * group)
    sel = clauses.get("select") or {}
    agg_changed = _aggregates(sel.get("gold", [])) != _aggregates(sel.get("predicted", []))
    values_only = reason == "values" and g == p
    scores["aggregate"] = min(1.0, 0.6 * agg_changed + 0.3 * (values_only and agg_changed) + 0.2 * values_only)
    limit = _share(clauses.get("limit"))
    scores["topk"] = min(1.0, 0.6 * bool(limit) + 0.3 * bool(c is not None and c.order_only) + 0.1 * _share(clauses.get("order_by")))
    scores = {k: round(v, 3) for k, v in scores.items()}
    if isinstance(classification, dict):
        classification = _Classified(**classification)
    error_class, failure_kind = classification.error_class, classification.failure_kind
    allowed = () if failure_kind in NAMED_PART else CONSISTENT.get(str(error_class), DIMENSIONS)
    ranked = sorted(((k, v) for k, v in scores.items() if k in allowed), key=lambda kv: -kv[1]) + [("", 0.0)] * 2
    ambiguous = ranked[0][1] >= 0.5 and ranked[1][1] >= 0.5 and ranked[0][1] - ranked[1][1] < 0.15
    confidence = float(classification.confidence or 0.0)
    if ambiguous:
        confidence = round(confidence * 0.8, 3)
    signals = sum(1 for v in scores.values() if v >= 0.5)
    strength = "strong" if confidence >= 0.85 else "moderate" if confidence >= 0.65 or signals >= 2 else "weak"
    columns = []
    for i, gold_name in enumerate(c.gold_columns if c is not None else []):
        assert c is not None
        pred_cols, matches, pred_kinds = c.pred_columns or [], c.column_matches or [], c.pred_kinds or []
        columns.append({"position": i + 1, "gold_column": gold_name,
                        "predicted_column": pred_cols[i] if i < len(pred_cols) else None,
                        "gold_kind": c.gold_kinds[i] if c.gold_kinds and i < len(c.gold_kinds) else None,
                        "predicted_kind": pred_kinds[i] if i < len(pred_kinds) else None,
                        "match": bool(matches[i]) if i < len(matches) else False})
    return {"scores": scores, "most_likely": ranked[0][0] if ranked[0][1] > 0 else None,
            "candidates": [[k, v] for k, v in ranked[:2] if v > 0],
            "advice": advise(error_class=error_class, compare=c, layers=layers or {}, stale=stale or [],
                             gold_sql=gold_sql, sql=sql, replacements=replacements, failure_kind=failure_kind,
                             engine=engine, tree=tree),
            "ordering_only": bool(c is not None and c.order_only), "cardinality_explosion": explosion,
            "cardinality_ratio": c.cardinality_ratio if c is not None else None, "column_map": columns,
            "confidence": confidence, "evidence_strength": strength, "ambiguous": ambiguous}


class _Classified:
    """A classification given as a dict (a caller outside the pipeline): its four fields."""

    def __init__(self, error_class: str | None = None, failure_kind: str | None = None, explanation: str = "",
                 confidence: float | None = 0.0) -> None:
        self.error_class, self.failure_kind, self.explanation, self.confidence = (error_class, failure_kind,
                                                                                  explanation, confidence)
