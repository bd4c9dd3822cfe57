"""Witness rows: rows of a variant moved into a gold's filter, at its edges.

A wrong bound in a filter of six conjuncts (``p_size BETWEEN 1 AND 4`` for ``BETWEEN 1
AND 5`` next to a brand, three containers, a quantity range, two ship modes) shows only
on a row that passes the other five *and* sits between the two bounds; on a pinned
database whose filter keeps one row, no such row exists, and rows changed at random
almost never become one. Test-suite accuracy (Zhong, Yu & Klein, 2020) finds them by
fuzzing small databases; here they are written directly.

For every SELECT of a gold that filters on columns: its WHERE is split into disjuncts
(a top-level OR) and each disjunct into conjuncts. A conjunct that compares a *free*
column (in no key, no dependency, not frozen: see ``constraints``) with a constant
(``=``, ``<``, ``<=``, ``>``, ``>=``, ``BETWEEN``, ``IN``; constants folded, so ``20 +
10`` is 30 and a date plus an interval a date) is *written*; every other conjunct (a
join condition, a function of a column, a comparison with a key) stays a filter; where
it reads a written column (``l_commitdate < l_receiptdate``), it reads the value written
instead, so the row tuple found passes it once written.
Each disjunct gives a *base* assignment (every written column at a value that passes
all of its conjuncts) and one assignment per edge value of one column: the bound itself,
the value one unit past it (an integer +-1, a decimal one unit of its last place, a date
one day, a timestamp one second, also one written as ISO text) and each IN member, the other columns at the base. Each assignment is written
into one distinct row tuple of the same FROM under the filter conjuncts, so the row
passes the disjunct or misses it by one edge; a near-miss that moves that edge counts
it differently. Values outside the column's domain on the pinned database are never
written (see ``boundaries.Domain``).

A conjunct that compares a free column with an uncorrelated scalar subquery (``c_acctbal >
(SELECT avg(c_acctbal) FROM customer WHERE ...)``, common in Spider) is written too: its
bound is a ``Threshold``, the subquery's value on the variant, measured when the row is
written (and again after, as the row may feed the subquery itself), and the row is given
the grid value just past it or just short of it. A near-miss that moves the subquery (a
literal in its filter, a dropped predicate) moves the threshold across one of them."""
from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

import re

MAX_ASSIGNMENTS = 48
CODE_DOMAIN_VALUES = 100  # a number with at most this many distinct pinned values, ...
CODE_REPEATS = 4  # ... each held by this many rows on average, keeps its range (boundaries.Domain), as does a year  # per disjunct: the base and the edge values, in order


_ISO = re.compile(r"\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?)?")


@dataclass(frozen=True)
class Threshold:
    """A bound that is a scalar subquery's value, known only on a variant's data. ``to`` is
    where the written value lies against it on the column's grid: ``above`` (the least
    value greater), ``at_or_above``, ``below``, ``at_or_below`` or ``at`` (the value itself)."""

    sql: str  # SELECT of one value; a correlated one fails on its own and gives no witness
    to: str


# column OP threshold: the value that passes, then the ones that miss it by one unit
_THRESHOLD_EDGES = {">": ("above", "at_or_below"), ">=": ("at_or_above", "below"), "<": ("below", "at_or_above"),
                    "<=": ("at_or_below", "above"), "=": ("at", "below", "above")}


@dataclass(frozen=True)
class WitnessGroup:
    """One disjunct's witnesses: per assignment, the query for the row tuples it may be
    written into (``SELECT <alias>.rowid AS w0, ... FROM <the SELECT's FROM> WHERE <the
    filter conjuncts, reading the assigned values>``) and the assignment."""

    tables: tuple[str, ...]  # the table of w0, w1, ...
    # (rows query, ((position, column, value as text or a Threshold), ...)), ...
    witnesses: tuple[tuple[str, tuple[tuple[int, str, "str | Threshold"], ...]], ...]


_PARSED: dict[tuple[str, str], Any] = {}  # (sql, dialect) -> its tree, None: it does not parse
_PARSED_MAX = 4096  # trees kept, at most (a Spider run's golds)


