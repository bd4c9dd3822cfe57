"""Edge witnesses through the join path: a copy of a fact row moved to a dimension row at a filter's edge.

A star join of four to six tables (TPC-DS) answers from fact rows each joined to one row of
every dimension. A near-miss that changes one dimension filter (``cd_education_status =
'College'`` dropped, ``d_date BETWEEN ... AND '1999-03-24'`` moved a day, ``c_birth_month IN
(..., 9, ...)`` losing 9, ``=`` flipped to ``<>``) coincides with the gold wherever no fact row
that passes every *other* conjunct joins a dimension row on that filter's edge. Moving a
dimension row's value would change every fact row joined to it (and break what the row's other
columns say of it: a date's year); the clone witnesses move a copy of a fact row only within
one SELECT over base tables and stop at ``clones.MAX_CLONE_WITNESSES``, which the earlier
witnesses of a six-table join fill first.

Here, for each leaf of a gold (``leaves.leaf_shape``: a SELECT over base tables by inner
joins, also a CTE's body, a derived table, a UNION branch, an ungrouped aggregate), per
reference ``fact.fk -> dimension`` and per conjunct on that dimension alone comparing one
column with constants (``=``, ``<>``, ``<``, ``<=``, ``>``, ``>=``, ``BETWEEN``, ``IN``):

- its *edge rows*: dimension rows that pass the dimension's other conjuncts and hold, per
  constant, the constant itself, or the nearest value above or below it that the column
  holds; rows of the variant first, then of the pinned database (copied in as they are). No
  value is made up: every dimension row is one the pinned data has;
- per edge row, a copy of a fact row that reaches the leaf (fresh row identity, every other
  reference kept: ``CloneWriter.clone``) with its reference moved to that row;
- the edit is kept only when it tells something apart on the variant: a row that passes the
  conjunct must change the gold's answer, one that fails it the answer of the gold without
  that conjunct; else it is undone, as it is when a key, a NOT NULL column or a dependency
  would not hold.

Each gold's edits go into every ``EDGE_SPREAD``-th variant, at most ``MAX_TRIALS`` per gold
and variant (each one write and one run of the gold or its probe; ``TRIALS_PER_PROBE`` per
conjunct), so the first build pays a bounded price per gold.

An edit must also leave alone what the variant already shows for the other golds: a group
witness (``groups.py``) puts a group of a HAVING gold at exactly its bound (``count(*) >= 50``
against ``>= 51``), and a fact copy joined to that group moves it off the bound. So every
other gold with a HAVING that reads one of the leaf's tables is a *guard*: its answer is read
once per gold and variant, and an edit that changes it is undone and tried again from the next
reaching row (``SOURCES_PER_TARGET``), within the same trials."""
from __future__ import annotations

import dataclasses
import itertools
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

MAX_PROBES = 16  # conjuncts per gold (an OR of three AND-groups on two dimensions holds twelve)
MAX_PARTS = 9  # edge rows looked for per conjunct (three per constant)
MAX_ATOMS = 3  # disjuncts of an OR on one dimension: a row per truth value of each (8 at most)
GAP_SOURCES = 64  # the reaching rows whose differences bound a moved row's
GAP_IMPORTS = 2  # pinned reaching paths tried where every reaching row of a variant sits on a bound already
MAX_TRIALS = 8  # edits tried per gold and variant
TRIALS_PER_PROBE = 4  # edits tried per conjunct and variant: those that fail it first, then those on its bounds
KEPT_PER_PROBE = 4  # edits kept per conjunct and variant: a range's two bounds, each from both sides
EDGE_SPREAD = 2  # a gold's edits go into every EDGE_SPREAD-th variant
TURNS = 4  # a gold's variants with edits at ``--sqleval-variants=8``: its conjuncts are spread over them
SOURCES_PER_TARGET = 3  # reaching rows tried per edge row when a guard's answer moves
MAX_GUARDS = 4  # other golds whose answers an edit must keep (HAVING golds over the leaf's tables)
_T, _X = "sqleval_e", "sqleval_x"


@dataclass(frozen=True)
class EdgeProbe:
    """One conjunct on a dimension of a leaf: ``targets_sql`` (its parameters: the variant's
    salt, once per part) gives the edge rows ``(rowid t0, key t1, passes t2, value t3, part t4)``;
    ``probe_sql`` is the gold without the conjunct."""

    leaf: int  # index into ``PathGold.leaves``
    column: str  # the fact's reference
    parent: str
    key: str
    attribute: str
    parts: int
    targets_sql: str
    probe_sql: str
    rendered: str
    members: int = 0  # an IN list's members: their rows are tried first (from another member on each
    # variant), else the rows that fail the conjunct
    # a dimension of a dimension (``customer_address`` through ``customer``): the fact's column, the
    # middle table, its key and its position in the leaf's tables; a copy of the middle row moves
    via: tuple[str, str, str, int] | None = None
    split: bool = False  # a comparison in a CASE of the SELECT list: every edge row passes the WHERE, and
    # is kept when the gold's answer moves (a row on either side of ``d_date < x`` lands in another sum)
    # a bound on a difference of two of the fact's integer references (``cs_ship_date_sk - cs_sold_date_sk
    # > 30``, day buckets): the fact's other column, +1 where ``column`` is the minuend, -1 the
    # subtrahend, and per part the difference to give a copy and whether it passes; ``targets_sql``
    # then takes the parent's key (the other column's value plus or minus the difference)
    gap: tuple[str, int, tuple[tuple[int, bool], ...]] | None = None
    # where the gap's other column is another table's of the leaf (``sr_returned_date_sk - ss_sold_date_sk
    # <= 30``, a return joined to its sale): that table and its position in ``Leaf.tables``; a copy of the
    # fact would lose the row it joins (a fresh ticket), so the fact row itself moves
    across: tuple[str, int] | None = None
    # the reaching rows a copy is made of, where not the leaf's (``Leaf.rows_sql``'s columns): a term of
    # an AND-group inside an OR is passed only by a copy that passes the group's terms on other tables
    sources_sql: str = ""


