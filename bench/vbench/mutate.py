"""Single-point mutants of a gold query and semantics-preserving rewrites of it, with
sqlglot, written apart from the grader's own mutant generator
(``pytest_sqleval.core.variants.mutants``, never imported here): the bench must not
score the variants with the near-misses they were distilled on.

Mutant kinds: ``literal`` (a number, date or string literal changed), ``conjunct`` (a
conjunct dropped), ``join_predicate`` (a column = column conjunct dropped), ``operator``
(a comparison flipped), ``aggregate`` (an aggregate swapped), ``order`` (an ORDER BY key
reversed or dropped), ``having`` (a HAVING bound moved), ``limit`` (LIMIT moved).

Rewrite kinds (controls): ``conjunct_order``, ``between``, ``in_or``, ``count_one``,
``alias``, ``comparison_sides``, ``cte_inline``, ``join_order``."""
from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass
from decimal import Decimal
from typing import Callable, Iterator

import sqlglot
from sqlglot import exp


@dataclass(frozen=True)
class Change:
    kind: str
    detail: str
    sql: str


def _sites(tree: exp.Expression) -> list[exp.Expression]:
    return list(tree.walk())


def _inside(node: exp.Expression, kind: type) -> bool:
    return node.find_ancestor(kind) is not None


def _numeric_steps(text: str) -> list[str]:
    try:
        value = Decimal(text)
    except ArithmeticError:
        return []
    places = -value.as_tuple().exponent if isinstance(value.as_tuple().exponent, int) else 0
    step = Decimal(1).scaleb(-places) if places > 0 else Decimal(1)
    return [str(value + step), str(value - step)]


def _date_steps(text: str) -> list[str]:
    try:
        day = dt.date.fromisoformat(text)
    except ValueError:
        return []
    return [str(day + dt.timedelta(days=1)), str(day - dt.timedelta(days=1))]


def _literal_changes(node: exp.Literal, strings: list[str]) -> list[tuple[str, exp.Expression]]:
    if node.is_number:
        return [(f"{node.this} -> {v}", exp.Literal.number(v)) for v in _numeric_steps(node.this)]
    days = _date_steps(node.this)
    if days:
        return [(f"'{node.this}' -> '{v}'", exp.Literal.string(v)) for v in days]
    others = [s for s in strings if s != node.this]
    return [(f"'{node.this}' -> '{others[0]}'", exp.Literal.string(others[0]))] if others else []


def _is_join_predicate(node: exp.Expression) -> bool:
    return (isinstance(node, exp.EQ) and isinstance(node.this, exp.Column) and isinstance(node.expression, exp.Column)
            and (node.this.table != node.expression.table or node.this.name != node.expression.name))


FLIPS: dict[type, type] = {exp.GT: exp.GTE, exp.GTE: exp.GT, exp.LT: exp.LTE, exp.LTE: exp.LT, exp.EQ: exp.NEQ,
                           exp.NEQ: exp.EQ}
AGG_SWAPS: dict[type, type] = {exp.Sum: exp.Avg, exp.Avg: exp.Sum, exp.Min: exp.Max, exp.Max: exp.Min}


