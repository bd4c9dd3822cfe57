"""Result comparison: ours against BIRD's set comparison, Spider's test-suite ``result_eq``
(both as shipped in ``nl2sql360``) and a pandas sort-and-compare in the style of defog's
``compare_df``, on the same data, in the same run.

    python bench/compare_bench.py [--sizes 10000,100000,1000000,5000000] [--quick]

Data: ``rows`` x 4, 6 or 8 columns: integers with ~10 % duplicate rows, doubles (the
noisy variant multiplies them by 1 +- 3e-9), integers and doubles with NULLs, dates,
strings, timestamps. The prediction is the gold's rows in another order. Variants:
``exact`` (same rows), ``noise`` (float noise far inside the 1e-6 tolerance),
``mismatch`` (one value off), ``dedup`` (duplicate rows dropped). Tiny results (5 and 50
rows, what most benchmark questions return) are timed too: there the fixed cost of a
comparison is what counts.

Each peer is timed twice: on its own input form, already built ("comparison only":
Python row tuples, as ``fetchall()`` gives, for BIRD and Spider; DataFrames for pandas),
and "from Arrow": that plus building its input from the same Arrow results ours gets.
The fastest peer is named per size and variant, both ways, with ours' ratio to it. Peak
memory of ours is the peak-RSS growth of a fresh process during one comparison, against
twice the Arrow size of the two results. The verdict table says, per variant, what each
tool answers and, where a peer differs from ours, why (each reason is checked by a probe:
the peer's verdict flips once the named cause is removed).
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
    from pytest_sqleval.core.grading.compare import Comparator, CompareSpec
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
VARIANTS = ("exact", "noise", "mismatch", "dedup")
TINY = (5, 50)
SPIDER_MAX = 1_000_000  # Spider's result_eq takes ~25 s at 1M rows: not run beyond


def _filled(v: Any) -> Any:
    return "<NULL>" if v is None or (isinstance(v, float) and v != v) else v


class Peers:
    """The three peers, each as a verdict on its native input and a conversion from Arrow."""

    def __init__(self) -> None:
        self.bird, self.spider = _load_nl2sql360()

    def inputs(self, name: str, gold: pa.Table, pred: pa.Table) -> tuple[Any, Any]:
        if name == "pandas compare_df":
            return gold.to_pandas(), pred.to_pandas()
        return rows_of(gold), rows_of(pred)

    def verdict(self, name: str, g: Any, p: Any) -> bool:
        if name == "BIRD set":
            return bool(self.bird(p, g))
        if name == "Spider result_eq":
            return bool(self.spider(g, p, False))
        return compare_df(g, p)

    def names(self, rows: int) -> list[str]:
        return [n for n in ("BIRD set", "Spider result_eq", "pandas compare_df") if n != "Spider result_eq" or rows <= SPIDER_MAX]

    def probe(self, name: str, g: Any, p: Any, fix: Callable[[Any], Any]) -> bool:
        """The peer's verdict once every value went through ``fix``."""
        if name == "pandas compare_df":
            return compare_df(g.astype(object).map(fix), p.astype(object).map(fix))
        return self.verdict(name, [tuple(map(fix, r)) for r in g], [tuple(map(fix, r)) for r in p])


def explain(peers: Peers, name: str, ours: bool, g: Any, p: Any, peer: bool, clean: Any = None) -> str | None:
    """Why ``name`` answers ``peer`` where ours answers ``ours``, each cause confirmed by a
    probe that removes it (NULLs filled with a sentinel; ``clean``: the same prediction
    without its float noise); None when they agree for the same reason."""
    filled = peers.probe(name, g, p, _filled)
    if peer and not ours:
        if len(g) != len(p) and name == "BIRD set":
            return f"set() drops duplicate rows: {len(g):,} gold rows vs {len(p):,} predicted pass as equal"
        if len(g) != len(p) and name == "pandas compare_df":
            return f"drop_duplicates() before comparing: {len(g):,} gold rows vs {len(p):,} predicted pass as equal"
        return "passes a prediction ours fails (cause not probed)"
    if not peer and ours:
        if filled:
            return "NULL becomes NaN in pandas and NaN != NaN, so a result with any NULL never equals itself"
        noise = ("float noise of ~1e-9 relative (far inside the 1e-6 tolerance) breaks its exact equality: "
                 "the same prediction without the noise passes")
        if clean is not None and peers.verdict(name, g, clean):
            return noise
        if clean is not None and peers.probe(name, g, clean, _filled):
            return "NULL becomes NaN (NaN != NaN) and " + noise + " once NULLs are filled"
        return "fails a prediction ours passes (cause not probed)"
    if not peer and not ours and name == "pandas compare_df" and filled and len(g) != len(p):
        return ("agrees only by accident: NULL -> NaN fails it; with NULLs filled it passes, as "
                "drop_duplicates() hides the lost duplicate rows")
    return None


