"""Near-miss mutants of a gold query: the material for distilling database variants.

Execution on one database snapshot passes a wrong query whose result happens to equal
the gold's there (a wrong aggregate that coincides, a predicate that filters nothing on
this data). Test-suite accuracy (Zhong, Yu & Klein 2020) grades on several variants of the
database instead, and keeps the variants that tell the gold from its near-misses: queries
a plausible model might write that differ from the gold in one small, result-changing way.
``mutants`` generates them with sqlglot, one change per mutant, anywhere in the tree (CTEs,
subqueries, set operations, HAVING, join ON); the list is deterministic, deduplicated on
the rendered SQL, never the gold's rendering, and every mutant re-parses in the dialect.

Choices worth knowing:

- A join's only ON condition is never dropped (that leaves a cross product no model
  writes, and an empty ON is a syntax error); only one conjunct of a multi-conjunct ON,
  or one column of a multi-column USING, is. Joins written in WHERE (``FROM a, b WHERE
  a.k = b.k``) lose their condition through ``drop_predicate``.
- ``join_type`` turns INNER into LEFT and LEFT (also RIGHT, FULL) into INNER; only joins
  with ON or USING (a comma or CROSS join has no outer form).
- Changes known to leave every result unchanged are not generated: DISTINCT toggled on a
  subquery of IN/EXISTS, on a member of a UNION (not ALL), on a one-row aggregate or on a
  GROUP BY whose keys are all projected; ORDER BY flipped in a subquery without LIMIT;
  columns swapped inside EXISTS. Other mutants can still be equivalent on every database;
  distillation tolerates them (no variant separates them).
- Inside a CTE or subquery, ``column_swap`` swaps two expressions and keeps the output
  names (``SELECT b AS a, a AS b``), because swapping positions there is usually invisible
  to the outer query; it does so only for two surely numeric expressions (arithmetic,
  SUM, AVG, COUNT), since other swaps mostly end in a type error on every database. In the
  outermost SELECT it swaps the positions (positional GROUP BY / ORDER BY terms follow).
"""
from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import lru_cache

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ErrorLevel


@dataclass(frozen=True)
class Mutant:
    """One near-miss of a gold query."""

    sql: str  # in the dialect given
    kind: str  # one of MUTATION_KINDS
    detail: str  # what changed, short


MUTATION_KINDS = ("literal", "comparison", "drop_predicate", "drop_join_condition", "join_type",
                  "aggregate", "distinct", "order_by", "limit", "column_swap")

Edit = Callable[["exp.Expr"], object]  # a string: sqlglot < 30 has no Expr
# the target node in the gold's tree, the edit applied to the same node in a copy, the detail
Candidate = tuple["exp.Expr", Edit, str]

_SNIP = 60
_SNIP_NODES = 200  # larger subtrees are not rendered into a detail
_INT = re.compile(r"^\d+$")
_DEC = re.compile(r"^(\d+\.\d*|\.\d+)$")
_ISO = re.compile(r"^(\d{4})-(\d{2})-(\d{2})((?:[ T]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?)$")
_COMMENT_ONLY = getattr(exp, "Semicolon", ())


def mutants(gold_sql: str, dialect: str, *, limit: int = 40) -> list[Mutant]:
    """Up to ``limit`` near-misses of ``gold_sql``, taken round-robin across MUTATION_KINDS.

    A gold that does not parse (or holds more than one statement) gives []; so does a
    query too deep for the parser. An unknown ``dialect`` name is a ValueError."""
    Dialect.get_or_raise(dialect)
    if limit <= 0:
        return []
    try:
        return _mutants(gold_sql, dialect, limit)
    except RecursionError:
        return []


@dataclass
class _Gold:
    root: exp.Expr
    dialect: str
    nodes: list[exp.Expr]  # the tree in depth-first (source) order
    level: ErrorLevel


