"""A Spark SQL session that model-generated SQL cannot escape.

Grading on Spark means grading a suite's DuckDB or SQLite file (or folder of Parquet files)
on a local Spark (``local[N]``): its tables are mirrored once into Parquet, one Spark
database per schema, ``CREATE TABLE ... (<columns>) USING parquet`` over the files, kept
under the source's content hash so a rerun loads nothing; a table is registered, its
columns given from the mirror's index, when a query first names it.

Out of the box Spark SQL reads any file by path, calls Java (``reflect``), substitutes
``${env:...}`` and runs commands (SET, ADD JAR, CACHE, CREATE TEMP VIEW, INSERT OVERWRITE
DIRECTORY, EXECUTE IMMEDIATE, ``BEGIN ... END``). The sandbox is three lines deep:

1. static settings fixed when the session starts (``LOCKED_CONF``: reflection matches
   nothing, no SQL on files, no variable substitution, UTC, no UI, a throwaway warehouse);
2. a statement gate (``gate``): exactly one statement that sqlglot parses as a query, no
   reflection call; anything it cannot read is refused (fail closed);
3. execution as ``SELECT * FROM (<query>) AS q``: Spark's own parser accepts nothing but a
   query there, so a command the gate misread is still a syntax error, never run.

A query's time limit is wall time (the work runs in the JVM, not in this process): past
it the query's tag is interrupted again and again until the query returns (a single
cancel that lands while the query is being planned is lost), and the engine host's kill
(which takes the JVM with it: the JVM exits when its parent's pipe closes) is the backstop.
Results are cut at ``max_rows + 1`` rows inside Spark before Arrow collects them, then the
byte cap applies.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
import re
import tempfile
import threading
import time
import uuid
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit

from .shared import SPARK_SCHEMES, write_cache_file
from .base import REFUSED, ExecError, ExecOutcome, Limits, elapsed_ms as _ms, refusal, resource_error, result_byte_cap, too_large

__all__ = ["LOCKED_CONF", "SPARK_SCHEMES", "SparkSandbox", "SparkSettings", "classify_error", "gate",
           "parse_location", "spark_location"]

ENGINE_NAME = "spark"
EXTRA_HINT = "pip install 'pytest-sqleval[spark]'"
CANCEL_EVERY_S = 0.2  # a timed-out query's tag is interrupted this often until the query returns
QUERY_ALIAS = "sqleval_query"

#: Settings fixed when the session starts, which ``[spark] conf`` may not change.
LOCKED_CONF: dict[str, str] = {
    "spark.sql.reflect.allowList": "(?!)",  # a pattern that matches nothing: no reflect / java_method
    "spark.sql.runSQLOnFiles": "false",  # no parquet.`/path`, text.`/etc/passwd`
    "spark.sql.variable.substitute": "false",  # ${env:HOME} stays text
    "spark.sql.session.timeZone": "UTC",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.scripting.enabled": "false",
    "spark.sql.legacy.allowNonEmptyLocationInCTAS": "false",
}
_JAVA_OPTIONS = "-XX:TieredStopAtLevel=1 -Duser.timezone=UTC -Dlog4j2.configurationFile={log4j}"
#: log4j 2: everything off, to an appender that drops it (with no appender at all Spark loads its own defaults)
_LOG4J = ("status = off\nappender.null.type = Null\nappender.null.name = null\nrootLogger.level = off\n"
          "rootLogger.appenderRef.null.ref = null\n")


@dataclass(frozen=True)
class SparkSettings:
    """``[spark]`` in a manifest: where Spark runs and how big it is.

    ``master``: ``local[N]`` (default: ``local[threads]`` of ``[limits]``); ``driver_memory``
    (default: ``[limits] memory_limit``); ``cache_dir``: where mirrored tables are kept
    (default: ``$XDG_CACHE_HOME/pytest-sqleval/spark``); ``conf``: more Spark settings
    (never one of ``LOCKED_CONF``)."""

    master: str = ""
    driver_memory: str = ""
    cache_dir: str = ""
    conf: dict[str, str] = field(default_factory=dict)

    def resolved(self, limits: Limits) -> "SparkSettings":
        from .shared import parse_size
        memory = self.driver_memory
        if not memory:
            try:
                memory = f"{max(512, parse_size(limits.memory_limit) // 1_000_000)}m"
            except ValueError:
                memory = "2g"
        cache = self.cache_dir or str(Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
                                      / "pytest-sqleval" / "spark")
        return SparkSettings(self.master or f"local[{max(1, int(limits.threads))}]", memory, cache, dict(self.conf))


def locked_keys(conf: dict[str, Any]) -> list[str]:
    """The keys of ``conf`` the sandbox fixes itself (a manifest may not set them)."""
    return sorted(k for k in conf if k in LOCKED_CONF or k.startswith(("spark.driver.extraJavaOptions",
                                                                         "spark.sql.warehouse.dir")))


def spark_location(source: str | Path, settings: SparkSettings = SparkSettings()) -> str:
    """The database location that grades ``source`` (a DuckDB or SQLite file or a folder of
    Parquet files) on Spark: ``spark:///<absolute path>?<settings>``. The settings ride in the
    location because the location is what reaches the engine process."""
    query = {k: v for k, v in (("master", settings.master), ("driver_memory", settings.driver_memory),
                               ("cache_dir", settings.cache_dir)) if v}
    query.update({f"conf.{k}": str(v) for k, v in sorted(settings.conf.items())})
    path = quote(str(Path(source).resolve()))
    return f"spark://{path}" + (f"?{urlencode(query)}" if query else "")


def parse_location(location: str) -> tuple[Path, SparkSettings]:
    """``spark_location``'s inverse: the source and the settings."""
    parts = urlsplit(location)
    if parts.scheme.lower() != "spark":
        raise ValueError(f"not a spark:// location: {location!r}")
    values = dict(parse_qsl(parts.query))
    conf = {k[5:]: v for k, v in values.items() if k.startswith("conf.")}
    return Path(unquote(parts.netloc + parts.path)), SparkSettings(values.get("master", ""),
                                                                    values.get("driver_memory", ""),
                                                                    values.get("cache_dir", ""), conf)


