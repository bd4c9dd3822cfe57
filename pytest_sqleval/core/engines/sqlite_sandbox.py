"""A SQLite connection that model-generated SQL cannot escape (standard library only).

- **Read-only** at three levels: a URI connection with ``mode=ro``; an authorizer that
  allows reading, functions and recursive CTEs and denies everything else (writes,
  schema changes, transactions, ``ATTACH``/``DETACH``, every ``PRAGMA``,
  ``load_extension``); and ``SQLITE_LIMIT_ATTACHED = 0``.
- **Bounded**: a progress handler aborts a query past its time limit (CPU time, and a
  wall bound at ten times it: ``engines.watchdog.QueryTime``; a timer calling
  ``interrupt()`` backs it up from the process's one watchdog thread, and the engine host
  kills the process after that);
  ``hard_heap_limit`` caps memory, temporary storage stays in that memory; rows and
  bytes fetched are capped like DuckDB's.
- **Typed**: SQLite is dynamically typed, so each result column's Arrow type is inferred
  from its values: integers -> int64; integers mixed with reals -> float64; text ->
  string; blobs -> binary; only NULLs (or no rows) -> null. A column mixing text with
  numbers becomes ``struct<number: double, text: string, blob: binary>`` with exactly one
  field set per row, so the text '1' never equals the number 1.
- **Text that is not UTF-8** (Spider and BIRD files hold some) is kept as its bytes, never
  decoded lossily: a text column holding any becomes ``binary`` (every text in it as its
  UTF-8 bytes), so two different byte strings stay different and equal ones equal; in a
  mixed column it goes to the ``blob`` field. The content hash reads text as bytes too.
- **Errors** are mapped to the same taxonomy as DuckDB's (``classify_error``).
"""
from __future__ import annotations

import hashlib
import re
import sqlite3
import time
from pathlib import Path
from typing import Any

import pyarrow as pa

from .base import Limits
from .shared import parse_size
from .canonical import US, render_field, row_lanes
from .watchdog import WATCHDOG, QueryTime
from .base import (ExecError, ExecOutcome, elapsed_ms as _ms, fetch_batches, fetch_capped, flat_rows, refusal,
                   resource_error, row_batch_size, timed)

ENGINE_NAME = "sqlite"
ENGINE_VERSION = sqlite3.sqlite_version
PROGRESS_STEPS = 20_000  # VM instructions between deadline checks (about a millisecond)
FETCH_BATCH = 4096
MIXED_TYPE = pa.struct([("number", pa.float64()), ("text", pa.string()), ("blob", pa.binary())])

_ALLOWED_ACTIONS = frozenset({sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION,
                              getattr(sqlite3, "SQLITE_RECURSIVE", 33)})
DENIED_FUNCTIONS = frozenset({"load_extension", "readfile", "writefile", "edit", "fts3_tokenizer",
                              "zipfile", "sqlar_compress", "sqlar_uncompress", "shell_exec"})

# (category, substrings of SQLite's message), first match wins
_CATEGORIES: list[tuple[str, tuple[str, ...]]] = [
    ("timeout", ("interrupted",)),
    ("permission_error", ("not authorized", "authorization denied", "readonly database", "read-only", "prohibited",
                          "too many attached databases", "access to", "cannot execute",
                          "you can only execute one statement")),
    ("missing_table", ("no such table", "no such view", "unknown database", "no such schema")),
    ("missing_column", ("no such column",)),
    ("missing_function", ("no such function",)),
    ("ambiguous_reference", ("ambiguous column name",)),
    ("invalid_aggregation", ("misuse of aggregate", "misuse of window function", "aggregate functions are not allowed",
                             "group by clause is required before having", "not allowed in the group by",
                             "window functions are not allowed")),
    ("division_by_zero", ("division by zero", "divide by zero")),
    ("type_mismatch", ("datatype mismatch", "row value misused", "sub-select returns", "wrong number of arguments",
                       "do not have the same number of result columns", "must return only one column")),
    ("resource_exceeded", ("out of memory", "string or blob too big", "too many terms", "too many columns",
                           "expression tree is too large", "database or disk is full", "integer overflow")),
    ("syntax_error", ("syntax error", "incomplete input", "unrecognized token")),
]


