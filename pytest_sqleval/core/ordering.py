"""A query's ORDER BY and LIMIT, read from its SQL alone: its top-level ordering, whether
and where its LIMIT may cut through ties (the probe: the query with LIMIT n + 1, its sort
keys appended where they are no output column), and the checks of the LIMITs below its
top level. Below both the grader (``grading.gold_analysis``: a gold's tie keys) and the
variants' builder (``variants.outputs``: a grown gold's LIMIT must cut no tie), which sits
below grading, so the two ask the one question the one way."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp


@dataclass
class OrderInfo:
    """The gold's top-level ordering. ``sort_keys`` are output positions when every key
    is an output column; otherwise ``augmented_sql`` appends the missing keys as extra
    columns so tie groups can still be computed (``key_positions`` index its result;
    negative ones count from its end)."""

    ordered: bool = False
    sort_keys: list[int] | None = None
    limit: int | None = None
    augmented_sql: str | None = None
    key_positions: list[int] | None = None
    probe_sql: str | None = None  # the (augmented) gold with LIMIT n+1: does the LIMIT cut a tie group?
    n_appended: int = 0  # key columns appended at the end of the augmented result
    full_sql: str | None = None  # the (augmented) gold without its LIMIT: the whole tie group a LIMIT cuts
    unordered_limit: bool = False  # a top-level LIMIT without ORDER BY: any k rows of ``full_sql`` are valid
    nested_limits: list[dict[str, Any]] = field(default_factory=list)  # LIMITs below the top level (nested_limits)


def order_info(tree: exp.Expr | None, dialect: str, nested: bool = True) -> OrderInfo:
    """``tree``'s top-level ordering and LIMIT; with ``nested``, the checks of the LIMITs below it too."""
    if not isinstance(tree, exp.Query):
        return OrderInfo()
    order = tree.args.get("order")
    limit_node = tree.args.get("limit")
    limit = None
    if limit_node is not None:
        try:
            limit = int(limit_node.expression.this) if limit_node.expression is not None else None
        except (AttributeError, ValueError, TypeError):
            limit = None
    below = nested_limits(tree, dialect) if nested else []
    if order is None:
        if limit is None:
            return OrderInfo(nested_limits=below)
        # Which k rows a LIMIT without ORDER BY keeps is the engine's choice: any k rows of the
        # whole result are a valid answer when it has more (the probe says whether it has).
        return OrderInfo(limit=limit, probe_sql=tree.copy().limit(limit + 1).sql(dialect=dialect),
                         full_sql=_without_limit(tree, limit, dialect), unordered_limit=True, nested_limits=below)
    selects = tree.selects if isinstance(tree, exp.Select) else []
    # With *, t.* or COLUMNS(...) in the select list, select-list positions are not output
    # positions: only ordinals name an output column, and appending keys would misplace them.
    expanding = any(_expands(s) for s in selects)
    positions = [_output_position(o.this, selects) if not expanding or _is_ordinal(o.this) else None
                 for o in order.expressions]
    if all(p is not None for p in positions):
        keys = [p for p in positions if p is not None]
        probe = tree.copy().limit(limit + 1).sql(dialect=dialect) if limit is not None else None
        return OrderInfo(True, keys, limit, None, keys, probe, full_sql=_without_limit(tree, limit, dialect),
                         nested_limits=below)
    if not isinstance(tree, exp.Select) or tree.args.get("distinct"):
        return OrderInfo(True, None, limit, nested_limits=below)  # keys cannot be recovered: strict positional order
    # Append the keys that are not output columns; they are addressed from the end of the
    # result (negative positions) because a * in the select list has no known width here.
    augmented = tree.copy()
    missing = [o for p, o in zip(positions, order.expressions) if p is None]
    key_positions: list[int] = []
    extra = 0
    for pos, o in zip(positions, order.expressions):
        if pos is not None:
            key_positions.append(pos)
        else:
            augmented = augmented.select(exp.alias_(o.this.copy(), f"__sqleval_k{extra}"), copy=False)
            key_positions.append(extra - len(missing))
            extra += 1
    probe = augmented.copy().limit(limit + 1).sql(dialect=dialect) if limit is not None else None
    return OrderInfo(True, None, limit, augmented.sql(dialect=dialect), key_positions, probe, len(missing),
                     _without_limit(augmented, limit, dialect), nested_limits=below)


