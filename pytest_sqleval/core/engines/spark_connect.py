"""Grading over Spark Connect: an existing catalog on a Spark Connect server.

``database = "sc://host:port/;token=..."`` (or ``--sqleval-spark-remote``) grades against
the tables a Connect server already holds: nothing is loaded, nothing is written. The
content hash is computed from the tables as read (``ConnectSandbox.content_hash``): every
table's and view's name, kind and schema, and per table one aggregate over its rows (a
count and two order-independent sums of row hashes), so one row per table comes back and
never a table's rows.

The sandbox contract is the local engine's (``spark_sandbox``): the statement gate, the
query run as a subquery, ``limit(max_rows + 1)`` before ``toArrow()``, the byte cap, Spark's
error conditions in the project's taxonomy. What differs over Connect:

- the server's static settings are the server's: the session sets what a session may
  (no SQL on files, no variable substitution, UTC) and the gate refuses reflection calls
  whatever ``spark.sql.reflect.allowList`` says; on a real cluster a read-only principal
  is the first line, the gate the second;
- a query's limit is wall time (the server's CPU is not readable from here); past it the
  query's operation tag is interrupted again and again until the call has returned and
  no operation under the tag is left on the server. That is not the end of its work:
  measured on Spark 4.3, the server drops the operation and its tasks compute on. So on a
  server this process started (``LocalConnectServer``, whose CPU time it reads), the
  sandbox waits up to ``BACKSTOP_S`` for the server's CPU to be free, and restarts the
  server if it is not (the backstop); on a remote server, whose CPU it cannot read, the
  case is marked (``meta["server_may_still_run"]``) and its message says so.

``LocalConnectServer`` starts a real Connect server (pyspark's bundled Spark, the class
``sbin/start-connect-server.sh`` runs) on 127.0.0.1 only, with the locked settings and a
token, for the tests and the benchmark.
"""
from __future__ import annotations

import hashlib
import logging
import os
import secrets
import signal
import socket
import subprocess
import tempfile
import threading
import time
import uuid
import warnings
import weakref
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..childio import start_guard, stop_guard
from .base import ExecError, ExecOutcome, Limits, elapsed_ms as _ms, resource_error, result_byte_cap, too_large
from .spark_sandbox import (_LOG4J, query_bounds, CANCEL_EVERY_S, EXTRA_HINT, LOCKED_CONF, _spark_ident, classify_error, gate,
                            wrapped)

__all__ = ["BACKSTOP_S", "SESSION_CONF", "ConnectSandbox", "LocalConnectServer", "connect_endpoint"]

CONNECT_SCHEME = "sc"
#: settings a Connect session may set itself, set on every session the sandbox opens
SESSION_CONF: dict[str, str] = {
    "spark.sql.runSQLOnFiles": "false",
    "spark.sql.variable.substitute": "false",
    "spark.sql.session.timeZone": "UTC",
}
BACKSTOP_S = 10.0  # how long a timed-out query's work may go on on the server before the backstop
CONNECT_TIMEOUT_S = 60.0  # the longest wait for a server to answer its first request
HASH_TIMEOUT_S = 600.0  # the longest the content hash may read (per batch of tables)
HASH_BATCH = 32  # tables per hash query (one job, one round trip)
SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"  # what start-connect-server.sh runs


def connect_endpoint(location: str) -> tuple[str, int]:
    """``(host, port)`` of an ``sc://`` location (15002, Connect's port, when it names none)."""
    parts = urlsplit(location)
    if parts.scheme.lower() != CONNECT_SCHEME or not parts.hostname:
        raise ValueError(f"not a Spark Connect location: {location!r} (write sc://host:port/;token=...)")
    return parts.hostname, parts.port or 15002