@dataclass(frozen=True)
class PathGold:
    gold: str  # ``clones.gold_digest``
    sql: str
    leaves: tuple[Any, ...]  # ``leaves.Leaf``
    probes: tuple[EdgeProbe, ...]
    guards: tuple[str, ...] = ()  # other golds (rendered for the engine) whose answer an edit must keep


def path_golds(gold_sqls: Iterable[str], dialect: str, engine: str, tables: dict[str, Any],
               dependencies: Iterable[Any]) -> list[PathGold]:
    """Every gold with a dimension conjunct a moved fact copy may sit on the edge of."""
    from sqlglot import exp

    from .clones import gold_digest
    from .leaves import leaf_shape
    from .witnesses import Catalog, parsed_golds, with_key as witness_with_key
    names = Catalog({t: set(c.columns) for t, c in tables.items()})
    every = list(dependencies)
    deps = [d for d in every if d.origin != "total" and len(d.child_columns) == 1]
    with_key = witness_with_key()
    out: list[PathGold] = []
    golds = list(gold_sqls)
    having = _having_golds(golds, dialect, engine)
    for sql, tree in parsed_golds(golds, dialect):
        try:
            ctes = tree.args.get(with_key)
            nodes = list(tree.dfs())
            leaves: list[Any] = []
            probes: list[EdgeProbe] = []
            for select in tree.find_all(exp.Select):
                shape = leaf_shape(select, names, tables, deps, every, engine, ctes if select is not tree else None,
                                   with_key)
                if shape is None:
                    continue
                leaves.append(shape.leaf)
                probes += _probes(shape, len(leaves) - 1, tree, nodes, tables, engine, with_key)
        except Exception:  # an odd tree: no edge witness for this gold
            continue
        if probes:
            read = {t.rsplit(".", 1)[-1].lower() for leaf in leaves for t in leaf.tables}
            guards = tuple(g for other, g, names_read in having if other != sql and names_read & read)
            out.append(PathGold(gold_digest(sql), sql, tuple(leaves), tuple(probes[:MAX_PROBES]),
                                guards[:MAX_GUARDS]))
    return out


def _having_golds(gold_sqls: list[str], dialect: str, engine: str) -> list[tuple[str, str, set[str]]]:
    """(gold, the gold rendered for ``engine``, the table names it reads) of every gold with a
    HAVING: a group witness may hold one of its groups at exactly the bound."""
    from sqlglot import exp

    from .witnesses import parsed_golds
    out = []
    for sql, tree in parsed_golds(gold_sqls, dialect):
        if tree.find(exp.Having) is not None:
            try:
                out.append((sql, str(tree.sql(dialect=engine)), {t.name.lower() for t in tree.find_all(exp.Table)}))
            except Exception:  # a tree sqlglot cannot render for the engine: no guard
                continue
    return out


