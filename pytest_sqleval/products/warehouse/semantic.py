"""The Cube-style semantic layer of a suite (seed 002's format): load it, refuse a
malformed one with file, line and fix, and check it against the warehouse's catalog.

The format::

    version: 1
    dialect: duckdb
    snapshot_logical_date: 2025-11-30
    cubes:
      - name: revenue
        sql_table: finance.revenue_recognized
        description: ...
        filters:       [{sql: "posting_status = 'posted'"}]     # or plain strings
        measures:      [{name, sql, type, format?, description?}]
        dimensions:    [{name, sql, type, description?}]
        joins:         [{name: <another cube>, sql: "{revenue}.x = {orders}.x", relationship}]
        anti_patterns: ["free text for analysts"]
    deprecated_tables:                                          # optional
      - {table: finance.revenue_recognized_v1, use_instead: finance.revenue_recognized}

In ``sql`` snippets a bare column belongs to the cube's own table and ``{cube}`` names
another cube's table (``{CUBE}`` is the cube itself). ``load_layer`` checks the shape;
``check_layer`` checks every table and column the layer names against a catalog and
returns one problem line per mistake, each naming the cube.
"""
from __future__ import annotations

import datetime as _dt
import fnmatch
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...core import BadInputError

LAYER_NAME = "semantic_layer.yaml"
MEASURE_TYPES = ("sum", "count", "count_distinct", "count_distinct_approx", "avg", "min", "max", "number", "string",
                 "time", "boolean", "running_total")
DIMENSION_TYPES = ("time", "string", "number", "boolean", "geo")
RELATIONSHIPS = ("many_to_one", "one_to_many", "one_to_one", "belongs_to", "has_many", "has_one")
_TOP_KEYS = {"version", "dialect", "snapshot_logical_date", "cubes", "deprecated_tables", "description"}
_CUBE_KEYS = {"name", "sql_table", "description", "filters", "measures", "dimensions", "joins", "anti_patterns",
              "title", "public"}
_MEMBER_KEYS = {"name", "sql", "type", "format", "description", "title"}
_JOIN_KEYS = {"name", "sql", "relationship", "description"}
_FILTER_KEYS = {"sql", "description"}
_DEPRECATED_KEYS = {"table", "use_instead", "reason"}
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_FIX = "see the format at the top of pytest_sqleval/products/warehouse/semantic.py and cases/vantage/semantic_layer.yaml"


@dataclass(frozen=True)
class Member:
    """A measure or a dimension."""

    name: str
    sql: str
    type: str
    line: int
    format: str | None = None
    description: str = ""


@dataclass(frozen=True)
class Join:
    name: str  # the cube joined to
    sql: str
    relationship: str
    line: int
    description: str = ""


@dataclass(frozen=True)
class Filter:
    sql: str
    line: int
    description: str = ""


@dataclass(frozen=True)
class Cube:
    name: str
    sql_table: str
    line: int
    description: str = ""
    filters: tuple[Filter, ...] = ()
    measures: tuple[Member, ...] = ()
    dimensions: tuple[Member, ...] = ()
    joins: tuple[Join, ...] = ()
    anti_patterns: tuple[str, ...] = ()


@dataclass(frozen=True)
class DeprecatedTable:
    table: str
    line: int
    use_instead: str | None = None
    reason: str = ""


@dataclass(frozen=True)
class SemanticLayer:
    """A parsed layer; ``texts()`` is everything an agent would read, for the leakage check."""

    path: Path
    version: int
    dialect: str
    snapshot_logical_date: str
    cubes: tuple[Cube, ...]
    deprecated_tables: tuple[DeprecatedTable, ...] = ()
    description: str = ""
    source: str = field(default="", repr=False)

    def cube(self, name: str) -> Cube | None:
        return next((c for c in self.cubes if c.name == name), None)

    def texts(self) -> list[tuple[str, str]]:
        """(where, text) for every string of the layer: descriptions, anti-patterns, SQL."""
        out: list[tuple[str, str]] = []
        if self.description:
            out.append(("description", self.description))
        for c in self.cubes:
            w = f"cube {c.name}"
            out.append((f"{w}.description", c.description))
            out += [(f"{w}.filters", f.sql + " " + f.description) for f in c.filters]
            for m in c.measures + c.dimensions:
                out.append((f"{w}.{m.name}", " ".join(x for x in (m.name, m.sql, m.description) if x)))
            out += [(f"{w}.joins.{j.name}", j.sql + " " + j.description) for j in c.joins]
            out += [(f"{w}.anti_patterns[{i}]", a) for i, a in enumerate(c.anti_patterns)]
        out += [(f"deprecated_tables.{d.table}", f"{d.table} {d.use_instead or ''} {d.reason}") for d in self.deprecated_tables]
        return [(w, t.strip()) for w, t in out if t and t.strip()]


