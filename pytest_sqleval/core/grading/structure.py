"""Structural layer: how the predicted SQL differs from the gold, clause by clause.

Reported on every case that parses; it never decides a pass where execution ran.
``normalized_match`` compares sqlglot-normalized text; ``exact_match`` compares every
clause as a set (Spider-style component matching: conjunct order, select order within a
set, join order do not matter); ``no_values_exact_match`` does the same after replacing
literals with a placeholder. ``distance`` is a clause-weighted 0..1 (0 = same structure)."""
from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Callable

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.generator import Generator

from .budget import Budget

# Weights of each clause in the structural distance; they sum to 1.
CLAUSE_WEIGHTS: dict[str, float] = {
    "select": 0.25, "from": 0.10, "joins": 0.15, "where": 0.20, "group_by": 0.08, "having": 0.05,
    "order_by": 0.07, "limit": 0.04, "distinct": 0.02, "windows": 0.02, "set_ops": 0.02,
}


@dataclass
class StructureResult:
    normalized_match: bool
    exact_match: bool
    no_values_exact_match: bool
    distance: float
    clauses: dict[str, dict[str, Any]] = field(default_factory=dict)  # clause -> {match, gold, predicted, missing, extra}

    @property
    def differing_clauses(self) -> list[str]:
        return [k for k, v in self.clauses.items() if not v["match"]]

    def to_dict(self) -> dict[str, Any]:
        return {"normalized_match": self.normalized_match, "exact_match": self.exact_match,
                "no_values_exact_match": self.no_values_exact_match, "distance": self.distance,
                "differing_clauses": self.differing_clauses, "clauses": self.clauses}


_GENERATORS: dict[tuple[str, int], Generator] = {}


def _generator(dialect: str) -> Generator:
    """The dialect's generator writing normalized text, one instance per thread
    (``generate`` resets its state on every call)."""
    key = (dialect, threading.get_ident())
    gen = _GENERATORS.get(key)
    if gen is None:
        gen = _GENERATORS[key] = Dialect.get_or_raise(dialect).generator(normalize=True, comments=False)
    return gen


Undo = list[Callable[[], object]]  # steps that put a rewritten tree back, run last first


def _order_equalities(tree: exp.Expr, gen: Generator, budget: Budget | None = None, undo: Undo | None = None) -> None:
    """Put each equality's sides in a canonical order, innermost first: ``a = b`` and
    ``b = a`` are the same condition. Each swap is noted in ``undo`` (a swap undoes itself)."""
    for eq in reversed(list(tree.find_all(exp.EQ))):
        if budget is not None:
            budget.tick()
        left, right = eq.left, eq.right
        if gen.generate(right, copy=False) < gen.generate(left, copy=False):
            _swap(eq)
            if undo is not None:
                undo.append(partial(_swap, eq))


def _swap(eq: exp.EQ) -> None:
    left, right = eq.left, eq.right
    eq.set("this", right)
    eq.set("expression", left)


def _text(gen: Generator, node: exp.Expr | None) -> str:
    if node is None:
        return ""
    if isinstance(node, exp.Alias):
        node = node.this
    return gen.generate(node, copy=False)


def _conjuncts(node: exp.Expr | None, budget: Budget | None = None) -> list[exp.Expr]:
    """The AND-ed conditions of a clause, left to right, walked without recursion (a
    3,000-term AND chain is 3,000 levels deep)."""
    if node is None:
        return []
    if isinstance(node, (exp.Where, exp.Having)):
        node = node.this
    out: list[exp.Expr] = []
    stack = [node]
    while stack:
        if budget is not None:
            budget.tick()
        node = stack.pop()
        if isinstance(node, exp.Paren):
            node = node.this
        if isinstance(node, exp.And):
            stack.append(node.right)
            stack.append(node.left)
        else:
            out.append(node)
    return out


def _main_select(tree: exp.Expr) -> exp.Select | None:
    """The first SELECT of the query: through subqueries and the left branch of set
    operations (a 1,200-branch UNION is 1,200 levels deep), without recursion."""
    node = tree
    while True:
        while isinstance(node, exp.Subquery):
            node = node.this
        if isinstance(node, exp.Select):
            return node
        if not isinstance(node, exp.SetOperation):
            return None
        node = node.left


def clauses_of(tree: exp.Expr, dialect: str, strip_values: bool = False) -> dict[str, list[str]]:
    """Each clause as a sorted list of normalized items (a multiset)."""
    valued, stripped, _ = _clauses(tree, dialect, text_if=lambda _: False)
    return stripped if strip_values else valued


