"""A DuckDB connection that model-generated SQL cannot escape.

Read-only, external access off, local filesystem disabled, configuration locked, no
extension loading, capped memory/threads/temp space, a per-query time limit (CPU time,
``engines.watchdog.QueryTime``) enforced by an interrupt on the exact cursor, a wall bound
at ten times it enforced twice (that interrupt and ``max_execution_time``), caps on rows and
bytes fetched, and a fresh cursor per query so nothing one query does is seen by the next.
"""
from __future__ import annotations

import hashlib
import re
import time
from pathlib import Path

import duckdb
import pyarrow as pa

from .base import Limits
from .base import RESULT_SHARE, ExecError, ExecOutcome, elapsed_ms as _ms, fetch_capped, refusal, resource_error, timed
from .base import result_byte_cap, too_large  # noqa: F401  (re-exported: their home was here)
from .watchdog import WATCHDOG, QueryTime, plan_rows, wall_bound

__all__ = ["DuckDBSandbox", "ExecError", "ExecOutcome", "RESULT_SHARE", "classify_error", "result_byte_cap",
           "too_large"]

ENGINE_NAME = "duckdb"
ENGINE_VERSION = duckdb.__version__
BATCH_ROWS = 8192  # rows per Arrow batch: the byte cap is checked after each, so it overshoots by one batch


#: DuckDB's message for a function it does not have (scalar, aggregate, table, ...): its name is group 1
_MISSING_FUNCTION = re.compile(r'\b(?:Scalar|Aggregate|Table|Window|Pragma|Macro|Copy)? ?Function with name '
                               r'"?([^"\s!]+)"? (?:does not exist|is not in the catalog)', re.I)
_CATEGORIES: list[tuple[str, re.Pattern[str]]] = [
    ("timeout", re.compile(r"INTERRUPT|maximum execution time", re.I)),
    ("missing_function", _MISSING_FUNCTION),
    ("missing_column", re.compile(r"Referenced column .* not found|column .* (does not exist|not found)|"
                                  r"Values list .* does not have a column|Referenced table .* not found|"
                                  r"does not have a column named", re.I)),
    ("missing_table", re.compile(r"Table with name .* does not exist|Schema with name .* does not exist|"
                                 r"Catalog .* does not exist", re.I)),
    ("ambiguous_reference", re.compile(r"Ambiguous reference", re.I)),
    ("invalid_aggregation", re.compile(r"must appear in the GROUP BY|aggregate function calls cannot be nested|"
                                       r"aggregates? (are )?not allowed|GROUP BY clause cannot contain aggregates|"
                                       r"window functions? (are )?not allowed", re.I)),
    ("division_by_zero", re.compile(r"division by zero|divide by zero", re.I)),
    ("type_mismatch", re.compile(r"Conversion Error|Could not convert|Cannot compare|No function matches|"
                                 r"Cannot mix values|Mismatch Type|type .* does not match|cannot be cast|"
                                 r"Invalid type|No operator matches", re.I)),
    ("permission_error", re.compile(r"Permission Error|disabled by configuration|read-only|"
                                    r"Cannot execute statement of type|lock(ed)? configuration", re.I)),
    ("resource_exceeded", re.compile(r"Out of Memory|memory limit|could not allocate|max_temp_directory", re.I)),
    ("syntax_error", re.compile(r"Parser Error|syntax error", re.I)),
]


def classify_error(exc: BaseException) -> ExecError:
    """Map an engine exception to the runtime error taxonomy."""
    msg = str(exc).strip()
    name = type(exc).__name__
    category = "unknown_error"
    if isinstance(exc, duckdb.InterruptException):
        category = "timeout"
    elif isinstance(exc, duckdb.PermissionException):
        category = "permission_error"
    elif isinstance(exc, duckdb.OutOfMemoryException):
        category = "resource_exceeded"
    else:
        for cat, pattern in _CATEGORIES:
            if pattern.search(msg):
                category = cat
                break
        if category == "unknown_error" and isinstance(exc, duckdb.CatalogException):
            category = "missing_table"
    missing = _MISSING_FUNCTION.search(msg) if category == "missing_function" else None
    return ExecError(category=category, message=msg[:2000], exception=name,
                     subject=missing.group(1) if missing else None)


