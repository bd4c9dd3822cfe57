"""Separating witnesses: rows that tell a gold from its aggregate swaps, dropped joins and literal edges.

These near-misses coincide with a gold on most data and no rule of ``clones`` or ``groups``
reached them where the aggregate or the join sits behind a derived table, a CTE or a
UNION ALL (TPC-DS's channel unions: ``sum(ext_price) FROM item, (SELECT ... FROM
web_sales ... UNION ALL SELECT ... FROM store_sales ...) tmp, time_dim``):

- an *aggregate swap* (``sum`` for ``avg``, ``count(x)`` for ``count(DISTINCT x)``, ``min``
  for ``max``, ``sum`` for ``count``) returns the gold's rows wherever each output group holds
  one row, or one value; it shows on a second row in a group that reaches the output, with
  another value of the aggregate's argument (a duplicate value for ``count DISTINCT``, the
  column's least or greatest for ``min``/``max``);
- a *dropped join predicate* (``a.k = b.k`` of a multi-table join) returns the gold's rows
  where the other conjuncts already filter the cross product down to them; it shows on a row
  of one side that matches every other conjunct and not the dropped one: a second dimension
  row with the same attributes and a fresh key, or a fact row moved to another key;
- a *literal edge* (``budget > 300000`` moved to ``> 299999``, flipped to ``>=``, or dropped,
  where no row reaching the output sits at the bound): it shows on such a row, an existing
  one set to the literal or one unit beside it, or a copy so set (free columns only, within
  the pinned domain): the rules of ``witnesses`` write edge values into row tuples of one
  SELECT's FROM, which a bound inside an ``IN (subquery)`` or behind a derived table does
  not reach through; a key column (a departure's day) only by a copy, its key checked unique;
- a *HAVING bound* (``count(*) >= 3``, ``sum(qty) > 10``) moved one unit or flipped: it shows
  on a group pushed to exactly the bound (copies of one of its rows, or one row's argument
  set so the group's sum or average lands there), which few small databases hold;
- any other conjunct *dropped* (``IN (SELECT ...)``, ``EXISTS``, ``LIKE``): a copy of a row that
  fails only it, or of a reaching row with its reference moved to another parent.

A group key unique only by chance (``witnesses.unique_by_chance``: each department in its own
building) is kept by an aggregate's copy, which would otherwise open a group of its own; and
a gold with an ORDER BY on output columns is compared in that order (an aggregate swapped in
the ORDER BY only moves rows).

From each gold's AST (sqlglot), per such near-miss, the aggregate's argument or each side of
the join equality is traced to the base column it reads, through derived tables, CTEs and
the branches of a UNION (by output name, then by position). The rows of that table that
reach the SELECT holding the aggregate or the join are found by carrying their row id up
the same path (``__w`` added to each SELECT on it, NULL in the other UNION branches). A
copy of one of them is written (``groups.GroupWriter.copy_row``: a keyed table's clone takes
fresh keys, a key-less one a fresh row identity; every reference, key and NOT NULL holds),
with the column unchanged or at another value the variant's column holds (within the
pinned domain, ``boundaries.Domain``). Then the gold and the near-miss are run on the
variant: the copy is kept only when their answers now differ and the gold's still has a
value; else it is rolled back and the next candidate tried. A near-miss the variant already
tells apart gets nothing. So each witness written is one a prediction making that mistake
fails on; the record says which ("a copy of a store_sales row with ss_ext_sales_price moved
to 12.50 (the next value up) separates `SUM(ext_price)` from `AVG(ext_price)`")."""
from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

from . import tracing

MAX_NEAR_MISSES = 10  # per gold: aggregate swaps, dropped join predicates and literal edges, taken in turn
MAX_CONDITIONALS = 64  # per gold: swaps of conditional aggregates (``_conditional_near_misses``), made
PARENT_ROWS = 4  # pinned parent rows meeting a conditional aggregate's condition, tried in turn to copy in
MAX_READERS = 4  # reads of a CTE a ``complete=`` witness gives a row each (q59 reads ``wss`` twice)
MAX_TRIALS = 8  # copies tried per near-miss and variant (each one write and two queries)
EDGE_ROWS = 2  # rows tried per value of a literal's edge
SPREAD = 1  # a gold's near-misses are tried in every SPREAD-th variant: at 2, a gold empty on the variants it was given got none
# per query: a near-miss past the work a quiet core does in this long is left alone (watchdog.Work); also
# DuckDB's safety net of every query here, CPU seconds (its firing is recorded, the variant not kept)
CHECK_WORK_S = 3.0
SLOW_GOLD_WORK_S = 1.0  # a gold past the work of this long on a variant gets no separating witness (its net: CHECK_WORK_S)
MAX_PUSH = 12  # copies written to push a group's count to a HAVING bound, at most
PUSH_CANDIDATES = 200  # rows (with their group's aggregate) read per HAVING push
_FLIPS: dict[type[Any], type[Any]] = {}  # filled below: < and <=, > and >=


@dataclass(frozen=True)
class Target:
    """A base column a near-miss turns on: copies of ``table`` rows ``rows_sql`` gives (one
    parameter, the variant's turn), with ``column`` changed as ``edits`` say, in order:
    ``same`` (an exact copy, fresh keys), ``up``/``down`` (the next value the column holds),
    ``least``/``greatest`` (the column's extremes)."""

    table: str
    column: str
    rows_sql: str
    edits: tuple[str, ...]
    #: columns a copy keeps as they are though observed unique: a gold's group key unique only by
    #: the sample's chance (each building holds one department), where ``sum`` equals ``avg``
    keep: tuple[str, ...] = ()
    #: a HAVING push (``count``, ``sum`` or ``avg``): ``rows_sql`` gives (row, the group's
    #: aggregate, its rows, the row's ``column``); ``edits`` are ``push=<value>`` (see ``_push``)
    push: str = ""
    #: a ``count`` push: the table's GROUP BY columns, along which a row may leave its group
    #: (one row fewer: ``HAVING count(*) >= 2`` against ``>= 1`` where every group has two)
    moves: tuple[str, ...] = ()
    #: a change inside a scalar subquery ``column`` is compared with (``thresholds``): the comparison's
    #: operator, ``column`` on its left; ``rows_sql`` gives (row, the compared side under the gold,
    #: under the near-miss, the column); ``edits`` ``fewer`` / ``more``: the near-miss keeps fewer rows or more
    threshold: str = ""
    seed: Any = None  # ``thresholds.Seed``: inner rows to copy first, where the variant has none to move
    #: a ``complete=`` edit: per further read of the CTE holding the aggregate, its ``rows_sql`` (``_complete``)
    readers: tuple[str, ...] = ()


@dataclass(frozen=True)
class NearMiss:
    """One aggregate swap, dropped join predicate or literal edge of a gold, with the columns
    it turns on."""

    gold: str  # the gold's digest (``clones.gold_digest``)
    gold_sql: str
    sql: str
    what: str  # e.g. "`SUM(x)` against `AVG(x)`"
    targets: tuple[Target, ...]
    #: the output positions of the gold's ORDER BY keys: answers are then compared in that order
    #: (an aggregate swapped in the ORDER BY only moves rows); None: as bags
    order: tuple[int, ...] | None = None
    #: a conditional aggregate's swap: a query of one reaching row on which its condition holds;
    #: tried on a variant only where it finds none (the aggregate is a constant there, the swap coincides)
    unmet: str = ""
    #: where ``unmet`` finds a row: the targets tried instead (``_complete``), else none
    met: tuple[Target, ...] = ()


def near_misses(gold_sqls: Iterable[str], dialect: str, tables: dict[str, Any]) -> list[NearMiss]:
    """The near-misses of every gold that a copied row may separate, with their targets."""
    from .clones import gold_digest
    from .witnesses import Catalog, parsed_golds
    names = Catalog({t: set(c.columns) for t, c in tables.items()})
    out: list[NearMiss] = []
    for sql, tree in parsed_golds(gold_sqls, dialect):
        try:
            found = _gold_near_misses(sql, tree, dialect, names, tables, gold_digest(sql))
        except Exception:  # an odd tree: no separating witness for this gold
            continue
        out += found
    return out


def _gold_near_misses(sql: str, tree: Any, dialect: str, names: Any, tables: dict[str, Any],
                      digest: str) -> list[NearMiss]:
    from sqlglot import exp
    swaps: list[NearMiss] = []
    joins: list[NearMiss] = []
    edges: list[NearMiss] = []
    drops: list[NearMiss] = []  # other conjuncts dropped (an IN subquery, EXISTS, LIKE)
    bounds: list[NearMiss] = []  # HAVING bounds moved and flipped
    conditionals: list[NearMiss] = []  # swaps of aggregates over a CASE, past MAX_NEAR_MISSES
    nodes = list(tree.dfs())
    for node in nodes:
        if isinstance(node, exp.AggFunc) and len(conditionals) < MAX_CONDITIONALS:
            conditionals += _conditional_near_misses(sql, tree, nodes, node, dialect, names, tables, digest)
        if min(len(swaps), len(joins), len(edges), len(drops), len(bounds)) >= MAX_NEAR_MISSES \
                and len(conditionals) >= MAX_CONDITIONALS:
            break
        select = node.find_ancestor(exp.Select) if isinstance(node, exp.AggFunc) and len(swaps) < MAX_NEAR_MISSES \
            else None
        if select is not None:
            for new, edits in _swaps(node):
                targets = _targets(tree, nodes, select, tracing.own_columns(_argument(node), select), edits, names, tables,
                                   dialect, grouped=True)
                if targets:
                    mutant = _replaced(tree, nodes, node, new, dialect)
                    what = f"`{_short(node, dialect)}` against `{_short(new, dialect)}`"
                    if mutant and mutant != sql:
                        swaps.append(NearMiss(digest, sql, mutant, what, targets))
        if isinstance(node, exp.EQ) and isinstance(node.this, exp.Column) and isinstance(node.expression, exp.Column) \
                and len(joins) < MAX_NEAR_MISSES:
            mutant = _dropped(tree, nodes, node, dialect)
            select = node.find_ancestor(exp.Select)
            if mutant is None or select is None:
                continue
            sides = [c for c in (node.this, node.expression) if tracing.alias_of(c, select, names) is not None]
            if len(sides) != 2 or tracing.alias_of(sides[0], select, names) == tracing.alias_of(sides[1], select, names):
                continue
            targets = _targets(tree, nodes, select, sides, ("same", "up", "down"), names, tables, dialect, True)
            if targets:
                joins.append(NearMiss(digest, sql, mutant, f"the gold against its join without "
                                                            f"`{_short(node, dialect)}`", targets))
        if (type(node) in _FLIPS or isinstance(node, (exp.EQ, exp.Between))) and len(edges) < MAX_NEAR_MISSES:
            found = _edge_near_misses(sql, tree, nodes, node, dialect, names, tables, digest)
            edges += found or _pair_near_misses(sql, tree, nodes, node, dialect, names, tables, digest)
            if not found and len(drops) < MAX_NEAR_MISSES:
                drops += _dropped_near_misses(sql, tree, nodes, node, dialect, names, tables, digest)
        elif isinstance(node, (exp.In, exp.Exists, exp.Like, exp.ILike, exp.Not, exp.NEQ)) \
                and len(drops) < MAX_NEAR_MISSES:
            drops += _dropped_near_misses(sql, tree, nodes, node, dialect, names, tables, digest)
        elif isinstance(node, exp.Literal) and not node.is_string and len(edges) < MAX_NEAR_MISSES:
            edges += _factor_near_misses(sql, tree, nodes, node, dialect, names, tables, digest)
        if isinstance(node, exp.Having) and len(bounds) < MAX_NEAR_MISSES:
            bounds += _having_near_misses(sql, tree, nodes, node, dialect, names, tables, digest)
    # a change inside a scalar subquery an outer column is compared with: dropped bounds first, as
    # near-misses past MAX_NEAR_MISSES get nothing (TPC-H q20's second shipdate bound was the 11th)
    edges.sort(key=_threshold_first)
    drops.sort(key=_threshold_first)
    out: list[NearMiss] = []
    order = tracing.order_positions(tree)
    if order is not None:
        swaps, bounds, joins, edges, drops, conditionals = ([replace(m, order=order) for m in k]
                                                            for k in (swaps, bounds, joins, edges, drops, conditionals))
    kinds = (swaps, bounds, joins, edges, drops)
    for i in range(max(len(k) for k in kinds)):  # in turn: every kind gets slots
        out += [k[i] for k in kinds if i < len(k) and k[i].sql not in {o.sql for o in out}]
    return out[:MAX_NEAR_MISSES] + conditionals[:MAX_CONDITIONALS]