def _clauses(tree: exp.Expr, dialect: str, budget: Budget | None = None,
             text_if: Callable[[dict[str, list[str]]], bool] | None = None,
             ) -> tuple[dict[str, list[str]], dict[str, list[str]], str | None]:
    """The clauses of ``tree``, with and without values, and its normalized text where
    ``text_if`` (given the valued clauses) asks for it. The tree is rewritten in place
    (equalities ordered, then every literal replaced by a placeholder), searched, written,
    and put back as it was, whatever happens: a copy of the tree cost more than all the rest
    (a prediction's tree is shared by the layers, which run one after another)."""
    gen = _generator(dialect)
    undo: Undo = []
    try:
        _order_equalities(tree, gen, budget, undo)
        sel = _main_select(tree)
        set_ops = sorted(type(s).__name__.upper() + (" ALL" if not s.args.get("distinct", True) else "")
                         for s in tree.find_all(exp.SetOperation))
        windows = list(sel.find_all(exp.Window)) if sel is not None else []
        valued = _extract(sel, tree, gen, set_ops, windows, budget)
        text = gen.generate(tree, copy=False) if text_if is None or text_if(valued) else None
        _strip_values(tree, budget, undo)
        _order_equalities(tree, gen, budget, undo)
        return valued, _extract(sel, tree, gen, set_ops, windows, budget), text
    finally:
        for step in reversed(undo):
            step()


def _strip_values(tree: exp.Expr, budget: Budget | None = None, undo: Undo | None = None) -> None:
    """Every literal replaced by a placeholder, each replacement noted in ``undo``. Literals
    in a list (``IN (...)``, ``VALUES``) are replaced by rebuilding the list once: replacing
    them one by one re-indexes the list each time, quadratic in its length (20,000 values: 27 s)."""
    in_lists: dict[tuple[int, str], tuple[exp.Expr, str, set[int]]] = {}
    for lit in list(tree.find_all(exp.Literal)):
        if budget is not None:
            budget.tick()
        parent, key = lit.parent, lit.arg_key
        if parent is None or key is None:  # (a literal with a parent has a key in it)
            continue
        if isinstance(parent.args.get(key), list):
            in_lists.setdefault((id(parent), key), (parent, key, set()))[2].add(id(lit))
        else:
            placeholder = lit.replace(exp.Placeholder())
            if undo is not None:
                undo.append(partial(placeholder.replace, lit))
    for parent, key, ids in in_lists.values():
        before = parent.args[key]
        parent.set(key, [exp.Placeholder() if id(e) in ids else e for e in before])
        if undo is not None:
            undo.append(partial(parent.set, key, before))


def _extract(sel: exp.Select | None, tree: exp.Expr, gen: Generator, set_ops: list[str],
             windows: list[exp.Window], budget: Budget | None = None) -> dict[str, list[str]]:
    def n(e: exp.Expr | None) -> str:
        if budget is not None:
            budget.tick()
        return _text(gen, e)

    out: dict[str, list[str]] = {k: [] for k in CLAUSE_WEIGHTS}
    out["set_ops"] = list(set_ops)
    if sel is None:
        return out
    out["select"] = sorted(n(s) for s in sel.selects)
    from_ = sel.args.get("from") or sel.args.get("from_")
    if from_ is not None:
        out["from"] = [n(from_.this)]
    joins = []
    for j in sel.args.get("joins") or []:
        kind = " ".join(p for p in (j.side, j.kind) if p).upper() or "INNER"
        conds = sorted(n(c) for c in _conjuncts(j.args.get("on"), budget))
        using = sorted(u.name.lower() for u in j.args.get("using") or [])
        joins.append(f"{kind} {n(j.this)} ON {' AND '.join(conds) or ('USING ' + ','.join(using) if using else '-')}")
    out["joins"] = sorted(joins)
    out["where"] = sorted(n(c) for c in _conjuncts(sel.args.get("where"), budget))
    group = sel.args.get("group")
    out["group_by"] = sorted(n(g) for g in (group.expressions if group is not None else []))
    out["having"] = sorted(n(c) for c in _conjuncts(sel.args.get("having"), budget))
    order = tree.args.get("order") or sel.args.get("order")
    out["order_by"] = [n(o) for o in (order.expressions if order is not None else [])]  # order matters here
    limit = tree.args.get("limit") or sel.args.get("limit")
    offset = tree.args.get("offset") or sel.args.get("offset")
    out["limit"] = [x for x in (n(limit.expression) if limit is not None and limit.expression is not None else "",
                                "OFFSET " + n(offset.expression) if offset is not None else "") if x]
    distinct = sel.args.get("distinct")
    out["distinct"] = [n(distinct) or "DISTINCT"] if distinct is not None else []
    out["windows"] = sorted(n(w) for w in windows)
    return out




