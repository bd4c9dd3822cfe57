"""A canonical text for every value a query can read, and the content hash built on it.

A content hash pins a database: the Vantage warehouse's scales, the gold answers frozen
by ``validate``, the gold-answer cache. So it must not change when the engine does. The
first definition hashed ``CAST(row AS VARCHAR)``, the engine's own rendering of a row,
which a release may change (float digits, decimal trailing zeros, struct syntax). Here
every value is rendered by rules this module states, from exact quantities:

=================  ==========================================================
type               field text
=================  ==========================================================
NULL               ``N``
BOOLEAN            ``t`` / ``f``
integers           decimal digits (``-`` sign)
DECIMAL(p, s)      ``<integer part>:<fraction in units of 10**-s>``, both exact
                   integers: -393.90 -> ``-393:-90``, -0.50 -> ``0:-50``; s = 0:
                   the integer
DOUBLE, FLOAT      ``nan``, ``inf``, ``-inf``, ``0`` (either sign), else C's
                   ``%.17g`` (17 significant digits: one text per double)
DATE               days since 1970-01-01; ``inf`` / ``-inf``
TIMESTAMP[TZ]      microseconds since the epoch (UTC; ``_NS``: nanoseconds)
TIME               microseconds since midnight
VARCHAR, ENUM      ``<byte length>:<text>``
BLOB               upper-case hex
UUID               its 36-character text, length-prefixed like VARCHAR
LIST, ARRAY        ``[`` fields separated by US (0x1f) ``]``
STRUCT             ``{`` fields in declared order separated by US ``}``
MAP                the LIST of its (key, value) STRUCT entries
anything else      the engine's text, length-prefixed (INTERVAL, TIMETZ, UNION,
                   BIT, BIGNUM: none is in a bundled database)
=================  ==========================================================

A row is its fields joined by US; its hash is the MD5 of that text, read as two 64-bit
unsigned integers (hex digits 1-16 and 17-32). A table contributes its canonical column
types, row count and the two sums of those integers over its rows (so row order and
thread count do not matter). ``render_field`` is the same rule in Python: the SQLite
engine hashes with it, and the tests check the DuckDB SQL against it.
"""
from __future__ import annotations

import datetime as dt
import decimal
import hashlib
from typing import Any, Iterable

US = "\x1f"
_EPOCH_DATE = dt.date(1970, 1, 1)
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
_INTEGERS = {"tinyint", "smallint", "integer", "bigint", "hugeint",
             "utinyint", "usmallint", "uinteger", "ubigint", "uhugeint"}
_TEXTS = {"varchar", "enum", "uuid"}