def _probes(shape: Any, leaf_index: int, tree: Any, nodes: list[Any], tables: dict[str, Any],
            engine: str, with_key: str = "with") -> list[EdgeProbe]:
    from sqlglot import exp

    from .constraints import qualified, quote
    from .witnesses import split_terms
    table_of = dict(shape.table_of)
    out: list[EdgeProbe] = []
    hops: list[tuple[str, str, str, tuple[str, str, str, int] | None]] = []  # (alias, its key, the column
    # referencing it, and for a dimension of a dimension the fact's column, the middle table, its key, its position)
    for ca, cc, pa, pc in shape.edges:
        if ca == shape.fact:
            hops.append((pa, pc, cc, None))
            hops += [(pa2, pc2, cc2, (cc, table_of[pa], pc, shape.aliases.index(pa)))
                     for ca2, cc2, pa2, pc2 in shape.edges if ca2 == pa and pa2 not in (shape.fact, pa)]
    seen: set[tuple[Any, ...]] = set()
    for pa, pc, cc, via in hops:
        parent = tables[table_of[pa]]
        lower = {c.lower(): c for c in parent.columns}
        own = [k for k, a in enumerate(shape.alias_sets) if a == frozenset({pa})]
        if via is None:
            out += _gap_probes(shape, leaf_index, tree, nodes, parent, pa, pc, cc, engine)
        mine = [shape.conjuncts[k] for k in own if shape.conjuncts[k].find(exp.Select) is None]
        # (the conjunct, the others on the dimension an edge row passes, a split, the reaching rows' query)
        asked: list[tuple[Any, list[Any], bool, str]] = [(c, [o for o in mine if o is not c], False, "") for c in mine]
        asked += [(c, mine, False, "") for k in own if _listed(c := shape.conjuncts[k]) is not None]
        asked += [(cond, mine, True, "") for cond, alias in shape.splits if alias == pa]
        if via is None:
            asked += _group_terms(shape, pa, mine, engine, with_key)
        for cond, others, split, sources_sql in asked:
            listed = None if split else _listed(cond)
            if cond.find(exp.Select) is not None and listed is None:
                continue
            form = listed[:2] if listed is not None else _form(cond)
            if split and form is None:
                continue
            atoms = split_terms(cond, exp.Or) if form is None else []
            if form is None and not 1 <= len(atoms) <= MAX_ATOMS:
                continue
            named = [c.name for c in cond.find_all(exp.Column)]
            attribute = lower.get((form[0].name if form is not None else named[0] if named else "").lower())
            if attribute is None:
                continue
            if not any(n is cond for n in nodes):
                continue
            if split:  # asked of the gold itself: a split is no conjunct a near-miss drops
                dropped = tree.sql(dialect=engine)
            else:
                marker = exp.true()
                cond.replace(marker)  # the gold without the conjunct, rendered in place (a copy of a large tree costs)
                try:
                    dropped = tree.sql(dialect=engine)
                finally:
                    marker.replace(cond)
            rel = qualified(parent.name, engine)
            parts: list[str] = []

            def sql(node: Any) -> str:
                return str(node.sql(dialect=engine))

            def about(node: Any, alias: str) -> str:
                return sql(_renamed(node, alias))

            cond_t = about(cond, _T)
            others_t = "".join(f" AND ({about(o, _T)})" for o in others)
            others_x = "".join(f" AND ({about(o, _X)})" for o in others)
            column_t, column_x = f"{_T}.{quote(attribute)}", f"{_X}.{quote(attribute)}"

            def part(test: str) -> str:  # the first edge row (by the turned row id) where ``test`` holds
                n = len(parts)
                return (f"SELECT * FROM (SELECT {_T}.rowid AS t0, {_T}.{quote(pc)} AS t1, CASE WHEN {cond_t} THEN 1 "
                        f"ELSE 0 END AS t2, {column_t} AS t3, {n} AS t4 FROM {rel} AS {_T} WHERE ({test}) AND "
                        f"{_T}.{quote(pc)} IS NOT NULL{others_t} ORDER BY ({_T}.rowid * 2654435761 + ?) % 4294967291 "
                        f"LIMIT 1) AS p{n}")

            if form is None:  # an OR, a LIKE, a function: one row per truth value of each disjunct
                atoms_t = [about(a, _T) for a in atoms]
                for truths in itertools.product((False, True), repeat=len(atoms)):
                    parts.append(part(" AND ".join(f"(CASE WHEN {a} THEN 1 ELSE 0 END) = {int(t)}"
                                                   for a, t in zip(atoms_t, truths))))
                out.append(EdgeProbe(leaf_index, cc, parent.name, pc, attribute, len(parts), " UNION ALL ".join(parts),
                                     dropped, " ".join(cond.sql().split()), 0, via, sources_sql=sources_sql))
                continue
            col, constants = form
            if split:  # ``x < c`` and ``x >= c`` of one before/after split ask for the same rows
                edge = (pa, attribute, tuple(sorted((sql(c), _sides(cond, n)) for n, c in enumerate(constants))))
                if edge in seen:
                    continue
                seen.add(edge)
            members = isinstance(cond, exp.In) if listed is None else isinstance(listed[3], exp.In)
            # per constant: itself, the nearest value below, above; an IN list's members all first; for a
            # bound, the two values it falls between (a row on each side): the other neighbour tells nothing
            order = [(c, k) for k in range(3) for c in constants] if members else \
                [(c, k) for n, c in enumerate(constants) for k in _sides(cond, n)]
            for constant, k in order:
                if listed is not None:
                    parts.append(part(f"{column_t} IN ({sql(_member_query(listed[2], listed[3], constant, k))})"))
                    if len(parts) >= MAX_PARTS:
                        break
                    continue
                value = sql(constant)
                if k:  # the nearest value the column holds below (1) or above (2) the constant
                    value = (f"(SELECT {'max' if k == 1 else 'min'}({column_x}) FROM {rel} AS {_X} WHERE "
                             f"{column_x} {'<' if k == 1 else '>'} {value}{others_x})")
                parts.append(part(f"{column_t} = {value}"))
                if len(parts) >= MAX_PARTS:
                    break
            out.append(EdgeProbe(leaf_index, cc, parent.name, pc, attribute, len(parts), " UNION ALL ".join(parts),
                                 dropped, " ".join(cond.sql().split()),
                                 min(len(constants), len(parts)) if members else 0, via, split,
                                 sources_sql=sources_sql))
    return out


def _group_terms(shape: Any, pa: str, mine: list[Any], engine: str,
                 with_key: str) -> list[tuple[Any, list[Any], bool, str]]:
    """The comparisons on dimension ``pa`` alone inside an AND-group of an OR that also reads
    other tables (TPC-DS q13: ``(cd_marital_status = 'M' AND cd_education_status = '4 yr Degree'
    AND ss_sales_price BETWEEN 100 AND 150) OR ...``), each with the group's other terms on
    ``pa`` (an edge row passes them) and its reaching rows: the leaf's with the OR replaced by
    the group's terms on the other tables, so a copy moved to an edge row passes that group (its
    price in the group's range) whatever group it reached by."""
    from sqlglot import exp

    from .leaves import reaching_rows_sql
    from .witnesses import split_terms
    if shape.select is None:
        return []
    out: list[tuple[Any, list[Any], bool, str]] = []
    for i, disjuncts in shape.groups:
        either = shape.conjuncts[i]
        for terms in disjuncts:
            here = [t for t, a in terms if a == frozenset({pa})]
            if not here or len(here) == len(terms):
                continue  # no term on ``pa``, or an OR on it alone (an edge per truth value: ``_probes``)
            rest = [t.copy() for t, a in terms if a != frozenset({pa})]
            stand_in = exp.and_(*rest) if rest else exp.true()
            either.replace(stand_in)
            try:
                sources_sql = reaching_rows_sql(shape.select, shape.fact, list(shape.aliases), shape.ctes, with_key,
                                                engine)
            finally:
                stand_in.replace(either)
            out += [(t, [o for o in here if o is not t] + mine, False, sources_sql) for t in here
                    if not split_terms(t, exp.Or)[1:]]
    return out


