"""Clone witnesses: new rows through a gold's join path, each changing one thing at an edge.

Subsetting, duplicating and shuffling rows that exist cannot make a row the pinned data
lacks: a group of exactly ten rows for ``HAVING count(*) >= 10`` when no group has ten, or
a fact row joined to a dimension row that fails the one filter every joined fact row
passes (a dropped ``d_year = 2000`` on a star join). Writing new values into a dimension
row breaks facts correct queries rely on (a date's year is a fact about the date); so here
a *fact* row is cloned instead, and its foreign key moved to another existing dimension
row. References, keys and NOT NULL all hold: the clone references rows that exist, its key
columns get fresh values (a key is no fact a query relies on), and every other value is a
value the row already had.

From a gold's AST (sqlglot), per SELECT whose tables are joined by inner equalities:

- the *join path*: every equality ``child.fk = parent.key`` that a dependency of the
  database (declared or observed) backs is an edge; the *fact* is a table of the path
  no other member references (the sink), cloned only when it has a key column outside
  every dependency (a line number, a ticket number) to give a fresh value;
- a *copy*: a clone of a fact row that reaches the output (passes every conjunct): one
  more row in its group, which tells ``COUNT`` from ``COUNT(DISTINCT ...)``, ``SUM`` from
  ``AVG``, a bag from a set;
- per edge ``fact.fk -> parent`` and per filter conjunct on a table reached through it
  (a dimension attribute): a clone moved to a parent whose path *fails only that
  conjunct* (every other conjunct, the cross-branch ones included, still holds), the
  nearest failing value first for a comparison (``d_year = 1999`` for ``d_year >= 2000``)
  and the nearest passing one (the edge row a moved literal excludes);
- per ``HAVING count(...) op b``: a group pushed by clones of its rows to exactly ``b - 1``,
  ``b`` and ``b + 1`` rows, the nearest group below each first.

New rows, not only copies (``BOUNDARY_VERSION`` 12): a key that is only referenced may take
a fresh value (a key every value of which a child uses also gets a copy of one of the
source's child rows), so a clone may be a *new dimension row* referenced by a new fact row
(a new group; per filter on the dimension, a copy failing only it); a group's ``sum`` or
``avg`` is brought to a HAVING bound; a fact column compared with a literal gets the
literal and its neighbours in a new row; a group key gets a pinned value the variant
lacks (a group of one); an ungrouped ORDER BY gets ties on its first and last rows.

Each witness is one query on the variant (bounded by the watchdog) and a few inserts;
each comes with a sentence the record shows when a variant catches a prediction."""
from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, NamedTuple

from .memo import LastOne

MAX_GROUP_CLONES = 100  # rows added to push one group to a HAVING bound, at most
MAX_CLONE_WITNESSES = 40  # per SELECT of a gold
MAX_PARTNER_CHECKS = 12  # columns checked per table for one unique together with its ticket number
MAX_GROUP_EDGES = 8  # per SELECT: edge values of fact columns bounded inside an OR's AND-groups
MAX_OR_GROUP_WITNESSES = 32  # per SELECT, beside those: copies moved into an OR's AND-groups on a dimension
MAX_SENTENCES = 6  # per gold and variant, in the record
MAX_LIMIT_ROWS = 160  # new paths added to lift a gold past its LIMIT, at most
MAX_IMPORT_ROWS = 96  # rows of a pinned path (and the rows they reference) copied into a variant that has none (an item brings ~20: its class, category and manager ids are items, its id a customer's, ...)
MAX_IMPORT_DEPTH = 96  # references followed from a path's row (each level copies a row, so the rows bound it too: a customer's address id is another customer's id, whose address ...)
MAX_IN_MEMBERS = 4  # members of an IN list a moved witness takes one at a time
MAX_CHILD_ROWS = 4  # rows of a correlated subquery's (or a joined) table copied onto a fact copy's fresh key, per subquery or join
MAX_WHOLE_ROWS = 40  # rows of one group a ``whole`` witness copies, at most (a TPC-DS ticket has up to 20 lines)
MAX_WHOLE_IMPORT_ROWS = 400  # rows of a pinned group (and the rows they reference) copied into a variant that has none
NEW_ROW_SPREAD = 2  # new-row witnesses go into every (CLONE_SPREAD * this)-th variant: all in every one took 2.4-3x the disk
_NUMERIC = ("INT", "DECIMAL", "NUMERIC", "DOUBLE", "FLOAT", "REAL")


@dataclass(frozen=True)
class CloneWitness:
    """One witness: ``rows_sql`` picks the fact row to clone (``w0``), the values its moved
    foreign-key columns take (``r0``, ``r1``, ...), what the sentence shows (``v0``, ...)
    and, for a HAVING bound, how many clones (``need``)."""

    gold: str  # digest of the gold's SQL
    table: str  # the fact table, as the catalog names it
    rows_sql: str
    moved: tuple[str, ...]  # fact columns set from r0, r1, ...
    shown: tuple[str, ...]  # what v0, v1, ... are, e.g. "date_dim.d_year"
    what: str  # the sentence, with {shown} and {need} filled in when written
    grouped: bool = False  # a HAVING witness: the query gives ``need``
    # a *new parent row*: (parent table, its key column, the fact column referencing it);
    # ``rows_sql`` then gives ``p0`` (the parent row cloned) after ``w0``, and ``moved``
    # names the new parent's columns set from r0, r1, ...; the fact clone references it
    parent: tuple[str, str, str] | None = None
    fixed: tuple[tuple[str, str], ...] = ()  # (fact column, literal text) set on the clone, if in its domain
    # a HAVING sum/avg witness: ``rows_sql`` gives ``need`` clones with ``moved[0]`` = r0,
    # then one more with r1 (the rest of the gap to the bound)
    filled: bool = False
    regroup: str | None = None  # a fact column given a pinned value the variant's column lacks: a new group
    # written into every (CLONE_SPREAD * spread)-th variant (new-row kinds: NEW_ROW_SPREAD, within the disk
    # budget); 0: into every variant (a set operation's branch rows: one tuple's rows go into each branch together)
    spread: int = 1
    # a LIMIT witness: ``count_sql`` gives the gold's rows (its LIMIT left off) on the variant;
    # new paths (``parent`` given: each a new parent row with ``renamed`` given new values) are
    # added until there are ``limit + 1`` of them, so LIMIT n-1, n and n+1 differ
    limit: int = 0
    count_sql: str = ""
    renamed: tuple[str, ...] = ()
    path: tuple[str, ...] = ()  # the tables of the rows after ``p0`` (``u0``, ...): the path's rows, kept as they are
    # the join path's references no declared or observed dependency backs (``origin`` "gold"):
    # the writer keeps them like dependencies (never a fresh value in them)
    links: tuple[Any, ...] = ()
    # fact columns the gold groups by and reads (``groups.GroupWitness``'s): a copy of a per-ticket group's row
    # keeps its ticket, another reference the gold does not read taking a value the ticket lacks
    keep: tuple[str, ...] = ()
    reads: tuple[str, ...] = ()
    # the fact's key only observed references bind (TPC-DS's encoded ``c_customer_id``, each one a
    # ``t_time_id`` too): its copy takes a value every referenced column holds (``CloneWriter.shared``)
    shared: bool = False
    # a moved witness on a variant where no row reaches the SELECT (a subset keeps none of the four customers
    # of one city and income range): ``reach_sql`` (``w0``, ``p0``, then the rows of ``path``) finds a pinned
    # reaching path, copied in (``_import_path``, as a LIMIT witness's) before ``rows_sql`` is asked again
    reach_sql: str = ""
    # a moved witness to where a comparison's sides meet (``_meeting``): (parent table, its key, its compared
    # column); ``rows_sql`` gives the value (``r0``), and the parent row holding it is copied in from the
    # pinned data where the variant lacks it (a subset keeps a tenth of the calendar)
    meet: tuple[str, ...] = ()
    # a SELECT whose groups reach the output only with at least two rows (a count band: TPC-DS q34's ``cnt
    # BETWEEN 15 AND 20`` over tickets): a copy of one row is a group of one line, outside the band. Here the
    # fact's columns the SELECT groups by, one of them the one a copy takes fresh (the ticket): the witness
    # copies every row of its source's group, moved alike, under one fresh ticket (``_whole_clone``)
    whole: tuple[str, ...] = ()
    # with ``whole``: the row ids of one row per group that reaches the gold's output (``tracing.reaching_top_sql``);
    # where none does on the variant, one such group of the pinned data is copied in first (``_reach_whole``)
    top_sql: str = ""
    # the rows a copy with a fresh key needs to reach what its source reaches (``ChildRows``)
    children: tuple[ChildRows, ...] = ()
    # a new parent row's columns given new values too: the column an IN over its own table selects (``_self_in``)
    renew: tuple[str, ...] = ()
    # the new parent row's moved values are a gold's literals (an IN list's member), not a held row's: written
    # only where the column's domain takes them (``boundaries.Domain``)
    named: bool = False


class ChildRows(NamedTuple):
    """Rows of another table a copy of a fact row takes with it, moved onto its fresh key:
    those a correlated subquery of the gold reads for the source (a customer's sales under
    ``EXISTS (... WHERE c.c_customer_sk = ss_customer_sk ...)``, ``correlated_children``), or
    those the gold joins to it by the key the copy renumbers (a sale's return, joined by
    ticket, item and customer: TPC-DS q50). Without them the copy fails the subquery or
    finds no partner, and reaches nothing."""

    column: str  # the fact's column the copy gives a fresh value
    table: str
    child_column: str  # the child's column set to the copy's value
    sql: str  # the child rows' ids, given the source's value of ``column`` ``values`` times, or (0) its row id
    values: int


def gold_digest(sql: str) -> str:
    """The digest a gold's witnesses are recorded under (the one distillation keys it by)."""
    return hashlib.sha256(sql.encode()).hexdigest()[:16]


_WITNESSES: LastOne[str, list[CloneWitness]] = LastOne()  # one database's golds at a time


def clone_witnesses(gold_sqls: Iterable[str], dialect: str, tables: dict[str, Any],
                    dependencies: Iterable[Any]) -> list[CloneWitness]:
    """The clone witnesses of every gold. ``tables``: ``constraints.TableConstraints`` by
    name; ``dependencies``: the inclusion dependencies the variants keep. Made once per
    process for the same golds, tables and dependencies: the boundary rows
    (``BoundaryRows``) and the LIMIT output paths (``outputs``) both ask, and on Vantage each
    asking is seconds of sqlglot analysis in each build process."""
    golds, every = list(gold_sqls), list(dependencies)
    key = hashlib.sha256(repr((golds, dialect, sorted(map(repr, every)),
                               sorted((name, repr(t)) for name, t in tables.items()))).encode()).hexdigest()
    return list(_WITNESSES.get(key, lambda: _clone_witnesses(golds, dialect, tables, every)))


def _clone_witnesses(gold_sqls: list[str], dialect: str, tables: dict[str, Any],
                     every: list[Any]) -> list[CloneWitness]:
    from sqlglot import exp

    from .tracing import reaching_top_sql
    from .witnesses import Catalog, parsed_golds
    names = Catalog({t: set(c.columns) for t, c in tables.items()})
    deps = [d for d in every if d.origin != "total" and len(d.child_columns) == 1]
    out: list[CloneWitness] = []
    for sql, tree in parsed_golds(gold_sqls, dialect):
        digest = gold_digest(sql)
        for select in tree.find_all(exp.Select):
            try:
                found = [_with_ctes(w, tree, dialect) for w in _select_witnesses(
                    select, names, tables, deps, dialect, digest, every, select is tree,
                    partial(reaching_top_sql, tree, select, dialect=dialect))]
            except Exception:  # an odd tree: no clone witness for this SELECT
                continue
            out += [w for w in found if w not in out]
        for setop in tree.find_all(exp.Intersect, exp.Except):
            if isinstance(setop.parent, type(setop)):
                continue  # a chain's inner node: its outermost node takes every branch
            try:
                found = _branch_witnesses(setop, names, tables, deps, dialect, digest)
            except Exception:  # an odd tree: no branch witness for this set operation
                continue
            out += [w for w in found if w not in out]
    return out


def _with_ctes(w: CloneWitness, tree: Any, dialect: str) -> CloneWitness:
    """``w`` with the gold's WITH on its queries where they read one of its CTEs and define
    none at their top: a witness of a SELECT is asked alone, and TPC-DS q14's branches read
    ``cross_items`` (in an IN subquery) and ``avg_sales`` (in a HAVING band): 21 of its
    witness queries named tables that do not exist."""
    import sqlglot
    from sqlglot import exp

    from .witnesses import with_key, with_of
    with_ = with_of(tree)
    if with_ is None:
        return w
    ctes = {c.alias_or_name.lower() for c in with_.expressions}

    def defined(sql: str) -> str:
        if not sql:
            return sql
        q = sqlglot.parse_one(sql, read=dialect)
        if with_of(q) is not None or not any(not t.db and t.name.lower() in ctes for t in q.find_all(exp.Table)):
            return sql
        q.set(with_key(), with_.copy())
        return str(q.sql(dialect=dialect))
    return replace(w, rows_sql=defined(w.rows_sql), reach_sql=defined(w.reach_sql))


def _branch_witnesses(setop: Any, names: Any, tables: dict[str, Any], deps: list[Any], dialect: str,
                      digest: str) -> list[CloneWitness]:
    """Rows that give branches of an INTERSECT or EXCEPT a tuple in common: a copy of a fact
    row that reaches branch Y's output, its foreign keys moved to the parent rows of a row
    that reaches branch X's (the branches project the same parent columns), so Y outputs
    X's tuple. Branches of different fact tables rarely share a tuple on the pinned data
    (TPC-DS's channels: one customer's store, catalog and web sales on one date), so such a
    gold is often empty there, and a near-miss whose branch lost a join predicate (a cross
    product: every customer of its sales with every date) coincides with it. Per variant:
    one tuple in every branch (an INTERSECT's answer with a value), and per branch Z and
    projected parent, a tuple in the two other branches whose parent row Z's reaching rows
    use (the tuple Z's cross product adds). An EXCEPT: each later branch given a tuple of
    the first (the answer loses it)."""
    from sqlglot import exp

    from .constraints import Dependency
    from .witnesses import resolve_column

    def leaves(node: Any) -> list[Any]:
        if isinstance(node, type(setop)):
            return leaves(node.this) + leaves(node.expression)
        return [node]

    branches = leaves(setop)
    if len(branches) < 2 or not all(isinstance(b, exp.Select) for b in branches):
        return []
    shapes: list[tuple[Any, _Star, list[tuple[Any, ...]]]] = []
    for b in branches:
        star = _star(b, names, tables, deps)
        if star is None or star.correlated is not None or star.outer:
            return []  # a branch tied to an outer query: its rows are not its own
        projected = []
        for e in b.expressions:
            key = resolve_column(e.unalias(), star.sources, names.lower) if isinstance(e.unalias(), exp.Column) \
                else None
            # the fact's edge whose parent side reads the projected column
            edge = next((g for g in star.edges if key is not None and g[0] == star.fact
                         and key[0] in _reached(g[2], star.edges)), None)
            if key is None or edge is None:
                return []
            projected.append((star.table_of[edge[2]], edge[3], star.table_of[key[0]], key[1], edge))
        shapes.append((b, star, projected))
    if any([p[:4] for p in shape[2]] != [p[:4] for p in shapes[0][2]] for shape in shapes):
        return []
    moved = [list(dict.fromkeys(p[4] for p in shape[2])) for shape in shapes]  # per branch, its edges to move
    if len({len(m) for m in moved}) != 1:
        return []

    def reaching(k: int, columns: list[Any]) -> Any:
        q = shapes[k][0].copy()
        for arg in ("group", "having", "order", "limit", "offset", "qualify", "distinct", "windows"):
            q.set(arg, None)
        q.set("expressions", columns)
        return q

    def witness(x: int, y: int, turn: int, apart: tuple[int, ...] = (), only: int | None = None) -> CloneWitness:
        """Y given the tuple of a reaching X row (rotated by ``turn``) that no branch of ``apart``
        gives yet; ``only``: Y's row moved on that edge alone (its other parents its own)."""
        (_, xstar, _), (_, ystar, _) = shapes[x], shapes[y]
        edges = list(range(len(moved[y]))) if only is None else [only]
        xq = reaching(x, [exp.alias_(exp.column(moved[x][k][1], table=moved[x][k][0]), f"r{k}") for k in edges])
        mine = [exp.column(e[1], table=e[0]) for e in moved[x]]
        for other in apart:
            keys = [exp.column(e[1], table=e[0]) for e in moved[other]]
            xq = xq.where(exp.not_(exp.In(this=mine[0] if len(mine) == 1 else exp.Tuple(expressions=mine),
                                          query=exp.Subquery(this=reaching(other, keys)))))
        xq = xq.join(exp.to_table("__turn"), join_type="cross")
        xq.set("order", exp.Order(expressions=[exp.Ordered(this=_turned(exp.column("rowid", table=xstar.fact), turn)),
                                               *by_position(len(xq.expressions))]))
        xq.set("limit", exp.Limit(expression=exp.Literal.number(1)))
        # Y's reaching row, its moved edges' parents joined to X's values instead
        yq = reaching(y, [exp.alias_(exp.column("rowid", table=ystar.fact), "w0")]
                      + [exp.alias_(exp.column(f"r{k}", table="__x"), f"r{k}") for k in edges])
        yq.set("where", None)
        for j in yq.args.get("joins") or []:
            j.set("on", None)
            j.set("kind", "CROSS")
        dropped = {moved[y][k][4] for k in edges}
        filters = [c.copy() for i, c in enumerate(ystar.conjuncts) if i not in dropped]
        filters += [exp.EQ(this=exp.column(moved[y][k][3], table=moved[y][k][2]),
                           expression=exp.column(f"r{k}", table="__x")) for k in edges]
        yq = yq.join(exp.Subquery(this=xq, alias=exp.TableAlias(this=exp.to_identifier("__x"))), join_type="cross")
        yq = yq.join(exp.to_table("__turn"), join_type="cross")
        yq.set("where", exp.Where(this=exp.and_(*filters)))
        yq.set("order", exp.Order(expressions=[exp.Ordered(this=_turned(exp.column("rowid", table=ystar.fact))),
                                               *by_position(len(yq.expressions))]))
        yq.set("limit", exp.Limit(expression=exp.Literal.number(1)))
        table_of = ystar.table_of
        links = tuple(dict.fromkeys(Dependency(table_of[ca], (cc,), table_of[pa], (pc,), "gold")
                                    for ca, cc, pa, pc, _ in ystar.edges))
        fact_name, x_name = (s.table_of[s.fact].rsplit(".", 1)[-1] for s in (ystar, xstar))
        shown = ", ".join(f"{p[2].rsplit('.', 1)[-1]}.{p[3]}" for p in shapes[y][2])
        what = (f"a copy of a {fact_name} row moved to the ({shown}) of a {x_name} row: both branches of the "
                f"gold's {setop.key.upper()} give that tuple") if only is None else (
                f"a copy of a {fact_name} row moved to the {table_of[moved[y][only][2]].rsplit('.', 1)[-1]} row of a "
                f"{x_name} row (a branch that lost a join predicate gives that row's tuple)")
        return CloneWitness(digest, table_of[ystar.fact], f"WITH __turn AS (SELECT ? AS salt) {yq.sql(dialect=dialect)}",
                            tuple(moved[y][k][1] for k in edges), (), what, links=links, spread=0)

    n = len(branches)
    out = [witness(0, y, 0) for y in range(1, n)]  # INTERSECT: one tuple in every branch; EXCEPT: one left out
    if isinstance(setop, exp.Intersect):
        # per branch Z and edge k: a tuple of X and Y (none of Z's), and a row of Z on the tuple's k-th parent
        for z in range(n):
            x, y = [k for k in range(n) if k != z][:2]
            for k in range(len(moved[0]) if len(moved[0]) > 1 else 0):
                turn = 1 + z * len(moved[0]) + k
                out += [witness(x, z, turn, (y, z), k), witness(x, y, turn, (y, z))]
    return out


