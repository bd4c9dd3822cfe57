"""A PostgreSQL session that model-generated SQL cannot escape (psycopg 3).

- **Read-only and rolled back**: every query runs in its own ``READ ONLY`` transaction
  (``default_transaction_read_only`` is on as well) that is always rolled back, so even
  a session setting changed with ``set_config`` disappears with it. Exactly one
  ``SELECT``/``WITH``/``VALUES`` statement is accepted, through a server-side cursor
  (extended protocol: PostgreSQL itself refuses a second statement).
- **A role without write rights**: connect as that role (``postgresql://grader@host/db``)
  or give ``?role=name`` in the URL to ``SET ROLE`` after connecting; ``role`` is read by
  the sandbox, not passed to libpq. Credentials come from the URL or libpq's usual sources
  (``PGPASSWORD``, ``~/.pgpass``). A role that is a superuser, or may read or write server
  files or run server programs, is refused at start with the fix: candidate SQL never runs
  with rights that no name check could take back.
- **Bounded**: ``statement_timeout``, a client-side cancel at the same deadline (a cursor
  fetch is its own statement; wall time, so an overrun is run again at ten times the
  limit and only a second overrun is a ``timeout``), ``lock_timeout``, ``idle_in_transaction_session_timeout``,
  ``client_connection_check_interval`` (a killed grader does not leave its query running),
  ``work_mem`` from the memory limit, and the same caps on rows and bytes as DuckDB
  (``result_byte_cap``: ``max_bytes``, and at most an eighth of ``memory_limit``).
- **Pinned per transaction**: each query's transaction first sets, ``LOCAL`` to it, the
  role, ``search_path``, ``statement_timeout`` and ``lock_timeout`` again, so nothing a
  session could have been talked into carries over to the next candidate.
- **Denied functions**: every function call in the candidate is found on sqlglot's tokens
  (what the server tokenizes: quoted or not, schema-qualified or not, any case) and refused
  when it runs SQL text (``query_to_xml``, ``cursor_to_xml``, ``ts_stat``, ``dblink``, ...),
  reads files or large objects, signals or terminates backends, changes configuration
  (``set_config``), takes advisory locks, sleeps, or touches WAL, replication or backups;
  and when the catalog says PUBLIC may not execute it or it is ``SECURITY DEFINER`` (so an
  administrative function of a newer server, or an extension's, is denied without being
  listed). Unicode-escaped identifiers (``U&"..."``) are refused: they would hide a name.
- **A dead session is reopened**: a candidate that ends its own backend fails, and the
  next query runs on a fresh session with the same settings, so later cases are not lost.
- **Deterministic output**: ``TimeZone=UTC``, ``DateStyle=ISO``, ``extra_float_digits=1``.
- **Infinite dates and timestamps** (``'infinity'``, the usual open end of a type-2
  ``valid_to``) load as DuckDB's do: the largest (smallest) value of the Arrow storage,
  so infinity equals infinity, never a finite date, and compares the same on both engines.
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

from .base import Limits
from .watchdog import tenfold
from .shared import display_location, parse_size, statement_count
from .base import (ExecError, ExecOutcome, elapsed_ms as _ms, fetch_batches, fetch_capped, flat_rows,
                   refusal as sandbox_refusal, resource_error, row_batch_size)

ENGINE_NAME = "postgres"
FETCH_BATCH = 5000
SYSTEM_SCHEMAS = ("pg_catalog", "information_schema", "pg_toast")
#: functions refused by name (full match on the lower-cased name, schema ignored), by what they do
DENIED_FUNCTIONS = (
    # run SQL text, or read a table named in a string
    "query_to_xml", "query_to_xmlschema", "query_to_xml_and_xmlschema", "cursor_to_xml\\w*", "table_to_xml\\w*",
    "schema_to_xml\\w*", "database_to_xml\\w*", "ts_stat", "ts_rewrite", "dblink\\w*", "postgres_fdw\\w*",
    # signal, terminate or reconfigure backends and the server
    "pg_terminate_backend", "pg_cancel_backend", "pg_reload_conf", "pg_rotate_logfile\\w*", "pg_promote",
    "pg_log_backend_memory_contexts", "pg_stat_reset\\w*", "pg_stat_statements_reset", "set_config",
    # files and large objects
    "pg_read_file", "pg_read_binary_file", "pg_ls_\\w+", "pg_stat_file", "pg_file_\\w+", "pg_logdir_ls",
    "pg_current_logfile", "lo_\\w+", "loread", "lowrite",
    # locks, sleeps, notifications, transaction ids
    "pg_advisory_\\w+", "pg_try_advisory_\\w+", "pg_sleep\\w*", "pg_notify", "txid_current\\w*",
    "pg_current_xact_id\\w*",
    # WAL, replication, backups, upgrades
    "pg_switch_wal", "pg_create_\\w+", "pg_drop_replication_slot", "pg_copy_\\w+_slot", "pg_replication_\\w+",
    "pg_logical_\\w+", "pg_backup_\\w+", "pg_start_backup", "pg_stop_backup", "pg_wal_replay_\\w+",
    "pg_import_system_collations", "pg_nextoid", "binary_upgrade_\\w+", "pg_sync_replication_slots",
    "pg_log_standby_snapshot")
_DENIED_NAME_RE = re.compile("(?:" + "|".join(DENIED_FUNCTIONS) + ")", re.I)
#: roles whose rights no name check could take back: candidate SQL never runs with them
DANGEROUS_ROLES = ("pg_read_server_files", "pg_write_server_files", "pg_execute_server_program")
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


#: date, timestamp, timestamptz and their arrays: 'infinity' loads as ``Infinite``
_TEMPORAL_OIDS = {1082: "date", 1114: "timestamp", 1184: "timestamptz"}
_TEMPORAL_ARRAYS = {1182: 1082, 1115: 1114, 1185: 1184}


class Infinite:
    """PostgreSQL's ``'infinity'`` (``sign`` 1) or ``'-infinity'`` (-1) date or timestamp,
    which no Python date holds; ``column_array`` stores it as DuckDB does."""

    __slots__ = ("sign",)

    def __init__(self, sign: int) -> None:
        self.sign = sign

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Infinite) and other.sign == self.sign

    def __hash__(self) -> int:
        return hash(("Infinite", self.sign))

    def __repr__(self) -> str:
        return "infinity" if self.sign > 0 else "-infinity"

    __str__ = __repr__


_INFINITE = {b"infinity": Infinite(1), b"-infinity": Infinite(-1)}


def register_infinity_loaders(conn: Any) -> None:
    """Make ``conn`` load 'infinity' / '-infinity' dates and timestamps as ``Infinite``
    instead of failing the fetch (psycopg refuses them: no Python date is infinite). The
    loader wraps psycopg's own (a C class, which cannot be subclassed) for every other value."""
    from psycopg import adapt, pq

    for oid in _TEMPORAL_OIDS:
        base = conn.adapters.get_loader(oid, pq.Format.TEXT)
        if base is None:  # pragma: no cover - psycopg always has them
            continue

        class InfinityLoader(adapt.Loader):
            _base = base

            def __init__(self, oid: int, context: Any = None) -> None:
                super().__init__(oid, context)
                self._inner = self._base(oid, context)

            def load(self, data: Any) -> Any:
                if len(data) in (8, 9):
                    special = _INFINITE.get(bytes(data))
                    if special is not None:
                        return special
                return self._inner.load(data)

        conn.adapters.register_loader(oid, InfinityLoader)