def _gap_probes(shape: Any, leaf_index: int, tree: Any, nodes: list[Any], parent: Any, pa: str, pc: str,
                cc: str, engine: str) -> list[EdgeProbe]:
    """Per bound on ``fact.cc - fact.other`` (or ``other - cc``; ``other`` also a column of a table
    joined to the fact: ``EdgeProbe.across``) in a conjunct or in a CASE of the SELECT list: a
    probe whose copies move ``cc`` (a reference to ``pa``'s integer key, a day) so that the
    difference sits on either side of the bound."""
    from sqlglot import exp

    from .constraints import qualified, quote
    table_of = dict(shape.table_of)
    own: list[tuple[Any, bool, str | None]] = [(c, False, None) for c, a in zip(shape.conjuncts, shape.alias_sets)
                                               if a == frozenset({shape.fact})]
    own += [(c, True, None) for c, a in shape.splits if a == shape.fact]
    own += [(c, split, next(iter(a - {shape.fact}))) for pairs, split in ((zip(shape.conjuncts, shape.alias_sets), False),
                                                                         (shape.pairs, True))
            for c, a in pairs if len(a) == 2 and shape.fact in a]
    others = [c for c, a in zip(shape.conjuncts, shape.alias_sets) if a == frozenset({pa})
              and c.find(exp.Select) is None]
    rel = qualified(parent.name, engine)
    out = []
    seen = set()
    for cond, split, beside in own:
        found = _gap(cond, cc)
        if found is None or not any(n is cond for n in nodes):
            continue
        if split:  # ``<= 20`` and ``> 20`` of one bucket ask for the same differences
            if (found[0], found[1], frozenset(v for v, _ in found[2])) in seen:
                continue
            seen.add((found[0], found[1], frozenset(v for v, _ in found[2])))
        if split:
            dropped = tree.sql(dialect=engine)
        else:
            marker = exp.true()
            cond.replace(marker)
            try:
                dropped = tree.sql(dialect=engine)
            finally:
                marker.replace(cond)
        others_t = "".join(f" AND ({_renamed(o, _T).sql(dialect=engine)})" for o in others)
        targets = (f"SELECT {_T}.rowid AS t0, {_T}.{quote(pc)} AS t1, 1 AS t2, {_T}.{quote(pc)} AS t3, 0 AS t4 "
                   f"FROM {rel} AS {_T} WHERE {_T}.{quote(pc)} = ?{others_t} LIMIT 1")
        across = None if beside is None else (table_of[beside], shape.aliases.index(beside))
        out.append(EdgeProbe(leaf_index, cc, parent.name, pc, pc, len(found[2]), targets, dropped,
                             " ".join(cond.sql().split()), 0, None, split, found, across=across))
    return out


def _gap(cond: Any, column: str) -> tuple[str, int, tuple[tuple[int, bool], ...]] | None:
    """``EdgeProbe.gap`` of ``a - b op k`` (``BETWEEN k1 AND k2``, ``k`` whole numbers) where
    ``a`` or ``b`` is ``column``: the differences on either side of each bound."""
    import operator

    from sqlglot import exp

    def unparen(node: Any) -> Any:
        while isinstance(node, exp.Paren):
            node = node.this
        return node

    def whole(node: Any) -> int | None:
        node = unparen(node)
        negative = isinstance(node, exp.Neg)
        node = node.this if negative else node
        if not isinstance(node, exp.Literal) or node.is_string or not node.this.lstrip("-").isdigit():
            return None
        return -int(node.this) if negative else int(node.this)

    ops = {exp.GT: operator.gt, exp.GTE: operator.ge, exp.LT: operator.lt, exp.LTE: operator.le, exp.EQ: operator.eq}
    if isinstance(cond, exp.Between):
        sub, found = unparen(cond.this), [whole(cond.args.get("low")), whole(cond.args.get("high"))]
    elif type(cond) in ops:
        sub, found = unparen(cond.this), [whole(cond.expression)]
    else:
        return None
    bounds = [b for b in found if b is not None]
    if not isinstance(sub, exp.Sub) or len(bounds) != len(found) \
            or not (isinstance(sub.this, exp.Column) and isinstance(sub.expression, exp.Column)):
        return None

    def test(v: int) -> bool:
        return bounds[0] <= v <= bounds[-1] if isinstance(cond, exp.Between) else bool(ops[type(cond)](v, bounds[0]))
    a, b = sub.this.name, sub.expression.name
    if a.lower() == column.lower() and b.lower() != column.lower():
        other, sign = b, 1
    elif b.lower() == column.lower() and a.lower() != column.lower():
        other, sign = a, -1
    else:
        return None
    step = {0: 0, 1: -1, 2: 1}
    values = [bound + step[k] for n, bound in enumerate(bounds) for k in _sides(cond, n, left=True)]
    return other, sign, tuple((v, test(v)) for v in dict.fromkeys(values))


