"""Near-misses inside a scalar subquery an outer column is compared with: the outer column moved.

TPC-H q20 keeps a part-supplier pair where ``ps_availqty > (SELECT 0.5 * sum(l_quantity) FROM
lineitem WHERE l_partkey = ps_partkey AND l_suppkey = ps_suppkey AND l_shipdate >= date
'1994-01-01' AND l_shipdate < date '1995-01-01')``. A bound of the subquery dropped (or moved)
changes the subquery's value for a pair, but the comparison's outcome only where ``ps_availqty``
lies between the two values: on the pinned data it never does (934 against 33 and 56.5), and no
copy of a line within the column's domain (quantities up to 50) closes a gap of hundreds. A
line copied at the edge of the bound shows nothing either: the subquery's rows are tied to their
outer row, and the rows query of a correlated subquery, rendered alone, does not run.

What does show it: the outer column itself, set on the rows that reach the outer SELECT but for
that comparison, so that each keeps its outcome under the gold and takes the other under the
near-miss where it can (``ps_availqty`` 56 for the pair that passes with 33 and would fail with
56.5; a pair the gold drops on a NULL sum set low enough that the near-miss's sum drops it too).
The rows query gives, per such row, its row id, the compared side under the gold and under the
near-miss, and the column's value; ``SeparatingWriter`` writes the values ``moves`` chooses and
keeps them only where the gold and the near-miss now differ, as every separating edit is kept.

Where the variant has no such row (a subset kept no line of the one Canadian forest pair), a
``Seed`` copies lines first: any line, given the pair's keys and the changed bound's edge values
(one copy per value), then the column is set. Where the gold answers nothing on the variant, it
is left so: only the values the changed conjunct drops are copied, and the near-miss made to keep
more. A gold given a row there would coincide with the near-misses that answer rows where it
answers none (q20 without its comparison, caught so on the pinned data's subsets).
"""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from . import tracing

MAX_ROWS = 200  # outer rows moved per edit, at most
SOURCES = 12  # inner rows a seed's copies are made from (a keyless row identity takes one copy per source)
MAX_REACH_CHECKS = 16  # outer rows checked for reaching the output (the gold run once each), per seeded edit
SUMMED_ROW = "__sqleval_summed_row"  # the least row id of a group whose sum the outer column is
SUMMED_ROUNDS = 4  # moves of a group's sum toward the middle, each after asking its sides again
MAX_SUMMED = 3  # groups tried per near-miss and variant
MAX_GROUP_ROWS = 40  # rows of a group a sum's move is spread over, at most
MAX_SEEDED = 4  # outer rows tried per near-miss and variant for the seeded edit (each two copies, a write, the gold)


@dataclass(frozen=True)
class Seed:
    """Where a subset kept no inner row on both sides of the changed bound for an outer row that
    reaches the output (TPC-H q20 on a 5 % subset: no line of the one Canadian forest pair in
    1994 or 1993), copies of an inner row are given that outer row's correlated values and the
    changed column at each edge value, before the outer column is set."""

    reach_sql: str  # the gold with the comparison replaced by ``<outer>.rowid = ?``: whether a row reaches
    outer_sql: str  # the outer row's correlated columns, by row id (one parameter)
    inner_table: str
    inner_sql: str  # inner rows to copy: any of the subquery's table, in the variant's turn (one parameter)
    correlated: tuple[str, ...]  # the inner columns set to the outer row's values, in ``outer_sql``'s order
    column: str  # the changed conjunct's inner column
    values: tuple[str, ...]  # the edge values it takes, one copy each
    inside: tuple[str, ...]  # per value, a query answering 1 where the changed conjunct keeps it


_ARITHMETIC = ("Mul", "Add", "Sub", "Div", "Paren", "Cast", "Neg")