def _turned(rowid: Any, shift: int = 0) -> Any:
    """``turned_rowid`` with the turn read from the ``__turn`` row (a query that scrambles two
    row choices, each in its own SELECT, and has one parameter); ``shift`` another order for
    another witness of the same turn."""
    from sqlglot import exp
    salt = exp.Add(this=exp.column("salt", table="__turn"), expression=exp.Literal.number(shift * 1000003))
    scrambled = exp.Add(this=exp.Mul(this=rowid, expression=exp.Literal.number(2654435761)), expression=salt)
    return exp.Mod(this=exp.Paren(this=scrambled), expression=exp.Literal.number(4294967291))


class _Star(NamedTuple):
    """A SELECT read as a star: its tables by alias, its WHERE/ON conjuncts (with the
    aliases each reads), the join edges a reference backs, and the fact (the sink)."""
    sources: dict[str, str]
    table_of: dict[str, str]
    conjuncts: list[Any]
    alias_sets: list[Any]
    edges: list[tuple[str, str, str, str, int]]  # child alias, child col, parent alias, parent col, conjunct
    fact: str
    correlated: _Correlation | None  # a correlated EXISTS's tie to its outer query (not in ``conjuncts``)
    outer: frozenset[str] = frozenset()  # LEFT JOINed aliases left out of the star (``_left_aside``)
    renewed: tuple[tuple[str, str], ...] = ()  # (alias, column) an IN over its own table selects (``_self_in``)


def _star(select: Any, names: Any, tables: dict[str, Any], deps: list[Any]) -> _Star | None:
    """``select`` as a star of tables joined by references, its LEFT JOINed tables left aside,
    or None (a right or full join, a derived table, an outer query's column, no fact)."""
    from sqlglot import exp

    from .witnesses import conjuncts_of, resolve_column, select_sources
    sources = {**select_sources(select, names), **{a: t for a, (t, _) in _projections(select, names).items()}}
    joins = select.args.get("joins") or []
    if not sources or len(sources) != 1 + len(joins) or select.args.get("from_", select.args.get("from")) is None:
        return None  # a derived table in FROM: its rows are not a table's
    outer = _left_aside(joins)
    if outer is None or any(j.args.get("using") or (j.kind or "").upper() not in ("", "INNER", "CROSS", "OUTER")
                            or (j.kind or "").upper() == "OUTER" and not j.side for j in joins):
        return None
    sources = {a: t for a, t in sources.items() if a not in outer}
    joins = [j for j in joins if j.this.alias_or_name.lower() not in outer]
    # an OR's AND-groups that each join ``cd_demo_sk = ss_cdemo_sk`` (TPC-DS q13): a join of the star
    conjuncts: list[Any] = []
    where = select.args.get("where")
    if where is not None:
        conjuncts += conjuncts_of(where.this)
    for j in joins:
        if j.args.get("on") is not None:
            conjuncts += conjuncts_of(j.args["on"])
    renewed: list[tuple[str, str]] = []
    for i in reversed(range(len(conjuncts))):
        flat = _self_in(conjuncts[i], sources, names)
        if flat is not None:
            conjuncts[i:i + 1], renewed = flat[0], renewed + [flat[1]]

    def aliases_of(node: Any) -> set[str] | None:
        out = set()
        for col in node.find_all(exp.Column):
            if col.find_ancestor(exp.Select) not in (select, None):  # None: a term ``_self_in`` moved out
                continue
            key = resolve_column(col, sources, names.lower)
            if key is None:
                return None  # an outer query's column, or an ambiguous one
            out.add(key[0])
        return out

    alias_sets = [aliases_of(c) for c in conjuncts]
    correlated = _correlation(select, conjuncts, alias_sets, sources, names)
    if correlated is not None:  # a correlated EXISTS: its correlation is the moved witnesses' second move
        conjuncts, alias_sets = ([x for i, x in enumerate(k) if i != correlated.conjunct]
                                 for k in (conjuncts, alias_sets))
    if any(a is None for a in alias_sets):
        return None
    table_of = {a: names.originals[t] for a, t in sources.items()}
    edges: list[tuple[str, str, str, str, int]] = []
    for i, c in enumerate(conjuncts):
        if isinstance(c, exp.EQ) and isinstance(c.this, exp.Column) and isinstance(c.expression, exp.Column):
            left, right = resolve_column(c.this, sources, names.lower), resolve_column(c.expression, sources, names.lower)
            if left is None or right is None or left[0] == right[0]:
                continue
            for (ca, cc), (pa, pc) in ((left, right), (right, left)):
                if any(d.child == table_of[ca] and d.child_columns == (cc,) and d.parent == table_of[pa]
                       and d.parent_columns == (pc,) for d in deps):
                    edges.append((ca, cc, pa, pc, i))
                    break
            else:
                implied = joined_key(tables[table_of[left[0]]], left[1], tables[table_of[right[0]]], right[1])
                if implied is not None:
                    (ca, cc), (pa, pc) = (left, right) if implied else (right, left)
                    edges.append((ca, cc, pa, pc, i))
    parents = {e[2] for e in edges}
    sinks = sorted((a for a in sources if a not in parents),
                   key=lambda a: (-sum(1 for e in edges if e[0] == a), a))
    if not sinks or (len(sources) > 1 and not any(e[0] == sinks[0] for e in edges)):
        return None
    return _Star(sources, table_of, conjuncts, alias_sets, edges, sinks[0], correlated, frozenset(outer),
                 tuple(dict.fromkeys(renewed)))


def _self_in(cond: Any, sources: dict[str, str], names: Any) -> tuple[list[Any], tuple[str, str]] | None:
    """``a.k IN (SELECT k FROM T WHERE f)`` with ``T`` the table of ``a`` (TPC-DS q56's
    ``i_item_id IN (SELECT i_item_id FROM item WHERE i_color IN (...))``): ``f``'s terms on
    ``a`` itself and ``(a, k)``, or None for any other IN. A witness then moves ``a``'s own
    row across ``f``'s edges, with a new ``k`` (``CloneWitness.renew``): a copy keeping its
    source's ``k`` passes the IN through its source, whatever its own colour."""
    from sqlglot import exp

    from .witnesses import conjuncts_of, resolve_column, select_sources
    query = cond.args.get("query") if isinstance(cond, exp.In) else None
    inner = query.this if isinstance(query, exp.Subquery) else query
    if not isinstance(inner, exp.Select) or not isinstance(cond.this, exp.Column) or len(inner.expressions) != 1:
        return None
    if any(inner.args.get(a) for a in ("joins", "group", "having", "limit", "offset", "with", "qualify")):
        return None
    outer = resolve_column(cond.this, sources, names.lower)
    inner_sources = select_sources(inner, names)
    where = inner.args.get("where")
    picked = inner.expressions[0]
    if outer is None or where is None or len(inner_sources) != 1 or not isinstance(picked, exp.Column) \
            or picked.name.lower() != outer[1].lower() or next(iter(inner_sources.values())) != sources[outer[0]]:
        return None
    columns = list(where.find_all(exp.Column))
    if not columns or any(c.find_ancestor(exp.Select) is not inner or resolve_column(c, inner_sources, names.lower)
                          is None for c in columns) or where.find(exp.Subquery):
        return None  # correlated, or a further subquery: left as it is
    moved = where.this.copy().transform(
        lambda n: exp.column(n.name, table=outer[0]) if isinstance(n, exp.Column) else n)
    return conjuncts_of(moved), outer


def _projections(select: Any, names: Any) -> dict[str, tuple[str, Any]]:
    """alias -> (table, the table as a FROM item under that alias) of each derived table of
    ``select`` that only projects one table's rows (TPC-DS q62's ``(SELECT SUBSTRING(w_warehouse_name,
    1, 20) w_substr, * FROM warehouse) sq1``): its rows are the table's, so it is that table in the
    star (its computed outputs resolve to no column). Before, such a derived table left the SELECT
    without any clone witness, the NULL-reference copy of a dropped join predicate among them."""
    from sqlglot import exp

    from .witnesses import select_sources
    from_ = select.args.get("from_") or select.args.get("from")
    out: dict[str, tuple[str, Any]] = {}
    for node in ([from_.this] if from_ is not None else []) + [j.this for j in select.args.get("joins") or []]:
        inner = node.this if isinstance(node, exp.Subquery) and node.alias else None
        if not isinstance(inner, exp.Select) or inner.args.get("joins") or any(
                inner.args.get(k) for k in ("where", "group", "having", "order", "limit", "offset", "qualify",
                                             "distinct", "windows", "with", "with_")) \
                or any(e.find(exp.Select, exp.AggFunc, exp.Window) for e in inner.expressions):
            continue
        own = select_sources(inner, names)
        if len(own) != 1 or not any(isinstance(e, exp.Star) for e in inner.expressions):
            continue  # without ``*`` the derived table's columns are not the table's
        ((_, table),) = own.items()
        inner_from = inner.args.get("from_") or inner.args.get("from")
        if inner_from is None:
            continue
        source = inner_from.this.copy()
        source.set("alias", exp.TableAlias(this=exp.to_identifier(node.alias)))
        out[node.alias.lower()] = (table, source)
    return out


def _left_aside(joins: list[Any]) -> set[str] | None:
    """The aliases of the ``LEFT JOIN``ed tables (TPC-DS q72's promotion and catalog_returns):
    they drop no row of the star, so its witnesses are the star's without them (where WHERE or
    an inner join's ON reads one, no column resolves and there is no star). None where a RIGHT
    or FULL join, or a LEFT JOIN of a derived table, is there."""
    from sqlglot import exp
    aside: set[str] = set()
    for j in joins:
        if j.side and (j.side.upper() != "LEFT" or not isinstance(j.this, exp.Table)):
            return None
        if j.side:
            aside.add(j.this.alias_or_name.lower())
    return aside


