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
from typing import Any

from .memo import LastOne

MAX_GROUP_CLONES = 100  # rows added to push one group to a HAVING bound, at most
MAX_CLONE_WITNESSES = 40  # per SELECT of a gold
MAX_SENTENCES = 6  # per gold and variant, in the record
MAX_LIMIT_ROWS = 160  # new paths added to lift a gold past its LIMIT, at most
MAX_IMPORT_ROWS = 96  # rows of a pinned path (and the rows they reference) copied into a variant that has none (an item brings ~20: its class, category and manager ids are items, its id a customer's, ...)
MAX_IMPORT_DEPTH = 96  # references followed from a path's row (each level copies a row, so the rows bound it too: a customer's address id is another customer's id, whose address ...)
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
    spread: int = 1  # written into every spread-th variant (new-row kinds: NEW_ROW_SPREAD, within the disk budget)
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

    from .witnesses import Catalog, parsed_golds
    names = Catalog({t: set(c.columns) for t, c in tables.items()})
    deps = [d for d in every if d.origin != "total" and len(d.child_columns) == 1]
    out: list[CloneWitness] = []
    for sql, tree in parsed_golds(gold_sqls, dialect):
        digest = gold_digest(sql)
        for select in tree.find_all(exp.Select):
            try:
                found = _select_witnesses(select, names, tables, deps, dialect, digest, every, select is tree)
            except Exception:  # an odd tree: no clone witness for this SELECT
                continue
            out += [w for w in found if w not in out]
    return out