def _require_connect() -> Any:
    try:
        import pyspark
        import pyspark.sql.connect.session  # noqa: F401  (grpcio, protobuf: the connect extra)
    except ImportError as exc:
        from ..errors import UsageError
        raise UsageError(f"Spark Connect needs pyspark with its connect extra ({exc.name or exc} is missing). "
                         f"Fix: {EXTRA_HINT}") from None
    return pyspark


def _quiet_loggers() -> None:
    """pyspark logs every failed query with its JVM stack; a failing case shows one line."""
    for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger", "pyspark.sql.connect.logging",
                 "pyspark.sql.connect.client.retries"):
        logging.getLogger(name).disabled = True
    warnings.filterwarnings("ignore", message=r"\[RETRIES_EXCEEDED\]")  # the client's retries, given up: the error says it


#: every Connect session this process opened and has not closed, with its location. A client
#: left open calls its server again when the interpreter exits (pyspark's ``atexit`` clean-up,
#: with retries and their back-off), and on a server that is gone by then it prints
#: ``[RETRIES_EXCEEDED]`` after the run, where no warning filter applies any more (pytest
#: restores its filters after each test). So every session is closed by whoever ends it.
_OPEN: "weakref.WeakKeyDictionary[Any, str]" = weakref.WeakKeyDictionary()
_OPEN_LOCK = threading.Lock()  # sessions open in a thread of their own (``connect_session``)


def close_client(spark: Any, *, release: bool = False) -> None:
    """Close a Connect session's channel here, so that nothing of it calls its server again
    (not at exit either). ``release``: first interrupt what it runs and release it on the
    server, without retries (a server that is gone answers at once, not after back-offs)."""
    with _OPEN_LOCK:
        _OPEN.pop(spark, None)
    try:
        if release:
            spark.client.set_retry_policies([])
            spark.interruptAll()
            spark.stop()  # releases the session, then closes the channel
    except Exception:
        pass
    try:
        spark.client.close()
    except Exception:
        pass


def close_sessions(location: str) -> int:
    """Close every session this process still holds on ``location`` (its server is going)."""
    with _OPEN_LOCK:
        doomed = [s for s, where in list(_OPEN.items()) if where == location]
    for spark in doomed:
        close_client(spark)
    return len(doomed)


def connect_session(location: str, wait_s: float = CONNECT_TIMEOUT_S) -> Any:
    """A new Connect session on ``location`` that has answered a first query, within
    ``wait_s``; a ``ConnectionError`` with one clear line otherwise (an unreachable port,
    a refused token, a server that does not answer)."""
    _require_connect()
    _quiet_loggers()
    from ..engines.shared import display_location
    host, port = connect_endpoint(location)
    try:
        with socket.create_connection((host, port), timeout=min(10.0, wait_s)):
            pass
    except OSError as exc:
        raise ConnectionError(f"cannot reach the Spark Connect server at {host}:{port}: {exc.strerror or exc}. "
                              "Fix: start it, or correct the sc:// location") from None
    from pyspark.sql.connect.client.retries import DefaultPolicy
    from pyspark.sql.connect.session import SparkSession
    box: dict[str, Any] = {}
    lock = threading.Lock()

    def attempt() -> None:
        spark = None
        try:
            spark = SparkSession.builder.remote(location).create()
            spark.client.set_retry_policies([DefaultPolicy(max_retries=4, max_backoff=2000)])
            spark.sql("SELECT 1").toArrow()
        except Exception as exc:  # a wrong token, a server that is not Connect
            if spark is not None:
                close_client(spark)
            box["error"] = exc
            return
        with lock:
            if box.get("abandoned"):  # it answered after the caller gave up: nobody will close it
                close_client(spark)
            else:
                with _OPEN_LOCK:
                    _OPEN[spark] = location
                box["spark"] = spark

    thread = threading.Thread(target=attempt, name="sqleval-connect-open", daemon=True)
    thread.start()
    thread.join(wait_s)
    with lock:
        box["abandoned"] = "spark" not in box
    if "spark" in box:
        return box["spark"]
    if "error" in box:
        line = str(box["error"]).strip().splitlines()[0][:300] if str(box["error"]).strip() else type(box["error"]).__name__
        raise ConnectionError(f"the Spark Connect server at {display_location(location)} refused the session: "
                              f"{line}. Fix: check the token and that the port is a Spark Connect server")
    raise ConnectionError(f"the Spark Connect server at {display_location(location)} did not answer within "
                          f"{wait_s:g} s. Fix: check that the port is a Spark Connect server")