_IDENTIFYING = re.compile(r"(^|_)(id|ids|key|code|no|num|number|nr|sk|uuid|guid|email|mail|name|title|login|"
                          r"username|url|slug|phone|isbn|ssn|iban|sku|iata|icao|tail)$|(id|key|code|name)$")


def unique_by_chance(t: Any, column: str) -> bool:
    """An attribute unique on the pinned data only because the sample is small (each of 8
    departments in its own building, six airlines founded in six years, every route of its
    own length): observed, not declared, in a table whose identity is declared (its primary
    key or a UNIQUE), and not named like an identifier or a name (a correct query may rely
    on names being unique: ``DISTINCT c.name`` for customers ``IN`` a list). The observer
    counts it a key, so no rule wrote it and every filter on it coincided on small
    Spider-style tables; a witness (``writable``) or a separating copy may give it a value
    another row holds. Whether it is in a dependency is the caller's to check.

    Why a name decides the rest: the declared keys and the observed uniqueness are already
    read, and past them the data cannot tell. An undeclared natural key (a code, an e-mail)
    and an attribute unique by chance are both unique on every pinned row; what differs is
    the author's intent, and the column's name is the one trace of it the schema keeps.
    The two mistakes do not cost alike: a key taken for chance would get a duplicate and
    fail a correct query relying on it (a false fail), chance taken for a key only keeps
    that column's witnesses out, so a doubtful name (``_IDENTIFYING``) counts as a key."""
    return column in t.observed_unique and bool(t.primary_key or t.unique_keys) \
        and column not in t.primary_key and not any(column in k for k in t.unique_keys) \
        and not _IDENTIFYING.search(column.lower())


def writable(t: Any, column: str, dependencies: Iterable[Any]) -> bool:
    """Whether a witness row may be given a value in ``column``: a free column, or one unique
    only by chance that no dependency names."""
    if column in t.free:
        return True
    return unique_by_chance(t, column) and not any(
        (d.child == t.name and column in d.child_columns) or (d.parent == t.name and column in d.parent_columns)
        for d in dependencies)


def parsed_golds(gold_sqls: Iterable[str], dialect: str) -> Iterator[tuple[str, Any]]:
    """(sql, tree) of each gold that parses. A gold that does not parse has no witnesses,
    ties, joins or groups: it is skipped here, and the grader reports it as the case's error.
    Each gold is parsed once per process and each caller gets its own copy (a build asks
    about ten times per gold: the hints, witnesses, ties, clones, groups, separators, output
    paths; a copy costs a fifth of a parse)."""
    from sqlglot import parse_one
    for sql in gold_sqls:
        key = (sql, dialect)
        if key not in _PARSED:
            if len(_PARSED) >= _PARSED_MAX:
                _PARSED.clear()
            try:
                _PARSED[key] = parse_one(sql, read=dialect)
            except Exception:  # sqlglot raises several kinds; any of them means "no tree"
                _PARSED[key] = None
        tree = _PARSED[key]
        if tree is not None:
            yield sql, tree.copy()


def with_key() -> str:
    """The name of a query's WITH among its args: ``with_`` since sqlglot renamed it (30.x),
    ``with`` before. Asked, never spelled: ``args.get("with")`` is None on 30.x whatever
    the query holds."""
    from sqlglot import exp
    return "with_" if "with_" in exp.Select.arg_types else "with"


def with_of(node: Any) -> Any:
    """``node``'s WITH, or None (``with_key``)."""
    return node.args.get(with_key())


def witness_groups(gold_sqls: Iterable[str], dialect: str, columns: dict[str, set[str]],
                   free: Callable[[str, str], bool]) -> list[WitnessGroup]:
    """The witness groups of every gold; ``columns`` is table -> column names, ``free``
    says whether a (table, column) may change."""
    from sqlglot import exp
    names = Catalog(columns)
    out: list[WitnessGroup] = []
    for _, tree in parsed_golds(gold_sqls, dialect):
        for select in tree.find_all(exp.Select):
            where = select.args.get("where")
            sources = select_sources(select, names)
            if where is None or not sources:
                continue
            for disjunct in split_terms(where.this, exp.Or):
                group = _group(select, disjunct, sources, names, free, dialect, with_of(tree),
                               with_key())
                if group is not None and group not in out:
                    out.append(group)
    return out