# -- Python: the reference rule --------------------------------------------------------
def render_field(value: Any) -> str:
    """The canonical field text of a Python value as a driver returns it."""
    if value is None:
        return "N"
    if isinstance(value, bool):
        return "t" if value else "f"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _float_text(value)
    if isinstance(value, decimal.Decimal):
        whole = int(value)  # truncates toward zero, exactly
        exponent = value.as_tuple().exponent
        scale = -exponent if isinstance(exponent, int) and exponent < 0 else 0
        return f"{whole}:{int((value - whole).scaleb(scale))}" if scale else str(whole)
    if isinstance(value, str):
        return f"{len(value.encode('utf-8'))}:{value}"
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex().upper()
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.timezone.utc)
        delta = value - _EPOCH
        return str((delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds)
    if isinstance(value, dt.date):
        return str((value - _EPOCH_DATE).days)
    if isinstance(value, dt.time):
        return str(((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000 + value.microsecond)
    if isinstance(value, dict):
        return "{" + US.join(render_field(v) for v in value.values()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + US.join(render_field(v) for v in value) + "]"
    text = str(value)
    return f"{len(text.encode('utf-8'))}:{text}"


def _float_text(value: float) -> str:
    if value != value:
        return "nan"
    if value in (float("inf"), float("-inf")):
        return "inf" if value > 0 else "-inf"
    if value == 0:
        return "0"
    return "%.17g" % value


def row_lanes(fields: Iterable[str]) -> tuple[int, int]:
    """The two 64-bit integers of a row's MD5."""
    digest = hashlib.md5(US.join(fields).encode("utf-8")).hexdigest()
    return int(digest[:16], 16), int(digest[16:], 16)


# -- DuckDB: the same rule in SQL ------------------------------------------------------
def duckdb_type_name(t: Any) -> str:
    """A canonical name for a ``duckdb.DuckDBPyType``, built from its structure."""
    kind: str = t.id
    if kind == "decimal":
        params = dict(t.children)
        return f"decimal({params['precision']},{params['scale']})"
    if kind == "list":
        return f"list<{duckdb_type_name(dict(t.children)['child'])}>"
    if kind == "array":
        params = dict(t.children)
        return f"array<{duckdb_type_name(params['child'])},{params['size']}>"
    if kind in ("struct", "union"):
        return f"{kind}<" + ",".join(f"{n}:{duckdb_type_name(c)}" for n, c in t.children) + ">"
    if kind == "map":
        params = dict(t.children)
        return f"map<{duckdb_type_name(params['key'])},{duckdb_type_name(params['value'])}>"
    if kind == "enum":
        return "enum<" + ",".join(render_field(v) for v in dict(t.children).get("values", [])) + ">"
    return kind


def duckdb_field_sql(expr: str, t: Any, depth: int = 0) -> str:
    """SQL that renders ``expr`` (of DuckDB type ``t``) as its canonical field text."""
    return f"CASE WHEN ({expr}) IS NULL THEN 'N' ELSE {_duckdb_value_sql(expr, t, depth)} END"


def _duckdb_value_sql(x: str, t: Any, depth: int) -> str:
    kind = t.id
    if kind == "boolean":
        return f"CASE WHEN {x} THEN 't' ELSE 'f' END"
    if kind in _INTEGERS:
        return f"CAST({x} AS VARCHAR)"
    if kind == "decimal":
        scale = dict(t.children)["scale"]
        if scale == 0:
            return f"CAST(CAST({x} AS HUGEINT) AS VARCHAR)"
        if scale <= 18:
            return (f"CAST(CAST(trunc({x}) AS HUGEINT) AS VARCHAR) || ':' || "
                    f"CAST(CAST(({x} - trunc({x})) * {10 ** scale} AS BIGINT) AS VARCHAR)")
    if kind in ("float", "double"):
        d = f"CAST({x} AS DOUBLE)"
        return (f"CASE WHEN isnan({d}) THEN 'nan' WHEN isinf({d}) THEN (CASE WHEN {d} > 0 THEN 'inf' ELSE '-inf' END) "
                f"WHEN {d} = 0 THEN '0' ELSE printf('%.17g', {d}) END")
    if kind == "date":
        return (f"CASE WHEN isinf({x}) THEN (CASE WHEN {x} > DATE '1970-01-01' THEN 'inf' ELSE '-inf' END) "
                f"ELSE CAST(date_diff('day', DATE '1970-01-01', {x}) AS VARCHAR) END")
    if kind in ("timestamp", "timestamp_s", "timestamp_ms", "timestamp with time zone", "timestamp_ns"):
        epoch = "epoch_ns" if kind == "timestamp_ns" else "epoch_us"
        return (f"CASE WHEN isinf({x}) THEN (CASE WHEN epoch_us({x}) > 0 THEN 'inf' ELSE '-inf' END) "
                f"ELSE CAST({epoch}({x}) AS VARCHAR) END")
    if kind == "time":
        return f"CAST(date_diff('microsecond', TIME '00:00:00', {x}) AS VARCHAR)"
    if kind in _TEXTS:
        s = f"CAST({x} AS VARCHAR)"
        return f"CAST(strlen({s}) AS VARCHAR) || ':' || {s}"
    if kind == "blob":
        return f"hex({x})"
    if kind in ("list", "array"):
        child = dict(t.children)["child"]
        var = f"e{depth}"
        items = f"CAST({x} AS {child}[])" if kind == "array" else x
        inner = duckdb_field_sql(var, child, depth + 1)
        return f"'[' || array_to_string(list_transform({items}, lambda {var}: {inner}), chr(31)) || ']'"
    if kind == "struct":
        parts = [duckdb_field_sql(f"struct_extract({x}, {_sql_str(name)})", child, depth + 1) for name, child in t.children]
        return "'{' || " + (" || chr(31) || ".join(parts) if parts else "''") + " || '}'"
    if kind == "map":
        import duckdb
        params = dict(t.children)
        entry = duckdb.struct_type({"key": params["key"], "value": params["value"]})
        return _duckdb_value_sql(f"map_entries({x})", duckdb.list_type(entry), depth)
    s = f"CAST({x} AS VARCHAR)"  # documented fallback: the engine's own text
    return f"CAST(strlen({s}) AS VARCHAR) || ':' || {s}"


def duckdb_lanes_sql(relation: str, columns: list[tuple[str, Any]]) -> str:
    """``SELECT count(*), sum(lane 1), sum(lane 2)`` over ``relation``'s canonical rows."""
    fields = [duckdb_field_sql(_ident(name), t) for name, t in columns] or ["''"]
    row = " || chr(31) || ".join(fields)
    return ("SELECT count(*), "
            "coalesce(sum(CAST(CAST('0x' || substr(h, 1, 16) AS UBIGINT) AS HUGEINT)), 0), "
            "coalesce(sum(CAST(CAST('0x' || substr(h, 17, 16) AS UBIGINT) AS HUGEINT)), 0) "
            f"FROM (SELECT md5({row}) AS h FROM {relation})")


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _sql_str(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