def classify_error(exc: BaseException) -> ExecError:
    """Map a psycopg exception to the runtime error taxonomy, by SQLSTATE."""
    msg = str(exc).strip() or type(exc).__name__
    state = getattr(exc, "sqlstate", None) or ""
    category = _SQLSTATE.get(state) or _SQLSTATE_CLASSES.get(state[:2], "unknown_error")
    if state == "0A000" and not any(w in msg for w in ("read-only", "data-modifying")):
        category = "unknown_error"  # feature_not_supported: a refusal only when it is about writing
    missing = _MISSING_FUNCTION.match(msg) if state == "42883" else None
    if missing:  # undefined_function names a function; an operator it cannot find is a type mismatch
        category = "missing_function"
    return ExecError(category=category, message=msg[:2000], exception=type(exc).__name__,
                     subject=missing.group(1) if missing else None)


#: PostgreSQL's undefined_function message: the name as called (schema-qualified if it was), then its argument types
_MISSING_FUNCTION = re.compile(r"function ((?:[^\s(]+\.)?[^\s(]+)\(.*\) does not exist")


def split_role(url: str) -> tuple[str, str | None]:
    """``(libpq URL, role)``: the ``role`` query parameter is ours, not libpq's."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    role = next((v for k, v in query if k == "role"), None)
    rest = urlencode([(k, v) for k, v in query if k != "role"])
    return urlunsplit((parts.scheme, parts.netloc, parts.path, rest, parts.fragment)), role


_USER_SCHEMA = "NOT IN ('pg_catalog', 'information_schema') AND {0} NOT LIKE 'pg\\_%'"
#: Everything else a query can read through, one content line per row: (tag, query in a stable
#: order). Text PostgreSQL keeps as written is hashed as such (a function's ``prosrc``, enum
#: labels); where it keeps only a parse tree, its re-rendering is hashed, which a release may
#: change: view definitions (``pg_get_viewdef``), SQL-standard function bodies
#: (``pg_get_functiondef``, only when ``prosqlbody`` is set), domain constraints.
_CATALOG_LINES = [
    # functions, procedures, aggregates: signature, language, body, and what changes their result
    ("F", "SELECT n.nspname || '.' || p.proname, pg_get_function_identity_arguments(p.oid), "
          "pg_get_function_result(p.oid), p.prokind, l.lanname, p.prosrc, "
          "CASE WHEN p.prosqlbody IS NOT NULL THEN pg_get_functiondef(p.oid) END, p.provolatile, p.proisstrict, "
          "p.prosecdef, p.proretset, p.proconfig, a.aggtransfn::regproc::text, a.aggfinalfn::regproc::text, "
          "a.aggcombinefn::regproc::text, a.aggtranstype::regtype::text, a.agginitval "
          "FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace JOIN pg_language l ON l.oid = p.prolang "
          "LEFT JOIN pg_aggregate a ON a.aggfnoid = p.oid "
          f"WHERE n.nspname {_USER_SCHEMA.format('n.nspname')} ORDER BY 1, 2"),
    # user types: enums with their labels in order, composites, domains, ranges
    ("Y", "SELECT n.nspname || '.' || t.typname, t.typtype, "
          "ARRAY(SELECT e.enumlabel::text FROM pg_enum e WHERE e.enumtypid = t.oid ORDER BY e.enumsortorder), "
          "ARRAY(SELECT a.attname || ' ' || format_type(a.atttypid, a.atttypmod) FROM pg_attribute a "
          "WHERE a.attrelid = t.typrelid AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum), "
          "format_type(t.typbasetype, t.typtypmod), t.typnotnull, t.typdefault, "
          "ARRAY(SELECT pg_get_constraintdef(c.oid) FROM pg_constraint c WHERE c.contypid = t.oid ORDER BY 1), "
          "(SELECT format_type(r.rngsubtype, NULL) FROM pg_range r WHERE r.rngtypid = t.oid) "
          "FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace "
          f"WHERE n.nspname {_USER_SCHEMA.format('n.nspname')} AND t.typtype IN ('e', 'c', 'd', 'r', 'm') "
          "AND (t.typrelid = 0 OR (SELECT c.relkind FROM pg_class c WHERE c.oid = t.typrelid) = 'c') ORDER BY 1"),
    # sequences (a query reads them with currval or as a relation; column defaults use them)
    ("S", "SELECT schemaname || '.' || sequencename, data_type::text, start_value, min_value, max_value, "
          "increment_by, cycle, cache_size, last_value FROM pg_sequences "
          f"WHERE schemaname {_USER_SCHEMA.format('schemaname')} ORDER BY 1"),
    # operators a query can call (user-defined ones in the database's own schemas)
    ("O", "SELECT n.nspname || '.' || o.oprname, o.oprleft::regtype::text, o.oprright::regtype::text, "
          "o.oprresult::regtype::text, o.oprcode::regproc::text FROM pg_operator o "
          f"JOIN pg_namespace n ON n.oid = o.oprnamespace WHERE n.nspname {_USER_SCHEMA.format('n.nspname')} "
          "ORDER BY 1, 2, 3"),
]


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
        self._conninfo, self.role = split_role(url)
        #: sessions reopened after the previous one died (a candidate ended its own backend)
        self.reconnects = 0
        self._denied_oids_names: frozenset[str] = frozenset()
        self._conn = self._connect()
        try:
            self._setup()
            self._check_role()
            self._denied_oids_names = self._catalog_denied()
        except BaseException:
            self._conn.close()
            raise
        self.version = str(self._scalar("SHOW server_version"))
        self._version_num = int(self._scalar("SHOW server_version_num"))

    def _connect(self) -> Any:
        psycopg = self._psycopg
        try:
            conn = psycopg.connect(self._conninfo, autocommit=True, application_name="pytest-sqleval",
                                   connect_timeout=max(2, int(self.limits.timeout_s)))
        except psycopg.Error as exc:
            raise ConnectionError(f"cannot connect to {display_location(self.url)}: {str(exc).strip()}") from None
        register_infinity_loaders(conn)
        return conn

    def _settings(self) -> list[tuple[str, str]]:
        ms = max(1, int(self.limits.timeout_s * 1000))
        work_mem_kb = max(64, min(parse_size(self.limits.memory_limit) // 8, 1 << 30) // 1024)
        return [("statement_timeout", str(ms)), ("lock_timeout", str(ms)),
                ("idle_in_transaction_session_timeout", str(ms + 5000)), ("work_mem", f"{work_mem_kb}kB"),
                ("TimeZone", "UTC"), ("DateStyle", "ISO, YMD"), ("IntervalStyle", "postgres"),
                ("extra_float_digits", "1"), ("default_transaction_read_only", "on"),
                ("client_connection_check_interval", "1000")]

    def _setup(self) -> None:
        with self._conn.cursor() as cur:
            if self.role:
                cur.execute(f"SET ROLE {_ident(self.role)}")
            for key, value in self._settings():
                try:
                    cur.execute("SELECT set_config(%s, %s, false)", (key, value))
                except self._psycopg.errors.UndefinedObject:  # e.g. client_connection_check_interval before 14
                    pass
            cur.execute("SELECT current_user, current_setting('search_path')")
            self._user, self._search_path = cur.fetchone()
        self._conn.autocommit = False
        self._conn.read_only = True

    def _check_role(self) -> None:
        """Refuse a role whose rights a name check could not take back: a superuser, or a
        member of the roles that read or write server files or run server programs."""
        rows = self._rows(
            "SELECT r.rolsuper, ARRAY(SELECT b.rolname::text FROM pg_roles b WHERE b.rolname = ANY(%s) "
            "AND pg_has_role(r.oid, b.oid, 'USAGE') ORDER BY 1) FROM pg_roles r WHERE r.rolname = current_user",
            (list(DANGEROUS_ROLES),))
        superuser, powers = rows[0] if rows else (False, [])
        if superuser or powers:
            what = "a superuser" if superuser else "a member of " + ", ".join(powers)
            raise ConnectionError(
                f"refusing to grade on {display_location(self.url)} as role {self._user!r}: it is {what}, so "
                "model-generated SQL could read server files or undo its own restrictions. Fix: give a role that "
                "may only read, either in the URL (postgresql://grader@host/db) or as ?role=grader after the "
                "database name (SET ROLE after connecting), e.g. CREATE ROLE grader LOGIN; "
                "GRANT USAGE ON SCHEMA public TO grader; GRANT SELECT ON ALL TABLES IN SCHEMA public TO grader")

    def _catalog_denied(self) -> frozenset[str]:
        """Names of functions this server says are not for everyone: PUBLIC may not execute
        them (administrative functions, whatever the server version), or they run with
        their owner's rights (``SECURITY DEFINER``)."""
        rows = self._rows("SELECT DISTINCT lower(p.proname) FROM pg_proc p "
                          "WHERE p.prosecdef OR NOT has_function_privilege('public', p.oid, 'EXECUTE')")
        return frozenset(r[0] for r in rows)

    def _reopen(self) -> None:
        """A fresh session with the same role and settings, after the last one died."""
        try:
            self._conn.close()
        except Exception:  # pragma: no cover - closing a dead connection
            pass
        self._conn = self._connect()
        self._setup()
        self.reconnects += 1

    def _alive(self) -> None:
        """Reopen the session once if it is known to be dead."""
        if self._conn.closed or getattr(self._conn, "broken", False):
            self._reopen()

    def _pin(self, cur: Any, limit_s: float | None = None) -> None:
        """Open the query's read-only transaction and set, LOCAL to it, what a candidate must
        not find changed: the role, the search path and the time limits."""
        ms = str(max(1, int((self.limits.timeout_s if limit_s is None else limit_s) * 1000)))
        cur.execute("SELECT set_config('role', %s, true), set_config('search_path', %s, true), "
                    "set_config('statement_timeout', %s, true), set_config('lock_timeout', %s, true)",
                    (self.role or self._user, self._search_path, ms, ms))

    def close(self) -> None:
        self._conn.close()

    def _has_function(self, name: str) -> bool:
        """Whether the server has a function of this name (any schema, any arguments): when it
        does, an undefined_function error is about the arguments' types, not the name."""
        try:
            return bool(self._scalar("SELECT EXISTS (SELECT 1 FROM pg_proc WHERE proname = %s)",
                                     (name.rsplit(".", 1)[-1],)))
        except self._psycopg.Error:  # cannot tell: the server's own words stand
            return False

    def _scalar(self, sql: str, params: tuple[Any, ...] | None = None) -> Any:
        return self._rows(sql, params)[0][0]

    def _rows(self, sql: str, params: tuple[Any, ...] | list[Any] | None = None) -> list[tuple[Any, ...]]:
        self._alive()
        try:
            with self._conn.cursor() as cur:
                cur.execute(sql, params)
                rows: list[tuple[Any, ...]] = cur.fetchall()
                return rows
        finally:
            self._rollback()

    def _rollback(self) -> None:
        try:
            self._conn.rollback()
        except self._psycopg.Error:  # the session died: the next query reopens it
            pass

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
        """SHA-256 over everything a query can read through: every readable table's and
        materialized view's schema-qualified name, columns (name and type), row count and an
        order-independent sum of per-row hashes; every view's and materialized view's
        definition; functions, procedures and aggregates (signature, language, body,
        volatility, settings); user types (enum labels in order, composite attributes,
        domains, ranges); sequences; user operators; and the search path queries resolve
        names through (``_CATALOG_LINES``). Rows are hashed in SQL: ``SELECT count(*),
        sum(('x' || substr(md5(t::text), 1, 15))::bit(60)::bigint) FROM s.t AS t`` (60 bits
        of each row's MD5; the sum is a numeric, so it cannot overflow; ``t::text`` is the
        server's text of a row, with ``extra_float_digits`` pinned). Tables this role cannot
        read are named, not hashed."""
        tables = self._rows(
            "SELECT n.nspname, c.relname, c.relkind, has_table_privilege(c.oid, 'SELECT') FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind IN ('r', 'p', 'm', 'v', 'f') "
            "AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%' "
            "ORDER BY n.nspname, c.relname")
        cols: dict[tuple[str, str], list[tuple[str, ...]]] = {}
        for schema, table, column, dtype, collation in self._rows(
                "SELECT table_schema, table_name, column_name, data_type, collation_name "
                "FROM information_schema.columns ORDER BY table_schema, table_name, ordinal_position"):
            # a column's own collation changes what = and ORDER BY answer on it
            cols.setdefault((schema, table), []).append((column, dtype) if collation is None
                                                        else (column, dtype, collation))
        digest = hashlib.sha256()
        digest.update(f"P|search_path|{self._search_path}\n".encode())
        for schema, table, kind, readable in tables:
            if kind in ("v", "m"):  # pg_get_viewdef: the server's rendering (it keeps no text of a view)
                sql = self._scalar("SELECT pg_get_viewdef(%s::regclass, true)", (_ident(schema, table),))
                digest.update(f"V|{schema}.{table}|{sql}\n".encode())
            if kind == "v":
                continue
            if not readable:
                digest.update(f"T|{schema}.{table}|unreadable\n".encode())
            else:
                count, total = self._rows(
                    f"SELECT count(*), coalesce(sum(('x' || substr(md5(CAST(t AS text)), 1, 15))::bit(60)::bigint), 0)"
                    f"::text FROM {_ident(schema, table)} AS t")[0]
                digest.update(f"T|{schema}.{table}|{cols.get((schema, table), [])}|{count}|{total}\n".encode())
        for tag, sql in _CATALOG_LINES:
            if self._version_num < 140000:  # no SQL-standard function bodies before 14
                sql = sql.replace("p.prosqlbody IS NOT NULL", "false")
            try:
                rows = self._rows(sql)
            except self._psycopg.Error as exc:  # a catalog this server will not show: said, not skipped
                rows = [(f"unreadable:{getattr(exc, 'sqlstate', None) or type(exc).__name__}",)]
            for row in rows:
                digest.update((f"{tag}|" + "|".join(map(str, row)) + "\n").encode())
        return digest.hexdigest()

    # -- execution -----------------------------------------------------------------------
    def _refusal(self, sql: str) -> tuple[str, str] | None:
        """The sandbox rule that refuses ``sql`` before the server sees it, and why; None if none does."""
        n = statement_count(sql, "postgres")
        if n != 1:
            got = n if n >= 0 else "untokenizable SQL"
            return "multiple_statements", f"exactly one SELECT statement allowed, got {got}"
        import sqlglot
        tokens = sqlglot.tokenize(sql, read="postgres")
        first = next((t.text.upper() for t in tokens), "")
        if first in _STATEMENTS:
            return "not_a_query", f"only SELECT / WITH / VALUES queries are allowed, got {first}"
        name = denied_call(tokens, self._denied_oids_names)
        if name:
            return "file_or_system_access", f"function {name}() is not allowed"
        return None

    def run(self, sql: str, *, max_rows: int | None = None, timeout_s: float | None = None) -> ExecOutcome:
        """Run one statement in a read-only transaction that is rolled back afterwards.

        The server's time is wall time, which a loaded machine stretches, so a query that
        overruns its limit is run once more at ten times it (``tenfold``); only a second
        overrun is a ``timeout``, with both figures. One that finishes then is graded on
        its result."""
        limit = self.limits.timeout_s if timeout_s is None else min(timeout_s, self.limits.timeout_s)
        first = self._attempt(sql, max_rows, limit)
        if first.error is None or first.error.category != "timeout":
            return first
        second = self._attempt(sql, max_rows, tenfold(limit))
        if second.error is not None and second.error.category == "timeout":
            second.error = ExecError("timeout", f"exceeded the time limit twice: {first.elapsed_ms / 1000:.2f} s wall "
                                     f"at a limit of {limit:g} s, then {second.elapsed_ms / 1000:.2f} s at a limit of "
                                     f"{tenfold(limit):g} s", second.error.exception)
        second.elapsed_ms = round(first.elapsed_ms + second.elapsed_ms, 3)
        second.meta["first_attempt"] = {"limit_s": limit, "elapsed_ms": first.elapsed_ms}
        return second

    def _attempt(self, sql: str, max_rows: int | None, limit_s: float) -> ExecOutcome:
        """One run of ``sql`` under a time limit of ``limit_s`` (``statement_timeout`` and a cancel)."""
        max_rows = self.limits.max_rows if max_rows is None else max_rows
        start = time.perf_counter()
        refusal = self._refusal(sql)
        if refusal:
            return ExecOutcome(None, sandbox_refusal(*refusal), _ms(start))
        psycopg = self._psycopg
        try:
            self._alive()
            try:
                with self._conn.cursor() as pin:
                    self._pin(pin, limit_s)
            except psycopg.OperationalError:
                if not (self._conn.closed or getattr(self._conn, "broken", False)):
                    raise
                self._reopen()  # it died while idle: the candidate has not run yet
                with self._conn.cursor() as pin:
                    self._pin(pin, limit_s)
        except (psycopg.Error, ConnectionError) as exc:
            self._rollback()
            return ExecOutcome(None, ExecError("unknown_error", f"the engine session could not be (re)opened: "
                                               f"{str(exc).strip()[:500]}", type(exc).__name__), _ms(start))
        deadline = time.monotonic() + limit_s
        cancel = getattr(self._conn, "cancel_safe", None) or self._conn.cancel
        # A thread of its own, not the process's watchdog (engines.watchdog): a cancel is a round
        # trip to the server, and the watchdog calls interrupts under the lock every query disarms with.
        timer = threading.Timer(limit_s + 0.1, cancel)
        timer.daemon = True
        timer.start()
        cur = self._conn.cursor(name=f"sqleval_{time.monotonic_ns()}")
        try:
            cur.execute(sql.strip().rstrip(";"))
            desc = cur.description or []
            names = [d.name for d in desc]
            oids = [d.type_code for d in desc]

            def past_deadline() -> ExecError | None:
                if time.monotonic() > deadline:
                    return ExecError("timeout", "canceled: the time limit passed while fetching", "QueryCanceled")
                return None

            # max_bytes, and at most an eighth of memory_limit (result_byte_cap)
            got = fetch_capped(fetch_batches(cur, FETCH_BATCH), row_batch_size, max_rows=max_rows, limits=self.limits,
                               check=past_deadline)
            if got.error is not None:
                return ExecOutcome(None, got.error, _ms(start), truncated=got.truncated)
            return ExecOutcome(rows_to_arrow(names, oids, flat_rows(got.batches)), None, _ms(start))
        except psycopg.Error as exc:
            error = classify_error(exc)
            if error.category == "missing_function":
                self._rollback()  # the failed transaction first: the catalog is read outside it
                if self._has_function(str(error.subject)):  # it exists, for other argument types
                    error = ExecError("type_mismatch", error.message, error.exception)
            return ExecOutcome(None, error, _ms(start))
        except (MemoryError, RecursionError) as exc:
            return ExecOutcome(None, resource_error(exc), _ms(start))
        finally:
            timer.cancel()
            try:
                cur.close()
            except psycopg.Error:
                pass
            self._rollback()  # always: nothing a query did survives it