def _select_witnesses(select: Any, names: Any, tables: dict[str, Any], deps: list[Any], dialect: str,
                      digest: str, every: list[Any], top: bool = False,
                      reach: Callable[..., str | None] = lambda alias, reader=None: None) -> list[CloneWitness]:
    """``reach``: the row ids of a FROM item's rows that reach the gold's output, where ``select``
    sits in a derived table or CTE (a UNION ALL branch): its witnesses copy those rows first,
    since a row that reaches only the branch (an item of another manager, a sale at another
    hour) changes no answer, however it is moved."""
    import sqlglot
    from sqlglot import exp

    from .witnesses import resolve_column, with_key, with_of
    star = _star(select, names, tables, deps)
    if star is None:
        return []
    sources, table_of, conjuncts, alias_sets, edges, fact, correlated, aside, renewed = star

    def own_columns(node: Any) -> list[Any]:
        return [c for c in node.find_all(exp.Column) if c.find_ancestor(exp.Select) is select]

    # the path's references count as dependencies where nothing declared or observed backs
    # them (TPC-DS's ``ss_item_sk = i_item_sk``: no foreign key, no name the observer links):
    # a clone keeps them pointing at rows that exist, and never gives them a fresh value
    from .constraints import Dependency
    links = tuple(dict.fromkeys(Dependency(table_of[ca], (cc,), table_of[pa], (pc,), "gold")
                                for ca, cc, pa, pc, _ in edges))
    every = every + list(links)
    fact_t, fact_linked = tables[table_of[fact]], deps_columns(every, table_of[fact])
    # a customer (the fact of a star of its address, demographics and returns) whose id only observed
    # references bind is copied too, its id a shared one: else no witness of a filter on its path
    shared = fresh_columns(fact_t, fact_linked) is None
    if shared and fresh_columns(fact_t, fact_linked - set(sharable(fact_t, every))) is None:
        return []
    if correlated is not None and correlated.alias != fact:
        return []
    out: list[CloneWitness] = []
    base_from = select.copy()
    for arg in ("group", "having", "order", "limit", "offset", "qualify", "distinct", "windows", "where"):
        base_from.set(arg, None)
    base_from.set("joins", [j for j in base_from.args.get("joins") or [] if j.this.alias_or_name.lower() not in aside])
    projected = _projections(base_from, names)  # read as the tables they project (with their row ids)
    for node in [n for n in base_from.find_all(exp.Subquery) if n.parent is not None
                 and n.alias.lower() in projected and n.find_ancestor(exp.Select) is base_from]:
        node.replace(projected[node.alias.lower()][1])
    for j in base_from.args.get("joins") or []:
        j.set("on", None)
        j.set("kind", "CROSS")
    path = ", ".join(sorted({table_of[a].rsplit(".", 1)[-1] for a in sources if a != fact}))
    through = f" joined through {path}" if path else ""
    fact_name = table_of[fact].rsplit(".", 1)[-1]
    reaching_sql = reach(fact)
    first: list[Any] = [] if reaching_sql is None else [exp.Ordered(this=exp.If(
        this=exp.In(this=exp.column("rowid", table=fact), query=exp.Subquery(this=sqlglot.parse_one(reaching_sql, read=dialect))),
        true=exp.Literal.number(0), false=exp.Literal.number(1)))]

    def query(extra_tables: list[tuple[str, str]], filters: list[Any], columns: list[tuple[Any, str]],
              order: list[Any], limit: bool = True) -> str:
        q = base_from.copy()
        for table, alias in extra_tables:
            q = q.join(exp.Table(this=exp.to_identifier(table.rsplit(".", 1)[-1]),
                                 db=exp.to_identifier(table.split(".", 1)[0]) if "." in table else None,
                                 alias=exp.TableAlias(this=exp.to_identifier(alias))), join_type="cross")
        q.set("expressions", [exp.alias_(exp.column("rowid", table=fact), "w0")]
              + [exp.alias_(e, name) for e, name in columns])
        if filters:  # beside a second copy of a table (``_new_parent_witnesses``) a bare column names both
            q.set("where", exp.Where(this=exp.and_(*[f.copy().transform(lambda n: _qualified(n, sources, names))
                                                     if extra_tables else f.copy() for f in filters])))
        if limit:
            q.set("order", exp.Order(expressions=[k.copy() for k in first] + order
                                     + [exp.Ordered(this=turned_rowid(exp.column("w0")))]
                                     + by_position(len(q.expressions))))
            q.set("limit", exp.Limit(expression=exp.Literal.number(1)))
        return str(q.sql(dialect=dialect))

    from .witnesses import band_terms, group_keys
    band = band_terms(select) if select.args.get("group") is not None else []
    # a derived table's group reaches the output only where the enclosing query's joins find its key's row
    grouped_on = conjuncts + _outer_joins(select, names) if band else conjuncts
    keys = [resolve_column(k, sources, names.lower) if isinstance(k, exp.Column) else None for k in group_keys(select)]
    group_cols = tuple(dict.fromkeys(k[1] for k in keys if k is not None and k[0] == fact))
    reads = tuple(sorted({k[1] for k in (resolve_column(c, sources, names.lower) for c in own_columns(select))
                          if k is not None and k[0] == fact}))
    # a copy of a row that reaches the output
    out.append(CloneWitness(digest, table_of[fact], query([], conjuncts, [], []), (), (),
                            f"a copy of a {fact_name} row that reaches the output{through}", keep=group_cols, reads=reads))
    if not band:
        out += _unjoined_witnesses(edges, fact, fact_name, through, table_of, tables, conjuncts, digest, query)
    out += _limit_witnesses(select, top, conjuncts, edges, fact, fact_name, through, table_of, tables, every, dialect,
                            digest, query, lambda c: resolve_column(c, sources, names.lower), sorted(sources))
    out += [replace(w, keep=group_cols, reads=reads) for w in _having_witnesses(
        select, band, grouped_on, fact, fact_name, through, base_from, dialect, digest, table_of[fact], query,
        resolve=lambda c: resolve_column(c, sources, names.lower), free=set(tables[table_of[fact]].free))]
    if band:  # after the pushes, in every variant (one row): a group a push brings into the band may be the only one
        out += [replace(w, keep=group_cols, reads=reads, spread=0) for w in _unjoined_witnesses(
            edges, fact, fact_name, through, table_of, tables, conjuncts, digest, query,
            band=_band_rows(band, group_keys(select), grouped_on, query, dialect))]
    first_new = len(out)
    out += _new_parent_witnesses(conjuncts, alias_sets, edges, fact, fact_name, through, table_of, tables,
                                 every, dialect, digest, query, lambda c: resolve_column(c, sources, names.lower),
                                 renewed)
    out += _edge_value_witnesses(conjuncts, alias_sets, fact, fact_name, through, table_of, tables, dialect,
                                 digest, query, lambda c: resolve_column(c, sources, names.lower))
    out += _order_witnesses(select, conjuncts, fact, fact_name, through, table_of, tables, dialect, digest, query,
                            lambda c: resolve_column(c, sources, names.lower))
    group = select.args.get("group")
    filtered = {c.name.lower() for cond in conjuncts for c in cond.find_all(exp.Column)}
    for g in (group.expressions if group is not None else []):
        key = resolve_column(g, sources, names.lower) if isinstance(g, exp.Column) else None
        if key is not None and key[0] == fact and key[1] in tables[table_of[fact]].free \
                and key[1].lower() not in filtered:
            out.append(CloneWitness(digest, table_of[fact], query([], conjuncts, [], []), (), (key[1],),
                                    f"a {fact_name} row{through} in a group of its own, {{shown}} (a value of the "
                                    f"pinned column this variant lacks)", regroup=key[1]))
    # a gold's literal no pinned row holds is shown on every variant: nothing else ever holds it (q56's
    # 'burnished' item, one per channel, was written on none of the catalog's variants: a subset lacked its path)
    out[first_new:] = [replace(w, spread=0 if w.named else NEW_ROW_SPREAD) for w in out[first_new:]]
    out += _split_group_witnesses(select, conjuncts, alias_sets, edges, fact, fact_name, through, table_of, tables,
                                  sources, names, dialect, digest, query,
                                  lambda c: resolve_column(c, sources, names.lower),
                                  reaching_sql or reach(fact, reader=0))
    out = [replace(w, links=links, shared=shared) for w in out[:MAX_CLONE_WITNESSES]]
    whole = _whole_columns(band, group_cols, fact_t, fact_linked)
    # a whole group copied in from the pinned data brings the rows the enclosing query joins it to (a customer)
    outer = _outer_links(select, sources, table_of, names) if whole else ()

    read = correlated_children(select, conjuncts, fact, lambda c: resolve_column(c, sources, names.lower), names,
                               dialect, with_of(select.root()), with_key()) if correlated is None else ()
    kids = tuple(ChildRows(*found[:5]) for found in read)
    kids += _join_children(conjuncts, fact, fresh_columns(fact_t, fact_linked) or [], sources, table_of, names, dialect)

    def wholly(found: list[CloneWitness]) -> list[CloneWitness]:
        found = [replace(w, children=kids) for w in found] if kids else found
        return [replace(w, whole=whole, top_sql=reaching_sql or "", links=tuple(dict.fromkeys(w.links + outer)))
                if whole and _copies_alone(w) else w for w in found]
    if correlated is not None:  # its rows reach no output as they are: only the moved witnesses below
        out = []
    counted = select.copy()
    for arg in ("order", "limit", "offset"):
        counted.set(arg, None)
    # a correlated EXISTS's rows reach nothing as they are: no reaching path to copy in for its witnesses
    reach_sql = "" if correlated is not None else query(
        [], conjuncts, [(exp.column("rowid", table=fact), "p0")]
        + [(exp.column("rowid", table=a), f"u{i}") for i, a in enumerate(sorted(sources))], [])
    count_sql = f"SELECT count(*) FROM ({counted.sql(dialect=dialect)}) AS gold_rows"
    reach_path = tuple(table_of[a] for a in sorted(sources))
    # per edge from the fact, per filter on the tables reached through it: a moved clone; per AND-group of
    # an OR on them, the copies passing that group alone (all its members first, then its bounds' edges)
    grouped_members: list[CloneWitness] = []
    grouped_edges: list[CloneWitness] = []
    for ca, cc, pa, pc, edge_i in [e for e in edges if e[0] == fact]:
        subtree = _reached(pa, edges)
        copy = {a: f"{a}__w" for a in subtree}
        renamed = partial(_realiased, resolve=lambda c: resolve_column(c, sources, names.lower), aliases=copy)

        # the source row's conjuncts name their tables: the copied tables' columns are the same names
        own = [c.copy().transform(lambda n: _qualified(n, sources, names)) for c in conjuncts]
        touching = [i for i, a in enumerate(alias_sets) if a and a & subtree and i != edge_i]
        targets = [i for i in touching if not conjuncts[i].find(exp.Select) and (
            len(alias_sets[i] or ()) == 1
            and not (isinstance(conjuncts[i], exp.EQ) and isinstance(conjuncts[i].expression, exp.Column))
            or _across(conjuncts[i]) and len((alias_sets[i] or set()) & subtree) == 1)]
        extra = [(table_of[a], copy[a]) for a in sorted(subtree)]
        for i in targets:
            target = conjuncts[i]
            (alias,) = (alias_sets[i] or {""}) & subtree if len(alias_sets[i] or ()) > 1 else alias_sets[i] or {""}
            shown_cols = [c for c in dict.fromkeys(c.name for c in own_columns(target)
                                                   if (resolve_column(c, sources, names.lower) or (alias,))[0] == alias)][:2]
            shown = tuple(f"{table_of[alias].rsplit('.', 1)[-1]}.{c}" for c in shown_cols)
            cols = [(exp.column(pc, table=copy[pa]), "r0")] + [
                (exp.column(c, table=copy[alias]), f"v{k}") for k, c in enumerate(shown_cols)]
            # an OR repeating the edge's join (and the target) in each AND-group holds without them: moved
            # away, the copy's own reference joins no group, and failing a term every group repeats is the point
            kept = [renamed(_without(conjuncts[k], (conjuncts[edge_i], target))) for k in touching if k != i]
            rendered = " ".join(target.sql(dialect=dialect).split())
            moved: tuple[str, ...] = (cc,)
            whose = ""
            if correlated is not None:  # and given to an outer row the subquery holds no row for
                moved, whose = (cc, correlated.column), f" given to a {correlated.outer} row it held none for"
            meet = _meeting(target, pa, subtree, lambda c: resolve_column(c, sources, names.lower),
                            lambda n: _qualified(n, sources, names)) \
                if correlated is None and touching == [i] else None
            if meet is not None:  # the parent row where the two sides meet, copied in from the pinned data if need be
                column, other, step = meet
                # and the one a step across from it: ``d3.d_date = d1.d_date + 6`` passes ``> d1.d_date + 5`` and
                # fails ``> d1.d_date + 6`` (the nearest-gap edge below stops at the meeting row, which fails)
                stepped = exp.Add(this=exp.Paren(this=other.copy()), expression=exp.Literal.number(1)) if step > 0 \
                    else exp.Sub(this=exp.Paren(this=other.copy()), expression=exp.Literal.number(1))
                for value, how in ((other, "where the sides of `{}` meet"), (stepped, "a step across from where the "
                                                                                      "sides of `{}` meet")):
                    out.append(CloneWitness(
                        digest, table_of[fact], query([], own, [(value, "r0"), (value.copy(), "v0")], []), (cc,),
                        (f"{table_of[pa].rsplit('.', 1)[-1]}.{column}",),
                        f"a {fact_name} row{through}, moved to {{shown}} ({how.format(rendered)})",
                        links=links, shared=shared, reach_sql=reach_sql, count_sql=count_sql, path=reach_path,
                        meet=(table_of[pa], pc, column)))
            for cond, order, how in _edges_of(renamed(target), target, dialect)[:1 if meet is not None else None]:
                filters, given = own + kept + [cond], cols
                if correlated is not None:  # each witness another outer row: a passing one takes its row out
                    # the copy leaves its source's parent: the source need not pass the filters on it (TPC-DS
                    # at SF 0.01 holds no catalog sale in 2002 for q35's ``d_year = 2002 AND d_qoy < 4``)
                    filters = [c for c, a in zip(own, alias_sets) if not (a and a <= subtree)] + kept + [cond]
                    outer = correlated.needy(len(out))
                    given = cols[:1] + [(outer, "r1")] + cols[1:]
                    filters = filters + [exp.Not(this=exp.Is(this=outer.copy(), expression=exp.Null()))]
                out.append(CloneWitness(
                    digest, table_of[fact], query(extra, filters, given, order), moved, shown,
                    f"a {fact_name} row{through}{whose}, moved to {{shown}} ({how} `{rendered}`)", links=links,
                    shared=shared, reach_sql=reach_sql, count_sql=count_sql, path=reach_path))
                if len(out) >= MAX_CLONE_WITNESSES:
                    return wholly(out)
        if correlated is None:
            members, edged = _disjunct_witnesses(
                conjuncts, alias_sets, touching, edge_i, own, renamed, subtree, fact, cc,
                [(exp.column(pc, table=copy[pa]), "r0")], extra, table_of, fact_name, through, digest, dialect,
                query, links, shared, lambda c: resolve_column(c, sources, names.lower), set(fact_t.free))
            grouped_members += members
            grouped_edges += edged
    return wholly(out[:MAX_CLONE_WITNESSES] + (grouped_members + grouped_edges)[:MAX_OR_GROUP_WITNESSES])


def correlated_children(select: Any, conjuncts: list[Any], fact: str, resolve: Any, names: Any, engine: str,
                        ctes: Any, with_key: str) -> tuple[tuple[str, str, str, str, int, str, tuple[str, ...]], ...]:
    """Per correlated subquery of a conjunct that equates a column of the fact with a column
    of a table it reads (a customer's sales), the rows that satisfy it for a given value: a
    copy of the fact with a fresh key gets copies of them moved onto it (else the copy fails
    the subquery: no output row)."""
    from sqlglot import exp

    from .witnesses import resolve_column, select_sources, split_terms
    out: list[tuple[str, str, str, str, int, str, tuple[str, ...]]] = []
    for cond in conjuncts:
        for sub in cond.find_all(exp.Select):
            if sub.find_ancestor(exp.Select) is not select or sub.args.get("where") is None:
                continue
            inner = select_sources(sub, names)
            if not inner or len(inner) != 1 + len(sub.args.get("joins") or []):
                continue
            for eq in split_terms(sub.args["where"].this, exp.And):
                if not (isinstance(eq, exp.EQ) and isinstance(eq.this, exp.Column)
                        and isinstance(eq.expression, exp.Column)):
                    continue
                for outer_col, inner_col in ((eq.this, eq.expression), (eq.expression, eq.this)):
                    if not outer_col.table or outer_col.table.lower() in inner:
                        continue
                    o, i = resolve(outer_col), resolve_column(inner_col, inner, names.lower)
                    if o is None or i is None or o[0] != fact:
                        continue
                    query, bound = sub.copy(), 0
                    for col in list(query.find_all(exp.Column)):
                        if col.table.lower() == outer_col.table.lower() and col.name.lower() == outer_col.name.lower():
                            col.replace(exp.Placeholder())
                            bound += 1
                    query.set("limit", exp.Limit(expression=exp.Literal.number(MAX_CHILD_ROWS)))
                    if ctes is not None and query.args.get(with_key) is None:
                        query.set(with_key, ctes.copy())
                    path = query.copy()
                    aliases = sorted(inner)
                    path.set("expressions", [exp.column("rowid", table=a) for a in aliases])
                    query.set("expressions", [exp.column("rowid", table=i[0])])
                    out.append((o[1], names.originals[inner[i[0]]], i[1], query.sql(dialect=engine), bound,
                                path.sql(dialect=engine), tuple(names.originals[inner[a]] for a in aliases)))
    return tuple(dict.fromkeys(out))


def _join_children(conjuncts: list[Any], fact: str, fresh: list[str], sources: dict[str, str],
                   table_of: dict[str, str], names: Any, dialect: str) -> tuple[ChildRows, ...]:
    """``ChildRows`` of the tables the gold joins to the fact by the column a copy of it takes
    fresh (no dependency backs such a join: a sale's return by ticket, item and customer):
    the rows every equality between the two finds for the source row."""
    from sqlglot import exp

    from .constraints import qualified, quote
    from .witnesses import resolve_column
    pairs: dict[str, list[tuple[str, str]]] = {}  # per other alias: (fact column, its column) equated
    for cond in conjuncts:
        if not (isinstance(cond, exp.EQ) and isinstance(cond.this, exp.Column) and isinstance(cond.expression, exp.Column)):
            continue
        left, right = (resolve_column(c, sources, names.lower) for c in (cond.this, cond.expression))
        if left is None or right is None or left[0] == right[0] or fact not in (left[0], right[0]):
            continue
        (_, mine), (other, theirs) = (left, right) if left[0] == fact else (right, left)
        if other in table_of:
            pairs.setdefault(other, []).append((mine, theirs))
    out: list[ChildRows] = []
    for other, equated in sorted(pairs.items()):
        for mine, theirs in equated:
            if mine not in fresh:
                continue
            on = " AND ".join(f"o.{quote(t)} = f.{quote(m)}" for m, t in equated)
            sql = (f"SELECT o.rowid FROM {qualified(table_of[other], dialect)} AS o, {qualified(table_of[fact], dialect)} "
                   f"AS f WHERE f.rowid = ? AND {on} ORDER BY o.rowid LIMIT {MAX_CHILD_ROWS}")
            out.append(ChildRows(mine, table_of[other], theirs, sql, 0))
    return tuple(out)


def _whole_columns(band: list[Any], group_cols: tuple[str, ...], t: Any, linked: set[str]) -> tuple[str, ...]:
    """``CloneWitness.whole``: ``group_cols`` where ``band`` keeps only groups of at least two rows
    (``count(*) >= 2``, ``cnt BETWEEN 15 AND 20``) and the column a copy of the fact takes fresh
    is one of them (a ticket: the copies make one new group); else none."""
    from sqlglot import exp
    least = 0
    for term in band:
        agg, bound = term.this, term.expression
        if isinstance(agg, exp.Count) and not agg.find(exp.Distinct) and isinstance(bound, exp.Literal) \
                and not bound.is_string and bound.this.isdigit():
            if isinstance(term, exp.GTE):
                least = max(least, int(bound.this))
            elif isinstance(term, exp.GT):
                least = max(least, int(bound.this) + 1)
    fresh = fresh_columns(t, linked)
    if least < 2 or not fresh or len(fresh) != 1 or fresh[0] not in group_cols:
        return ()
    return group_cols


def _outer_links(select: Any, sources: dict[str, str], table_of: dict[str, str], names: Any) -> tuple[Any, ...]:
    """The references the query enclosing derived table ``select`` joins its rows by: per
    equality there of an output column projecting a column of ``select``'s tables and a
    column of a base table beside it (``dn.ss_customer_sk = c_customer_sk``), a "gold"
    ``Dependency`` from the first to the second (TPC-DS q34's ``customer``, which no
    foreign key names)."""
    from sqlglot import exp

    from .constraints import Dependency
    from .witnesses import conjuncts_of, resolve_column, select_sources
    derived = select.parent
    outer = derived.find_ancestor(exp.Select) if isinstance(derived, exp.Subquery) and derived.alias else None
    if not isinstance(outer, exp.Select):
        return ()
    beside = select_sources(outer, names)
    projected = {e.alias_or_name.lower(): e.unalias() for e in select.expressions}
    terms = [j.args["on"] for j in outer.args.get("joins") or [] if j.args.get("on") is not None]
    where = outer.args.get("where")
    out = []
    for term in [t for node in terms + ([where.this] if where is not None else []) for t in conjuncts_of(node)]:
        if not isinstance(term, exp.EQ) or not all(isinstance(x, exp.Column) for x in (term.this, term.expression)):
            continue
        for mine, theirs in ((term.this, term.expression), (term.expression, term.this)):
            if mine.table and mine.table.lower() != derived.alias.lower() or mine.name.lower() not in projected:
                continue
            inner, other = projected[mine.name.lower()], resolve_column(theirs, beside, names.lower)
            found = resolve_column(inner, sources, names.lower) if isinstance(inner, exp.Column) else None
            if found is not None and other is not None and (mine.table or resolve_column(mine, beside, names.lower) is None):
                out.append(Dependency(table_of[found[0]], (found[1],), names.originals[beside[other[0]]],
                                      (other[1],), "gold"))
    return tuple(dict.fromkeys(out))


def _copies_alone(w: CloneWitness) -> bool:
    """Whether ``w`` writes one copy of one row as a group of its own (a moved copy, a new parent's,
    an edge value's): the witnesses a band's least count leaves outside it."""
    return not (w.grouped or w.filled or w.limit or w.regroup or w.keep)


def _without(node: Any, terms: tuple[Any, ...]) -> Any:
    """``node`` with ``terms`` left out of each AND-group where it is an OR of them (none left: TRUE)."""
    from sqlglot import exp

    from .witnesses import split_terms
    if not isinstance(node, exp.Or):
        return node
    drop = {t.sql() for t in terms}
    groups = [[t for t in split_terms(d, exp.And) if t.sql() not in drop] for d in split_terms(node, exp.Or)]
    return exp.or_(*[exp.and_(*g) if g else exp.true() for g in groups])