def _sides(cond: Any, n: int, left: bool | None = None) -> tuple[int, ...]:
    """Which rows of constant ``n`` of ``cond`` tell a moved or flipped bound apart: 0 the
    constant, 1 the nearest value below, 2 above. ``x >= c`` (and ``x < c``, a BETWEEN's low
    end) lies between the value below and ``c``; ``x > c`` (``x <= c``, the high end) between
    ``c`` and the value above; an equality on both sides. ``left``: the compared side is on
    the left (else read from ``cond``: a column or a cast column)."""
    from sqlglot import exp
    if isinstance(cond, exp.Between):
        return (1, 0) if n == 0 else (0, 2)
    if left is None:
        left = isinstance(cond.this, (exp.Column, exp.Cast))
    lower = (exp.GTE, exp.LT) if left else (exp.LTE, exp.GT)
    if isinstance(cond, lower):
        return (1, 0)
    if isinstance(cond, (exp.GT, exp.GTE, exp.LT, exp.LTE)):
        return (0, 2)
    return (0, 1, 2)


def _form(cond: Any) -> tuple[Any, list[Any]] | None:
    """(the column, its constants) of ``column op constant``, ``BETWEEN`` or ``IN (constants)``."""
    from sqlglot import exp

    def constant(node: Any) -> bool:
        return node is not None and node.find(exp.Column) is None and node.find(exp.Select) is None \
            and not isinstance(node, exp.Null)

    def column(node: Any) -> Any:  # a column, or a column cast (``cast(d_date AS date) < ...``)
        inner = node.this if isinstance(node, exp.Cast) else node
        return inner if isinstance(inner, exp.Column) else None
    if isinstance(cond, (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE)):
        if column(cond.this) is not None and constant(cond.expression):
            return column(cond.this), [cond.expression]
        if column(cond.expression) is not None and constant(cond.this):
            return column(cond.expression), [cond.this]
    if isinstance(cond, exp.Between) and isinstance(cond.this, exp.Column) \
            and constant(cond.args.get("low")) and constant(cond.args.get("high")):
        return cond.this, [cond.args["low"], cond.args["high"]]
    if isinstance(cond, exp.In) and isinstance(cond.this, exp.Column) and not cond.args.get("query") \
            and cond.expressions and all(constant(e) for e in cond.expressions):
        return cond.this, list(dict.fromkeys(cond.expressions))
    return None


def _renamed(cond: Any, alias: str) -> Any:
    """``cond`` (on one table of the leaf) about the row aliased ``alias`` (a subquery's own
    columns left as they are)."""
    from sqlglot import exp
    copy = cond.copy()
    for col in list(copy.find_all(exp.Column)):
        if col.find_ancestor(exp.Select) is None:
            col.replace(exp.column(col.name, table=alias))
    return copy


def _listed(cond: Any) -> tuple[Any, list[Any], Any, Any] | None:
    """``x IN (SELECT y FROM t WHERE ... AND c IN (constants) ...)``, uncorrelated, over one
    table (TPC-DS q56: ``i_item_id IN (SELECT i_item_id FROM item WHERE i_color IN ('slate',
    'blanched', 'burnished'))``): (``x``, the constants, the subquery, its term on ``c``). An
    edge row is a dimension row whose ``x`` the subquery gives for one constant, or for the
    value beside it (``_member_query``): the list's members are then tried as a plain list's."""
    from sqlglot import exp

    from .witnesses import split_terms
    if not isinstance(cond, exp.In) or not isinstance(cond.this, exp.Column):
        return None
    query = cond.args.get("query")
    inner = query.this if isinstance(query, exp.Subquery) else query
    if not isinstance(inner, exp.Select) or inner.args.get("joins") or inner.args.get("where") is None \
            or len(inner.expressions) != 1 or any(inner.args.get(a) for a in ("group", "having", "limit", "with", "with_")):
        return None
    source = inner.args.get("from_") or inner.args.get("from")
    table = source.this if source is not None else None
    if not isinstance(table, exp.Table) or len(list(inner.find_all(exp.Select))) != 1:
        return None
    known = {table.name.lower(), table.alias_or_name.lower(), ""}
    if any(c.table.lower() not in known for c in inner.find_all(exp.Column)):
        return None  # a column of the outer query: correlated
    for term in split_terms(inner.args["where"].this, exp.And):
        form = _form(term)
        if form is not None and isinstance(term, (exp.In, exp.EQ)):
            return cond.this, form[1], inner, term
    return None


def _member_query(inner: Any, term: Any, constant: Any, k: int) -> Any:
    """``_listed``'s subquery with its term ``c IN (...)`` made ``c = constant`` (``k`` 0), or
    ``c`` = the nearest value the subquery's table holds below (1) or above (2) it, passing its
    other terms."""
    from sqlglot import exp
    form = _form(term)
    assert form is not None  # ``_listed`` chose the term by it
    column = form[0]
    query = inner.copy()
    at = next(n for n in query.find_all(type(term)) if n == term)
    if k:
        nearest = inner.copy()
        edge = next(n for n in nearest.find_all(type(term)) if n == term)
        nearest.set("expressions", [(exp.Max if k == 1 else exp.Min)(this=column.copy())])
        edge.replace((exp.LT if k == 1 else exp.GT)(this=column.copy(), expression=constant.copy()))
        value: Any = exp.Subquery(this=nearest)
    else:
        value = constant.copy()
    at.replace(exp.EQ(this=column.copy(), expression=value))
    return query


# -- on a variant -----------------------------------------------------------------------
def write_path_edges(writer: Any, golds: list[PathGold], index: int) -> None:
    """Write the edge witnesses of ``golds`` into the variant ``writer`` (an
    ``outputs.OutputWriter``) is building; counts and sentences go to ``writer.written``."""
    for i, g in enumerate(golds):
        if (i + index) % EDGE_SPREAD == 0:
            try:
                _write_gold(writer, g)
            except Exception:  # the gold fails or overruns here, or an undo failed: nothing more for it
                continue


