"""A PostgreSQL session that model-generated SQL cannot escape (psycopg 3).

- **Read-only and rolled back**: every query runs in its own ``READ ONLY`` transaction
  (``default_transaction_read_only`` is on as well) that is always rolled back, so even
  a session setting changed with ``set_config`` disappears with it. Exactly one
  ``SELECT``/``WITH``/``VALUES`` statement is accepted, through a server-side cursor
  (extended protocol: PostgreSQL itself refuses a second statement).
- **A role without write rights** where the suite provides one: connect as that role
  (``postgresql://grader@host/db``) or give ``?role=name`` in the URL to ``SET ROLE``
  after connecting; ``role`` is read by the sandbox, not passed to libpq. Credentials
  come from the URL or libpq's usual sources (``PGPASSWORD``, ``~/.pgpass``).
- **Bounded**: ``statement_timeout``, a client-side cancel at the same deadline (a cursor
  fetch is its own statement), ``lock_timeout``, ``idle_in_transaction_session_timeout``,
  ``client_connection_check_interval`` (a killed grader does not leave its query running),
  ``work_mem`` from the memory limit, and the same caps on rows and bytes as DuckDB.
- **Denied functions**: a short list of administrative and file functions
  (``set_config``, ``pg_read_file``, ``pg_terminate_backend``, ``lo_import``, ``dblink``, ...)
  is refused before the query reaches the server.
- **Deterministic output**: ``TimeZone=UTC``, ``DateStyle=ISO``, ``extra_float_digits=1``.
- **Errors** are mapped to the taxonomy by SQLSTATE.
"""
from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from decimal import Decimal
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import pyarrow as pa

from ..cases import Limits
from . import display_location, parse_size, statement_count
from .duckdb_sandbox import ExecError, ExecOutcome

ENGINE_NAME = "postgres"
FETCH_BATCH = 5000
SYSTEM_SCHEMAS = ("pg_catalog", "information_schema", "pg_toast")
DENIED_FUNCTIONS = (
    "set_config", "pg_terminate_backend", "pg_cancel_backend", "pg_reload_conf", "pg_rotate_logfile",
    "pg_read_file", "pg_read_binary_file", "pg_ls_\\w+", "pg_stat_file", "pg_file_\\w+", "lo_\\w+",
    "dblink\\w*", "pg_advisory_\\w+", "pg_try_advisory_\\w+", "pg_switch_wal", "pg_create_\\w+",
    "pg_drop_replication_slot", "pg_logical_\\w+", "pg_promote", "pg_import_system_collations",
    "pg_backup_\\w+", "query_to_xml\\w*", "table_to_xml\\w*", "cursor_to_xml\\w*", "database_to_xml\\w*",
    "schema_to_xml\\w*", "pg_notify", "txid_current", "pg_current_xact_id")
_DENIED_RE = re.compile(r"(?<![\w$\"])(" + "|".join(DENIED_FUNCTIONS) + r")\s*\(", re.I)
#: first words of statements that are not queries: refused before the server sees them (the
#: server-side cursor would refuse them too, as syntax errors); anything else that is not a
#: query is the server's syntax error, as it is DuckDB's
_STATEMENTS = frozenset("""INSERT UPDATE DELETE MERGE UPSERT DROP CREATE ALTER TRUNCATE GRANT REVOKE SET RESET COPY
    BEGIN START COMMIT ROLLBACK END ABORT SAVEPOINT RELEASE PREPARE EXECUTE DEALLOCATE DO CALL LOCK VACUUM ANALYZE
    ANALYSE CLUSTER REINDEX CHECKPOINT LISTEN NOTIFY UNLISTEN DISCARD LOAD SECURITY COMMENT REFRESH IMPORT DECLARE
    FETCH MOVE CLOSE SHOW EXPLAIN REASSIGN ATTACH DETACH PRAGMA USE""".split())

