"""Tracing a gold's column to the base table it reads, and the rows that reach a SELECT.

A column of a derived table, a CTE or a UNION ALL branch is read from a base column of each
branch (``trace``, ``base_columns``); a base table's rows that reach a SELECT through the
derived tables on the way are found by carrying their row id up as an output column
(``rows_sql``, ``reaching_top_sql``). The separating, clone and join-path witnesses all
read a gold this way: one module below them, so none of them imports another to do it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

CANDIDATE_ROWS = 3  # rows of a traced table tried per target
ORDERED_ROWS = 400  # rows read in the output's order (``rows_sql(ordered=True)``), duplicates among them
MAX_TRACE_DEPTH = 4  # derived tables and CTEs followed from the SELECT to the base table
CARRIED = "__sqleval_w"  # the output column a row id is carried up in


def own_columns(node: Any, select: Any) -> list[Any]:
    from sqlglot import exp
    return [c for c in node.find_all(exp.Column) if c.find_ancestor(exp.Select) is select]


def remove_conjunct(node: Any, probe: bool = False) -> Any:
    """Remove ``node`` from its WHERE or inner ON (``probe``: only say whether it can be); None
    when it is no conjunct of one."""
    from sqlglot import exp
    twin, up = node, node.parent
    while isinstance(up, exp.Paren):
        twin, up = up, up.parent
    if not isinstance(up, (exp.And, exp.Where)):
        return None
    clause = node.find_ancestor(exp.Where, exp.Join, exp.Having)
    if not isinstance(clause, (exp.Where, exp.Join)):
        return None
    if isinstance(clause, exp.Join) and (clause.side or not isinstance(up, exp.And)):
        return None
    if probe:
        return node
    if isinstance(up, exp.Where):
        up.pop()
    else:
        up.replace(up.expression if up.this is twin else up.this)
    return node


def from_nodes(select: Any) -> list[Any]:
    from_ = select.args.get("from_") or select.args.get("from")
    return ([from_.this] if from_ is not None else []) + [j.this for j in select.args.get("joins") or []]


def ctes_of(tree: Any) -> dict[str, Any]:
    from sqlglot import exp
    return {c.alias_or_name.lower(): c.this for c in tree.find_all(exp.CTE)}


def body_of(source: Any, ctes: dict[str, Any], names: Any) -> Any:
    """The query a FROM item reads: a derived table's, a CTE's; None for a base table."""
    from sqlglot import exp
    if isinstance(source, exp.Subquery):
        return source.this
    if isinstance(source, exp.Table) and not source.db and source.name.lower() in ctes:
        return ctes[source.name.lower()]
    return None


def branches_of(body: Any) -> list[Any]:
    """The SELECTs of a UNION (ALL) tree, first branch first; [] for any other set operation."""
    from sqlglot import exp
    while isinstance(body, exp.Subquery):
        body = body.this
    if isinstance(body, exp.Select):
        return [body]
    if isinstance(body, exp.Union):
        return branches_of(body.this) + branches_of(body.expression)
    return []


def output_names(select: Any) -> list[str]:
    return [e.alias_or_name.lower() for e in select.expressions]


def alias_of(col: Any, select: Any, names: Any) -> str | None:
    """The FROM item alias (lower case) of ``select`` a column reads, if one surely is."""
    from sqlglot import exp
    ctes = ctes_of(select.root())
    sources = {s.alias_or_name.lower(): s for s in from_nodes(select)}
    if col.table:
        return col.table.lower() if col.table.lower() in sources else None
    owners = []
    for alias, s in sources.items():
        body = body_of(s, ctes, names)
        if body is not None:
            branches = branches_of(body)
            if branches and col.name.lower() in output_names(branches[0]):
                owners.append(alias)
        elif isinstance(s, exp.Table):
            t = names.table(".".join(p for p in (s.db, s.name) if p).lower())
            if t in names.lower and col.name.lower() in names.lower[t]:
                owners.append(alias)
    return owners[0] if len(owners) == 1 else None


@dataclass(frozen=True)
class Step:
    select: Any  # a SELECT on the path, in the gold's tree
    alias: str  # the FROM item of it the path goes through
    position: int | None  # the output position the path's column has in its body (None: a base table)


def trace(select: Any, col: Any, names: Any, depth: int = 0) -> list[tuple[str, str, list[Step]]]:
    """(base table, its column, the path from ``select`` down) of each base column ``col`` reads."""
    from sqlglot import exp
    alias = alias_of(col, select, names)
    if alias is None or depth > MAX_TRACE_DEPTH:
        return []
    source = next(s for s in from_nodes(select) if s.alias_or_name.lower() == alias)
    body = body_of(source, ctes_of(select.root()), names)
    if body is None:
        if not isinstance(source, exp.Table):
            return []
        t = names.table(".".join(p for p in (source.db, source.name) if p).lower())
        if t not in names.lower or col.name.lower() not in names.lower[t]:
            return []
        return [(names.originals[t], names.lower[t][col.name.lower()], [Step(select, alias, None)])]
    branches = branches_of(body)
    if not branches or col.name.lower() not in output_names(branches[0]):
        return []
    position = output_names(branches[0]).index(col.name.lower())
    out = []
    for branch in branches:
        if position >= len(branch.expressions) or any(e.is_star for e in branch.expressions):
            return []
        for inner in own_columns(branch.expressions[position], branch):
            for table, column, path in trace(branch, inner, names, depth + 1):
                out.append((table, column, [Step(select, alias, position)] + path))
    return out


def base_columns(select: Any, col: Any, names: Any) -> list[tuple[str, str]]:
    """(base table, its column) of each base column ``col`` of ``select`` reads, through derived
    tables, CTEs and UNION branches; [] where it cannot be traced."""
    try:
        return [(table, column) for table, column, _ in trace(select, col, names)]
    except Exception:  # an odd tree: no base column
        return []


def rows_sql(tree: Any, nodes: list[Any], path: list[Step], dialect: str, drop: Any = None,
             failing: bool = False, peer: Any = None, every: bool = False, ordered: bool = False) -> str | None:
    """A query of the row ids of the base table at the end of ``path`` whose rows reach the
    path's first SELECT (its FROM, joins and WHERE; not its grouping): the row id is carried
    up as a new output column of each SELECT on the path, NULL in the other UNION branches.
    ``failing``: only those that fail ``drop`` (it is neither true nor NULL). ``peer``: a
    column of the first SELECT, given beside each row id (the least it is joined to).
    ``every``: all of them, with no parameter (else a few, chosen by the variant's turn).
    ``ordered``: the path starts at the gold's top, ungrouped, with an ORDER BY: the row ids
    in the output's order, then by row id (one parameter, unused; see ``_ordered_rows``)."""
    from sqlglot import exp
    copy = tree.copy()
    twins = list(copy.dfs())
    at = {id(n): i for i, n in enumerate(nodes)}
    if drop is not None:  # the rows that reach the SELECT but for this conjunct
        remove_conjunct(twins[at[id(drop)]])
        if failing:
            owner = twins[at[id(path[0].select)]]
            fails = exp.EQ(this=exp.Case(ifs=[exp.If(this=drop.copy(), true=exp.Literal.number(1))],
                                         default=exp.Literal.number(0)), expression=exp.Literal.number(0))
            where = owner.args.get("where")
            owner.set("where", exp.Where(this=exp.and_(where.this.copy(), fails) if where is not None else fails))
    carried: exp.Expr | None = None
    for step in reversed(path):
        select = twins[at[id(step.select)]]
        if step.position is None:
            carried = exp.column("rowid", table=step.alias)
        else:
            carried = exp.column(CARRIED, table=step.alias)
        if step is path[0]:
            break
        parent = body_parent(select)
        grouped = select.args.get("group") is not None or _aggregates(select)
        value = exp.Min(this=carried) if grouped else carried
        for branch in branches_of(parent) if parent is not None else [select]:
            if branch is select and step.position is not None and not grouped and _stars(select, step.alias):
                continue  # ``SELECT * FROM ss`` (TPC-DS q33/q56/q60's channels) carries it already
            branch.append("expressions", exp.alias_(value.copy() if branch is select else exp.Null(), CARRIED))
    if carried is None:
        return None
    top = twins[at[id(path[0].select)]]
    if ordered:
        return _ordered_rows(copy, top, carried, dialect)
    inner = render_alone(copy, top, [exp.alias_(carried, "w0")]
                         + ([exp.alias_(peer.copy(), "w1")] if peer is not None else []), dialect)
    if inner is None:
        return None
    if every:
        return f"SELECT w0 FROM ({inner}) AS reaching WHERE w0 IS NOT NULL"
    return (f"SELECT w0{', min(w1)' if peer is not None else ''} FROM ({inner}) AS reaching WHERE w0 IS NOT NULL "
            f"{'AND w1 IS NOT NULL ' if peer is not None else ''}GROUP BY w0 "
            f"ORDER BY (w0 * 2654435761 + ?) % 4294967291 LIMIT {CANDIDATE_ROWS}")


def order_positions(tree: Any) -> tuple[int, ...] | None:
    """The output positions of a gold's ORDER BY keys (a position, an output's alias or its
    expression); None without an ORDER BY or where a key is no output column."""
    from sqlglot import exp
    order = tree.args.get("order")
    if order is None or not isinstance(tree, exp.Select):
        return None
    outputs = [" ".join(e.unalias().sql().lower().split()) for e in tree.expressions]
    aliases = [e.alias.lower() if isinstance(e, exp.Alias) else "" for e in tree.expressions]
    out = []
    for key in order.expressions:
        expr = key.this
        if isinstance(expr, exp.Literal) and expr.is_int and 1 <= int(expr.this) <= len(outputs):
            out.append(int(expr.this) - 1)
            continue
        text = " ".join(expr.sql().lower().split())
        if isinstance(expr, exp.Column) and not expr.table and expr.name.lower() in aliases:
            out.append(aliases.index(expr.name.lower()))
        elif text in outputs:
            out.append(outputs.index(text))
        else:
            return None
    return tuple(out)


def _ordered_rows(copy: Any, top: Any, carried: Any, dialect: str) -> str | None:
    """``rows_sql(ordered=True)``: behind a LIMIT only the first rows show (TPC-DS q59's 100
    rows are two weeks of one store), so the carried row ids come in the output's order, then
    by row id (a tie is cut the same under every plan), duplicates left to the caller; one
    parameter, unused, as the turned query has. None where the top groups, is DISTINCT, or
    orders by what it does not output."""
    from sqlglot import exp
    order = top.args.get("order")
    grouped = top.args.get("group") is not None or any(e.find(exp.AggFunc) for e in top.expressions)
    if top is not copy or order is None or grouped or top.args.get("distinct") is not None:
        return None
    positions = order_positions(top)
    if positions is None:
        return None
    keys = [exp.Ordered(this=exp.column(f"c{at}"), desc=key.args.get("desc"), nulls_first=key.args.get("nulls_first"))
            .sql(dialect=dialect) for at, key in zip(positions, order.expressions)]
    inner = render_alone(copy, top, [*(exp.alias_(e.unalias().copy(), f"c{i}") for i, e in enumerate(top.expressions)),
                                     exp.alias_(carried, "w0")], dialect)
    if inner is None:
        return None
    return (f"SELECT w0 FROM ({inner}) AS reaching WHERE w0 IS NOT NULL AND CAST(? AS BIGINT) IS NOT NULL "
            f"ORDER BY {', '.join(keys)}, w0 LIMIT {ORDERED_ROWS}")


def render_alone(copy: Any, top: Any, expressions: list[Any], dialect: str) -> str | None:
    """``top``, a SELECT of the tree ``copy``, rendered alone with ``expressions`` as its outputs
    and without its grouping, order or limit (its FROM, joins and WHERE are what is asked);
    given the root's WITH where it has none of its own, so the CTEs it reads stay defined.
    ``top`` is changed and rendered in place, not copied again (``copy`` is the caller's own);
    None where sqlglot cannot render it."""
    from .witnesses import with_key, with_of
    root_with = with_of(copy)
    # copied first, as it was: ``top`` may be a CTE's body in it
    with_ = root_with.copy() if root_with is not None and with_of(top) is None else None
    if top is not copy:
        top.pop()  # rendered alone, as a copy of it was (the generator reads a node's parent)
    for arg in ("group", "having", "order", "limit", "offset", "qualify", "distinct", "windows"):
        top.set(arg, None)
    top.set("expressions", expressions)
    if with_ is not None:
        top.set(with_key(), with_)
    try:
        return str(top.sql(dialect=dialect, copy=False))
    except Exception:  # sqlglot cannot render it
        return None


def _aggregates(select: Any) -> bool:
    """Whether ``select`` aggregates its rows: an aggregate outside a window (``sum(x) OVER
    (...)`` keeps every row: TPC-DS q44/q51/q67's ranks and running sums took a ``min`` of
    the carried row id, and no witness of theirs bound)."""
    from sqlglot import exp
    return any(a.find_ancestor(exp.Window) is None for e in select.expressions for a in e.find_all(exp.AggFunc))


def _stars(select: Any, alias: str) -> bool:
    """Whether ``select`` outputs every column of its FROM item ``alias`` (``*`` or ``alias.*``):
    the carried row id among them. Another one beside it made a UNION's branches differ in
    width, and every witness of TPC-DS q33, q56 and q60 (30 of 31 each) was no SQL."""
    from sqlglot import exp
    for e in select.expressions:
        if isinstance(e, exp.Star):
            return True
        if isinstance(e, exp.Column) and isinstance(e.this, exp.Star) and e.table.lower() == alias:
            return True
    return False


def outer_path(tree: Any, select: Any, reader: int | None = None) -> list[Step] | None:
    """The SELECTs from the gold's top down to ``select`` through the derived tables and CTEs
    (read once) that hold it, each with the FROM item it goes through; [] for the top itself or
    a branch of a top UNION; None where a subquery of another kind holds it (EXISTS, IN, a scalar).
    ``reader``: a CTE read several times is followed through its reader of that number (q59's
    ``wss``, read for this year's weeks and next year's); None past the last."""
    from sqlglot import exp
    steps: list[Step] = []
    at, branched = select, False
    while at is not tree:
        body = body_parent(at)
        holder = body.parent
        if body is tree:
            break
        if isinstance(holder, exp.Subquery) and isinstance(holder.parent, (exp.From, exp.Join)) \
                and isinstance(holder.parent.parent, exp.Select):
            outer, alias = holder.parent.parent, holder.alias_or_name.lower()
        elif isinstance(holder, exp.CTE):
            name = holder.alias_or_name.lower()
            users = [t for t in tree.find_all(exp.Table) if not t.db and t.name.lower() == name
                     and isinstance(t.parent, (exp.From, exp.Join)) and isinstance(t.parent.parent, exp.Select)]
            if (reader is None and len(users) != 1) or (reader is not None and reader >= len(users)):
                return None
            user = users[reader or 0]
            branched = branched or len(users) > 1
            outer, alias = user.parent.parent, user.alias_or_name.lower()
        else:
            return None
        steps.insert(0, Step(outer, alias, 0))
        at = outer
    return None if reader and not branched else steps  # no CTE read more than once: one read


def reaching_top_sql(tree: Any, select: Any, alias: str, dialect: str, reader: int | None = None) -> str | None:
    """The row ids of ``select``'s base table ``alias`` whose rows reach the gold's top SELECT
    (its joins and WHERE) through the derived tables or CTEs that hold ``select``: a branch of
    a channel UNION ALL joined to ``item`` and ``time_dim`` outside it. None for the top (its
    rows are the output's) or where another kind of subquery holds it. ``reader``: through
    that reader of a CTE read more than once (``outer_path``)."""
    path = outer_path(tree, select, reader)
    if not path:
        return None
    return rows_sql(tree, list(tree.dfs()), path + [Step(select, alias.lower(), None)], dialect, every=True)


def body_parent(select: Any) -> Any:
    """The whole body (a UNION tree, or the SELECT) a derived table or CTE holds ``select`` in."""
    from sqlglot import exp
    body = select
    while isinstance(body.parent, exp.Union) or (isinstance(body.parent, exp.Subquery)
                                                 and isinstance(body.parent.parent, exp.Union)):
        body = body.parent
    return body


__all__ = [
    "CANDIDATE_ROWS", "CARRIED", "MAX_TRACE_DEPTH", "Step", "alias_of", "base_columns", "body_of",
    "body_parent", "branches_of", "ctes_of", "from_nodes", "outer_path", "output_names", "own_columns",
    "order_positions", "reaching_top_sql", "remove_conjunct", "rows_sql", "trace"
]