def _write_gold(writer: Any, g: PathGold) -> None:
    from .clones import _salt_of
    writer.touchable = writer.touchable_of(g.leaves)
    salt = _salt_of(writer.index)
    answers: dict[str, Counter[tuple[str, ...]]] = {}

    def answer(sql: str) -> Counter[tuple[str, ...]]:
        if sql not in answers:
            answers[sql] = Counter(tuple(str(v) for v in r) for r in writer.bounded(sql, []))
        return answers[sql]

    answer(g.sql)  # a gold that fails here gets nothing
    guarded: dict[str, Counter[tuple[str, ...]]] = {}  # a kept edit keeps them: read once
    for sql in g.guards:
        try:
            guarded[sql] = _counted(writer, sql)
        except Exception:  # a guard that fails here has no answer a witness could hold
            continue
    sources: dict[str, list[tuple[Any, ...]]] = {}  # by the reaching rows' query
    trials = shift = 0
    turn = writer.index // EDGE_SPREAD  # this gold's n-th variant starts n ``TURNS``-th parts into its
    # conjuncts: a gold with more conjuncts than ``MAX_TRIALS`` reach gets edges for each on some variant
    start = turn * -(-len(g.probes) // TURNS) % len(g.probes)
    for probe in g.probes[start:] + g.probes[:start]:
        if trials >= MAX_TRIALS:
            break
        leaf = g.leaves[probe.leaf]
        writer.cloner.links = list(leaf.links)
        rows_sql = probe.sources_sql or leaf.rows_sql
        if rows_sql not in sources:
            sources[rows_sql] = writer.select_sources(dataclasses.replace(leaf, rows_sql=rows_sql))
        reaching = sources[rows_sql]
        if not reaching:
            continue
        if probe.gap is not None:
            trials = _write_gap(writer, g, leaf, probe, reaching, trials, answer, answers, guarded)
            continue
        # per part, the variant's row, or the pinned database's where its value is nearer (a
        # subset keeps few of a calendar's days: the nearest day past a bound may be only there)
        found: dict[str, dict[int, tuple[Any, ...]]] = {}
        for where, run in (("variant", writer.bounded), ("pinned", writer.pinned_rows)):
            try:
                found[where] = {int(r[4]): r for r in run(probe.targets_sql, [salt] * probe.parts)}
            except Exception:  # too slow, or a form the engine refuses
                found[where] = {}
        targets: list[tuple[Any, Any, int, Any, str]] = []
        keys: set[str] = set()
        lead = (turn * KEPT_PER_PROBE) % probe.members if probe.members else 0  # another member first
        for part in [*range(lead, probe.members), *range(lead), *range(probe.members, probe.parts)]:
            mine, pinned = found["variant"].get(part), found["pinned"].get(part)
            where, row = ("variant", mine) if mine is not None and (pinned is None or str(mine[3]) == str(pinned[3])) \
                else ("pinned", pinned)
            if row is not None and str(row[1]) not in keys:
                keys.add(str(row[1]))
                targets.append((row[0], row[1], int(row[2]), row[3], where))
        if not probe.members:
            targets.sort(key=lambda t: t[2])  # rows that fail the conjunct first, then its bounds
        kept = 0
        for rowid, key, passes, value, where in targets[:TRIALS_PER_PROBE]:
            for _ in range(SOURCES_PER_TARGET):
                if trials >= MAX_TRIALS or kept >= KEPT_PER_PROBE:
                    break
                source = reaching[(trials + shift) % len(reaching)]
                trials += 1
                outcome = _trial(writer, g, leaf, probe, source, rowid, key, passes, where, answer, answers, guarded)
                if outcome == "guard":
                    shift += 1  # the next reaching row may sit in no guarded group
                    continue
                if outcome == "kept":
                    kept += 1
                    _said(writer, g, leaf, probe, value, passes)
                break


def _write_gap(writer: Any, g: PathGold, leaf: Any, probe: EdgeProbe, reaching: list[tuple[Any, ...]], trials: int,
               answer: Any, answers: dict[str, Any], guarded: dict[str, Any]) -> int:
    """A difference bound's edits: per difference, a reaching row's copy with ``probe.column``
    moved to the parent row whose key puts the difference there (the variant's, else the
    pinned database's). Returns the trials spent, in all."""
    from .constraints import qualified, quote
    assert probe.gap is not None
    other, sign, values = probe.gap
    fact = qualified(leaf.fact, writer.engine)
    if probe.across is not None:
        trials = _write_gap_across(writer, g, probe, reaching, trials, guarded)
        answers.clear()  # a row moved in place: every answer may have moved
        return trials
    try:  # the differences the pinned rows hold: a copy stays within them (a ship day never before its sale's)
        least, most = writer.pinned_rows(f"SELECT min({quote(probe.column)} - {quote(other)}) * {sign}, "
                                         f"max({quote(probe.column)} - {quote(other)}) * {sign} FROM {fact}", [])[0]
    except Exception:  # too slow, or a form the engine refuses
        return trials
    if least is None or most is None:
        return trials
    low, high = min(least, most), max(least, most)
    kept = 0
    for n, (value, passes) in enumerate([(v, p) for v, p in values if low <= v <= high][:TRIALS_PER_PROBE]):
        if trials >= MAX_TRIALS or kept >= KEPT_PER_PROBE:
            break
        source = reaching[(trials + n) % len(reaching)]
        trials += 1
        try:
            base = writer.bounded(f"SELECT {quote(other)} FROM {fact} WHERE rowid = ?", [int(source[0])])
            if not base or not isinstance(base[0][0], int):
                continue
            key = base[0][0] + sign * value
            found = [(row, where) for where, run in (("variant", writer.bounded), ("pinned", writer.pinned_rows))
                     for row in run(probe.targets_sql, [key])]
        except Exception:  # too slow, or a form the engine refuses
            continue
        if not found:
            continue
        (row, where) = found[0]
        if _trial(writer, g, leaf, probe, source, row[0], row[1], int(passes), where, answer, answers,
                  guarded) == "kept":
            kept += 1
            _said(writer, g, leaf, probe, f"{other} {'+' if sign > 0 else '-'} {value}", int(passes))
    return trials


def _write_gap_across(writer: Any, g: PathGold, probe: EdgeProbe, reaching: list[tuple[Any, ...]], trials: int,
                      guarded: dict[str, Any]) -> int:
    """``_write_gap`` where the other column is a joined table's (``probe.across``): a reaching fact
    row itself moves (in place) to the parent row whose key puts the difference to the joined row
    there, within the differences the pinned database's reaching rows hold (a sale never after its
    return). A copy would need a fresh key (a ticket) and lose the joined row."""
    from .clones import _salt_of
    from .constraints import qualified, quote
    assert probe.gap is not None and probe.across is not None
    leaf = g.leaves[probe.leaf]
    other, sign, values = probe.gap
    fact, column = qualified(leaf.fact, writer.engine), quote(probe.column)
    beside = qualified(probe.across[0], writer.engine)
    try:
        held = _differences(writer.bounded, fact, beside, column, probe, reaching)
        pinned_reaching = writer.pinned_rows(leaf.rows_sql, [_salt_of(writer.index)])
        pinned = _differences(writer.pinned_rows, fact, beside, column, probe, pinned_reaching)
    except Exception:  # too slow, or a form the engine refuses
        return trials
    if not held or not pinned:
        return trials
    low, high = min(h[0] * sign for h in pinned), max(h[0] * sign for h in pinned)
    # a row already on a bound of the gold (moved there by another probe, or so on the pinned data) stays
    edges = {v for p in g.probes if p.gap is not None and p.across == probe.across for v, _ in p.gap[2]}
    held = [h for h in held if h[0] * sign not in edges]
    imported: tuple[dict[str, int], list[tuple[str, int]]] | None = None
    if not held:  # every reaching row here already sits on a bound (q50's one return, 60 days after its sale)
        held, imported = _imported_off_edges(writer, leaf, probe, (fact, beside, column), pinned_reaching,
                                             [w for d, _, w in pinned if d * sign not in edges], edges, guarded)
    kept = 0
    inside = [(v, p) for v, p in values if low <= v <= high]
    turn = writer.index // EDGE_SPREAD % max(1, len(inside))  # a variant with one reaching row: another side first
    for n, (value, passes) in enumerate((inside[turn:] + inside[:turn])[:TRIALS_PER_PROBE]):
        if trials >= MAX_TRIALS or kept >= KEPT_PER_PROBE or not held:
            break
        _, base, rowid = held[n % len(held)]
        trials += 1
        key = base + sign * value
        mark = writer.marks()
        old = None
        try:
            if not writer.bounded(probe.targets_sql, [key]):  # the parent row only on the pinned database: copied in
                found = writer.pinned_rows(probe.targets_sql, [key])
                if not found or writer.cloner.import_row(probe.parent, int(found[0][0]), []) is None:
                    writer.rollback(mark, writer.since(mark))
                    continue
            old = writer.bounded(f"SELECT {column} FROM {fact} WHERE rowid = ?", [rowid])[0][0]
            writer.con.execute(f"UPDATE {fact} SET {column} = ? WHERE rowid = ?", [key, rowid])
            ok = writer.keys_hold({leaf.fact}) and all(_counted(writer, sql) == was for sql, was in guarded.items())
        except Exception:  # a query the engine refused or that overran: undone
            ok = False
        if not ok:
            if old is not None:
                writer.con.execute(f"UPDATE {fact} SET {column} = ? WHERE rowid = ?", [old, rowid])
            writer.rollback(mark, writer.since(mark))
            continue
        for table, added in Counter(t for t, _ in writer.since(mark)).items():
            writer.written.rows[table] = writer.written.rows.get(table, 0) + added
        kept += 1
        held = [h for h in held if h[2] != rowid]
        _said(writer, g, leaf, probe, f"{other} {'+' if sign > 0 else '-'} {value}", int(passes), copy=False)
    if imported is not None:  # the path copied in stays only under a kept edit
        mark, rows = imported
        if kept:
            for table, added in Counter(t for t, _ in rows).items():
                writer.written.rows[table] = writer.written.rows.get(table, 0) + added
        else:
            writer.rollback(mark, rows)
    return trials


def _imported_off_edges(writer: Any, leaf: Any, probe: EdgeProbe, relations: tuple[str, str, str],
                        pinned_reaching: list[tuple[Any, ...]], off: list[int], edges: set[int], guarded: dict[str, Any]
                        ) -> tuple[list[tuple[int, int, int]], tuple[dict[str, int], list[tuple[str, int]]] | None]:
    """Where every reaching row of the variant sits on a bound of the gold already, one reaching
    path of the pinned database whose difference is on none (``off``: its fact row ids there),
    copied in (``OutputWriter.import_reaching``; a path row whose key the variant holds with other
    values is that row: the one store); kept only if every guard's answer stays. Its rows as
    ``_differences`` gives them, with the mark and rows to undo it by."""
    from .clones import _salt_of
    fact, beside, column = relations
    sign = probe.gap[1] if probe.gap is not None else 1
    by_fact = {int(r[0]): r for r in pinned_reaching if r[0] is not None}
    turn = writer.index // EDGE_SPREAD
    ordered = off[turn % len(off):] + off[:turn % len(off)] if off else []
    for w in ordered[:GAP_IMPORTS]:
        if w not in by_fact:
            continue
        mark = writer.marks()
        try:
            if writer.import_reaching(leaf, by_fact[w], mates=True) \
                    and all(_counted(writer, sql) == was for sql, was in guarded.items()):
                reaching = writer.bounded(leaf.rows_sql, [_salt_of(writer.index)])
                held = [h for h in _differences(writer.bounded, fact, beside, column, probe, reaching)
                        if h[0] * sign not in edges]
                if held:
                    return held, (mark, writer.since(mark))
        except Exception:  # too slow, or a form the engine refuses: undone
            pass
        writer.rollback(mark, writer.since(mark))
    return [], None


def _differences(run: Any, fact: str, beside: str, column: str, probe: EdgeProbe, reaching: list[tuple[Any, ...]]
                 ) -> list[tuple[int, int, int]]:
    """Per reaching row (the first ``GAP_SOURCES``), read by ``run``: the difference of ``probe.gap``,
    the joined table's value and the fact's row id."""
    from .constraints import quote
    assert probe.gap is not None and probe.across is not None
    position = probe.across[1]
    pairs = [(int(r[0]), int(r[1 + position])) for r in reaching[:GAP_SOURCES] if r[1 + position] is not None]
    if not pairs:
        return []
    picked = " UNION ALL ".join("SELECT ? AS w, ? AS u" for _ in pairs)
    other = quote(probe.gap[0])
    held = run(f"SELECT f.{column} - o.{other}, o.{other}, p.w FROM ({picked}) AS p JOIN {fact} AS f "
               f"ON f.rowid = p.w JOIN {beside} AS o ON o.rowid = p.u",
               [v for pair in pairs for v in pair])
    return [(int(d), int(v), int(w)) for d, v, w in held if isinstance(d, int) and isinstance(v, int)]


def _trial(writer: Any, g: PathGold, leaf: Any, probe: EdgeProbe, source: tuple[Any, ...], rowid: Any, key: Any,
           passes: int, where: str, answer: Any, answers: dict[str, Any], guarded: dict[str, Any]) -> str:
    """One edit: ``kept``, ``undone``, or ``guard`` (undone: a guard's answer moved)."""
    from .leaves import Move
    asked = g.sql if passes or probe.split else probe.probe_sql
    try:
        before = answer(asked)
    except Exception:  # the probe fails or overruns here
        return "undone"
    mark = writer.marks()
    moved = False
    new: list[tuple[str, int]] | None = None  # the rows the edit added, once written (``since``)
    try:
        if probe.via is not None:
            ok = _through_middle(writer, leaf, probe, source, rowid, key, where)
        else:
            ok = writer.write_unit(leaf, Move("repoint", probe.column, probe.parent, probe.key),
                                   [source], (rowid, key, where))
        new = writer.since(mark) if ok else None
        answers.pop(asked)
        ok = ok and new is not None and answer(asked) != before and writer.cloner.kept(new) \
            and writer.keys_hold({t for t, _ in new})
        if ok:
            moved = any(_counted(writer, sql) != held for sql, held in guarded.items())
            ok = not moved
    except Exception:  # a query the engine refused or that overran: undone
        ok = False
    # what was read after ``since`` only read: ``new`` is every row added, so neither the undo nor
    # the tally reads the tables' row ids again (on Vantage ``_marks`` was a third of the edge witnesses)
    if not ok:
        writer.rollback(mark, new)
        answers.clear()
        return "guard" if moved else "undone"
    answers.clear()  # every answer may have moved (the guards' did not)
    assert new is not None  # kept: written and read
    for table, n in Counter(t for t, _ in new).items():
        writer.written.rows[table] = writer.written.rows.get(table, 0) + n
    return "kept"


def _counted(writer: Any, sql: str) -> Counter[tuple[str, ...]]:
    return Counter(tuple(str(v) for v in r) for r in writer.bounded(sql, []))


def _said(writer: Any, g: PathGold, leaf: Any, probe: EdgeProbe, value: Any, passes: int, copy: bool = True) -> None:
    """The kept edit's sentence, listed after the clone witnesses' in the record."""
    fact, parent = leaf.fact.rsplit(".", 1)[-1], probe.parent.rsplit(".", 1)[-1]
    if probe.via is not None:
        parent = f"{probe.via[1].rsplit('.', 1)[-1]} copy joined to a {parent}"
    how = "on the edge of" if probe.split else "passes" if passes else "fails only"
    writer.written.later.setdefault(g.gold, []).append(
        f"{'a copy of ' if copy else ''}a {fact} row{leaf.through}, moved to a {parent} row with {probe.attribute} = "
        f"{value} ({how} `{probe.rendered}`)")


def _through_middle(writer: Any, leaf: Any, probe: EdgeProbe, source: tuple[Any, ...], rowid: Any, key: Any,
                    where: str) -> bool:
    """A copy of the middle row the source joins (fresh key) moved to the edge row, and a copy
    of the source fact row moved to that copy."""
    assert probe.via is not None
    column, middle, middle_key, position = probe.via
    if where == "pinned" and writer.cloner.import_row(probe.parent, int(rowid), []) is None:
        return False
    if source[1 + position] is None:
        return False
    made = writer.cloner.clone(middle, int(source[1 + position]), {probe.column: key})
    if made is None or middle_key not in made:
        return False
    return writer.cloner.clone(leaf.fact, int(source[0]), {column: made[middle_key]}) is not None


__all__ = ["EdgeProbe", "PathGold", "path_golds", "write_path_edges"]