# -- YAML with line numbers ----------------------------------------------------------------
class _Map(dict[Any, Any]):
    """A mapping that remembers where it and each of its keys start (1-based lines)."""

    line: int = 0
    key_lines: dict[Any, int]  # a key may be a number or a boolean too


def _loader(path: Path) -> type:
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    def construct_mapping(loader: Any, node: Any) -> _Map:
        loader.flatten_mapping(node)
        out = _Map()
        out.line = node.start_mark.line + 1
        out.key_lines = {}
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            if not isinstance(key, (str, int, float, bool)) or key is None:
                raise BadInputError(path, f"a mapping key must be a plain word, got {key!r}", line=line, fix=_FIX)
            if key in out:
                raise BadInputError(path, f"duplicate key {key!r} (first on line {out.key_lines[key]})", line=line,
                                    fix="keep one of the two; YAML would silently drop the first")
            out[key] = loader.construct_object(value_node, deep=True)
            out.key_lines[key] = line
        return out

    Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, construct_mapping)
    return Loader


def _yaml_error(path: Path, exc: Exception) -> BadInputError:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    line = mark.line + 1 if mark is not None else None
    col = mark.column + 1 if mark is not None else None
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    context = getattr(exc, "context", None)
    what = f"not valid YAML: {problem}" + (f" ({context})" if context else "") + (f" at column {col}" if col else "")
    return BadInputError(path, what, line=line,
                         fix="check the indentation and quoting on this line and the one before; quote any "
                             "string that contains ': ', ' #', or starts with {, [, *, & or !")


# -- loading ---------------------------------------------------------------------------------
def load_layer(path: str | Path) -> SemanticLayer:
    """Parse and shape-check a layer; any mistake raises ``BadInputError`` with file, line and fix."""
    import yaml
    path = Path(path)
    from ...core import read_text
    try:
        text = read_text(path)  # UTF-8 with or without a BOM; another encoding: BadInputError with the line
    except OSError as exc:
        raise BadInputError(path, f"cannot read the semantic layer: {exc}", fix="point it at a UTF-8 YAML file") from None
    try:
        data = yaml.load(text, Loader=_loader(path))  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise _yaml_error(path, exc) from None
    if not isinstance(data, _Map):
        raise BadInputError(path, "the layer must be a YAML mapping with version, dialect, snapshot_logical_date and cubes",
                            line=1, fix=_FIX)
    _unknown_keys(path, data, _TOP_KEYS, "the layer")
    for key in ("version", "dialect", "snapshot_logical_date", "cubes"):
        if key not in data:
            raise BadInputError(path, f"missing top-level key '{key}'", line=1, field=key, fix=_FIX)
    version = data["version"]
    if not isinstance(version, int) or isinstance(version, bool) or version != 1:
        raise BadInputError(path, f"unsupported version {version!r}", line=data.key_lines["version"], field="version",
                            fix="write version: 1")
    dialect = _str(path, data, "dialect", "the layer")
    from sqlglot.dialects.dialect import Dialect
    try:
        Dialect.get_or_raise(dialect)
    except ValueError:
        raise BadInputError(path, f"unknown SQL dialect {dialect!r}", line=data.key_lines["dialect"], field="dialect",
                            fix="use a sqlglot dialect name such as duckdb") from None
    snap = data["snapshot_logical_date"]
    if isinstance(snap, str):
        try:
            snap = _dt.date.fromisoformat(snap)
        except ValueError:
            snap = None
    if not isinstance(snap, _dt.date) or isinstance(snap, _dt.datetime):
        raise BadInputError(path, f"snapshot_logical_date must be a date, got {data['snapshot_logical_date']!r}",
                            line=data.key_lines["snapshot_logical_date"], field="snapshot_logical_date",
                            fix="write it as YYYY-MM-DD, e.g. 2025-11-30")
    cubes_raw = data["cubes"]
    if not isinstance(cubes_raw, list) or not cubes_raw:
        raise BadInputError(path, "cubes must be a non-empty list", line=data.key_lines["cubes"], field="cubes", fix=_FIX)
    cubes = [_cube(path, raw, data.key_lines["cubes"]) for raw in cubes_raw]
    seen: dict[str, int] = {}
    for c in cubes:
        if c.name in seen:
            raise BadInputError(path, f"cube name {c.name!r} is used twice (first on line {seen[c.name]})", line=c.line,
                                field="name", fix="give every cube a unique name")
        seen[c.name] = c.line
    deprecated = []
    dep_raw = data.get("deprecated_tables", [])
    if not isinstance(dep_raw, list):
        raise BadInputError(path, "deprecated_tables must be a list", line=data.key_lines.get("deprecated_tables"),
                            field="deprecated_tables", fix="write - {table: schema.table, use_instead: schema.table}")
    for raw in dep_raw:
        if isinstance(raw, str):
            deprecated.append(DeprecatedTable(raw, data.key_lines["deprecated_tables"]))
            continue
        if not isinstance(raw, _Map):
            raise BadInputError(path, f"a deprecated table must be a name or a mapping, got {raw!r}",
                                line=data.key_lines["deprecated_tables"], field="deprecated_tables", fix=_FIX)
        _unknown_keys(path, raw, _DEPRECATED_KEYS, "a deprecated table")
        deprecated.append(DeprecatedTable(_str(path, raw, "table", "a deprecated table"), raw.line,
                                          _str(path, raw, "use_instead", "a deprecated table", required=False) or None,
                                          _str(path, raw, "reason", "a deprecated table", required=False)))
    description = _str(path, data, "description", "the layer", required=False)
    return SemanticLayer(path, version, dialect, snap.isoformat(), tuple(cubes), tuple(deprecated), description, text)


