"""Grading throughput: N cases on the Vantage warehouse with gold answers cached, the
whole pytest run against DuckDB alone executing the same predicted queries.

    python bench/throughput_bench.py [--cases 1000] [--scale 1] [--growth 250,500,1000]

The cases cycle through the 50 Vantage questions (``q07_v003``). The predictions are the
gold SQL for three variants in four and the hand-written naive near-miss for the fourth,
so passes and every kind of failure are graded. A warm-up run computes and caches the
gold answers; the timed runs then execute no gold query (checked from the records).

Baseline: one in-process DuckDB connection on the same file, read-only, with the
harness's thread count, running every predicted query and fetching its result as Arrow.
The harness: ``pytest SUITE --sqleval-backend=predictions:FILE`` as a subprocess, from
interpreter start to exit, results and summary written.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _util import (ROOT, Report, check, fit_line, fresh, load, median, pytest_cmd, read_records, run,  # noqa: E402
                   vantage_database, vantage_naive, variants, write_predictions, write_suite)

SECTION = "throughput"
WORK = Path("/tmp/sqleval-bench/throughput")


def predictions_for(cases: list[dict]) -> dict[str, str]:
    naive = vantage_naive()
    out = {}
    for i, c in enumerate(cases):
        base = c["id"].split("_v")[0]
        out[c["id"]] = naive[base] if (i // 50) % 4 == 3 else c["gold_sql"]
    return out


def duckdb_alone(database: Path, sqls: list[str], threads: int = 1) -> float:
    import duckdb
    con = duckdb.connect(str(database), read_only=True, config={"threads": threads})
    t = time.perf_counter()
    for sql in sqls:
        try:
            con.sql(sql).to_arrow_table()
        except duckdb.Error:
            pass
    elapsed = time.perf_counter() - t
    con.close()
    return elapsed


# Runs a command and prints, on its last stderr line, the peak RSS in KiB of the largest
# process it waited for (pytest or its engine process).
_PEAK = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:]); "
         "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); sys.exit(r.returncode)")


def harness(suite: Path, preds: Path, cache: Path, results: Path, extra: list[str] | None = None,
            peak: bool = False) -> tuple[float, list[dict]]:
    """One whole pytest run; with ``peak`` also the run's peak RSS in MiB (``harness.peak_mib``)."""
    fresh(results)
    cmd = pytest_cmd(str(suite), f"--sqleval-backend=predictions:{preds}", f"--sqleval-cache-dir={cache}",
                     f"--sqleval-results={results}", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                     "--no-header", "--tb=no", "-rN", *(extra or []))
    wall, proc = run([cmd[0], "-c", _PEAK, *cmd] if peak else cmd, cwd=ROOT)
    check(proc)
    if peak:
        harness.peak_mib = int(proc.stderr.strip().splitlines()[-1]) / 1024  # type: ignore[attr-defined]
    return wall, read_records(results)


def setup(n: int, scale: int) -> tuple[Path, Path, Path, list[str]]:
    database = vantage_database(scale)
    cases = variants(n)
    suite = WORK / f"suite-s{scale}-{n}"
    fresh(suite)
    write_suite(suite / "suite", cases, database, name=f"vantage-bench-{n}")
    preds = predictions_for(cases)
    write_predictions(suite / "predictions.jsonl", preds)
    return suite / "suite", suite / "predictions.jsonl", database, list(preds.values())


def run_bench(report: Report, n: int, scale: int, growth: list[int], repeat: int = 3) -> None:
    print(f"== grading throughput: {n} cases, Vantage scale {scale} ({load()})", flush=True)
    cache = WORK / f"cache-s{scale}"
    suite, preds, database, sqls = setup(n, scale)
    wall0, recs = harness(suite, preds, cache, WORK / "results")  # warm-up: gold answers computed and cached
    print(f"  warm-up run {wall0:.1f} s ({sum(1 for r in recs if r['status'] == 'passed')} passed of {len(recs)})", flush=True)
    base = median([duckdb_alone(database, sqls) for _ in range(repeat)])
    walls = []
    for _ in range(repeat):
        wall, recs = harness(suite, preds, cache, WORK / "results")
        walls.append(wall)
    gold_runs = sum(1 for r in recs if r.get("gold") and not r["gold"].get("cached"))
    errors = sum(1 for r in recs if r["status"] == "error")
    t = median(walls)
    report.add(SECTION, f"{n} cases, scale {scale}, gold cached: pytest wall", t, "s", baseline=base,
               baseline_name="DuckDB alone on the predicted queries", target="<= 1.2x DuckDB alone",
               met=t <= 1.2 * base, samples=walls,
               note=f"{1000 * t / n:.1f} ms/case vs {1000 * base / n:.1f} ms/query; gold queries executed: {gold_runs}; "
                    f"case errors: {errors}")
    report.add("caching", f"throughput rerun, {n} cases: gold queries executed", float(gold_runs), "",
               target="0", met=gold_runs == 0, note="from each record's gold.cached")
    grading_ms = sorted(r.get("grading_ms") or 0.0 for r in recs)
    report.extra[f"throughput_s{scale}"] = {"cases": n, "wall_s": walls, "duckdb_alone_s": base,
                                            "grading_ms_median": grading_ms[len(grading_ms) // 2]}
    if growth:
        pts = []
        for m in growth:
            s2, p2, _, _ = setup(m, scale)
            harness(s2, p2, cache, WORK / "results")  # gold for these ids is the same, already cached
            w = median([harness(s2, p2, cache, WORK / "results", peak=True)[0] for _ in range(2)])
            mib = harness.peak_mib  # type: ignore[attr-defined]
            pts.append((m, w, mib))
            report.add("growth", f"pytest wall, {m} cases (scale {scale})", w, "s", note=f"gold cached; peak RSS {mib:.0f} MiB")
        a, b = fit_line([float(m) for m, _, _ in pts], [w for _, w, _ in pts])
        ma, mb = fit_line([float(m) for m, _, _ in pts], [x for _, _, x in pts])
        report.extra[f"fit_cases_s{scale}"] = {"intercept_s": a, "s_per_case": b, "rss_intercept_mib": ma,
                                               "rss_mib_per_case": mb, "points": pts}
        report.add("growth", "fit: wall time per case", 1000 * b, "ms", note=f"wall = {a:.2f} s + {1000 * b:.2f} ms x cases")
        report.add("growth", "fit: peak memory per case", 1024 * mb, "KiB",
                   note=f"peak RSS = {ma:.0f} MiB + {1024 * mb:.1f} KiB x cases")
        print(f"  fit: wall = {a:.2f} s + {1000 * b:.2f} ms/case; peak RSS = {ma:.0f} MiB + {1024 * mb:.1f} KiB/case", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=1000)
    ap.add_argument("--scale", type=int, default=1)
    ap.add_argument("--growth", default="", help="comma list of case counts for the growth fit")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    report = Report()
    run_bench(report, args.cases, args.scale, [int(x) for x in args.growth.split(",") if x], args.repeat)
    report.save(Path(__file__).resolve().parent / "results" / "throughput.json")


if __name__ == "__main__":
    main()