def _mutants(gold_sql: str, dialect: str, limit: int) -> list[Mutant]:
    try:
        trees = [t for t in sqlglot.parse(gold_sql, read=dialect)
                 if t is not None and not isinstance(t, _COMMENT_ONLY)]
    except RecursionError:
        raise
    except Exception:
        return []
    if len(trees) != 1:
        return []
    root = trees[0]
    level = ErrorLevel.RAISE  # a mutant sqlglot cannot render faithfully is skipped
    try:
        gold = root.sql(dialect=dialect, unsupported_level=level)
    except RecursionError:
        raise
    except Exception:
        level = ErrorLevel.IGNORE  # the gold itself uses a feature sqlglot only warns about
        try:
            gold = root.sql(dialect=dialect, unsupported_level=level)
        except RecursionError:
            raise
        except Exception:
            return []
    g = _Gold(root, dialect, list(root.dfs()), level)
    seen = {gold}
    live = [(kind, _GENERATORS[kind](g)) for kind in MUTATION_KINDS]
    out: list[Mutant] = []
    while live and len(out) < limit:
        still = []
        for kind, candidates in live:
            if len(out) >= limit:
                break
            found = _next_mutant(g, kind, candidates, seen)
            if found is not None:
                out.append(found)
                still.append((kind, candidates))
        live = still
    return out


def _next_mutant(g: _Gold, kind: str, candidates: Iterator[Candidate], seen: set[str]) -> Mutant | None:
    """The kind's next candidate that renders, is new and re-parses; None when exhausted."""
    while True:
        try:
            target, edit, detail = next(candidates)
        except RecursionError:
            raise
        except Exception:  # StopIteration, or a generator tripped over an odd tree
            return None
        try:
            tree = g.root.copy()
            edit(_follow(tree, _path(target)))
            sql = tree.sql(dialect=g.dialect, unsupported_level=g.level, copy=False)
        except RecursionError:
            raise
        except Exception:
            continue
        if sql in seen:
            continue
        seen.add(sql)
        try:
            sqlglot.parse_one(sql, read=g.dialect)
        except RecursionError:
            raise
        except Exception:
            continue
        return Mutant(sql, kind, detail)


def _path(node: exp.Expr) -> list[tuple[str, int | None]]:
    steps = []
    while node.parent is not None:
        assert node.arg_key is not None  # a node with a parent is under a key of its args
        steps.append((node.arg_key, node.index))
        node = node.parent
    return steps[::-1]


def _follow(root: exp.Expr, path: list[tuple[str, int | None]]) -> exp.Expr:
    node = root
    for key, index in path:
        child = node.args[key]
        node = child if index is None else child[index]
    return node


# --- rendering of details -------------------------------------------------------------

def _snip(node: exp.Expr, dialect: str) -> str:
    """``node``'s SQL on one line, cut to a few words; a huge subtree shows only its type."""
    for count, _ in enumerate(node.walk()):
        if count > _SNIP_NODES:
            return f"<{node.key}>"
    text = " ".join(node.sql(dialect=dialect).split())
    return text if len(text) <= _SNIP else text[: _SNIP - 3] + "..."


_CLAUSES: tuple[tuple[type, str], ...] = (
    (exp.Where, "WHERE"), (exp.Having, "HAVING"), (exp.Join, "ON"), (exp.Qualify, "QUALIFY"),
    (exp.Group, "GROUP BY"), (exp.Order, "ORDER BY"), (exp.Window, "OVER"), (exp.Select, "SELECT"),
)


def _context(node: exp.Expr, dialect: str) -> str:
    """'WHERE o.amount >= 100': the clause holding ``node`` and the predicate around it."""
    shown: exp.Expr | None = None
    anc: exp.Expr | None = node
    while anc is not None:
        if shown is None and isinstance(anc, exp.Predicate):
            shown = anc
        for cls, label in _CLAUSES:
            if isinstance(anc, cls):
                if shown is None:
                    shown = node.parent if node.parent is not None and node.parent is not anc else node
                return f"{label} {_snip(shown, dialect)}"
        anc = anc.parent
    return _snip(shown or node, dialect)


# --- literal --------------------------------------------------------------------------