class ConnectSandbox:
    """The tables of a Spark Connect server's current catalog, read-only and bounded."""

    name = "spark"
    dialect = "spark"

    def __init__(self, location: str, limits: Limits = Limits(), *, server: "LocalConnectServer | None" = None) -> None:
        self.location = location
        self.limits = limits
        #: the server, when this process started it: its CPU time is read, and it is restarted
        #: when a timed-out query's tasks compute on (the backstop); None for a remote server
        self.server = server
        self.spark = self._open()
        self.version = str(self.spark.version)
        #: the server's static settings that the local engine locks and a session cannot set
        self.server_conf = {k: self._conf(k) for k in ("spark.sql.reflect.allowList", "spark.sql.scripting.enabled")}
        self._hash: str | None = None
        self._tables: list[tuple[str, str, str]] | None = None

    def _open(self) -> Any:
        spark = connect_session(self.location)
        for key, value in SESSION_CONF.items():
            spark.conf.set(key, value)
        return spark

    def reconnect(self) -> None:
        """A new session (the server was restarted: the old session is gone with it, and its
        client is closed here, so it never calls the dead server again)."""
        close_client(self.spark)
        self.spark = self._open()

    def _conf(self, key: str) -> str | None:
        try:
            value = self.spark.conf.get(key)
        except Exception:
            return None
        return None if value is None else str(value)

    def close(self) -> None:
        """Interrupt whatever this session still runs and release it on the server."""
        close_client(self.spark, release=True)

    # -- introspection -------------------------------------------------------------------
    def tables(self) -> list[tuple[str, str, str]]:
        """``(database, name, kind)`` of every table and view of the current catalog, sorted."""
        if self._tables is None:
            out = []
            for db in sorted(d.name for d in self.spark.catalog.listDatabases()):
                for t in self.spark.catalog.listTables(db):
                    if not t.isTemporary:
                        out.append((db, t.name, str(t.tableType)))
            self._tables = sorted(out)
        return self._tables

    def _schema(self, db: str, table: str) -> Any:
        return self.spark.table(f"{_spark_ident(db)}.{_spark_ident(table)}").schema

    def catalog(self) -> dict[str, dict[str, dict[str, str]]]:
        out: dict[str, dict[str, dict[str, str]]] = {}
        for db, table, _kind in self.tables():
            out.setdefault(db, {})[table] = {f.name: f.dataType.simpleString() for f in self._schema(db, table).fields}
        return out

    def content_hash(self) -> str:
        """SHA-256 over what a query reads: per table and view (sorted), its name, kind and
        schema, its row count, and two order-independent sums of per-row hashes
        (``sum(xxhash64(...))`` and ``sum(hash(...))``, Spark's 64-bit xxHash and its
        Murmur3, the hash bucketing relies on, over every column and whether it is NULL),
        computed by Spark as one aggregate per table, ``HASH_BATCH`` tables per query. It
        costs one full scan of every table per sandbox opened; it is computed once per
        sandbox, after refreshing each table's file listing (a session keeps the listing it
        read first, so a table changed since would be hashed, and queried, as it was)."""
        if self._hash is None:
            digest = hashlib.sha256(b"spark-connect\n")
            tables = self.tables()
            for db, t, _ in tables:  # the files as they are now, not as a session listed them before
                try:
                    self.spark.catalog.refreshTable(f"{_spark_ident(db)}.{_spark_ident(t)}")
                except Exception:
                    pass  # a view of a table that is gone: its hash query says so
            schemas = {(db, t): self._schema(db, t) for db, t, _ in tables}
            lanes: dict[int, tuple[Any, ...]] = {}
            for start in range(0, len(tables), HASH_BATCH):
                batch = list(enumerate(tables))[start:start + HASH_BATCH]
                sql = "\nUNION ALL\n".join(_lanes_sql(i, db, t, schemas[(db, t)]) for i, (db, t, _) in batch)
                out = self._collect(sql, HASH_TIMEOUT_S)
                if out.error is not None:
                    raise RuntimeError(f"cannot compute the content hash of {self._display()}: {out.error.message}")
                for row in out.table.to_pylist() if out.table is not None else []:
                    lanes[int(row["i"])] = (row["n"], row["a"], row["b"])
            for i, (db, t, kind) in enumerate(tables):
                n, a, b = lanes[i]
                digest.update(f"T|{db}.{t}|{kind}|{schemas[(db, t)].simpleString()}|{n}|{a}|{b}\n".encode())
            self._hash = digest.hexdigest()
        return self._hash

    def _display(self) -> str:
        from .shared import display_location
        return display_location(self.location)

    # -- execution -----------------------------------------------------------------------
    def run(self, sql: str, *, max_rows: int | None = None, timeout_s: float | None = None) -> ExecOutcome:
        """Run one query, bounded in time (wall), rows and bytes."""
        max_rows, limit_s = query_bounds(self.limits, max_rows, timeout_s)
        start = time.perf_counter()
        refused = gate(sql)
        if refused is not None:
            return ExecOutcome(None, refused, _ms(start))
        out = self._collect(wrapped(sql), limit_s, max_rows + 1)
        if out.error is not None or out.table is None:
            return ExecOutcome(None, out.error, _ms(start), meta=out.meta)
        table = out.table
        cap = result_byte_cap(self.limits)
        if table.num_rows > max_rows or table.nbytes > cap:
            return ExecOutcome(None, too_large(max_rows, cap, self.limits, rows_read=table.num_rows), _ms(start),
                               truncated=True)
        return ExecOutcome(table, None, _ms(start))

    def _collect(self, sql: str, limit_s: float, rows: int | None = None) -> ExecOutcome:
        """``spark.sql(sql)[.limit(rows)].toArrow()`` under an operation tag of its own,
        stopped past ``limit_s`` (``_Interrupter``)."""
        start = time.perf_counter()
        tag = f"sqleval-{uuid.uuid4().hex}"
        stopper = _Interrupter(self.spark, tag, limit_s)
        self.spark.addTag(tag)  # the tag is this thread's: the interrupter's calls carry none
        try:
            stopper.start()
            df = self.spark.sql(sql)
            table = (df.limit(rows) if rows is not None else df).toArrow()
        except Exception as exc:
            stopper.finish()
            if isinstance(exc, (MemoryError, RecursionError)):
                return ExecOutcome(None, resource_error(exc), _ms(start))
            error = classify_error(exc)
            if stopper.fired:
                return self._stopped(stopper, error.exception, start)
            return ExecOutcome(None, error, _ms(start))
        finally:
            self.spark.removeTag(tag)
        stopper.finish()
        if stopper.fired:  # it returned as the interrupt came: past its limit all the same
            return self._stopped(stopper, "Cancelled", start)
        return ExecOutcome(table, None, _ms(start))

    def _stopped(self, stopper: "_Interrupter", exception: str, start: float) -> ExecOutcome:
        """The outcome of a query stopped at its limit, after the backstop if the server kept computing it."""
        meta: dict[str, Any] = {"interrupts": stopper.interrupts}
        if self.server is not None and (stopper.lingering or not _cpu_settles(self.server.pid, BACKSTOP_S)):
            self.server.restart()  # the backstop: its tasks go with it
            self.reconnect()
            meta["server_restarted"] = True
            note = (f"; the server still computed it {BACKSTOP_S:g} s later, so the server was restarted "
                    "(the backstop)")
        elif self.server is not None:
            note = "; the server's CPU is free"
        else:
            meta["server_may_still_run"] = True
            note = ("; a remote server's CPU cannot be read from here, and a Spark Connect server may compute "
                    "on after it dropped the operation: later queries may share it with that work")
        message = (f"exceeded the time limit of {stopper.limit_s:g} s (wall time, over Spark Connect); its operation "
                   f"was interrupted {stopper.interrupts} time(s) until the server dropped it{note}")
        return ExecOutcome(None, ExecError("timeout", message, exception), _ms(start), meta=meta)