_HERE = "database_name = current_database()"
#: The rest of what a query can see, one content line per row: (tag, query in a stable order).
_CATALOG_LINES = [
    ("C", "SELECT schema_name || '.' || table_name || '.' || column_name, is_nullable, comment FROM duckdb_columns() "
          f"WHERE {_HERE} AND NOT internal AND (comment IS NOT NULL OR NOT is_nullable) ORDER BY ALL"),
    ("K", "SELECT schema_name || '.' || table_name, constraint_type, constraint_column_names::VARCHAR[] "
          f"FROM duckdb_constraints() WHERE {_HERE} ORDER BY ALL"),
    ("M", "SELECT schema_name || '.' || function_name, function_type, parameters::VARCHAR[], macro_definition "
          f"FROM duckdb_functions() WHERE {_HERE} AND NOT internal AND function_type IN ('macro', 'table_macro') "
          "ORDER BY ALL"),
    ("S", "SELECT schema_name || '.' || sequence_name, start_value, increment_by, min_value, max_value, cycle "
          f"FROM duckdb_sequences() WHERE {_HERE} AND NOT temporary ORDER BY ALL"),
    # a table with a column collation (it changes what = and ORDER BY answer) or a generated
    # column: its SQL, as DuckDB re-renders it (it keeps no other text); other tables' is left out
    ("D", "SELECT schema_name || '.' || table_name, sql FROM duckdb_tables() "
          f"WHERE {_HERE} AND NOT internal AND NOT temporary "
          "AND regexp_matches(sql, '\\bCOLLATE\\b|GENERATED ALWAYS', 'i') ORDER BY ALL"),
    # a user type's structure (an enum's labels) is added by content_lines, from its DuckDBPyType
    ("Y", f"SELECT schema_name || '.' || type_name, logical_type, schema_name, type_name FROM duckdb_types() "
          f"WHERE {_HERE} AND NOT internal ORDER BY ALL"),
]