def _literal(g: _Gold) -> Iterator[Candidate]:
    """Moves one literal: integers +-1, decimals +-1 %, dates +-1 day, a compared string to another."""
    pool: list[str] = []
    for node in g.nodes:
        if isinstance(node, exp.Literal) and node.is_string and _compared_string(node) and node.this not in pool:
            pool.append(node.this)
    sites = []
    for node in g.nodes:
        if isinstance(node, exp.Literal) and not _structural(node):
            moves = _moves(node, pool)
            if moves:
                sites.append((node, moves))
    for step in range(2):  # every site's first move, then every site's second
        for node, moves in sites:
            if step < len(moves):
                new = moves[step]
                old_text = node.sql(dialect=g.dialect)
                new_text = new.sql(dialect=g.dialect)
                yield node, _replace_with(new), f"{old_text} -> {new_text} in {_context(node, g.dialect)}"


def _replace_with(new: exp.Expr) -> Edit:
    return lambda node: node.replace(new.copy())


def _structural(node: exp.Literal) -> bool:
    """A literal that is a position, a row count or a type parameter, not a value."""
    parent = node.parent
    if isinstance(parent, (exp.Limit, exp.Offset, exp.Fetch, exp.DataType, exp.DataTypeParam)):
        return True
    return isinstance(parent, (exp.Ordered, exp.Group)) and not node.is_string


def _compared_string(node: exp.Literal) -> bool:
    """A plain string (no date, no interval amount) in an equality or an IN list."""
    return isinstance(node.parent, (exp.EQ, exp.NEQ, exp.In)) and not _ISO.match(node.this)


def _moves(node: exp.Literal, pool: list[str]) -> list[exp.Expr]:
    text = node.this
    if not node.is_string:
        if _INT.match(text):
            return [exp.Literal.number(int(text) + 1), exp.Literal.number(int(text) - 1)]
        if _DEC.match(text):
            return [exp.Literal.number(v) for v in _nudged(text)]
        return []
    if isinstance(node.parent, exp.Interval) and _INT.match(text):
        return [exp.Literal.string(str(int(text) + 1)), exp.Literal.string(str(int(text) - 1))]
    iso = _ISO.match(text)
    if iso:
        try:
            day = _dt.date(int(iso[1]), int(iso[2]), int(iso[3]))
            return [exp.Literal.string((day + _dt.timedelta(days=d)).isoformat() + iso[4]) for d in (1, -1)]
        except (ValueError, OverflowError):
            return []
    if _compared_string(node) and len(pool) > 1:
        return [exp.Literal.string(pool[(pool.index(text) + 1) % len(pool)])]
    return []


def _nudged(text: str) -> list[str]:
    """A decimal moved up and down by 1 %, keeping its written scale where that is exact."""
    try:
        value = Decimal(text)
    except InvalidOperation:
        return []
    exponent = value.as_tuple().exponent
    if not isinstance(exponent, int):  # NaN or infinity (the caller's pattern admits neither)
        return []
    scale = Decimal(1).scaleb(exponent)
    if value == 0:
        return [_decimal_text(scale), _decimal_text(-scale)]
    out = []
    for factor in (Decimal("1.01"), Decimal("0.99")):
        new = value * factor
        kept = new.quantize(scale)
        out.append(_decimal_text(kept if kept == new else new.normalize()))
    return out


def _decimal_text(value: Decimal) -> str:
    text = format(value, "f")
    return text if "." in text else text + ".0"


# --- comparison -----------------------------------------------------------------------

_FLIPS: dict[type, type] = {exp.LT: exp.LTE, exp.LTE: exp.LT, exp.GT: exp.GTE, exp.GTE: exp.GT,
                            exp.EQ: exp.NEQ, exp.NEQ: exp.EQ}
_INEQUALITIES = (exp.LT, exp.LTE, exp.GT, exp.GTE)
_OPS: dict[type, str] = {exp.LT: "<", exp.LTE: "<=", exp.GT: ">", exp.GTE: ">=", exp.EQ: "=", exp.NEQ: "<>"}