def _select_witnesses(select: Any, names: Any, tables: dict[str, Any], deps: list[Any], dialect: str,
                      digest: str, every: list[Any], top: bool = False) -> list[CloneWitness]:
    from sqlglot import exp

    from .witnesses import resolve_column, select_sources, split_terms
    sources = select_sources(select, names)
    joins = select.args.get("joins") or []
    if not sources or any(j.args.get("using") or j.side or j.kind not in ("", None, "INNER", "CROSS")
                          for j in joins):
        return []
    if len(sources) != 1 + len(joins) or select.args.get("from_", select.args.get("from")) is None:
        return []  # a derived table in FROM: its rows are not a table's
    conjuncts: list[Any] = []
    where = select.args.get("where")
    if where is not None:
        conjuncts += split_terms(where.this, exp.And)
    for j in joins:
        if j.args.get("on") is not None:
            conjuncts += split_terms(j.args["on"], exp.And)

    def own_columns(node: Any) -> list[Any]:
        return [c for c in node.find_all(exp.Column) if c.find_ancestor(exp.Select) is select]

    def aliases_of(node: Any) -> set[str] | None:
        out = set()
        for col in own_columns(node):
            key = resolve_column(col, sources, names.lower)
            if key is None:
                return None  # an outer query's column, or an ambiguous one
            out.add(key[0])
        return out

    alias_sets = [aliases_of(c) for c in conjuncts]
    if any(a is None for a in alias_sets):
        return []
    table_of = {a: names.originals[t] for a, t in sources.items()}
    edges: list[tuple[str, str, str, str, int]] = []  # child alias, child col, parent alias, parent col, conjunct
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
        return []
    fact = sinks[0]
    # the path's references count as dependencies where nothing declared or observed backs
    # them (TPC-DS's ``ss_item_sk = i_item_sk``: no foreign key, no name the observer links):
    # a clone keeps them pointing at rows that exist, and never gives them a fresh value
    from .constraints import Dependency
    links = tuple(dict.fromkeys(Dependency(table_of[ca], (cc,), table_of[pa], (pc,), "gold")
                                for ca, cc, pa, pc, _ in edges))
    every = every + list(links)
    if fresh_columns(tables[table_of[fact]], deps_columns(every, table_of[fact])) is None:
        return []
    out: list[CloneWitness] = []
    base_from = select.copy()
    for arg in ("group", "having", "order", "limit", "offset", "qualify", "distinct", "windows", "where"):
        base_from.set(arg, None)
    for j in base_from.args.get("joins") or []:
        j.set("on", None)
        j.set("kind", "CROSS")
    path = ", ".join(sorted({table_of[a].rsplit(".", 1)[-1] for a in sources if a != fact}))
    through = f" joined through {path}" if path else ""
    fact_name = table_of[fact].rsplit(".", 1)[-1]

    def query(extra_tables: list[tuple[str, str]], filters: list[Any], columns: list[tuple[Any, str]],
              order: list[Any], limit: bool = True) -> str:
        q = base_from.copy()
        for table, alias in extra_tables:
            q = q.join(exp.Table(this=exp.to_identifier(table.rsplit(".", 1)[-1]),
                                 db=exp.to_identifier(table.split(".", 1)[0]) if "." in table else None,
                                 alias=exp.TableAlias(this=exp.to_identifier(alias))), join_type="cross")
        q.set("expressions", [exp.alias_(exp.column("rowid", table=fact), "w0")]
              + [exp.alias_(e, name) for e, name in columns])
        if filters:
            q.set("where", exp.Where(this=exp.and_(*[f.copy() for f in filters])))
        if limit:
            q.set("order", exp.Order(expressions=order + [exp.Ordered(this=turned_rowid(exp.column("w0")))]))
            q.set("limit", exp.Limit(expression=exp.Literal.number(1)))
        return str(q.sql(dialect=dialect))

    # a copy of a row that reaches the output
    out.append(CloneWitness(digest, table_of[fact], query([], conjuncts, [], []), (), (),
                            f"a copy of a {fact_name} row that reaches the output{through}"))
    out += _unjoined_witnesses(edges, fact, fact_name, through, table_of, tables, conjuncts, digest, query)
    out += _limit_witnesses(select, top, conjuncts, edges, fact, fact_name, through, table_of, tables, every, dialect,
                            digest, query, lambda c: resolve_column(c, sources, names.lower), sorted(sources))
    out += _having_witnesses(select, conjuncts, fact, fact_name, through, base_from, dialect, digest,
                             table_of[fact], query, resolve=lambda c: resolve_column(c, sources, names.lower),
                             free=set(tables[table_of[fact]].free))
    first_new = len(out)
    out += _new_parent_witnesses(conjuncts, alias_sets, edges, fact, fact_name, through, table_of, tables,
                                 every, dialect, digest, query, lambda c: resolve_column(c, sources, names.lower))
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
    out[first_new:] = [replace(w, spread=NEW_ROW_SPREAD) for w in out[first_new:]]
    out = [replace(w, links=links) for w in out[:MAX_CLONE_WITNESSES]]
    # per edge from the fact, per filter on the tables reached through it: a moved clone
    for ca, cc, pa, pc, edge_i in [e for e in edges if e[0] == fact]:
        subtree = _reached(pa, edges)
        copy = {a: f"{a}__w" for a in subtree}

        def renamed(node: Any) -> Any:
            def swap(n: Any) -> Any:
                if isinstance(n, exp.Column) and n.find_ancestor(exp.Select) is None:
                    key = resolve_column(n, sources, names.lower)
                    if key is not None and key[0] in copy:
                        return exp.column(key[1], table=copy[key[0]])
                return n
            return node.copy().transform(swap)

        touching = [i for i, a in enumerate(alias_sets) if a and a & subtree and i != edge_i]
        targets = [i for i in touching if len(alias_sets[i] or ()) == 1 and not conjuncts[i].find(exp.Select)
                   and not (isinstance(conjuncts[i], exp.EQ) and isinstance(conjuncts[i].expression, exp.Column))]
        extra = [(table_of[a], copy[a]) for a in sorted(subtree)]
        for i in targets:
            target = conjuncts[i]
            (alias,) = alias_sets[i] or {""}
            shown_cols = [c for c in dict.fromkeys(c.name for c in own_columns(target))][:2]
            shown = tuple(f"{table_of[alias].rsplit('.', 1)[-1]}.{c}" for c in shown_cols)
            cols = [(exp.column(pc, table=copy[pa]), "r0")] + [
                (exp.column(c, table=copy[alias]), f"v{k}") for k, c in enumerate(shown_cols)]
            kept = [renamed(conjuncts[k]) for k in touching if k != i]
            rendered = " ".join(target.sql(dialect=dialect).split())
            for cond, order, how in _edges_of(renamed(target), target, dialect):
                filters = conjuncts + kept + [cond]
                out.append(CloneWitness(
                    digest, table_of[fact], query(extra, filters, cols, order), (cc,), shown,
                    f"a {fact_name} row{through}, moved to {{shown}} ({how} `{rendered}`)", links=links))
                if len(out) >= MAX_CLONE_WITNESSES:
                    return out
    return out[:MAX_CLONE_WITNESSES]


