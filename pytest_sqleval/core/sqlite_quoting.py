"""SQLite's double-quoted strings, read as SQLite reads them, for both the grader (a
SQLite gold run on another engine) and the variants' builder, which sits below grading."""
from __future__ import annotations

from typing import Any, Collection

from sqlglot import exp

_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Like, exp.ILike)


def sqlite_quoted_strings(tree: exp.Expr, catalog: Collection[str] | None = None) -> exp.Expr:
    """SQLite reads ``"UAL"`` as a string when no column of that name is in scope (its
    compatibility rule; Spider's golds rely on it: ``WHERE abbreviation = "UAL"``); sqlglot
    reads it as a name, which another engine then cannot find. With ``catalog`` (every
    column name of the schema, any case; the variants' builder has it), SQLite's rule itself:
    an unqualified double-quoted name that names no column is a string, wherever it stands.
    Without the schema (the grading path), the rule here is: an unqualified double-quoted
    name compared with a column (``=``, ``!=``, ``<``, ``LIKE`` ..., or in an ``IN (...)``
    list after one) is a string. A copy; ``tree`` is kept."""
    def quoted_name(node: Any) -> bool:
        return (isinstance(node, exp.Column) and not node.table and isinstance(node.this, exp.Identifier)
                and bool(node.this.args.get("quoted")))

    def as_string(node: exp.Expr) -> exp.Expr:
        return exp.Literal.string(node.name)

    if catalog is not None:
        known = {c.lower() for c in catalog}
        return tree.transform(lambda node: as_string(node) if quoted_name(node) and node.name.lower() not in known
                              else node)
    out = tree.copy()
    for cmp in list(out.find_all(*_COMPARISONS)):
        left, right = cmp.this, cmp.expression
        if isinstance(left, exp.Column) and quoted_name(right) and not quoted_name(left):
            right.replace(as_string(right))
        elif isinstance(right, exp.Column) and quoted_name(left) and not quoted_name(right):
            left.replace(as_string(left))
    for node in list(out.find_all(exp.In)):
        if isinstance(node.this, exp.Column) and not quoted_name(node.this):
            for item in list(node.expressions):
                if quoted_name(item):
                    item.replace(as_string(item))
    return out


__all__ = ["sqlite_quoted_strings"]