def _comparison(g: _Gold) -> Iterator[Candidate]:
    """Flips one comparison operator: < and <=, > and >=, = and <>."""
    for node in g.nodes:
        new_cls = _FLIPS.get(type(node))
        if new_cls is None or isinstance(node.parent, (exp.Property, exp.SetItem)):
            continue

        def edit(n: exp.Expr, new_cls: type = new_cls) -> None:
            n.replace(new_cls(this=n.this, expression=n.expression))

        yield node, edit, f"'{_OPS[type(node)]}' -> '{_OPS[new_cls]}' in {_context(node, g.dialect)}"


# --- drop_predicate, drop_join_condition ----------------------------------------------

def _conjuncts(node: exp.Expr) -> list[exp.Expr]:
    """The members of an AND chain, through parentheses around ANDs."""
    if isinstance(node, exp.And):
        return _conjuncts(node.this) + _conjuncts(node.expression)
    if isinstance(node, exp.Paren) and isinstance(node.this, exp.And):
        return _conjuncts(node.this)
    return [node]


def _drop_conjunct(node: exp.Expr) -> None:
    parent = node.parent
    assert isinstance(parent, exp.And)
    parent.replace(parent.expression if parent.this is node else parent.this)


def _pop(node: exp.Expr) -> None:
    node.pop()


def _drop_predicate(g: _Gold) -> Iterator[Candidate]:
    """Drops one conjunct of a WHERE or HAVING (a single-predicate clause goes whole)."""
    for node in g.nodes:
        if not isinstance(node, (exp.Where, exp.Having)) or node.this is None:
            continue
        label = "WHERE" if isinstance(node, exp.Where) else "HAVING"
        parts = _conjuncts(node.this)
        if len(parts) == 1:
            yield node, _pop, f"dropped {label} {_snip(node.this, g.dialect)}"
            continue
        for part in parts:
            yield part, _drop_conjunct, f"dropped {_snip(part, g.dialect)} from {label}"


def _drop_join_condition(g: _Gold) -> Iterator[Candidate]:
    """Drops one conjunct of a multi-conjunct JOIN ... ON, or one column of a multi-column USING."""
    for node in g.nodes:
        if not isinstance(node, exp.Join):
            continue
        table = _snip(node.this, g.dialect)
        on = node.args.get("on")
        if on is not None:
            parts = _conjuncts(on)
            if len(parts) > 1:
                asof = (node.args.get("method") or "").upper() == "ASOF"
                for part in parts:
                    if asof and isinstance(part, _INEQUALITIES):
                        continue  # an ASOF join needs its inequality
                    yield part, _drop_conjunct, f"dropped {_snip(part, g.dialect)} from JOIN {table} ON"
        using = node.args.get("using") or []
        if len(using) > 1:
            for column in using:
                yield column, _pop, f"dropped {_snip(column, g.dialect)} from JOIN {table} USING"


# --- join_type ------------------------------------------------------------------------

def _join_type(g: _Gold) -> Iterator[Candidate]:
    """Turns an INNER join into a LEFT join, or a LEFT (RIGHT, FULL) join into an INNER one."""
    for node in g.nodes:
        if not isinstance(node, exp.Join) or (node.args.get("method") or "ASOF").upper() != "ASOF":
            continue  # NATURAL, POSITIONAL, ...; an ASOF join keeps ASOF
        if node.args.get("on") is None and not node.args.get("using"):
            continue
        side, kind = node.side, node.kind
        if kind not in ("", "INNER", "OUTER"):
            continue  # SEMI, ANTI, CROSS, ...
        table = _snip(node.this, g.dialect)
        if not side and kind in ("", "INNER"):
            yield node, _set_join("LEFT"), f"INNER -> LEFT in JOIN {table}"
        elif side in ("LEFT", "RIGHT", "FULL"):
            yield node, _set_join(None), f"{side} -> INNER in JOIN {table}"


def _set_join(side: str | None) -> Edit:
    def edit(node: exp.Expr) -> None:
        node.set("side", side)
        node.set("kind", None)
    return edit


