"""The Spark engine's costs, beside DuckDB in the same run (issue 33):

- session start (the JVM and the locked settings), on a one-table database;
- mirroring the Vantage warehouse (every table and view) into Spark, and the rerun (cached);
- per-case overhead: the sandbox's ``run`` (gate, wrapping, row cap, Arrow) against Spark's
  own ``spark.sql(q).toArrow()`` of the same transpiled gold, median ratio over the golds;
  DuckDB's ``run`` of the same golds as a baseline;
- cancel: a runaway query with a 1 s limit, the seconds from its limit until the JVM's CPU
  is free (its CPU time grows by less than 5 % of a core over 0.2 s);
- peak JVM memory (``VmHWM``).

    python bench/spark_bench.py [--warehouse PATH]
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
    args = parser.parse_args()
    if args.load_child is not None:
        return load_child(Path(args.warehouse), args.load_child)
    if args.load_ab is not None:
        return load_ab(Path(args.warehouse), args.load_ab, args.rounds)
    work = Path(tempfile.mkdtemp(prefix="spark-bench-"))
    out: dict[str, object] = {"load": os.getloadavg(), "cores": os.cpu_count()}

    tiny = work / "tiny.duckdb"
    con = duckdb.connect(str(tiny))
    con.execute("CREATE TABLE t AS SELECT range AS id FROM range(10)")
    con.close()
    limits = Limits(timeout_s=30.0)
    t = time.perf_counter()
    first = SparkSandbox(spark_location(tiny, SparkSettings(master="local[2]", cache_dir=str(work / "m0"))), limits)
    out["session_start_s"] = round(time.perf_counter() - t, 2)
    first.close()

    warehouse = Path(args.warehouse)
    settings = SparkSettings(master="local[2]", cache_dir=str(work / "mirror"))
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
    ratios, ours, own, duck_ms, skipped = [], [], [], [], 0
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
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