_NOT_NAMES = frozenset(n for n in ("STRING", "HEREDOC_STRING", "NATIONAL_STRING", "BIT_STRING", "HEX_STRING",
                                   "BYTE_STRING", "RAW_STRING", "UNICODE_STRING", "NUMBER", "PARAMETER", "PLACEHOLDER"))


def denied_call(tokens: list[Any], denied_names: frozenset[str] | set[str] = frozenset()) -> str | None:
    """The first denied function the tokens call, or None.

    A call is a name followed by ``(``, as the server reads it: a quoted name is the same
    name (``"set_config"``), a schema prefix does not matter (``pg_catalog.set_config``),
    comments and whitespace between name and parenthesis are gone. Names are lower-cased,
    so a quoted name in capitals (which the server would not find) is denied too. A
    unicode-escaped identifier (``U&"\\0071uery_to_xml"``) is refused as such: its name is
    only known after unescaping."""
    for i, tok in enumerate(tokens):
        kind = tok.token_type.name
        if kind == "AMP" and i and i + 1 < len(tokens) and tokens[i - 1].text.upper() == "U" \
                and tokens[i + 1].token_type.name == "IDENTIFIER" and tokens[i - 1].end + 1 == tok.start:
            return 'U&"..." (unicode-escaped identifiers)'
        if i + 1 >= len(tokens) or tokens[i + 1].token_type.name != "L_PAREN" or kind in _NOT_NAMES:
            continue
        if kind != "IDENTIFIER" and not re.fullmatch(r"[\w$]+", tok.text):
            continue
        name: str = tok.text.lower()
        if _DENIED_NAME_RE.fullmatch(name) or name in denied_names:
            return name
    return None


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