def _disjunct_witnesses(conjuncts: list[Any], alias_sets: list[Any], touching: list[int], edge: int, own: list[Any],
                        renamed: Callable[[Any], Any], subtree: set[str], fact: str, moved: str, key: list[Any],
                        extra: list[tuple[str, str]], table_of: dict[str, str], fact_name: str, through: str,
                        digest: str, dialect: str, query: Callable[..., str], links: tuple[Any, ...], shared: bool,
                        resolve: Callable[[Any], tuple[str, str] | None], free: set[str]
                        ) -> tuple[list[CloneWitness], list[CloneWitness]]:
    """An OR whose AND-groups each join the moved edge's parent (``(ss_addr_sk = ca_address_sk AND
    ca_state IN ('OR', 'MN', 'KY') AND ss_net_profit BETWEEN 150 AND 3000) OR (...)``, TPC-DS q48):
    per group and per member of its lists on the parent's side, a copy of a row passing every other
    conjunct and the group's own fact terms, moved to a parent row with that member that passes the
    group's other parent terms. The copy passes that group alone (its other members are other
    groups'), so a member dropped or changed takes it out of the sum; a row reaching the output
    through its own parent passes some group already, often not the one a member holds. Second
    list: per group, such a copy moved to a row failing only one other parent term (``ca_country =
    'United States'``, NULL included), then one with a fact column just outside one of the group's
    own bounds (``ss_net_profit = 149``): no reaching row passes the rest of a group no pinned sale
    reaches."""
    from sqlglot import exp

    from .witnesses import split_terms
    factored = {c.sql() for c in conjuncts}
    out: list[CloneWitness] = []
    failing: list[CloneWitness] = []
    edged: list[CloneWitness] = []
    for i in touching:
        top = conjuncts[i]
        if not isinstance(top, exp.Or) or top.find(exp.Select) or not (alias_sets[i] or set()) <= subtree | {fact}:
            continue
        others = [c for k, c in enumerate(own) if k != i] + [renamed(_without(conjuncts[k], (conjuncts[edge],)))
                                                             for k in touching if k != i]
        for disjunct in split_terms(top, exp.Or):
            group = [t for t in split_terms(disjunct, exp.And) if t.sql() not in factored]

            def on_parent(t: Any) -> bool:
                keys = [resolve(c) for c in t.find_all(exp.Column)]
                return bool(keys) and all(k is not None and k[0] in subtree for k in keys)
            if not any(on_parent(t) for t in group):
                continue
            lists = [t for t in group if isinstance(t, exp.In) and on_parent(t) and t.expressions
                     and isinstance(t.this, exp.Column) and all(isinstance(m, exp.Literal) for m in t.expressions)]
            choices: list[tuple[Any, Any]] = [(t, m) for t in lists for m in t.expressions] or [(None, None)]
            rendered = " ".join(disjunct.sql(dialect=dialect).split())
            for term, member in choices:
                terms = [renamed(exp.EQ(this=t.this.copy(), expression=member.copy()) if t is term else t)
                         for t in group]
                shown = key + ([(renamed(term.this), "v0")] if term is not None else [])
                column = f"{table_of[(resolve(term.this) or ('', ''))[0]].rsplit('.', 1)[-1]}.{term.this.name}" \
                    if term is not None else ""
                out.append(CloneWitness(
                    digest, table_of[fact], query(extra, others + terms, shown, []), (moved,),
                    (column,) if column else (),
                    f"a {fact_name} row{through}, moved to " + ("{shown}" if column else "a row")
                    + f" (passes only the OR's AND-group `{rendered}`)", links=links, shared=shared))
                if member is not choices[0][1]:
                    continue
                # moved to a row failing only one other term of the group on the parent (a NULL country too)
                # (a range: also just outside it and at its edges, the day after ``d_dom BETWEEN 1 AND 3``)
                for failed in [t for t in group if on_parent(t) and not isinstance(t, exp.In)
                               and not (isinstance(t, exp.EQ) and isinstance(t.expression, exp.Column))]:
                    rest = [t for t, orig in zip(terms, group) if orig is not failed]
                    fails = exp.Not(this=exp.Is(this=exp.Paren(this=renamed(failed)), expression=exp.true()))
                    edges = [(c, o, h) for c, o, h in _edges_of(renamed(failed), failed, dialect)
                             if isinstance(failed, exp.Between) and not _across(failed)]
                    shown_failed = [c.name for c in failed.find_all(exp.Column)][:1]
                    for cond, order, how in [(fails, [], "fails only")] + edges:
                        failing.append(CloneWitness(
                            digest, table_of[fact], query(extra, others + rest + [cond], key + [
                                (renamed(c), "v0") for c in failed.find_all(exp.Column)][:2], order), (moved,),
                            tuple(f"{table_of[(resolve(c) or ('', ''))[0]].rsplit('.', 1)[-1]}.{c.name}"
                                  for c in failed.find_all(exp.Column))[:len(shown_failed)],
                            f"a {fact_name} row{through}, moved to {{shown}} ({how} "
                            f"`{' '.join(failed.sql(dialect=dialect).split())}` of the OR's AND-group `{rendered}`)",
                            links=links, shared=shared))
                # and, moved there, its own bound's edges: no row reaching through another group has them
                for bounded in group:
                    bound = resolve(bounded.this) if isinstance(bounded.this, exp.Column) else None
                    if bound is None or bound[0] != fact or bound[1] not in free or on_parent(bounded):
                        continue
                    rest = [t for t, orig in zip(terms, group) if orig is not bounded]
                    outside = " ".join(bounded.sql(dialect=dialect).split())
                    edged += [CloneWitness(
                        digest, table_of[fact], query(extra, others + rest, key, []), (moved,), (),
                        f"a {fact_name} row{through}, moved into the OR's AND-group `{rendered}` with {bound[1]} = "
                        f"{v} (just outside `{outside}`)", fixed=((bound[1], v),), links=links, shared=shared)
                        for v in _bound_edges(bounded)[:2]]
    return out, failing + edged


@dataclass(frozen=True)
class _Correlation:
    """A subquery under EXISTS (or NOT EXISTS) tied to its outer query by one equality
    (``c.c_customer_sk = ss_customer_sk``). Its rows reach no output as they are: a row that
    passes or fails only one of its filters shows only for an outer row that has no row in it
    yet and whose passing the outer WHERE then turns on it (a customer with no store sale in
    the year's first quarters, who passes every other condition)."""

    conjunct: int  # the correlation equality among the subquery's conjuncts
    alias: str  # the subquery's FROM item whose column it equates (the fact a witness copies)
    column: str  # that column: a witness's copy takes the outer row's value in it
    outer: str  # the outer table's name, for the sentence
    outer_from: Any  # the outer SELECT's FROM and joins, its WHERE's conjuncts, the outer column
    outer_joins: tuple[Any, ...]
    outer_terms: tuple[Any, ...]
    outer_column: Any

    def needy(self, skip: int) -> Any:
        """A scalar subquery: the ``skip``-th outer value (in order) the subquery holds no row
        for, where that row's passing turns on it; the first where there are fewer."""
        from sqlglot import exp
        first = self._needy(0)
        return exp.Coalesce(this=self._needy(skip), expressions=[first]) if skip else first

    def _needy(self, skip: int) -> Any:
        from sqlglot import exp
        q = exp.Select(expressions=[self.outer_column.copy()]).from_(self.outer_from.copy())
        for j in self.outer_joins:
            q.append("joins", j.copy())
        q.set("where", exp.Where(this=exp.and_(*[t.copy() for t in self.outer_terms])))
        q.set("order", exp.Order(expressions=[exp.Ordered(this=self.outer_column.copy())]))
        q.set("limit", exp.Limit(expression=exp.Literal.number(1)))
        if skip:
            q.set("offset", exp.Offset(expression=exp.Literal.number(skip)))
        return exp.Subquery(this=q)


def _correlation(select: Any, conjuncts: list[Any], alias_sets: list[Any], sources: dict[str, str],
                 names: Any) -> _Correlation | None:
    """The correlation of ``select`` where it is an EXISTS subquery of a SELECT of base tables
    and one of its conjuncts, a column equality, reads the outer query; None otherwise."""
    from sqlglot import exp

    from .witnesses import resolve_column, select_sources, split_terms
    exists = select.parent
    outer = exists.find_ancestor(exp.Select) if isinstance(exists, exp.Exists) else None
    unresolved = [i for i, a in enumerate(alias_sets) if a is None]
    if outer is None or len(unresolved) != 1 or outer.args.get("where") is None:
        return None
    c = conjuncts[unresolved[0]]
    outer_sources = select_sources(outer, names)
    joins = outer.args.get("joins") or []
    if not isinstance(c, exp.EQ) or not isinstance(c.this, exp.Column) or not isinstance(c.expression, exp.Column) \
            or len(outer_sources) != 1 + len(joins) \
            or any(j.args.get("on") is not None or j.args.get("using") or j.side for j in joins):
        return None
    found = None
    for a, b in ((c.this, c.expression), (c.expression, c.this)):
        inner, theirs = resolve_column(a, sources, names.lower), resolve_column(b, outer_sources, names.lower)
        if inner is not None and theirs is not None and resolve_column(b, sources, names.lower) is None:
            found = inner, theirs
    terms = split_terms(outer.args["where"].this, exp.And)
    holder = next((t for t in terms if any(n is exists for n in t.walk())), None)
    if found is None or holder is None:
        return None
    at = next(i for i, n in enumerate(holder.dfs()) if n is exists)

    def given(value: bool) -> Any:  # the conjunct holding the EXISTS, with it decided
        twin = holder.copy()
        node = list(twin.dfs())[at]
        decided = exp.true() if value else exp.false()
        if node is twin:
            return decided
        node.replace(decided)
        return twin

    turns = exp.NEQ(this=exp.Coalesce(this=given(True), expressions=[exp.false()]),
                    expression=exp.Coalesce(this=given(False), expressions=[exp.false()]))
    kept = tuple(t.copy() for t in terms if t is not holder) + (turns, exp.not_(exists.copy()))
    (alias, column), (o_alias, o_column) = found
    from_ = outer.args.get("from_") or outer.args.get("from")
    if from_ is None:
        return None
    return _Correlation(unresolved[0], alias, column, names.originals[outer_sources[o_alias]].rsplit(".", 1)[-1],
                        from_.this, tuple(joins), kept, exp.column(o_column, table=o_alias))


def _qualified(node: Any, sources: dict[str, str], names: Any) -> Any:
    """A column of the SELECT itself named with the alias of its table; and one a subquery
    reads from it (q32's correlated ``cs_item_sk = i_item_sk``: beside a second copy of
    ``item`` a bare ``i_item_sk`` named both, and the witness did not bind)."""
    from sqlglot import exp

    from .witnesses import resolve_column, select_sources
    if not isinstance(node, exp.Column) or node.table:
        return node
    inner = node.find_ancestor(exp.Select)
    if inner is not None:
        own = select_sources(inner, names)
        from_ = inner.args.get("from_") or inner.args.get("from")
        if from_ is None or len(own) != 1 + len(inner.args.get("joins") or []) \
                or resolve_column(node, own, names.lower) is not None:
            return node  # the subquery's own column, or one of a derived table it reads
    key = resolve_column(node, sources, names.lower)
    return node if key is None else exp.column(node.name, table=key[0])


def _outer_joins(select: Any, names: Any) -> list[Any]:
    """Where ``select`` is a derived table, per equality of the enclosing query's WHERE between
    one of its outputs and another table's column (TPC-DS's ``ss_customer_sk = c_customer_sk``
    on ``(... GROUP BY ss_ticket_number, ss_customer_sk) dn, customer``): ``EXISTS`` a row of
    that table with the output's value, over ``select``'s own tables. A group whose customer the
    variant lacks reaches no output: a witness pushed into it shows nothing."""
    from sqlglot import exp

    from .witnesses import resolve_column, select_sources, split_terms
    derived = select.parent
    outer = derived.find_ancestor(exp.Select) if isinstance(derived, exp.Subquery) and derived.alias else None
    if outer is None or outer.args.get("where") is None:
        return []
    outputs = {e.alias_or_name: e.unalias() for e in select.expressions}
    sources = select_sources(outer, names)
    out: list[Any] = []
    for cond in split_terms(outer.args["where"].this, exp.And):
        if not (isinstance(cond, exp.EQ) and isinstance(cond.this, exp.Column)
                and isinstance(cond.expression, exp.Column)):
            continue
        for mine, other in ((cond.this, cond.expression), (cond.expression, cond.this)):
            key = resolve_column(other, sources, names.lower)
            if mine.name not in outputs or (mine.table and mine.table != derived.alias) or key is None \
                    or (not mine.table and resolve_column(mine, sources, names.lower) is not None):
                continue
            table = names.originals[sources[key[0]]]
            found = exp.select("1").from_(exp.Table(
                this=exp.to_identifier(table.rsplit(".", 1)[-1]),
                db=exp.to_identifier(table.split(".", 1)[0]) if "." in table else None,
                alias=exp.TableAlias(this=exp.to_identifier("o__w")))).where(
                exp.EQ(this=exp.column(key[1], table="o__w"), expression=outputs[mine.name].copy()))
            out.append(exp.Exists(this=found))
            break
    return out


def _band_rows(band: list[Any], keys: list[Any], conjuncts: list[Any], query: Callable[..., str],
               dialect: str) -> Callable[[str], str] | None:
    """``rows_sql`` for a reaching row of a group the gold's ``band`` (``groups.band_terms``)
    keeps, the group with the greatest first aggregate first (at a band's upper edge, one row
    more takes it out), given the columns after ``w0`` (``"NULL AS r0"``); None when a term
    aggregates DISTINCT."""
    import sqlglot
    from sqlglot import exp

    from .witnesses import band_windows
    found = band_windows(band, keys)
    if found is None:
        return None
    windows, terms = found[0], [t.sql(dialect=dialect) for t in found[1]]
    inner = query([], conjuncts, windows, [], limit=False)
    turned = turned_rowid(exp.column("w0")).sql(dialect=dialect)

    def rows_sql(given: str) -> str:
        outputs = len(sqlglot.parse_one(f"SELECT w0, {given}", read=dialect).expressions)
        return (f"SELECT w0, {given} FROM ({inner}) AS grouped WHERE {' AND '.join(terms)} "
                f"ORDER BY a0_0 DESC, {turned}, {positions(outputs)} LIMIT 1")
    return rows_sql


def _unjoined_witnesses(edges: list[tuple[str, str, str, str, int]], fact: str, fact_name: str, through: str,
                        table_of: dict[str, str], tables: dict[str, Any], conjuncts: list[Any], digest: str,
                        query: Callable[..., str], band: Callable[[str], str] | None = None) -> list[CloneWitness]:
    """Per edge ``fact.fk -> parent`` whose foreign key holds NULLs on the pinned data: a copy
    of a fact row that reaches the output, its key NULL. The join drops it; a near-miss that
    drops the join predicate pairs it with every parent row the filters keep. Where the
    parent is a dimension of one or two rows (TPC-DS's ``store`` at SF 0.01), every one of
    them unique in each column, no parent row can be cloned or moved to, and every reaching
    fact row joins the one row the filters keep: this row is then the only witness."""
    from sqlglot import exp
    t = tables[table_of[fact]]
    out: list[CloneWitness] = []
    for ca, cc, pa, _, _ in edges:
        if ca != fact or cc in t.not_null_observed or cc in t.not_null_declared:
            continue
        pname = table_of[pa].rsplit(".", 1)[-1]
        out.append(CloneWitness(
            digest, table_of[fact], band("NULL AS r0") if band else query([], conjuncts, [(exp.Null(), "r0")], []),
            (cc,), (), f"a copy of a {fact_name} row that reaches the output{through}"
                       f"{' in a group the band keeps' if band else ''}, its {cc} NULL (joined to no {pname} row)"))
    return out


def _settable(t: Any, column: str, every: list[Any]) -> bool:
    """Whether a *new* row of ``t`` may take another held value in ``column``: a column in
    no key and no dependency (the key gets a fresh value, a reference must hold)."""
    return column not in t.key_columns and not any(
        (d.child == t.name and column in d.child_columns) or (d.parent == t.name and column in d.parent_columns)
        for d in every)


def _new_parent_witnesses(conjuncts: list[Any], alias_sets: list[Any], edges: list[tuple[str, str, str, str, int]],
                          fact: str, fact_name: str, through: str, table_of: dict[str, str], tables: dict[str, Any],
                          every: list[Any], dialect: str, digest: str, query: Callable[..., str],
                          resolve: Callable[[Any], tuple[str, str] | None],
                          renewed: tuple[tuple[str, str], ...] = ()) -> list[CloneWitness]:
    """New dimension rows, each referenced by a new fact row. Per edge ``fact.fk -> parent``
    whose key a new row may give a fresh value: a copy of the parent a row reaching the output
    joins (a new group where the gold groups by a unique attribute of it, one more output row
    for ORDER BY and LIMIT), and per filter on that parent alone, a copy that fails only it,
    its value taken from another parent row (the nearest failing value first) or that sits
    on its edge: a dropped filter every existing parent of the path passes then shows."""
    from sqlglot import exp
    out: list[CloneWitness] = []
    for ca, cc, pa, pc, _ in [e for e in edges if e[0] == fact]:
        parent = tables[table_of[pa]]
        fresh = fresh_columns(parent, deps_columns(every, parent.name))
        if not fresh or pc not in fresh:
            continue
        pname = parent.name.rsplit(".", 1)[-1]
        link = (parent.name, pc, cc)
        out.append(CloneWitness(
            digest, table_of[fact], query([], conjuncts, [(exp.column("rowid", table=pa), "p0")], []), (), (),
            f"a new {pname} row (a copy with a fresh {pc}) joined by a new {fact_name} row{through}: "
            f"a group or an output row the pinned data lacks", parent=link))
        other = f"{pa}__n"
        for i, cond in enumerate(conjuncts):
            if alias_sets[i] != {pa} or cond.find(exp.Select):
                continue
            if isinstance(cond, exp.Or):
                out += _named_group_members(cond, [c for j, c in enumerate(conjuncts) if j != i], pa, link,
                                            parent, table_of[fact], fact_name, through, every, dialect, digest, query,
                                            resolve, renewed)
                continue
            cols = {c.name for c in cond.find_all(exp.Column)}
            resolved = [resolve(c) for c in cond.find_all(exp.Column)]
            if len(cols) != 1 or any(r is None for r in resolved):
                continue
            column = resolved[0][1]  # type: ignore[index]  # checked just above
            if not _settable(parent, column, every):
                continue

            def renamed(node: Any) -> Any:
                def swap(n: Any) -> Any:
                    if isinstance(n, exp.Column) and resolve(n) is not None:
                        return exp.column(n.name, table=other)
                    return n
                return node.copy().transform(swap)

            rendered = " ".join(cond.sql(dialect=dialect).split())
            renew = tuple(c for a, c in renewed if a == pa and c != column)
            for moved_cond, order, how in _edges_of(renamed(cond), cond, dialect):
                what = f"a new {pname} row with {{shown}} ({how} `{rendered}`) joined by a new {fact_name} row{through}"
                if how.startswith("at the member") and isinstance(moved_cond, exp.EQ):
                    # the member itself, whether or not a row holds it (no ``'burnished'`` item at SF 0.01),
                    # copied from a row passing the rest: the copy passes ``cond`` by its member (a subset
                    # of a variant seldom keeps a sale of one of q56's three slate items)
                    member = moved_cond.expression
                    rest = [c for j, c in enumerate(conjuncts) if j != i]
                    out.append(CloneWitness(
                        digest, table_of[fact], query([], rest, [(exp.column("rowid", table=pa), "p0"),
                                                                 (member.copy(), "r0"), (member.copy(), "v0")], []),
                        (column,), (f"{pname}.{column}",), what, parent=link, renew=renew, named=True))
                    continue
                cols_out = [(exp.column("rowid", table=pa), "p0"), (exp.column(column, table=other), "r0"),
                            (exp.column(column, table=other), "v0")]
                out.append(CloneWitness(
                    digest, table_of[fact], query([(parent.name, other)], conjuncts + [moved_cond], cols_out, order),
                    (column,), (f"{pname}.{column}",), what, parent=link, renew=renew))
    return out