def rows_sql(tree: Any, nodes: list[Any], node: Any, mutant: str, dialect: str, names: Any,
             values: tuple[str, ...] = ()) -> tuple[str, str, str, str, Seed | None, str] | None:
    """(base table, column, rows query, operator) where ``node`` (the near-miss's change) lies in
    a scalar subquery one side of a comparison conjunct of its outer SELECT, the other side a
    column of a base table of that SELECT, or the ``sum`` of one over a group of a derived table or
    CTE it reads (``_summed``); the operator reads with the column on its left. The query gives
    ``w0`` (row id; for a sum, named ``SUMMED_ROW``: one row of the group), ``w1`` (the compared
    side, gold), ``w2`` (near-miss), ``w3`` (the column, or the sum), for rows reaching the outer
    SELECT but for the comparison; the ``Seed`` where ``node`` compares a column of the
    subquery's one table with ``values`` at its edge; for a sum, the query of its group's rows
    (``_group_rows_sql``), else "". None otherwise."""
    import sqlglot
    from sqlglot import exp
    inner = node if isinstance(node, exp.Select) else node.find_ancestor(exp.Select)
    holder = inner.parent if inner is not None else None
    if not isinstance(holder, exp.Subquery) or isinstance(holder.parent, (exp.From, exp.Join, exp.In, exp.Exists)):
        return None
    side: Any = holder
    while type(side.parent).__name__ in _ARITHMETIC:
        side = side.parent
    cmp = side.parent
    ops = {exp.GT: ">", exp.GTE: ">=", exp.LT: "<", exp.LTE: "<=", exp.EQ: "=", exp.NEQ: "<>"}
    if type(cmp) not in ops or tracing.remove_conjunct(cmp, probe=True) is None:
        return None
    col = cmp.expression if side is cmp.this else cmp.this
    outer = cmp.find_ancestor(exp.Select)
    if not isinstance(col, exp.Column) or outer is None:
        return None
    traced = tracing.trace(outer, col, names)
    if len(traced) != 1 or len(traced[0][2]) not in (1, 2):
        return None
    table, column, path = traced[0]
    if len(path) == 2 and not _summed(path):
        return None
    op = ops[type(cmp)]
    if side is cmp.this:  # ``(S) > col``: read as ``col < (S)``
        op = {">": "<", ">=": "<=", "<": ">", "<=": ">="}.get(op, op)
    try:
        theirs = list(sqlglot.parse_one(mutant, read=dialect).dfs())
    except Exception:  # the near-miss does not parse back: no threshold
        return None
    at, side_at = next(i for i, n in enumerate(nodes) if n is cmp), next(i for i, n in enumerate(nodes) if n is side)
    if side_at >= len(theirs) or type(theirs[side_at]) is not type(side) or type(theirs[at]) is not type(cmp):
        return None  # the change lies inside the compared side: every node before it is the gold's
    changed = theirs[side_at]
    copy = tree.copy()
    twins = list(copy.dfs())
    top, gold_side = twins[_at(nodes, outer)], twins[side_at].copy()
    tracing.remove_conjunct(twins[at])
    group_sql = ""
    if len(path) == 2:  # a group's sum: one of its rows stands for it (its least row id), the sum is the value
        group = twins[_at(nodes, path[1].select)]
        group_sql = _group_rows_sql(tree, nodes, path[1].select, path[1].alias, dialect) or ""
        if not group_sql:
            return None
        group.select(exp.alias_(exp.Min(this=exp.column("rowid", table=path[1].alias)), SUMMED_ROW), copy=False)
        row, value = exp.column(SUMMED_ROW, table=path[0].alias), exp.column(col.name, table=path[0].alias)
    else:
        row, value = exp.column("rowid", table=path[0].alias), exp.column(column, table=path[0].alias)
    inner_sql = tracing.render_alone(copy, top, [
        exp.alias_(row, "w0"), exp.alias_(gold_side, "w1"), exp.alias_(changed.copy(), "w2"),
        exp.alias_(value, "w3")], dialect)
    if inner_sql is None:
        return None
    seed = _seed(tree, nodes, node, inner, cmp, outer, path[0].alias, values, dialect, names) \
        if values and len(path) == 1 else None
    rows_sql = f"SELECT w0, w1, w2, w3 FROM ({inner_sql}) AS outer_rows ORDER BY w0, w1, w2, w3 LIMIT {MAX_ROWS}"
    return table, column, rows_sql, op, seed, group_sql