def _best(times: dict[str, float]) -> tuple[str, float]:
    return min(times.items(), key=lambda kv: kv[1])


def run(report: Report, sizes: list[int], quick: bool = False) -> None:
    print(f"== result comparison ({load()})", flush=True)
    peers = Peers()
    ours = ours_fn()
    random.seed(0)  # Spider samples rows to prune column permutations
    growth: dict[str, list[tuple[int, float]]] = {"exact": [], "noise": []}

    # what each tool answers on each variant, and why a peer differs from ours
    n = 100_000 if not quick else 20_000
    gold = make(n, 6)
    clean = make(n, 6, "exact", pred=True)  # the noisy prediction's rows, in its order, without the noise
    verdicts: dict[str, dict[str, Any]] = {}
    for variant in VARIANTS:
        pred = make(n, 6, variant, pred=True)
        row = {"ours": {"equal": ours(gold, pred)}}
        for name in peers.names(n):
            g, p = peers.inputs(name, gold, pred)
            peer = peers.verdict(name, g, p)
            denoised = peers.inputs(name, gold, clean)[1] if variant == "noise" else None
            row[name] = {"equal": peer, "agrees": peer == row["ours"]["equal"],
                         "reason": explain(peers, name, row["ours"]["equal"], g, p, peer, denoised)}
        verdicts[variant] = row
    report.extra["verdicts"] = {"rows": n, "columns": 6, "table": verdicts}
    print(f"  verdicts at {n:,} rows x 6 columns (equal / not equal):", flush=True)
    print(verdict_table(verdicts), flush=True)

    # timings: ours against each peer, comparison only and from Arrow
    plan = [(r, c) for r in TINY for c in [6]] + [(r, c) for r in sizes
                                                   for c in ([4, 6, 8] if r == 1_000_000 and not quick else [6])]
    summary: list[dict[str, Any]] = []
    for rows, cols in plan:
        gold = make(rows, cols)
        for variant in VARIANTS:
            if cols != 6 and variant in ("mismatch", "dedup"):
                continue
            pred = make(rows, cols, variant, pred=True)
            tiny = rows < 1000
            rep = 5 if rows <= 1_000_000 else 3
            inner = 200 if tiny else 1
            t_ours, s_ours, match = timed(lambda: ours(gold, pred), repeat=rep, warmup=1 if rows <= 100_000 else 0,
                                          inner=inner)
            label = f"{rows:,} rows x {cols} cols, {variant}"
            if cols == 6 and variant in growth and not tiny:
                growth[variant].append((rows, t_ours))
            if cols != 6 or (rows > 1_000_000 and variant != "exact"):
                report.add(SECTION, f"ours {label}", t_ours, "s", samples=s_ours, note=f"match={match}")
                continue
            native: dict[str, float] = {}
            from_arrow: dict[str, float] = {}
            prep_rep = 1 if rows >= 1_000_000 else 3
            for name in peers.names(rows):
                t_prep, _, (g, p) = timed(lambda: peers.inputs(name, gold, pred), repeat=prep_rep, inner=inner)
                reps = 1 if (rows >= 1_000_000 and name == "Spider result_eq") or rows > 1_000_000 else 3
                t_cmp, _, _ = timed(lambda: peers.verdict(name, g, p), repeat=reps, inner=inner)
                native[name], from_arrow[name] = t_cmp, t_cmp + t_prep
                report.add(SECTION, f"{name} {label}, comparison only", t_cmp, "s", baseline=t_ours, baseline_name="ours",
                           note=f"from Arrow (+ building its input): {t_cmp + t_prep:.4g} s")
                g = p = None  # freed before the next peer (not del: the timed lambdas name them)
                gc.collect()
            nb, tb = _best(native)
            ne, te = _best(from_arrow)
            target = "<= 0.6 s and >= 10x faster than the fastest peer" if rows == 1_000_000 else None
            report.add(SECTION, f"ours {label} vs fastest peer, comparison only", t_ours, "s", baseline=tb,
                       baseline_name=nb, target=target, met=(t_ours <= 0.6 and tb / t_ours >= 10) if target else None,
                       samples=s_ours, note=f"peer/ours {tb / t_ours:.2g}x; match={match}")
            report.add(SECTION, f"ours {label} vs fastest peer, from Arrow", t_ours, "s", baseline=te, baseline_name=ne,
                       target=target, met=(t_ours <= 0.6 and te / t_ours >= 10) if target else None,
                       note=f"peer/ours {te / t_ours:.2g}x")
            summary.append({"rows": rows, "variant": variant, "ours_s": t_ours, "native": [nb, tb],
                            "from_arrow": [ne, te], "peers_native": native, "peers_from_arrow": from_arrow})
            pred = None
            gc.collect()
        gold = None
        gc.collect()
    report.extra["compare_summary"] = summary

    # peak memory of ours, each in a fresh process
    mem_rows: list[dict[str, Any]] = []
    for rows in [r for r in sizes if r >= 1_000_000]:
        for variant in VARIANTS if rows == 1_000_000 else ("exact", "noise"):
            m = memory(rows, 6, variant)
            arrow = m["arrow_mib"]
            report.add(SECTION, f"ours peak memory {rows:,} x 6, {variant}", m["peak_delta_mib"], "MiB", baseline=2 * arrow,
                       baseline_name="2x the Arrow size of both results", target="< 2x Arrow size" if rows == 1_000_000 else None,
                       met=(m["peak_delta_mib"] < 2 * arrow) if rows == 1_000_000 else None,
                       note=f"peak-RSS growth during one comparison, fresh process; Arrow size {arrow:.0f} MiB, "
                            f"{m['peak_delta_mib'] / arrow:.2f}x it")
            mem_rows.append({"rows": rows, "variant": variant, "peak_mib": m["peak_delta_mib"], "arrow_mib": arrow})
            if variant in ("exact", "noise"):
                growth.setdefault(f"mem_{variant}", []).append((rows, m["peak_delta_mib"]))
    report.extra["compare_memory"] = mem_rows

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
    report.extra["compare_notes"] = notes(summary)
    print("\n" + summary_table(summary, mem_rows) + "\n\n" + "\n".join(f"- {x}" for x in report.extra["compare_notes"]),
          flush=True)