def _named_group_members(cond: Any, rest: list[Any], pa: str, link: tuple[str, str, str], parent: Any, fact_table: str,
                         fact_name: str, through: str, every: list[Any], dialect: str, digest: str,
                         query: Callable[..., str], resolve: Callable[[Any], tuple[str, str] | None],
                         renewed: tuple[tuple[str, str], ...]) -> list[CloneWitness]:
    """Per member of an IN list inside one AND-group of an OR on the parent alone (TPC-DS q63:
    ``(i_category IN (...) AND i_class IN (...) AND i_brand IN ('amalgimporto #1', ...)) OR
    (...)``), a new parent row holding the member, copied from a row passing the rest of the
    filters and that group's other terms: it passes the OR by that member alone, so a member
    changed or dropped takes its sale out. No item holds ``'amalgimporto #1'`` at SF 0.01, and
    a moved witness needs a row with the member that reaches a group the gold keeps."""
    from sqlglot import exp

    from .witnesses import split_terms
    out: list[CloneWitness] = []
    pname = parent.name.rsplit(".", 1)[-1]
    for disjunct in split_terms(cond, exp.Or):
        group = split_terms(disjunct, exp.And)
        rendered = " ".join(disjunct.sql(dialect=dialect).split())
        for term in group:
            if not (isinstance(term, exp.In) and isinstance(term.this, exp.Column) and term.expressions
                    and all(isinstance(m, exp.Literal) for m in term.expressions)):
                continue
            found = resolve(term.this)
            if found is None or found[0] != pa or not _settable(parent, found[1], every):
                continue
            column = found[1]
            renew = tuple(c for a, c in renewed if a == pa and c != column)
            siblings = [t for t in group if t is not term]
            for member in term.expressions[:MAX_IN_MEMBERS]:
                shown = " ".join(member.sql(dialect=dialect).split())
                out.append(CloneWitness(
                    digest, fact_table, query([], rest + siblings, [(exp.column("rowid", table=pa), "p0"),
                                                                    (member.copy(), "r0"), (member.copy(), "v0")], []),
                    (column,), (f"{pname}.{column}",),
                    f"a new {pname} row with {{shown}} (the member `{shown}` of the OR's AND-group `{rendered}`) "
                    f"joined by a new {fact_name} row{through}", parent=link, renew=renew, named=True))
    return out


IDENTIFIER_SUFFIXES = ("_id", "_code", "_key", "_no", "_number", "_num", "_nbr")


def _limit_witnesses(select: Any, top: bool, conjuncts: list[Any], edges: list[tuple[str, str, str, str, int]],
                     fact: str, fact_name: str, through: str, table_of: dict[str, str], tables: dict[str, Any],
                     every: list[Any], dialect: str, digest: str, query: Callable[..., str],
                     resolve: Callable[[Any], tuple[str, str] | None], aliases: list[str]) -> list[CloneWitness]:
    """A gold ``ORDER BY ... LIMIT n`` whose answer has fewer than ``n`` rows returns the same
    rows as LIMIT n - 1 and n + 1; a variant where it has more than ``n`` tells them apart.
    Per gold, one witness that adds new output rows through the join path: grouped by an
    attribute of a parent of the fact (``GROUP BY i_item_id``), copies of a reaching path
    whose parent copy gets a fresh key and a fresh group value (an identifier: a fresh
    ``i_item_id``, never a state or a name, whose domain a query may rely on); ungrouped,
    copies of a reaching fact row. How many is measured on each variant (``count_sql``).
    The rows of the path copied are kept from later boundary writes (a year written into its
    date row would take every new group out of the answer at once)."""
    from sqlglot import exp
    limit, order = select.args.get("limit"), select.args.get("order")
    if not top or limit is None or order is None or select.args.get("offset") is not None \
            or select.args.get("having") is not None:
        return []
    bound = limit.args.get("expression")
    if not isinstance(bound, exp.Literal) or bound.is_string or not bound.this.isdigit() or int(bound.this) < 1:
        return []
    n = int(bound.this)
    counted = select.copy()
    counted.set("order", None)
    counted.set("limit", None)
    count_sql = f"SELECT count(*) FROM ({counted.sql(dialect=dialect)}) AS gold_rows"
    what = (f"{{need}} new output rows{through} ({fact_name} copies{{kind}}) lift the gold from {{shown}} rows "
            f"past its LIMIT {n}")
    path_rows = [(exp.column("rowid", table=a), f"u{i}") for i, a in enumerate(aliases)]
    path = tuple(table_of[a] for a in aliases)
    group = select.args.get("group")
    if group is None:
        if select.args.get("distinct") is not None or any(e.find(exp.AggFunc) for e in select.expressions) \
                or select.find(exp.Window):
            return []
        return [CloneWitness(digest, table_of[fact], query([], conjuncts, [(exp.column("rowid", table=fact), "p0")]
                                                            + path_rows, []), (), (),
                             what.replace("{kind}", ""), limit=n, count_sql=count_sql, path=path)]
    keys = [resolve(c) for c in group.find_all(exp.Column)]
    for ca, cc, pa, pc, _ in [e for e in edges if e[0] == fact]:
        parent = tables[table_of[pa]]
        on_parent = [k[1] for k in keys if k is not None and k[0] == pa]
        fresh = fresh_columns(parent, deps_columns(every, parent.name))
        if not on_parent or not fresh or pc not in fresh:
            continue
        renamed: tuple[str, ...] = ()
        if not set(on_parent) & set(fresh):
            named = [c for c in on_parent if c.lower().endswith(IDENTIFIER_SUFFIXES) and freshable(parent.columns.get(c, ""))
                     and c not in parent.key_columns and not any(
                         d.parent == parent.name and c in d.parent_columns for d in every)]
            if not named:
                continue
            renamed = (named[0],)
        pname = parent.name.rsplit(".", 1)[-1]
        kind = f" through new {pname} rows" + (f" with a fresh {renamed[0]}" if renamed else "")
        return [CloneWitness(digest, table_of[fact], query([], conjuncts, [(exp.column("rowid", table=pa), "p0")]
                                                           + path_rows, []),
                             (), (), what.replace("{kind}", kind), parent=(parent.name, pc, cc), limit=n,
                             count_sql=count_sql, renamed=renamed, path=path)]
    return []


def _order_witnesses(select: Any, conjuncts: list[Any], fact: str, fact_name: str, through: str,
                     table_of: dict[str, str], tables: dict[str, Any], dialect: str, digest: str,
                     query: Callable[..., str], resolve: Callable[[Any], tuple[str, str] | None]) -> list[CloneWitness]:
    """Ties and second rows for an ungrouped ``ORDER BY``: a copy of the row the gold's order
    puts first, and of the one it puts last (a tie on every sort key; where a fresh key is a
    later sort key, the copy orders after its source); and per later sort key that is a free
    fact column, such copies with that key at the column's least and greatest value on the
    variant (a tie on the keys before it, ordering before and after), so a reversed or
    dropped later key shows where the pinned data has no tie."""
    from sqlglot import exp
    order = select.args.get("order")
    if order is None or select.args.get("group") is not None or select.args.get("distinct") is not None \
            or any(e.find(exp.AggFunc) for e in select.expressions):
        return []
    keys = list(order.expressions)
    if any(k.this.find(exp.AggFunc) or not all(resolve(c) for c in k.this.find_all(exp.Column)) for k in keys):
        return []  # an output alias or an aggregate: not a row's own value
    table = table_of[fact]
    rel = exp.Table(this=exp.to_identifier(table.rsplit(".", 1)[-1]),
                    db=exp.to_identifier(table.split(".", 1)[0]) if "." in table else None).sql(dialect=dialect)
    free = set(tables[table].free)
    out: list[CloneWitness] = []
    for end, ordered in (("first", [k.copy() for k in keys]),
                         ("last", [exp.Ordered(this=k.this.copy(), desc=not k.args.get("desc")) for k in keys])):
        out.append(CloneWitness(digest, table, query([], conjuncts, [], ordered), (), (),
                                f"a copy of the {fact_name} row the gold orders {end}{through} (a tie on its sort keys)"))
        for k in keys[1:]:
            key = resolve(k.this) if isinstance(k.this, exp.Column) else None
            if key is None or key[0] != fact or key[1] not in free:
                continue
            q_col = exp.to_identifier(key[1]).sql(dialect=dialect)
            for edge in ("min", "max"):
                value: Any = exp.maybe_parse(f"(SELECT {edge}({q_col}) FROM {rel})", dialect=dialect)
                out.append(CloneWitness(
                    digest, table, query([], conjuncts, [(value, "r0"), (value.copy(), "v0")], ordered), (key[1],),
                    (key[1],), f"a copy of the {fact_name} row the gold orders {end}{through} with {{shown}} "
                               f"(a tie on the sort keys before it)"))
    return out


def _realiased(node: Any, resolve: Callable[[Any], tuple[str, str] | None], aliases: dict[str, str]) -> Any:
    """A copy of ``node`` whose own columns (none in a subquery of it) of the sources ``aliases``
    names read that source's second copy instead (a moved witness's target path, a split
    group's other parent row)."""
    from sqlglot import exp

    def swap(n: Any) -> Any:
        if isinstance(n, exp.Column) and n.find_ancestor(exp.Select) is None:
            key = resolve(n)
            if key is not None and key[0] in aliases:
                return exp.column(key[1], table=aliases[key[0]])
        return n
    return node.copy().transform(swap)


def _split_group_witnesses(select: Any, conjuncts: list[Any], alias_sets: list[Any],
                           edges: list[tuple[str, str, str, str, int]], fact: str, fact_name: str, through: str,
                           table_of: dict[str, str], tables: dict[str, Any], sources: dict[str, str], names: Any,
                           dialect: str, digest: str, query: Callable[..., str],
                           resolve: Callable[[Any], tuple[str, str] | None],
                           reaching: str | None) -> list[CloneWitness]:
    """A group split in two: where a SELECT groups by a fact column and by a column of a parent
    the fact references, a copy of a reaching row moved to a parent row of another value of
    that column, one some group of the SELECT holds, a column it sums alone at the SELECT's
    greatest sum of it (a measure: its domain runs past the pinned maximum). The
    fact's key (a customer) then sits in two groups of different sums. TPC-DS q81 totals
    catalog returns by customer and returning state, keeps the totals above 1.2 times their
    state's average and orders by the customer's columns, then the total: at SF 0.01 no
    customer returned from two states, so the total as a sort key, dropped or reversed,
    coincided. The greatest sum clears such a bound where a copy of one row would not."""
    from sqlglot import exp
    group = select.args.get("group")
    if group is None or not group.expressions:
        return []
    keys = [resolve(g) if isinstance(g, exp.Column) else None for g in group.expressions]
    kept = {k[1] for k in keys if k is not None and k[0] == fact}
    if not kept:
        return []
    free = set(tables[table_of[fact]].free)
    summed: dict[str, Any] = {}  # a free fact column summed alone -> the SELECT's greatest sum of it
    for agg in select.find_all(exp.Sum):
        key = resolve(agg.this) if isinstance(agg.this, exp.Column) else None
        if agg.find_ancestor(exp.Select) is select and key is not None and key[0] == fact and key[1] in free \
                and key[1] not in summed:
            sums = select.copy()
            for arg in ("order", "limit", "offset", "distinct"):
                sums.set(arg, None)
            sums.set("expressions", [exp.alias_(agg.copy(), "s")])
            summed[key[1]] = exp.Subquery(this=exp.select(exp.Max(this=exp.column("s"))).from_(
                exp.Subquery(this=sums, alias=exp.TableAlias(this=exp.to_identifier("sums")))))
    if not summed:
        return []
    greatest = list(summed.values())
    own = [c.copy().transform(lambda n: _qualified(n, sources, names)) for c in conjuncts]
    # a row of a group that reaches the output first (through a CTE's first reader: q81's ``ctr1``, not
    # the average's ``ctr2``): a split group no output row reads changes nothing
    first = [exp.Ordered(this=exp.If(this=exp.In(this=exp.column("rowid", table=fact), query=exp.Subquery(
        this=exp.maybe_parse(reaching, dialect=dialect))), true=exp.Literal.number(0), false=exp.Literal.number(1)))] \
        if reaching else []
    out: list[CloneWitness] = []
    for _, cc, pa, pc, edge_i in [e for e in edges if e[0] == fact]:
        split = next((k[1] for k in keys if k is not None and k[0] == pa), None)
        touching = [i for i, a in enumerate(alias_sets) if a and pa in a and i != edge_i]
        if split is None or not kept - {cc} or any(conjuncts[i].find(exp.Select) for i in touching):
            continue
        twin = f"{pa}__s"
        held: Any = exp.maybe_parse(query([], own, [], [], limit=False), dialect=dialect)
        held.set("expressions", [exp.column(split, table=pa)])
        theirs = exp.column(split, table=twin)
        filters = own + [_realiased(conjuncts[i], resolve, {pa: twin}) for i in touching] + [
            exp.NEQ(this=theirs.copy(), expression=exp.column(split, table=pa)),
            exp.In(this=theirs.copy(), query=exp.Subquery(this=held))]
        pname = table_of[pa].rsplit(".", 1)[-1]
        # the value most reaching rows hold first: a bound on the group's peers (q81's 1.2 times its state's
        # average) is met beside several groups, never by a group alone (a subset keeps a few per state)
        peers = exp.Ordered(this=exp.Subquery(this=exp.select(exp.Count(this=exp.Star())).from_(exp.Subquery(
            this=held.copy(), alias=exp.TableAlias(this=exp.to_identifier("peers")))).where(
            exp.EQ(this=exp.column(split, table="peers"), expression=theirs.copy()))), desc=True)
        out.append(CloneWitness(
            digest, table_of[fact], query([(table_of[pa], twin)], filters,
                                          [(exp.column(pc, table=twin), "r0")]
                                          + [(g.copy(), f"r{i + 1}") for i, g in enumerate(greatest)]
                                          + [(theirs.copy(), "v0")], first + [peers]),
            (cc, *summed), (f"{pname}.{split}",),
            f"a copy of a {fact_name} row that reaches the output{through}, moved to {{shown}} (another group of "
            f"the SELECT's, so the row's other group keys sit in two groups), {', '.join(summed)} at the SELECT's "
            f"greatest sum of it"))
    return out


def _edge_value_witnesses(conjuncts: list[Any], alias_sets: list[Any], fact: str, fact_name: str, through: str,
                          table_of: dict[str, str], tables: dict[str, Any], dialect: str, digest: str,
                          query: Callable[..., str],
                          resolve: Callable[[Any], tuple[str, str] | None]) -> list[CloneWitness]:
    """Values at a literal's edge: per comparison of a free fact column with a literal, a
    clone of a row that passes every other conjunct, with the column set to the literal and
    the values just beside it (a day either side of a date bound), each written only when
    it lies in the pinned column's domain. A bound moved by one day where no pinned row sits
    on it shows on the clone."""
    from sqlglot import exp

    from .witnesses import neighbours
    out: list[CloneWitness] = []
    free = set(tables[table_of[fact]].free)
    for i, cond in enumerate(conjuncts):
        if alias_sets[i] != {fact} or cond.find(exp.Select):
            continue
        if type(cond) in (exp.LT, exp.LTE, exp.GT, exp.GTE, exp.EQ, exp.NEQ):
            column, literals = cond.this, [cond.expression]
        elif isinstance(cond, exp.Between):
            column, literals = cond.this, [cond.args.get("low"), cond.args.get("high")]
        else:
            continue
        key = resolve(column) if isinstance(column, exp.Column) else None
        if key is None or key[1] not in free:
            continue
        texts = []
        for lit in literals:
            lit = lit.find(exp.Literal) if isinstance(lit, exp.Cast) else lit
            if isinstance(lit, exp.Literal):
                texts += [v for v in neighbours(lit.this) if v not in texts]
        others = [c for k, c in enumerate(conjuncts) if k != i]
        rows_sql = query([], others, [], [])
        rendered = " ".join(cond.sql(dialect=dialect).split())
        for text in texts:
            out.append(CloneWitness(digest, table_of[fact], rows_sql, (), (),
                                    f"a {fact_name} row{through} with {key[1]} = {text} (at the edge of `{rendered}`)",
                                    fixed=((key[1], text),)))
    return out + _across_value_witnesses(conjuncts, alias_sets, fact, fact_name, through, table_of, free, dialect,
                                         digest, query, resolve) \
        + _group_edge_witnesses(conjuncts, fact, fact_name, through, table_of, free, dialect, digest, query, resolve)


def _across_value_witnesses(conjuncts: list[Any], alias_sets: list[Any], fact: str, fact_name: str, through: str,
                            table_of: dict[str, str], free: set[str], dialect: str, digest: str,
                            query: Callable[..., str],
                            resolve: Callable[[Any], tuple[str, str] | None]) -> list[CloneWitness]:
    """A free fact column compared with another table's columns (``inv_quantity_on_hand <
    cs_quantity``, TPC-DS q72): a copy of a row that passes every other conjunct (read with the
    column's new value), the column set to the other side's value on that row, so the two are
    equal (``<`` against ``<=``: no pinned pair is), only where that value lies within the
    column's range on the variant (so within the pinned domain)."""
    import sqlglot
    from sqlglot import exp
    out: list[CloneWitness] = []
    for i, cond in enumerate(conjuncts):
        if not _across(cond) or fact not in (alias_sets[i] or ()):
            continue
        for mine, other in ((cond.this, cond.expression), (cond.expression, cond.this)):
            key = resolve(mine) if isinstance(mine, exp.Column) else None
            if key is None or key[0] != fact or key[1] not in free \
                    or any((resolve(c) or (fact,))[0] == fact for c in other.find_all(exp.Column)):
                continue

            def put(n: Any, key: Any = key, other: Any = other) -> Any:
                return exp.Paren(this=other.copy()) if isinstance(n, exp.Column) and resolve(n) == key else n
            column = exp.column(key[1], quoted=True)
            rel = sqlglot.parse_one(table_of[fact], into=exp.Table, read=dialect)
            inside = exp.Between(this=exp.Paren(this=other.copy()),
                                 low=exp.Subquery(this=exp.select(exp.Min(this=column)).from_(rel.copy())),
                                 high=exp.Subquery(this=exp.select(exp.Max(this=column.copy())).from_(rel.copy())))
            others = [c.copy().transform(put) for k, c in enumerate(conjuncts) if k != i]
            rendered = " ".join(cond.sql(dialect=dialect).split())
            out.append(CloneWitness(
                digest, table_of[fact], query([], others + [inside], [(other.copy(), "r0"), (other.copy(), "v0")], []),
                (key[1],), (f"{fact_name}.{key[1]}",),
                f"a {fact_name} row{through} with {{shown}} (the other side of `{rendered}`, at its edge)"))
    return out