def _group_rows_sql(tree: Any, nodes: list[Any], select: Any, alias: str, dialect: str) -> str | None:
    """For a grouped SELECT of the gold (``select``, ``nodes`` its tree's), the row ids of its
    FROM item ``alias`` that make one group, given one of them (one parameter): its rows joined
    and filtered as there, with the same values of every GROUP BY expression; at most
    ``MAX_GROUP_ROWS``."""
    from sqlglot import exp
    copy = tree.copy()
    group = list(copy.dfs())[_at(nodes, select)]
    keys = [k.copy() for k in group.args["group"].expressions]
    if not keys or any(k.find(exp.AggFunc) for k in keys):
        return None
    every = tracing.render_alone(copy, group, [exp.alias_(exp.column("rowid", table=alias), "r")]
                                 + [exp.alias_(k, f"k{i}") for i, k in enumerate(keys)], dialect)
    if every is None:
        return None
    same = " AND ".join(f"a.k{i} = b.k{i}" for i in range(len(keys)))
    return (f"SELECT a.r FROM ({every}) AS a, ({every}) AS b WHERE b.r = ? AND {same} "
            f"ORDER BY a.r LIMIT {MAX_GROUP_ROWS}")


def _summed(path: list[Any]) -> bool:
    """Whether the outer column at the head of ``path`` is a plain ``sum`` of the base column at
    its end, in a grouped derived table or CTE the outer SELECT reads (TPC-DS q81's
    ``ctr_total_return``: ``sum(cr_return_amt_inc_tax)`` per customer and state): then the rows of
    a group, moved alike by the gap, set the group's sum."""
    from sqlglot import exp
    outer, inner = path
    if inner.select.args.get("group") is None or inner.select.args.get("having") is not None \
            or outer.position is None or outer.position >= len(inner.select.expressions):
        return False
    summed = inner.select.expressions[outer.position].unalias()
    return isinstance(summed, exp.Sum) and isinstance(summed.this, exp.Column) and not summed.find(exp.Distinct)


def summed_value(row: tuple[Any, ...], before: tuple[Any, ...] | None, integral: bool) -> Decimal | None:
    """For a group's sum (``SUMMED_ROW``): the sum to move it to, between the compared side under
    the gold and under the near-miss (a whole number for an integer column), where it lies on one
    side of both; None where it already separates them, or a side is NULL. The group is in the
    average it is compared with, so each side moves with it: from the first move on, the middle
    is the one where the sides will be, assuming they move in proportion (``before``: the row as
    it was before the last move; a variant keeps two groups of a state, and each move of one
    shifts its state's average by half of it)."""
    _, gold, theirs, own = row
    g, m, v = _number(gold), _number(theirs), _number(own)
    if g is None or m is None or v is None or g == m or min(g, m) < v <= max(g, m):
        return None
    target = (g + m) / 2
    was = [_number(x) for x in before[1:]] if before is not None else []
    if len(was) == 3 and None not in was and was[2] != v:
        g0, m0, v0 = (x for x in was if x is not None)
        slope = (g - g0 + m - m0) / 2 / (v - v0)
        if slope != 1:
            target = (target - slope * v) / (1 - slope)
    return target.to_integral_value() if integral else target.quantize(Decimal("0.01"))


def _seed(tree: Any, nodes: list[Any], node: Any, inner: Any, cmp: Any, outer: Any, alias: str,
          values: tuple[str, ...], dialect: str, names: Any) -> Seed | None:
    from sqlglot import exp
    sources = tracing.from_nodes(inner)
    if len(sources) != 1 or not isinstance(sources[0], exp.Table) or not isinstance(node.this, exp.Column) \
            or tracing.alias_of(node.this, inner, names) is None:
        return None
    traced = tracing.trace(inner, node.this, names)
    if len(traced) != 1:
        return None
    inner_table, column, _ = traced[0]
    pairs: list[tuple[str, str]] = []
    for c in tracing.own_columns(inner, inner):
        if tracing.alias_of(c, inner, names) is not None:
            continue
        eq = c.parent
        other = eq.expression if isinstance(eq, exp.EQ) and eq.this is c else eq.this if isinstance(eq, exp.EQ) else None
        if not isinstance(other, exp.Column) or tracing.alias_of(c, outer, names) != alias \
                or tracing.alias_of(other, inner, names) is None:
            return None  # an outer column read otherwise, or of another outer table: no seed
        own = tracing.trace(inner, other, names)
        if len(own) != 1:
            return None
        pairs.append((own[0][1], c.name))
    if not pairs:
        return None
    copy = tree.copy()
    twins = list(copy.dfs())
    twins[_at(nodes, cmp)].replace(exp.EQ(this=exp.column("rowid", table=alias), expression=exp.Placeholder()))
    table = sources[0]
    rel = ".".join(p for p in (table.db, table.name) if p)
    outer_table = next(s for s in tracing.from_nodes(outer) if s.alias_or_name.lower() == alias)
    outer_rel = ".".join(p for p in (outer_table.db, outer_table.name) if p)
    inside = []
    for v in values:
        number = _number_text(v)
        literal = exp.Literal.number(v) if number else exp.Literal.string(v)
        cond = node.copy().transform(lambda n: literal.copy() if isinstance(n, exp.Column) else n)
        inside.append(exp.select(exp.Case(ifs=[exp.If(this=cond, true=exp.Literal.number(1))],
                                          default=exp.Literal.number(0))))
    try:
        reach = copy.sql(dialect=dialect, copy=False)
        inside_sql = tuple(q.sql(dialect=dialect) for q in inside)
    except Exception:  # sqlglot cannot render it
        return None
    return Seed(f"SELECT 1 FROM ({reach}) AS reached LIMIT 1",
                f"SELECT {', '.join(o for _, o in pairs)} FROM {outer_rel} WHERE rowid = ?", inner_table,
                f"SELECT rowid FROM {rel} ORDER BY (rowid * 2654435761 + ?) % 4294967291 LIMIT {SOURCES}",
                tuple(i for i, _ in pairs), column, values, inside_sql)