def _threshold_first(m: NearMiss) -> tuple[bool, bool]:
    return not any(t.threshold for t in m.targets), not m.what.startswith("the gold against itself without")


def _conditional_near_misses(sql: str, tree: Any, nodes: list[Any], node: Any, dialect: str, names: Any,
                             tables: dict[str, Any], digest: str) -> list[NearMiss]:
    """A conditional aggregate, ``sum(CASE WHEN d_moy = 12 THEN price ELSE 0 END)`` over
    ``sales, date_dim WHERE s_date_sk = d_date_sk AND d_year = 2001``: where no reaching row
    meets its condition (no December sale of 2001 on TPC-DS's SF 0.01 catalog branch of q66)
    it is a constant, and its swap (``avg``) coincides; a gold with many aggregates (q66's 84)
    had no slot for it among the MAX_NEAR_MISSES swaps. It shows on a copy of a reaching fact
    row whose reference to the condition's table is moved to a row of it on which the condition
    and the SELECT's own conjuncts on that table hold (a date of December 2001). One swap per
    aggregate (the first ``_swaps`` gives), tried only on a variant where the condition is unmet."""
    from sqlglot import exp
    arg = _argument(node)
    select = node.find_ancestor(exp.Select)
    swaps = _swaps(node)
    if not isinstance(arg, exp.Case) or select is None or not swaps:
        return []
    where = select.args.get("where")
    conjuncts = list(where.this.flatten()) if where is not None and isinstance(where.this, exp.And) \
        else [where.this] if where is not None else []
    sources = {s.alias_or_name.lower(): s for s in tracing.from_nodes(select)}
    ctes = tracing.ctes_of(select.root())

    def base(alias: str | None) -> str | None:  # the base table an alias of ``select`` reads
        source = sources.get(alias or "")
        if not isinstance(source, exp.Table) or tracing.body_of(source, ctes, names) is not None:
            return None
        t_name = names.table(".".join(p for p in (source.db, source.name) if p).lower())
        return names.originals[t_name] if t_name in names.lower else None

    out: list[NearMiss] = []
    for case_if in arg.args.get("ifs") or []:
        cond = case_if.this
        read = {tracing.alias_of(c, select, names) for c in tracing.own_columns(cond, select)}
        if len(read) != 1 or None in read or cond.find(exp.Select) is not None:
            continue
        alias = read.pop()
        parent = base(alias)
        if parent is None:
            continue
        own = [c for c in conjuncts if c.find(exp.Select) is None and tracing.own_columns(c, select)
               and {tracing.alias_of(x, select, names) for x in tracing.own_columns(c, select)} == {alias}]
        targets: list[Target] = []
        completing: list[Target] = []
        for eq in conjuncts:
            if not (isinstance(eq, exp.EQ) and isinstance(eq.this, exp.Column) and isinstance(eq.expression, exp.Column)):
                continue
            sides = {tracing.alias_of(c, select, names): c for c in (eq.this, eq.expression)}
            if alias not in sides or len(sides) != 2:
                continue
            (fact_alias, fact_col), = [(a, c) for a, c in sides.items() if a != alias]
            fact = base(fact_alias)
            t = tables.get(fact) if fact is not None else None
            column = next((c for c in t.columns if c.lower() == fact_col.name.lower()), None) if t is not None else None
            if fact is None or fact_alias is None or t is None or column is None or _single_key(t, column):
                continue
            rows_sql = tracing.rows_sql(tree, nodes, [tracing.Step(select, fact_alias, None)], dialect)
            key = sides[alias]
            met = exp.select(exp.alias_(exp.column(key.name, table=alias), "w0"),
                             exp.alias_(exp.column("rowid", table=alias), "w1")).from_(sources[alias].copy()) \
                .where(exp.and_(*(c.copy() for c in own), cond.copy())).order_by("w0").limit(PARENT_ROWS)
            pkey = next((c for c in tables[parent].columns if c.lower() == key.name.lower()), None)
            if rows_sql is not None and pkey is not None:
                targets.append(Target(fact, column, rows_sql, (f"when={parent}|{pkey}|{met.sql(dialect=dialect)}",)))
                if not completing:  # one is tried
                    completing = _completing(tree, nodes, select, met, alias or "", cond, pkey, parent, fact,
                                             fact_alias, column, names, dialect)
        if not targets:
            continue
        copy = tree.copy()
        twin = list(copy.dfs())[_index(nodes, select)]
        twin.set("where", exp.Where(this=exp.and_(where.this.copy(), cond.copy()) if where is not None
                                    else cond.copy()))
        inner = tracing.render_alone(copy, twin, [exp.alias_(exp.Literal.number(1), "w0")], dialect)
        new, _ = swaps[0]
        mutant = _replaced(tree, nodes, node, new, dialect)
        if inner is None or not mutant or mutant == sql:
            continue
        out.append(NearMiss(digest, sql, mutant, f"`{_short(node, dialect)}` against `{_short(new, dialect)}`, "
                            f"its condition `{_short(cond, dialect)}` met", (*completing[:1], *targets[:2]),
                            unmet=f"SELECT 1 FROM ({inner}) AS met LIMIT 1", met=tuple(completing[:1])))
    return out


def _completing(tree: Any, nodes: list[Any], select: Any, met: Any, alias: str, cond: Any, pkey: str, parent: str,
                fact: str, fact_alias: str, column: str, names: Any, dialect: str) -> list[Target]:
    """The ``complete=`` target of a conditional aggregate in a derived table or CTE (``_complete``):
    the fact rows reaching the output in its order through each read of it, and the ``when=``
    query ``met`` (the parent rows meeting the condition and the SELECT's own conjuncts on the
    parent) narrowed to given values of the parent's GROUP BY columns (``d_week_seq``): those of
    a row's own parent."""
    from sqlglot import exp
    group = select.args.get("group")
    same = [g for g in (group.expressions if group is not None else [])
            if isinstance(g, exp.Column) and tracing.alias_of(g, select, names) == alias]
    readers: list[str] = []
    for k in range(MAX_READERS):
        outer = tracing.outer_path(tree, select, reader=k)
        if not outer:
            break
        rows = tracing.rows_sql(tree, nodes, outer + [tracing.Step(select, fact_alias, None)], dialect, ordered=True)
        if rows is None:
            return []
        readers.append(rows)
    if not readers or not same:
        return []
    found = met.copy().where(*(exp.NullSafeEQ(this=exp.column(g.name, table=alias), expression=exp.Placeholder())
                               for g in same))
    made = {}  # the condition ``d_day_name = 'Friday'``: a copy of the row's own parent so set, where none meets it
    eq = cond.unnest()
    if isinstance(eq, exp.EQ) and isinstance(eq.this, exp.Column) and isinstance(eq.expression, exp.Literal) \
            and tracing.alias_of(eq.this, select, names) == alias:
        made = {eq.this.name: eq.expression.this}
    setting, grouped = json.dumps(made), json.dumps([g.name for g in same])
    if "|" in setting + grouped:
        return []
    return [Target(fact, column, readers[0], (f"complete={parent}|{pkey}|{grouped}|{setting}|"
                                              f"{found.sql(dialect=dialect)}",), readers=tuple(readers[1:]))]


def _threshold_targets(tree: Any, nodes: list[Any], node: Any, mutant: str | None, dialect: str, names: Any,
                       tables: dict[str, Any], values: tuple[str, ...] = ()) -> tuple[Target, ...]:
    """Where ``node`` lies in a scalar subquery a free column of the outer SELECT is compared with
    (``thresholds``): that column, set on the rows reaching the outer SELECT."""
    from .thresholds import rows_sql
    found = rows_sql(tree, nodes, node, mutant, dialect, names, values) if mutant else None
    if found is None or found[0] not in tables or found[1] not in tables[found[0]].free:
        return ()
    seed = found[4] if found[4] is not None and found[4].inner_table in tables else None
    if found[5]:  # a group's sum: its rows moved by the gap (``_summed``)
        return (Target(found[0], found[1], found[2], (f"summed={found[5]}",), threshold=found[3]),)
    return (Target(found[0], found[1], found[2], ("fewer", "more"), threshold=found[3], seed=seed),)


