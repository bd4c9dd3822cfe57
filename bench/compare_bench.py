"""Result comparison speed: ours vs a plain DuckDB EXCEPT ALL baseline, same data, same run.

    python bench/compare_bench.py [--rows 1000000] [--repeat 3]

Prints medians and the ratio to the baseline (an exact EXCEPT ALL both ways with no
tolerance, no evidence: the floor any in-DuckDB comparison pays)."""
from __future__ import annotations

import argparse
import statistics
import time

import duckdb

from pytest_sqleval.grading.compare import Comparator, CompareSpec


def make(rows: int, noise: bool, shuffle: bool) -> "object":
    order = "ORDER BY hash(i)" if shuffle else "ORDER BY i"
    eps = "1e-9 * (i % 7)" if noise else "0"
    return duckdb.sql(f"""
        SELECT i % 5000 AS k, 'name ' || (i % 977) AS s, (i * 0.37) + {eps} AS x,
               CASE WHEN i % 11 = 0 THEN NULL ELSE i % 13 END AS n,
               DATE '2020-01-01' + CAST(i % 1000 AS INTEGER) AS d, (i % 3) * 1.5 AS y
        FROM range({rows}) t(i) {order}""").to_arrow_table()


def timed(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    gold = make(args.rows, False, False)
    pred_same = make(args.rows, False, True)
    pred_noise = make(args.rows, True, True)
    cmp = Comparator(threads=2)
    base = duckdb.connect()
    base.register("g", gold)
    base.register("p", pred_same)

    def baseline() -> None:
        base.execute("SELECT count(*) FROM (SELECT * FROM g EXCEPT ALL SELECT * FROM p)").fetchall()
        base.execute("SELECT count(*) FROM (SELECT * FROM p EXCEPT ALL SELECT * FROM g)").fetchall()

    b = timed(baseline, args.repeat)
    print(f"rows={args.rows:,} cols=6 arrow={(gold.nbytes + pred_same.nbytes) / 2**20:.0f} MiB")
    print(f"baseline EXCEPT ALL both ways      median {b:.3f} s")
    for name, pred, spec in [("unordered, exact", pred_same, CompareSpec()),
                             ("unordered, float noise", pred_noise, CompareSpec()),
                             ("ordered, exact", gold, CompareSpec(ordered=True, sort_keys=None))]:
        r = None

        def run() -> None:
            nonlocal r
            r = cmp.compare(gold, pred, spec)
        t = timed(run, args.repeat)
        print(f"ours: {name:<28} median {t:.3f} s  ratio {t / b:.2f}x baseline  match={r.match}")


if __name__ == "__main__":
    main()