def classify_error(exc: BaseException) -> ExecError:
    """Map a sqlite3 exception to the runtime error taxonomy of DESIGN.md."""
    msg = str(exc).strip() or type(exc).__name__
    low = msg.lower()
    code = getattr(exc, "sqlite_errorname", None) or ""
    category = "unknown_error"
    if code == "SQLITE_INTERRUPT":
        category = "timeout"
    elif code in ("SQLITE_AUTH", "SQLITE_READONLY", "SQLITE_PERM"):
        category = "permission_error"
    elif code in ("SQLITE_NOMEM", "SQLITE_TOOBIG", "SQLITE_FULL"):
        category = "resource_exceeded"
    else:
        for cat, needles in _CATEGORIES:
            if any(n in low for n in needles):
                category = cat
                break
    missing = re.search(r"no such function: (\S+)", msg) if category == "missing_function" else None
    return ExecError(category=category, message=msg[:2000], exception=type(exc).__name__,
                     subject=missing.group(1) if missing else None)


#: authorizer action codes by name, to name what a denial refused
_ACTIONS = {getattr(sqlite3, n): n[7:].replace("_", " ") for n in (
    "SQLITE_CREATE_INDEX", "SQLITE_CREATE_TABLE", "SQLITE_CREATE_TEMP_INDEX", "SQLITE_CREATE_TEMP_TABLE",
    "SQLITE_CREATE_TEMP_TRIGGER", "SQLITE_CREATE_TEMP_VIEW", "SQLITE_CREATE_TRIGGER", "SQLITE_CREATE_VIEW",
    "SQLITE_DELETE", "SQLITE_DROP_INDEX", "SQLITE_DROP_TABLE", "SQLITE_DROP_TEMP_INDEX", "SQLITE_DROP_TEMP_TABLE",
    "SQLITE_DROP_TEMP_TRIGGER", "SQLITE_DROP_TEMP_VIEW", "SQLITE_DROP_TRIGGER", "SQLITE_DROP_VIEW",
    "SQLITE_INSERT", "SQLITE_PRAGMA", "SQLITE_TRANSACTION", "SQLITE_UPDATE", "SQLITE_ATTACH",
    "SQLITE_DETACH", "SQLITE_ALTER_TABLE", "SQLITE_REINDEX", "SQLITE_ANALYZE", "SQLITE_CREATE_VTABLE",
    "SQLITE_DROP_VTABLE", "SQLITE_SAVEPOINT") if hasattr(sqlite3, n)}


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


_STORAGE_CLASS = {int: "i", float: "r", str: "t", bytes: "b"}


class InvalidText(bytes):
    """A TEXT value whose bytes are not valid UTF-8, as the connection returns it: its
    bytes, unchanged (a lossy decode would make two different values equal)."""

    __slots__ = ()


