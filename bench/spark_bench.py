"""The Spark engine's costs, beside DuckDB in the same run (issue 33):

- session start (the JVM and the locked settings), on a one-table database;
- mirroring the Vantage warehouse (every table and view) into Spark, and the rerun (cached);
- per-case overhead: the sandbox's ``run`` (gate, wrapping, row cap, Arrow) against Spark's
  own ``spark.sql(q).toArrow()`` of the same transpiled gold, median ratio over the golds;
  DuckDB's ``run`` of the same golds as a baseline;
- cancel: a runaway query with a 1 s limit, the seconds from its limit until the JVM's CPU
  is free (its CPU time grows by less than 5 % of a core over 0.2 s);
- peak JVM memory (``VmHWM``);
- with ``--connect``, the same over Spark Connect, on a server this script starts on
  loopback (``spark_connect.LocalConnectServer``): its start, a session's open, and the
  cancel: the client is freed at once, the figure is when the *server's* CPU is free,
  A/B in the same run: one ``interruptTag`` (A) against the sandbox's interrupts repeated
  until the server drops the operation (B);
- the CPU time (user + sys) of this process and of its children (the JVMs) beside wall.

    python bench/spark_bench.py [--warehouse PATH] [--connect] [--no-vantage]
    python bench/spark_bench.py --load-ab BASELINE_CHECKOUT [--warehouse PATH] [--rounds N]

``--load-ab`` measures only loading the warehouse, A/B: this checkout's code and another's
(say ``git archive main | tar -x -C /tmp/base``), each in fresh processes (a rerun is a new
process: its catalog is empty), alternating: cold (an empty mirror cache) then cached (the
same cache again). Each figure is wall and CPU (the process's user+sys plus the JVM's, read
from ``/proc``), apart from the session's start; ``first_query`` is the first gold query
after the load (where tables registered on first use pay), ``register_all`` the eager
registration of every table with its indexed columns (this checkout only).

Needs pyspark (pip install -e '.[spark]') and Java. Prints one JSON object."""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, os.environ.get("SPARK_BENCH_CODE", str(ROOT)))


def jvm_status(pid: int, key: str) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _cpu(pid: int | None) -> float:
    import resource

    from pytest_sqleval.core.engines.watchdog import process_cpu_s
    own = resource.getrusage(resource.RUSAGE_SELF)
    jvm = process_cpu_s(pid) if pid is not None else None
    return own.ru_utime + own.ru_stime + (jvm or 0.0)


def load_child(warehouse: Path, cache: Path) -> None:
    """One fresh process: start the session, then open the warehouse (the load), then run
    one gold query; prints the figures as JSON. Runs whichever checkout is first on sys.path."""
    from pytest_sqleval.core.engines import spark_sandbox
    from pytest_sqleval.core.engines.base import Limits
    limits = Limits(timeout_s=60.0)
    settings = spark_sandbox.SparkSettings(master="local[2]", cache_dir=str(cache))
    out: dict[str, object] = {"code": spark_sandbox.__file__}
    t = time.perf_counter()
    spark_sandbox.session(settings.resolved(limits))
    out["session_s"] = round(time.perf_counter() - t, 2)
    pid = spark_sandbox._JVM_PID["pid"]
    c, t = _cpu(pid), time.perf_counter()
    sb = spark_sandbox.SparkSandbox(spark_sandbox.spark_location(warehouse, settings), limits)
    out["load_s"], out["load_cpu_s"] = round(time.perf_counter() - t, 2), round(_cpu(pid) - c, 2)
    out["tables"] = len(sb.tables)
    gold = "SELECT count(*) FROM sales.customers WHERE NOT is_test AND deleted_at IS NULL"  # Vantage q01
    c, t = _cpu(pid), time.perf_counter()
    res = sb.run(gold)
    out["first_query_s"], out["first_query_cpu_s"] = round(time.perf_counter() - t, 2), round(_cpu(pid) - c, 2)
    out["first_query_error"] = res.error.category if res.error else None
    if hasattr(sb, "register_all"):
        c, t = _cpu(pid), time.perf_counter()
        sb.register_all()
        out["register_all_s"], out["register_all_cpu_s"] = round(time.perf_counter() - t, 2), round(_cpu(pid) - c, 2)
    print(json.dumps(out))


def load_ab(warehouse: Path, baseline: Path, rounds: int) -> None:
    """This checkout against ``baseline``, alternating, each round cold then cached."""
    import subprocess
    work = Path(tempfile.mkdtemp(prefix="spark-load-ab-"))
    rows = []
    for r in range(rounds):
        for name, code in (("baseline", baseline.resolve()), ("this", ROOT)):
            cache = work / f"{name}-{r}"
            for phase in ("cold", "cached"):
                load = os.getloadavg()[0]
                proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--load-child", str(cache),
                                       "--warehouse", str(warehouse)], capture_output=True, text=True, timeout=1800,
                                      env={**os.environ, "PYTHONPATH": str(code), "SPARK_BENCH_CODE": str(code)})
                try:
                    figures = json.loads(proc.stdout.strip().splitlines()[-1])
                except (ValueError, IndexError):
                    figures = {"failed": proc.stderr[-2000:]}
                rows.append({"round": r, "code": name, "phase": phase, "load1": round(load, 2), **figures})
                print(json.dumps(rows[-1]), flush=True)