# --- aggregate ------------------------------------------------------------------------

_AGG_SWAPS: dict[type[exp.Expr], type[exp.Expr]] = {exp.Sum: exp.Avg, exp.Avg: exp.Sum, exp.Min: exp.Max, exp.Max: exp.Min}


def _swapped_aggregate(node: exp.Expr) -> exp.Expr | None:
    """SUM <-> AVG, MIN <-> MAX, COUNT(x) <-> COUNT(DISTINCT x); None when it does not apply."""
    new_cls = _AGG_SWAPS.get(type(node))
    if new_cls is not None:
        args = {k: v for k, v in node.args.items() if v is not None}
        if not set(args) <= set(new_cls.arg_types):
            return None
        return new_cls(**args)
    if type(node) is exp.Count and not node.expressions:
        arg = node.this
        if arg is None or isinstance(arg, exp.Star):
            return None
        rest = {k: v for k, v in node.args.items() if k not in ("this", "expressions") and v is not None}
        if isinstance(arg, exp.Distinct):
            if len(arg.expressions) != 1 or arg.args.get("on") is not None:
                return None
            return exp.Count(this=arg.expressions[0], **rest)
        return exp.Count(this=exp.Distinct(expressions=[arg]), **rest)
    return None


def _aggregate(g: _Gold) -> Iterator[Candidate]:
    """Swaps one aggregate: SUM and AVG, MIN and MAX, COUNT(x) and COUNT(DISTINCT x)."""
    for node in g.nodes:
        if type(node) not in _AGG_SWAPS and type(node) is not exp.Count:
            continue
        shown = _swapped_aggregate(node.copy())
        if shown is None:
            continue

        def edit(n: exp.Expr) -> None:
            new = _swapped_aggregate(n)
            assert new is not None
            n.replace(new)

        yield node, edit, f"{_snip(node, g.dialect)} -> {_snip(shown, g.dialect)}"


# --- distinct -------------------------------------------------------------------------

def _enclosing(node: exp.Expr) -> exp.Expr | None:
    """The parent of ``node`` seen through subquery parentheses."""
    parent = node.parent
    while isinstance(parent, (exp.Subquery, exp.Paren)):
        parent = parent.parent
    return parent


def _distinct_irrelevant(select: exp.Select) -> bool:
    """DISTINCT cannot change this SELECT's effect on the query's result."""
    outer = _enclosing(select)
    if isinstance(outer, (exp.In, exp.Exists, exp.Any, exp.All)):
        return True
    if isinstance(outer, exp.SetOperation) and outer.args.get("distinct"):
        return True
    group = select.args.get("group")
    if group is None:  # an aggregate without GROUP BY returns one row
        return any(not isinstance(a.parent, exp.Window)
                   for e in select.expressions for a in e.find_all(exp.AggFunc))
    if group.args.get("all"):
        return True
    keys = group.expressions
    return bool(keys) and all(_projected(select, key) for key in keys)


def _projected(select: exp.Select, key: exp.Expr) -> bool:
    """``key`` (a GROUP BY or ORDER BY term) is one of the SELECT's columns."""
    if isinstance(key, exp.Literal) and not key.is_string and _INT.match(key.this):
        return 1 <= int(key.this) <= len(select.expressions)
    names = {e.alias_or_name for e in select.expressions if e.alias_or_name}
    if isinstance(key, exp.Column) and not key.table and key.name in names:
        return True
    return any(key == e.unalias() for e in select.expressions)


def _distinct(g: _Gold) -> Iterator[Candidate]:
    """Adds DISTINCT to a SELECT, or removes it."""
    for node in g.nodes:
        if not isinstance(node, exp.Select) or not node.expressions or _distinct_irrelevant(node):
            continue
        head = _snip(exp.Select(expressions=[e.copy() for e in node.expressions]), g.dialect)
        if node.args.get("distinct") is not None:
            yield node, _set_distinct(False), f"removed DISTINCT from {head}"
            continue
        order = node.args.get("order")
        if order is not None and not all(_projected(node, o.this) for o in order.expressions):
            continue  # SELECT DISTINCT must order by projected columns
        yield node, _set_distinct(True), f"added DISTINCT to {head}"