def _require_pyspark() -> Any:
    try:
        import pyspark
    except ImportError:
        from ..errors import UsageError
        raise UsageError(f"the Spark engine needs pyspark, which is not installed. Fix: {EXTRA_HINT} "
                         "(and Java 17 or 21 on the PATH or in JAVA_HOME)") from None
    return pyspark


# -- the session: one per process --------------------------------------------------------
_SESSION: Any = None
_SESSION_LOCK = threading.Lock()
_ACTIVE: dict[str, Any] = {"owner": None}  # which sandbox's tables the catalog holds now
_CREATED: set[str] = set()  # lower-case names of the databases the sandboxes made in this session
_JVM_PID: dict[str, int | None] = {"pid": None}  # the local session's JVM, whose CPU time a query's limit reads


def session(settings: SparkSettings) -> Any:
    """The process's Spark session, started with the locked settings on first use (a JVM
    takes seconds to start, so every sandbox of the process shares it; the first settings win)."""
    global _SESSION
    with _SESSION_LOCK:
        if _SESSION is not None:
            return _SESSION
        _require_pyspark()
        from pyspark.sql import SparkSession
        logging.getLogger("SQLQueryContextLogger").disabled = True  # pyspark logs every failed query with its stack
        logging.getLogger("DataFrameQueryContextLogger").disabled = True
        logging.getLogger("py4j").setLevel(logging.CRITICAL)
        work = Path(tempfile.mkdtemp(prefix="sqleval-spark-"))
        log4j = work / "log4j2.properties"
        log4j.write_text(_LOG4J)
        builder = SparkSession.builder.master(settings.master).appName("pytest-sqleval")
        for key, value in settings.conf.items():
            builder = builder.config(key, value)
        builder = (builder.config("spark.driver.memory", settings.driver_memory)
                   .config("spark.sql.warehouse.dir", str(work / "warehouse"))
                   .config("spark.local.dir", str(work / "local"))
                   .config("spark.driver.extraJavaOptions", _JAVA_OPTIONS.format(log4j=log4j))
                   .config("spark.sql.shuffle.partitions", str(_cores(settings.master)))
                   .config("spark.sql.catalogImplementation", "in-memory")
                   .config("spark.driver.bindAddress", "127.0.0.1")
                   .config("spark.driver.host", "127.0.0.1"))
        for key, value in LOCKED_CONF.items():
            builder = builder.config(key, value)
        with _quiet_stderr():  # the JVM inherits it: its warnings and stack traces go nowhere
            spark = builder.getOrCreate()
        spark.sparkContext.setLogLevel("OFF")
        spark.sql("SELECT count(*), max(id) FROM range(1000)").toArrow()  # compiles the query path before any limit counts
        proc = getattr(getattr(spark.sparkContext, "_gateway", None), "proc", None)
        _JVM_PID["pid"] = getattr(proc, "pid", None)  # spark-submit execs the JVM: the same process
        _SESSION = spark
        return spark


class _quiet_stderr:
    """File descriptor 2 on /dev/null while the JVM starts, so the JVM keeps that and never
    writes to the grading run's terminal; this process's own stderr comes back after."""

    def __enter__(self) -> None:
        self.saved = os.dup(2)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
        os.close(devnull)

    def __exit__(self, *exc: Any) -> None:
        os.dup2(self.saved, 2)
        os.close(self.saved)


def _cores(master: str) -> int:
    m = re.fullmatch(r"local\[(\d+)\]", master.strip())
    return int(m.group(1)) if m else 2


# -- the gate ------------------------------------------------------------------------------
_DENIED_FUNCTIONS = frozenset({"reflect", "java_method", "try_reflect"})
_QUERY_STARTS = frozenset({"SELECT", "WITH", "VALUES", "FROM", "TABLE"})  # a query's first word


def gate(sql: str) -> ExecError | None:
    """The refusal of anything but exactly one query, before Spark sees it; None for a query.
    Fails closed: SQL that sqlglot cannot parse as Spark is refused as not a query."""
    return gated(sql)[0]