def _edge_near_misses(sql: str, tree: Any, nodes: list[Any], node: Any, dialect: str, names: Any,
                      tables: dict[str, Any], digest: str) -> list[NearMiss]:
    """A conjunct comparing a free column with a literal (``budget > 300000``, a date range):
    the literal moved one unit, the comparison flipped (``<`` and ``<=``), the conjunct
    dropped. Each shows on a row that reaches the output but for this conjunct, with the
    column at the literal or one unit beside it: an existing row so set (a department whose
    courses the gold lists), or a copy."""
    from sqlglot import exp

    from .witnesses import neighbours
    select = node.find_ancestor(exp.Select)
    col = node.this
    # the probe reads the node's own parents: a copy has none, and every edge was refused (BOUNDARY_VERSION 16)
    if select is None or not isinstance(col, exp.Column) or tracing.remove_conjunct(node, probe=True) is None:
        return []
    bounds = [node.args.get("low"), node.args.get("high")] if isinstance(node, exp.Between) else [node.expression]
    literals: list[Any] = [b.this if isinstance(b, exp.Cast) else b for b in bounds]
    if not literals or not all(isinstance(lit, exp.Literal) for lit in literals):
        return []
    texts: list[str] = []
    for lit in literals:
        texts += [v for v in neighbours(lit.this) if v not in texts]
    if len(texts) <= len(literals):
        return []  # text: no neighbour to move to
    # (near-miss, what, the values that separate it first: those between the two bounds)
    mutants: list[tuple[str, str, list[str]]] = []
    for lit in literals:
        for v in neighbours(lit.this)[1:]:
            new = exp.Literal.string(v) if lit.is_string else exp.Literal.number(v)
            mutant = _replaced(tree, nodes, lit, new, dialect)
            if mutant:
                mutants.append((mutant, f"`{_short(node, dialect)}` against its literal {lit.this} moved to {v}",
                                [v, neighbours(lit.this)[0]]))
    if type(node) in _FLIPS:
        mutant = _replaced(tree, nodes, node, _FLIPS[type(node)](this=node.this.copy(), expression=node.expression.copy()),
                           dialect)
        if mutant:
            mutants.append((mutant, f"`{_short(node, dialect)}` against its comparison flipped", texts[:1]))
    dropped = _dropped(tree, nodes, node, dialect)
    if dropped:
        mutants.append((dropped, f"the gold against itself without `{_short(node, dialect)}`", texts))
    # a free column: an existing row set to the value, or a copy; a key column (a departure's day
    # in its key of route and day): only a copy, its key checked unique (``SeparatingWriter._copy``)
    places = []
    for table, column, path in tracing.trace(select, col, names):
        t = tables.get(table)
        rows_sql = tracing.rows_sql(tree, nodes, path, dialect, drop=node)
        if t is not None and (column in t.free or column in t.key_columns) and rows_sql is not None:
            places.append((table, column, rows_sql, column in t.free or _unique_by_chance(t, column)))
    failing = _failing_targets(tree, nodes, select, node, names, tables, dialect)
    out = []
    for mutant, what, first in mutants:
        values = first + [v for v in texts if v not in first]
        targets = tuple(Target(t, c, r, (tuple(f"set={v}" for v in values) if free else ()) + tuple(
            f"copy={v}" for v in values)) for t, c, r, free in places[:2])
        if mutant == dropped:  # a copy of a row that fails only this conjunct shows a drop as it is
            targets += failing
        targets = _threshold_targets(tree, nodes, node, mutant, dialect, names, tables, tuple(values)) + targets
        if mutant != sql and targets:
            out.append(NearMiss(digest, sql, mutant, what, targets))
    return out


def _factor_near_misses(sql: str, tree: Any, nodes: list[Any], node: Any, dialect: str, names: Any,
                        tables: dict[str, Any], digest: str) -> list[NearMiss]:
    """A number in what a scalar subquery selects, the subquery compared with an outer column
    (TPC-DS q81's ``ctr_total_return > (SELECT avg(ctr_total_return) * 1.2 ...)``), moved one
    unit either way: it shows only on an outer row whose column lies between the subquery's
    values under the two, which the pinned data rarely holds; the column is moved there
    (``thresholds``; a group's sum by its rows, moved alike)."""
    from sqlglot import exp

    from .witnesses import neighbours
    inner, top = node.find_ancestor(exp.Select), node
    while inner is not None and top.parent is not inner:
        top = top.parent
    if inner is None or top.arg_key != "expressions" or not isinstance(inner.parent, exp.Subquery):
        return []
    out = []
    for v in neighbours(node.this)[1:]:
        mutant = _replaced(tree, nodes, node, exp.Literal.number(v), dialect)
        targets = _threshold_targets(tree, nodes, node, mutant, dialect, names, tables) if mutant else ()
        if mutant and mutant != sql and targets:
            out.append(NearMiss(digest, sql, mutant, f"`{_short(inner.parent, dialect)}` against its number {node.this} "
                                                     f"moved to {v}", targets))
    return out


def _pair_near_misses(sql: str, tree: Any, nodes: list[Any], node: Any, dialect: str, names: Any,
                      tables: dict[str, Any], digest: str) -> list[NearMiss]:
    """A comparison of two columns of one row (TPC-H q21's ``l1.l_receiptdate >
    l1.l_commitdate``) flipped (``>`` and ``>=``): it shows only on a row where the two are
    equal, which the pinned rows reaching the output may not hold. A reaching row (or one
    that reaches but for this comparison) gets one column set to the other's value, in place
    (a free column, the value in its pinned domain): one side keeps it, the other drops it.
    Of two tables (TPC-DS q72's ``inv_quantity_on_hand < cs_quantity``), the other's value
    is the one the row is joined to (``pair=`` with no column: ``tracing.rows_sql``'s ``peer``)."""
    from sqlglot import exp
    select = node.find_ancestor(exp.Select)
    if select is None or type(node) not in _FLIPS or tracing.remove_conjunct(node, probe=True) is None:
        return []
    sides = [node.this, node.expression]
    if not all(isinstance(c, exp.Column) for c in sides):
        return []
    alias = tracing.alias_of(sides[0], select, names)
    other_alias = tracing.alias_of(sides[1], select, names)
    if alias is None or other_alias is None:
        return []
    places: list[tuple[str, str, str, str]] = []
    for col, other in (sides, sides[::-1]):
        for table, column, path in tracing.trace(select, col, names):
            t = tables.get(table)
            if alias != other_alias:  # two tables (``inv_quantity_on_hand < cs_quantity``): the joined row's value
                if t is not None and len(path) == 1 and column in t.free:
                    rows_sql = tracing.rows_sql(tree, nodes, path, dialect, drop=node, peer=other)
                    if rows_sql is not None:
                        places.append((table, column, rows_sql, ""))
                continue
            twin = names.lower.get(names.table(table.lower()), {}).get(other.name.lower()) if t is not None else None
            if t is None or len(path) != 1 or column not in t.free or twin is None \
                    or t.columns.get(column, "") != t.columns.get(twin, ""):
                continue
            rows_sql = tracing.rows_sql(tree, nodes, path, dialect, drop=node)
            if rows_sql is not None:
                places.append((table, column, rows_sql, twin))
    flipped = _replaced(tree, nodes, node, _FLIPS[type(node)](this=node.this.copy(), expression=node.expression.copy()),
                        dialect)
    targets = tuple(Target(table, column, rows_sql, (f"pair={twin}",)) for table, column, rows_sql, twin in places[:2])
    if not flipped or flipped == sql or not targets:
        return []
    return [NearMiss(digest, sql, flipped, f"`{_short(node, dialect)}` against its comparison flipped", targets)]


def _dropped_near_misses(sql: str, tree: Any, nodes: list[Any], node: Any, dialect: str, names: Any,
                         tables: dict[str, Any], digest: str) -> list[NearMiss]:
    """A conjunct that is no comparison of a column with a literal (``dept_code IN (SELECT ...
    WHERE budget > 300000)``, ``EXISTS``, ``LIKE``, a comparison with a subquery) dropped: it
    shows on a row that passes every other conjunct and fails this one, a copy of one that
    exists, or a copy of a row that reaches but for it with its reference moved to another
    parent (an instructor moved to a poorer department)."""
    from sqlglot import exp
    select = node.find_ancestor(exp.Select)
    if select is None or tracing.remove_conjunct(node, probe=True) is None or node.find_ancestor(exp.Having) is not None:
        return []
    if isinstance(node, exp.EQ) and isinstance(node.this, exp.Column) and isinstance(node.expression, exp.Column):
        return []  # a join equality: the join near-misses
    mutant = _dropped(tree, nodes, node, dialect)
    targets = _threshold_targets(tree, nodes, node, mutant, dialect, names, tables) \
        + _outside_targets(tree, nodes, select, node, names, tables, dialect) \
        + _failing_targets(tree, nodes, select, node, names, tables, dialect)
    if not mutant or mutant == sql or not targets:
        return []
    return [NearMiss(digest, sql, mutant, f"the gold against itself without `{_short(node, dialect)}`", targets)]


def _outside_targets(tree: Any, nodes: list[Any], select: Any, node: Any, names: Any, tables: dict[str, Any],
                     dialect: str) -> tuple[Target, ...]:
    """A list of literals, ``p_container IN ('SM CASE', 'SM BOX', ...)``, dropped (TPC-H q19,
    where every pinned row that passes the rest of its branch has a listed container): a
    reaching row but for it, its free column set in place to the column's least or greatest
    value (a value the column holds, outside the list where the list is not the domain)."""
    from sqlglot import exp
    if not isinstance(node, exp.In) or node.args.get("query") is not None or not isinstance(node.this, exp.Column) \
            or not node.expressions or not all(isinstance(e, exp.Literal) for e in node.expressions):
        return ()
    out: list[Target] = []
    for table, column, path in tracing.trace(select, node.this, names):
        t = tables.get(table)
        rows_sql = tracing.rows_sql(tree, nodes, path, dialect, drop=node)
        if t is not None and column in t.free and rows_sql is not None:
            out.append(Target(table, column, rows_sql, ("outside=least", "outside=greatest")))
    return tuple(out[:2])