def _set_distinct(on: bool) -> Edit:
    def edit(node: exp.Expr) -> None:
        node.set("distinct", exp.Distinct() if on else None)
    return edit


# --- order_by -------------------------------------------------------------------------

@lru_cache(maxsize=64)
def _default_nulls_first(dialect: str, desc: bool) -> bool:
    """Where the dialect puts NULLs for an ORDER BY key written without NULLS FIRST/LAST."""
    tree = sqlglot.parse_one(f"SELECT 1 ORDER BY x{' DESC' if desc else ''}", read=dialect)
    return bool(tree.args["order"].expressions[0].args.get("nulls_first"))


def _order_by(g: _Gold) -> Iterator[Candidate]:
    """Flips one ORDER BY key's direction, or drops an ORDER BY that a LIMIT cuts."""
    for node in g.nodes:
        if not isinstance(node, exp.Order):
            continue
        owner = node.parent
        limited = isinstance(owner, (exp.Select, exp.SetOperation)) and (
            owner.args.get("limit") is not None or owner.args.get("offset") is not None)
        if isinstance(owner, (exp.Select, exp.SetOperation)) and owner is not g.root and not limited:
            continue  # an ORDER BY in a subquery without LIMIT orders nothing the outer query sees
        label = "OVER (ORDER BY" if isinstance(owner, exp.Window) else "ORDER BY"
        for key in node.expressions:
            if not isinstance(key, exp.Ordered):
                continue
            desc = bool(key.args.get("desc"))
            yield key, _flip(g.dialect), f"{label} {_snip(key, g.dialect)}: {'DESC -> ASC' if desc else 'ASC -> DESC'}"
        if limited and isinstance(owner, (exp.Select, exp.SetOperation)) and owner.args.get("limit") is not None:
            yield node, _pop, f"dropped {_snip(node, g.dialect)} before {_snip(owner.args['limit'], g.dialect)}"


def _flip(dialect: str) -> Edit:
    def edit(key: exp.Expr) -> None:
        desc = bool(key.args.get("desc"))
        nulls_first = bool(key.args.get("nulls_first"))
        key.set("desc", not desc)
        if nulls_first == _default_nulls_first(dialect, desc):  # the NULLs were not placed on purpose
            key.set("nulls_first", _default_nulls_first(dialect, not desc))
    return edit


# --- limit ----------------------------------------------------------------------------

def _limit(g: _Gold) -> Iterator[Candidate]:
    """Moves a LIMIT n to n+1, or to n-1 when n > 1."""
    sites = []
    for node in g.nodes:
        if isinstance(node, exp.Limit):
            value = node.args.get("expression")
            if isinstance(value, exp.Literal) and not value.is_string and _INT.match(value.this):
                sites.append((node, int(value.this)))
    for step in (1, -1):
        for node, n in sites:
            if n + step >= 1:
                yield node, _set_limit(n + step), f"LIMIT {n} -> {n + step}"


def _set_limit(n: int) -> Edit:
    def edit(node: exp.Expr) -> None:
        node.set("expression", exp.Literal.number(n))
    return edit


# --- column_swap ----------------------------------------------------------------------

def _outer_selects(root: exp.Expr) -> list[exp.Expr]:
    """The SELECTs whose columns are the query's result columns."""
    while isinstance(root, (exp.Subquery, exp.Paren)):
        root = root.this
    if isinstance(root, exp.Select):
        return [root]
    if isinstance(root, exp.SetOperation):
        return _outer_selects(root.this) + _outer_selects(root.expression)
    return []


def _output_name(item: exp.Expr) -> exp.Identifier | None:
    if isinstance(item, exp.Alias):
        alias = item.args.get("alias")
        return alias if isinstance(alias, exp.Identifier) else None
    if isinstance(item, exp.Column) and isinstance(item.this, exp.Identifier):
        return item.this
    return None