def verdict_table(verdicts: dict[str, dict[str, Any]]) -> str:
    tools = list(next(iter(verdicts.values())))
    lines = ["| variant | " + " | ".join(tools) + " |", "|---" * (len(tools) + 1) + "|"]
    reasons = []
    for variant, row in verdicts.items():
        cells = []
        for t in tools:
            cell = "equal" if row[t]["equal"] else "not equal"
            if t != "ours" and not row[t]["agrees"]:
                cell += " (differs)"
            cells.append(cell)
            if t != "ours" and row[t].get("reason"):
                reasons.append(f"- {variant}, {t}: {row[t]['reason']}")
        lines.append(f"| {variant} | " + " | ".join(cells) + " |")
    return "\n".join(lines + [""] + reasons)


def summary_table(summary: list[dict[str, Any]], mem_rows: list[dict[str, Any]]) -> str:
    def ms(x: float) -> str:
        return f"{x * 1000:.3g} ms" if x < 1 else f"{x:.3g} s"
    lines = ["| rows | variant | ours | fastest peer, comparison only | ratio | fastest peer, from Arrow | ratio |",
             "|---|---|---|---|---|---|---|"]
    for r in summary:
        (nb, tb), (ne, te) = r["native"], r["from_arrow"]
        lines.append(f"| {r['rows']:,} | {r['variant']} | {ms(r['ours_s'])} | {nb} {ms(tb)} | {tb / r['ours_s']:.2g}x | "
                     f"{ne} {ms(te)} | {te / r['ours_s']:.2g}x |")
    if mem_rows:
        lines += ["", "| rows | variant | ours peak memory | Arrow size | ratio (target < 2) |", "|---|---|---|---|---|"]
        lines += [f"| {m['rows']:,} | {m['variant']} | {m['peak_mib']:.0f} MiB | {m['arrow_mib']:.0f} MiB | "
                  f"{m['peak_mib'] / m['arrow_mib']:.2f} |" for m in mem_rows]
    return "\n".join(lines)


def notes(summary: list[dict[str, Any]]) -> list[str]:
    """Where the 10x target is out of reach, and why, with the figures."""
    out = []
    for r in summary:
        if r["rows"] != 1_000_000:
            continue
        (nb, tb), (ne, te) = r["native"], r["from_arrow"]
        t = r["ours_s"]
        if tb / t < 10:
            why = {"Spider result_eq": "it returns False on len(result1) != len(result2) before reading a row",
                   "BIRD set": "Python's set() of tuples already built in memory is one C-level hash pass over them"}.get(
                nb, "its native input is already built")
            out.append(f"1M {r['variant']}: {nb} on its pre-built input takes {tb * 1000:.3g} ms, ours {t * 1000:.0f} ms "
                       f"({tb / t:.2g}x); 10x would mean {tb * 100:.3g} ms: {why}. From the same Arrow results "
                       f"the fastest peer ({ne}) takes {te * 1000:.0f} ms, {te / t:.2g}x ours.")
    return out


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