def _failing_targets(tree: Any, nodes: list[Any], select: Any, node: Any, names: Any, tables: dict[str, Any],
                     dialect: str) -> tuple[Target, ...]:
    """Per base table of ``select``'s FROM that ``node`` reads: copies of its rows that reach the
    SELECT but fail ``node`` (exact copies, fresh keys); then copies of rows that reach it but
    for ``node`` with the compared reference column moved to another value it holds."""
    from sqlglot import exp
    ctes = tracing.ctes_of(select.root())
    out: list[Target] = []
    read = {tracing.alias_of(c, select, names) for c in tracing.own_columns(node, select)} - {None}
    for source in tracing.from_nodes(select):
        alias = source.alias_or_name.lower()
        if not isinstance(source, exp.Table) or tracing.body_of(source, ctes, names) is not None or alias not in read:
            continue
        t_name = names.table(".".join(p for p in (source.db, source.name) if p).lower())
        if t_name not in names.lower:
            continue
        table = names.originals[t_name]
        t = tables.get(table)
        path = [tracing.Step(select, alias, None)]
        failing = tracing.rows_sql(tree, nodes, path, dialect, drop=node, failing=True)
        if t is None or failing is None:
            continue
        out.append(Target(table, "", failing, ("same",)))
        reaching = tracing.rows_sql(tree, nodes, path, dialect, drop=node)
        for col in tracing.own_columns(node, select):
            column = names.lower[t_name].get(col.name.lower())
            if reaching is not None and column is not None and tracing.alias_of(col, select, names) == alias \
                    and column not in t.free and not _single_key(t, column):
                out.append(Target(table, column, reaching, ("up", "down")))  # a reference: another parent
    out += _pattern_targets(tree, nodes, select, node, names, tables, dialect)
    return tuple(dict.fromkeys(out))[:4]


def _text_only_unique(t: Any, column: str) -> bool:
    """A column observed unique and nothing more (TPC-H's ``s_comment``: every comment differs
    on the pinned data): no declared key; the writer checks it is in no dependency and that the
    text it writes is not in the column yet, so it stays unique."""
    return column in t.observed_unique and (column,) not in [t.primary_key, *t.unique_keys]


def _pattern_targets(tree: Any, nodes: list[Any], select: Any, node: Any, names: Any, tables: dict[str, Any],
                     dialect: str) -> list[Target]:
    """``x NOT IN (SELECT y FROM t WHERE c LIKE 'p')`` dropped (TPC-H q16's suppliers with
    complaints): where no ``t`` row matches the pattern (none of the pinned suppliers has such
    a comment), every row passes the ``NOT IN`` and no row fails it to copy. It shows on a
    ``t`` row that a reaching row refers to (``y`` = its ``x``) with its free text column ``c``
    set to a text the pattern matches, made from the pattern itself (``%`` and ``_`` filled):
    the reaching row then fails the conjunct. The same row tells the gold from its pattern
    changed. A text made from a gold's literal, not from the pinned column: a comment is free
    text, and no correct query can rely on what it does not say."""
    from sqlglot import exp
    inner = node.this if isinstance(node, exp.Not) else None
    if not isinstance(inner, exp.In) or not isinstance(inner.this, exp.Column):
        return []
    query = inner.args.get("query")
    sub = query.this if isinstance(query, exp.Subquery) else query
    if not isinstance(sub, exp.Select) or len(sub.expressions) != 1 or not isinstance(sub.expressions[0], exp.Column):
        return []
    sources = tracing.from_nodes(sub)
    alias = tracing.alias_of(inner.this, select, names)
    outer = next((s for s in tracing.from_nodes(select) if s.alias_or_name.lower() == alias), None)
    if len(sources) != 1 or not isinstance(sources[0], exp.Table) or not isinstance(outer, exp.Table):
        return []
    t_name = names.table(".".join(p for p in (sources[0].db, sources[0].name) if p).lower())
    if t_name not in names.lower:
        return []
    table = names.originals[t_name]
    t = tables.get(table)
    where = sub.args.get("where")
    reaching = tracing.rows_sql(tree, nodes, [tracing.Step(select, alias or "", None)], dialect, drop=node)
    if t is None or where is None or reaching is None:
        return []
    from .witnesses import split_terms
    out = []
    for cond in split_terms(where.this, exp.And):
        if not isinstance(cond, exp.Like) or not isinstance(cond.this, exp.Column) \
                or not isinstance(cond.expression, exp.Literal) or not cond.expression.is_string:
            continue
        column = names.lower[t_name].get(cond.this.name.lower())
        text = " ".join(cond.expression.this.replace("%", " ").replace("_", "x").split())
        if column is None or not text or not (column in t.free or _text_only_unique(t, column)):
            continue
        y, x = sub.expressions[0].sql(dialect=dialect), exp.column(inner.this.name, table=alias).sql(dialect=dialect)
        rows_sql = (f"SELECT rowid FROM {sources[0].sql(dialect=dialect)} WHERE {y} IN (SELECT {x} FROM "
                    f"{outer.sql(dialect=dialect)} WHERE rowid IN ({reaching})) ORDER BY rowid LIMIT {tracing.CANDIDATE_ROWS}")
        out.append(Target(table, column, rows_sql, (f"like={text}",)))
    return out


def _having_near_misses(sql: str, tree: Any, nodes: list[Any], having: Any, dialect: str, names: Any,
                        tables: dict[str, Any], digest: str) -> list[NearMiss]:
    """A HAVING bound of ``count``, ``sum`` or ``avg`` (``count(*) >= 3``, ``sum(qty) > 10``)
    moved one unit or flipped: it shows only on a group whose aggregate is exactly the bound or
    the moved one, which a small database rarely holds (no department of exactly three
    instructors). A group is *pushed* there: copies of one of its rows (``count``), or one row's
    argument set so the group's sum or average lands on it (``sum``, ``avg``: a free column,
    within the pinned domain). Where no such group is made, the near-miss is left alone."""
    from sqlglot import exp

    from .witnesses import neighbours, split_terms
    select = having.parent
    if not isinstance(select, exp.Select):
        return []
    out: list[NearMiss] = []
    for cond in split_terms(having.this, exp.And):
        if type(cond) not in _FLIPS and not isinstance(cond, exp.EQ):
            continue
        agg, lit = cond.this, cond.expression
        if isinstance(lit, exp.Cast):
            lit = lit.this
        if not isinstance(agg, (exp.Count, exp.Sum, exp.Avg)) or not isinstance(lit, exp.Literal) or lit.is_string \
                or isinstance(agg.this, exp.Distinct):
            continue
        values = neighbours(lit.this)
        if len(values) < 3:
            continue
        targets = _push_targets(tree, nodes, select, agg, values, names, tables, dialect)
        if not targets:
            continue
        shown = _short(cond, dialect)
        mutants = [(_replaced(tree, nodes, lit, exp.Literal.number(v), dialect), f"`{shown}` against its bound moved to {v}")
                   for v in values[1:]]
        if type(cond) in _FLIPS:
            mutants.append((_replaced(tree, nodes, cond, _FLIPS[type(cond)](this=cond.this.copy(),
                                                                            expression=cond.expression.copy()), dialect),
                            f"`{shown}` against its comparison flipped"))
        out += [NearMiss(digest, sql, m, what, targets) for m, what in mutants if m and m != sql]
    return out


def _push_targets(tree: Any, nodes: list[Any], select: Any, agg: Any, values: list[str], names: Any,
                  tables: dict[str, Any], dialect: str) -> tuple[Target, ...]:
    """Where a group of ``select`` is pushed for a HAVING bound on ``agg``: per base table of its
    FROM (``count``: each, the largest first; ``sum``/``avg``: the argument's, a free column), a
    query of (its row id, the row's group's aggregate, the group's rows, the argument) over the
    rows reaching ``select``, by a window partitioned by the GROUP BY."""
    from sqlglot import exp

    from .witnesses import with_key, with_of
    edits = tuple(f"push={v}" for v in values)
    ctes = tracing.ctes_of(select.root())
    sources = {s.alias_or_name.lower(): s for s in tracing.from_nodes(select)}
    base: dict[str, str] = {}
    lowered: dict[str, str] = {}  # alias -> the catalog's lower-case name of its table
    for alias, source in sources.items():
        if isinstance(source, exp.Table) and tracing.body_of(source, ctes, names) is None:
            t_name = names.table(".".join(p for p in (source.db, source.name) if p).lower())
            if t_name in names.lower:
                base[alias], lowered[alias] = names.originals[t_name], t_name
    if isinstance(agg, exp.Count):
        kind, column = "count", ""
        aliases = sorted(base, key=lambda a: -getattr(tables.get(base[a]), "rows", 0))[:2]
    else:
        arg = agg.this
        alias = tracing.alias_of(arg, select, names) if isinstance(arg, exp.Column) else None
        t = tables.get(base.get(alias or "", ""))
        column = next((c for c in t.columns if c.lower() == arg.name.lower()), "") if t is not None else ""
        if alias is None or t is None or column not in t.free:
            return ()
        kind, aliases = ("sum" if isinstance(agg, exp.Sum) else "avg"), [alias]
    out = []
    for alias in aliases:
        q = select.copy()
        for arg_name in ("group", "having", "order", "limit", "offset", "qualify", "distinct", "windows"):
            q.set(arg_name, None)
        group = select.args.get("group")
        partition = [g.copy() for g in group.expressions] if group is not None else []
        over = {"partition_by": partition} if partition else {}
        exprs = [exp.alias_(exp.column("rowid", table=alias), "w0"),
                 exp.alias_(exp.Window(this=agg.copy(), **over), "s"),
                 exp.alias_(exp.Window(this=exp.Count(this=exp.Star()), **over), "n")]
        if column:
            exprs.append(exp.alias_(exp.column(column, table=alias), "v"))
        q.set("expressions", exprs)
        root_with = with_of(select.root())
        if root_with is not None and with_of(q) is None:
            q.set(with_key(), root_with.copy())
        try:
            inner = q.sql(dialect=dialect, copy=False)  # ``q`` and all it holds are this loop's own copies
        except Exception:  # sqlglot cannot render it
            continue
        rows_sql = (f"SELECT w0, s, n{', v' if column else ''} FROM ({inner}) AS reaching WHERE w0 IS NOT NULL "
                    f"ORDER BY (w0 * 2654435761 + ?) % 4294967291, w0, s, n{', v' if column else ''} "
                    f"LIMIT {PUSH_CANDIDATES}")
        own = names.lower[lowered[alias]]
        moves = tuple(dict.fromkeys(own[g.name.lower()] for g in (group.expressions if group is not None else [])
                                    if isinstance(g, exp.Column) and tracing.alias_of(g, select, names) == alias
                                    and g.name.lower() in own))
        out.append(Target(base[alias], column, rows_sql, edits, push=kind, moves=moves if kind == "count" else ()))
    return tuple(out)