def _same_clauses(gold: dict[str, list[str]], pred: dict[str, list[str]]) -> bool:
    """Whether every clause matches (``compare_structure``'s ``exact_match``): ORDER BY as
    a sequence, the others as multisets."""
    return all(gold[k] == pred[k] if k == "order_by" else Counter(gold[k]) == Counter(pred[k]) for k in CLAUSE_WEIGHTS)


def _multiset_diff(a: list[str], b: list[str]) -> tuple[list[str], list[str]]:
    """The items of ``a`` not in ``b`` and of ``b`` not in ``a``, as multisets, each in its
    list's order (of repeated items, the first ones in ``b`` are the matched ones). Linear:
    counted, not removed from a list one by one."""
    if a == b:  # the same items in the same order (most clauses of most predictions): nothing to count
        return [], []
    available = Counter(b)
    matched: Counter[str] = Counter()
    missing = []
    for item in a:
        if available[item] > matched[item]:
            matched[item] += 1
        else:
            missing.append(item)
    extra = []
    for item in b:
        if matched[item]:
            matched[item] -= 1
        else:
            extra.append(item)
    return missing, extra


@dataclass(frozen=True)
class GoldSide:
    """The gold's part of the structural diff: its clauses with and without values and its
    normalized text. It follows from the gold SQL alone, so it is worked out once per gold
    and stored with the gold's analysis (``gold_analysis.py``); ``sql`` is the gold as
    written, for the shortcut of a prediction written exactly as the gold."""

    valued: dict[str, list[str]]
    stripped: dict[str, list[str]]
    normalized: str
    sql: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"valued": self.valued, "stripped": self.stripped, "normalized": self.normalized, "sql": self.sql}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "GoldSide":
        return cls(data["valued"], data["stripped"], data["normalized"], data.get("sql"))


def gold_side(gold: exp.Expr, dialect: str, sql: str | None = None) -> GoldSide:
    valued, stripped, text = _clauses(gold, dialect)
    assert text is not None  # asked for (no ``text_if``)
    return GoldSide(valued, stripped, text, sql)


def compare_structure(pred: exp.Expr, gold: exp.Expr | GoldSide, dialect: str,
                      budget: Budget | None = None, pred_sql: str | None = None) -> StructureResult:
    """The clause-by-clause diff; raises ``OverBudget`` when ``budget`` runs out first.
    ``gold`` is the gold's tree or its stored ``GoldSide``; a prediction whose text
    (``pred_sql``) is the gold's parses to the gold's tree, so its diff is read off the
    gold's side without analysing the prediction."""
    side = gold if isinstance(gold, GoldSide) else gold_side(gold, dialect)
    gc, gv = side.valued, side.stripped
    text: str | None = None
    if pred_sql is not None and pred_sql == side.sql:
        pc, pv = gc, gv
    else:  # the normalized text only where it can matter: an exact match
        pc, pv, text = _clauses(pred, dialect, budget, text_if=lambda valued: _same_clauses(gc, valued))
    clauses: dict[str, dict[str, Any]] = {}
    distance = 0.0
    for name, weight in CLAUSE_WEIGHTS.items():
        g, p = gc[name], pc[name]
        missing, extra = _multiset_diff(g, p)
        match = g == p if name == "order_by" else not missing and not extra
        union = len(g) + len(extra)
        share = 0.0 if match else (1.0 if union == 0 else (len(missing) + len(extra)) / max(union, 1))
        if name == "order_by" and not match:
            share = max(share, 0.5)
        distance += weight * min(share, 1.0)
        clauses[name] = {"match": match, "gold": list(g), "predicted": list(p), "missing": missing, "extra": extra}
    exact = all(c["match"] for c in clauses.values())
    no_values = all((pv[k] == gv[k]) if k == "order_by" else sorted(pv[k]) == sorted(gv[k]) for k in CLAUSE_WEIGHTS)
    # Equal normalized text means equal clauses, so only an exact match needs the text.
    normalized = exact and (pc is gc or text == side.normalized)
    return StructureResult(normalized, exact, no_values, round(distance, 4), clauses)