def _cpu_settles(pid: int | None, within_s: float) -> bool:
    """Whether the server stops computing within ``within_s``: the CPU time of its threads
    (the JVM's own service threads aside) grows by less than 5 % of a core over a look
    (0.2 s, or longer when the machine is loaded: the growth is measured against the wall
    time the look really took).

    The JVM's service threads do not count: its JIT compiler warming up after a start or
    a new query, its garbage collector, are busy for seconds while no query runs, and
    counting them made a freed server look busy (a needless restart, and a test that
    failed now and then on a loaded machine). Everything Spark runs counts: the tasks,
    and the planning of a query whose operation was dropped. Where the JVM's thread names
    cannot be read, the whole process counts."""
    if pid is None:
        return True
    prev, t_prev = _work_cpu_s(pid), time.monotonic()
    end = t_prev + within_s
    while True:
        time.sleep(0.2)
        now, t_now = _work_cpu_s(pid), time.monotonic()
        if now is None or (prev is not None and 0 <= now - prev < 0.05 * (t_now - t_prev)):  # < 0: a thread ended
            return True
        if t_now >= end:
            return False
        prev, t_prev = now, t_now


#: HotSpot's own threads, by the names Linux shows (15 characters): JIT compilers, garbage
#: collectors, the VM's housekeeping. Busy after a start or a query without any query running.
_JVM_SERVICE_THREADS = ("C1 CompilerThre", "C2 CompilerThre", "GC Thread", "G1 ", "VM Thread", "VM Periodic",
                        "Service Thread", "Monitor Deflati", "Common-Cleaner", "Sweeper thread", "Signal Dispatch",
                        "Reference Handl", "Finalizer", "Notification Th", "Attach Listener")