def _unjoined_witnesses(edges: list[tuple[str, str, str, str, int]], fact: str, fact_name: str, through: str,
                        table_of: dict[str, str], tables: dict[str, Any], conjuncts: list[Any], digest: str,
                        query: Callable[..., str]) -> list[CloneWitness]:
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
            digest, table_of[fact], query([], conjuncts, [(exp.Null(), "r0")], []), (cc,), (),
            f"a copy of a {fact_name} row that reaches the output{through}, its {cc} NULL (joined to no "
            f"{pname} row)"))
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
                          resolve: Callable[[Any], tuple[str, str] | None]) -> list[CloneWitness]:
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
            for moved_cond, order, how in _edges_of(renamed(cond), cond, dialect):
                cols_out = [(exp.column("rowid", table=pa), "p0"), (exp.column(column, table=other), "r0"),
                            (exp.column(column, table=other), "v0")]
                out.append(CloneWitness(
                    digest, table_of[fact], query([(parent.name, other)], conjuncts + [moved_cond], cols_out, order),
                    (column,), (f"{pname}.{column}",),
                    f"a new {pname} row with {{shown}} ({how} `{rendered}`) joined by a new {fact_name} row{through}",
                    parent=link))
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
    return out


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


def _edges_of(cond: Any, original: Any, dialect: str) -> list[tuple[Any, list[Any], str]]:
    """(condition, ORDER BY, how) of each moved witness of a filter conjunct: failing it
    (the nearest failing value first for a comparison with a constant) and, for a range,
    passing it at its edge."""
    from sqlglot import exp
    col = cond.this if isinstance(cond, (exp.Between, exp.In, exp.Like, exp.ILike)) else None
    if type(cond) in (exp.LT, exp.LTE, exp.GT, exp.GTE, exp.EQ) and isinstance(cond.this, exp.Column) \
            and not cond.expression.find(exp.Column):
        col = cond.this

    def asc(c: Any) -> list[Any]:
        return [exp.Ordered(this=c.copy())]

    def desc(c: Any) -> list[Any]:
        return [exp.Ordered(this=c.copy(), desc=True)]

    fails: tuple[Any, list[Any], str] = (exp.not_(cond.copy()), [], "fails only")
    if col is None or not isinstance(col, exp.Column):
        return [fails]
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