class Catalog:
    """A database's table and column names, looked up case-insensitively (DuckDB's
    tables are ``schema.table``; a query may name them bare)."""

    def __init__(self, columns: dict[str, set[str]]) -> None:
        self.lower = {t.lower(): {c.lower(): c for c in cs} for t, cs in columns.items()}
        self.originals = {t.lower(): t for t in columns}
        self.bare = {t.rsplit(".", 1)[-1]: t for t in self.lower}

    def table(self, name: str) -> str:
        """The lower-case catalog name of a (possibly bare) lower-case table name."""
        return self.bare.get(name, name)


def from_items(select: Any) -> list[Any]:
    """What this SELECT's FROM and joins read, in order: tables, derived tables, ..."""
    from_ = select.args.get("from_") or select.args.get("from")
    return ([from_.this] if from_ is not None else []) + [j.this for j in select.args.get("joins") or []]


def select_sources(select: Any, names: Catalog) -> dict[str, str]:
    """alias -> lower-case table name of the tables this SELECT reads directly."""
    from sqlglot import exp
    out = {}
    for node in from_items(select):
        if isinstance(node, exp.Table):
            name = names.table(".".join(p for p in (node.db, node.name) if p).lower())
            if name in names.lower:
                out[node.alias_or_name.lower()] = name
    return out


def split_terms(node: Any, kind: type[Any]) -> list[Any]:
    from sqlglot import exp
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, kind):
        return split_terms(node.left, kind) + split_terms(node.right, kind)
    return [node]


def conjuncts_of(node: Any) -> list[Any]:
    """``node``'s AND terms, and after each OR among them the terms every one of its disjuncts
    holds (the first disjunct's nodes): TPC-DS q13 repeats ``cd_demo_sk = ss_cdemo_sk`` in each
    AND-group of an OR, a join of the whole SELECT that no top-level term states."""
    from sqlglot import exp
    out: list[Any] = []
    for term in split_terms(node, exp.And):
        out.append(term)
        groups = [split_terms(d, exp.And) for d in split_terms(term, exp.Or)] if isinstance(term, exp.Or) else []
        if len(groups) > 1:
            rest = [{t.sql() for t in g} for g in groups[1:]]
            out += [t for t in groups[0] if all(t.sql() in r for r in rest)]
    return out


