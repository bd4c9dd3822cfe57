"""Grounding layer: does every table and column the SQL names exist in the catalog?

Scope-aware (CTEs, derived tables, aliases, correlated subqueries, select-list aliases
reused in WHERE/GROUP BY as DuckDB allows). Reports each hallucinated identifier with
its line and column. It is evidence, not the verdict: the engine's binder decides."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp
from sqlglot.optimizer.scope import Scope, traverse_scope

from .budget import Budget
from .parse import tree_nodes

Catalog = dict[str, dict[str, dict[str, str]]]  # schema -> table -> column -> type


@dataclass
class GroundingResult:
    ok: bool | None  # None: not evaluated
    hallucinated_tables: list[dict[str, Any]] = field(default_factory=list)
    hallucinated_columns: list[dict[str, Any]] = field(default_factory=list)
    tables: list[str] = field(default_factory=list)  # catalog tables referenced, schema.table
    note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "hallucinated_tables": self.hallucinated_tables,
                "hallucinated_columns": self.hallucinated_columns, "tables": self.tables, "note": self.note}


class CatalogIndex:
    """Case-insensitive lookups over a catalog, resolving unqualified names via ``search_path``."""

    def __init__(self, catalog: Catalog, search_path: tuple[str, ...] = ("main",)) -> None:
        self.tables: dict[tuple[str, str], set[str]] = {
            (s.lower(), t.lower()): {c.lower() for c in cols} for s, tabs in catalog.items() for t, cols in tabs.items()}
        self.search_path = search_path

    def resolve(self, table: exp.Table) -> tuple[str, str] | None:
        name = table.name.lower()
        if table.db:
            key = (table.db.lower(), name)
            return key if key in self.tables else None
        for schema in self.search_path:
            if (schema, name) in self.tables:
                return (schema, name)
        return None


def _where(node: exp.Expr) -> dict[str, Any]:
    ident = node.this if isinstance(node, (exp.Column, exp.Table)) and isinstance(node.this, exp.Identifier) else node
    meta = getattr(ident, "meta", None) or {}
    col = meta.get("col")
    if isinstance(col, int) and isinstance(meta.get("start"), int) and isinstance(meta.get("end"), int):
        col = max(1, col - (meta["end"] - meta["start"]))  # sqlglot's col is the token's last character
    return {"line": meta.get("line"), "col": col}


def ground(tree: exp.Expr | None, index: CatalogIndex, budget: Budget | None = None,
           dialect: str = "", nodes: list[exp.Expr] | None = None) -> GroundingResult:
    """Every table and column of ``tree`` looked up in the catalog; raises ``OverBudget``
    when ``budget`` runs out first (the caller records the layer as skipped). In SQLite
    (``dialect``) a double-quoted name that names no column is a string, as SQLite reads
    it (``WHERE name = "Sky Radio"``), so it is not reported."""
    if tree is None:
        return GroundingResult(None, note="not parsed")
    if nodes is None:  # (given: ``ParseResult.nodes``, the list the safety layer read)
        nodes = tree_nodes(tree)  # one pass over the tree for the three questions below (chains, pivots, lambdas)
    rebalanced = _rebalanced(tree, budget, nodes)
    if rebalanced is not tree:
        tree, nodes = rebalanced, tree_nodes(rebalanced)
    pivoted = _pivots_as_selects(tree, nodes)
    if pivoted is not tree:
        tree, nodes = pivoted, tree_nodes(pivoted)
    try:
        scopes = traverse_scope(tree)
    except RecursionError:
        raise
    except Exception as exc:  # sqlglot cannot build scopes for some exotic SQL
        return GroundingResult(None, note=f"grounding skipped: {type(exc).__name__}: {exc}")
    in_lambda = {id(c) for lam in nodes if isinstance(lam, exp.Lambda) for c in lam.find_all(exp.Column)}
    bad_tables: list[dict[str, Any]] = []
    bad_cols: list[dict[str, Any]] = []
    used: set[str] = set()
    seen_tables: set[int] = set()
    lookups = _ScopeLookups(index)
    for scope in scopes:
        if budget is not None:
            budget.check()
        for alias, source in scope.sources.items():
            if isinstance(source, exp.Table) and id(source) not in seen_tables:
                seen_tables.add(id(source))
                if not isinstance(source.this, exp.Identifier):
                    continue  # table function such as range(10) or unnest(...)
                key = index.resolve(source)
                if key is None:
                    bad_tables.append({"name": ".".join(p for p in (source.db, source.name) if p), **_where(source)})
                else:
                    used.add(".".join(key))
        inner = _inner_columns(scope)
        for col in scope.columns:
            if budget is not None:
                budget.tick()
            if isinstance(col.this, exp.Star) or id(col) in in_lambda or id(col) in inner:
                continue
            verdict = _column_known(col, scope, lookups)
            if verdict is False and dialect == "sqlite" and not col.table and col.this.args.get("quoted"):
                continue  # SQLite's double-quoted string
            if verdict is False:
                name = ".".join(p for p in (col.table, col.name) if p)
                bad_cols.append({"name": name, **_where(col)})
    ok = not bad_tables and not bad_cols
    return GroundingResult(ok, bad_tables, _dedupe(bad_cols), sorted(used))


def pivot_statements(tree: exp.Expr) -> list[exp.Pivot]:
    """DuckDB's PIVOT / UNPIVOT statements in ``tree`` (``PIVOT t ON c USING sum(v)``, alone or
    as a subquery or CTE), not the ``PIVOT (...)`` clause of a table: a pivot with a source."""
    return [p for p in tree.find_all(exp.Pivot) if p.args.get("this") is not None]


def _pivots_as_selects(tree: exp.Expr, nodes: list[exp.Expr] | None = None) -> exp.Expr:
    """``tree``, or a copy of it where each PIVOT / UNPIVOT statement reads as
    ``SELECT *, <its ON, USING and GROUP BY expressions> FROM <its source>``, for grounding
    only. sqlglot's scopes cannot walk a PIVOT statement, so its columns would land in the
    enclosing scope and look missing; this way they are looked up in the pivot's source,
    and what the pivot returns stays unknown (its columns come from the data: the ``*``)."""
    if nodes is not None and not any(isinstance(n, exp.Pivot) and n.args.get("this") is not None for n in nodes):
        return tree  # (``nodes``: ``tree_nodes(tree)``, the same answer as pivot_statements without a walk)
    if not pivot_statements(tree):
        return tree
    tree = tree.copy()
    for pivot in reversed(pivot_statements(tree)):  # innermost first: find_all walks breadth-first
        parts: list[exp.Expr] = [exp.Star()]
        for key in ("expressions", "using"):
            value = pivot.args.get(key)
            parts += [e for e in value if isinstance(e, exp.Expression)] if isinstance(value, list) else []
        group = pivot.args.get("group")
        if isinstance(group, exp.Group):
            parts += list(group.expressions)
        select = exp.Select(expressions=parts).from_(pivot.this, copy=False)
        if pivot is tree:
            return select
        pivot.replace(select)
    return tree


#: chains of one operator longer than this are regrouped balanced before scoping
LONG_CHAIN = 32


def _rebalanced(tree: exp.Expr, budget: Budget | None = None, nodes: list[exp.Expr] | None = None) -> exp.Expr:
    """``tree``, or a copy of it whose long chains of one operator (``a OR b OR ...``,
    ``x + y + ...``, ``SELECT 1 UNION SELECT 2 UNION ...``) are regrouped as balanced
    trees. A chain of n terms is n levels deep, and sqlglot's scopes walk from every
    column up to its SELECT, and from every set operation down to its first branch:
    quadratic (12,000 OR'ed predicates: 30 s). Balanced, each walk is log n long. Only
    which column sits in which scope matters here, so the regrouping changes nothing
    grounding reports."""
    chained = (n for n in nodes if isinstance(n, _CHAINED)) if nodes is not None else tree.find_all(*_CHAINED)
    if not any(_is_head(n) and _chain_longer_than(n, LONG_CHAIN) for n in chained):
        return tree
    tree = tree.copy()
    for head in [n for n in tree.find_all(*_CHAINED) if _is_head(n)]:
        if budget is not None:
            budget.tick()
        operands = _chain(head)
        if len(operands) > LONG_CHAIN:  # the head keeps its own arguments (a UNION's ORDER BY, LIMIT)
            mid = len(operands) // 2
            head.set("this", _balanced(head, operands[:mid]))
            head.set("expression", _balanced(head, operands[mid:]))
    return tree


_CHAINED = (exp.Binary, exp.SetOperation)


def _links(node: exp.Expr, head: exp.Expr) -> bool:
    """Whether ``node`` continues ``head``'s chain: the same operator, and for a set
    operation the same DISTINCT/ALL and nothing of its own (no ORDER BY, LIMIT, ...)."""
    if type(node) is not type(head):
        return False
    if isinstance(node, exp.SetOperation):
        return (node is head or not any(v for k, v in node.args.items() if k not in ("this", "expression", "distinct"))
                ) and bool(node.args.get("distinct")) == bool(head.args.get("distinct"))
    return True


def _is_head(node: exp.Expr) -> bool:
    """Whether ``node`` starts a chain: it does not continue its parent's."""
    return node.parent is None or not _links(node, node.parent)


def _chain(head: exp.Expr) -> list[exp.Expr]:
    """The operands of ``head``'s chain, left to right, without recursion."""
    out, stack = [], [head.args.get("expression"), head.args.get("this")]
    while stack:
        node = stack.pop()
        if node is not None and _links(node, head) and node is not head:
            stack.extend((node.args.get("expression"), node.args.get("this")))
        elif node is not None:
            out.append(node)
    return out


def _chain_longer_than(head: exp.Expr, n: int) -> bool:
    depth = 0
    stack: list[exp.Expr | None] = [head]
    while stack:
        node = stack.pop()
        if node is not None and (node is head or _links(node, head)):
            depth += 1
            if depth > n:
                return True
            stack.extend((node.args.get("expression"), node.args.get("this")))
    return False


def _balanced(head: exp.Expr, operands: list[exp.Expr]) -> exp.Expr:
    if len(operands) == 1:
        return operands[0]
    mid = len(operands) // 2  # recursion depth: log2 of the chain's length
    extra = {"distinct": head.args.get("distinct")} if isinstance(head, exp.SetOperation) else {}
    return type(head)(this=_balanced(head, operands[:mid]), expression=_balanced(head, operands[mid:]), **extra)


def _inner_columns(scope: Scope) -> set[int]:
    """The columns sqlglot lists in ``scope`` that are written inside a nested scope (a
    subquery's unqualified ``LName`` might be an outer reference, so sqlglot lists it in the
    outer scope too). Each is checked in its own scope, which looks outwards itself;
    checked here as well, it would be looked up in the outer tables only and reported
    missing although the subquery's own table has it."""
    nested = [*scope.subquery_scopes, *scope.udtf_scopes, *scope.derived_table_scopes]
    return {id(col) for child in nested for col in child.external_columns}


class _ScopeLookups:
    """What ``_column_known`` asks of each scope, computed once per scope rather than once
    per column (12,000 columns in one scope)."""

    def __init__(self, index: CatalogIndex) -> None:
        self.index = index
        self._sources: dict[int, dict[str, Any]] = {}
        self._aliases: dict[int, set[str]] = {}
        self._outputs: dict[int, set[str] | None] = {}

    def sources(self, scope: Scope) -> dict[str, Any]:
        got = self._sources.get(id(scope))
        if got is None:
            got = self._sources[id(scope)] = {k.lower(): v for k, v in scope.sources.items()}
        return got

    def select_aliases(self, scope: Scope) -> set[str]:
        got = self._aliases.get(id(scope))
        if got is None:
            expr = scope.expression
            got = self._aliases[id(scope)] = {sel.alias.lower() for sel in expr.selects if isinstance(sel, exp.Alias)} \
                if isinstance(expr, exp.Select) else set()
        return got

    def has(self, source: Any, column: str) -> bool | None:
        if isinstance(source, Scope):
            key = id(source)
            if key not in self._outputs:
                self._outputs[key] = _scope_outputs(source)
            outputs = self._outputs[key]
            return None if outputs is None else column in outputs
        return _source_has(source, column, self.index)


def _dedupe(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out, seen = [], set()
    for it in items:
        key = (it["name"], it.get("line"), it.get("col"))
        if key not in seen:
            seen.add(key)
            out.append(it)
    return out


def _source_has(source: Any, column: str, index: CatalogIndex) -> bool | None:
    """True/False when known; None when the source's columns cannot be known."""
    if isinstance(source, exp.Table):
        if not isinstance(source.this, exp.Identifier):
            return None
        key = index.resolve(source)
        if key is None:
            return None  # already reported as a hallucinated table
        alias_cols = source.args.get("alias") and source.args["alias"].columns
        if alias_cols:
            return column in {c.name.lower() for c in alias_cols}
        return column in index.tables[key]
    if isinstance(source, Scope):
        outputs = _scope_outputs(source)
        return None if outputs is None else column in outputs
    return None


def _scope_outputs(source: Scope) -> set[str] | None:
    """The output column names of a derived table or CTE; None when they cannot be known."""
    expr = source.expression
    alias_node = source.expression.parent if isinstance(source.expression.parent, (exp.Subquery, exp.CTE)) else None
    alias = alias_node.args.get("alias") if alias_node is not None else None
    if alias is not None and alias.columns:
        return {c.name.lower() for c in alias.columns}
    if not isinstance(expr, exp.Query):
        return None
    selects = expr.selects
    if any(isinstance(s, exp.Star) or (isinstance(s, exp.Column) and isinstance(s.this, exp.Star)) for s in selects):
        return None
    return {s.alias_or_name.lower() for s in selects}


def _column_known(col: exp.Column, scope: Scope, lookups: _ScopeLookups) -> bool | None:
    name = col.name.lower()
    qualifier = col.table.lower() if col.table else None
    s: Scope | None = scope
    unknown = False
    while s is not None:
        sources = lookups.sources(s)
        if qualifier:
            if qualifier in sources:
                return lookups.has(sources[qualifier], name)
        else:
            for source in sources.values():
                has = lookups.has(source, name)
                if has:
                    return True
                unknown = unknown or has is None
            if name in lookups.select_aliases(s):
                return True
        s = s.parent
    if qualifier:
        return None if unknown else False  # a struct field access or an unknown alias
    return None if unknown else False


def catalog_from_ddl(ddl: str, dialect: str, default_schema: str = "main") -> Catalog:
    """A catalog from CREATE TABLE statements, for suites graded without a database.

    Raises ``ValueError`` naming the statement that does not parse."""
    import sqlglot
    from sqlglot.errors import ParseError
    catalog: Catalog = {}
    try:
        statements = sqlglot.parse(ddl, read=dialect)
    except ParseError as exc:
        first = exc.errors[0] if exc.errors else {}
        raise ValueError(f"DDL does not parse at line {first.get('line')}, col {first.get('col')}: "
                         f"{first.get('description') or exc}") from None
    for stmt in statements:
        if not isinstance(stmt, exp.Create) or (stmt.args.get("kind") or "").upper() not in ("TABLE", "VIEW"):
            continue
        target = stmt.this
        table = target.this if isinstance(target, exp.Schema) else target
        if not isinstance(table, exp.Table):
            continue
        cols: dict[str, str] = {}
        if isinstance(target, exp.Schema):
            for col in target.expressions:
                if isinstance(col, exp.ColumnDef):
                    kind = col.args.get("kind")
                    cols[col.name] = kind.sql(dialect=dialect) if kind is not None else "UNKNOWN"
        elif isinstance(stmt.expression, exp.Query):
            cols = {s.alias_or_name: "UNKNOWN" for s in stmt.expression.selects if s.alias_or_name != "*"}
        catalog.setdefault(table.db or default_schema, {})[table.name] = cols
    return catalog