def gated(sql: str) -> tuple[ExecError | None, Any]:
    """``gate``'s answer and, for a query, sqlglot's tree of it (the sandbox reads the
    tables it names from the same parse)."""
    import sqlglot
    from sqlglot import exp
    from .shared import statement_count
    n = statement_count(sql, "spark")
    if n != 1:
        return refusal("multiple_statements", f"exactly one SELECT statement allowed, got "
                                              f"{n if n >= 0 else 'untokenizable SQL'}"), None
    first = next((t for t in sqlglot.tokenize(sql, read="spark") if t.token_type.name not in ("L_PAREN",)), None)
    if first is None or first.text.upper() not in _QUERY_STARTS:
        word = first.text.upper() if first is not None else "nothing"
        return refusal("not_a_query", f"only a SELECT / WITH / VALUES query is allowed, got {word}"), None
    try:
        trees = [t for t in sqlglot.parse(sql, read="spark") if t is not None]
    except Exception as exc:  # sqlglot's ParseError and TokenError alike: refused, as a syntax error
        return ExecError("syntax_error", f"refused: does not parse as Spark SQL: {str(exc).splitlines()[0][:300]}",
                         REFUSED, subject="not_a_query"), None
    if len(trees) != 1:
        return refusal("multiple_statements", f"exactly one SELECT statement allowed, got {len(trees)}"), None
    tree = trees[0]
    if not isinstance(tree, (exp.Query, exp.Values)) or tree.find(exp.Command, exp.Set, exp.Create, exp.Insert, exp.Drop) is not None:
        kind = tree.key.upper() if not isinstance(tree, exp.Command) else str(tree.this).upper()
        return refusal("not_a_query", f"only a SELECT / WITH / VALUES query is allowed, got {kind}"), None
    for fn in tree.find_all(exp.Anonymous, exp.Func):
        name = (fn.name if isinstance(fn, exp.Anonymous) else fn.sql_name()).lower()
        if name in _DENIED_FUNCTIONS:
            return refusal("file_or_system_access", f"function {name}() is not allowed"), None
    return None, tree


def wrapped(sql: str) -> str:
    """The query as Spark runs it: a subquery, where its parser accepts nothing but a query."""
    body = sql.strip()
    while body.endswith(";"):
        body = body[:-1].rstrip()
    return f"SELECT * FROM (\n{body}\n) AS {QUERY_ALIAS}"


# -- errors ------------------------------------------------------------------------------
#: Spark's error condition (exact, then its prefix before the first dot) -> category
_CONDITIONS: dict[str, str] = {
    "TABLE_OR_VIEW_NOT_FOUND": "missing_table", "SCHEMA_NOT_FOUND": "missing_table",
    "UNRESOLVED_COLUMN": "missing_column", "UNRESOLVED_FIELD": "missing_column", "UNRESOLVED_MAP_KEY": "missing_column",
    "UNRESOLVED_ROUTINE": "missing_function",
    "AMBIGUOUS_REFERENCE": "ambiguous_reference", "AMBIGUOUS_COLUMN_OR_FIELD": "ambiguous_reference",
    "AMBIGUOUS_REFERENCE_TO_FIELDS": "ambiguous_reference",
    "MISSING_AGGREGATION": "invalid_aggregation", "MISSING_GROUP_BY": "invalid_aggregation",
    "GROUP_BY_AGGREGATE": "invalid_aggregation", "NESTED_AGGREGATE_FUNCTION": "invalid_aggregation",
    "GROUP_BY_POS_AGGREGATE": "invalid_aggregation", "UNSUPPORTED_EXPR_FOR_WINDOW": "invalid_aggregation",
    "WINDOW_FUNCTION_WITHOUT_OVER_CLAUSE": "invalid_aggregation",
    "DIVIDE_BY_ZERO": "division_by_zero", "INTERVAL_DIVIDED_BY_ZERO": "division_by_zero",
    "DATATYPE_MISMATCH": "type_mismatch", "CAST_INVALID_INPUT": "type_mismatch", "CAST_OVERFLOW": "type_mismatch",
    "WRONG_NUM_ARGS": "type_mismatch", "INCOMPATIBLE_COLUMN_TYPE": "type_mismatch",
    "NUM_COLUMNS_MISMATCH": "type_mismatch", "ARITHMETIC_OVERFLOW": "type_mismatch",
    "PARSE_SYNTAX_ERROR": "syntax_error", "PARSE_EMPTY_STATEMENT": "syntax_error",
    "OPERATION_CANCELED": "timeout", "SPARK_JOB_CANCELLED": "timeout",
    "UNRESOLVED_USING_COLUMN_FOR_JOIN": "missing_column",
}
#: SQLSTATE -> category, where the condition is not in ``_CONDITIONS``
_SQLSTATES = {"42703": "missing_column", "42P01": "missing_table", "3F000": "missing_table",
              "42883": "missing_function", "42702": "ambiguous_reference", "42803": "invalid_aggregation",
              "22012": "division_by_zero", "42601": "syntax_error", "42K09": "type_mismatch", "42804": "type_mismatch"}
_SQLSTATE_CLASSES = {"22": "type_mismatch", "42": "unknown_error", "53": "resource_exceeded", "54": "resource_exceeded",
                     "57": "timeout"}
_ROUTINE = re.compile(r"routine `?([^`\s]+)`?", re.I)
#: the first error condition in a JVM stack's "Caused by" chain, and its SQLSTATE
_CAUSE = re.compile(r"Caused by: [\w.$]+: (\[([A-Z][A-Z0-9_]*(?:\.[A-Z0-9_]+)*)\][^\n]*)")
_SQLSTATE = re.compile(r"SQLSTATE: (\w{5})")
_DETAIL = re.compile(r"\n\s*(?:== SQL|JVM stacktrace|at org\.|\tat )")