def _column_swap(g: _Gold) -> Iterator[Candidate]:
    """Swaps two neighbouring projected columns of one SELECT."""
    outer = {id(s) for s in _outer_selects(g.root)}
    for node in g.nodes:
        if not isinstance(node, exp.Select) or len(node.expressions) < 2:
            continue
        items = node.expressions
        if any(isinstance(e, exp.Star) or isinstance(e, exp.Column) and isinstance(e.this, exp.Star)
               for e in items):
            continue
        if isinstance(_enclosing(node), exp.Exists):
            continue
        is_outer = id(node) in outer
        group = node.args.get("group")
        grouped_names = {k.name for k in (group.expressions if group is not None else [])
                         if isinstance(k, exp.Column) and not k.table}
        for i in range(len(items) - 1):
            a, b = items[i], items[i + 1]
            if a.unalias() == b.unalias():
                continue
            what = f"{_snip(a, g.dialect)} <-> {_snip(b, g.dialect)}"
            if is_outer:
                yield node, _swap_positions(i), f"swapped {what} in the outer SELECT"
                continue
            if _output_name(a) is None or _output_name(b) is None or a.alias_or_name == b.alias_or_name:
                continue
            if not (_numeric(a) and _numeric(b)):
                continue  # the outer query would likely meet a type error, on every database
            if group is not None and (_aggregated(a) != _aggregated(b)
                                      or {a.alias_or_name, b.alias_or_name} & grouped_names):
                continue  # a group key's name would land on an aggregate
            yield node, _swap_expressions(i), f"swapped {what}, names kept, in an inner SELECT"


_NUMERIC = (exp.Sum, exp.Avg, exp.Count, exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Round, exp.Abs, exp.Neg)


def _numeric(item: exp.Expr) -> bool:
    """Surely a number, with no schema at hand: an arithmetic result or a numeric aggregate."""
    e = item.unalias()
    while isinstance(e, (exp.Window, exp.Paren)):
        e = e.this
    return isinstance(e, _NUMERIC) or isinstance(e, exp.Literal) and not e.is_string


def _aggregated(item: exp.Expr) -> bool:
    return any(not isinstance(a.parent, exp.Window) for a in item.find_all(exp.AggFunc))


def _renumber(select: exp.Expr, i: int) -> None:
    """Positional GROUP BY / ORDER BY terms follow the expression at position i+1 or i+2."""
    swap = {str(i + 1): i + 2, str(i + 2): i + 1}
    group = select.args.get("group")
    order = select.args.get("order")
    terms = list(group.expressions) if group is not None else []
    terms += [o.this for o in order.expressions if isinstance(o, exp.Ordered)] if order is not None else []
    for term in terms:
        if isinstance(term, exp.Literal) and not term.is_string and term.this in swap:
            term.replace(exp.Literal.number(swap[term.this]))


def _swap_positions(i: int) -> Edit:
    def edit(node: exp.Expr) -> None:
        items = list(node.expressions)
        items[i], items[i + 1] = items[i + 1], items[i]
        node.set("expressions", items)
        _renumber(node, i)
    return edit


def _swap_expressions(i: int) -> Edit:
    def edit(node: exp.Expr) -> None:
        items = list(node.expressions)
        a, b = items[i], items[i + 1]
        name_a, name_b = _output_name(a), _output_name(b)
        assert name_a is not None and name_b is not None
        items[i] = exp.alias_(b.unalias().copy(), name_a.copy())
        items[i + 1] = exp.alias_(a.unalias().copy(), name_b.copy())
        node.set("expressions", items)
        _renumber(node, i)
    return edit


_GENERATORS: dict[str, Callable[[_Gold], Iterator[Candidate]]] = {
    "literal": _literal,
    "comparison": _comparison,
    "drop_predicate": _drop_predicate,
    "drop_join_condition": _drop_join_condition,
    "join_type": _join_type,
    "aggregate": _aggregate,
    "distinct": _distinct,
    "order_by": _order_by,
    "limit": _limit,
    "column_swap": _column_swap,
}