def _at(nodes: list[Any], node: Any) -> int:
    return next(i for i, n in enumerate(nodes) if n is node)


def moves(rows: list[tuple[Any, ...]], op: str, fewer: bool, integral: bool,
          allowed: Any, turn_on: bool = False) -> dict[int, Any]:
    """Per row id, the value nearest the row's own that keeps the comparison's outcome under the
    gold and gives it ``not fewer`` under the near-miss (``fewer``: the near-miss keeps fewer
    rows); rows no value serves, or already served, are left out. ``turn_on`` (with ``fewer``): a
    row the gold drops is first given a value it keeps and the near-miss drops (the outer row a
    seed's copies were tied to). ``allowed(value)``: a value of the column's pinned domain."""
    out: dict[int, Any] = {}
    for rowid, gold, theirs, own in rows:
        if rowid is None or own is None or isinstance(own, (str, bytes, bool)):
            continue
        v = _number(own)
        g, m = _number(gold), _number(theirs)
        if v is None:
            continue
        keeps, wanted = _holds(v, op, g), not fewer
        goals = [(True, False)] if turn_on and fewer and not keeps else []
        if _holds(v, op, m) != wanted:
            goals.append((keeps, wanted))
        best = None
        ranked = sorted(_candidates(v, g, m, integral), key=lambda c: (abs(c - v), c))
        for gold_holds, theirs_hold in goals:
            best = next((c for c in ranked if _holds(c, op, g) == gold_holds and _holds(c, op, m) == theirs_hold
                         and allowed(c)), None)
            if best is not None:
                break
        if best is not None:
            out[int(rowid)] = int(best) if integral else best
    return out


def _candidates(v: Decimal, g: Decimal | None, m: Decimal | None, integral: bool) -> list[Decimal]:
    out: list[Decimal] = []
    for s in (g, m):
        if s is None:
            continue
        base = s.to_integral_value(rounding="ROUND_FLOOR")
        out += [base + k for k in (-1, 0, 1, 2)]
        if not integral:
            out.append(s)
    if m is not None and g is None:  # a NULL under the gold: any side of the near-miss's value
        out += [Decimal(0), Decimal(1)]
    return [c for c in dict.fromkeys(out) if c != v and (not integral or c == c.to_integral_value())]


def _holds(v: Decimal, op: str, s: Decimal | None) -> bool:
    if s is None:
        return False  # a comparison with NULL keeps no row
    return {">": v > s, ">=": v >= s, "<": v < s, "<=": v <= s, "=": v == s, "<>": v != s}[op]


def _number_text(text: str) -> bool:
    try:
        Decimal(text)
    except InvalidOperation:
        return False
    return True


def _number(value: Any) -> Decimal | None:
    if value is None or isinstance(value, (str, bytes, bool)):
        return None
    try:
        return Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    except (InvalidOperation, TypeError, ValueError):
        return None


__all__ = ["MAX_REACH_CHECKS", "MAX_ROWS", "MAX_SEEDED", "MAX_SUMMED", "SOURCES", "SUMMED_ROUNDS", "SUMMED_ROW", "Seed",
           "moves", "rows_sql", "summed_value"]