def _group_edge_witnesses(conjuncts: list[Any], fact: str, fact_name: str, through: str, table_of: dict[str, str],
                          free: set[str], dialect: str, digest: str, query: Callable[..., str],
                          resolve: Callable[[Any], tuple[str, str] | None]) -> list[CloneWitness]:
    """A fact column's bound inside an AND-group of an OR (``(ca_state IN ('VA', 'CA') AND
    ss_net_profit BETWEEN 50 AND 25000) OR (...)``): a copy of a row that passes every other
    conjunct and the rest of its group, with the column just outside the bound (a dropped
    bound keeps it), then at it (a moved or flipped one). Round the groups' bounds in turn,
    at most ``MAX_GROUP_EDGES`` per SELECT, so the moved witnesses after them keep their room."""
    from sqlglot import exp

    from .witnesses import split_terms
    per_term: list[list[CloneWitness]] = []
    for i, top in enumerate(conjuncts):
        if not isinstance(top, exp.Or) or top.find(exp.Select):
            continue
        for disjunct in split_terms(top, exp.Or):
            group = split_terms(disjunct, exp.And)
            for term in group:
                values = _bound_edges(term)
                key = resolve(term.this) if values and isinstance(term.this, exp.Column) else None
                if key is None or key[0] != fact or key[1] not in free \
                        or any((resolve(c) or ("",))[0] != fact for c in term.find_all(exp.Column)):
                    continue
                others = [c for k, c in enumerate(conjuncts) if k != i] + [t for t in group if t is not term]
                rows_sql = query([], others, [], [])
                rendered = " ".join(term.sql(dialect=dialect).split())
                per_term.append([CloneWitness(digest, table_of[fact], rows_sql, (), (),
                                              f"a {fact_name} row{through} with {key[1]} = {v} (at the edge of "
                                              f"`{rendered}`, in an OR's AND-group)", fixed=((key[1], v),))
                                 for v in dict.fromkeys(values)])
    out = [t[k] for k in range(max((len(t) for t in per_term), default=0)) for t in per_term if k < len(t)]
    return out[:MAX_GROUP_EDGES]


def _bound_edges(term: Any) -> list[str]:
    """A range's or a comparison's values with a literal, those just outside it first (one unit past
    each bound), then those on it; none for any other term."""
    from sqlglot import exp

    from .witnesses import neighbours
    if isinstance(term, exp.Between):
        low, high = (b.find(exp.Literal) if isinstance(b, exp.Cast) else b
                     for b in (term.args.get("low"), term.args.get("high")))
        return [neighbours(low.this)[1], neighbours(high.this)[2], low.this, high.this] \
            if isinstance(low, exp.Literal) and isinstance(high, exp.Literal) else []
    if type(term) in (exp.LT, exp.LTE, exp.GT, exp.GTE):
        lit = term.expression.find(exp.Literal) if isinstance(term.expression, exp.Cast) else term.expression
        return neighbours(lit.this)[1:] + neighbours(lit.this)[:1] if isinstance(lit, exp.Literal) else []
    return []


def by_position(count: int) -> list[Any]:
    """The last ORDER BY keys of a builder query that keeps its first rows: every output
    column by position. Rows tied on the keys before (one reaching row joined to two rows of
    another table) then come in one order whatever plan the engine chooses: without them a
    LIMIT keeps whichever the plan yields first, and what a variant holds would depend on
    the DuckDB release and its optimizer (a filter pushed down or not changed 8 of 8
    Vantage variants)."""
    from sqlglot import exp
    return [exp.Ordered(this=exp.Literal.number(i)) for i in range(1, count + 1)]


def positions(count: int) -> str:
    """``by_position`` for a query written as text: ``1, 2, ..., count``."""
    return ", ".join(str(i) for i in range(1, count + 1))


def turned_rowid(rowid: Any) -> Any:
    """The last sort key of a witness's row: the row id scrambled by the variant's turn (the
    one parameter of ``rows_sql``), so each variant copies another of the rows that qualify.
    Always the first row id would promote, in every variant, the member a gold's
    ``ORDER BY ... LIMIT`` returns first: the tie writer then finds no tie to break, and a
    query returning "the first row" passes on every variant."""
    from sqlglot import exp
    scrambled = exp.Add(this=exp.Mul(this=rowid, expression=exp.Literal.number(2654435761)),
                        expression=exp.Placeholder())
    return exp.Mod(this=exp.Paren(this=scrambled), expression=exp.Literal.number(4294967291))


def _reached(start: str, edges: list[tuple[str, str, str, str, int]]) -> set[str]:
    seen, todo = {start}, [start]
    while todo:
        a = todo.pop()
        for child, _, parent, _, _ in edges:
            if child == a and parent not in seen:
                seen.add(parent)
                todo.append(parent)
    return seen


def _meeting(cond: Any, parent: str, subtree: set[str], resolve: Callable[[Any], tuple[str, str] | None],
             qualify: Callable[[Any], Any]) -> tuple[str, Any, int] | None:
    """(the parent's column, the other side, the step from it across the bound) of a comparison
    of two tables' columns whose one side is a bare column of ``parent`` and whose other reads
    nothing moved (``d3.d_date > d1.d_date + 5`` moved on ``d3``): a copy moved to the parent
    row holding the other side's value sits where ``>`` and ``>=`` part; one a step across from it
    (``>``, ``<=``: +1; ``>=``, ``<``: -1; a day for a date, one for a number) where ``+ 5`` and
    ``+ 6`` do. A side of no such arithmetic (SQLite's text dates) finds no row there: no witness."""
    from sqlglot import exp
    if not _across(cond):
        return None
    up = type(cond) in (exp.GT, exp.LTE)
    for mine, other, flipped in ((cond.this, cond.expression, False), (cond.expression, cond.this, True)):
        key = resolve(mine) if isinstance(mine, exp.Column) else None
        if key is not None and key[0] == parent and all(
                (resolve(c) or (parent,))[0] not in subtree for c in other.find_all(exp.Column)):
            return key[1], other.copy().transform(qualify), 1 if up != flipped else -1
    return None


def _across(cond: Any) -> bool:
    """An order comparison whose both sides read a column, no subquery (two tables' columns:
    ``d3.d_date > d1.d_date + 5``, ``inv_quantity_on_hand < cs_quantity``)."""
    from sqlglot import exp
    return type(cond) in (exp.LT, exp.LTE, exp.GT, exp.GTE) and not cond.find(exp.Select) \
        and cond.this.find(exp.Column) is not None and cond.expression.find(exp.Column) is not None


def _edges_of(cond: Any, original: Any, dialect: str) -> list[tuple[Any, list[Any], str]]:
    """(condition, ORDER BY, how) of each moved witness of a filter conjunct: failing it
    (the nearest failing value first for a comparison with a constant, or with another
    table's column: the moved side equal to the other, ``d3.d_date = d1.d_date + 5`` for
    ``>``) and, for a range, passing it at its edge."""
    from sqlglot import exp
    if _across(cond):  # nearest to the other side's value on the same source row, either way
        gap = [exp.Ordered(this=exp.Abs(this=exp.Sub(this=exp.Paren(this=cond.this.copy()),
                                                     expression=exp.Paren(this=cond.expression.copy()))))]
        return [(exp.not_(cond.copy()), gap, "just past, fails only"), (cond.copy(), gap, "at the edge of")]
    col = cond.this if isinstance(cond, (exp.Between, exp.In, exp.Like, exp.ILike)) else None
    # a column, or an expression of one row's columns (q34's ``CASE ... hd_dep_count / hd_vehicle_count ... > 1.2``)
    if type(cond) in (exp.LT, exp.LTE, exp.GT, exp.GTE, exp.EQ) and cond.this.find(exp.Column) \
            and not cond.expression.find(exp.Column) and not cond.this.find(exp.Select, exp.AggFunc):
        col = cond.this

    def asc(c: Any) -> list[Any]:
        return [exp.Ordered(this=c.copy())]

    def desc(c: Any) -> list[Any]:
        return [exp.Ordered(this=c.copy(), desc=True)]

    # a NULL fails it too (a NULL country: a dropped ``ca_country = 'United States'`` keeps the row), taken last
    fails: tuple[Any, list[Any], str] = (
        exp.Not(this=exp.Is(this=exp.Paren(this=cond.copy()), expression=exp.true())),
        [exp.Ordered(this=exp.Is(this=exp.Paren(this=cond.copy()), expression=exp.Null()))], "fails only")
    if col is None or not isinstance(col, exp.Column) and not isinstance(cond, (exp.LT, exp.LTE, exp.GT, exp.GTE)):
        return [fails]
    if isinstance(cond, exp.In) and cond.expressions and not any(m.find(exp.Column) for m in cond.expressions):
        # each member alone (a year of three): a member changed or dropped takes such a row out
        return [fails] + [(exp.EQ(this=col.copy(), expression=m.copy()), asc(col),
                           f"at the member `{' '.join(m.sql(dialect=dialect).split())}` of")
                          for m in cond.expressions[:MAX_IN_MEMBERS]]
    if isinstance(cond, exp.Between):
        low, high = cond.args["low"], cond.args["high"]
        return [(exp.LT(this=col.copy(), expression=low.copy()), desc(col), "just below, fails only"),
                (exp.GT(this=col.copy(), expression=high.copy()), asc(col), "just above, fails only"),
                (cond.copy(), asc(col), "at the low edge of"), (cond.copy(), desc(col), "at the high edge of")]
    bound = cond.args.get("expression")
    if isinstance(cond, (exp.LT, exp.LTE)):
        return [(exp.not_(cond.copy()), asc(col), "just past, fails only"), (cond.copy(), desc(col), "at the edge of")]
    if isinstance(cond, (exp.GT, exp.GTE)):
        return [(exp.not_(cond.copy()), desc(col), "just past, fails only"), (cond.copy(), asc(col), "at the edge of")]
    if isinstance(cond, exp.EQ) and bound is not None and not (isinstance(bound, exp.Literal) and bound.is_string):
        return [(exp.GT(this=col.copy(), expression=bound.copy()), asc(col), "the next value up, fails only"),
                (exp.LT(this=col.copy(), expression=bound.copy()), desc(col), "the next value down, fails only")]
    return [fails]


def _having_witnesses(select: Any, band: list[Any], conjuncts: list[Any], fact: str, fact_name: str, through: str,
                      base_from: Any,
                      dialect: str, digest: str, table: str, query: Callable[..., str], *,
                      resolve: Callable[[Any], tuple[str, str] | None] | None = None,
                      free: set[str] | None = None) -> list[CloneWitness]:
    """Per ``HAVING count(*) op b`` (or ``count(column)``), a group pushed to ``b + 1``, ``b``
    and ``b - 1`` rows (in that order, so a later push never takes an earlier one's group).
    Per ``HAVING sum(x) op b`` or ``avg(x) op b`` over a free fact column: one clone of a
    group's row whose ``x`` brings the group to exactly ``b`` and to the values beside it,
    written only when that ``x`` lies between the column's least and greatest value."""
    from sqlglot import exp

    group = select.args.get("group")
    if not band or group is None:
        return []
    from .witnesses import group_keys
    keys = group_keys(select)
    out = []
    ops = {exp.GT: ">", exp.GTE: ">=", exp.LT: "<", exp.LTE: "<=", exp.EQ: "="}
    for cond in band:
        if type(cond) not in ops:
            continue
        agg, bound = cond.this, cond.expression
        if isinstance(agg, exp.Literal):
            agg, bound = bound, agg
        if isinstance(agg, (exp.Sum, exp.Avg)) and resolve is not None and free is not None:
            out += _sum_witnesses(agg, bound, cond, keys, conjuncts, fact, fact_name, through, dialect, digest,
                                  table, query, resolve, free)
            continue
        if not isinstance(agg, exp.Count) or agg.find(exp.Distinct) or not isinstance(bound, exp.Literal) \
                or bound.is_string or not bound.this.isdigit():
            continue
        b = int(bound.this)
        arg = agg.this
        counted = [] if isinstance(arg, exp.Star) or arg is None else [exp.not_(exp.Is(this=arg.copy(),
                                                                                          expression=exp.Null()))]
        for target in [t for t in (b + 1, b, b - 1) if t >= 1]:
            window = exp.Window(this=agg.copy(), partition_by=[k.copy() for k in keys])
            inner = query([], conjuncts + counted, [(window, "n")] + [(k.copy(), f"v{i}") for i, k in
                                                                      enumerate(keys[:2])], [], limit=False)
            shown_sql = ", ".join(f"v{i}" for i in range(min(2, len(keys)))) or "NULL AS v0"
            rows_sql = (f"SELECT w0, {target} - n AS need, {shown_sql} FROM ({inner}) AS grouped "
                        f"WHERE n < {target} AND n >= {target - MAX_GROUP_CLONES} ORDER BY {target} - n, "
                        f"{turned_rowid(exp.column('w0')).sql(dialect=dialect)}, "
                        f"{positions(2 + max(1, min(2, len(keys))))} LIMIT 1")
            rendered = " ".join(cond.sql(dialect=dialect).split())
            shown = tuple(" ".join(k.sql(dialect=dialect).split())[:40] for k in keys[:2])
            out.append(CloneWitness(digest, table, rows_sql, (), shown,
                                    f"{{need}} copies of a {fact_name} row{through} bring the group {{shown}} "
                                    f"to exactly {target} rows (the gold's HAVING `{rendered}`)", grouped=True))
    return out


def _sum_witnesses(agg: Any, bound: Any, cond: Any, keys: list[Any], conjuncts: list[Any], fact: str, fact_name: str,
                   through: str, dialect: str, digest: str, table: str, query: Callable[..., str],
                   resolve: Callable[[Any], tuple[str, str] | None], free: set[str]) -> list[CloneWitness]:
    from sqlglot import exp

    from .witnesses import neighbours
    arg = agg.this
    key = resolve(arg) if isinstance(arg, exp.Column) else None
    if key is None or key[0] != fact or key[1] not in free or agg.find(exp.Distinct) \
            or not isinstance(bound, exp.Literal) or bound.is_string:
        return []
    if any(key[1] in {c.name for c in c_.find_all(exp.Column)} for c_ in conjuncts):
        return []  # a filtered column: the clone's new value might leave the filter
    column = key[1]
    rel = exp.Table(this=exp.to_identifier(table.rsplit(".", 1)[-1]),
                    db=exp.to_identifier(table.split(".", 1)[0]) if "." in table else None).sql(dialect=dialect)
    q_col = exp.to_identifier(column).sql(dialect=dialect)
    window_sum = exp.Window(this=exp.Sum(this=arg.copy()), partition_by=[k.copy() for k in keys])
    window_n = exp.Window(this=exp.Count(this=arg.copy()), partition_by=[k.copy() for k in keys])
    inner = query([], conjuncts, [(window_sum, "s"), (window_n, "n")]
                  + [(k.copy(), f"v{i + 1}") for i, k in enumerate(keys[:2])], [], limit=False)
    shown_keys = ", ".join(f"v{i + 1}" for i in range(min(2, len(keys))))
    shown = (column,) + tuple(" ".join(k.sql(dialect=dialect).split())[:40] for k in keys[:2])
    rendered = " ".join(cond.sql(dialect=dialect).split())
    out = []
    low, high = f"(SELECT min({q_col}) FROM {rel})", f"(SELECT max({q_col}) FROM {rel})"
    keys_out = f", {shown_keys}" if shown_keys else ""
    turned = turned_rowid(exp.column("w0")).sql(dialect=dialect)
    for target in neighbours(bound.this):
        if isinstance(agg, exp.Sum):
            # the gap to the target: ``need`` clones at the column's greatest value, one with the rest
            steps = ("CAST(gap * 1.0 / top - 0.000001 AS INTEGER)" if dialect == "sqlite"
                     else "CAST(floor(gap / top - 0.000001) AS BIGINT)")
            rows_sql = (f"SELECT w0, need, top AS r0, gap - need * top AS r1, gap - need * top AS v0{keys_out} "
                        f"FROM (SELECT *, {steps} AS need FROM (SELECT w0, {target} - s AS gap, {high} AS top, "
                        f"{low} AS bottom{keys_out} FROM ({inner}) AS grouped WHERE s IS NOT NULL) AS gaps "
                        f"WHERE gap > 0 AND top > 0) AS steps WHERE need >= 0 AND need < {MAX_GROUP_CLONES} "
                        f"AND gap - need * top BETWEEN bottom AND top ORDER BY need, {turned}, "
                        f"{positions(5 + min(2, len(keys)))} LIMIT 1")
            what = (f"{{need}} copies of a {fact_name} row{through} at its greatest {column} and one with {{shown}} "
                    f"bring its group's sum to exactly {target} (the gold's HAVING `{rendered}`)")
        else:
            value = f"({target} * (n + 1) - s)"
            rows_sql = (f"SELECT w0, 0 AS need, {value} AS r0, {value} AS r1, {value} AS v0{keys_out} "
                        f"FROM ({inner}) AS grouped WHERE s IS NOT NULL AND {value} BETWEEN {low} AND {high} "
                        f"ORDER BY {turned}, {positions(5 + min(2, len(keys)))} LIMIT 1")
            what = (f"a {fact_name} row{through} with {{shown}} brings its group's average to exactly {target} "
                    f"(the gold's HAVING `{rendered}`)")
        out.append(CloneWitness(digest, table, rows_sql, (column,), shown, what, filled=True, spread=NEW_ROW_SPREAD))
    return out


_ROW_NUMBER_SUFFIXES = ("_number", "_no", "_num", "_nbr")


def joined_key(left: Any, left_column: str, right: Any, right_column: str) -> bool | None:
    """Whether a gold's join equality ``left.left_column = right.right_column`` is a
    reference no dependency backs: True when ``right_column`` is a single-column key of
    ``right`` (and ``left_column`` none of ``left``'s), False the other way round, None when
    neither or both are (a 1:1 join, or no key: no direction to clone along)."""
    def single_key(t: Any, column: str) -> bool:
        return column in t.observed_unique or (column,) in [t.primary_key, *t.unique_keys]
    to_right, to_left = single_key(right, right_column), single_key(left, left_column)
    return None if to_right == to_left else to_right


def row_number_column(t: Any, linked: set[str]) -> str | None:
    """The column a copy of a row of a key-less table takes a fresh value in, so it is no
    duplicate: an integer column named like a number (``ss_ticket_number``, ``cs_order_number``)
    in no dependency. TPC-DS's fact tables have only a composite key (ticket, item), which
    the observer does not see; a fresh ticket is a new sale of one line."""
    for column, ctype in t.columns.items():
        if column not in linked and column.lower().endswith(_ROW_NUMBER_SUFFIXES) \
                and any(w in ctype.upper() for w in ("INT", "DECIMAL", "NUMERIC")):
            return str(column)
    return None


def deps_columns(deps: Iterable[Any], table: str) -> set[str]:
    """The columns of ``table`` a new row may not give a fresh value: those on the child side
    of a reference (it must point at a row that exists). A key only referenced may be fresh:
    a new dimension row breaks no reference. Where every key is used by some child row (a
    *total* dependency: every order has lines), ``CloneWriter.clone`` also copies one child
    row of the source onto the new key, so that still holds."""
    out: set[str] = set()
    for d in deps:
        if d.child == table and d.origin != "total":
            out |= set(d.child_columns)
    return out