def _unknown_keys(path: Path, m: _Map, allowed: set[str], what: str) -> None:
    import difflib
    for key in m:
        if key not in allowed:
            close = difflib.get_close_matches(str(key), sorted(allowed), n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise BadInputError(path, f"unknown key {key!r} in {what}{hint}", line=m.key_lines.get(key, m.line),
                                field=str(key), fix=f"known keys: {', '.join(sorted(allowed))}")


def _str(path: Path, m: _Map, key: str, what: str, *, required: bool = True) -> str:
    val = m.get(key)
    if val is None and not required:
        return ""
    if isinstance(val, (int, float)) and not isinstance(val, bool) and key == "sql":
        val = str(val)
    if not isinstance(val, str) or not val.strip():
        raise BadInputError(path, f"{what}: '{key}' must be a non-empty string, got {val!r}",
                            line=m.key_lines.get(key, m.line), field=key, fix=f"write {key}: \"...\"")
    return val.strip()


def _list(path: Path, m: _Map, key: str, what: str) -> list[Any]:
    val = m.get(key, [])
    if val is None:
        return []
    if not isinstance(val, list):
        raise BadInputError(path, f"{what}: '{key}' must be a list", line=m.key_lines.get(key, m.line), field=key,
                            fix=f"write {key}: as a YAML list (lines starting with '- ')")
    return val


def _cube(path: Path, raw: Any, line: int) -> Cube:
    if not isinstance(raw, _Map):
        raise BadInputError(path, f"a cube must be a mapping, got {raw!r}", line=line, field="cubes", fix=_FIX)
    name = _str(path, raw, "name", "a cube")
    what = f"cube {name!r}"
    if not _NAME.match(name):
        raise BadInputError(path, f"{what}: the name must be an identifier", line=raw.key_lines["name"], field="name",
                            fix="use letters, digits and _ (it is used as {name} in join SQL)")
    _unknown_keys(path, raw, _CUBE_KEYS, what)
    sql_table = _str(path, raw, "sql_table", what)
    filters = []
    for f in _list(path, raw, "filters", what):
        if isinstance(f, str):
            filters.append(Filter(f, raw.key_lines["filters"]))
        elif isinstance(f, _Map):
            _unknown_keys(path, f, _FILTER_KEYS, f"a filter of {what}")
            filters.append(Filter(_str(path, f, "sql", f"a filter of {what}"), f.line,
                                  _str(path, f, "description", what, required=False)))
        else:
            raise BadInputError(path, f"{what}: a filter must be a string or {{sql: ...}}", line=raw.key_lines["filters"],
                                field="filters", fix="write - sql: \"column = 'value'\"")
    measures = tuple(_member(path, m, raw, "measures", what, MEASURE_TYPES) for m in _list(path, raw, "measures", what))
    dimensions = tuple(_member(path, m, raw, "dimensions", what, DIMENSION_TYPES)
                       for m in _list(path, raw, "dimensions", what))
    joins = []
    for j in _list(path, raw, "joins", what):
        if not isinstance(j, _Map):
            raise BadInputError(path, f"{what}: a join must be a mapping", line=raw.key_lines["joins"], field="joins",
                                fix="write - {name: other_cube, sql: \"{a}.id = {other_cube}.id\", relationship: many_to_one}")
        _unknown_keys(path, j, _JOIN_KEYS, f"a join of {what}")
        rel = _str(path, j, "relationship", f"a join of {what}")
        if rel not in RELATIONSHIPS:
            raise BadInputError(path, f"{what}: unknown relationship {rel!r}", line=j.key_lines["relationship"],
                                field="relationship", fix=f"use one of {', '.join(RELATIONSHIPS)}")
        joins.append(Join(_str(path, j, "name", f"a join of {what}"), _str(path, j, "sql", f"a join of {what}"), rel,
                          j.line, _str(path, j, "description", what, required=False)))
    anti = []
    for a in _list(path, raw, "anti_patterns", what):
        if not isinstance(a, str) or not a.strip():
            raise BadInputError(path, f"{what}: an anti-pattern must be a non-empty string, got {a!r}",
                                line=raw.key_lines["anti_patterns"], field="anti_patterns", fix="quote the sentence")
        anti.append(" ".join(a.split()))
    return Cube(name, sql_table, raw.line, " ".join(_str(path, raw, "description", what, required=False).split()),
                tuple(filters), measures, dimensions, tuple(joins), tuple(anti))


def _member(path: Path, raw: Any, cube: _Map, key: str, what: str, types: tuple[str, ...]) -> Member:
    kind = key[:-1]
    if not isinstance(raw, _Map):
        raise BadInputError(path, f"{what}: a {kind} must be a mapping, got {raw!r}", line=cube.key_lines[key],
                            field=key, fix=f"write - {{name: x, sql: column, type: {types[0]}}}")
    _unknown_keys(path, raw, _MEMBER_KEYS, f"a {kind} of {what}")
    name = _str(path, raw, "name", f"a {kind} of {what}")
    typ = _str(path, raw, "type", f"{kind} {name!r} of {what}")
    if typ not in types:
        raise BadInputError(path, f"{what}: {kind} {name!r} has unknown type {typ!r}", line=raw.key_lines["type"],
                            field="type", fix=f"use one of {', '.join(types)}")
    return Member(name, _str(path, raw, "sql", f"{kind} {name!r} of {what}"), typ, raw.line,
                  _str(path, raw, "format", what, required=False) or None,
                  " ".join(_str(path, raw, "description", what, required=False).split()))


# -- checking against the warehouse ----------------------------------------------------------------
Catalog = dict[str, dict[str, dict[str, str]]]  # {schema: {table: {column: type}}}
_TABLE_MENTION = re.compile(r"\b([a-z_][a-z0-9_]*)\.([a-z_][a-z0-9_]*)\b")


def _columns(catalog: Catalog, qualified: str) -> dict[str, str] | None:
    schema, _, table = qualified.lower().rpartition(".")
    for s, tables in catalog.items():
        if s.lower() == (schema or "main"):
            for t, cols in tables.items():
                if t.lower() == table:
                    return {c.lower(): typ for c, typ in cols.items()}
    return None


def check_layer(layer: SemanticLayer, catalog: Catalog, deprecated_patterns: tuple[str, ...] = ()) -> list[str]:
    """One line per table or column the layer names that the catalog does not have, each
    naming the cube (and the layer's file and line); plus deprecated tables of the
    catalog the layer fails to list, and cubes built on a deprecated table."""
    problems: list[str] = []
    where = str(layer.path)
    tables_by_cube = {c.name: c.sql_table for c in layer.cubes}
    schemas = {s.lower() for s in catalog}
    for cube in layer.cubes:
        at = f"{where}:{cube.line}: cube '{cube.name}'"
        own = _columns(catalog, cube.sql_table)
        if own is None:
            problems.append(f"{at}: sql_table {cube.sql_table} does not exist in the warehouse")
            continue
        if _matches(cube.sql_table, deprecated_patterns):
            problems.append(f"{at}: sql_table {cube.sql_table} is a deprecated table; build the cube on the live one")
        snippets = [(f"filter on line {f.line}", f.sql, f.line) for f in cube.filters]
        snippets += [(f"measure '{m.name}'", m.sql, m.line) for m in cube.measures]
        snippets += [(f"dimension '{d.name}'", d.sql, d.line) for d in cube.dimensions]
        snippets += [(f"join '{j.name}'", j.sql, j.line) for j in cube.joins]
        for j in cube.joins:
            if j.name not in tables_by_cube:
                problems.append(f"{where}:{j.line}: cube '{cube.name}': join '{j.name}' names no cube of the layer")
        for label, sql, line in snippets:
            for problem in _check_snippet(sql, cube, tables_by_cube, catalog, layer.dialect):
                problems.append(f"{where}:{line}: cube '{cube.name}': {label}: {problem}")
        for i, text in enumerate(cube.anti_patterns):
            for schema, table in _TABLE_MENTION.findall(text.lower()):
                if schema in schemas and _columns(catalog, f"{schema}.{table}") is None:
                    problems.append(f"{at}: anti-pattern {i + 1} names {schema}.{table}, which does not exist in the warehouse")
        for text in (cube.description, *(m.description for m in cube.measures + cube.dimensions)):
            for schema, table in _TABLE_MENTION.findall(text.lower()):
                if schema in schemas and _columns(catalog, f"{schema}.{table}") is None:
                    problems.append(f"{at}: its text names {schema}.{table}, which does not exist in the warehouse")
    listed = set()
    for d in layer.deprecated_tables:
        listed.add(d.table.lower().removeprefix("main."))
        if _columns(catalog, d.table) is None:
            problems.append(f"{where}:{d.line}: deprecated_tables: {d.table} does not exist in the warehouse")
        if d.use_instead and _columns(catalog, d.use_instead) is None:
            problems.append(f"{where}:{d.line}: deprecated_tables: {d.table}: use_instead {d.use_instead} does not exist")
        elif d.use_instead and _matches(d.use_instead, deprecated_patterns):
            problems.append(f"{where}:{d.line}: deprecated_tables: {d.table}: use_instead {d.use_instead} is itself deprecated")
    if deprecated_patterns:
        for schema, tables in sorted(catalog.items()):
            for table in sorted(tables):
                name = f"{schema}.{table}".lower().removeprefix("main.")
                if _matches(name, deprecated_patterns) and name not in listed:
                    problems.append(f"{where}: deprecated_tables does not list {name} (it matches the suite's "
                                    f"deprecated patterns); add it with use_instead")
    return problems


def _matches(name: str, patterns: tuple[str, ...]) -> bool:
    name = name.lower()
    bare = name.rsplit(".", 1)[-1]
    return any(fnmatch.fnmatchcase(name, p.lower()) or ("." not in p and fnmatch.fnmatchcase(bare, p.lower()))
               for p in patterns)


def _check_snippet(sql: str, cube: Cube, tables_by_cube: dict[str, str], catalog: Catalog, dialect: str) -> list[str]:
    """Tables and columns one SQL snippet names that do not exist."""
    import sqlglot
    from sqlglot import exp
    problems = []
    refs = set(_PLACEHOLDER.findall(sql))
    for ref in sorted(refs):
        if ref != "CUBE" and ref not in tables_by_cube:
            problems.append(f"{{{ref}}} names no cube of the layer")
    aliases = {ref: f"__c_{ref.lower()}" for ref in refs}
    text = _PLACEHOLDER.sub(lambda m: aliases[m.group(1)], sql)
    try:
        tree = sqlglot.parse_one(f"SELECT {text}" if not text.lstrip().upper().startswith(("SELECT", "WITH")) else text,
                                 read=dialect)
    except Exception as exc:  # sqlglot raises several error types
        return problems + [f"SQL does not parse: {str(exc).splitlines()[0]}"]
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    local_aliases = set()
    for t in tree.find_all(exp.Table):
        qualified = ".".join(p for p in (t.db, t.name) if p)
        local_aliases.add((t.alias_or_name or "").lower())
        if t.name.lower() in ctes and not t.db:
            continue
        if _columns(catalog, qualified) is None:
            problems.append(f"table {qualified} does not exist in the warehouse")
    by_alias = {alias: (cube.name if ref == "CUBE" else ref, cube.sql_table if ref == "CUBE" else tables_by_cube[ref])
                for ref, alias in aliases.items() if ref == "CUBE" or ref in tables_by_cube}
    own = _columns(catalog, cube.sql_table) or {}
    for col in tree.find_all(exp.Column):
        if isinstance(col.this, exp.Star):
            continue
        name = col.name.lower()
        qual = (col.table or "").lower()
        if not qual:
            if name not in own and not local_aliases - {""}:
                problems.append(f"column {col.name} does not exist in {cube.sql_table}")
            continue
        if qual in by_alias:
            ref, table = by_alias[qual]
            cols = _columns(catalog, table)
            if cols is not None and name not in cols:
                problems.append(f"column {col.name} does not exist in {table} (cube '{ref}')")
    return problems
