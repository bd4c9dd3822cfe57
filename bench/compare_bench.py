"""Result comparison: ours against BIRD's set comparison, Spider's test-suite ``result_eq``
(both as shipped in ``nl2sql360``) and a pandas sort-and-compare in the style of defog's
``compare_df``, on the same data, in the same run.

    python bench/compare_bench.py [--sizes 10000,100000,1000000,5000000] [--quick]

Data: ``rows`` x 4, 6 or 8 columns: integers with ~10 % duplicate rows, doubles (the
noisy variant multiplies them by 1 +- 3e-9), integers and doubles with NULLs, dates,
strings, timestamps. The prediction is the gold's rows in another order. Variants:
``exact`` (same rows), ``noise`` (float noise far inside the 1e-6 tolerance),
``mismatch`` (one value off), ``dedup`` (duplicate rows dropped).

Each tool is timed on its own input form, already built ("comparison only": Python
row tuples, as ``fetchall()`` gives, for BIRD and Spider; DataFrames for pandas; Arrow
tables for ours), and separately with the conversion from the same Arrow results.
Peak memory of ours is the peak-RSS growth of a fresh process during one comparison.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import random
import subprocess
import sys
import time
import types
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import duckdb  # noqa: E402
import pyarrow as pa  # noqa: E402

from _util import PYTHON, Report, fit_line, load, timed  # noqa: E402

SECTION = "compare"
NOISE = "(1 + 3e-9 * ((i % 7) - 3) / 3)"


def make(rows: int, cols: int = 6, variant: str = "exact", pred: bool = False) -> pa.Table:
    """Gold (``pred=False``) or prediction of a variant, built by DuckDB."""
    base = f"(i % {max(1, rows * 9 // 10)})"  # the last 10 % repeat earlier rows
    eps = NOISE if (pred and variant == "noise") else "1"
    exprs = [f"{base} % 5000 AS k",
             f"CAST({base} * 0.37 * {eps} AS DOUBLE) AS x",
             f"CASE WHEN {base} % 11 = 0 THEN NULL ELSE {base} % 13 END AS n",
             f"DATE '2020-01-01' + CAST({base} % 1000 AS INTEGER) AS d",
             f"'name ' || ({base} % 977) AS s",
             f"CAST(({base} % 3) * 1.5 * {eps} AS DOUBLE) AS y",
             f"TIMESTAMP '2024-01-01' + to_seconds(CAST({base} AS BIGINT)) AS ts",
             f"CASE WHEN {base} % 17 = 0 THEN NULL ELSE CAST(({base} % 101) / 7.0 * {eps} AS DOUBLE) END AS z"][:cols]
    src = f"range({rows}) t(i)"
    if pred and variant == "mismatch":
        exprs[1] = f"CASE WHEN i = {rows // 2} THEN x0 + 1 ELSE x0 END AS x"
        src = f"(SELECT i, CAST({base} * 0.37 AS DOUBLE) AS x0 FROM range({rows}) t(i))"
    order = "ORDER BY hash(i + 7)" if pred else "ORDER BY i"
    sql = f"SELECT {', '.join(exprs)} FROM {src} {order}"
    if pred and variant == "dedup":
        sql = f"SELECT DISTINCT * FROM ({sql}) ORDER BY hash(k, x)"
    con = duckdb.connect()
    try:
        return con.sql(sql).to_arrow_table()
    finally:
        con.close()


# -- the peers ----------------------------------------------------------------------------
def _load_nl2sql360() -> tuple[Callable[..., Any], Callable[..., Any]]:
    """BIRD's ``calculate_ex`` and Spider's ``result_eq`` from the nl2sql360 wheel, without
    its package ``__init__`` (which imports every evaluator and their database drivers)."""
    import importlib
    import importlib.util
    spec = importlib.util.find_spec("nl2sql360")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("nl2sql360 is not installed: pip install --no-deps nl2sql360 sqlparse tqdm func-timeout")
    root = Path(list(spec.submodule_search_locations)[0])
    for name, path in [("nl2sql360", root), ("nl2sql360.evaluator", root / "evaluator"),
                       ("nl2sql360.evaluator.bird_eval", root / "evaluator" / "bird_eval"),
                       ("nl2sql360.evaluator.test_suite_sql_eval", root / "evaluator" / "test_suite_sql_eval")]:
        if name not in sys.modules:
            mod = types.ModuleType(name)
            mod.__path__ = [str(path)]  # a namespace shell: its __init__ is not run
            sys.modules[name] = mod
    for driver in ("psycopg2", "pymysql"):  # imported by bird_eval.evaluation_utils, never called here
        if importlib.util.find_spec(driver) is None and driver not in sys.modules:
            sys.modules[driver] = types.ModuleType(driver)
    bird = importlib.import_module("nl2sql360.evaluator.bird_eval.bird_ex").calculate_ex
    spider = importlib.import_module("nl2sql360.evaluator.test_suite_sql_eval.exec_eval").result_eq
    return bird, spider


def rows_of(t: pa.Table) -> list[tuple]:
    """What ``cursor.fetchall()`` gives: a list of tuples of Python values."""
    cols = [c.to_pylist() for c in t.columns]
    return list(zip(*cols))


def compare_df(df1: Any, df2: Any) -> bool:
    """A sort-and-compare in the style of defog sql-eval's ``compare_df``: equal as is, or
    equal after dropping duplicate rows, ordering columns by name and rows by every column."""
    if df1.shape == df2.shape and (df1.values == df2.values).all():
        return True

    def normalize(df: Any) -> Any:
        df = df.drop_duplicates()
        df = df.reindex(sorted(df.columns), axis=1)
        df = df.sort_values(by=list(df.columns))
        return df.reset_index(drop=True)
    df1, df2 = normalize(df1), normalize(df2)
    return bool(df1.shape == df2.shape and (df1.values == df2.values).all())


def ours_fn() -> Callable[[pa.Table, pa.Table], bool]:
    from pytest_sqleval.grading.compare import Comparator, CompareSpec
    cmp = Comparator(threads=os.cpu_count() or 2)
    return lambda g, p: cmp.compare(g, p, CompareSpec()).match


# -- memory: a fresh process per measurement ---------------------------------------------
def _child_memory(rows: int, cols: int, variant: str) -> dict[str, Any]:
    gold, pred = make(rows, cols), make(rows, cols, variant, pred=True)
    arrow = gold.nbytes + pred.nbytes
    cmp_ = ours_fn()
    cmp_(gold.slice(0, 10), pred.slice(0, 10))  # DuckDB up and warm
    gc.collect()
    before = _rss()
    Path("/proc/self/clear_refs").write_text("5")  # reset the peak-RSS mark
    t = time.perf_counter()
    match = cmp_(gold, pred)
    elapsed = time.perf_counter() - t
    peak = _hwm()
    return {"arrow_mib": arrow / 2**20, "peak_delta_mib": (peak - before) / 2**20, "match": match, "s": elapsed}


def _rss() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def _hwm() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def memory(rows: int, cols: int, variant: str) -> dict[str, Any]:
    out = subprocess.run([PYTHON, __file__, "--child-memory", f"{rows},{cols},{variant}"], capture_output=True,
                         text=True, timeout=600, cwd=str(Path(__file__).resolve().parent.parent))
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


# -- the bench ----------------------------------------------------------------------------
def run(report: Report, sizes: list[int], quick: bool = False) -> None:
    print(f"== result comparison ({load()})", flush=True)
    bird_ex, spider_eq = _load_nl2sql360()
    ours = ours_fn()
    random.seed(0)  # Spider samples rows to prune column permutations
    growth: dict[str, list[tuple[int, float]]] = {"exact": [], "noise": []}

    # verdicts of every tool on every variant, at a size all of them handle quickly
    n = 100_000 if not quick else 20_000
    gold = make(n, 6)
    g_rows, g_df = rows_of(gold), gold.to_pandas()
    verdicts: dict[str, dict[str, bool]] = {}
    for variant in ("exact", "noise", "mismatch", "dedup"):
        pred = make(n, 6, variant, pred=True)
        p_rows, p_df = rows_of(pred), pred.to_pandas()
        verdicts[variant] = {"ours": ours(gold, pred), "bird": bool(bird_ex(p_rows, g_rows)),
                             "spider": bool(spider_eq(g_rows, p_rows, False)), "pandas": compare_df(g_df, p_df)}
    report.extra["verdicts"] = verdicts
    print("  verdicts at %d rows x 6 columns: %s" % (n, json.dumps(verdicts)), flush=True)

    for rows in sizes:
        col_choices = [4, 6, 8] if rows == 1_000_000 and not quick else [6]
        for cols in col_choices:
            gold = make(rows, cols)
            for variant in ("exact", "noise", "mismatch"):
                if variant == "mismatch" and cols != 6:
                    continue
                pred = make(rows, cols, variant, pred=True)
                rep = 5 if rows <= 1_000_000 else 3
                t_ours, s_ours, match = timed(lambda: ours(gold, pred), repeat=rep, warmup=1 if rows <= 100_000 else 0)
                label = f"{rows:,} rows x {cols} cols, {variant}"
                if cols == 6 and variant in growth:
                    growth[variant].append((rows, t_ours))
                peers: dict[str, tuple[float, float]] = {}  # name -> (comparison only, conversion)
                if variant != "mismatch" and cols == 6 and not (rows > 1_000_000 and variant == "noise"):
                    prep_rows, _, pr = timed(lambda: (rows_of(gold), rows_of(pred)), repeat=1)
                    prep_df, _, pdf = timed(lambda: (gold.to_pandas(), pred.to_pandas()), repeat=1)
                    prep = 3 if rows <= 100_000 else 1
                    t_bird, _, _ = timed(lambda: bird_ex(pr[1], pr[0]), repeat=prep)
                    peers["BIRD set"] = (t_bird, prep_rows)
                    if rows <= 1_000_000:
                        t_spider, _, _ = timed(lambda: spider_eq(pr[0], pr[1], False), repeat=prep)
                        peers["Spider result_eq"] = (t_spider, prep_rows)
                    t_pd, _, _ = timed(lambda: compare_df(pdf[0], pdf[1]), repeat=prep)
                    peers["pandas compare_df"] = (t_pd, prep_df)
                    del pr, pdf
                    gc.collect()
                if peers:
                    best_name, (best, best_prep) = min(peers.items(), key=lambda kv: kv[1][0])
                    e2e_name, (e2e_cmp, e2e_prep) = min(peers.items(), key=lambda kv: kv[1][0] + kv[1][1])
                    target = "<=0.6 s and >=10x faster than the fastest peer" if rows == 1_000_000 else None
                    met = (t_ours <= 0.6 and best / t_ours >= 10) if target else None
                    report.add(SECTION, f"ours {label}", t_ours, "s", baseline=best, baseline_name=f"fastest peer ({best_name}, comparison only)",
                               target=target, met=met, samples=s_ours,
                               note=f"peer/ours {best / t_ours:.1f}x; from Arrow (with conversion) fastest peer {e2e_name} "
                                    f"{e2e_cmp + e2e_prep:.2f} s = {(e2e_cmp + e2e_prep) / t_ours:.1f}x ours; match={match}")
                    for name, (t_cmp, t_prep) in peers.items():
                        report.add(SECTION, f"{name} {label}", t_cmp, "s", baseline=t_ours, baseline_name="ours",
                                   note=f"+ {t_prep:.2f} s to build its input from the Arrow results")
                else:
                    report.add(SECTION, f"ours {label}", t_ours, "s", samples=s_ours, note=f"match={match}")
            del gold
            gc.collect()

    # peak memory of ours, each in a fresh process
    for rows in [r for r in sizes if r >= 1_000_000]:
        for variant in ("exact", "noise"):
            m = memory(rows, 6, variant)
            arrow = m["arrow_mib"]
            report.add(SECTION, f"ours peak memory {rows:,} x 6, {variant}", m["peak_delta_mib"], "MiB", baseline=arrow,
                       baseline_name="Arrow size of both results", target="< 2x Arrow size" if rows == 1_000_000 else None,
                       met=(m["peak_delta_mib"] < 2 * arrow) if rows == 1_000_000 else None,
                       note="peak-RSS growth during one comparison, fresh process")
            growth.setdefault(f"mem_{variant}", []).append((rows, m["peak_delta_mib"]))

    for variant in ("exact", "noise"):
        pts = growth[variant]
        if len(pts) >= 2:
            a, b = fit_line([float(r) for r, _ in pts], [t for _, t in pts])
            report.extra[f"fit_compare_{variant}"] = {"intercept_s": a, "s_per_row": b, "points": pts}
            print(f"  fit, {variant}: time = {a * 1000:.1f} ms + {b * 1e9:.0f} ns/row", flush=True)
    for key in ("mem_exact", "mem_noise"):
        pts = growth.get(key, [])
        if len(pts) >= 2:
            a, b = fit_line([float(r) for r, _ in pts], [m for _, m in pts])
            report.extra[f"fit_{key}"] = {"intercept_mib": a, "mib_per_row": b, "points": pts}
            print(f"  fit, {key}: peak = {a:.0f} MiB + {b * 2**20:.0f} B/row", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,100000,1000000,5000000")
    ap.add_argument("--quick", action="store_true", help="small sizes only, for a smoke run")
    ap.add_argument("--child-memory", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child_memory:
        rows, cols, variant = args.child_memory.split(",")
        print(json.dumps(_child_memory(int(rows), int(cols), variant)))
        return
    report = Report()
    sizes = [int(s) for s in args.sizes.split(",")] if not args.quick else [10_000, 100_000]
    run(report, sizes, args.quick)
    report.save(Path(__file__).resolve().parent / "results" / "compare.json")


if __name__ == "__main__":
    main()