def _temporal_array(t: pa.DataType, values: list[Any]) -> pa.Array:
    """Dates or timestamps as Arrow, ``Infinite`` as DuckDB stores infinity: the largest
    (smallest, negated) value of the storage integer."""
    if pa.types.is_timestamp(t) and t.tz:
        utc = __import__("datetime").timezone.utc
        values = [v.astimezone(utc) if v is not None and not isinstance(v, Infinite) else v for v in values]
    infinite = [i for i, v in enumerate(values) if isinstance(v, Infinite)]
    if not infinite:
        return pa.array(values, type=t)
    storage_type, top = (pa.int32(), 2**31 - 1) if pa.types.is_date32(t) else (pa.int64(), 2**63 - 1)
    finite = pa.array([None if isinstance(v, Infinite) else v for v in values], type=t)
    storage = finite.view(storage_type).to_pylist()
    for i in infinite:
        storage[i] = top * values[i].sign
    return pa.array(storage, type=storage_type).view(t)


def _temporal_list_array(t: pa.DataType, values: list[Any]) -> pa.Array:
    """A one-dimensional array column of dates or timestamps (``Infinite`` included)."""
    offsets, valid = [0], []
    flat: list[Any] = []
    for v in values:
        if v is not None and any(isinstance(x, list) for x in v):
            raise TypeError("multi-dimensional array")
        flat += v or []
        offsets.append(len(flat))
        valid.append(v is not None)
    lists = pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), _temporal_array(t, flat),
                                     mask=pa.array([not x for x in valid]))
    return lists


def column_array(oid: int, values: list[Any]) -> pa.Array:
    """One result column as Arrow: fixed types by OID, numerics as decimals (float64 when
    they do not fit), JSON/UUID/network types as text, anything else inferred or as text."""
    if oid in _OID_TYPES:
        t = _OID_TYPES[oid]
        try:
            return _temporal_array(t, values) if oid in _TEMPORAL_OIDS else pa.array(values, type=t)
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
            return _as_text(values)
    if oid in _TEMPORAL_ARRAYS and any(isinstance(x, Infinite) for v in values if v for x in v):
        try:
            return _temporal_list_array(_OID_TYPES[_TEMPORAL_ARRAYS[oid]], values)
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError):
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


def rows_to_arrow(names: list[str], oids: list[int], rows: list[tuple[Any, ...]]) -> pa.Table:
    arrays = [column_array(oids[i], [r[i] for r in rows]) for i in range(len(names))]
    return pa.Table.from_arrays(arrays, names=names) if names else pa.table({})
