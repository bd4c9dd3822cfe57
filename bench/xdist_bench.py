"""xdist on an execution-heavy suite, serial against ``-n 2``; the same serial run also
gives the harness's overhead when execution dominates (against DuckDB alone).

    python bench/xdist_bench.py [--cases 16,96] [--scale 10]

The suite: N aggregations over ``web.events`` of the Vantage warehouse at scale 10
(about 0.3-0.6 s each on one thread), graded with the gold backend, gold answers cached
by a warm-up run. Both runs are whole pytest processes, so ``-n 2`` pays for starting two
workers and their engines; two sizes separate that fixed cost from the cost per case.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _util import PYTHON, Report, check, fit_line, fresh, load, median, pytest_cmd, read_records, run, vantage_database, write_suite  # noqa: E402
from throughput_bench import duckdb_alone  # noqa: E402

WORK = Path("/tmp/sqleval-bench/xdist")


def heavy_cases(n: int) -> list[dict]:
    out = []
    for i in range(n):
        m, k = 3 + i % 5, i % 3
        out.append({"id": f"heavy{i:03d}", "question": f"Distinct events per month, sessions not {k} mod {m}",
                    "gold_sql": f"SELECT date_trunc('month', event_ts) AS month, count(DISTINCT event_uuid) AS events "
                                f"FROM web.events WHERE session_id % {m} <> {k} GROUP BY 1 ORDER BY 1",
                    "difficulty": "hard", "expected_shape": "table"})
    return out


def duckdb_in_two_processes(database: Path, sqls: list[str]) -> float:
    """The queries split between two processes running at once, as ``-n 2`` splits the
    cases: wall time of both, from the first start to the last exit."""
    code = ("import json, sys; from pathlib import Path; sys.path.insert(0, sys.argv[2]); "
            "from throughput_bench import duckdb_alone; duckdb_alone(Path(sys.argv[1]), json.load(sys.stdin))")
    t = time.perf_counter()
    procs = [subprocess.Popen([PYTHON, "-c", code, str(database), str(Path(__file__).resolve().parent)],
                              stdin=subprocess.PIPE, text=True) for _ in range(2)]
    for proc, half in zip(procs, (sqls[0::2], sqls[1::2])):
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(half))
        proc.stdin.close()
    if any(proc.wait() for proc in procs):
        raise RuntimeError("a DuckDB-alone process failed")
    return time.perf_counter() - t


def run_bench(report: Report, sizes: list[int], scale: int, repeat: int = 2) -> None:
    """Serial against ``-n 2`` at each suite size; the largest is held to the target. A
    line fitted through the sizes splits each mode into a fixed start-up and a cost per
    case, which gives the size from which ``-n 2`` reaches the target."""
    print(f"== xdist: {', '.join(map(str, sizes))} execution-heavy cases, Vantage scale {scale} ({load()})", flush=True)
    database = vantage_database(scale)
    points: dict[str, list[tuple[float, float]]] = {"serial": [], "-n 2": []}
    for n in sizes:
        cases = heavy_cases(n)
        suite = write_suite(fresh(WORK / "suite"), cases, database, name="heavy")
        cache, results = WORK / "cache", WORK / "results"
        common = [str(suite), "--sqleval-backend=gold", f"--sqleval-cache-dir={cache}", f"--sqleval-results={results}",
                  "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "--tb=no", "-rN", "--no-header"]
        _, proc = run(pytest_cmd(*common), cwd=suite)  # warm-up: gold answers computed and cached
        check(proc, (0,))
        serial, parallel = [], []
        for _ in range(repeat):
            t, proc = run(pytest_cmd(*common), cwd=suite)
            check(proc, (0,))
            serial.append(t)
            t, proc = run(pytest_cmd(*common, "-n", "2"), cwd=suite)
            check(proc, (0,))
            parallel.append(t)
        recs = read_records(results)
        s, p = median(serial), median(parallel)
        points["serial"].append((n, s))
        points["-n 2"].append((n, p))
        held = n == max(sizes)
        report.add("xdist", f"{n} heavy cases: -n 2 speed-up over serial", s / p, "x",
                   target=">= 1.7x" if held else None, met=(s / p >= 1.7) if held else None,
                   note=f"serial {s:.1f} s, -n 2 {p:.1f} s; {sum(r['status'] == 'passed' for r in recs)}/{len(recs)} passed")
        if held:
            sqls = [c["gold_sql"] for c in cases]
            base = median([duckdb_alone(database, sqls) for _ in range(repeat)])
            two = median([duckdb_in_two_processes(database, sqls) for _ in range(repeat)])
            report.add("xdist", f"{n} heavy cases: DuckDB alone in two processes, speed-up over one", base / two, "x",
                       note=f"one process {base:.1f} s, two processes (half the queries each) {two:.1f} s: "
                            "the most any -n 2 can gain on this machine")
            report.add("throughput", f"{n} heavy cases, scale {scale}, gold cached: pytest wall (serial)", s, "s",
                       baseline=base, baseline_name="DuckDB alone on the predicted queries",
                       target="<= 1.2x DuckDB alone", met=s <= 1.2 * base, samples=serial,
                       note=f"{1000 * s / n:.0f} ms/case vs {1000 * base / n:.0f} ms/query")
    if len(sizes) >= 2:
        (a_s, b_s), (a_p, b_p) = (fit_line([float(x) for x, _ in pts], [y for _, y in pts]) for pts in points.values())
        # (a_s + b_s n) / (a_p + b_p n) >= 1.7  <=>  n >= (1.7 a_p - a_s) / (b_s - 1.7 b_p)
        gap = b_s - 1.7 * b_p
        reach = (1.7 * a_p - a_s) / gap if gap > 0 else None
        report.extra["fit_xdist"] = {"serial": [a_s, b_s], "n2": [a_p, b_p], "cases_for_1.7x": reach}
        report.add("growth", "xdist: -n 2 speed-up as cases grow (fit)", b_s / b_p, "x",
                   note=f"serial = {a_s:.1f} s + {1000 * b_s:.0f} ms x cases; -n 2 = {a_p:.1f} s + {1000 * b_p:.0f} ms x cases; "
                        + (f"1.7x from about {reach:.0f} cases" if reach is not None else "1.7x is out of reach"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", default="16,96", help="comma list of suite sizes; the largest is held to the target")
    ap.add_argument("--scale", type=int, default=10)
    args = ap.parse_args()
    report = Report()
    run_bench(report, [int(x) for x in args.cases.split(",")], args.scale)
    report.save(Path(__file__).resolve().parent / "results" / "xdist.json")


if __name__ == "__main__":
    main()