# SQLSTATE (exact, then class prefix) -> category
_SQLSTATE: dict[str, str] = {
    "57014": "timeout", "55P03": "timeout", "25P03": "timeout",
    "42P01": "missing_table", "3F000": "missing_table", "42P02": "missing_column",
    "42703": "missing_column",
    "42702": "ambiguous_reference", "42725": "ambiguous_reference", "42P09": "ambiguous_reference",
    "42803": "invalid_aggregation", "42P20": "invalid_aggregation",
    "22012": "division_by_zero",
    "42804": "type_mismatch", "42883": "type_mismatch", "42846": "type_mismatch", "42P18": "type_mismatch",
    "21000": "type_mismatch", "42P08": "type_mismatch",
    "42501": "permission_error", "25006": "permission_error", "0A000": "permission_error",
    "42601": "syntax_error", "42P10": "syntax_error", "42611": "syntax_error",
}
_SQLSTATE_CLASSES: dict[str, str] = {"22": "type_mismatch", "53": "resource_exceeded", "54": "resource_exceeded",
                                     "42": "unknown_error"}

# type OIDs whose Arrow type is fixed (used as is, and for empty or all-NULL columns)
_OID_TYPES: dict[int, pa.DataType] = {
    16: pa.bool_(), 20: pa.int64(), 21: pa.int64(), 23: pa.int64(), 26: pa.int64(), 700: pa.float64(),
    701: pa.float64(), 25: pa.string(), 1043: pa.string(), 1042: pa.string(), 19: pa.string(), 18: pa.string(),
    1082: pa.date32(), 1114: pa.timestamp("us"), 1184: pa.timestamp("us", tz="UTC"), 1083: pa.time64("us"),
    17: pa.binary(), 1186: pa.duration("us"),
}
_TEXT_OIDS = {114, 3802, 2950, 1266, 869, 650, 829, 774, 1560, 1562}  # json, jsonb, uuid, timetz, inet, ...


def classify_error(exc: BaseException) -> ExecError:
    """Map a psycopg exception to the runtime error taxonomy, by SQLSTATE."""
    msg = str(exc).strip() or type(exc).__name__
    state = getattr(exc, "sqlstate", None) or ""
    category = _SQLSTATE.get(state) or _SQLSTATE_CLASSES.get(state[:2], "unknown_error")
    if state == "0A000" and not any(w in msg for w in ("read-only", "data-modifying")):
        category = "unknown_error"  # feature_not_supported: a refusal only when it is about writing
    return ExecError(category=category, message=msg[:2000], exception=type(exc).__name__)