def _edits(tree: exp.Expression) -> Iterator[tuple[int, str, str, Callable[[exp.Expression], exp.Expression | None]]]:
    """(site index, kind, detail, edit of that node in a copy)."""
    strings = sorted({n.this for n in tree.find_all(exp.Literal) if n.is_string and not _date_steps(n.this)})
    for i, node in enumerate(_sites(tree)):
        if isinstance(node, exp.Literal):
            if _inside(node, exp.Limit) or _inside(node, exp.Offset) or _inside(node, exp.Fetch):
                kind = "limit"
            elif _inside(node, exp.Having):
                kind = "having"
            elif _inside(node, exp.Ordered) or _inside(node, exp.Interval) and not node.is_number:
                continue
            else:
                kind = "literal"
            for detail, new in _literal_changes(node, strings):
                yield i, kind, detail, (lambda n, new=new: n.replace(new.copy()))
        elif isinstance(node, exp.And) and (_inside(node, exp.Where) or _inside(node, exp.Having)
                                            or _inside(node, exp.Join)):
            for keep, drop in ((node.this, node.expression), (node.expression, node.this)):
                if isinstance(drop, exp.And):
                    continue  # dropping a whole sub-chain is not a single point
                kind = "join_predicate" if _is_join_predicate(drop.unnest()) else "conjunct"
                side = "left" if keep is node.this else "right"
                yield i, kind, f"drop {drop.sql()[:80]}", (lambda n, side=side: n.replace(
                    (n.this if side == "left" else n.expression).copy()))
        elif type(node) in FLIPS and not _is_join_predicate(node):
            new_type = FLIPS[type(node)]
            yield i, "operator", f"{node.key} -> {new_type.key}", (
                lambda n, t=new_type: n.replace(t(this=n.this.copy(), expression=n.expression.copy())))
        elif type(node) in AGG_SWAPS and not isinstance(node.parent, exp.Window):
            new_type = AGG_SWAPS[type(node)]
            yield i, "aggregate", f"{node.key} -> {new_type.key}", (lambda n, t=new_type: n.replace(t(this=n.this.copy())))
        elif isinstance(node, exp.Count) and not isinstance(node.this, exp.Star) and node.this is not None:
            if isinstance(node.this, exp.Distinct):
                yield i, "aggregate", "count(distinct x) -> count(x)", (
                    lambda n: n.replace(exp.Count(this=n.this.expressions[0].copy())))
            else:
                yield i, "aggregate", "count(x) -> count(distinct x)", (
                    lambda n: n.replace(exp.Count(this=exp.Distinct(expressions=[n.this.copy()]))))
        elif isinstance(node, exp.Ordered) and isinstance(node.parent, exp.Order) and \
                not isinstance(node.parent.parent, exp.Window):
            yield i, "order", f"reverse {node.this.sql()[:40]}", (
                lambda n: n.set("desc", not n.args.get("desc")) or n)
            if len(node.parent.expressions) > 1:
                yield i, "order", f"drop key {node.this.sql()[:40]}", (lambda n: n.pop())


def mutants(gold: str, dialect: str) -> list[Change]:
    """Every single-point mutant of ``gold`` this builder knows, in a stable order; the
    ones that render the same SQL as the gold or as an earlier mutant are left out."""
    tree = sqlglot.parse_one(gold, read=dialect)
    seen = {tree.sql(dialect)}
    out = []
    for i, kind, detail, edit in _edits(tree):
        copy = tree.copy()
        edit(_sites(copy)[i])
        try:
            sql = copy.sql(dialect)
            sqlglot.parse_one(sql, read=dialect)
        except sqlglot.errors.SqlglotError:
            continue
        if sql not in seen:
            seen.add(sql)
            out.append(Change(kind, detail, sql))
    return out


def sample(changes: list[Change], n: int, rng: random.Random) -> list[Change]:
    """Up to ``n`` changes, spread over the kinds (round robin over shuffled kinds)."""
    by_kind: dict[str, list[Change]] = {}
    for c in changes:
        by_kind.setdefault(c.kind, []).append(c)
    for v in by_kind.values():
        rng.shuffle(v)
    kinds = sorted(by_kind)
    rng.shuffle(kinds)
    out: list[Change] = []
    while len(out) < n and any(by_kind.values()):
        for k in kinds:
            if by_kind[k] and len(out) < n:
                out.append(by_kind[k].pop())
    return out


# -- controls: rewrites that keep the meaning ---------------------------------------------
def _conjunct_order(tree: exp.Expression) -> bool:
    where = tree.find(exp.Where)
    if where is None:
        return False
    parts = list(where.this.flatten()) if isinstance(where.this, exp.And) else []
    if len(parts) < 2:
        return False
    where.set("this", exp.and_(*[p.copy() for p in reversed(parts)]))
    return True


def _between(tree: exp.Expression) -> bool:
    node = tree.find(exp.Between)
    if node is None or isinstance(node.parent, exp.Not):
        return False
    node.replace(exp.paren(exp.and_(exp.GTE(this=node.this.copy(), expression=node.args["low"].copy()),
                                    exp.LTE(this=node.this.copy(), expression=node.args["high"].copy()))))
    return True


