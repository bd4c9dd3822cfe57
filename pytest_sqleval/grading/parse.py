"""Parse layer: does the SQL parse in the suite's dialect? Errors carry line and column.

Also reads the gold's top-level ORDER BY / LIMIT, which decides ordered comparison and
its tie groups."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError


@dataclass
class ParseResult:
    ok: bool
    dialect: str
    statements: int = 0
    error: dict[str, Any] | None = None  # {"message", "line", "col"}
    expression: exp.Expression | None = field(default=None, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "dialect": self.dialect, "statements": self.statements, "error": self.error}


_COMMENT_ONLY = getattr(exp, "Semicolon", ())  # sqlglot >= 26.x


def parse_sql(sql: str, dialect: str) -> ParseResult:
    """Parse ``sql``; a wrong answer is a result, never an exception."""
    if not sql or not sql.strip():
        return ParseResult(False, dialect, 0, {"message": "empty SQL", "line": 1, "col": 1})
    try:
        # a comment after the last ';' comes back as a Semicolon node holding only the comment: no statement
        trees = [t for t in sqlglot.parse(sql, read=dialect) if t is not None and not isinstance(t, _COMMENT_ONLY)]
    except ParseError as exc:
        first = exc.errors[0] if exc.errors else {}
        col, token = first.get("col"), first.get("highlight")
        if isinstance(col, int) and token and "\n" not in token:
            col = max(1, col - len(token) + 1)  # sqlglot's col is the token's last character
        return ParseResult(False, dialect, 0, {"message": first.get("description") or str(exc).splitlines()[0],
                                               "line": first.get("line"), "col": col})
    except TokenError as exc:
        return ParseResult(False, dialect, 0, {"message": f"cannot tokenize: {exc}", "line": None, "col": None})
    except RecursionError:
        return ParseResult(False, dialect, 0, {"message": "nested too deeply to parse", "line": None, "col": None})
    except Exception as exc:  # the parser's own failure: still a parse result, never a lost case
        return ParseResult(False, dialect, 0, {"message": f"the parser failed: {type(exc).__name__}: {exc}"[:500],
                                               "line": None, "col": None})
    if not trees:
        return ParseResult(False, dialect, 0, {"message": "no statement (only comments?)", "line": 1, "col": 1})
    return ParseResult(True, dialect, len(trees), None, trees[0] if len(trees) == 1 else None)


@dataclass
class OrderInfo:
    """The gold's top-level ordering. ``sort_keys`` are output positions when every key
    is an output column; otherwise ``augmented_sql`` appends the missing keys as extra
    columns so tie groups can still be computed (``key_positions`` index its result;
    negative ones count from its end)."""

    ordered: bool = False
    sort_keys: list[int] | None = None
    limit: int | None = None
    augmented_sql: str | None = None
    key_positions: list[int] | None = None
    probe_sql: str | None = None  # the (augmented) gold with LIMIT n+1: does the LIMIT cut a tie group?
    n_appended: int = 0  # key columns appended at the end of the augmented result
    full_sql: str | None = None  # the (augmented) gold without its LIMIT: the whole tie group a LIMIT cuts


def engine_sql(tree: exp.Expression | None, sql: str, dialect: str, engine_dialect: str) -> str:
    """``sql`` as the engine runs it: as written in the engine's own dialect, else transpiled."""
    if dialect == engine_dialect or tree is None:
        return sql
    return tree.sql(dialect=engine_dialect)


def order_info(tree: exp.Expression | None, dialect: str) -> OrderInfo:
    if not isinstance(tree, exp.Query):
        return OrderInfo()
    order = tree.args.get("order")
    limit_node = tree.args.get("limit")
    limit = None
    if limit_node is not None:
        try:
            limit = int(limit_node.expression.this) if limit_node.expression is not None else None
        except (AttributeError, ValueError, TypeError):
            limit = None
    if order is None:
        return OrderInfo(limit=limit)
    selects = tree.selects if isinstance(tree, exp.Select) else []
    # With *, t.* or COLUMNS(...) in the select list, select-list positions are not output
    # positions: only ordinals name an output column, and appending keys would misplace them.
    expanding = any(_expands(s) for s in selects)
    positions = [_output_position(o.this, selects) if not expanding or _is_ordinal(o.this) else None
                 for o in order.expressions]
    if all(p is not None for p in positions):
        keys = [p for p in positions if p is not None]
        probe = tree.copy().limit(limit + 1).sql(dialect=dialect) if limit is not None else None
        return OrderInfo(True, keys, limit, None, keys, probe, full_sql=_without_limit(tree, limit, dialect))
    if not isinstance(tree, exp.Select) or tree.args.get("distinct"):
        return OrderInfo(True, None, limit)  # keys cannot be recovered: strict positional order
    # Append the keys that are not output columns; they are addressed from the end of the
    # result (negative positions) because a * in the select list has no known width here.
    augmented = tree.copy()
    missing = [o for p, o in zip(positions, order.expressions) if p is None]
    key_positions: list[int] = []
    extra = 0
    for pos, o in zip(positions, order.expressions):
        if pos is not None:
            key_positions.append(pos)
        else:
            augmented = augmented.select(exp.alias_(o.this.copy(), f"__sqleval_k{extra}"), copy=False)
            key_positions.append(extra - len(missing))
            extra += 1
    probe = augmented.copy().limit(limit + 1).sql(dialect=dialect) if limit is not None else None
    return OrderInfo(True, None, limit, augmented.sql(dialect=dialect), key_positions, probe, len(missing),
                     _without_limit(augmented, limit, dialect))


def _without_limit(tree: exp.Expression, limit: int | None, dialect: str) -> str | None:
    """The query with its LIMIT dropped, for the tie group a LIMIT cuts through; None with
    an OFFSET (the window would have two cut edges) or without a LIMIT."""
    if limit is None or tree.args.get("offset") is not None:
        return None
    full = tree.copy()
    full.set("limit", None)
    return full.sql(dialect=dialect)


def _is_ordinal(target: exp.Expression) -> bool:
    return isinstance(target, exp.Literal) and not target.is_string


def _expands(sel: exp.Expression) -> bool:
    """A select item that may stand for several output columns: *, t.*, COLUMNS(...), UNPACK(...)."""
    inner = sel.this if isinstance(sel, exp.Alias) else sel
    columns = getattr(exp, "Columns", None)
    return (isinstance(inner, exp.Star) or (columns is not None and isinstance(inner, columns))
            or (isinstance(inner, exp.Column) and isinstance(inner.this, exp.Star))
            or (isinstance(inner, exp.Anonymous) and inner.name.upper() in ("COLUMNS", "UNPACK")))


def _output_position(target: exp.Expression, selects: list[exp.Expression]) -> int | None:
    if isinstance(target, exp.Literal) and not target.is_string:
        try:
            return int(target.this) - 1
        except ValueError:
            return None
    for i, sel in enumerate(selects):
        if isinstance(target, exp.Column) and not target.table and sel.alias_or_name == target.name:
            return i
        inner = sel.this if isinstance(sel, exp.Alias) else sel
        if inner == target:
            return i
    return None