class DuckDBSandbox:
    """One read-only, locked-down DuckDB database; ``run`` executes one candidate query."""

    name = ENGINE_NAME
    version = ENGINE_VERSION
    dialect = "duckdb"
    #: two files' sandboxes may run queries at once, on two threads: each query runs on its own
    #: thread with one engine thread, timed on that thread's CPU clock, and spends the CPU time it
    #: spends alone (measured; SQLite's progress handler, Python called from its loop, doubles both)
    side_by_side = True

    def __init__(self, path: str | Path, limits: Limits = Limits()) -> None:
        self.path = Path(path)
        self.limits = limits
        if not self.path.is_file():
            raise FileNotFoundError(f"database file {self.path} does not exist")
        self._conn = self._connect()

    def _connect(self) -> duckdb.DuckDBPyConnection:
        conn = duckdb.connect(str(self.path), read_only=True, config={
            "enable_external_access": False,
            "autoinstall_known_extensions": False,
            "autoload_known_extensions": False,
            "allow_community_extensions": False,
            "threads": max(1, int(self.limits.threads)),
            "memory_limit": self.limits.memory_limit,
        })
        # Order matters (measured on 2.0): the filesystem switch only sticks after external
        # access is off, and the temp-size cap is only accepted as a SET after connecting.
        conn.execute("SET disabled_filesystems='LocalFileSystem'")
        conn.execute("SET max_temp_directory_size='0B'")
        try:
            # the wall bound, not the limit: a loaded machine must not stop a query its CPU limit lets finish
            conn.execute(f"SET max_execution_time={int((wall_bound(self.limits.timeout_s) + 0.25) * 1000)}")
        except duckdb.Error:  # DuckDB < 2.0: the interrupt watchdog alone enforces the limit
            pass
        conn.execute("SET lock_configuration=true")
        return conn

    def close(self) -> None:
        self._conn.close()

    # -- introspection -------------------------------------------------------------------
    def catalog(self) -> dict[str, dict[str, dict[str, str]]]:
        """``{schema: {table: {column: type}}}`` for tables and views, for grounding."""
        cur = self._conn.cursor()
        try:
            rows = cur.execute(
                "SELECT schema_name, table_name, column_name, data_type FROM duckdb_columns() "
                "WHERE database_name = current_database() AND NOT internal "
                "ORDER BY schema_name, table_name, column_index").fetchall()
        finally:
            cur.close()
        out: dict[str, dict[str, dict[str, str]]] = {}
        for schema, table, column, dtype in rows:
            out.setdefault(schema, {}).setdefault(table, {})[column] = dtype
        return out

    def content_hash(self) -> str:
        """SHA-256 over everything a query can see (``content_lines``): stable across
        rebuilds, row order, thread counts and engine releases, unlike the file's bytes."""
        return hashlib.sha256("\n".join(self.content_lines()).encode("utf-8")).hexdigest()

    def content_lines(self) -> list[str]:
        """One line per object a query can see, each value in the canonical text of
        ``engines.canonical`` (never the engine's own rendering, which a release may change):
        every table's and view's columns, row count and order-independent sums of per-row
        MD5s (``T|``/``V|``), and a view's definition (a changed view with the same rows on
        this data still answers differently on a variant); column nullability and comments;
        keys; macros; sequences (their counter is their persisted start value); user types
        with their structure (an enum's labels). A line names its object first, so two
        builds can say which object differs.

        Engine-rendered text is hashed only where DuckDB keeps nothing else: a view's and a
        macro's definition (``duckdb_views().sql``, ``macro_definition``) are DuckDB's
        re-rendering of the parsed statement, which a release may change."""
        from .canonical import duckdb_lanes_sql, duckdb_type_name
        cur = self._conn.cursor()
        here = f"{_HERE} AND NOT internal"
        try:
            lines: list[str] = []
            relations = cur.execute(
                f"SELECT 'T', schema_name, table_name, comment, NULL FROM duckdb_tables() WHERE {here} "
                f"AND NOT temporary UNION ALL SELECT 'V', schema_name, view_name, comment, sql FROM duckdb_views() "
                f"WHERE {here} AND NOT temporary ORDER BY 2, 3, 1").fetchall()
            for kind, schema, name, comment, definition in relations:
                rel = f"{_ident(schema)}.{_ident(name)}"
                try:
                    shape = cur.sql(f"SELECT * FROM {rel}")
                    columns = list(zip(shape.columns, shape.types))
                    lanes = cur.execute(duckdb_lanes_sql(rel, columns)).fetchone()
                    assert lanes is not None  # an aggregate without GROUP BY: always one row
                    count, lane1, lane2 = lanes
                    body = f"{[(c, duckdb_type_name(t)) for c, t in columns]}|{count}|{lane1}|{lane2}"
                except duckdb.Error as exc:  # a view over something it cannot read: hashed as broken
                    body = f"unreadable:{classify_error(exc).category}"
                lines.append(f"{kind}|{schema}.{name}|{body}|{comment or ''}"
                             + (f"|{definition}" if kind == "V" else ""))
            for tag, sql in _CATALOG_LINES:
                rows = cur.execute(sql).fetchall()
                if tag == "Y":
                    rows = [(name, logical, self._type_structure(cur, schema, tname))
                            for name, logical, schema, tname in rows]
                lines += [f"{tag}|" + "|".join(map(str, row)) for row in rows]
        finally:
            cur.close()
        return lines

    @staticmethod
    def _type_structure(cur: duckdb.DuckDBPyConnection, schema: str, name: str) -> str:
        """A user type's canonical structure (``canonical.duckdb_type_name``: an enum with
        its labels in order), from the type itself rather than DuckDB's text of it."""
        from .canonical import duckdb_type_name
        try:
            return duckdb_type_name(cur.sql(f"SELECT CAST(NULL AS {_ident(schema)}.{_ident(name)})").types[0])
        except duckdb.Error as exc:
            return f"unreadable:{classify_error(exc).category}"

    def plan_rows(self, sql: str) -> float | None:
        """The rows DuckDB's plan of ``sql`` expects through its operators, a cross or
        nested-loop join counting every pair (``watchdog.plan_rows``): what running it would
        cost, from the content's statistics alone, before it runs. None where DuckDB explains
        no plan."""
        cur = self._conn.cursor()
        try:
            return plan_rows(cur, sql, [])
        finally:
            cur.close()

    # -- execution -----------------------------------------------------------------------
    def run(self, sql: str, *, max_rows: int | None = None, timeout_s: float | None = None) -> ExecOutcome:
        """Run one statement on a fresh cursor, bounded in time, rows and bytes."""
        max_rows = self.limits.max_rows if max_rows is None else max_rows
        start = time.perf_counter()
        cur = self._conn.cursor()
        limit = self.limits.timeout_s if timeout_s is None else min(timeout_s, self.limits.timeout_s)
        clock = QueryTime(limit, self.limits.threads)
        token = WATCHDOG.arm(clock.wall_s + 0.25, cur.interrupt, clock.cpu)  # this cursor only: disarmed before it closes
        try:
            stmts = duckdb.extract_statements(sql)
            if len(stmts) != 1:
                kinds = ", ".join(s.type.name for s in stmts) or "none"
                return ExecOutcome(None, refusal("multiple_statements",
                                                 f"exactly one SELECT statement allowed, got {kinds}"), _ms(start))
            if not _is_query(stmts[0]):
                return ExecOutcome(None, refusal("not_a_query", f"exactly one SELECT statement allowed, got "
                                                                f"{stmts[0].type.name}"), _ms(start))
            # the checked statement itself, not its text: DuckDB runs the tree it parsed for the
            # check, so the text is parsed once (0.3 ms a query, BENCHMARKS 13 "sandcost"). Not
            # ``execute``: it materialises the whole result before the first batch, past the caps
            reader = cur.sql(stmts[0]).to_arrow_reader(BATCH_ROWS)
            got = fetch_capped(reader, _arrow_size, max_rows=max_rows, limits=self.limits)
            if got.error is not None:
                return ExecOutcome(None, got.error, _ms(start), truncated=got.truncated)
            # the table shares the batches' buffers: one copy of the result in the process
            return ExecOutcome(pa.Table.from_batches(got.batches, schema=reader.schema), None, _ms(start))
        except (duckdb.Error, OSError, pa.ArrowException) as exc:  # OSError, Arrow's: an interrupt while Arrow reads a batch
            return ExecOutcome(None, timed(classify_error(exc), clock), _ms(start))
        except (MemoryError, RecursionError) as exc:
            return ExecOutcome(None, resource_error(exc), _ms(start))
        finally:
            WATCHDOG.disarm(token)
            cur.close()