def fresh_columns(t: Any, linked: set[str], given: Iterable[str] = ()) -> list[str] | None:
    """One column per key of ``t`` to give a fresh value in a clone (a number or text in no
    dependency), or None when some key has none: the table is then not cloned."""
    keys = t.keys
    chosen: list[str] = []
    for key in keys:
        if set(key) & (set(chosen) | set(given)):  # ``given``: columns the caller gives a new value already
            continue
        options = [c for c in key if c not in linked and freshable(t.columns.get(c, ""))]
        if not options:
            return None
        chosen.append(sorted(options, key=lambda c: "INT" not in t.columns[c].upper())[0])
    if not chosen and not given and not t.duplicate_rows:
        number = None if keys else row_number_column(t, linked)
        if number is None:
            return None  # a copy would be the table's first duplicate row: a fact a query may rely on
        chosen.append(number)
    return chosen


def sharable(t: Any, deps: Iterable[Any]) -> dict[str, list[Any]]:
    """Per key column of ``t`` that only observed references bind (no declared foreign key, no
    gold's join: TPC-DS's encoded ids, every ``c_customer_id`` a ``t_time_id`` too), those
    references: a new row may take a value every referenced column holds and ``t`` does not
    (``CloneWriter.shared``) where no other key column could be fresh."""
    keys = {c for k in [t.primary_key, *t.unique_keys, *[(c,) for c in t.observed_unique]] for c in k}
    out: dict[str, list[Any]] = {}
    for d in deps:
        if d.child == t.name and d.origin != "total" and len(d.child_columns) == 1 and d.child_columns[0] in keys:
            out.setdefault(d.child_columns[0], []).append(d)
    return {c: refs for c, refs in out.items() if all(d.origin == "observed" for d in refs)}


def freshable(ctype: str) -> bool:
    upper = ctype.upper()
    return any(w in upper for w in _NUMERIC) or any(w in upper for w in ("CHAR", "TEXT", "STRING")) or upper == ""


