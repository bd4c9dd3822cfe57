"""The semantic layer as the model reads it: per-table notes (a2: descriptions, filters,
measures, dimensions, joins) and the warnings of a3 (anti-patterns, deprecated tables).

The layer itself is parsed by :mod:`pytest_sqleval.products.warehouse.semantic` (seed 002's
Cube-style format); this module only renders it."""
from __future__ import annotations

import re
from typing import Any, Iterable

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def norm_table(name: str) -> str:
    name = name.strip().lower()
    return name[5:] if name.startswith("main.") else name


def cubes_by_table(layer: Any) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for cube in getattr(layer, "cubes", ()):
        out.setdefault(norm_table(cube.sql_table), []).append(cube)
    return out


def _join_sql(layer: Any, cube: Any, sql: str) -> str:
    tables: dict[str, str] = {c.name: c.sql_table for c in layer.cubes}

    def sub(m: re.Match[str]) -> str:
        name = m.group(1)
        if name == "CUBE":
            table: str = cube.sql_table
            return table
        return tables.get(name, name)
    return " ".join(_PLACEHOLDER.sub(sub, sql).split())


def join_neighbours(layer: Any, table: str) -> list[str]:
    """Tables the layer joins to ``table`` (either direction), in the layer's order."""
    if layer is None:
        return []
    tables = {c.name: norm_table(c.sql_table) for c in layer.cubes}
    t = norm_table(table)
    out: list[str] = []
    for cube in layer.cubes:
        own = norm_table(cube.sql_table)
        for j in cube.joins:
            other = tables.get(j.name)
            if other is None:
                continue
            if own == t and other != t and other not in out:
                out.append(other)
            elif other == t and own != t and own not in out:
                out.append(own)
    return out


def table_notes(layer: Any, table: str, joins: bool = True) -> str:
    """The a2 notes for one table: each cube built on it, as SQL comments (its join paths
    only with ``joins``)."""
    lines: list[str] = []
    for cube in cubes_by_table(layer).get(norm_table(table), []):
        lines.append(f"-- semantic layer, cube `{cube.name}` on {cube.sql_table}:")
        if cube.description:
            lines.append(f"--   {cube.description}")
        for f in cube.filters:
            lines.append(f"--   always filter: {f.sql}" + (f"  ({_flat(f.description)})" if f.description else ""))
        for m in cube.measures:
            expr = m.sql if m.type in ("number", "string", "time", "boolean") else f"{m.type}({m.sql})"
            lines.append(f"--   measure {m.name} = {expr}" + (f" [{m.format}]" if m.format else "")
                         + (f"  ({_flat(m.description)})" if m.description else ""))
        for d in cube.dimensions:
            lines.append(f"--   dimension {d.name} = {d.sql} ({d.type})"
                         + (f"  ({_flat(d.description)})" if d.description else ""))
        for j in cube.joins if joins else ():
            lines.append(f"--   join to `{j.name}`: {_join_sql(layer, cube, j.sql)} ({j.relationship})"
                         + (f"  ({_flat(j.description)})" if j.description else ""))
    return "\n".join(lines)


def deprecated_note(layer: Any, table: str) -> str:
    for d in getattr(layer, "deprecated_tables", ()):
        if norm_table(d.table) == norm_table(table):
            note = "-- DEPRECATED (semantic layer): never query this table"
            if d.use_instead:
                note += f"; use {d.use_instead} instead"
            return note + (f" ({_flat(d.reason)})" if d.reason else "")
    return ""


def warnings_lines(layer: Any, selected: Iterable[str]) -> list[str]:
    """a3's warnings relevant to the selected tables: the anti-patterns of their cubes or
    naming them, then the deprecated tables among them or replaced by them."""
    chosen = {norm_table(t) for t in selected}
    lines: list[str] = []
    seen: set[str] = set()
    for cube in getattr(layer, "cubes", ()):
        own = norm_table(cube.sql_table) in chosen
        for text in cube.anti_patterns:
            mentioned = any(t in text.lower() for t in chosen if "." in t or len(t) > 5)
            if (own or mentioned) and text not in seen:
                seen.add(text)
                lines.append(f"- [{cube.name}] {_flat(text)}")
    for d in getattr(layer, "deprecated_tables", ()):
        if norm_table(d.table) in chosen or (d.use_instead and norm_table(d.use_instead) in chosen):
            line = f"- {d.table} is deprecated: never query it" + (f"; use {d.use_instead}" if d.use_instead else "")
            if d.reason:
                line += f" ({_flat(d.reason)})"
            if line not in seen:
                seen.add(line)
                lines.append(line)
    return lines


def retrieval_text(layer: Any, table: str) -> str:
    """The layer's words about a table, added to its retrieval document (a2, a3)."""
    parts: list[str] = []
    for cube in cubes_by_table(layer).get(norm_table(table), []):
        parts += [cube.name, cube.description]
        parts += [f"{m.name} {m.description}" for m in cube.measures + cube.dimensions]
        parts += [f.description for f in cube.filters]
    return " ".join(p for p in parts if p)


def _flat(text: str) -> str:
    return " ".join(str(text).split())