def _having_witnesses(select: Any, conjuncts: list[Any], fact: str, fact_name: str, through: str, base_from: Any,
                      dialect: str, digest: str, table: str, query: Callable[..., str], *,
                      resolve: Callable[[Any], tuple[str, str] | None] | None = None,
                      free: set[str] | None = None) -> list[CloneWitness]:
    """Per ``HAVING count(*) op b`` (or ``count(column)``), a group pushed to ``b + 1``, ``b``
    and ``b - 1`` rows (in that order, so a later push never takes an earlier one's group).
    Per ``HAVING sum(x) op b`` or ``avg(x) op b`` over a free fact column: one clone of a
    group's row whose ``x`` brings the group to exactly ``b`` and to the values beside it,
    written only when that ``x`` lies between the column's least and greatest value."""
    from sqlglot import exp

    from .witnesses import split_terms
    having, group = select.args.get("having"), select.args.get("group")
    if having is None or group is None:
        return []
    keys = []
    aliases = {e.alias: e.unalias() for e in select.expressions if e.alias}
    for g in group.expressions:
        if isinstance(g, exp.Literal) and not g.is_string and g.this.isdigit():
            keys.append(select.expressions[int(g.this) - 1].unalias())
        elif isinstance(g, exp.Column) and not g.table and g.name in aliases:
            keys.append(aliases[g.name])
        else:
            keys.append(g)
    out = []
    ops = {exp.GT: ">", exp.GTE: ">=", exp.LT: "<", exp.LTE: "<=", exp.EQ: "="}
    for cond in split_terms(having.this, exp.And):
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
                        f"{turned_rowid(exp.column('w0')).sql(dialect=dialect)} LIMIT 1")
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
            steps = (f"CAST(gap * 1.0 / top - 0.000001 AS INTEGER)" if dialect == "sqlite"
                     else "CAST(floor(gap / top - 0.000001) AS BIGINT)")
            rows_sql = (f"SELECT w0, need, top AS r0, gap - need * top AS r1, gap - need * top AS v0{keys_out} "
                        f"FROM (SELECT *, {steps} AS need FROM (SELECT w0, {target} - s AS gap, {high} AS top, "
                        f"{low} AS bottom{keys_out} FROM ({inner}) AS grouped WHERE s IS NOT NULL) AS gaps "
                        f"WHERE gap > 0 AND top > 0) AS steps WHERE need >= 0 AND need < {MAX_GROUP_CLONES} "
                        f"AND gap - need * top BETWEEN bottom AND top ORDER BY need, {turned} LIMIT 1")
            what = (f"{{need}} copies of a {fact_name} row{through} at its greatest {column} and one with {{shown}} "
                    f"bring its group's sum to exactly {target} (the gold's HAVING `{rendered}`)")
        else:
            value = f"({target} * (n + 1) - s)"
            rows_sql = (f"SELECT w0, 0 AS need, {value} AS r0, {value} AS r1, {value} AS v0{keys_out} "
                        f"FROM ({inner}) AS grouped WHERE s IS NOT NULL AND {value} BETWEEN {low} AND {high} "
                        f"ORDER BY {turned} LIMIT 1")
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
    keys = [k for k in [t.primary_key, *t.unique_keys, *[(c,) for c in t.observed_unique]] if k]
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
        self.links: list[Any] = []  # the witness being written's gold-implied references
        # a key column that only observed references bind (TPC-DS's encoded ids: every ``c_customer_id`` is a
        # ``t_time_id`` too) gets a value every referenced column holds and the table does not (``shared``),
        # where no other key column could be fresh; set by ``outputs``, whose new customers need one
        self.shared_keys = False

    def write(self, w: CloneWitness, turn: int = 0) -> bool:
        """Clone the row ``w.rows_sql`` picks on this variant; ``turn`` (the variant's index)
        scrambles which of the qualifying rows that is."""
        self.links = list(w.links)
        try:
            found = self.bounded(w.rows_sql, [_salt_of(turn)])
        except Exception:  # too slow, or a form this engine refuses: no witness here
            return False
        if not found and w.limit:
            found = self._import_path(w, turn)
        if not found:
            return False
        row = found[0]
        if w.limit:
            return self._fill(w, row)
        parent_moved: dict[str, Any] = {}
        moved: dict[str, Any]
        if w.filled:
            need = int(row[1])
            if need < 0 or need >= MAX_GROUP_CLONES:
                return False
            for _ in range(need):
                if self.clone(w.table, int(row[0]), {w.moved[0]: row[2]}) is None:
                    return False
            need, moved, shown_values = 1, {w.moved[0]: row[3]}, row[4:]
        elif w.grouped:
            need, shown_values, moved = int(row[1]), row[2:], {}
        elif w.parent is not None:
            need, moved = 1, {}
            parent_moved = dict(zip(w.moved, row[2:2 + len(w.moved)]))
            shown_values = row[2 + len(w.moved):]
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
            made = self.clone(table, int(row[1]), parent_moved)
            if made is None or key not in made:
                return False
            moved[column] = made[key]
        for _ in range(need):
            if self.clone(w.table, int(row[0]), moved) is None:
                return False
        shown = ", ".join(f"{n} = {_show(v)}" for n, v in zip(w.shown, shown_values))
        sentence = w.what.replace("{shown}", shown or "another row").replace("{need}", str(row[1] if w.filled else need))
        kept = self.sentences.setdefault(w.gold, [])
        if len(kept) < MAX_SENTENCES:
            kept.append(sentence)
        return True

    def _fill(self, w: CloneWitness, row: tuple[Any, ...]) -> bool:
        """A LIMIT witness: new paths (a copy of the reaching fact row ``w0``, through a copy of
        its parent ``p0`` with a fresh key and fresh values in ``w.renamed``: a new group)
        until the gold, its LIMIT left off, has ``w.limit + 1`` rows on this variant."""
        from .constraints import qualified, quote
        try:
            have = int(self.bounded(w.count_sql, [])[0][0])
        except Exception:  # too slow, or a form this engine refuses
            return False
        need = w.limit + 1 - have
        if need < 1 or need > MAX_LIMIT_ROWS:
            return False  # LIMIT n - 1, n and n + 1 differ here already, or too many rows to add
        for table, rowid in zip(w.path, row[2:]):
            self.rows.setdefault(table, set()).add(int(rowid))
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
        added: list[tuple[str, int]] = []
        try:
            before = int(self.bounded(w.count_sql, [])[0][0])
            for table, pinned_rowid in sorted(path, key=lambda p: order.index(p[0])):
                if self._import_row(table, int(pinned_rowid), added, MAX_IMPORT_ROWS) is None:
                    raise LookupError(table)
            if not self._kept(added) or int(self.bounded(w.count_sql, [])[0][0]) <= before:
                raise LookupError("no new output row")
            again = self.bounded(w.rows_sql, [_salt_of(turn)])
            if not again:
                raise LookupError("no path")
        except Exception:  # a row the engine refuses, a dependency broken, or no new row: nothing copied
            self._remove(added)
            return []
        for table, rowid in added:
            self.rows.setdefault(table, set()).add(rowid)
        return again

    def parents_first(self, tables: list[str]) -> list[str]:
        """``_parents_first``, for ``outputs``."""
        return self._parents_first(tables)

    def import_row(self, table: str, pinned_rowid: int, added: list[tuple[str, int]]) -> int | None:
        """``_import_row`` within ``MAX_IMPORT_ROWS``, for ``outputs``."""
        return self._import_row(table, pinned_rowid, added, MAX_IMPORT_ROWS)

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
                    depth: int = 0, pending: frozenset[tuple[str, int]] = frozenset()) -> int | None:
        """The variant's row id of pinned row ``pinned_rowid`` of ``table``: the variant's own
        when it holds the same row, else a copy inserted after the rows it references (copied
        the same way, at most ``budget`` rows in all); None when it cannot be (a key value
        the variant gives another row, or too many rows). ``pending``: the rows being copied
        in above this one; a reference to one of them holds once they are (a cycle of
        references within a table: ``_kept`` checks every dependency after)."""
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
            if same(key):
                whole = same([c for c in cols if row[c] is not None])
                return int(whole[0][0]) if whole else None  # the key is another row's here
        whole = [] if keys else same([c for c in cols if row[c] is not None])
        if whole:
            return int(whole[0][0])  # a key-less table holding this row already: a copy would duplicate it
        if len(added) >= budget or depth > MAX_IMPORT_DEPTH:
            return None
        for d in self.deps + [d for d in self.links if len(d.child_columns) == 1]:
            if d.child != table or row.get(d.child_columns[0]) is None:
                continue
            parent = self.tables[d.parent]
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
            + (f" AND {where}" if where else "") + " ORDER BY v LIMIT 1", [])
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
              given: frozenset[str] = frozenset()) -> dict[str, Any] | None:
        """Insert a copy of row ``rowid`` with fresh key values and ``moved`` values; the
        values written (the fresh keys among them), or None when nothing was written. A fresh
        key every value of which some child row uses (a total dependency) gets a copy of one
        of the source's child rows, moved onto it (at most two levels down)."""
        from .constraints import qualified, quote
        t = self.tables[table]
        linked = deps_columns(self.all_deps + self.links, table)
        fresh = fresh_columns(t, linked, set(given))
        shared = sharable(t, self.all_deps + self.links) if fresh is None and self.shared_keys else {}
        if shared:
            fresh = fresh_columns(t, linked - set(shared), set(given))
        if fresh is None:
            return None
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