def decode_text(raw: bytes) -> "str | InvalidText":
    """The connection's ``text_factory``: UTF-8 text as ``str``, anything else as its bytes."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return InvalidText(raw)


#: a table's SQL that changes what a read answers (a column's collation; a generated column,
#: which ``pragma_table_info`` leaves out): such a table's SQL, as written, is hashed too
_READ_DDL = re.compile(r"\bCOLLATE\b|\bAS\s*\(", re.I)
ROW_HASH_ARGS = 100  # columns per call: SQLite caps a function's arguments (127 by default)


def _row_fields(encoding: str) -> Any:
    """``sqleval_row_fields(v1, v2, ...)``: one row's canonical field texts joined by US, each
    value's text (``engines.canonical``) tagged with its storage class (SQLite is dynamically
    typed, so the integer 1, the real 1.0 and the text '1' must stay apart). sqlite3 cannot
    pass a function text that is not UTF-8, so the SQL passes text as its bytes (``CAST(c
    AS BLOB)``) and a blob as its ``hex()``. Text is decoded strictly: valid text is ``t`` +
    its canonical text, as when text was passed as text (those databases keep their hash);
    text not valid in the database's encoding is ``x`` + its bytes in hex, so it is hashed,
    and two different byte strings differ."""
    codec = {"UTF-8": "utf-8", "UTF-16le": "utf-16-le", "UTF-16be": "utf-16-be"}.get(encoding, "utf-8")

    def row_fields(*values: Any) -> str:
        fields = []
        for v in values:
            if v is None:
                fields.append("N")
            elif isinstance(v, bytes):  # a text value's bytes
                try:
                    fields.append("t" + render_field(v.decode(codec)))
                except UnicodeDecodeError:
                    fields.append("x" + v.hex().upper())
            elif isinstance(v, str):  # a blob's hex(), upper-case: render_field's text of a blob
                fields.append("b" + v)
            else:
                fields.append(_STORAGE_CLASS.get(type(v), "?") + render_field(v))
        return US.join(fields)
    return row_fields


def _row_hash(*parts: str) -> int:
    """``sqleval_row_hash(fields1, fields2, ...)``: a 63-bit hash of one row, the first lane of
    ``canonical.row_lanes`` over its field texts (given in parts of ``ROW_HASH_ARGS`` columns)."""
    return row_lanes(parts)[0] >> 1


class SQLiteSandbox:
    """One read-only, locked-down SQLite database; ``run`` executes one candidate query."""

    name = ENGINE_NAME
    version = ENGINE_VERSION
    dialect = "sqlite"

    def __init__(self, path: str | Path, limits: Limits = Limits()) -> None:
        self.path = Path(path)
        self.limits = limits
        if not self.path.is_file():
            raise FileNotFoundError(f"database file {self.path} does not exist")
        self._trusted = False  # True only while the sandbox runs its own introspection SQL
        self._denial: tuple[str, str] | None = None  # the rule the authorizer last refused by, and why
        self._clock: QueryTime | None = None  # the running query's time limit, for the progress handler
        self._conn = self._connect()

    def _connect(self) -> sqlite3.Connection:
        uri = self.path.resolve().as_uri() + "?mode=ro"
        conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False, cached_statements=0)
        heap = parse_size(self.limits.memory_limit)
        for pragma in (f"PRAGMA hard_heap_limit={heap}", "PRAGMA temp_store=MEMORY", "PRAGMA trusted_schema=OFF",
                       "PRAGMA query_only=ON"):
            conn.execute(pragma)
        conn.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
        conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, min(conn.getlimit(sqlite3.SQLITE_LIMIT_LENGTH), 100_000_000))
        conn.set_authorizer(self._authorize)
        conn.set_progress_handler(self._progress, PROGRESS_STEPS)
        conn.text_factory = decode_text  # Spider/BIRD files hold some invalid UTF-8: kept as bytes
        return conn

    def _authorize(self, action: int, arg1: Any, arg2: Any, dbname: Any, source: Any) -> int:
        if self._trusted:
            return sqlite3.SQLITE_OK
        if action not in _ALLOWED_ACTIONS:
            what = " ".join(str(p) for p in (_ACTIONS.get(action, f"action {action}"), arg1) if p)
            self._denial = self._denial or ("not_a_query", f"{what} is not allowed; only SELECT / WITH queries")
            return sqlite3.SQLITE_DENY
        if action == sqlite3.SQLITE_FUNCTION and str(arg2 or "").lower() in DENIED_FUNCTIONS:
            self._denial = self._denial or ("file_or_system_access", f"function {str(arg2).lower()}() is not allowed")
            return sqlite3.SQLITE_DENY
        return sqlite3.SQLITE_OK

    def _progress(self) -> int:
        clock = self._clock
        return 1 if clock is not None and clock.exceeded() else 0

    def close(self) -> None:
        self._conn.close()

    def _introspect(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        self._trusted = True
        try:
            return self._conn.execute(sql, params).fetchall()
        finally:
            self._trusted = False

    # -- introspection -------------------------------------------------------------------
    def _objects(self) -> list[tuple[str, str, str | None]]:
        return self._introspect("SELECT type, name, sql FROM sqlite_schema WHERE type IN ('table', 'view') "
                                "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY type, name")

    def catalog(self) -> dict[str, dict[str, dict[str, str]]]:
        """``{"main": {table: {column: declared type}}}`` for tables and views, for grounding."""
        out: dict[str, dict[str, str]] = {}
        for _kind, name, _sql in self._objects():
            cols = self._introspect("SELECT name, type FROM pragma_table_info(?) ORDER BY cid", (name,))
            out[name] = {c: (t or "") for c, t in cols}
        return {"main": out}

    def content_hash(self) -> str:
        """SHA-256 over every table's name, columns (name and declared type), row count
        and an order-independent sum of per-row hashes, plus every view's and trigger's SQL
        (as written: SQLite stores it verbatim, so no release re-renders it; a trigger
        changes what a variant built by writing into a copy holds), and the SQL of a table
        with a collation or a generated column (``_READ_DDL``; other tables' SQL is left
        out, so their hashes did not move): ``SELECT
        count(*), sum(h >> 32), sum(h & 0xFFFFFFFF) FROM (SELECT sqleval_row_hash(c1, c2,
        ...) AS h FROM t)`` (a table wider than ``ROW_HASH_ARGS`` columns passes them in
        parts, with the same result), where each value is rendered by the rules of
        ``engines.canonical`` (not SQLite's ``quote()``, whose float digits changed between
        releases). The two 32-bit halves are summed apart so the sums cannot overflow."""
        encoding = self._introspect("PRAGMA encoding")[0][0]
        self._conn.create_function("sqleval_row_fields", -1, _row_fields(encoding), deterministic=True)
        self._conn.create_function("sqleval_row_hash", -1, _row_hash, deterministic=True)
        fields = _row_fields(encoding)
        self._conn.create_function("sqleval_narrow_row_hash", -1, lambda *v: _row_hash(fields(*v)),
                                   deterministic=True)  # one call a row where the columns fit one
        digest = hashlib.sha256()
        try:
            for kind, name, sql in self._objects():
                if kind == "view":
                    digest.update(f"V|{name}|{sql}\n".encode())
                    continue
                if sql and _READ_DDL.search(str(sql)):  # collations, generated columns: as written
                    digest.update(f"D|{name}|{sql}\n".encode())
                cols = self._introspect("SELECT name, type FROM pragma_table_info(?) ORDER BY cid", (name,))
                values = [f"CASE typeof({q}) WHEN 'text' THEN CAST({q} AS BLOB) WHEN 'blob' THEN hex({q}) ELSE {q} END"
                          for q in (_quote(c) for c, _ in cols)]
                if len(values) <= ROW_HASH_ARGS:
                    row_hash = f"sqleval_narrow_row_hash({', '.join(values)})"
                else:
                    row_hash = "sqleval_row_hash(" + ", ".join(
                        f"sqleval_row_fields({', '.join(values[i:i + ROW_HASH_ARGS])})"
                        for i in range(0, len(values), ROW_HASH_ARGS)) + ")"
                count, hi, lo = self._introspect(
                    f"SELECT count(*), coalesce(sum(h >> 32), 0), coalesce(sum(h & 4294967295), 0) "
                    f"FROM (SELECT {row_hash} AS h FROM {_quote(name)})")[0]
                digest.update(f"T|{name}|{[(c, t) for c, t in cols]}|{count}|{hi}|{lo}\n".encode())
            for name, table, sql in self._introspect("SELECT name, tbl_name, sql FROM sqlite_schema "
                                                     "WHERE type = 'trigger' ORDER BY name"):
                digest.update(f"R|{name}|{table}|{sql}\n".encode())
        finally:
            self._conn.create_function("sqleval_row_hash", -1, None)
            self._conn.create_function("sqleval_row_fields", -1, None)
            self._conn.create_function("sqleval_narrow_row_hash", -1, None)
        return digest.hexdigest()

    # -- execution -----------------------------------------------------------------------
    def run(self, sql: str, *, max_rows: int | None = None, timeout_s: float | None = None) -> ExecOutcome:
        """Run one statement, bounded in time, rows and bytes; never raises for bad SQL."""
        max_rows = self.limits.max_rows if max_rows is None else max_rows
        start = time.perf_counter()
        limit = self.limits.timeout_s if timeout_s is None else min(timeout_s, self.limits.timeout_s)
        self._clock = clock = QueryTime(limit)  # SQLite runs a query on this thread: its CPU clock
        token = WATCHDOG.arm(clock.wall_s + 0.25, self._conn.interrupt, clock.cpu)  # a stray one is cleared by the next statement
        cur = self._conn.cursor()
        self._denial = None
        try:
            cur.execute(sql)
            if cur.description is None:
                return ExecOutcome(None, refusal("not_a_query", "exactly one SELECT statement allowed"), _ms(start))
            names = [d[0] for d in cur.description]
            # max_bytes, and at most an eighth of memory_limit (result_byte_cap)
            got = fetch_capped(fetch_batches(cur, FETCH_BATCH), row_batch_size, max_rows=max_rows, limits=self.limits)
            if got.error is not None:
                return ExecOutcome(None, got.error, _ms(start), truncated=got.truncated)
            return ExecOutcome(rows_to_arrow(names, flat_rows(got.batches)), None, _ms(start))
        except sqlite3.Error as exc:
            error = classify_error(exc)
            if "one statement at a time" in error.message:  # the sqlite3 module's own rule
                error = refusal("multiple_statements", "exactly one SELECT statement allowed")
            elif self._denial is not None and error.category == "permission_error":  # the authorizer's rule
                error = refusal(*self._denial)
            return ExecOutcome(None, timed(error, clock), _ms(start))
        except (MemoryError, RecursionError, OverflowError) as exc:
            return ExecOutcome(None, resource_error(exc), _ms(start))
        finally:
            WATCHDOG.disarm(token)
            self._clock = None
            cur.close()
            if self._conn.in_transaction:  # a read never leaves one open, but be sure
                self._conn.rollback()


def column_type(values: list[Any]) -> pa.DataType:
    """The Arrow type of one SQLite result column, inferred from its values."""
    kinds = {type(v) for v in values if v is not None}
    if not kinds:
        return pa.null()
    if kinds == {int}:
        return pa.int64()
    if kinds <= {int, float}:
        return pa.float64()
    if kinds == {str}:
        return pa.string()
    if kinds == {bytes}:
        return pa.binary()
    if InvalidText in kinds and kinds <= {str, InvalidText}:
        return pa.binary()  # text, some not UTF-8: all of it by its bytes
    return MIXED_TYPE


def _mixed(v: Any) -> dict[str, Any] | None:
    if v is None:
        return None
    if isinstance(v, (int, float)):
        return {"number": float(v), "text": None, "blob": None}
    if isinstance(v, bytes):
        return {"number": None, "text": None, "blob": v}
    return {"number": None, "text": str(v), "blob": None}


def rows_to_arrow(names: list[str], rows: list[tuple[Any, ...]]) -> pa.Table:
    """Rows as SQLite returned them -> an Arrow table with per-column inferred types."""
    arrays = []
    for i in range(len(names)):
        values = [r[i] for r in rows]
        t = column_type(values)
        if t == pa.null():
            arrays.append(pa.nulls(len(values)))
        elif t == MIXED_TYPE:
            arrays.append(pa.array([_mixed(v) for v in values], type=MIXED_TYPE))
        elif t == pa.float64():
            arrays.append(pa.array([None if v is None else float(v) for v in values], type=t))
        elif t == pa.binary():
            arrays.append(pa.array([v.encode("utf-8") if isinstance(v, str) else v for v in values], type=t))
        else:
            arrays.append(pa.array(values, type=t))
    # duplicate output names are legal in SQL; Arrow tables accept them too
    return pa.Table.from_arrays(arrays, names=names) if names else pa.table({})