def _group(select: Any, disjunct: Any, sources: dict[str, str], names: Catalog,
           free: Callable[[str, str], bool], dialect: str, root_with: Any,
           with_key: str) -> WitnessGroup | None:
    from sqlglot import exp
    written: dict[tuple[str, str], list[tuple[str, Any]]] = {}  # (alias, column) -> (op, typed value)
    kept = []
    thresholds: dict[tuple[str, str], tuple[Any, str, str]] = {}  # (alias, column) -> (conjunct, op, subquery)
    for conjunct in split_terms(disjunct, exp.And):
        bounds = _bounds(conjunct, sources, names, free, dialect)
        if bounds is None:
            kept.append(conjunct)
        elif isinstance(bounds, tuple):
            alias, column, op, sql = bounds
            if (alias, column) in thresholds:
                kept.append(conjunct)
            else:
                thresholds[(alias, column)] = (conjunct, op, sql)
        else:
            for alias, column, op, value in bounds:
                written.setdefault((alias, column), []).append((op, value))
    for key in [k for k in thresholds if k in written]:  # a column bounded by constants too: those are written
        kept.append(thresholds.pop(key)[0])
    if not written and not thresholds:
        return None
    base: dict[tuple[str, str], Any] = {}
    edges: list[tuple[tuple[str, str], Any]] = []
    for key, (_, op, sql) in thresholds.items():
        passing, *missing = _THRESHOLD_EDGES[op]
        base[key] = Threshold(sql, passing)
        edges += [(key, Threshold(sql, to)) for to in missing]
    for key, conds in written.items():
        candidates = _edge_values(conds)
        inside = [v for v in candidates if _passes(v, conds)]
        if not inside:
            return None  # contradictory conjuncts: nothing passes this disjunct
        base[key] = inside[0]
        edges += [(key, v) for v in candidates if v != inside[0]]
    aliases = sorted({alias for alias, _ in base})
    position = {alias: i for i, alias in enumerate(aliases)}
    template = select.copy()
    for arg in ("group", "having", "order", "limit", "offset", "qualify", "distinct", "windows", with_key):
        template.set(arg, None)
    template.set("expressions", [exp.alias_(exp.column("rowid", table=a), f"w{i}") for i, a in enumerate(aliases)])
    if root_with is not None:
        template.set(with_key, root_with.copy())

    def witness(changed: dict[tuple[str, str], Any]) -> tuple[str, tuple[tuple[int, str, str], ...]]:
        values = {**base, **changed}

        def substitute(node: Any) -> Any:  # a written column read by a kept conjunct reads its new value
            own = isinstance(node, exp.Column) and node.find_ancestor(exp.Select) is None  # not a subquery's
            key = resolve_column(node, sources, names.lower) if own else None
            return _literal(values[key]) if key in values and not isinstance(values[key], Threshold) else node

        rows = template.copy()
        filters = [k.copy().transform(substitute) for k in kept]
        rows.set("where", exp.Where(this=exp.and_(*filters)) if filters else None)
        return rows.sql(dialect=dialect), tuple((position[a], c, _text(v)) for (a, c), v in sorted(values.items()))

    witnesses = [witness({})] + [witness({key: v}) for key, v in edges]
    return WitnessGroup(tuple(names.originals[sources[a]] for a in aliases), tuple(dict.fromkeys(witnesses))[:MAX_ASSIGNMENTS])


def _literal(value: Any) -> Any:
    from sqlglot import exp
    if isinstance(value, dt.datetime):
        return exp.cast(exp.Literal.string(_text(value)), "TIMESTAMP")
    if isinstance(value, dt.date):
        return exp.cast(exp.Literal.string(value.isoformat()), "DATE")
    return exp.Literal.number(_text(value)) if isinstance(value, Decimal) else exp.Literal.string(value)


_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "="}


def _bounds(conjunct: Any, sources: dict[str, str], names: Catalog, free: Callable[[str, str], bool],
            dialect: str) -> list[tuple[str, str, str, Any]] | tuple[str, str, str, str] | None:
    """(alias, column, op, value) of each bound of a column-vs-constant conjunct on a free
    column; (alias, column, op, subquery SQL) of a column-vs-scalar-subquery one; else None."""
    from sqlglot import exp
    ops = {exp.EQ: "=", exp.LT: "<", exp.LTE: "<=", exp.GT: ">", exp.GTE: ">="}
    while isinstance(conjunct, exp.Paren):
        conjunct = conjunct.this
    if type(conjunct) in ops:
        op, left, right = ops[type(conjunct)], conjunct.this, conjunct.expression
        if not isinstance(left, exp.Column):
            op, left, right = _FLIP[op], right, left
        if isinstance(left, exp.Column) and isinstance(right, exp.Subquery) and isinstance(right.this, exp.Select) \
                and len(right.this.expressions) == 1:
            where = resolve_column(left, sources, names.lower)
            if where is None or not free(names.originals[sources[where[0]]], where[1]):
                return None
            return where[0], where[1], op, right.this.sql(dialect=dialect)
        pairs = [(op, right)]
    elif isinstance(conjunct, exp.Between):
        left, pairs = conjunct.this, [(">=", conjunct.args.get("low")), ("<=", conjunct.args.get("high"))]
    elif isinstance(conjunct, exp.In) and conjunct.expressions and not conjunct.args.get("query"):
        left, pairs = conjunct.this, [("in", e) for e in conjunct.expressions]
    else:
        return None
    where = resolve_column(left, sources, names.lower) if isinstance(left, exp.Column) else None
    if where is None or not free(names.originals[sources[where[0]]], where[1]):
        return None
    values = [(op, constant_value(node)) for op, node in pairs]
    if any(v is None for _, v in values):
        return None
    if any(op not in ("=", "in") and not isinstance(v, (Decimal, dt.date)) for op, v in values):
        return None  # an ordered comparison of text: its edges are not written
    if values[0][0] == "in":
        return [(where[0], where[1], "in", tuple(v for _, v in values))]
    return [(where[0], where[1], op, v) for op, v in values]