def _swaps(node: Any) -> list[tuple[Any, tuple[str, ...]]]:
    """(the swapped aggregate, the edits that separate it) for each swap of ``node``."""
    from sqlglot import exp
    arg = node.this
    if arg is None or isinstance(arg, exp.Star) or node.find_ancestor(exp.Window) is not None \
            or type(node) not in (exp.Sum, exp.Avg, exp.Min, exp.Max, exp.Count):
        return []
    if isinstance(node, exp.Count):
        if isinstance(arg, exp.Distinct):
            if len(arg.expressions) != 1:
                return []
            return [(exp.Count(this=arg.expressions[0].copy()), ("same", "up"))]
        return [(exp.Count(this=exp.Distinct(expressions=[arg.copy()])), ("same", "up")),
                (exp.Sum(this=arg.copy()), ("up", "same"))]
    if isinstance(arg, exp.Distinct):
        return []
    if isinstance(node, (exp.Min, exp.Max)):
        extreme: Any = exp.Max if isinstance(node, exp.Min) else exp.Min
        return [(extreme(this=arg.copy()), ("least", "greatest", "up", "down"))]
    other: Any = exp.Avg if isinstance(node, exp.Sum) else exp.Sum
    out: list[tuple[Any, tuple[str, ...]]] = [(other(this=arg.copy()), ("up", "same", "down"))]
    if isinstance(node, exp.Sum):
        out.append((exp.Count(this=arg.copy()), ("up", "same")))
    return out


def _argument(node: Any) -> Any:
    from sqlglot import exp
    arg = node.this
    return arg.expressions[0] if isinstance(arg, exp.Distinct) and arg.expressions else arg


def _short(node: Any, dialect: str) -> str:
    text = " ".join(node.sql(dialect=dialect).split())
    return text if len(text) <= 60 else text[:57] + "..."


def _replaced(tree: Any, nodes: list[Any], node: Any, new: Any, dialect: str) -> str | None:
    copy = tree.copy()
    twin = list(copy.dfs())[_index(nodes, node)]
    twin.replace(new.copy())
    try:
        return str(copy.sql(dialect=dialect, copy=False))  # a private tree: rendered without a second copy
    except Exception:  # sqlglot cannot render it: no near-miss
        return None


def _dropped(tree: Any, nodes: list[Any], node: Any, dialect: str) -> str | None:
    """The gold without the conjunct ``node``: a conjunct of a WHERE, or of an inner join's ON
    of two conjuncts or more (an ON left empty is no query a model writes)."""
    if tracing.remove_conjunct(node, probe=True) is None:
        return None
    copy = tree.copy()
    tracing.remove_conjunct(list(copy.dfs())[_index(nodes, node)])
    try:
        return str(copy.sql(dialect=dialect, copy=False))  # a private tree: rendered without a second copy
    except Exception:  # sqlglot cannot render it: no near-miss
        return None


def _index(nodes: list[Any], node: Any) -> int:
    return next(i for i, n in enumerate(nodes) if n is node)


# --- tracing a column to the base table it reads -----------------------------------------

def _targets(tree: Any, nodes: list[Any], select: Any, columns: list[Any], edits: tuple[str, ...], names: Any,
             tables: dict[str, Any], dialect: str, references: bool = False, grouped: bool = False) -> tuple[Target, ...]:
    """``grouped``: an aggregate's argument; a copy of a base table ``select`` reads directly keeps
    the group keys of ``select`` that are unique in that table only by chance (``_unique_by_chance``)."""
    out: list[Target] = []
    for col in columns:
        for table, column, path in tracing.trace(select, col, names):
            rows_sql = tracing.rows_sql(tree, nodes, path, dialect)
            t = tables.get(table)
            if rows_sql is None or t is None:
                continue
            keep = _chance_keys(select, path, t, names) if grouped else ()
            # a key or reference column: an exact copy (fresh keys), or for a join's reference
            # another value the column holds (``SeparatingWriter`` checks it is one)
            kept = edits if column in t.free or _unique_by_chance(t, column) else tuple(
                e for e in edits if e == "same" or (e in ("up", "down") and references and not _single_key(t, column)))
            target = Target(table, column, rows_sql, kept, keep)
            if kept and target not in out:
                out.append(target)
    return tuple(out[:4])


def _unique_by_chance(t: Any, column: str) -> bool:
    from .witnesses import unique_by_chance
    return unique_by_chance(t, column)


def _chance_keys(select: Any, path: list[Any], t: Any, names: Any) -> tuple[str, ...]:
    """The GROUP BY columns of ``select`` that read the path's base table directly (no derived
    table between) and are unique in it only by chance."""
    from sqlglot import exp
    group = select.args.get("group")
    if group is None or len(path) != 1:
        return ()
    out = []
    for g in group.expressions:
        if isinstance(g, exp.Column) and tracing.alias_of(g, select, names) == path[0].alias:
            column = next((c for c in t.columns if c.lower() == g.name.lower()), None)
            if column is not None and _unique_by_chance(t, column) and column not in out:
                out.append(column)
    return tuple(out)


def _single_key(t: Any, column: str) -> bool:
    return column in t.observed_unique or (column,) in [t.primary_key, *t.unique_keys]


# --- writing them into a variant ----------------------------------------------------------