def classify_error(exc: BaseException) -> ExecError:
    """Spark's error condition (or SQLSTATE) as the runtime error taxonomy, with one clear
    line of its message (no JVM stack)."""
    condition = _call(exc, "getCondition") or _call(exc, "getErrorClass") or ""
    state = _call(exc, "getSqlState") or ""
    msg = outer = _one_message(str(exc))
    cause = None if condition else _CAUSE.search(str(exc))
    if cause is not None:  # a Java error pyspark did not convert (``Exception thrown in awaitResult``)
        condition, msg = cause.group(2), _one_message(cause.group(1))
        found = _SQLSTATE.search(cause.group(1))
        state = state or (found.group(1) if found else "")
    category = _CONDITIONS.get(condition) or _CONDITIONS.get(condition.split(".")[0])
    if condition == "DATATYPE_MISMATCH.METHOD_NOT_ALLOWED":
        category = "permission_error"
    if category is None:
        if re.search(r"cancel+ed|interrupted", outer + msg, re.I):
            category = "timeout"
        elif re.search(r"OutOfMemory|Java heap space|GC overhead", outer + msg, re.I):
            category = "resource_exceeded"
        else:
            category = _SQLSTATES.get(state) or _SQLSTATE_CLASSES.get(state[:2], "unknown_error")
    subject = None
    if category == "missing_function":
        found = _ROUTINE.search(msg)
        subject = found.group(1).split(".")[-1] if found else None
    return ExecError(category, msg, condition or type(exc).__name__, subject=subject)


def _one_message(text: str) -> str:
    """Spark's message without the plan or JVM stack it appends, positions counted in the
    query as written (it runs one line down, inside ``wrapped``)."""
    text = _DETAIL.split(text.strip(), 1)[0].strip()
    cut = re.search(r"SQLSTATE: \w{5}", text)
    if cut:
        text = text[:cut.end()] + re.sub(r";?\s*\n'.*", "", text[cut.end():], flags=re.S).rstrip(";")
    text = re.sub(r"line (\d+) pos", lambda m: f"line {max(1, int(m.group(1)) - 1)} pos", text)
    return text[:2000]


def _call(exc: BaseException, name: str) -> str | None:
    fn = getattr(exc, name, None)
    try:
        value = fn() if callable(fn) else None
    except Exception:
        return None
    return value if isinstance(value, str) else None


