"""Classify layer's evidence: the tables a query reads, its joins, and its deprecated
tables. The error class itself is decided in ``verdict.py`` from this evidence."""
from __future__ import annotations

import fnmatch
from typing import Any

from sqlglot import exp

def table_names(tree: exp.Expr | None) -> list[str]:
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


def may_read_deprecated(tree: exp.Expr, patterns: tuple[str, ...], nodes: list[exp.Expr] | None = None) -> bool:
    """Whether a table node of ``tree`` has a deprecated name. ``table_names`` returns some
    of these nodes' names (the scopes only leave CTEs out), so when this is False no
    deprecated table is read, and the scopes need not be built (most queries of most suites)."""
    if not patterns:
        return False
    from .parse import tree_nodes
    names = {".".join(p for p in (t.db, t.name) if p).lower() for t in (tree_nodes(tree) if nodes is None else nodes)
             if isinstance(t, exp.Table) and isinstance(t.this, exp.Identifier)}
    return bool(deprecated_refs(sorted(names), patterns))


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


def join_structure(tree: exp.Expr | None, tables: list[str] | None = None) -> dict[str, Any]:
    """Tables, join kinds and join conditions: enough to say whether a row-count error is a join error.
    ``tables``: ``table_names(tree)`` when the caller has it (a gold's analysis made it already)."""
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
    return {"tables": table_names(tree) if tables is None else list(tables), "joins": sorted(joins)}


def join_diff(pred: dict[str, Any], gold: dict[str, Any]) -> tuple[str, bool]:
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