def main() -> None:
    import duckdb
    import sqlglot

    from pytest_sqleval.core.engines import spark_sandbox
    from pytest_sqleval.core.engines.base import Limits
    from pytest_sqleval.core.engines.duckdb_sandbox import DuckDBSandbox
    from pytest_sqleval.core.engines.watchdog import process_cpu_s
    from pytest_sqleval.core.engines.spark_sandbox import SparkSandbox, SparkSettings, spark_location

    parser = argparse.ArgumentParser()
    parser.add_argument("--warehouse", default=str(ROOT / "cases" / "vantage" / "vrg_snapshot_2025-11-30.duckdb"))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--load-ab", type=Path, default=None, metavar="BASELINE_CHECKOUT")
    parser.add_argument("--load-child", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--connect", action="store_true", help="measure Spark Connect too (a loopback server)")
    parser.add_argument("--no-vantage", action="store_true", help="skip the Vantage load and per-case figures")
    args = parser.parse_args()
    if args.load_child is not None:
        return load_child(Path(args.warehouse), args.load_child)
    if args.load_ab is not None:
        return load_ab(Path(args.warehouse), args.load_ab, args.rounds)
    work = Path(tempfile.mkdtemp(prefix="spark-bench-"))
    out: dict[str, object] = {"load": os.getloadavg(), "cores": os.cpu_count()}
    wall0 = time.perf_counter()

    tiny = work / "tiny.duckdb"
    con = duckdb.connect(str(tiny))
    con.execute("CREATE TABLE t AS SELECT range AS id FROM range(10)")
    con.close()
    limits = Limits(timeout_s=30.0)
    t = time.perf_counter()
    first = SparkSandbox(spark_location(tiny, SparkSettings(master="local[2]", cache_dir=str(work / "m0"))), limits)
    out["session_start_s"] = round(time.perf_counter() - t, 2)
    first.close()

    if args.no_vantage:  # the cancel on the one-table database
        sb = SparkSandbox(spark_location(tiny, SparkSettings(master="local[2]", cache_dir=str(work / "m0"))), limits)
    warehouse = Path(args.warehouse)
    settings = SparkSettings(master="local[2]", cache_dir=str(work / "mirror"))
    ratios: list[float] = []
    ours: list[float] = []
    own: list[float] = []
    duck_ms: list[float] = []
    skipped = 0
    if not args.no_vantage:
        t = time.perf_counter()
        sb = SparkSandbox(spark_location(warehouse, settings), limits)
        out["vantage_load_s"] = round(time.perf_counter() - t, 2)
        out["vantage_tables"] = len(sb.tables)
        spark_sandbox._ACTIVE["owner"] = None  # as a rerun in a fresh process: register again, copy nothing
        t = time.perf_counter()
        again = SparkSandbox(spark_location(warehouse, settings), limits)
        out["vantage_cached_open_s"] = round(time.perf_counter() - t, 2)
        sb = again

        golds = [json.loads(line)["gold_sql"] for line in (ROOT / "cases" / "vantage" / "questions.jsonl").read_text().splitlines()
                 if line.strip()]
        duck = DuckDBSandbox(warehouse, limits)
        for gold in golds:
            try:
                q = sqlglot.transpile(gold, read="duckdb", write="spark")[0]
            except Exception:
                skipped += 1
                continue
            if sb.run(q).error is not None:  # does not run on Spark (ASOF JOIN, ...): not a cost figure
                skipped += 1
                continue
            a, b, c = [], [], []
            for _ in range(args.repeats):
                t = time.perf_counter()
                sb.run(q)
                a.append(time.perf_counter() - t)
                t = time.perf_counter()
                sb.spark.sql(q).toArrow()
                b.append(time.perf_counter() - t)
                t = time.perf_counter()
                duck.run(gold)
                c.append(time.perf_counter() - t)
            ours.append(statistics.median(a))
            own.append(statistics.median(b))
            duck_ms.append(statistics.median(c))
            ratios.append(statistics.median(a) / statistics.median(b))
    out["golds_run"] = len(ours)
    out["golds_skipped"] = skipped
    out["per_case_ms_median"] = round(statistics.median(ours) * 1000, 1) if ours else None
    out["spark_own_ms_median"] = round(statistics.median(own) * 1000, 1) if own else None
    out["overhead_ratio_median"] = round(statistics.median(ratios), 3) if ratios else None
    out["duckdb_ms_median"] = round(statistics.median(duck_ms) * 1000, 2) if duck_ms else None

    pid = spark_sandbox._JVM_PID["pid"]
    t = time.perf_counter()
    res = sb.run("SELECT count(*) FROM range(100000000000) a CROSS JOIN range(10) b", timeout_s=1.0)
    returned = time.perf_counter() - t
    free_at = None
    if pid is not None:
        prev = process_cpu_s(pid)
        for _ in range(200):
            time.sleep(0.2)
            now = process_cpu_s(pid)
            if prev is not None and now is not None and now - prev < 0.01:
                free_at = time.perf_counter() - t
                break
            prev = now
    out["cancel_category"] = res.error.category if res.error else None
    out["cancel_returned_s"] = round(returned, 2)
    out["cancel_cpu_free_s"] = round(free_at, 2) if free_at is not None else None  # from the query's start
    out["cancel_cpu_free_after_return_s"] = round(free_at - returned, 2) if free_at is not None else None
    out["jvm_peak_bytes"] = jvm_status(pid, "VmHWM") if pid else None
    if args.connect:
        out["connect"] = connect_figures(tiny, work)
    import resource
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    out["wall_s"] = round(time.perf_counter() - wall0, 1)
    out["cpu_self_s"] = round(me.ru_utime + me.ru_stime, 1)
    out["cpu_children_s"] = round(kids.ru_utime + kids.ru_stime, 1)  # waited-for children: the Connect server
    out["load_end"] = os.getloadavg()
    print(json.dumps(out, indent=1))


RUNAWAY = "SELECT count(*) FROM range(100000000000) WHERE xxhash64(id) = 0"  # CPU-bound, never overflows


def cpu_free_after(pid: int, since: float, bound_s: float = 60.0) -> float | None:
    """Seconds from ``since`` until the process's CPU time grows by less than 5 % of a core
    over 0.2 s; None if it never does within ``bound_s``."""
    from pytest_sqleval.core.engines.watchdog import process_cpu_s
    prev = process_cpu_s(pid)
    end = time.perf_counter() + bound_s
    while time.perf_counter() < end:
        time.sleep(0.2)
        now = process_cpu_s(pid)
        if prev is not None and now is not None and now - prev < 0.01:
            return round(time.perf_counter() - since, 2)
        prev = now
    return None


def connect_figures(tiny: Path, work: Path) -> dict[str, object]:
    """Spark Connect on a loopback server: start, open, and the cancel A/B (see the module docstring)."""
    import threading

    from pytest_sqleval.core.engines.base import Limits
    from pytest_sqleval.core.engines.spark_connect import ConnectSandbox, LocalConnectServer, connect_session
    from pytest_sqleval.core.engines.spark_sandbox import mirror
    tables = mirror(tiny, "connect", work / "connect-mirror")
    init = tuple(f"CREATE TABLE default.`{t.table}` USING parquet LOCATION '{t.folder}'" for t in tables)
    out: dict[str, object] = {}
    server = LocalConnectServer(master="local[2]", memory="1g", init_sql=init)
    server.start()
    try:
        out["server_start_s"] = round(server.started_s or 0.0, 2)
        assert server.pid is not None
        t = time.perf_counter()
        sb = ConnectSandbox(server.url, Limits(timeout_s=30.0))
        out["session_open_s"] = round(time.perf_counter() - t, 2)
        t = time.perf_counter()
        out["content_hash_s"] = (sb.content_hash() and round(time.perf_counter() - t, 2))
        sb.run("SELECT count(*) FROM t")
        t = time.perf_counter()
        for _ in range(5):
            sb.run("SELECT count(*) FROM t")
        out["small_query_ms"] = round((time.perf_counter() - t) / 5 * 1000, 1)

        # A: one interrupt, as a single cancel would do (its own session, as a client with no backstop)
        spark = connect_session(server.url)
        box: dict[str, float] = {}

        def runaway() -> None:
            spark.addTag("bench-a")
            t0 = time.perf_counter()
            try:
                spark.sql(RUNAWAY).toArrow()
            except Exception:
                pass
            box["returned"] = time.perf_counter() - t0

        start = time.perf_counter()
        th = threading.Thread(target=runaway, daemon=True)
        th.start()
        time.sleep(1.0)
        spark.interruptTag("bench-a")
        th.join(120)
        out["single_interrupt_client_returned_s"] = round(box.get("returned", -1.0), 2)
        out["single_interrupt_server_cpu_free_s"] = cpu_free_after(server.pid, start)  # None: not within 60 s
        spark.stop()
        t = time.perf_counter()
        server.restart()  # what A left computing goes, so B starts on an idle server
        out["server_restart_s"] = round(time.perf_counter() - t, 2)
        sb = ConnectSandbox(server.url, Limits(timeout_s=30.0), server=server)

        # B: the sandbox (interrupts repeated until the server drops the operation)
        start = time.perf_counter()
        res = sb.run(RUNAWAY, timeout_s=1.0)
        out["sandbox_returned_s"] = round(time.perf_counter() - start, 2)
        out["sandbox_server_cpu_free_s"] = cpu_free_after(server.pid, start)
        out["sandbox_category"] = res.error.category if res.error else None
        out["sandbox_interrupts"] = res.meta.get("interrupts")
        out["sandbox_server_restarted"] = bool(res.meta.get("server_restarted"))
        out["server_peak_bytes"] = jvm_status(server.pid, "VmHWM")
        sb.close()
    finally:
        server.stop()
    return out


if __name__ == "__main__":
    main()