# -- the mirror ----------------------------------------------------------------------------
#: DuckDB types Spark cannot read from Parquet, and what the mirror stores instead
_MIRROR_CASTS = {"TIME": "VARCHAR", "TIME WITH TIME ZONE": "VARCHAR", "INTERVAL": "VARCHAR", "UUID": "VARCHAR",
                 "HUGEINT": "DECIMAL(38,0)", "UHUGEINT": "DECIMAL(38,0)", "UBIGINT": "DECIMAL(20,0)", "BIT": "VARCHAR",
                 "TIMESTAMP_NS": "TIMESTAMP", "TIMESTAMP_S": "TIMESTAMP", "TIMESTAMP_MS": "TIMESTAMP"}


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _spark_ident(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


@dataclass(frozen=True)
class MirroredTable:
    schema: str
    table: str
    folder: str
    #: its columns as Spark reads them (name, Spark type), read once from the Parquet footer
    #: when the mirror is made: registered with them, Spark infers nothing; () lets Spark infer
    columns: tuple[tuple[str, str], ...] = ()


def spark_columns(folder: str | Path) -> tuple[tuple[str, str], ...]:
    """A mirrored table's columns as Spark types, from its Parquet footer (pyarrow; no JVM),
    or () where a type has no exact Spark reading here (then Spark infers it)."""
    try:
        import pyarrow.parquet as pq
        from pyspark.sql.pandas.types import from_arrow_type
        path = Path(folder)
        first = path if path.is_file() else min(path.glob("*.parquet"))
        return tuple((f.name, from_arrow_type(f.type, prefer_timestamp_ntz=True).simpleString())
                     for f in pq.read_schema(first))
    except Exception:  # an unsigned integer, a type pyspark cannot read from Arrow, no file
        return ()


def source_hash(source: Path, cache_dir: Path) -> str:
    """The source's content hash: DuckDB's or SQLite's (``DuckDBSandbox.content_hash``,
    ``SQLiteSandbox.content_hash``: the hash the file has on its own engine, kept per version
    of the file: identity, size, modification time), or, for a folder of Parquet files,
    the SHA-256 of their names and bytes."""
    if source.is_dir():
        digest = hashlib.sha256(b"parquet-folder\n")
        for f in sorted(source.rglob("*.parquet")):
            digest.update(f"{f.relative_to(source).as_posix()}\n".encode())
            with open(f, "rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    digest.update(chunk)
        return digest.hexdigest()
    st = source.stat()
    key = hashlib.sha256(json.dumps([str(source.resolve()), st.st_dev, st.st_ino, st.st_size,
                                     st.st_mtime_ns]).encode()).hexdigest()[:32]
    kept = cache_dir / "source-hash" / f"{key}.txt"
    try:
        return kept.read_text().strip()
    except OSError:
        pass
    from .duckdb_sandbox import DuckDBSandbox
    from .sqlite_sandbox import SQLiteSandbox
    db: DuckDBSandbox | SQLiteSandbox = (SQLiteSandbox(source, Limits(timeout_s=600.0)) if is_sqlite_file(source)
                                         else DuckDBSandbox(source, Limits(timeout_s=600.0)))
    try:
        digest_text = db.content_hash()
    finally:
        db.close()
    write_cache_file(kept, digest_text)
    return digest_text


MIRROR_INDEX = "tables.v2.json"  # v2: each table's Spark columns (v1 had none: such a mirror is made again)


def mirror(source: Path, content_hash: str, cache_dir: Path) -> list[MirroredTable]:
    """The source's tables as Parquet folders under ``cache_dir/<content hash>``, written
    once: a later call reads the index the first one left and writes nothing."""
    root = cache_dir / content_hash
    index = root / MIRROR_INDEX
    try:
        return [MirroredTable(t["schema"], t["table"], t["folder"], tuple((c, ty) for c, ty in t["columns"]))
                for t in json.loads(index.read_text())]
    except (OSError, ValueError, TypeError, KeyError):
        pass
    if source.is_dir():
        tables = _parquet_tables(source)
    elif is_sqlite_file(source):
        tables = _copy_sqlite(source, root / f".build-{os.getpid()}-{uuid.uuid4().hex[:8]}", root)
    else:
        tables = _copy_duckdb(source, root / f".build-{os.getpid()}-{uuid.uuid4().hex[:8]}", root)
    tables = [dataclasses.replace(t, columns=spark_columns(t.folder)) for t in tables]
    write_cache_file(index, json.dumps([asdict(t) for t in tables]))
    return tables


def _parquet_tables(folder: Path) -> list[MirroredTable]:
    """A folder of Parquet files: ``<table>.parquet`` (or a folder ``<table>/`` of parts)
    in schema ``main``; ``<schema>/<table>.parquet`` in that schema."""
    out = []
    for f in sorted(folder.rglob("*.parquet")):
        rel = f.relative_to(folder).parts
        schema = rel[0] if len(rel) > 1 else "main"
        out.append(MirroredTable(schema, f.stem, str(f.resolve())))
    return out


def _copy_duckdb(source: Path, build: Path, root: Path) -> list[MirroredTable]:
    import duckdb
    conn = duckdb.connect(str(source), read_only=True)
    try:
        rels = conn.execute("SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = current_database() "
                            "AND NOT internal AND NOT temporary UNION ALL SELECT schema_name, view_name FROM duckdb_views() "
                            "WHERE database_name = current_database() AND NOT internal AND NOT temporary "
                            "ORDER BY 1, 2").fetchall()
        tables = []
        for i, (schema, name) in enumerate(rels):
            rel = f"{_ident(schema)}.{_ident(name)}"
            cols = conn.sql(f"SELECT * FROM {rel}")
            select = ", ".join(
                f"CAST({_ident(c)} AS {_MIRROR_CASTS[str(t).upper()]}) AS {_ident(c)}"
                if str(t).upper() in _MIRROR_CASTS or str(t).upper().startswith("ENUM") else _ident(c)
                for c, t in zip(cols.columns, cols.types)) or "*"
            select = re.sub(r"AS ENUM\([^)]*\)", "AS VARCHAR", select)
            target = build / f"t{i:05d}"
            target.mkdir(parents=True, exist_ok=True)
            path = str(target / "part-0.parquet").replace("'", "''")
            conn.execute(f"COPY (SELECT {select} FROM {rel}) TO '{path}' (FORMAT parquet)")
            tables.append(MirroredTable(schema, name, str(root / f"t{i:05d}")))
    finally:
        conn.close()
    _into_place(build, root)
    return tables


SQLITE_HEADER = b"SQLite format 3\x00"


def is_sqlite_file(path: Path) -> bool:
    """Whether ``path`` is a SQLite database (its 16-byte header), not a DuckDB file."""
    try:
        with open(path, "rb") as fh:
            return fh.read(16) == SQLITE_HEADER
    except OSError:
        return False


def sqlite_affinity(declared: str) -> str:
    """A column's affinity from its declared type, by SQLite's own rules in their order
    ("Datatypes In SQLite", 3.1): INT -> INTEGER; CHAR, CLOB, TEXT -> TEXT; BLOB or no
    type -> BLOB; REAL, FLOA, DOUB -> REAL; anything else (``number``, ``DATE``,
    ``BOOLEAN``, ``DECIMAL(10,2)``) -> NUMERIC."""
    d = declared.upper()
    if "INT" in d:
        return "INTEGER"
    if any(k in d for k in ("CHAR", "CLOB", "TEXT")):
        return "TEXT"
    if "BLOB" in d or not d.strip():
        return "BLOB"
    if any(k in d for k in ("REAL", "FLOA", "DOUB")):
        return "REAL"
    return "NUMERIC"


def sqlite_column_type(declared: str, classes: set[str]) -> str:
    """The Spark type a SQLite column is mirrored as (SQLite types values, not columns): by
    the storage classes its values hold, ``integer`` -> bigint, ``integer`` and ``real`` ->
    double, ``text`` -> string, ``blob`` -> binary; any other mix (text in an INTEGER
    column, Spider's ``''`` for a missing number) -> string, each value as SQLite's own
    ``CAST(v AS TEXT)``. A column with no value but NULL takes its declared affinity
    (INTEGER -> bigint, REAL and NUMERIC -> double, else string). Dates stay text: SQLite
    has no date type and compares them as text."""
    classes = classes - {"null"}
    if not classes:
        return {"INTEGER": "bigint", "REAL": "double", "NUMERIC": "double"}.get(sqlite_affinity(declared), "string")
    if classes == {"integer"}:
        return "bigint"
    if classes <= {"integer", "real"}:
        return "double"
    if classes == {"blob"}:
        return "binary"
    return "string"


_SQLITE_BATCH = 50_000  # rows a mirror reads from SQLite and writes to Parquet at a time


def _copy_sqlite(source: Path, build: Path, root: Path) -> list[MirroredTable]:
    """A SQLite file's tables and views as Parquet, one folder each, typed by
    ``sqlite_column_type`` (read-only, through Python's sqlite3 and pyarrow)."""
    import sqlite3

    import pyarrow as pa
    import pyarrow.parquet as pq
    arrow = {"bigint": pa.int64(), "double": pa.float64(), "string": pa.string(), "binary": pa.binary()}
    conn = sqlite3.connect(source.resolve().as_uri() + "?mode=ro", uri=True)
    conn.text_factory = lambda raw: raw.decode("utf-8", errors="replace")  # Spider/BIRD hold some invalid UTF-8
    try:
        rels = conn.execute("SELECT name FROM sqlite_schema WHERE type IN ('table', 'view') AND name NOT LIKE "
                            "'sqlite\\_%' ESCAPE '\\' ORDER BY name").fetchall()
        tables = []
        for i, (name,) in enumerate(rels):
            cols = [(c, t or "") for _, c, t, *_ in conn.execute(f"PRAGMA table_info({_ident(name)})").fetchall()]
            if not cols:
                continue
            seen = conn.execute("SELECT " + ", ".join(f"group_concat(DISTINCT typeof({_ident(c)}))" for c, _ in cols)
                                + f" FROM {_ident(name)}").fetchone()
            types = [sqlite_column_type(t, set((k or "").split(",")) - {""}) for (_, t), k in zip(cols, seen)]
            select = ", ".join(f"CAST({_ident(c)} AS TEXT)" if ty == "string" else
                               f"CAST({_ident(c)} AS REAL)" if ty == "double" else _ident(c)
                               for (c, _), ty in zip(cols, types))
            schema = pa.schema([pa.field(c, arrow[ty]) for (c, _), ty in zip(cols, types)])
            target = build / f"t{i:05d}"
            target.mkdir(parents=True, exist_ok=True)
            cursor = conn.execute(f"SELECT {select} FROM {_ident(name)}")
            with pq.ParquetWriter(str(target / "part-0.parquet"), schema) as writer:
                while True:  # an empty table still gets its file (and its schema)
                    rows = cursor.fetchmany(_SQLITE_BATCH)
                    columns = list(zip(*rows)) if rows else [()] * len(cols)
                    writer.write_table(pa.table([pa.array(list(v), type=f.type) for v, f in zip(columns, schema)],
                                                schema=schema))
                    if len(rows) < _SQLITE_BATCH:
                        break
            tables.append(MirroredTable("main", name, str(root / f"t{i:05d}")))
    finally:
        conn.close()
    _into_place(build, root)
    return tables


# -- the sandbox ---------------------------------------------------------------------------
class SparkSandbox:
    """A suite's tables on a local Spark, read-only and bounded; ``run`` executes one query."""

    name = ENGINE_NAME
    dialect = "spark"

    def __init__(self, location: str, limits: Limits = Limits()) -> None:
        pyspark = _require_pyspark()
        self.version = str(pyspark.__version__)
        self.location = location
        self.limits = limits
        source, settings = parse_location(location)
        if not source.exists():
            raise FileNotFoundError(f"database {source} does not exist")
        self.source = source
        self.settings = settings.resolved(limits)
        self.cache_dir = Path(self.settings.cache_dir)
        self._hash = source_hash(source, self.cache_dir)
        self.tables = mirror(source, self._hash, self.cache_dir)
        self.spark = session(self.settings)
        self._registered: set[tuple[str, str]] = set()  # (schema, table), lower-case: in the catalog now
        self._activate()

    def _activate(self) -> None:
        """Make the session's catalog this sandbox's (the session is the process's; another
        sandbox may have put its own there): drop the databases, create ``main``. No table
        is registered here, and no other database created: ``_register`` does both when a
        query first names a table, with its columns from the mirror's index, so Spark reads
        no file to infer them, and opening a cached mirror costs next to nothing (a session
        pays only for the tables its queries read). Metadata only."""
        if _ACTIVE["owner"] is self:
            return
        spark = self.spark
        for db in sorted(_CREATED):  # not listDatabases: a fresh JVM's first catalog call costs half a second
            spark.sql(f"DROP DATABASE IF EXISTS {_spark_ident(db)} CASCADE")
        _CREATED.clear()
        self._create_database("main")
        spark.catalog.setCurrentDatabase("main")
        self._registered = set()
        _ACTIVE["owner"] = self

    def _create_database(self, name: str) -> None:
        if name.lower() not in _CREATED:
            self.spark.sql(f"CREATE DATABASE IF NOT EXISTS {_spark_ident(name)}")
            _CREATED.add(name.lower())

    def _register(self, wanted: list[MirroredTable]) -> None:
        """Register the mirrored tables in ``wanted`` not yet in the catalog: ``CREATE TABLE
        ... (<columns>) USING parquet LOCATION``, the columns given (no inference)."""
        self._activate()
        for t in wanted:
            key = (t.schema.lower(), t.table.lower())
            if key in self._registered:
                continue
            self._create_database(t.schema)
            where = t.folder.replace("\\", "\\\\").replace("'", "\\'")
            cols = f" ({', '.join(f'{_spark_ident(c)} {ty}' for c, ty in t.columns)})" if t.columns else ""
            self.spark.sql(f"CREATE TABLE {_spark_ident(t.schema)}.{_spark_ident(t.table)}{cols} USING parquet "
                           f"LOCATION '{where}'")
            self._registered.add(key)

    def register_all(self) -> None:
        """Every mirrored table in the catalog (what a query whose tables ``_named`` cannot
        see needs; the benchmark's eager figure)."""
        self._register(self.tables)

    def _named(self, tree: Any) -> list[MirroredTable]:
        """The mirrored tables a query's tree names (``schema.table``, or ``table`` in
        ``main``); a name it does not know is left to Spark to report."""
        from sqlglot import exp
        by_name: dict[tuple[str, str], MirroredTable] = {(t.schema.lower(), t.table.lower()): t for t in self.tables}
        out = []
        for node in tree.find_all(exp.Table):
            t = by_name.get(((node.db or "main").lower(), node.name.lower()))
            if t is not None:
                out.append(t)
        return out

    def close(self) -> None:
        if _ACTIVE["owner"] is self:
            _ACTIVE["owner"] = None

    # -- introspection -------------------------------------------------------------------
    def catalog(self) -> dict[str, dict[str, dict[str, str]]]:
        out: dict[str, dict[str, dict[str, str]]] = {}
        for t in self.tables:  # from the mirror's index: no table needs registering to be described
            if not t.columns:
                self._register([t])
            schema = dict(t.columns) or {f.name: f.dataType.simpleString() for f in self.spark.table(
                f"{_spark_ident(t.schema)}.{_spark_ident(t.table)}").schema.fields}
            out.setdefault(t.schema, {})[t.table] = schema
        return out

    def content_hash(self) -> str:
        """The source's content hash (``source_hash``): the mirror is made from it and kept
        under it, so it names what every query reads."""
        return self._hash

    # -- execution -----------------------------------------------------------------------
    def run(self, sql: str, *, max_rows: int | None = None, timeout_s: float | None = None) -> ExecOutcome:
        """Run one query, bounded in time (wall), rows and bytes, once the tables it names are
        registered. A table Spark does not find while some mirrored table is unregistered
        (a name sqlglot did not see) registers them all, and the query runs once more."""
        start = time.perf_counter()
        refused, tree = gated(sql)  # one parse: the gate's, and the tables it names
        if refused is not None:
            return ExecOutcome(None, refused, _ms(start))
        self._register(self._named(tree))
        outcome = self._run_once(sql, max_rows=max_rows, timeout_s=timeout_s)
        if (outcome.error is not None and outcome.error.category == "missing_table"
                and len(self._registered) < len(self.tables)):
            self.register_all()
            limit_s = query_bounds(self.limits, max_rows, timeout_s)[1]
            outcome = self._run_once(sql, max_rows=max_rows, timeout_s=max(0.1, limit_s - (time.perf_counter() - start)))
        return outcome

    def _run_once(self, sql: str, *, max_rows: int | None = None, timeout_s: float | None = None) -> ExecOutcome:
        """Run one query the gate let through, bounded in time (wall), rows and bytes."""
        max_rows, limit_s = query_bounds(self.limits, max_rows, timeout_s)
        start = time.perf_counter()
        self._activate()
        tag = f"sqleval-{uuid.uuid4().hex}"
        stopper = _Stopper(self.spark, tag, limit_s, _JVM_PID["pid"], _cores(self.settings.master))
        # a job group, not a session tag: Arrow's collect runs its jobs on a JVM thread of its
        # own, which inherits the group (a local property) and not the tag (measured: a
        # tagged query ran on past its interrupts)
        self.spark.sparkContext.setJobGroup(tag, "pytest-sqleval query", interruptOnCancel=True)
        try:
            stopper.start()
            table = self.spark.sql(wrapped(sql)).limit(max_rows + 1).toArrow()
        except Exception as exc:
            if isinstance(exc, (MemoryError, RecursionError)):
                return ExecOutcome(None, resource_error(exc), _ms(start))
            error = classify_error(exc)
            if stopper.fired:
                error = stopper.error(error.exception)
            return ExecOutcome(None, error, _ms(start))
        finally:
            stopper.stop()
            self.spark.sparkContext.setJobGroup("sqleval-idle", "", interruptOnCancel=True)
        if stopper.fired:  # it returned as the cancel came: past its limit all the same
            return ExecOutcome(None, stopper.error("Cancelled"), _ms(start))
        cap = result_byte_cap(self.limits)
        if table.num_rows > max_rows:
            return ExecOutcome(None, too_large(max_rows, cap, self.limits, rows_read=table.num_rows), _ms(start),
                               truncated=True)
        if table.nbytes > cap:
            return ExecOutcome(None, too_large(max_rows, cap, self.limits, rows_read=table.num_rows), _ms(start),
                               truncated=True)
        return ExecOutcome(table, None, _ms(start))


class _Stopper:
    """Cancels a query's job group once it is past its limit, and again every
    ``CANCEL_EVERY_S`` until the query returns: one cancel can land while the query is
    still planned, and is lost. The limit is CPU time, as on every engine: the JVM's (read
    from ``/proc``), against the limit times the cores of ``local[N]``, since a loaded
    machine stretches wall time and not CPU time (plus one core's worth for the JVM's JIT
    compiler and garbage collector); the wall bound (``watchdog.wall_bound``)
    stops a query the machine starves (``unfinished``: not graded). Without the JVM's CPU
    time (Spark Connect, no ``/proc``) the limit is wall time."""

    def __init__(self, spark: Any, tag: str, limit_s: float, jvm_pid: int | None, cores: int) -> None:
        from .watchdog import process_cpu_s, wall_bound
        self.spark, self.tag, self.limit_s = spark, tag, limit_s
        self.pid, self.cores = jvm_pid, max(1, cores)
        self._cpu = process_cpu_s
        self.cpu0 = process_cpu_s(jvm_pid) if jvm_pid is not None else None
        self.wall_s = wall_bound(limit_s) if self.cpu0 is not None else limit_s
        self.started = time.monotonic()
        self.fired: str | None = None  # "timeout" or "unfinished", once it fired
        self.cancels = 0
        self.cpu_used: float | None = None
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="sqleval-spark-stopper", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def used_cpu(self) -> float | None:
        now = self._cpu(self.pid) if self.pid is not None and self.cpu0 is not None else None
        return None if now is None or self.cpu0 is None else now - self.cpu0

    def _watch(self) -> None:
        cpu_limit = self.limit_s * (self.cores + 1)  # + the JVM's own threads (JIT compiler, GC)
        while not self._done.wait(0.05 if self.cpu0 is not None else self.limit_s):
            wall = time.monotonic() - self.started
            cpu = self.used_cpu()
            if cpu is not None and cpu >= cpu_limit:
                self.fired = "timeout"
            elif wall >= self.wall_s:
                self.fired = "timeout" if self.cpu0 is None else "unfinished"
            if self.fired:
                self.cpu_used = cpu
                break
        while not self._done.is_set():
            try:
                self.spark.sparkContext.cancelJobGroup(self.tag)
            except Exception:
                pass  # the session is going away: the engine host's kill is the backstop
            self.cancels += 1
            self._done.wait(CANCEL_EVERY_S)

    def error(self, exception: str) -> ExecError:
        """The error of the query it stopped, with its figures."""
        from .watchdog import unfinished_message
        wall = time.monotonic() - self.started
        if self.fired == "unfinished":
            return ExecError("unfinished", unfinished_message(self.limit_s, self.wall_s, self.cpu_used, wall), exception)
        if self.cpu_used is not None:
            cores = f" x ({self.cores} cores + 1 for the JVM's own threads)"
            return ExecError("timeout", f"exceeded the time limit: {self.cpu_used:.2f} s of the JVM's CPU time, over "
                                        f"the limit of {self.limit_s:g} s{cores} ({wall:.2f} s wall); its jobs were "
                                        f"cancelled {self.cancels} time(s) until it returned", exception)
        return ExecError("timeout", f"exceeded the time limit of {self.limit_s:g} s (wall time); its jobs were cancelled "
                                    f"{self.cancels} time(s) until it returned", exception)

    def stop(self) -> None:
        self._done.set()
        self._thread.join(timeout=5)


def settings_from_table(values: dict[str, Any]) -> SparkSettings:
    """``[spark]`` as settings; a ``ValueError`` names the bad key."""
    known = {f.name for f in fields(SparkSettings)}
    for key in values:
        if key not in known:
            raise ValueError(f"unknown key {key!r} in [spark] (known: {', '.join(sorted(known))})")
    conf = values.get("conf", {})
    if not isinstance(conf, dict):
        raise ValueError("[spark] conf must be a table of Spark settings")
    locked = locked_keys(conf)
    if locked:
        raise ValueError(f"[spark] conf may not set {', '.join(locked)}: the sandbox fixes it")
    for key in ("master", "driver_memory", "cache_dir"):
        if key in values and not isinstance(values[key], str):
            raise ValueError(f"[spark] {key} must be a string")
    return SparkSettings(values.get("master", ""), values.get("driver_memory", ""), values.get("cache_dir", ""),
                         {str(k): str(v) for k, v in conf.items()})


def _into_place(build: Path, root: Path) -> None:
    """A mirror's files moved from its build folder into place; the index, written after,
    says the mirror is whole."""
    root.mkdir(parents=True, exist_ok=True)
    for child in build.iterdir():
        os.replace(child, root / child.name)
    build.rmdir()


def query_bounds(limits: Any, max_rows: int | None, timeout_s: float | None) -> tuple[int, float]:
    """A query's row cap and time limit: the caller's, never past the sandbox's own limits."""
    return (limits.max_rows if max_rows is None else max_rows,
            limits.timeout_s if timeout_s is None else min(timeout_s, limits.timeout_s))