class CloneWriter:
    """Writes clone witnesses into one variant: picks the row, inserts the clones, and
    remembers their row ids (no later boundary write may change them) and the sentences."""

    def __init__(self, con: Any, engine: str, tables: dict[str, Any], dependencies: list[Any],
                 bounded: Callable[[str, list[Any]], list[tuple[Any, ...]]],
                 allowed: Callable[[str, str, str], bool] | None = None,
                 pinned_values: Callable[[str, str], list[Any]] | None = None,
                 pinned: Callable[[str, list[Any]], list[tuple[Any, ...]]] | None = None) -> None:
        self.con, self.engine, self.tables, self.bounded = con, engine, tables, bounded
        self.allowed = allowed  # (table, column, literal text): in the pinned column's domain
        self.pinned_values = pinned_values  # (table, column): some values the pinned column holds
        self.pinned = pinned  # a bounded query on the pinned database: where a LIMIT witness finds its path
        self.deps = [d for d in dependencies if d.origin != "total" and len(d.child_columns) == 1]
        self.all_deps = list(dependencies)
        self.sentences: dict[str, list[str]] = {}
        self.rows: dict[str, set[int]] = {}
        # (table, column) -> the copies whose value there a witness chose (a split group's greatest sum): a
        # separating move leaves them (``SeparatingWriter._summed``)
        self.chosen: dict[tuple[str, str], set[int]] = {}
        self.links: list[Any] = []  # the witness being written's gold-implied references
        # a key column that only observed references bind (TPC-DS's encoded ids: every ``c_customer_id`` is a
        # ``t_time_id`` too) gets a value every referenced column holds and the table does not (``shared``),
        # where no other key column could be fresh; set by ``outputs``, whose new customers need one
        self.shared_keys = False
        # the greatest free shared value, not the least: a LIMIT lift's new rows (``_fill``, ``outputs``) sort
        # after every other witness's, so a moved customer of a gold ordered by its id stays inside the LIMIT
        self.shared_last = False
        self._partner_columns: dict[tuple[str, str], list[str]] = {}
        self._reached: dict[tuple[str, str], bool] = {}  # (gold, reach_sql): a pinned path copied in (``_reach``)

    def write(self, w: CloneWitness, turn: int = 0) -> bool:
        """Clone the row ``w.rows_sql`` picks on this variant; ``turn`` (the variant's index)
        scrambles which of the qualifying rows that is."""
        self.links = list(w.links)
        if w.shared and not self.shared_keys:
            self.shared_keys = True  # for this witness's copies only
            try:
                return self.write(w, turn)
            finally:
                self.shared_keys = False
        if w.whole and w.top_sql:
            self._reach_whole(w, turn)
        try:
            found = self.bounded(w.rows_sql, [_salt_of(turn)])
        except Exception:  # too slow, or a form this engine refuses: no witness here
            return False
        if not found and w.limit:
            found = self._import_path(w, turn)
        elif not found and w.reach_sql and self._reach(w, turn):
            found = self.bounded(w.rows_sql, [_salt_of(turn)])
        if not found:
            return False
        row = found[0]
        if w.limit:
            return self._fill(w, row)
        if w.meet:
            key = self._met(w.meet, row[1])
            if key is None:
                return False
            row = (row[0], key, *row[2:])
        parent_moved: dict[str, Any] = {}
        moved: dict[str, Any]
        if w.filled:
            need = int(row[1])
            if need < 0 or need >= MAX_GROUP_CLONES:
                return False
            for _ in range(need):
                if self._fact_clone(w, int(row[0]), {w.moved[0]: row[2]}) is None:
                    return False
            need, moved, shown_values = 1, {w.moved[0]: row[3]}, row[4:]
        elif w.grouped:
            need, shown_values, moved = int(row[1]), row[2:], {}
        elif w.parent is not None:
            need, moved = 1, {}
            parent_moved = dict(zip(w.moved, row[2:2 + len(w.moved)]))
            shown_values = row[2 + len(w.moved):]
            if w.named and not all(v is not None and self.allowed is not None
                                   and self.allowed(w.parent[0], c, str(v)) for c, v in parent_moved.items()):
                return False  # a value outside the pinned column's domain is never written
        else:
            need, moved, shown_values = 1, dict(zip(w.moved, row[1:1 + len(w.moved)])), row[1 + len(w.moved):]
        if need < 1 or need > MAX_GROUP_CLONES:
            return False
        if w.regroup is not None:
            value = self._absent(w.table, w.regroup)
            if value is None:
                return False
            moved[w.regroup], shown_values = value, (value,)
        for column, text in w.fixed:
            if self.allowed is None or not self.allowed(w.table, column, text):
                return False  # a value outside the pinned column's domain is never written
            moved[column] = text
        if w.parent is not None:
            table, key, column = w.parent
            made = self.clone(table, int(row[1]), parent_moved, renew=w.renew)
            if made is None or key not in made:
                return False
            moved[column] = made[key]
        copies = 0
        # the copies' values a witness chose in free columns (a split group's sum), kept from later moves
        chosen = [c for c in moved if c in self.tables[w.table].free]
        before = set(self.rows.get(w.table, set())) if chosen else set()
        if w.whole:
            copies = self._whole_clone(w, int(row[0]), moved)
            if not copies:
                return False
        else:
            for _ in range(need):
                if self._fact_clone(w, int(row[0]), moved) is None:
                    return False
        for column in chosen:
            self.chosen.setdefault((w.table, column), set()).update(self.rows.get(w.table, set()) - before)
        shown = ", ".join(f"{n} = {_show(v)}" for n, v in zip(w.shown, shown_values))
        sentence = w.what.replace("{shown}", shown or "another row").replace("{need}", str(row[1] if w.filled else need))
        if copies:
            sentence += f", copied with the rest of its group ({', '.join(w.whole)}): {copies} rows"
        kept = self.sentences.setdefault(w.gold, [])
        if len(kept) < MAX_SENTENCES:
            kept.append(sentence)
        return True

    def _fact_clone(self, w: CloneWitness, rowid: int, moved: dict[str, Any]) -> dict[str, Any] | None:
        """``clone`` of the witness's fact row; where the gold groups by the column a copy would
        take fresh (a keyless table's ticket number, ``row_number_column``), the copy keeps it
        and another column takes a value the ticket has no row with (``partner``): a fresh
        ticket would be a group of one line, outside a band such as ``count(*) BETWEEN 15 AND
        20``. Where no reference can, the fresh copy as before."""
        if w.keep:
            t = self.tables[w.table]
            fresh = fresh_columns(t, deps_columns(self.all_deps + self.links, w.table))
            keyed = any(k for k in [t.primary_key, *t.unique_keys, *t.observed_unique])
            if fresh and len(fresh) == 1 and fresh[0] in w.keep and not keyed:
                partner = self.partner(w.table, rowid, fresh[0], {*w.keep, *w.reads, *moved})
                if partner is not None:
                    return self.clone(w.table, rowid, {**moved, **partner}, given=frozenset(partner))
        copy = self.clone(w.table, rowid, moved)
        if copy is not None and not self._children_copied(w, rowid, copy, moved):
            return None
        return copy

    def _children_copied(self, w: CloneWitness, rowid: int, copy: dict[str, Any], moved: dict[str, Any]) -> bool:
        """The rows ``w.children`` finds for row ``rowid``, copied onto ``copy``'s fresh key;
        False when one is refused (what was written stays: the caller's witness is then not
        counted)."""
        from .constraints import qualified, quote
        for kid in w.children:
            if kid.column not in copy or kid.column in moved:
                continue  # the copy keeps the source's value: the source's rows serve it too
            if kid.values:
                value = self.con.execute(f"SELECT {quote(kid.column)} FROM {qualified(w.table, self.engine)} "
                                         f"WHERE rowid = {int(rowid)}").fetchone()[0]
                params = [value] * kid.values
            else:
                params = [int(rowid)]
            # where the child's column is the one its own copy would renumber (a return's ticket), it is given
            renumbered = fresh_columns(self.tables[kid.table], deps_columns(self.all_deps + self.links, kid.table))
            given = frozenset({kid.child_column}) if kid.child_column in (renumbered or ()) else frozenset()
            for (child_rowid,) in self.bounded(kid.sql, params):
                if self.clone(kid.table, int(child_rowid), {kid.child_column: copy[kid.column]}, given=given) is None:
                    return False
        return True

    def partner(self, table: str, rowid: int, number: str, avoid: Iterable[str]) -> dict[str, Any] | None:
        """``{d: value}`` for a copy of row ``rowid`` that keeps its ``number`` (a ticket): ``d`` the
        integer column with the most values that is never NULL and unique together with
        ``number`` on the pinned data (the item of a ticket's line), none of ``avoid`` (what the
        gold reads or groups by, what the witness moves); ``value`` the least value the variant's
        column holds and the ticket has no row with. A value another row holds keeps every
        reference of ``d``, declared or not (TPC-DS's ``ss_item_sk`` has no foreign key). None
        when there is none."""
        from .constraints import qualified, quote
        avoid = set(avoid)
        rel = qualified(table, self.engine)
        for d in self._partners(table, number):
            if d in avoid:
                continue
            try:
                found = self.con.execute(
                    f"SELECT min({quote(d)}) FROM {rel} WHERE {quote(d)} IS NOT NULL AND {quote(d)} NOT IN (SELECT "
                    f"{quote(d)} FROM {rel} WHERE {quote(d)} IS NOT NULL AND {quote(number)} = (SELECT "
                    f"{quote(number)} FROM {rel} WHERE rowid = {int(rowid)}))").fetchone()
            except Exception:  # the engine refused it: not this column
                continue
            if found is not None and found[0] is not None:
                return {d: found[0]}
        return None

    def _partners(self, table: str, number: str) -> list[str]:
        """``partner``'s candidate columns of ``table``, most values first (checked once per writer)."""
        from .constraints import qualified, quote
        if (table, number) in self._partner_columns:
            return self._partner_columns[(table, number)]
        t = self.tables[table]
        ask = self.pinned or self.bounded
        rel = qualified(table, self.engine)
        keyed = {c for k in [t.primary_key, *t.unique_keys, *[(c,) for c in t.observed_unique]] for c in k}
        options = [c for c, ctype in sorted(t.columns.items()) if c != number and c not in keyed
                   and c in t.not_null_observed and "INT" in ctype.upper()][:MAX_PARTNER_CHECKS]
        found: list[tuple[int, str]] = []
        for c in options:
            try:
                if ask(f"SELECT 1 FROM {rel} GROUP BY {quote(number)}, {quote(c)} HAVING count(*) > 1 LIMIT 1", []):
                    continue
                found.append((-int(ask(f"SELECT count(DISTINCT {quote(c)}) FROM {rel}", [])[0][0]), c))
            except Exception:  # too slow, or refused: not a candidate
                continue
        self._partner_columns[(table, number)] = [c for _, c in sorted(found)]
        return self._partner_columns[(table, number)]

    def _fill(self, w: CloneWitness, row: tuple[Any, ...]) -> bool:
        """A LIMIT witness: new paths (a copy of the reaching fact row ``w0``, through a copy of
        its parent ``p0`` with a fresh key and fresh values in ``w.renamed``: a new group)
        until the gold, its LIMIT left off, has ``w.limit + 1`` rows on this variant."""
        try:
            have = int(self.bounded(w.count_sql, [])[0][0])
        except Exception:  # too slow, or a form this engine refuses
            return False
        need = w.limit + 1 - have
        if need < 1 or need > MAX_LIMIT_ROWS:
            return False  # LIMIT n - 1, n and n + 1 differ here already, or too many rows to add
        for table, rowid in zip(w.path, row[2:]):
            self.rows.setdefault(table, set()).add(int(rowid))
        last, self.shared_last = self.shared_last, True
        try:
            return self._lift(w, row, need, have)
        finally:
            self.shared_last = last

    def _lift(self, w: CloneWitness, row: tuple[Any, ...], need: int, have: int) -> bool:
        """``_fill``'s ``need`` new paths."""
        from .constraints import qualified, quote
        for k in range(need):
            moved: dict[str, Any] = {}
            if w.parent is not None:
                table, key, column = w.parent
                rel = qualified(table, self.engine)
                count = self.con.execute(f"SELECT count(*) FROM {rel}").fetchone()[0]
                renamed = {}
                for name in w.renamed:
                    refs = self.references(table, name)
                    if refs:  # a reference (TPC-DS's encoded ids are in each other's): a value every parent holds
                        value = self.shared(table, name, refs)
                        if value is None:
                            return k > 0 and self._said(w, k, have)
                        renamed[name] = value
                        continue
                    if any(t in self.tables[table].columns[name].upper() for t in _NUMERIC):
                        top = self.con.execute(f"SELECT max({quote(name)}) FROM {rel}").fetchone()[0]
                        renamed[name] = (top or 0) + 1
                        continue
                    own = self.con.execute(f"SELECT {quote(name)} FROM {rel} WHERE rowid = ?", [int(row[1])]).fetchone()
                    renamed[name] = f"{own[0] if own and own[0] is not None else ''}#{count}"
                made = self.clone(table, int(row[1]), renamed)
                if made is None or key not in made:
                    return k > 0 and self._said(w, k, have)
                moved[column] = made[key]
            if self.clone(w.table, int(row[0]), moved) is None:
                return k > 0 and self._said(w, k, have)
        return self._said(w, need, have)

    def _reach(self, w: CloneWitness, turn: int) -> bool:
        """Whether a pinned path reaching ``w``'s SELECT was copied in for it, where none on the
        variant reaches it (asked once per SELECT and variant: its other moved witnesses reuse it)."""
        key = (w.gold, w.reach_sql)
        if key not in self._reached:
            try:
                none = int(self.bounded(w.count_sql, [])[0][0]) == 0
            except Exception:  # too slow, or a form this engine refuses
                none = False
            self._reached[key] = none and bool(self._import_path(replace(w, rows_sql=w.reach_sql), turn))
        return self._reached[key]

    def _group_of(self, ask: Callable[[str, list[Any]], list[tuple[Any, ...]]], table: str,
                  columns: tuple[str, ...], rowid: int) -> list[int]:
        """The row ids of ``table``'s rows holding row ``rowid``'s values in ``columns`` (its group),
        at most ``MAX_WHOLE_ROWS + 1``, as ``ask`` (the variant, or the pinned data) has them."""
        from .constraints import qualified, quote
        rel = qualified(table, self.engine)
        same = " AND ".join(f"g.{quote(c)} = s.{quote(c)}" for c in columns)
        return [int(r[0]) for r in ask(
            f"SELECT g.rowid FROM {rel} AS g, {rel} AS s WHERE s.rowid = {int(rowid)} AND {same} "
            f"ORDER BY g.rowid LIMIT {MAX_WHOLE_ROWS + 1}", [])]

    def _whole_clone(self, w: CloneWitness, rowid: int, moved: dict[str, Any]) -> int:
        """Copies of every row of row ``rowid``'s group (``w.whole``), each with ``moved``, the first
        taking a fresh value in the group's fresh column (a new ticket) and the others that same
        value: one new group as large as the source's, which a count band keeps as it keeps the
        source's. All or nothing: the rows written, or 0."""
        rows = self._group_of(self.bounded, w.table, w.whole, rowid)
        if not rows or len(rows) > MAX_WHOLE_ROWS:
            return 0
        first = self.clone(w.table, rows[0], moved)
        if first is None:
            return 0
        fresh = [c for c in first if c not in moved]
        if len(fresh) != 1 or fresh[0] not in w.whole:  # a copy that opens no group of the band's
            for c in fresh[:1]:
                self._undo(w.table, c, first[c])
            return 0
        number = {fresh[0]: first[fresh[0]]}
        for r in rows[1:]:
            if self.clone(w.table, r, {**moved, **number}, given=frozenset(number)) is None:
                self._undo(w.table, fresh[0], number[fresh[0]])
                return 0
        return len(rows)

    def _reach_whole(self, w: CloneWitness, turn: int) -> None:
        """Where no group of ``w``'s SELECT reaches the gold's output on the variant (a subset
        splits TPC-DS's tickets, and a ticket of fewer lines leaves the band), one that does on
        the pinned data copied in whole, with the rows it references; once per SELECT and
        variant, kept only if a group then reaches the output here."""
        key = (w.gold, w.top_sql)
        if key in self._reached or self.pinned is None:
            return
        self._reached[key] = False
        try:
            if self.bounded(w.top_sql, []):
                return
            sources = sorted(int(r[0]) for r in self.pinned(w.top_sql, []) if r[0] is not None)
            group = self._group_of(self.pinned, w.table, w.whole, sources[turn % len(sources)]) if sources else []
        except Exception:  # too slow, or a form this engine refuses: nothing copied
            return
        if group and len(group) <= MAX_WHOLE_ROWS:
            self._reached[key] = self._imported([(w.table, r) for r in group], MAX_WHOLE_IMPORT_ROWS,
                                                lambda: bool(self.bounded(w.top_sql, [])))

    def _imported(self, rows: list[tuple[str, Any]], budget: int, holds: Callable[[], bool] = lambda: True,
                  mates: bool = False) -> bool:
        """Pinned rows (table, row id) copied in, in this order, with the rows they reference
        (``_import_row``, at most ``budget`` in all): all or nothing. Kept, and spared by later
        writes, only where every dependency holds for them and ``holds()`` then does; else
        removed. ``mates``: a listed row whose key the variant gives a row of other values is
        that row (``holds()`` decides whether the path still stands on it)."""
        added: list[tuple[str, int]] = []
        reused: list[tuple[str, int]] = []
        try:
            for table, pinned_rowid in rows:
                if self._import_row(table, pinned_rowid, added, budget, mates=reused if mates else None) is None:
                    raise LookupError(table)
            if not self._kept(added) or not holds():
                raise LookupError("not kept")
        except Exception:  # a row the engine refuses, a key taken, a dependency broken, or ``holds`` not met
            self._remove(added)
            return False
        for table, rowid in added + reused:
            self.rows.setdefault(table, set()).add(rowid)
        return True

    def _met(self, meet: tuple[str, ...], value: Any) -> Any:
        """The key of a ``meet[0]`` row whose ``meet[2]`` is ``value``: the variant's, else one of the
        pinned data's copied in (with the rows it references); None if neither holds one."""
        from .constraints import qualified, quote
        table, key, column = meet
        ask = f"SELECT {quote(key)} FROM {qualified(table, self.engine)} WHERE {quote(column)} = ? LIMIT 1"
        if value is None:
            return None
        here = self.con.execute(ask, [value]).fetchall()
        if here or self.pinned is None:
            return here[0][0] if here else None
        source = self.pinned(ask.replace(f"SELECT {quote(key)}", "SELECT rowid", 1), [value])
        if not source or not self._imported([(table, source[0][0])], MAX_IMPORT_ROWS):
            return None
        here = self.con.execute(ask, [value]).fetchall()
        return here[0][0] if here else None

    def _import_path(self, w: CloneWitness, turn: int) -> list[tuple[Any, ...]]:
        """A LIMIT witness on a variant where no row reaches the gold's output (a subset of a
        star schema keeps a few per cent of a five-table join, and TPC-DS golds often keep
        none): one reaching path of the pinned database, its rows copied in as they are
        (every conjunct holds on them, as it does there), with the rows they reference that
        the variant lacks (``_import_row``). Kept only if the gold then has a new output row
        and every dependency holds for the rows copied (a total one, "every address is a
        customer's", may not); else removed. The witness's row, as ``rows_sql`` gives it on
        the variant, or none."""
        if self.pinned is None:
            return []
        try:
            found = self.pinned(w.rows_sql, [_salt_of(turn)])
        except Exception:  # too slow, or a form this engine refuses
            return []
        if not found:
            return []
        path = list(zip(w.path, found[0][2:]))  # a table may be on it twice (two roles of a dimension)
        order = self._parents_first([table for table, _ in path])
        try:
            before = int(self.bounded(w.count_sql, [])[0][0])
        except Exception:  # too slow, or a form this engine refuses: nothing copied
            return []
        again: list[tuple[Any, ...]] = []

        def holds() -> bool:  # a new output row, and the witness's row found on it
            if int(self.bounded(w.count_sql, [])[0][0]) <= before:
                return False
            again[:] = self.bounded(w.rows_sql, [_salt_of(turn)])
            return bool(again)
        return again if self._imported(sorted(path, key=lambda p: order.index(p[0])), MAX_IMPORT_ROWS, holds,
                                       mates=True) else []

    def parents_first(self, tables: list[str]) -> list[str]:
        """``_parents_first``, for ``outputs``."""
        return self._parents_first(tables)

    def import_row(self, table: str, pinned_rowid: int, added: list[tuple[str, int]],
                   mates: list[tuple[str, int]] | None = None) -> int | None:
        """``_import_row`` within ``MAX_IMPORT_ROWS``, for ``outputs``."""
        return self._import_row(table, pinned_rowid, added, MAX_IMPORT_ROWS, mates=mates)

    def kept(self, added: list[tuple[str, int]]) -> bool:
        """``_kept``, for ``outputs``."""
        return self._kept(added)

    def _parents_first(self, tables: list[str]) -> list[str]:
        """``tables`` ordered so that a table comes after those it references (DuckDB checks a
        declared foreign key on insert)."""
        deps = self.all_deps + self.links
        out: list[str] = []
        pending = list(dict.fromkeys(tables))
        while pending:
            ready = [t for t in pending if not any(d.child == t and d.parent in pending and d.parent != t
                                                   and d.origin != "total" for d in deps)] or pending[:1]
            out.append(ready[0])
            pending.remove(ready[0])
        return out

    def _import_row(self, table: str, pinned_rowid: int, added: list[tuple[str, int]], budget: int,
                    depth: int = 0, pending: frozenset[tuple[str, int]] = frozenset(),
                    mates: list[tuple[str, int]] | None = None) -> int | None:
        """The variant's row id of pinned row ``pinned_rowid`` of ``table``: the variant's own
        when it holds the same row, else a copy inserted after the rows it references (copied
        the same way, at most ``budget`` rows in all); None when it cannot be (a key value
        the variant gives another row, or too many rows). ``pending``: the rows being copied
        in above this one; a reference to one of them holds once they are (a cycle of
        references within a table: ``_kept`` checks every dependency after). ``mates``: where
        given, the variant's row holding the key is taken (and listed there) though its other
        values differ: TPC-DS's one store at SF 0.01 takes another gold's city on every
        variant, and no path of q50's through it could be copied in."""
        from .constraints import qualified, quote
        assert self.pinned is not None
        t = self.tables[table]
        rel, cols = qualified(table, self.engine), list(t.columns)
        got = self.pinned(f"SELECT {', '.join(map(quote, cols))} FROM {rel} WHERE rowid = {int(pinned_rowid)}", [])
        if not got:
            return None
        row = dict(zip(cols, got[0]))

        def same(columns: Iterable[str]) -> list[tuple[Any, ...]]:
            columns = list(columns)
            if any(row[c] is None for c in columns):
                return []
            where = " AND ".join(f"{quote(c)} = ?" for c in columns)
            found: list[tuple[Any, ...]] = self.con.execute(f"SELECT rowid FROM {rel} WHERE {where} LIMIT 1",
                                                            [row[c] for c in columns]).fetchall()
            return found
        keys = [k for k in [tuple(t.primary_key), *map(tuple, t.unique_keys), *[(c,) for c in t.observed_unique]] if k]
        for key in keys:
            mate = same(key)
            if mate:
                whole = same([c for c in cols if row[c] is not None])
                if whole:
                    return int(whole[0][0])
                if mates is None:
                    return None  # the key is another row's here
                mates.append((table, int(mate[0][0])))
                return int(mate[0][0])
        whole = [] if keys else same([c for c in cols if row[c] is not None])
        if whole:
            return int(whole[0][0])  # a key-less table holding this row already: a copy would duplicate it
        if len(added) >= budget or depth > MAX_IMPORT_DEPTH:
            return None
        for d in self.deps + [d for d in self.links if len(d.child_columns) == 1]:
            if d.child != table or row.get(d.child_columns[0]) is None:
                continue
            prel, pcol = qualified(d.parent, self.engine), quote(d.parent_columns[0])
            if self.con.execute(f"SELECT 1 FROM {prel} WHERE {pcol} = ? LIMIT 1", [row[d.child_columns[0]]]).fetchall():
                continue
            source = self.pinned(f"SELECT rowid FROM {prel} WHERE {pcol} = ? LIMIT 1", [row[d.child_columns[0]]])
            mine = {*pending, (table, int(pinned_rowid))}
            if source and (d.parent, int(source[0][0])) in mine:
                continue  # itself or a row being copied in above it: it holds once they are
            # another row of the same table too (TPC-DS's observed ``i_manager_id`` in ``i_item_sk``,
            # ``cp_catalog_page_number`` in ``cp_catalog_page_sk``: refusing them kept every item,
            # customer and catalog page of a reaching path out of a subset variant)
            if not source or self._import_row(d.parent, int(source[0][0]), added, budget, depth + 1,
                                              frozenset(mine)) is None:
                return None
        marks = ", ".join(f"CAST(? AS {t.columns[c]})" if self.engine == "duckdb" and t.columns[c] else "?" for c in cols)
        self.con.execute(f"INSERT INTO {rel} ({', '.join(map(quote, cols))}) VALUES ({marks})", [row[c] for c in cols])
        rowid = int(self.con.execute(f"SELECT max(rowid) FROM {rel}").fetchone()[0])
        added.append((table, rowid))
        return rowid

    def _kept(self, added: list[tuple[str, int]]) -> bool:
        """Whether every dependency holds for the rows copied in: each references a row that
        exists, and each is referenced where a total dependency says every row is."""
        from .constraints import qualified, quote
        for d in self.all_deps + self.links:
            ids = sorted(r for t, r in added if t == d.child)
            if not ids or len(d.child_columns) != len(d.parent_columns):
                continue
            match = " AND ".join(f"p.{quote(pc)} = c.{quote(cc)}" for cc, pc in zip(d.child_columns, d.parent_columns))
            nulls = " OR ".join(f"c.{quote(cc)} IS NULL" for cc in d.child_columns)
            broken = self.con.execute(
                f"SELECT count(*) FROM {qualified(d.child, self.engine)} AS c WHERE c.rowid IN "
                f"({', '.join(map(str, ids))}) AND NOT ({nulls}) AND NOT EXISTS (SELECT 1 FROM "
                f"{qualified(d.parent, self.engine)} AS p WHERE {match})").fetchone()[0]
            if broken:
                return False
        return True

    def _remove(self, added: list[tuple[str, int]]) -> None:
        from .constraints import qualified
        for table, rowid in reversed(added):
            try:
                self.con.execute(f"DELETE FROM {qualified(table, self.engine)} WHERE rowid = {int(rowid)}")
            except Exception:  # nothing more can be undone; the dependency check ran before
                pass

    def references(self, table: str, column: str) -> list[Any]:
        """The references (not total ones) whose child column is ``table.column``."""
        return [d for d in self.all_deps + self.links if d.child == table and d.child_columns == (column,)
                and d.origin != "total"]

    def shared(self, table: str, column: str, refs: list[Any]) -> Any:
        """A value of ``table.column`` that every referenced parent column holds and no row of
        the table has yet on this variant (a new group that keeps each reference), or None."""
        from .constraints import qualified, quote
        first, *rest = refs
        where = " AND ".join(f"v IN (SELECT {quote(d.parent_columns[0])} FROM {qualified(d.parent, self.engine)})"
                             for d in rest)
        rows = self.bounded(
            f"SELECT v FROM (SELECT DISTINCT {quote(first.parent_columns[0])} AS v FROM "
            f"{qualified(first.parent, self.engine)}) AS p WHERE v IS NOT NULL "
            f"AND v NOT IN (SELECT {quote(column)} FROM {qualified(table, self.engine)} WHERE {quote(column)} IS NOT NULL)"
            + (f" AND {where}" if where else "") + f" ORDER BY v{' DESC' if self.shared_last else ''} LIMIT 1", [])
        return rows[0][0] if rows else None

    def _said(self, w: CloneWitness, added: int, have: int) -> bool:
        kept = self.sentences.setdefault(w.gold, [])
        if len(kept) < MAX_SENTENCES:
            kept.append(w.what.replace("{need}", str(added)).replace("{shown}", str(have)))
        return True

    def _absent(self, table: str, column: str) -> Any:
        """A value the pinned column holds and this variant's does not (None if none is found)."""
        from .constraints import qualified, quote
        if self.pinned_values is None:
            return None
        rel = qualified(table, self.engine)
        for value in self.pinned_values(table, column):
            if value is not None and not self.con.execute(
                    f"SELECT 1 FROM {rel} WHERE {quote(column)} = ? LIMIT 1", [value]).fetchall():
                return value
        return None

    def clone(self, table: str, rowid: int, moved: dict[str, Any], depth: int = 0,
              given: frozenset[str] = frozenset(), renew: tuple[str, ...] = ()) -> dict[str, Any] | None:
        """Insert a copy of row ``rowid`` with fresh key values and ``moved`` values; the
        values written (the fresh keys among them), or None when nothing was written. A fresh
        key every value of which some child row uses (a total dependency) gets a copy of one
        of the source's child rows, moved onto it (at most two levels down). ``renew``:
        columns, in no dependency, given a fresh value as a key's is."""
        from .constraints import qualified, quote
        t, every = self.tables[table], self.all_deps + self.links
        linked = deps_columns(every, table)
        given = given | self._new_keys_by(t, rowid, moved)
        fresh = fresh_columns(t, linked, set(given))
        shared = sharable(t, every) if fresh is None and self.shared_keys else {}
        if shared:
            fresh = fresh_columns(t, linked - set(shared), set(given))
        if fresh is None:
            return None
        renewed: dict[str, list[Any]] = {}  # a renewed column's observed references: it takes a shared value
        for col in (c for c in renew if c not in fresh):
            refs = [d for d in every if d.child == table and col in d.child_columns and d.origin != "total"]
            if col in moved or not freshable(t.columns.get(col, "")) or any(
                    d.origin != "observed" or len(d.child_columns) != 1 for d in refs) or any(
                    d.parent == table and col in d.parent_columns for d in every):
                return None  # a reference must hold, or rows refer to it: not renewed
            renewed[col] = refs
            if refs:
                shared = {**shared, col: refs}
        fresh = fresh + list(renewed)
        rel = qualified(table, self.engine)
        values: dict[str, Any] = dict(moved)
        totals = [d for d in self.all_deps if d.origin == "total" and d.child == table
                  and len(d.child_columns) == 1 and d.child_columns[0] in fresh]
        if totals and depth >= 2:
            return None
        children: list[tuple[str, str, int]] = []  # (child table, its column, the child row to copy)
        try:
            for d in totals:
                (col,), (child_col,) = d.child_columns, d.parent_columns
                old = self.con.execute(f"SELECT {quote(col)} FROM {rel} WHERE rowid = {int(rowid)}").fetchone()
                found = self.con.execute(f"SELECT rowid FROM {qualified(d.parent, self.engine)} WHERE "
                                         f"{quote(child_col)} = ? LIMIT 1", [old[0] if old else None]).fetchone()
                if found is None:
                    return None
                children.append((d.parent, child_col, int(found[0])))
        except Exception:  # a form this engine refuses: no witness
            return None
        try:
            for col in fresh:
                ctype = t.columns[col].upper()
                if col in shared:
                    values[col] = self.shared(table, col, shared[col])
                    if values[col] is None:
                        return None
                elif any(w in ctype for w in _NUMERIC) or (self.engine == "sqlite" and ctype in ("", "INTEGER")):
                    top = self.con.execute(f"SELECT max({quote(col)}) FROM {rel}").fetchone()[0]
                    values[col] = (top or 0) + 1
                else:
                    count = self.con.execute(f"SELECT count(*) FROM {rel}").fetchone()[0]
                    own = self.con.execute(f"SELECT {quote(col)} FROM {rel} WHERE rowid = ?", [rowid]).fetchone()
                    values[col] = f"{own[0] if own else ''}#{count}"
            cols = list(t.columns)
            exprs = [(f"CAST(? AS {t.columns[c]})" if self.engine == "duckdb" and t.columns[c] else "?")
                     if c in values else quote(c) for c in cols]
            params = [values[c] for c in cols if c in values]
            self.con.execute(f"INSERT INTO {rel} ({', '.join(quote(c) for c in cols)}) SELECT {', '.join(exprs)} "
                             f"FROM {rel} WHERE rowid = {int(rowid)}", params)
            anchor = fresh[0] if fresh else next(iter(given), None)
            if anchor is not None:
                cast = f"CAST(? AS {t.columns[anchor]})" if self.engine == "duckdb" and t.columns[anchor] else "?"
                new = self.con.execute(f"SELECT rowid FROM {rel} WHERE {quote(anchor)} = {cast}",
                                       [values[anchor]]).fetchall()
                self.rows.setdefault(table, set()).update(r[0] for r in new)
        except Exception:  # a constraint the engine checks refused it: no witness
            return None
        for d, (child, child_col, child_row) in zip(totals, children):
            if self.clone(child, child_row, {child_col: values[d.child_columns[0]]}, depth + 1,
                          frozenset({child_col})) is None:
                self._undo(table, fresh[0], values[fresh[0]])  # the total dependency would break
                return None
        return values

    def _new_keys_by(self, t: Any, rowid: int, moved: dict[str, Any]) -> frozenset[str]:
        """The moved columns every key of ``t`` holding them is new with (no row of the variant
        has the copy's values in it): such a key needs no fresh value. A teaches row moved to
        another course keeps its semester (Spider's ``(instr_id, course_id, semester)``); a
        fresh semester would fail the gold's ``semester = '2020F'``."""
        from .constraints import qualified, quote
        touched = [k for k in t.keys if set(k) & set(moved)]
        if not touched or any(moved[c] is None for k in touched for c in k if c in moved):
            return frozenset()
        rel = qualified(t.name, self.engine)
        new: set[tuple[str, ...]] = set()
        kept = sorted({c for k in touched for c in k} - set(moved))  # the source's values, read once
        try:
            own = dict(zip(kept, self.con.execute(f"SELECT {', '.join(quote(c) for c in kept)} FROM {rel} WHERE "
                                                  f"rowid = {int(rowid)}").fetchone() or ())) if kept else {}
            for key in touched:
                values = [moved[c] if c in moved else own.get(c) for c in key]
                if None not in values and not self.con.execute(
                        f"SELECT 1 FROM {rel} WHERE {' AND '.join(f'{quote(c)} = ?' for c in key)} LIMIT 1",
                        values).fetchall():
                    new.add(key)
        except Exception:  # a form this engine refuses: fresh values as before
            return frozenset()
        return frozenset(c for c in moved if any(c in k for k in touched)
                         and all(k in new for k in touched if c in k))

    def _undo(self, table: str, anchor: str, value: Any) -> None:
        from .constraints import qualified, quote
        t = self.tables[table]
        cast = f"CAST(? AS {t.columns[anchor]})" if self.engine == "duckdb" and t.columns[anchor] else "?"
        self.con.execute(f"DELETE FROM {qualified(table, self.engine)} WHERE {quote(anchor)} = {cast}", [value])


def _salt_of(turn: int) -> int:
    """Spread over the modulus: adding it rotates the scrambled ids, so which row comes first
    changes with the turn (a small one would leave row id 0 first in every variant)."""
    return (turn * 2246822519 + 1013904223) % 4294967291


def _show(value: Any) -> str:
    return f"'{value}'" if isinstance(value, str) else str(value)


__all__ = ["CloneWitness", "CloneWriter", "clone_witnesses", "gold_digest"]
