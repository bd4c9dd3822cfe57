"""Every bench, one command, one table:

    .venv/bin/python bench/run_all.py [--quick]

Runs the comparison, throughput, start-up, LLM-bound, xdist, caching and Spider-shaped benches in turn
(about 15 minutes on 2 cores; the first run also builds the scale-10 warehouse into
bench/.cache, about a minute), prints each figure as it is measured (median, baseline
measured in the same run, ratio), then one markdown table of them all, and writes
``bench/results/latest.json`` and ``bench/results/latest.md``.

Needs the ``bench`` extra: pandas, and nl2sql360 with the few modules its comparison
code imports (``pip install pandas sqlparse tqdm func-timeout && pip install --no-deps nl2sql360``).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _util import RESULTS, Figure, Report, fmt, machine  # noqa: E402


def table(figs: list[Figure]) -> str:
    lines = ["| section | figure | median | baseline | ratio | target | met |", "|---|---|---|---|---|---|---|"]
    for f in figs:
        base = f"{fmt(f.baseline, f.unit)} ({f.baseline_name})" if f.baseline is not None else ""
        ratio = f"{f.ratio:.2f}" if f.ratio is not None else ""
        met = "yes" if f.met else "no" if f.met is False else ""
        lines.append(f"| {f.section} | {f.name} | {fmt(f.value, f.unit)} | {base} | {ratio} | {f.target or ''} | {met} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="small sizes and counts: a smoke run of every bench")
    ap.add_argument("--only", default="", help="comma list: compare,throughput,startup,llm,xdist,spider")
    ap.add_argument("--official", type=Path, default=None, metavar="DIR",
                    help="a checkout of test-suite-sql-eval: the Spider-shaped bench times its evaluator too")
    args = ap.parse_args()
    only = {x for x in args.only.split(",") if x}
    report = Report()
    m = machine()
    print(f"machine: {m['cpu']}, {m['cores']} cores, {m['mem_gib']} GiB, Python {m['python']}, DuckDB {m['duckdb']}, "
          f"pyarrow {m['pyarrow']}, pytest {m['pytest']}; load average {m['loadavg']}", flush=True)
    t0 = time.time()
    q = args.quick
    done = 0

    def tag(name: str) -> None:  # the figures added since the last call came from bench ``name``
        nonlocal done
        for f in report.figures[done:]:
            f.bench = name
        done = len(report.figures)

    if not only or "compare" in only:
        import compare_bench
        compare_bench.run(report, [10_000, 100_000] if q else [10_000, 100_000, 1_000_000, 5_000_000], quick=q)
        tag('compare')
    if not only or "throughput" in only:
        import throughput_bench
        throughput_bench.run_bench(report, 100 if q else 1000, 1, [] if q else [250, 500], repeat=1 if q else 3)
        tag('throughput')
    if not only or "startup" in only:
        import startup_bench
        startup_bench.run_bench(report, 1000 if q else 10_000, 2 if q else 5)
        tag('startup')
    if not only or "llm" in only:
        import llm_bench
        llm_bench.run_bench(report, 64 if q else 500, 0.2, 32)
        tag('llm')
    if not only or "xdist" in only:
        import xdist_bench
        xdist_bench.run_bench(report, [4, 8] if q else [16, 96], 10)
        tag('xdist')
    if not only or "spider" in only:
        import spider_bench
        spider_bench.run_bench(report, 20, 10 if q else 50, repeat=1 if q else 3, checkout=args.official)
        tag('spider')
    report.extra["total_s"] = round(time.time() - t0, 1)
    if only and (RESULTS / "latest.json").exists():  # keep the other benches' figures from the last run
        last = json.loads((RESULTS / "latest.json").read_text())
        report.figures = [Figure(**{k: v for k, v in f.items() if k != "ratio"})
                          for f in last["figures"] if f.get("bench") not in only] + report.figures
        for key, value in last["extra"].items():
            report.extra.setdefault(key, value)
    out = report.save(RESULTS / "latest.json")
    md = table(report.figures)
    (RESULTS / "latest.md").write_text(md + "\n")
    print("\n" + md)
    print(f"\n{len(report.figures)} figures in {report.extra['total_s']:.0f} s; "
          f"targets met {sum(1 for f in report.figures if f.met)}, missed {sum(1 for f in report.figures if f.met is False)}; "
          f"saved {out}")


if __name__ == "__main__":
    main()
