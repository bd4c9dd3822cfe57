"""A parsed query's tree as plain tuples, for the engine process's structural diff.

Why: the engine process makes the prediction's structural diff (``engine_side.structure_on_wire``)
and, given only the text, parsed it a second time. With pure-Python sqlglot (the README's
install) that parse is most of the diff's cost; rebuilding the tree from this form costs a
fraction of it (BENCHMARKS 12.9). The form holds node classes by name, argument values
(strings, numbers, booleans, None, data-type names) and child positions, nothing else; the
reader builds only classes of ``sqlglot.expressions`` and refuses anything it cannot read
(None), and the engine then parses the text as before. The tree serves the diff alone:
what runs is the text, and the engine's sandbox checks it itself."""
from __future__ import annotations

import sys
from typing import Any

from sqlglot import exp

from .parse import tree_nodes

#: the tags of an argument's value: a primitive, one child (its position), a list of children,
#: a data type (its name), a list of primitives
_PRIM, _CHILD, _CHILDREN, _DTYPE, _PRIMS = range(5)
_PRIMITIVE = (str, bool, int, float, type(None))
_PRIM_TYPES = frozenset(_PRIMITIVE)  # exactly these types: a str subclass is not written
_POSITIONS = frozenset({"line", "col", "start", "end"})  # the parser's source positions: not the diff's
_DTYPE_CLASS = type(exp.DataType.Type.INT)
_NODE: type[exp.Expr] = getattr(exp, "Expr", None) or exp.Expression

#: whether the send layer ships the tree: where sqlglot runs as pure Python (the README's install),
#: the engine's parse (0.25 ms a Spider prediction) costs more than twice writing, sending and reading
#: this form (0.11 ms); compiled (the ``fast`` extra) it costs 0.1 ms, no more than the form would, and
#: the writing would land on the grading process, pytest's critical path
SHIP_TREE = str(getattr(sys.modules[_NODE.__module__], "__file__", "")).endswith(".py")

Wire = tuple[tuple[Any, ...], ...]


def to_wire(tree: exp.Expr, nodes: list[exp.Expr] | None = None) -> Wire | None:
    """``tree`` as a tuple of nodes, children before their parents, the root last; each node
    ``(class name, (key, tag, value, ...), meta or None, comments or None)``. ``nodes``:
    ``tree_nodes(tree)`` when the caller has it (``ParseResult.nodes``). None when a value is
    of a kind the form does not hold (the engine parses the text instead)."""
    if nodes is None:
        nodes = tree_nodes(tree)
    last = len(nodes) - 1  # parents come before children: reversed, every child comes before its parent
    at = {id(node): last - i for i, node in enumerate(nodes)}
    out: list[tuple[Any, ...]] = []
    prim, child, dtype = _PRIM_TYPES, _NODE, _DTYPE_CLASS
    for node in reversed(nodes):
        items: list[Any] = []
        for key, value in node.args.items():
            kind = type(value)
            if kind in prim:
                items += (key, _PRIM, value)
            elif kind is list:
                if all(isinstance(v, child) for v in value):
                    items += (key, _CHILDREN, tuple([at[id(v)] for v in value]))
                elif all(type(v) in prim for v in value):
                    items += (key, _PRIMS, tuple(value))
                else:
                    return None
            elif isinstance(value, child):
                items += (key, _CHILD, at[id(value)])
            elif kind is dtype:
                items += (key, _DTYPE, value.name)
            else:
                return None
        meta = node._meta
        if meta:
            meta = {k: v for k, v in meta.items() if k not in _POSITIONS} or None
            if meta is not None and not all(type(v) in prim for v in meta.values()):
                return None
        out.append((type(node).__name__, tuple(items), meta or None, None if node.comments is None else list(node.comments)))
    return tuple(out)


_CLASSES: dict[str, type[exp.Expr] | None] = {}


def _class(name: Any) -> type[exp.Expr] | None:
    """The ``sqlglot.expressions`` node class of that name, or None: nothing else is built."""
    if name not in _CLASSES:
        if not isinstance(name, str) or len(_CLASSES) > 4096:
            return None
        cls = getattr(exp, name, None)
        _CLASSES[name] = cls if isinstance(cls, type) and issubclass(cls, _NODE) else None
    return _CLASSES[name]


def from_wire(wire: Any) -> exp.Expr | None:
    """The tree ``to_wire`` wrote, or None for anything that is not such a form: a class
    outside ``sqlglot.expressions``, a position that is not an earlier node's, a node used
    twice, a value of another kind, a malformed entry."""
    if not isinstance(wire, tuple) or not wire:
        return None
    built: list[exp.Expr] = []
    used: set[int] = set()
    try:
        for entry in wire:
            name, items, meta, comments = entry
            cls = _class(name)
            if cls is None or not isinstance(items, tuple) or len(items) % 3:
                return None
            args: dict[str, Any] = {}
            for i in range(0, len(items), 3):
                key, tag, value = items[i], items[i + 1], items[i + 2]
                if not isinstance(key, str):
                    return None
                if tag == _PRIM and isinstance(value, _PRIMITIVE):
                    args[key] = value
                elif tag == _CHILD:
                    args[key] = _take(built, used, value)
                elif tag == _CHILDREN and isinstance(value, tuple):
                    args[key] = [_take(built, used, v) for v in value]
                elif tag == _DTYPE and isinstance(value, str):
                    args[key] = _DTYPE_CLASS[value]
                elif tag == _PRIMS and isinstance(value, tuple) and all(isinstance(v, _PRIMITIVE) for v in value):
                    args[key] = list(value)
                else:
                    return None
            node = cls(**args)
            if meta is not None:
                if not isinstance(meta, dict) or not all(isinstance(k, str) for k in meta):
                    return None
                node._meta = dict(meta)
            if comments is not None:
                if not isinstance(comments, list) or not all(isinstance(c, str) for c in comments):
                    return None
                node.comments = list(comments)
            built.append(node)
    except Exception:  # a malformed entry, or a node class that refuses these arguments
        return None
    if len(used) != len(built) - 1:  # every node but the root is some node's child, once
        return None
    return built[-1]


class _Refused(Exception):
    """A child position that is not an earlier, unused node's."""


def _take(built: list[exp.Expr], used: set[int], position: Any) -> exp.Expr:
    if type(position) is not int or not 0 <= position < len(built) or position in used:
        raise _Refused(position)
    used.add(position)
    return built[position]