def split_role(url: str) -> tuple[str, str | None]:
    """``(libpq URL, role)``: the ``role`` query parameter is ours, not libpq's."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    role = next((v for k, v in query if k == "role"), None)
    rest = urlencode([(k, v) for k, v in query if k != "role"])
    return urlunsplit((parts.scheme, parts.netloc, parts.path, rest, parts.fragment)), role


def _ident(*names: str) -> str:
    return ".".join('"' + n.replace('"', '""') + '"' for n in names)


class PostgresSandbox:
    """One read-only PostgreSQL session; ``run`` executes one candidate query."""

    name = ENGINE_NAME
    dialect = "postgres"

    def __init__(self, url: str, limits: Limits = Limits()) -> None:
        try:
            import psycopg
        except ImportError:  # pragma: no cover - depends on the installation
            raise ImportError("PostgreSQL databases need psycopg 3: pip install 'pytest-sqleval[postgres]'") from None
        self._psycopg = psycopg
        self.url = url
        self.limits = limits
        conninfo, self.role = split_role(url)
        try:
            self._conn = psycopg.connect(conninfo, autocommit=True, application_name="pytest-sqleval",
                                         connect_timeout=max(2, int(limits.timeout_s)))
        except psycopg.Error as exc:
            raise ConnectionError(f"cannot connect to {display_location(url)}: {str(exc).strip()}") from None
        self._setup()
        self.version = str(self._scalar("SHOW server_version"))

    def _setup(self) -> None:
        ms = max(1, int(self.limits.timeout_s * 1000))
        work_mem_kb = max(64, min(parse_size(self.limits.memory_limit) // 8, 1 << 30) // 1024)
        settings = [("statement_timeout", str(ms)), ("lock_timeout", str(ms)),
                    ("idle_in_transaction_session_timeout", str(ms + 5000)), ("work_mem", f"{work_mem_kb}kB"),
                    ("TimeZone", "UTC"), ("DateStyle", "ISO, YMD"), ("IntervalStyle", "postgres"),
                    ("extra_float_digits", "1"), ("default_transaction_read_only", "on"),
                    ("client_connection_check_interval", "1000")]
        with self._conn.cursor() as cur:
            if self.role:
                cur.execute(f"SET ROLE {_ident(self.role)}")
            for key, value in settings:
                try:
                    cur.execute("SELECT set_config(%s, %s, false)", (key, value))
                except self._psycopg.errors.UndefinedObject:  # e.g. client_connection_check_interval before 14
                    pass
        self._conn.autocommit = False
        self._conn.read_only = True

    def close(self) -> None:
        self._conn.close()

    def _scalar(self, sql: str, params: tuple | None = None) -> Any:
        try:
            with self._conn.cursor() as cur:
                cur.execute(sql, params)
                return cur.fetchone()[0]
        finally:
            self._conn.rollback()

    def _rows(self, sql: str, params: tuple | None = None) -> list[tuple]:
        try:
            with self._conn.cursor() as cur:
                cur.execute(sql, params)
                return cur.fetchall()
        finally:
            self._conn.rollback()

    # -- introspection -------------------------------------------------------------------
    def catalog(self) -> dict[str, dict[str, dict[str, str]]]:
        """``{schema: {table: {column: type}}}`` for the tables and views this role can see.
        The grader resolves unqualified names through ``main``; PostgreSQL resolves them
        through ``public``, so ``public`` is listed under ``main`` as well (unless the
        database has a schema named ``main``)."""
        rows = self._rows(
            "SELECT table_schema, table_name, column_name, data_type FROM information_schema.columns "
            "WHERE table_schema NOT IN ('pg_catalog', 'information_schema') AND table_schema NOT LIKE 'pg\\_%' "
            "ORDER BY table_schema, table_name, ordinal_position")
        out: dict[str, dict[str, dict[str, str]]] = {}
        for schema, table, column, dtype in rows:
            out.setdefault(schema, {}).setdefault(table, {})[column] = dtype
        if "public" in out and "main" not in out:
            out["main"] = out["public"]
        return out

    def content_hash(self) -> str:
        """SHA-256 over every readable table's schema-qualified name, columns (name and
        type), row count and an order-independent sum of per-row hashes, plus every view's
        definition. Computed in SQL: ``SELECT count(*), sum(('x' || substr(md5(t::text), 1,
        15))::bit(60)::bigint) FROM s.t AS t`` (60 bits of each row's MD5; the sum is a
        numeric, so it cannot overflow). Tables this role cannot read are named, not hashed."""
        tables = self._rows(
            "SELECT n.nspname, c.relname, c.relkind, has_table_privilege(c.oid, 'SELECT') FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind IN ('r', 'p', 'm', 'v', 'f') "
            "AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%' "
            "ORDER BY n.nspname, c.relname")
        cols: dict[tuple[str, str], list[tuple[str, str]]] = {}
        for schema, table, column, dtype in self._rows(
                "SELECT table_schema, table_name, column_name, data_type FROM information_schema.columns "
                "ORDER BY table_schema, table_name, ordinal_position"):
            cols.setdefault((schema, table), []).append((column, dtype))
        digest = hashlib.sha256()
        for schema, table, kind, readable in tables:
            if kind == "v":
                sql = self._scalar("SELECT pg_get_viewdef(%s::regclass, true)", (_ident(schema, table),))
                digest.update(f"V|{schema}.{table}|{sql}\n".encode())
            elif not readable:
                digest.update(f"T|{schema}.{table}|unreadable\n".encode())
            else:
                count, total = self._rows(
                    f"SELECT count(*), coalesce(sum(('x' || substr(md5(CAST(t AS text)), 1, 15))::bit(60)::bigint), 0)"
                    f"::text FROM {_ident(schema, table)} AS t")[0]
                digest.update(f"T|{schema}.{table}|{cols.get((schema, table), [])}|{count}|{total}\n".encode())
        return digest.hexdigest()

    # -- execution -----------------------------------------------------------------------
    def _refusal(self, sql: str) -> str | None:
        n = statement_count(sql, "postgres")
        if n != 1:
            return f"refused: exactly one SELECT statement allowed, got {n if n >= 0 else 'untokenizable SQL'}"
        import sqlglot
        first = next((t.text.upper() for t in sqlglot.tokenize(sql, read="postgres")), "")
        if first in _STATEMENTS:
            return f"refused: only SELECT / WITH / VALUES queries are allowed, got {first}"
        m = _DENIED_RE.search(sql)
        if m:
            return f"refused: function {m.group(1)}() is not allowed"
        return None

    def run(self, sql: str, *, max_rows: int | None = None) -> ExecOutcome:
        """Run one statement in a read-only transaction that is rolled back afterwards."""
        max_rows = self.limits.max_rows if max_rows is None else max_rows
        start = time.perf_counter()
        refusal = self._refusal(sql)
        if refusal:
            return ExecOutcome(None, ExecError("permission_error", refusal, "Refused"), _ms(start))
        psycopg = self._psycopg
        deadline = time.monotonic() + self.limits.timeout_s
        cancel = getattr(self._conn, "cancel_safe", None) or self._conn.cancel
        timer = threading.Timer(self.limits.timeout_s + 0.1, cancel)
        timer.daemon = True
        timer.start()
        cur = self._conn.cursor(name=f"sqleval_{time.monotonic_ns()}")
        try:
            cur.execute(sql.strip().rstrip(";"))
            desc = cur.description or []
            names = [d.name for d in desc]
            oids = [d.type_code for d in desc]
            rows: list[tuple] = []
            nbytes = 0
            while True:
                batch = cur.fetchmany(FETCH_BATCH)
                if not batch:
                    break
                rows.extend(batch)
                nbytes += _approx_bytes(batch)
                if len(rows) > max_rows or nbytes > self.limits.max_bytes:
                    return ExecOutcome(None, ExecError(
                        "resource_exceeded",
                        f"result exceeds the cap of {max_rows} rows / {self.limits.max_bytes} bytes", "ResultTooLarge"),
                        _ms(start), truncated=True)
                if time.monotonic() > deadline:
                    return ExecOutcome(None, ExecError("timeout", "canceled: the time limit passed while fetching",
                                                       "QueryCanceled"), _ms(start))
            return ExecOutcome(rows_to_arrow(names, oids, rows), None, _ms(start))
        except psycopg.Error as exc:
            return ExecOutcome(None, classify_error(exc), _ms(start))
        except (MemoryError, RecursionError) as exc:
            return ExecOutcome(None, ExecError("resource_exceeded", str(exc) or type(exc).__name__,
                                               type(exc).__name__), _ms(start))
        finally:
            timer.cancel()
            try:
                cur.close()
            except psycopg.Error:
                pass
            self._conn.rollback()  # always: nothing a query did survives it


def _approx_bytes(rows: list[tuple]) -> int:
    n = 0
    for row in rows:
        for v in row:
            n += len(v) if isinstance(v, (str, bytes)) else 8
    return n


def _as_text(values: list[Any]) -> pa.Array:
    out = []
    for v in values:
        if v is None or isinstance(v, str):
            out.append(v)
        elif isinstance(v, (dict, list)):
            out.append(json.dumps(v, sort_keys=True, default=str))
        else:
            out.append(str(v))
    return pa.array(out, type=pa.string())


def column_array(oid: int, values: list[Any]) -> pa.Array:
    """One result column as Arrow: fixed types by OID, numerics as decimals (float64 when
    they do not fit), JSON/UUID/network types as text, anything else inferred or as text."""
    if oid in _OID_TYPES:
        t = _OID_TYPES[oid]
        if pa.types.is_timestamp(t) and t.tz:
            values = [v.astimezone(__import__("datetime").timezone.utc) if v is not None else None for v in values]
        try:
            return pa.array(values, type=t)
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
            return _as_text(values)
    if oid in _TEXT_OIDS:
        return _as_text(values)
    if all(v is None for v in values):
        return pa.nulls(len(values))
    if oid == 1700 or all(isinstance(v, Decimal) for v in values if v is not None):
        try:
            return pa.array(values)
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
            return pa.array([None if v is None else float(v) for v in values], type=pa.float64())
    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        return _as_text(values)


def rows_to_arrow(names: list[str], oids: list[int], rows: list[tuple]) -> pa.Table:
    arrays = [column_array(oids[i], [r[i] for r in rows]) for i in range(len(names))]
    return pa.Table.from_arrays(arrays, names=names) if names else pa.table({})


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 3)