class SeparatingWriter:
    """Writes the separating witnesses of the golds into one variant: per near-miss the
    variant does not tell apart, copies tried until one does (kept) or none is left."""

    def __init__(self, con: Any, engine: str, tables: dict[str, Any], grouper: Any,
                 allowed: Callable[[str, str, str], bool]) -> None:
        self.con, self.engine, self.tables, self.grouper, self.allowed = con, engine, tables, grouper, allowed
        self.sentences: dict[str, list[str]] = {}
        self.written = 0
        self.peers: dict[int, Any] = {}  # per row id of the current target, the value it is compared with
        #: per gold, the near-misses this variant tells apart (by its data or a kept edit): a later
        #: edit is kept only if they stay told apart (``_attempt``)
        self.separated: dict[str, list[NearMiss]] = {}
        #: per seed's reach query, the outer rows found reaching the output: the near-misses of one
        #: subquery share it, and neither a seed's copies nor a threshold's values move it
        self.reaching: dict[str, list[int]] = {}

    def run(self, sql: str, params: list[Any] | None = None, work_s: float = CHECK_WORK_S) -> list[tuple[Any, ...]] | None:
        """A query's rows on the variant, or None (an error, or past the work of ``work_s``:
        ``engines.watchdog.bounded_rows``, the same at any load)."""
        from ..engines.watchdog import Work, bounded_rows
        try:
            return bounded_rows(self.con, sql, params or [], work=Work.like(work_s, CHECK_WORK_S), what="separators")
        except Exception:  # a form this engine refuses, or past its work (or the net): no answer
            return None

    def write_all(self, misses: list[NearMiss], index: int) -> None:
        golds = list(dict.fromkeys(m.gold for m in misses))
        gold_rows: dict[str, list[tuple[Any, ...]] | None] = {}
        # per gold, the conditional swaps tried, where the condition is met and where not (MAX_NEAR_MISSES each)
        unmet: dict[tuple[str, bool], int] = {}
        for m in _rotated(misses, index):
            if (golds.index(m.gold) + index) % SPREAD:
                continue
            if m.unmet:  # a conditional aggregate: where no reaching row meets its condition, moved to one
                if min(unmet.get((m.gold, k), 0) for k in (False, True)) >= MAX_NEAR_MISSES:
                    continue
                met = self.run(m.unmet)
                if met is None or unmet.get((m.gold, bool(met)), 0) >= MAX_NEAR_MISSES or met and not m.met:
                    continue
                unmet[(m.gold, bool(met))] = unmet.get((m.gold, bool(met)), 0) + 1
                m = replace(m, targets=m.met) if met else m  # met somewhere: completed where the output shows
            if m.gold not in gold_rows:
                # past SLOW_GOLD_WORK_S: its near-misses would cost more than they add
                gold_rows[m.gold] = self.run(m.gold_sql, work_s=SLOW_GOLD_WORK_S)
            mine = gold_rows[m.gold]
            if mine is None or not _informative(mine) and not any(t.threshold for t in m.targets):
                continue  # a threshold is tried on a gold that answers nothing too, and leaves it so
            theirs = self.run(m.sql)
            if theirs is None:  # broken here
                continue
            if _differ(mine or [], theirs, m.order):  # already told apart: kept so (``_attempt``)
                self.separated.setdefault(m.gold, []).append(m)
                continue
            try:
                separated = self._separate(m, index, not _informative(mine))
            except Exception:  # an engine error outside a trial's own handling: this near-miss gets none
                separated = False
            if separated:
                self.separated.setdefault(m.gold, []).append(m)
                gold_rows.clear()  # a row was added or moved: every gold's answer may have moved

    def _separate(self, m: NearMiss, index: int, empty: bool = False) -> bool:
        """Try each target's edits, each on its candidate rows in turn, until one separates.
        ``empty``: the gold answers nothing here; only a threshold target is tried (``_threshold``)."""
        from .clones import _salt_of
        trials = 0
        for target in m.targets:
            if empty and not target.threshold:
                continue
            if target.threshold:
                if trials >= MAX_TRIALS:
                    return False
                done, tried = self._threshold(m, target, index, empty)
                trials += tried
                if done:
                    return True
                continue
            if target.push:
                if trials >= MAX_TRIALS:
                    return False
                pushed, tried = self._push(m, target, index)
                trials += tried
                if pushed:
                    return True
                continue
            found = self.run(target.rows_sql, [_salt_of(index)]) or []
            rows = list(dict.fromkeys(int(r[0]) for r in found))  # an ordered query repeats a row (a join's duplicates)
            self.peers = {int(r[0]): r[1] for r in found if len(r) > 1}  # ``pair=`` of two tables
            # a row an earlier witness wrote is edited on a copy of it, and last: TPC-DS q72's sale shipped
            # six days on (``> d1.d_date + 5`` against ``+ 6``) was the first reaching row, and its quantity
            # set in place to the stock level took it out of the output, and the near-miss it was written for
            written = self.grouper.cloner.rows.get(target.table, set()) | self.grouper.rows.get(target.table, set())
            rows = [r for r in rows if r not in written] + [r for r in rows if r in written]
            for edit in target.edits:
                for rowid in rows[:EDGE_ROWS] if "=" in edit and not edit.startswith("pair=") else rows:
                    if trials >= MAX_TRIALS:
                        return False
                    if edit.startswith("complete="):  # the shown group, in every read of its CTE
                        trials += 1
                        if not self._attempt(m, lambda: self._complete(target, rowid, edit, index)):
                            break
                        return self._kept(m, _sentence(target, edit, None, m.what))
                    if edit.startswith("when="):  # a conditional aggregate: moved to a parent meeting it
                        trials += 1
                        moved_to: list[Any] = []
                        if not self._attempt(m, lambda: self._moved_to_parent(target, rowid, edit, moved_to)):
                            continue
                        return self._kept(m, _sentence(target, edit, moved_to[0] if moved_to else None, m.what))
                    value = self._value(target, rowid, edit)
                    if edit != "same" and value is None:
                        continue
                    trials += 1
                    moved = {} if edit == "same" else {target.column: value}
                    in_place = edit.startswith(("set=", "like=", "pair=", "outside=")) and rowid not in written
                    if not self._try(m, target.table, rowid, moved, in_place=in_place, keep=target.keep):
                        continue
                    return self._kept(m, _sentence(target, edit, value, m.what))
        return False

    def _moved_to_parent(self, target: Target, rowid: int, edit: str, moved_to: list[Any]) -> bool:
        """A ``when=`` edit: a copy of reaching row ``rowid`` with its reference moved to the least
        key of a parent row meeting the aggregate's condition; where the variant holds none (a
        subset keeps the dates its facts reference), that pinned row is copied in first, with
        what it references (``CloneWriter.import_row``). The key is appended to ``moved_to``."""
        parent, key, sql = edit.split("=", 1)[1].split("|", 2)
        value = self._parent_key(parent, key, sql, [])
        if value is None or not self.allowed(target.table, target.column, _plain(value)):
            return False
        moved_to.append(value)
        return self._copy(target.table, rowid, {target.column: value})

    def _parent_key(self, parent: str, key: str, sql: str, params: list[Any]) -> Any:
        """The key ``sql`` (``w0``: a key, ``w1``: a row id) finds first on the variant; where it
        finds none, the first pinned row it finds is copied in, with what it references; None
        where neither gives one."""
        from .constraints import qualified, quote
        found = self.run(sql, params)
        if found:
            return found[0][0]
        cloner = self.grouper.cloner
        for _, pinned_rowid in (cloner.pinned(sql, params) or []) if cloner.pinned is not None else []:
            added: list[tuple[str, int]] = []
            row = cloner.import_row(parent, int(pinned_rowid), added)  # None: its key is another row's here
            if row is not None and cloner.kept(added):
                return self.con.execute(f"SELECT {quote(key)} FROM {qualified(parent, self.engine)} "
                                        f"WHERE rowid = {int(row)}").fetchone()[0]
        return None

    def _parent_made(self, parent: str, key: str, value: Any, setting: dict[str, str]) -> Any:
        """The key of a copy of the ``parent`` row keyed ``value``, with fresh keys and ``setting``
        (free columns, values in the pinned domain): a variant's dates hold boundary values, and
        the Friday of a week may be none of them. None where it cannot be made."""
        from .constraints import qualified, quote
        t = self.tables[parent]
        if not setting or not all(c in t.free and self.allowed(parent, c, v) for c, v in setting.items()):
            return None
        found = self.con.execute(f"SELECT rowid FROM {qualified(parent, self.engine)} WHERE {quote(key)} = ? LIMIT 1",
                                 [value]).fetchone()
        written = self.grouper.cloner.clone(parent, int(found[0]), dict(setting), given=frozenset(setting)) \
            if found is not None else None
        return written.get(key) if written else None

    def _complete(self, target: Target, rowid: int, edit: str, index: int) -> bool:
        """A ``complete=`` edit (a conditional aggregate's swap behind a derived table or CTE,
        where the groups the output shows do not meet the condition): the fact row of the first
        output row through each read of the CTE (``rowid``, then ``target.readers``'), copied
        with its reference moved to a parent row meeting the condition in the same group (the
        Friday of that week), twice through the first read and once through each other. The
        swap then differs: q59 divides this year's Friday sum by next year's, and a ratio of sums
        over two rows and one is not that of averages; with one read, two rows of that day."""
        from .clones import _salt_of
        from .constraints import qualified, quote
        parent, key, grouped, setting, sql = edit.split("=", 1)[1].split("|", 4)
        groups = ", ".join(quote(c) for c in json.loads(grouped))
        prel = qualified(parent, self.engine)
        rows = [rowid]
        for reader in target.readers:
            found = self.run(reader, [_salt_of(index)])
            if not found:
                return False
            rows.append(int(found[0][0]))
        rel = qualified(target.table, self.engine)
        for i, row in enumerate(rows):
            own = self.con.execute(f"SELECT {quote(target.column)} FROM {rel} WHERE rowid = {row}").fetchone()
            group = self.con.execute(f"SELECT {groups} FROM {prel} WHERE {quote(key)} = ?", [own[0]]).fetchone() \
                if own is not None and own[0] is not None else None
            if own is None or group is None:
                return False
            value = self._parent_key(parent, key, sql, list(group))
            if value is None:  # a key of 0 is a key
                value = self._parent_made(parent, key, own[0], json.loads(setting))
            if value is None or not self.allowed(target.table, target.column, _plain(value)):
                return False
            for _ in range(2 if i == 0 else 1):
                if not self._copy(target.table, row, {target.column: value}):
                    return False
        return True

    def _value(self, target: Target, rowid: int, edit: str) -> Any:
        """The value ``edit`` gives the column on this variant, in the pinned domain; None if none."""
        from .constraints import qualified, quote
        rel, col = qualified(target.table, self.engine), quote(target.column)
        if edit == "same":
            return None
        if edit.startswith("pair="):  # the row's own value of the other column (``_pair_near_misses``)
            t = self.tables[target.table]
            twin = edit.split("=", 1)[1]
            if target.column not in t.free or (twin and twin not in t.columns):
                return None
            own = self.con.execute(f"SELECT {quote(twin)} FROM {rel} WHERE rowid = {int(rowid)}").fetchone() \
                if twin else (self.peers.get(rowid),)  # of two tables: the value the row is joined to
            if own is None or own[0] is None or not self.allowed(target.table, target.column, _plain(own[0])):
                return None
            return own[0]
        if edit.startswith("like="):  # a text a gold's pattern matches, on a free text column (``_pattern_targets``)
            t, text = self.tables[target.table], edit.split("=", 1)[1]
            if target.column in t.free:
                return text
            if not _text_only_unique(t, target.column) or self._in_dependency(target.table, target.column) \
                    or self.con.execute(f"SELECT 1 FROM {rel} WHERE {col} = ? LIMIT 1", [text]).fetchone():
                return None
            return text
        if edit.startswith("outside="):  # a dropped list of literals: the free column's extreme, in place
            if target.column not in self.tables[target.table].free:
                return None
            found = self.con.execute(f"SELECT {'min' if edit.endswith('least') else 'max'}({col}) FROM {rel}").fetchone()
            if found is None or found[0] is None or not self.allowed(target.table, target.column, _plain(found[0])):
                return None
            return found[0]
        if "=" in edit:  # a literal's edge, as text: in the pinned domain, on a free column (or a copy's key)
            text = edit.split("=", 1)[1]
            t = self.tables[target.table]
            keyed = (edit.startswith("copy=") or _unique_by_chance(t, target.column)) \
                and target.column in t.key_columns and not self._in_dependency(target.table, target.column)
            if (target.column not in t.free and not keyed) or not self.allowed(target.table, target.column, text):
                return None
            return _typed(text, self.tables[target.table].columns.get(target.column, "")) if self.engine == "sqlite" \
                else text
        if not self._movable(target.table, target.column):
            return None
        try:
            if edit in ("least", "greatest"):
                found = self.con.execute(f"SELECT {'min' if edit == 'least' else 'max'}({col}) FROM {rel}").fetchone()
            else:
                own = self.con.execute(f"SELECT {col} FROM {rel} WHERE rowid = {rowid}").fetchone()
                if own is None or own[0] is None:
                    return None
                op, agg = (">", "min") if edit == "up" else ("<", "max")
                found = self.con.execute(f"SELECT {agg}({col}) FROM {rel} WHERE {col} {op} ?", [own[0]]).fetchone()
        except Exception:  # a type the engine cannot order: no such value
            return None
        value = found[0] if found else None
        if value is None or not self.allowed(target.table, target.column, _plain(value)):
            return None
        return value

    def _try(self, m: NearMiss, table: str, rowid: int, moved: dict[str, Any], in_place: bool = False,
             keep: tuple[str, ...] = ()) -> bool:
        """Copy the row (``in_place``: set its free column instead), keep the change if the gold
        (still with a value) and ``m`` now differ."""
        return self._attempt(m, lambda: self._set(table, rowid, moved) if in_place
                             else self._copy(table, rowid, moved, keep))

    def _push(self, m: NearMiss, target: Target, index: int) -> tuple[bool, int]:
        """Push a group reaching the HAVING to each ``push=`` value (in order) and keep the first
        push that separates: ``count``, copies of one of its rows (fewest needed first); ``sum``
        or ``avg``, one row's argument moved by the gap (smallest move first), in the pinned
        domain. (separated, trials spent)"""
        from .clones import _salt_of
        rows = self.run(target.rows_sql, [_salt_of(index)]) or []
        t = self.tables[target.table]
        integral = any(w in t.columns.get(target.column, "").upper() for w in ("INT",))
        trials = 0
        # rows an earlier witness wrote (a group of one made for ``>= 1``) are not pushed: that
        # would undo the separation they were written for
        written = self.grouper.cloner.rows.get(target.table, set()) | self.grouper.rows.get(target.table, set())
        rows = [r for r in rows if r[0] not in written]
        for edit in target.edits:
            goal = Decimal(edit.split("=", 1)[1])
            plans: list[tuple[Decimal, int, dict[str, Any], int, Any]] = []
            seen: set[Any] = set()
            for row in rows:
                rowid, agg, n = row[0], row[1], row[2]
                if rowid is None or agg is None or not n:
                    continue
                gap = goal - _decimal(agg)
                if target.push == "count":
                    if gap != gap.to_integral_value() or not (1 <= gap <= MAX_PUSH or gap == -1 and goal >= 1 and target.moves) \
                            or agg in seen:
                        continue
                    seen.add(agg)
                    plans.append((abs(gap), int(rowid), {}, int(gap), agg))
                    continue
                own = row[3] if len(row) > 3 else None
                if own is None or isinstance(own, (str, bytes)):
                    continue
                landed = _decimal(own) + gap * (int(n) if target.push == "avg" else 1)
                if landed == _decimal(own) or (integral or isinstance(own, int)) and landed != landed.to_integral_value():
                    continue
                value: Any = int(landed) if integral or isinstance(own, int) else float(landed)
                if not self.allowed(target.table, target.column, _plain(value)):
                    continue
                plans.append((abs(landed - _decimal(own)), int(rowid), {target.column: value}, 1, (agg, n)))
            # one plan per group (its aggregate and size stand for it): the two rows of one group
            # were tried in turn, and where an edit of that group would undo an earlier
            # separation (``_attempt``), no other group was
            first: dict[Any, tuple[Decimal, int, dict[str, Any], int, Any]] = {}
            for plan in sorted(plans, key=lambda p: (p[0], p[1])):
                first.setdefault(plan[4], plan)
            for _, rowid, moved, copies, _group in list(first.values())[:EDGE_ROWS]:
                if trials >= MAX_TRIALS:
                    return False, trials
                trials += 1

                def write(rowid: int = rowid, moved: dict[str, Any] = moved, copies: int = copies) -> bool:
                    if target.push == "count" and copies < 0:
                        moved.update(self._out_of_group(target, rowid))
                        return bool(moved) and self._set(target.table, rowid, moved, moving=True)
                    if target.push == "count":
                        return all(self._copy(target.table, rowid, {}) for _ in range(copies))
                    return self._set(target.table, rowid, moved)
                done = self._attempt(m, write)
                if done:
                    name = target.table.rsplit(".", 1)[-1]
                    how = (f"a {name} row moved out of it ({', '.join(f'{c} set to {_plain(v)}' for c, v in moved.items())})"
                           if copies < 0 else
                           f"{copies} cop{'y' if copies == 1 else 'ies'} of a {name} row" if target.push == "count"
                           else f"a {name} row's {target.column} set to {_plain(next(iter(moved.values())))}")
                    return self._kept(m, f"a group pushed to {target.push} = {edit.split('=', 1)[1]} by {how}: "
                                         f"separates {m.what}"), trials
        return False, trials

    def _threshold(self, m: NearMiss, target: Target, index: int, empty: bool = False) -> tuple[bool, int]:
        """Set the compared column on the rows reaching the outer SELECT (``thresholds.moves``), the
        near-miss keeping fewer rows, then more; keep the first that separates. Else, with a
        ``seed``, per outer row that reaches the output: copies of an inner row at the changed
        bound's edge values, given that row's correlated values, then the column set. (separated,
        trials)"""
        from .clones import _salt_of
        from .thresholds import MAX_REACH_CHECKS, MAX_SEEDED, moves
        t = self.tables[target.table]
        if target.column not in t.free:
            return False, 0
        integral = "INT" in t.columns.get(target.column, "").upper()

        def chosen(fewer: bool, only: int | None = None) -> dict[int, Any]:
            rows = self.run(target.rows_sql) or []
            out = moves(rows, target.threshold, fewer, integral,
                        lambda v: self.allowed(target.table, target.column, _plain(v)))
            if only is not None and fewer:
                out.update(moves([r for r in rows if r[0] == only], target.threshold, fewer, integral,
                                 lambda v: self.allowed(target.table, target.column, _plain(v)), True))
            return out

        def set_all(values: dict[int, Any]) -> bool:
            return bool(values) and all(self._set(target.table, r, {target.column: v}) for r, v in values.items())

        if target.edits[0].startswith("summed="):
            return self._summed(m, target, integral, empty)
        trials = 0
        # where the gold answers nothing it is left so (``empty_ok``): a near-miss answering rows is told
        # apart by that already (TPC-H q20 without its comparison, on a subset keeping one Canadian
        # forest pair and no 1994 line of it), and a gold given a row would lose it
        for edit in ("more",) if empty else target.edits:
            values = chosen(edit == "fewer")
            if not values:
                continue
            trials += 1
            if self._attempt(m, lambda: set_all(values), empty_ok=empty):
                return self._threshold_kept(m, target, len(values), False), trials
        seed = target.seed
        if seed is None:
            return False, trials
        if seed.reach_sql not in self.reaching:
            found: list[int] = []
            for row in (self.run(target.rows_sql) or [])[:MAX_REACH_CHECKS]:  # each check runs the gold
                if len(found) >= MAX_SEEDED:
                    break
                if row[0] is not None and self.run(seed.reach_sql, [int(row[0])]):
                    found.append(int(row[0]))
            self.reaching[seed.reach_sql] = found
        reaching = self.reaching[seed.reach_sql][:max(0, MAX_TRIALS - trials)]
        source = self.run(seed.inner_sql, [_salt_of(index)]) or []
        # where the gold answers nothing: copies only at the values the changed conjunct drops
        edges = [v for v, q in zip(seed.values, seed.inside) if not empty or self.run(q) == [(0,)]]
        ctype = self.tables[seed.inner_table].columns.get(seed.column, "") if seed.inner_table in self.tables else ""
        for rowid in reaching if source else []:
            trials += 1

            def write(rowid: int = rowid) -> bool:
                own = self.run(seed.outer_sql, [rowid])
                if not own:
                    return False
                sources = [int(r[0]) for r in source]
                for value in edges:  # each from another source row: a row identity takes one copy
                    moved = dict(zip(seed.correlated, own[0]))
                    moved[seed.column] = _typed(value, ctype) if self.engine == "sqlite" else value
                    while sources and not self._copy(seed.inner_table, sources[0], moved):
                        sources.pop(0)
                    if not sources:
                        return False
                    sources.pop(0)
                moved = chosen(not empty, rowid)
                return not moved or set_all(moved)  # the copies alone may do it
            if edges and self._attempt(m, write, empty_ok=empty):
                return self._threshold_kept(m, target, len(edges), True), trials
        return False, trials

    def _summed(self, m: NearMiss, target: Target, integral: bool, empty: bool) -> tuple[bool, int]:
        """A group's sum the outer column is (``thresholds._summed``): per group reaching the outer
        SELECT (at most ``MAX_SUMMED``), its rows moved alike by the gap between the sum and where
        the subquery's values under the gold and under the near-miss will lie around it
        (``thresholds.summed_value``: the group is in the average it is compared with, TPC-DS q81's
        ``avg(ctr_total_return) * 1.2`` per state), asked again after each move, every value
        written within the column's pinned domain; a group holding a copy whose value there a clone
        witness chose is left as it is. (separated, trials)"""
        from .constraints import qualified, quote
        from .thresholds import MAX_SUMMED, SUMMED_ROUNDS, summed_value
        rel, col = qualified(target.table, self.engine), quote(target.column)
        group_sql = target.edits[0].split("=", 1)[1]
        groups = [r for r in self.run(target.rows_sql) or [] if r[0] is not None][:MAX_SUMMED]
        # a copy whose summed column a clone witness chose stays so (a split group's greatest sum: TPC-DS q81)
        held = self.grouper.cloner.chosen.get((target.table, target.column), set())
        trials = 0
        for group in groups:
            trials += 1

            def write(now: tuple[Any, ...] = group) -> bool:  # the group's row as asked before any move
                rowid = int(now[0])
                rows = [int(r[0]) for r in self.run(group_sql, [rowid]) or []]
                if held & set(rows):
                    return False
                before: tuple[Any, ...] | None = None
                for round_ in range(SUMMED_ROUNDS):
                    value = summed_value(now, before, integral) if rows else None
                    if value is None:
                        break
                    owns = {r: v for r, v in self.run(f"SELECT rowid, {col} FROM {rel} WHERE rowid IN "
                                                      f"({', '.join(map(str, rows))})") or []}
                    if len(owns) != len(rows) or None in owns.values():
                        return False
                    share = (value - Decimal(str(now[3]))) / len(rows)
                    for r in rows:
                        new = Decimal(str(owns[r])) + share
                        new = new.to_integral_value() if integral else new.quantize(Decimal("0.01"))
                        if not self.allowed(target.table, target.column, _plain(new)) \
                                or not self._set(target.table, r, {target.column: int(new) if integral else new}):
                            return False
                    before = now
                    if round_ + 1 < SUMMED_ROUNDS:  # its sides asked again: the group is in their average
                        again = [r for r in self.run(target.rows_sql) or [] if r[0] == rowid]
                        if not again:
                            break
                        now = again[0]
                return before is not None
            if self._attempt(m, write, empty_ok=empty):
                return self._kept(m, f"the {target.table.rsplit('.', 1)[-1]} rows of a group reaching the output, "
                                     f"their {target.column} moved so that the group's sum lies between the "
                                     f"subquery's value under the gold and under the near-miss: separates {m.what}"), trials
        return False, trials

    def _threshold_kept(self, m: NearMiss, target: Target, rows: int, seeded: bool) -> bool:
        name = target.table.rsplit(".", 1)[-1]
        return self._kept(m, (f"{rows} copies of a {target.seed.inner_table.rsplit('.', 1)[-1]} row at the edge of "
                              f"the changed bound, tied to a {name} row that reaches the output, whose "
                              if seeded else f"{rows} {name} row{'s' if rows > 1 else ''} reaching the subquery's "
                              f"comparison, ") + f"{target.column} set between the subquery's value under the gold "
                             f"and under the near-miss: separates {m.what}")

    def _kept(self, m: NearMiss, sentence: str) -> bool:
        """Count an edit kept for ``m`` and say it in the record (at most MAX_SENTENCES a gold)."""
        from .clones import MAX_SENTENCES
        self.written += 1
        kept = self.sentences.setdefault(m.gold, [])
        if len(kept) < MAX_SENTENCES:
            kept.append(sentence)
        return True

    def _attempt(self, m: NearMiss, write: Callable[[], bool], empty_ok: bool = False) -> bool:
        """Run ``write`` in a transaction; keep what it wrote if the gold (still with a value) and
        ``m`` now differ, and the gold's near-misses told apart before still are; else roll it
        back. Without that last check the near-misses of one bound undid each other: ``hired_year
        >= 2016`` moved to 2015 set a reaching row to 2015, then the comparison flipped set the
        same row back to 2016, and no variant held a row at 2015 (a HAVING sum pushed to 11 for
        ``> 11``, then back to 10 for ``>= 10``, alike)."""
        saved = ({t: set(r) for t, r in self.grouper.rows.items()},
                 {t: set(r) for t, r in self.grouper.cloner.rows.items()})
        kept = False
        try:
            self._begin()
            if write():
                mine, theirs = self.run(m.gold_sql), self.run(m.sql)
                kept = (_informative(mine) or empty_ok and not mine) and theirs is not None \
                    and _differ(mine or [], theirs, m.order)
                for earlier in self.separated.get(m.gold, []) if kept else []:
                    others = self.run(earlier.sql)
                    if others is None or not _differ(mine or [], others, earlier.order):
                        kept = False
                        break
            self._end(commit=kept)
        except Exception:  # a constraint the engine checks refused the copy: nothing kept
            kept = False
            try:
                self._end(commit=False)
            except Exception:  # no transaction was open
                pass
        if not kept:
            self.grouper.rows, self.grouper.cloner.rows = saved
        return kept

    def _out_of_group(self, target: Target, rowid: int) -> dict[str, Any]:
        """A GROUP BY column of the row and another value that column holds (the next up, else
        down), which takes the row out of its group; {} where none moves (``_movable``)."""
        for column in target.moves:
            for edit in ("up", "down"):
                value = self._value(Target(target.table, column, "", ()), rowid, edit)
                if value is not None:
                    return {column: value}
        return {}

    def _set(self, table: str, rowid: int, moved: dict[str, Any], moving: bool = False) -> bool:
        """Set free columns of an existing row (as a filter witness does, ``witnesses.py``).
        ``moving``: a row leaving its group (``_out_of_group``), whose column may also be a
        reference (to another value it holds: the parent exists; the group keeps a row, so the
        one it leaves keeps a child); a key it is in is checked unique once written."""
        from .constraints import qualified, quote
        t = self.tables[table]
        if moving and moved and all(self._movable(table, c) for c in moved):
            rel = qualified(table, self.engine)
            sets = ", ".join(f"{quote(c)} = ?" for c in moved)
            self.con.execute(f"UPDATE {rel} SET {sets} WHERE rowid = {int(rowid)}", list(moved.values()))
            for key in [k for k in [t.primary_key, *t.unique_keys, *[(c,) for c in t.observed_unique]]
                        if k and set(k) & set(moved)]:
                cols = ", ".join(quote(c) for c in key)
                if self.con.execute(f"SELECT 1 FROM {rel} GROUP BY {cols} HAVING count(*) > 1 LIMIT 1").fetchall():
                    return False  # the caller rolls the move back
            return True
        if not moved or not all(c in t.free or (_unique_by_chance(t, c) and not self._in_dependency(table, c))
                                or self._unique_text(table, c, moved[c]) for c in moved):
            return False
        sets = ", ".join(f"{quote(c)} = " + (f"CAST(? AS {t.columns[c]})" if self.engine == "duckdb" and t.columns[c]
                                             else "?") for c in moved)
        self.con.execute(f"UPDATE {qualified(table, self.engine)} SET {sets} WHERE rowid = {int(rowid)}",
                         list(moved.values()))
        return True

    def _copy(self, table: str, rowid: int, moved: dict[str, Any], keep: tuple[str, ...] = ()) -> bool:
        """A copy of the row: fresh keys or a fresh row identity (``groups``); where a moved
        column is in a key of several columns (an enrollment's course), that key is the moved
        value's to keep unique, checked on the table once written. ``keep``: columns unique only
        by chance (``_unique_by_chance``) the copy keeps as they are: a second row in the group."""
        from .constraints import qualified, quote
        t = self.tables[table]
        rel = qualified(table, self.engine)
        keep = tuple(c for c in keep if c not in moved and not self._in_dependency(table, c))
        if keep:
            own = self.con.execute(f"SELECT {', '.join(quote(c) for c in keep)} FROM {rel} "
                                   f"WHERE rowid = {int(rowid)}").fetchone()
            if own is None:
                return False
            moved = {**dict(zip(keep, own)), **moved}
        relaxed = set(keep) | {c for c in moved if _unique_by_chance(t, c) and not self._in_dependency(table, c)}
        keys = [k for k in [t.primary_key, *t.unique_keys, *[(c,) for c in t.observed_unique]]
                if k and set(k) & set(moved) and not set(k) <= relaxed]
        if not keys and not relaxed:
            return bool(self.grouper.copy_row(table, rowid, moved))
        if self.grouper.cloner.clone(table, rowid, moved, given=frozenset(moved)) is None:
            return False
        for key in keys:
            cols = ", ".join(quote(c) for c in key)
            if self.con.execute(f"SELECT 1 FROM {rel} GROUP BY {cols} HAVING count(*) > 1 LIMIT 1").fetchall():
                return False  # the caller rolls the copy back
        return True

    def _unique_text(self, table: str, column: str, value: Any) -> bool:
        """A text for a column observed unique and nothing more, in no dependency, that no row
        holds yet: written, the column stays unique (``_pattern_targets``)."""
        from .constraints import qualified, quote
        t = self.tables[table]
        if not isinstance(value, str) or not _text_only_unique(t, column) or self._in_dependency(table, column):
            return False
        return self.con.execute(f"SELECT 1 FROM {qualified(table, self.engine)} WHERE {quote(column)} = ? LIMIT 1",
                                [value]).fetchone() is None

    def _in_dependency(self, table: str, column: str) -> bool:
        """Whether the column is on either side of a dependency (declared, observed, a gold's join)."""
        deps = list(self.grouper.cloner.all_deps) + list(getattr(self.grouper.cloner, "links", []) or [])
        return any((d.child == table and column in d.child_columns) or (d.parent == table and column in d.parent_columns)
                   for d in deps)

    def _movable(self, table: str, column: str) -> bool:
        """A free column, one unique only by chance (in no dependency), or the child side of a
        dependency (another value it holds keeps it)."""
        t = self.tables[table]
        if column in t.free or (_unique_by_chance(t, column) and not self._in_dependency(table, column)):
            return True
        return any(
            d.child == table and column in d.child_columns and d.origin != "total" for d in self.grouper.cloner.all_deps)

    def _begin(self) -> None:
        if self.engine == "duckdb":
            self.con.execute("BEGIN TRANSACTION")
        else:
            self.con.commit()  # the writes before stay; the copy opens a transaction of its own

    def _end(self, commit: bool) -> None:
        if self.engine == "duckdb":
            self.con.execute("COMMIT" if commit else "ROLLBACK")
        elif commit:
            self.con.commit()
        else:
            self.con.rollback()