def group_keys(select: Any) -> list[Any]:
    """The GROUP BY expressions, an ordinal or an output alias read as the expression it names."""
    from sqlglot import exp
    group = select.args.get("group")
    aliases = {e.alias: e.unalias() for e in select.expressions if e.alias}
    keys = []
    for g in (group.expressions if group is not None else []):
        if isinstance(g, exp.Literal) and not g.is_string and g.this.isdigit() \
                and 0 < int(g.this) <= len(select.expressions):
            keys.append(select.expressions[int(g.this) - 1].unalias())
        elif isinstance(g, exp.Column) and not g.table and g.name in aliases:
            keys.append(aliases[g.name])
        else:
            keys.append(g)
    return keys


def band_terms(select: Any) -> list[Any]:
    """The conditions on ``select``'s groups, each one comparison: its HAVING's conjuncts and,
    where ``select`` is a derived table, its enclosing query's WHERE conjuncts that read only
    its aggregate outputs (TPC-DS's ``cnt BETWEEN 15 AND 20`` on ``(... count(*) cnt ... GROUP
    BY ss_ticket_number, ss_customer_sk) dn``), the alias read as the aggregate; a BETWEEN as
    its two bounds. A condition reading a window's output is none (TPC-DS q63's
    ``avg(sum(ss_sales_price)) OVER (PARTITION BY i_manager_id)``: a value over many groups)."""
    from sqlglot import exp
    terms = []
    having = select.args.get("having")
    if having is not None:
        terms += split_terms(having.this, exp.And)
    derived = select.parent
    outer = derived.find_ancestor(exp.Select) if isinstance(derived, exp.Subquery) and derived.alias else None
    aggregates = {e.alias: e.unalias() for e in select.expressions
                  if e.alias and e.unalias().find(exp.AggFunc) is not None and e.unalias().find(exp.Window) is None}
    if outer is not None and aggregates and outer.args.get("where") is not None:
        for cond in split_terms(outer.args["where"].this, exp.And):
            cols = [c for c in cond.find_all(exp.Column) if c.find_ancestor(exp.Select) is outer]
            if cond.find(exp.Select) is not None or not cols or any(
                    c.name not in aggregates or (c.table and c.table != derived.alias) for c in cols):
                continue
            terms.append(cond.copy().transform(
                lambda n: aggregates[n.name].copy() if isinstance(n, exp.Column) and n.name in aggregates else n))
    out = []
    for term in terms:
        if isinstance(term, exp.Between):
            out += [exp.GTE(this=term.this.copy(), expression=term.args["low"].copy()),
                    exp.LTE(this=term.this.copy(), expression=term.args["high"].copy())]
        else:
            out.append(term)
    return out


def band_windows(band: list[Any], keys: list[Any]) -> tuple[list[tuple[Any, str]], list[Any]] | None:
    """``band``'s aggregates as windows over the groups ``keys`` make (``a0_0``, ...: the
    columns of a query over the gold's rows) and its terms on those columns; None when a
    term has no aggregate or a DISTINCT one."""
    from sqlglot import exp
    windows, terms = [], []
    for i, cond in enumerate(band):
        term = cond.copy()
        aggs = list(term.find_all(exp.AggFunc))
        if not aggs or any(a.find(exp.Distinct) for a in aggs):
            return None
        for j, agg in enumerate(aggs):
            windows.append((exp.Window(this=agg.copy(), partition_by=[k.copy() for k in keys]), f"a{i}_{j}"))
            agg.replace(exp.column(f"a{i}_{j}"))
        terms.append(term)
    return windows, terms