def nested_limits(tree: exp.Expr, dialect: str) -> list[dict[str, Any]]:
    """The checks of each LIMIT below a gold's top level (in a subquery, a CTE, a set
    operation's branch): the gold's answer depends on tie order when such a LIMIT cuts
    through rows tied on its subquery's ORDER BY, or keeps k of more rows without one.
    Each check is ``{"limit", "probe_sql", "key_positions"}``: the subquery run on its own
    (with the gold's CTEs) with LIMIT k+1, and where its sort keys are (None: no ORDER BY,
    then more than k rows is the cut); or ``{"limit", "unchecked": why}`` when the SQL
    alone cannot give such a probe. A LIMIT inside EXISTS is left out: any row will do."""
    checks: list[dict[str, Any]] = []
    for node in tree.find_all(exp.Limit):
        query = node.parent
        if query is tree or not isinstance(query, exp.Query) or query.args.get("limit") is not node:
            continue
        if isinstance(query.parent, exp.Exists) or isinstance(getattr(query.parent, "parent", None), exp.Exists):
            continue
        try:
            k = int(node.expression.this) if node.expression is not None else None
        except (AttributeError, ValueError, TypeError):
            k = None
        if k is None:
            checks.append({"limit": None, "unchecked": "its LIMIT is not a number"})
            continue
        if query.args.get("offset") is not None:
            checks.append({"limit": k, "unchecked": "it has an OFFSET"})
            continue
        alone = query.copy()
        with_key = "with_" if "with_" in tree.arg_types else "with"  # sqlglot renamed it
        if tree.args.get(with_key) is not None and alone.args.get(with_key) is None:
            alone.set(with_key, tree.args[with_key].copy())
        inner = order_info(alone, dialect, nested=False)
        if alone.args.get("order") is None:
            check = {"limit": k, "probe_sql": alone.limit(k + 1).sql(dialect=dialect), "key_positions": None,
                     "full_sql": _without_limit(alone, k, dialect)}
        elif inner.probe_sql is None or inner.key_positions is None:
            checks.append({"limit": k, "unchecked": "its ORDER BY keys cannot be recovered"})
            continue
        else:
            check = {"limit": k, "probe_sql": inner.probe_sql, "key_positions": inner.key_positions,
                     "full_sql": inner.full_sql}
        choice = _choice_query(query)
        if choice is not None and check["full_sql"]:
            whole = tree.copy()
            found = [n for n in whole.find_all(exp.Limit)]
            at = [n for n in tree.find_all(exp.Limit)].index(node)
            parent = found[at].parent
            assert parent is not None  # a nested LIMIT sits in its query
            parent.replace(choice)
            check["choice_sql"] = whole.sql(dialect=dialect)
        checks.append(check)
    return checks


CHOICE_MARKER = "-424242"  # the ranks a choice keeps, in ``choice_sql``: replaced by the list when it runs
_RN = "__sqleval_rn"


def _choice_query(query: exp.Expr) -> exp.Expr | None:
    """``query`` (a subquery with ``ORDER BY ... LIMIT k``, or a LIMIT alone) as one choice of
    its rows: numbered by its ORDER BY, then by every output column (so the rows of a tie
    group have fixed ranks), keeping the ranks listed at ``CHOICE_MARKER``. Run with every
    valid choice of the tied rows, the gold gives every answer it may give
    (``engine_side.GradingHandler._choices``). None where the output columns cannot be
    named (``*``, two of one name) or numbering would change the rows (DISTINCT)."""
    if not isinstance(query, exp.Select) or query.args.get("distinct"):
        return None
    selects = query.selects
    if not selects or any(_expands(s) for s in selects):
        return None
    inner = query.copy()
    order = inner.args.get("order")
    inner.set("limit", None)
    inner.set("order", None)
    terms: list[exp.Expr] = []
    for o in (order.expressions if order is not None else []):
        pos = _output_position(o.this, selects)
        expr = selects[pos] if pos is not None else o.this
        expr = expr.this if isinstance(expr, exp.Alias) else expr
        terms.append(exp.Ordered(this=expr.copy(), desc=o.args.get("desc"), nulls_first=o.args.get("nulls_first")))
    names: list[exp.Identifier] = []  # as written (quoted or not), so the outer query finds them as before
    items: list[exp.Expr] = []
    for i, sel in enumerate(inner.selects):
        terms.append(exp.Ordered(this=(sel.this if isinstance(sel, exp.Alias) else sel).copy()))
        ident = sel.args.get("alias") if isinstance(sel, exp.Alias) else sel.this if isinstance(sel, exp.Column) else None
        if isinstance(ident, exp.Identifier):
            names.append(ident.copy())
            items.append(sel)
        else:
            names.append(exp.to_identifier(f"__sqleval_c{i}"))
            items.append(exp.alias_(sel.copy(), names[-1].name))
    if len({n.name.lower() for n in names}) != len(names):
        return None
    rank = exp.alias_(exp.Window(this=exp.RowNumber(), order=exp.Order(expressions=terms)), _RN)
    inner.set("expressions", items + [rank])
    return (exp.select(*[exp.column(n) for n in names]).from_(inner.subquery("__sqleval_choice"))
            .where(exp.column(_RN).isin(exp.Literal.number(int(CHOICE_MARKER))))
            .order_by(exp.column(_RN)))


def _without_limit(tree: exp.Expr, limit: int | None, dialect: str) -> str | None:
    """The query with its LIMIT dropped, for the tie group a LIMIT cuts through; None with
    an OFFSET (the window would have two cut edges) or without a LIMIT."""
    if limit is None or tree.args.get("offset") is not None:
        return None
    full = tree.copy()
    full.set("limit", None)
    return full.sql(dialect=dialect)


def _is_ordinal(target: exp.Expr) -> bool:
    return isinstance(target, exp.Literal) and not target.is_string


def _expands(sel: exp.Expr) -> bool:
    """A select item that may stand for several output columns: *, t.*, COLUMNS(...), UNPACK(...)."""
    inner = sel.this if isinstance(sel, exp.Alias) else sel
    columns = getattr(exp, "Columns", None)
    return (isinstance(inner, exp.Star) or (columns is not None and isinstance(inner, columns))
            or (isinstance(inner, exp.Column) and isinstance(inner.this, exp.Star))
            or (isinstance(inner, exp.Anonymous) and inner.name.upper() in ("COLUMNS", "UNPACK")))


def _output_position(target: exp.Expr, selects: list[exp.Expr]) -> int | None:
    if isinstance(target, exp.Literal) and not target.is_string:
        try:
            return int(target.this) - 1
        except ValueError:
            return None
    for i, sel in enumerate(selects):
        if isinstance(target, exp.Column) and not target.table and sel.alias_or_name == target.name:
            return i
        inner = sel.this if isinstance(sel, exp.Alias) else sel
        if inner == target:
            return i
    return None


__all__ = ["CHOICE_MARKER", "OrderInfo", "nested_limits", "order_info"]