def _rotated(misses: list[NearMiss], index: int) -> list[NearMiss]:
    """``misses`` with each gold's conditional swaps last, from the variant's turn on: at most
    MAX_NEAR_MISSES of them are tried a variant, and on a subset many conditions are unmet
    (q66's 48 months: the catalog branch's December, unmet on the pinned data too, is the
    36th); each variant starts further on."""
    out: list[NearMiss] = []
    conditional: dict[str, list[NearMiss]] = {}
    for m in misses:
        (conditional.setdefault(m.gold, []) if m.unmet else out).append(m)
    for found in conditional.values():
        start = index * MAX_NEAR_MISSES % len(found)
        out += found[start:] + found[:start]
    return out


def _flips() -> None:
    from sqlglot import exp
    _FLIPS.update({exp.LT: exp.LTE, exp.LTE: exp.LT, exp.GT: exp.GTE, exp.GTE: exp.GT})


_flips()

def _typed(text: str, ctype: str) -> Any:
    """A literal's text as SQLite should store it in a column of type ``ctype``: a number as a
    number unless the column is text (a column of no type keeps what it is given)."""
    from decimal import InvalidOperation
    if any(w in ctype.upper() for w in ("CHAR", "TEXT", "CLOB", "DATE", "TIME")):
        return text
    try:
        number = Decimal(text)
    except InvalidOperation:
        return text
    return int(number) if number == number.to_integral_value() and "." not in text else float(number)