def _is_query(stmt: "duckdb.Statement") -> bool:
    """Whether one statement is a query. DuckDB runs a PIVOT whose columns come from the data
    (no ``IN`` list) as a ``MULTI`` statement: first a temporary enum type per pivoted column
    (its values a ``SELECT DISTINCT``, on this cursor's own connection, gone when it closes),
    then the query. The type hides what that query is, so it is asked of the parser: only
    a query may stand as a subquery, and ``EXPLAIN``, ``COPY``, ``CREATE ... AS``,
    ``INSERT ... SELECT`` or ``WITH ... DELETE`` around such a PIVOT may not."""
    if stmt.type == duckdb.StatementType.SELECT:
        return True
    if stmt.type != duckdb.StatementType.MULTI:
        return False
    body = re.sub(r"[\s;]+$", "", stmt.query)  # its own trailing semicolon would end the subquery
    try:  # the newline ends a trailing -- comment; a single statement has balanced parentheses
        wrapped = duckdb.extract_statements(f"SELECT * FROM (\n{body}\n)")
    except duckdb.Error:
        return False
    return len(wrapped) == 1 and wrapped[0].type in (duckdb.StatementType.SELECT, duckdb.StatementType.MULTI)


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _arrow_size(batch: pa.RecordBatch) -> tuple[int, int]:
    return batch.num_rows, batch.nbytes