def resolve_column(col: Any, sources: dict[str, str], catalog: dict[str, dict[str, str]]) -> tuple[str, str] | None:
    """(alias, column as the database spells it) of a column reference, if it is one of the sources'."""
    name = col.name.lower()
    if col.table:
        alias = col.table.lower()
        return (alias, catalog[sources[alias]][name]) if alias in sources and name in catalog[sources[alias]] else None
    owners = [a for a, t in sources.items() if name in catalog[t]]
    return (owners[0], catalog[sources[owners[0]]][name]) if len(owners) == 1 else None


def constant_value(node: Any) -> Any:
    """A folded constant as Decimal, date or str; None when it is not a constant."""
    from sqlglot import exp
    from sqlglot.optimizer.simplify import simplify
    if node is None or node.find(exp.Column) is not None:
        return None
    try:
        node = simplify(node.copy())
    except Exception:  # sqlglot could not fold it: not a constant we can write
        return None
    if isinstance(node, exp.Cast) and isinstance(node.this, exp.Literal):
        node = node.this
    if not isinstance(node, exp.Literal):
        return None
    if not node.is_string:
        try:
            return Decimal(node.this)
        except InvalidOperation:
            return None
    return _temporal(node.this) or node.this


def _temporal(text: str) -> "dt.date | None":
    """A date (``'2001-03-04'``) or a timestamp (``'2001-03-04 10:00:00'``) written as text; None otherwise.
    A timestamp's edges are a second apart (a microsecond when it has a fraction): a bound on time
    written to the second (``ts < '2024-01-01 00:00:00'``) gets its witnesses as a date bound does."""
    if not _ISO.fullmatch(text.strip()):
        return None
    try:
        return dt.date.fromisoformat(text) if len(text.strip()) == 10 else dt.datetime.fromisoformat(text)
    except ValueError:
        return None


def _unit(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return dt.timedelta(microseconds=1) if value.microsecond else dt.timedelta(seconds=1)
    if isinstance(value, dt.date):
        return dt.timedelta(days=1)
    exponent = value.as_tuple().exponent
    return Decimal(1).scaleb(exponent) if isinstance(exponent, int) and exponent < 0 else Decimal(1)


def _edge_values(conds: list[tuple[str, Any]]) -> list[Any]:
    """Each bound, the value one unit past it, and each IN member or equality, in order."""
    out: list[Any] = []
    for op, value in conds:
        if op == "in":
            out += list(value)
        elif op == "=":
            out.append(value)
        elif isinstance(value, (Decimal, dt.date)):
            step = _unit(value)
            out += {">=": [value, value - step], ">": [value + step, value],
                    "<=": [value, value + step], "<": [value - step, value]}[op]
    return list(dict.fromkeys(out))


def _passes(value: Any, conds: list[tuple[str, Any]]) -> bool:
    try:
        for op, bound in conds:
            if op == "in":
                ok = value in bound
            elif op == "=":
                ok = value == bound
            else:
                ok = {"<": value < bound, "<=": value <= bound, ">": value > bound, ">=": value >= bound}[op]
            if not ok:
                return False
    except TypeError:  # a text value against a numeric bound: never passes
        return False
    return True


def _text(value: Any) -> Any:
    if isinstance(value, Threshold):
        return value  # measured on the variant when written
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    return value.isoformat() if isinstance(value, dt.date) else format(value, "f") if isinstance(value, Decimal) \
        else str(value)


def neighbours(text: str) -> list[str]:
    """A literal and the values just either side of it, as SQL literal texts (a timestamp's
    a second apart, see ``_temporal``)."""
    when = _temporal(text)
    if when is not None:
        step = _unit(when)
        return [_text(when), _text(when - step), _text(when + step)]
    try:
        value = Decimal(text)
    except InvalidOperation:
        return [text]
    exponent = value.as_tuple().exponent
    unit = Decimal(1).scaleb(exponent) if isinstance(exponent, int) and exponent < 0 else Decimal(1)
    return [str(value), str(value - unit), str(value + unit)]