_JAVA_NAMED = "Finalizer"  # a Java thread every JVM has: that it shows means Java threads' names are visible


def _work_cpu_s(pid: int) -> float | None:
    """User+sys seconds of the process's threads but the JVM's service threads (all of them
    where Java thread names do not show), from ``/proc``; None once the process is gone."""
    from .watchdog import process_cpu_s
    tasks = Path(f"/proc/{pid}/task")
    total, named = 0.0, False
    try:
        tids = os.listdir(tasks)
    except OSError:
        return None
    for tid in tids:
        try:
            name = (tasks / tid / "comm").read_text().strip()
            named = named or name.startswith(_JAVA_NAMED)
            if not name.startswith(_JVM_SERVICE_THREADS):
                raw = (tasks / tid / "stat").read_text()
                fields = raw[raw.rindex(")") + 2:].split()
                total += (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS
        except (OSError, ValueError, IndexError):
            continue  # a thread that ended between the listing and the read
    return total if named else process_cpu_s(pid)


_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


class _Interrupter:
    """Interrupts a query's operation tag once it is past its limit, and again every
    ``CANCEL_EVERY_S`` until the call has returned and the server answers that nothing
    under the tag is left (an interrupt that lands while the query is planned is lost;
    the client is freed at once, the server may run on). ``lingering``: still there
    ``BACKSTOP_S`` past the limit."""

    def __init__(self, spark: Any, tag: str, limit_s: float) -> None:
        self.spark, self.tag, self.limit_s = spark, tag, limit_s
        self.started = time.monotonic()
        self.fired = False
        self.lingering = False
        self.interrupts = 0
        self._returned = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="sqleval-connect-interrupter", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _watch(self) -> None:
        if self._returned.wait(self.limit_s):
            return
        self.fired = True
        deadline = time.monotonic() + BACKSTOP_S
        while True:
            try:
                left = self.spark.interruptTag(self.tag)
            except Exception:
                left = []  # the session is gone: nothing of it runs under this tag
            self.interrupts += 1
            if self._returned.is_set() and not left:
                return
            if time.monotonic() >= deadline:
                self.lingering = True
                return
            time.sleep(CANCEL_EVERY_S)

    def finish(self) -> None:
        """The call returned: wait (bounded) until the interrupts found nothing left."""
        self._returned.set()
        self._thread.join(BACKSTOP_S + 5.0)


def _lanes_sql(index: int, db: str, table: str, schema: Any) -> str:
    """One table's row of the content hash: its index, row count and two hash sums."""
    cols = []
    for f in schema.fields:
        c = _spark_ident(f.name)
        kind = type(f.dataType).__name__
        value = (f"array_sort(map_entries({c}))" if kind == "MapType"
                 else f"to_json({c})" if kind == "VariantType" else c)
        cols += [value, f"isnull({c})"]
    args = ", ".join(cols) or "1"
    return (f"SELECT {index} AS i, count(*) AS n, "
            f"CAST(coalesce(sum(CAST(xxhash64({args}) AS DECIMAL(38,0))), 0) AS STRING) AS a, "
            f"CAST(coalesce(sum(CAST(hash({args}) AS DECIMAL(38,0))), 0) AS STRING) AS b "
            f"FROM {_spark_ident(db)}.{_spark_ident(table)}")


# -- a server of our own -------------------------------------------------------------------
class LocalConnectServer:
    """A real Spark Connect server, started by this process on 127.0.0.1 with the locked
    settings and a token of its own; ``url`` reaches it. Open-source Spark Connect checks
    that token (``spark.connect.authenticate.token``) and nothing else: no TLS, no users,
    so it listens on loopback only. ``init_sql`` runs after each start (its catalog is in
    memory: register external tables there); ``restart`` is the backstop for a query the
    server would not drop."""

    def __init__(self, *, master: str = "local[2]", memory: str = "1g", init_sql: tuple[str, ...] = (),
                 start_timeout_s: float = 180.0, conf: dict[str, str] | None = None) -> None:
        self.master, self.memory, self.init_sql = master, memory, tuple(init_sql)
        self.start_timeout_s = start_timeout_s
        self.conf = dict(conf or {})
        self.token = secrets.token_hex(16)
        self.work = Path(tempfile.mkdtemp(prefix="sqleval-connect-"))
        self.port = _free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self._guard: subprocess.Popen[bytes] | None = None  # ends the server if this process is killed
        self.started_s: float | None = None  # seconds from spawn to an answered query, last start
        self.restarts = 0

    @property
    def url(self) -> str:
        # "localhost": pyspark sends a token over a local (unencrypted) channel only to that name
        return f"sc://localhost:{self.port}/;token={self.token}"

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def start(self) -> "LocalConnectServer":
        """Spawn the server and wait (bounded) until it answers; ``RuntimeError`` naming its log otherwise."""
        _require_connect()
        import pyspark
        home = Path(pyspark.__file__).parent
        log4j = self.work / "log4j2.properties"
        log4j.write_text(_LOG4J)
        conf = {**self.conf, **LOCKED_CONF,
                "spark.connect.grpc.binding.address": "127.0.0.1", "spark.connect.grpc.binding.port": str(self.port),
                "spark.driver.bindAddress": "127.0.0.1", "spark.driver.host": "127.0.0.1",
                "spark.driver.memory": self.memory, "spark.sql.warehouse.dir": str(self.work / "warehouse"),
                "spark.local.dir": str(self.work / "local"),
                "spark.driver.extraJavaOptions": f"-XX:TieredStopAtLevel=1 -Duser.timezone=UTC "
                                                 f"-Dlog4j2.configurationFile={log4j}"}
        cmd = [str(home / "bin" / "spark-submit"), "--master", self.master, "--class", SERVER_CLASS,
               "--name", "sqleval-connect"]
        for key, value in conf.items():
            cmd += ["--conf", f"{key}={value}"]
        # the token by environment, never on the command line (``ps`` shows that)
        env = {**os.environ, "SPARK_HOME": str(home), "SPARK_CONNECT_AUTHENTICATE_TOKEN": self.token}
        for var in ("SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED", "PYSPARK_SUBMIT_ARGS"):
            env.pop(var, None)
        log = open(self.work / "server.log", "wb")
        t0 = time.monotonic()
        try:  # the gate execs spark-submit, which execs the JVM: the child is the server, in a group of its own
            self.proc = subprocess.Popen(["/bin/sh", "-c", JVM_GATE, *cmd], env=env, stdin=subprocess.PIPE,
                                         stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        finally:
            log.close()
        self._guard = self._open_gate(self.proc)
        deadline = t0 + self.start_timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                stop_guard(self._guard)
                raise RuntimeError(f"the Spark Connect server exited during start (code {self.proc.returncode}); "
                                   f"see {self.work / 'server.log'}")
            with socket.socket() as probe:
                probe.settimeout(0.5)
                if probe.connect_ex(("127.0.0.1", self.port)) == 0:
                    break
            time.sleep(0.2)
        else:
            self.stop()
            raise RuntimeError(f"the Spark Connect server did not open port {self.port} within "
                               f"{self.start_timeout_s:g} s; see {self.work / 'server.log'}")
        spark = connect_session(self.url, max(1.0, deadline - time.monotonic()))
        try:
            for statement in self.init_sql:
                spark.sql(statement)
        finally:
            close_client(spark, release=True)
        self.started_s = time.monotonic() - t0
        return self

    @staticmethod
    def _open_gate(proc: "subprocess.Popen[bytes]") -> "subprocess.Popen[bytes]":
        """The guard of ``proc``'s group (a JVM does not watch its parent: the guard ends the
        group if this process is SIGKILLed), started before the gate lets the JVM start.
        Killed before the gate opens, this process's end of the gate's pipe closes, and the
        gate exits without starting the JVM: no moment leaves a JVM without its guard."""
        assert proc.stdin is not None
        try:
            guard = start_guard(proc.pid)
            proc.stdin.write(b"go\n")
        finally:
            proc.stdin.close()  # the gate's read ends: "go" starts the JVM, nothing (an error above) ends the gate
        return guard

    def stop(self, timeout_s: float = 20.0) -> None:
        """SIGTERM to its process group, SIGKILL if it is not gone within ``timeout_s``."""
        close_sessions(self.url)  # their clients would call the server at exit, after it is gone
        stop_guard(self._guard)  # first: the group's id is not signalled by anyone once it is reaped
        self._guard = None
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        for sig, wait in ((signal.SIGTERM, timeout_s), (signal.SIGKILL, 10.0)):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                return
            try:
                proc.wait(wait)
                return
            except subprocess.TimeoutExpired:
                continue

    def restart(self) -> None:
        """The backstop: the server goes, with whatever it computed, and comes back on the same port."""
        self.stop(timeout_s=5.0)
        self.restarts += 1
        self.start()

    def __enter__(self) -> "LocalConnectServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


#: ``sh -c`` before spark-submit: it execs the command (its arguments) once its owner writes a
#: line on its stdin, after the guard is up (``_open_gate``); at end of file (its owner gone
#: before that) it exits, and no JVM starts. The JVM keeps the gate's pid, group and session.
JVM_GATE = 'read -r go || exit 75; exec "$0" "$@" </dev/null'


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port