def _sentence(target: Target, edit: str, value: Any, what: str) -> str:
    from .clones import _show
    name = target.table.rsplit(".", 1)[-1]
    if edit == "same":
        return f"a copy of a {name} row that reaches the output (fresh keys): separates {what}"
    shown = f"{target.column} = {_show(value) if isinstance(value, str) and '=' not in edit else _plain(value)}"
    if edit.startswith(("set=", "outside=")):
        return f"a {name} row that reaches the output but for this filter, set to {shown}: separates {what}"
    if edit.startswith("pair="):
        twin = edit.split("=", 1)[1]
        return (f"a {name} row that reaches the output (or does but for this comparison), its {target.column} set to "
                f"{'its own ' + twin if twin else 'the value it is compared with'} ({_plain(value)}): separates {what}")
    if edit.startswith("like="):
        return f"a {name} row a reaching row refers to, its {target.column} set to {_plain(value)!r}: separates {what}"
    if edit.startswith("copy="):
        return f"a copy of a {name} row that reaches the output but for this filter, with {shown}: separates {what}"
    if edit.startswith("when="):
        return f"a copy of a {name} row that reaches the output, its reference moved ({shown}): separates {what}"
    if edit.startswith("complete="):
        return (f"copies of the {name} rows of the first output row (two through the first read of its CTE, one "
                f"through each other), their {target.column} moved to a row of the same group meeting the "
                f"condition: separates {what}")
    return f"a copy of a {name} row that reaches the output, with {shown} ({_EDIT_WORDS[edit]}): separates {what}"


_EDIT_WORDS = {"up": "the next value up", "down": "the next value down", "least": "its least value",
               "greatest": "its greatest value"}


def _plain(value: Any) -> str:
    from .groups import _plain as plain
    return plain(value)


def _informative(rows: list[tuple[Any, ...]] | None) -> bool:
    """Rows, and not only NULLs (what an aggregate over no row gives)."""
    return bool(rows) and any(v is not None for row in rows or [] for v in row)


def _decimal(value: Any) -> Decimal:
    return Decimal(repr(value)) if isinstance(value, float) else Decimal(value)


def _differ(a: list[tuple[Any, ...]], b: list[tuple[Any, ...]], order: tuple[int, ...] | None = None) -> bool:
    """Whether two answers differ as bags, numbers to four significant digits: a difference
    the grader's tolerance would forgive is not one a witness is kept for. ``order``: the
    positions of the gold's sort keys; the answers then also differ when those keys come in
    another sequence (rows tied on them may come in any order, as the grader allows)."""
    def norm(row: tuple[Any, ...]) -> tuple[str, ...]:
        out = []
        for v in row:
            if isinstance(v, (int, float, Decimal)) and not isinstance(v, bool):
                f = float(v)
                out.append("0" if abs(f) < 1e-9 else f"{f:.4g}")
            else:
                out.append(repr(v))
        return tuple(out)
    if Counter(map(norm, a)) != Counter(map(norm, b)):
        return True
    if order:
        keys = [[tuple(norm(row)[p] for p in order if p < len(row)) for row in rows] for rows in (a, b)]
        return keys[0] != keys[1]
    return False


__all__ = ["NearMiss", "SeparatingWriter", "Target", "near_misses"]