def _in_or(tree: exp.Expression) -> bool:
    node = next((n for n in tree.find_all(exp.In) if n.expressions and not n.args.get("query")
                 and len(n.expressions) <= 12 and not isinstance(n.parent, exp.Not)), None)
    if node is None:
        return False
    node.replace(exp.paren(exp.or_(*[exp.EQ(this=node.this.copy(), expression=e.copy()) for e in node.expressions])))
    return True


def _count_one(tree: exp.Expression) -> bool:
    node = next((n for n in tree.find_all(exp.Count) if isinstance(n.this, exp.Star)), None)
    if node is None:
        return False
    node.set("this", exp.Literal.number(1))
    return True


def _alias(tree: exp.Expression) -> bool:
    names = {a.this.name for a in tree.find_all(exp.TableAlias)
             if isinstance(a.parent, exp.Table) and a.this is not None and not a.columns}
    if not names:
        return False
    ctes = {c.alias_or_name for c in tree.find_all(exp.CTE)}
    names -= ctes
    if not names:
        return False
    for a in tree.find_all(exp.TableAlias):
        if isinstance(a.parent, exp.Table) and a.this is not None and a.this.name in names:
            a.set("this", exp.to_identifier(a.this.name + "_rw"))
    for c in tree.find_all(exp.Column):
        if c.table in names:
            c.set("table", exp.to_identifier(c.table + "_rw"))
    return True


SWAPPED: dict[type, type] = {exp.GT: exp.LT, exp.LT: exp.GT, exp.GTE: exp.LTE, exp.LTE: exp.GTE}


def _comparison_sides(tree: exp.Expression) -> bool:
    where = tree.find(exp.Where)
    node = next((n for n in where.find_all(*SWAPPED) if isinstance(n.this, exp.Column)), None) if where else None
    if node is None:
        return False
    node.replace(SWAPPED[type(node)](this=node.expression.copy(), expression=node.this.copy()))
    return True


def _cte_inline(tree: exp.Expression) -> bool:
    with_ = tree.args.get("with_") or tree.args.get("with")
    if with_ is None or with_.args.get("recursive"):
        return False
    for cte in with_.expressions:
        name = cte.alias_or_name
        refs = [t for t in tree.find_all(exp.Table) if t.name == name and not t.db]
        later = [c for c in with_.expressions if c is not cte and any(t.name == name for t in c.find_all(exp.Table))]
        if len(refs) != 1 or later or refs[0].find_ancestor(exp.CTE) is not None:
            continue
        ref = refs[0]
        ref.replace(exp.Subquery(this=cte.this.copy(), alias=exp.TableAlias(this=exp.to_identifier(ref.alias_or_name))))
        cte.pop()
        if not with_.expressions:
            with_.pop()
        return True
    return False


def _join_order(tree: exp.Expression) -> bool:
    select = tree if isinstance(tree, exp.Select) else tree.find(exp.Select)
    if select is None:
        return False
    joins = select.args.get("joins") or []
    from_ = select.args.get("from_") or select.args.get("from")
    if not joins or from_ is None or any(j.args.get("on") or j.args.get("using") or j.args.get("kind")
                                         or j.args.get("side") or j.args.get("method") for j in joins):
        return False
    if not isinstance(from_.this, exp.Table) or not isinstance(joins[0].this, exp.Table):
        return False
    first, second = from_.this.copy(), joins[0].this.copy()
    from_.set("this", second)
    joins[0].set("this", first)
    return True


REWRITES: dict[str, Callable[[exp.Expression], bool]] = {
    "conjunct_order": _conjunct_order, "between": _between, "in_or": _in_or, "count_one": _count_one,
    "alias": _alias, "comparison_sides": _comparison_sides, "cte_inline": _cte_inline, "join_order": _join_order}


def controls(gold: str, dialect: str) -> list[Change]:
    """One rewrite of each kind that applies to ``gold`` (each kind on a fresh copy)."""
    tree = sqlglot.parse_one(gold, read=dialect)
    base = tree.sql(dialect)
    out = []
    for kind, rewrite in REWRITES.items():
        copy = tree.copy()
        try:
            if not rewrite(copy):
                continue
            sql = copy.sql(dialect)
            sqlglot.parse_one(sql, read=dialect)
        except (sqlglot.errors.SqlglotError, AttributeError, KeyError, IndexError):
            continue
        if sql != base:
            out.append(Change(kind, kind, sql))
    return out
