"""Parse layer: does the SQL parse in the suite's dialect? Errors carry line and column.

A gold's ORDER BY / LIMIT, which decides ordered comparison and its tie groups, is read
by ``core.ordering`` (below grading: the variants' builder asks the same question)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from ..sqlite_quoting import sqlite_quoted_strings  # below grading: the variants' builder uses it too


@dataclass
class ParseResult:
    ok: bool
    dialect: str
    statements: int = 0
    error: dict[str, Any] | None = None  # {"message", "line", "col"}
    expression: exp.Expr | None = field(default=None, repr=False)
    _nodes: list[exp.Expr] | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def nodes(self) -> list[exp.Expr]:
        """``tree_nodes(expression)``, made once: the safety, grounding and stale layers
        each read every node of the prediction, and made the list three times a case."""
        if self._nodes is None:
            self._nodes = tree_nodes(self.expression) if self.expression is not None else []
        return self._nodes

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "dialect": self.dialect, "statements": self.statements, "error": self.error}


_COMMENT_ONLY = getattr(exp, "Semicolon", ())  # sqlglot >= 26.x

#: what sqlglot's own walk counts as a child node (``Expression`` before sqlglot 30)
_NODE: type[exp.Expr] = getattr(exp, "Expr", None) or exp.Expression


def tree_nodes(tree: exp.Expr) -> list[exp.Expr]:
    """Every node of ``tree`` in the order ``tree.walk()`` yields them (breadth first), as a
    list made in one pass. sqlglot's ``walk`` is a generator of generators, about three
    times the cost; the safety, grounding and stale layers each looked through the whole
    tree of every prediction that way."""
    out = [tree]
    append, expr = out.append, _NODE
    i = 0
    while i < len(out):
        for value in out[i].args.values():
            if isinstance(value, list):
                for v in value:
                    if isinstance(v, expr):
                        append(v)
            elif isinstance(value, expr):
                append(value)
        i += 1
    return out


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


def engine_sql(tree: exp.Expr | None, sql: str, dialect: str, engine_dialect: str) -> str:
    """``sql`` as the engine runs it: as written in the engine's own dialect, else transpiled
    (from SQLite, with its double-quoted strings made strings: ``sqlite_quoted_strings``)."""
    if dialect == engine_dialect or tree is None:
        return sql
    if dialect == "sqlite":
        tree = sqlite_quoted_strings(tree)
    return tree.sql(dialect=engine_dialect)
