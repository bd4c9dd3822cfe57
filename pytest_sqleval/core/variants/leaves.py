"""A leaf of a gold and its join path: each SELECT of the gold over base tables by inner
joins (a UNION's branch, a derived table, a CTE body, the top SELECT), its fact (the table
no other member references), its references and conjuncts, and the moves that give it a new
output row. Read by ``outputs`` (the LIMIT growth) and ``pathedges`` (edge witnesses through
the join path); below both, so that neither imports the other to read a leaf."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

MAX_SOURCES = 200  # reaching rows of a leaf read per variant (each unit starts from another)
MAX_TARGETS = 256  # parent rows read per ``repoint`` move
MAX_REACHED = 5000  # distinct groups of a leaf read per ``regroup`` move (the ones a new pair must not be)


@dataclass(frozen=True)
class Move:
    """One way a leaf gets a new output row: ``kind`` ``copy``, ``repoint`` (``column`` of
    the fact set to a key of an existing ``parent`` row that ``targets_sql`` gives),
    ``regroup`` (the same, to a parent row whose grouped values are new only together with
    the source row's other grouped values: ``keys_sql`` gives each source's group, its first
    ``split`` values the other tables', ``reached_sql`` the leaf's groups), ``fresh`` (a copy
    of the source's ``parent`` row, its path position ``position``, with a fresh ``key`` and
    fresh ``renamed`` identifiers) or ``recombine`` (such a copy with its grouped text column
    ``renamed[0]``, value ``slot`` of the group, set to another row's value that
    ``targets_sql`` gives, making a group no reaching row has)."""

    kind: str
    column: str = ""
    parent: str = ""
    key: str = ""
    targets_sql: str = ""
    renamed: tuple[str, ...] = ()
    position: int = -1
    keys_sql: str = ""
    reached_sql: str = ""
    split: int = 0
    slot: int = -1
    # a ``fresh`` or ``recombine`` move's new parent row (one parameter, its key) against the parent's own
    # conjuncts (``i_item_id IN (SELECT i_item_id FROM item WHERE i_category IN (...))``: a fresh id of a
    # Children item that shares a Music item's id fails it): a source whose copy fails is passed over
    check_sql: str = ""
    # a ``repoint``, ``fresh`` or ``recombine`` whose parent holds a window average's partition (``avg(sum(x))
    # OVER (PARTITION BY i_manufact_id)``): the ``regroup`` of another parent, none of whose grouped columns
    # partitions (``d_qoy``); a unit makes the new partition groups of 2p, p, p, far from their average
    # (``outputs.PARTITION_COPIES``): a one-group partition is its own average, no row of it kept
    apart: Move | None = None


@dataclass(frozen=True)
class Leaf:
    """A SELECT of the gold over base tables: ``rows_sql`` (one parameter, the variant's
    salt) gives its reaching rows, ``w0`` the fact's row id, then ``u0..`` the row ids of
    ``tables`` (its sources in order)."""

    fact: str
    tables: tuple[str, ...]
    rows_sql: str
    moves: tuple[Move, ...]
    links: tuple[Any, ...]  # the join's references no dependency backs (``clones.CloneWitness.links``)
    through: str
    # rows a correlated subquery of the leaf needs for a copy of the fact (``EXISTS (SELECT ... FROM
    # store_sales WHERE c.c_customer_sk = ss_customer_sk ...)``): (the fact's column, the child table,
    # its column, the child rows that satisfy the subquery for the value bound to its parameters, how many,
    # the same with the row ids of every table the subquery reads, and those tables: what a path copied
    # in from the pinned data needs, the sale's date row with it)
    children: tuple[tuple[str, str, str, str, int, str, tuple[str, ...]], ...] = ()


@dataclass(frozen=True)
class LeafShape:
    """A leaf's join path as ``pathedges`` reads it: ``leaf`` (no moves), its conjuncts with the
    aliases each reads, the references ``(child alias, column, parent alias, column)``, the
    fact's alias and the aliases in ``leaf.tables``' order."""

    leaf: Leaf
    conjuncts: tuple[Any, ...]
    alias_sets: tuple[frozenset[str], ...]
    edges: tuple[tuple[str, str, str, str], ...]
    fact: str
    aliases: tuple[str, ...]
    table_of: tuple[tuple[str, str], ...]  # alias -> table, as the catalog spells it
    # comparisons on one table inside a CASE of the SELECT list (``CASE WHEN d_date < '2000-03-11' THEN
    # qty ELSE 0 END``: a before/after split), each with the alias it reads; no conjunct, so no row
    # fails it, but a row on its either side lands in another sum
    splits: tuple[tuple[Any, str], ...] = ()
    select: Any = None  # the SELECT itself, and the gold's WITH it may read (``reaching_rows_sql``)
    ctes: Any = None
    # per conjunct that is an OR of AND-groups (its index), each group's terms with the aliases each reads
    groups: tuple[tuple[int, tuple[tuple[tuple[Any, frozenset[str]], ...], ...]], ...] = ()
    # comparisons inside a CASE of the SELECT list that read two tables (``sr_returned_date_sk -
    # ss_sold_date_sk <= 30``: a sale's return within 30 days), each with the aliases it reads
    pairs: tuple[tuple[Any, frozenset[str]], ...] = ()


def leaf_shape(select: Any, names: Any, tables: dict[str, Any], deps: list[Any], every: list[Any],
               engine: str, ctes: Any = None, with_key: str = "with") -> LeafShape | None:
    """The join path of a leaf ``select`` (``_leaf``'s rules, an ungrouped aggregate allowed:
    a row moved into it changes the answer even where it adds no output row)."""
    found = _leaf(select, names, tables, deps, every, engine, ctes, with_key, shape=True)
    return found if isinstance(found, LeafShape) else None


def leaf_of(select: Any, names: Any, tables: dict[str, Any], deps: list[Any], every: list[Any],
            engine: str, ctes: Any = None, with_key: str = "with") -> Leaf | None:
    """The leaf ``select`` is, with its moves (what ``outputs`` grows), or None."""
    found = _leaf(select, names, tables, deps, every, engine, ctes, with_key)
    return found if isinstance(found, Leaf) else None


def _leaf(select: Any, names: Any, tables: dict[str, Any], deps: list[Any], every: list[Any],
          engine: str, ctes: Any = None, with_key: str = "with", shape: bool = False) -> Any:
    """The leaf ``select`` is, with its moves, or None (a derived table or an outer column
    in it, an outer join, a filter's subquery, no table a copy may be made of). ``ctes``:
    the gold's WITH, which a filter of the leaf may read (``IN (SELECT ... FROM cte)``).
    ``shape``: its ``LeafShape`` instead (``leaf_shape``)."""
    from sqlglot import exp

    from .clones import (IDENTIFIER_SUFFIXES, by_position, correlated_children, deps_columns, fresh_columns, freshable,
                         joined_key, sharable, turned_rowid)
    from .constraints import Dependency, family
    from .witnesses import conjuncts_of, resolve_column, select_sources
    if select.find_ancestor(exp.Where, exp.Having) is not None:
        return None  # a filter's subquery: a row it adds is no output row
    sources = select_sources(select, names)
    joins = select.args.get("joins") or []

    def optional(j: Any) -> bool:  # a LEFT JOIN's table (a sale's return): a copy of the fact keeps its row
        return j.side == "LEFT" and j.kind in ("", None, "OUTER") and j.args.get("on") is not None

    if not sources or len(sources) != 1 + len(joins) or any(
            j.args.get("using") or (j.side and not optional(j))
            or (not j.side and j.kind not in ("", None, "INNER", "CROSS")) for j in joins):
        return None
    conjuncts: list[Any] = []
    if select.args.get("where") is not None:
        conjuncts += conjuncts_of(select.args["where"].this)
    for j in joins:
        if j.args.get("on") is not None and not optional(j):
            conjuncts += conjuncts_of(j.args["on"])
    outer = {j.this.alias_or_name.lower() for j in joins if optional(j)}

    def own(node: Any) -> list[Any]:
        return [c for c in node.find_all(exp.Column) if c.find_ancestor(exp.Select) is select]

    def resolve(col: Any) -> tuple[str, str] | None:
        return resolve_column(col, sources, names.lower)

    alias_sets: list[set[str]] = []
    for c in conjuncts:
        found = [resolve(col) for col in own(c)]
        if any(f is None for f in found):
            return None  # an outer query's column: not a leaf of its own
        alias_sets.append({f[0] for f in found if f is not None})
    if any(resolve(col) is None for j in joins if optional(j) for col in own(j.args["on"])):
        return None
    if any(outer & s for s in alias_sets):
        return None  # a filter on the optional side: it decides whether a copy reaches
    if any(resolve(c) is None for e in select.expressions for c in own(e) if not _is_alias_ref(c, select)):
        return None
    table_of = {a: names.originals[t] for a, t in sources.items()}
    edges: list[tuple[str, str, str, str]] = []
    for c in conjuncts:
        if not (isinstance(c, exp.EQ) and isinstance(c.this, exp.Column) and isinstance(c.expression, exp.Column)):
            continue
        left, right = resolve(c.this), resolve(c.expression)
        if left is None or right is None or left[0] == right[0]:
            continue
        for (ca, cc), (pa, pc) in ((left, right), (right, left)):
            if any(d.child == table_of[ca] and d.child_columns == (cc,) and d.parent == table_of[pa]
                   and d.parent_columns == (pc,) for d in deps):
                edges.append((ca, cc, pa, pc))
                break
        else:
            implied = joined_key(tables[table_of[left[0]]], left[1], tables[table_of[right[0]]], right[1])
            if implied is not None:
                (ca, cc), (pa, pc) = (left, right) if implied else (right, left)
                edges.append((ca, cc, pa, pc))
    parents = {e[2] for e in edges}
    sinks = sorted((a for a in sources if a not in parents and a not in outer),
                   key=lambda a: (-sum(1 for e in edges if e[0] == a), a))
    if not sinks or (len(sources) > 1 and not any(e[0] == sinks[0] for e in edges)):
        return None
    fact = sinks[0]
    links = tuple(dict.fromkeys(Dependency(table_of[ca], (cc,), table_of[pa], (pc,), "gold")
                                for ca, cc, pa, pc in edges))
    linked = every + list(links)
    fact_table, fact_linked = tables[table_of[fact]], deps_columns(linked, table_of[fact])
    fact_fresh = fresh_columns(fact_table, fact_linked)
    if fact_fresh is None and not shape:  # a key only observed references bind takes a shared value (``outputs``)
        fact_fresh = fresh_columns(fact_table, fact_linked - set(sharable(fact_table, linked)))
    if fact_fresh is None:
        return None
    aliases = sorted(sources)
    group = select.args.get("group")
    if shape:
        path = ", ".join(sorted({table_of[a].rsplit(".", 1)[-1] for a in sources if a != fact}))
        kids = correlated_children(select, conjuncts, fact, resolve, names, engine, ctes, with_key)
        leaf = Leaf(table_of[fact], tuple(table_of[a] for a in aliases),
                    reaching_rows_sql(select, fact, aliases, ctes, with_key, engine), (), links,
                    f" joined through {path}" if path else "", kids)
        return LeafShape(leaf, tuple(conjuncts), tuple(frozenset(a) for a in alias_sets),
                         tuple((ca, cc, pa, pc) for ca, cc, pa, pc in edges), fact, tuple(aliases),
                         tuple(sorted(table_of.items())), _splits(select, own, resolve), select, ctes,
                         _or_groups(conjuncts, own, resolve), _splits(select, own, resolve, 2))
    if group is None and any(a.find_ancestor(exp.Window) is None for e in select.expressions
                             for a in e.find_all(exp.AggFunc)):
        return None  # one row of aggregates: no new output row
    shown = [group] if group is not None else list(select.expressions)
    keys = {k for node in shown for c in own(node) if (k := resolve(c)) is not None}

    def base(expressions: list[Any]) -> Any:
        q = select.copy()
        for arg in ("group", "having", "order", "limit", "offset", "qualify", "windows", "distinct"):
            q.set(arg, None)
        q.set("expressions", expressions)
        if ctes is not None and q.args.get(with_key) is None:
            q.set(with_key, ctes.copy())
        return q

    rows = base([exp.alias_(exp.column("rowid", table=fact), "w0")]
                + [exp.alias_(exp.column("rowid", table=a), f"u{i}") for i, a in enumerate(aliases)])
    rows.set("order", exp.Order(expressions=[exp.Ordered(this=turned_rowid(exp.column("w0"))),
                                             *by_position(len(rows.expressions))]))
    rows.set("limit", exp.Limit(expression=exp.Literal.number(MAX_SOURCES)))
    moves: list[Move] = []
    parted = _partitioned(select, own, resolve)
    makers: list[Move] = []  # moves that make a new window partition, and regroups that keep to one
    aparts: list[Move] = []
    grouped_fact = any(k == (fact, c) for c in fact_fresh for k in keys)
    if grouped_fact or (group is None and not select.args.get("distinct")
                        and not any(e.find(exp.AggFunc) for e in select.expressions)):
        moves.append(Move("copy"))
    other = "sqleval_p"
    for ca, cc, pa, pc in edges:
        if ca != fact:
            continue
        parent = tables[table_of[pa]]
        on_parent = sorted(c for a, c in keys if a == pa)
        if not on_parent:
            continue

        own_conds = []  # the parent's own conjuncts, about the candidate row (a detached copy's own columns)
        for cond, aset in zip(conjuncts, alias_sets):
            if aset == {pa} and not isinstance(cond, exp.Column):
                copy = cond.copy()
                for col in list(copy.find_all(exp.Column)):
                    if col.find_ancestor(exp.Select) is None:
                        col.replace(exp.column(col.name, table=other))
                own_conds.append(copy)
        reached = base([exp.Literal.number(1)])
        match = [exp.EQ(this=exp.column(c, table=pa), expression=exp.column(c, table=other)) for c in on_parent]
        where = reached.args.get("where")
        reached.set("where", exp.Where(this=exp.and_(*([where.this.copy()] if where is not None else []), *match)))
        table = exp.Table(this=exp.to_identifier(parent.name.rsplit(".", 1)[-1]),
                          db=exp.to_identifier(parent.name.split(".", 1)[0]) if "." in parent.name else None,
                          alias=exp.TableAlias(this=exp.to_identifier(other)))
        targets = exp.select(exp.alias_(exp.column("rowid", table=other), "t0"),
                             exp.alias_(exp.column(pc, table=other), "t1"),
                             *[exp.alias_(exp.column(c, table=other), f"g{k}") for k, c in enumerate(on_parent)]
                             ).from_(table)
        known = exp.Is(this=exp.column(pc, table=other), expression=exp.Null()).not_()
        every_target = targets.copy().where(exp.and_(*own_conds, known))
        check = ""
        if own_conds:
            checked = exp.select(exp.Literal.number(1)).from_(table.copy()).where(
                exp.and_(*[c.copy() for c in own_conds], exp.EQ(this=exp.column(pc, table=other),
                                                                expression=exp.Placeholder())))
            if ctes is not None:
                checked.set(with_key, ctes.copy())
            check = checked.sql(dialect=engine)
        targets = targets.where(exp.and_(*own_conds, exp.not_(exp.Exists(this=reached)), known))
        for q in (targets, every_target):
            q.set("order", exp.Order(expressions=[exp.Ordered(this=turned_rowid(exp.column("rowid", table=other))),
                                                  *by_position(len(q.expressions))]))
            q.set("limit", exp.Limit(expression=exp.Literal.number(MAX_TARGETS)))
            if ctes is not None:
                q.set(with_key, ctes.copy())
        moves.append(Move("repoint", cc, parent.name, pc, targets.sql(dialect=engine)))
        keys_sql, reached_sql, split = _groups(cc, pa, fact, on_parent, keys, base, engine)
        later = [Move("regroup", cc, parent.name, pc, every_target.sql(dialect=engine), keys_sql=keys_sql,
                      reached_sql=reached_sql, split=split)] if split else []
        parting = {c for c in on_parent if (pa, c) in parted}
        if parting:
            makers.append(moves[-1])
        elif parted and later:
            aparts.append(later[0])
        bound = parent.key_columns | deps_columns(linked, parent.name)  # a name another table's rows hold
        recombined = [c for c in on_parent if c not in bound and family(parent.columns.get(c, ""), engine) == "text"]
        for c in recombined:  # a new dimension row: one grouped name from another row
            values = exp.select(exp.alias_(exp.column(c, table=other), "v")).from_(table.copy()).distinct()
            reading = [cond for cond in own_conds if any(col.name == c for col in cond.find_all(exp.Column))]
            values = values.where(exp.and_(*reading, exp.column(c, table=other).is_(exp.Null()).not_()))
            values.set("order", exp.Order(expressions=[exp.Ordered(this=exp.column("v"))]))
            values.set("limit", exp.Limit(expression=exp.Literal.number(MAX_TARGETS)))
            later.append(Move("recombine", cc, parent.name, pc, values.sql(dialect=engine), renamed=(c,),
                              position=aliases.index(pa), keys_sql=keys_sql, reached_sql=reached_sql, split=split,
                              slot=split + on_parent.index(c), check_sql=check))
            if c in parting:
                makers.append(later[-1])
        fresh = fresh_columns(parent, deps_columns(linked, parent.name))
        if fresh and pc in fresh and not set(on_parent) & set(fresh):
            named = [c for c in on_parent if c.lower().endswith(IDENTIFIER_SUFFIXES)
                     and freshable(parent.columns.get(c, "")) and c not in parent.key_columns
                     and not any(d.parent == parent.name and c in d.parent_columns for d in linked)]
            if named:
                moves.append(Move("fresh", cc, parent.name, pc, renamed=(named[0],), position=aliases.index(pa),
                                  check_sql=check))
                if parting:
                    makers.append(moves[-1])
        moves += later  # after the parent's own new values: new pairs of existing ones
    if not moves:
        return None
    # first: new partitions of two groups each (a new manufacturer's two quarters); the moves above add a
    # one-group partition, or a group to a partition the variant holds (TPC-DS q53 ran out at 12 of 101 rows)
    moves = [replace(m, apart=a) for m in makers for a in aparts[:1] if a.column != m.column] + moves
    if "copy" not in {m.kind for m in moves}:
        moves.append(Move("copy"))  # last: a copy of a fact row may still be a new output row
    path = ", ".join(sorted({table_of[a].rsplit(".", 1)[-1] for a in sources if a != fact}))
    children = correlated_children(select, conjuncts, fact, resolve, names, engine, ctes, with_key)
    return Leaf(table_of[fact], tuple(table_of[a] for a in aliases), rows.sql(dialect=engine), tuple(moves), links,
                f" joined through {path}" if path else "", children)


def reaching_rows_sql(select: Any, fact: str, aliases: list[str], ctes: Any, with_key: str, engine: str) -> str:
    """``Leaf.rows_sql`` of ``select`` as it stands (a caller may have put a node of it in place
    of another first): the fact's row id ``w0``, then ``u0..`` those of ``aliases``."""
    from sqlglot import exp

    from .clones import by_position, turned_rowid
    rows = select.copy()
    for arg in ("group", "having", "order", "limit", "offset", "qualify", "windows", "distinct"):
        rows.set(arg, None)
    rows.set("expressions", [exp.alias_(exp.column("rowid", table=fact), "w0")]
             + [exp.alias_(exp.column("rowid", table=a), f"u{i}") for i, a in enumerate(aliases)])
    if ctes is not None and rows.args.get(with_key) is None:
        rows.set(with_key, ctes.copy())
    rows.set("order", exp.Order(expressions=[exp.Ordered(this=turned_rowid(exp.column("w0"))),
                                             *by_position(len(rows.expressions))]))
    rows.set("limit", exp.Limit(expression=exp.Literal.number(MAX_SOURCES)))
    return str(rows.sql(dialect=engine))


def _groups(column: str, pa: str, fact: str, on_parent: list[str], keys: set[tuple[str, str]], base: Any,
            engine: str) -> tuple[str, str, int]:
    """For ``regroup`` and ``recombine`` moves of reference ``fact.column`` to the table
    of alias ``pa``: each source row's group (the other tables' grouped values first, then
    ``pa``'s), the leaf's groups, and how many of the other tables' values lead. A copy moved
    to a parent row whose values the source's other grouped values never meet in a reaching
    row (another month of that brand) is a new group even where every value of each column
    is reached on its own (``repoint`` finds no row then)."""
    from sqlglot import exp

    from .clones import by_position, turned_rowid
    others = sorted(k for k in keys if k[0] != pa and k != (fact, column))
    values = [exp.column(c, table=a) for a, c in others] + [exp.column(c, table=pa) for c in on_parent]
    per_source = base([exp.alias_(exp.column("rowid", table=fact), "w0")]
                      + [exp.alias_(v.copy(), f"k{i}") for i, v in enumerate(values)])
    per_source.set("order", exp.Order(expressions=[exp.Ordered(this=turned_rowid(exp.column("w0"))),
                                                   *by_position(len(per_source.expressions))]))
    per_source.set("limit", exp.Limit(expression=exp.Literal.number(MAX_SOURCES)))
    reached = base([exp.alias_(v.copy(), f"k{i}") for i, v in enumerate(values)])
    reached.set("distinct", exp.Distinct())
    reached.set("limit", exp.Limit(expression=exp.Literal.number(MAX_REACHED)))
    return per_source.sql(dialect=engine), reached.sql(dialect=engine), len(others)


def _partitioned(select: Any, own: Any, resolve: Any) -> set[tuple[str, str]]:
    """The (alias, column) pairs a window aggregate of ``select``'s own list partitions by
    (``avg(sum(ss_sales_price)) OVER (PARTITION BY i_manufact_id)``); empty where it has none."""
    from sqlglot import exp
    out: set[tuple[str, str]] = set()
    for e in select.expressions:
        for w in e.find_all(exp.Window):
            if not isinstance(w.this, exp.AggFunc):
                continue
            for p in w.args.get("partition_by") or []:
                out |= {k for c in own(p) if (k := resolve(c)) is not None}
    return out


def _splits(select: Any, own: Any, resolve: Any, tables: int = 1) -> tuple[tuple[Any, Any], ...]:
    """The comparisons in the conditions of the SELECT list's CASEs that read ``tables`` tables:
    one (``LeafShape.splits``, each with the alias it reads) or two (``LeafShape.pairs``, with
    the aliases)."""
    from sqlglot import exp

    from .witnesses import split_terms
    out: list[tuple[Any, Any]] = []
    for e in select.expressions:
        for case in e.find_all(exp.If):
            if case.find_ancestor(exp.Select) is not select:
                continue
            for cond in split_terms(case.this, exp.And):
                if not isinstance(cond, (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Between)):
                    continue
                found = [resolve(c) for c in own(cond)]
                aliases = {f[0] for f in found if f is not None}
                if found and None not in found and len(aliases) == tables:
                    out.append((cond, aliases.pop() if tables == 1 else frozenset(aliases)))
    return tuple(out)


def _or_groups(conjuncts: list[Any], own: Any, resolve: Any
               ) -> tuple[tuple[int, tuple[tuple[tuple[Any, frozenset[str]], ...], ...]], ...]:
    """``LeafShape.groups``: the ORs among ``conjuncts``, each disjunct's AND terms with the
    aliases they read (an OR with a term that reads no column of the leaf is left out)."""
    from sqlglot import exp

    from .witnesses import split_terms
    out = []
    for i, cond in enumerate(conjuncts):
        if not isinstance(cond, exp.Or):
            continue
        groups = []
        for disjunct in split_terms(cond, exp.Or):
            terms = []
            for term in split_terms(disjunct, exp.And):
                found = [resolve(c) for c in own(term)]
                if not found or None in found:
                    break
                terms.append((term, frozenset(f[0] for f in found)))
            else:
                groups.append(tuple(terms))
                continue
            break
        else:
            out.append((i, tuple(groups)))
    return tuple(out)


def _is_alias_ref(col: Any, select: Any) -> bool:
    """A bare name that is one of the SELECT's output aliases (ORDER BY or an outer reference)."""
    return not col.table and any(getattr(e, "alias", "") and e.alias.lower() == col.name.lower()
                                 for e in select.expressions)


__all__ = ["Leaf", "LeafShape", "Move", "leaf_of", "leaf_shape", "reaching_rows_sql"]
