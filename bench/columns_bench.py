"""Column policies: matching a gold's columns among a prediction's by values.

    PYTHONPATH=.:<nl2sql360 on the path> python bench/columns_bench.py

Two figures, each against a baseline measured in the same run:

1. 60 gold columns found among 61 predicted ones (``columns = "superset"``), the predicted
   columns shuffled: (a) columns of distinct values (``distinct``), (b) every column the
   same multiset of values in another row order, with names that say nothing
   (``look-alikes``: the signatures cannot tell them apart, the refinement by joint row
   values must). Target: well under a second. Baseline: the same results compared by
   position (``columns = "exact"``, the prediction's columns in the gold's order).
2. The 5-row comparison (compare_bench's tiny results: 5 rows x 6 columns, the
   prediction's rows in another order, plus one extra column for superset) against BIRD's
   set equality (``calculate_ex`` from nl2sql360, on row tuples already built). Target:
   superset within 3x BIRD's.

Data is generated here (seeded); nothing is read from disk.
"""
from __future__ import annotations

import os
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pyarrow as pa  # noqa: E402

from _util import load, timed  # noqa: E402
from compare_bench import _load_nl2sql360, make, rows_of  # noqa: E402

from pytest_sqleval.core.cases import ComparePolicy  # noqa: E402
from pytest_sqleval.core.grading.compare import Comparator  # noqa: E402

BAG = ComparePolicy(order_matters=False)
SUPERSET = ComparePolicy(order_matters=False, columns="superset")


def wide(kind: str, columns: int = 60, rows: int = 50) -> tuple[pa.Table, pa.Table, pa.Table]:
    """Gold, the prediction by position, the prediction shuffled with one extra column."""
    rng = random.Random(7)
    base = list(range(rows))
    cols = {}
    for i in range(columns):
        if kind == "distinct":
            cols[f"c{i}"] = [rng.randint(0, 10 * (i + 1)) for _ in range(rows)]
        else:
            values = base[:]
            random.Random(i).shuffle(values)
            cols[f"c{i}"] = values
    gold = pa.table(cols)
    order = list(range(columns))
    rng.shuffle(order)
    shuffled = pa.table({f"p{j}": cols[f"c{order[j]}"] for j in range(columns)} | {"extra": [1] * rows})
    return gold, pa.table({f"p{i}": cols[f"c{i}"] for i in range(columns)}), shuffled


def main() -> None:
    print(f"== column policies ({load()}, {os.cpu_count()} cpus)")
    cmp = Comparator(threads=1)
    for kind in ("distinct", "look-alikes"):
        gold, by_position, shuffled = wide(kind)
        t_pos, _, m_pos = timed(lambda: cmp.compare(gold, by_position, BAG).match, repeat=5, warmup=1)
        t_sup, _, m_sup = timed(lambda: cmp.compare(gold, shuffled, SUPERSET).match, repeat=5, warmup=1)
        print(f"  60 columns x 50 rows, {kind}: superset {t_sup * 1000:.1f} ms (match={m_sup}); "
              f"exact by position {t_pos * 1000:.1f} ms (match={m_pos}); ratio {t_sup / t_pos:.1f}x; "
              f"target < 1000 ms: {'met' if m_sup and t_sup < 1.0 else 'NOT met'}")
    bird = _load_nl2sql360()[0]
    gold, pred = make(5, 6), make(5, 6, "exact", pred=True)
    extra = pred.append_column("extra", pa.array([0] * pred.num_rows))
    g_rows, p_rows = rows_of(gold), rows_of(pred)
    t_bird, _, _ = timed(lambda: bird(p_rows, g_rows), repeat=7, warmup=1, inner=500)
    t_exact, _, m_exact = timed(lambda: cmp.compare(gold, pred, BAG).match, repeat=7, warmup=1, inner=200)
    t_sup, _, m_sup = timed(lambda: cmp.compare(gold, extra, SUPERSET).match, repeat=7, warmup=1, inner=200)
    t_bird_arrow, _, _ = timed(lambda: bird(rows_of(pred), rows_of(gold)), repeat=7, warmup=1, inner=200)
    print(f"  5 rows x 6 columns: BIRD set {t_bird * 1e6:.1f} us (rows already built), "
          f"{t_bird_arrow * 1e6:.1f} us from Arrow; ours exact {t_exact * 1e6:.1f} us (match={m_exact}), "
          f"superset +1 column {t_sup * 1e6:.1f} us (match={m_sup})")
    print(f"  superset / BIRD from Arrow = {t_sup / t_bird_arrow:.2f}x; superset / BIRD rows built = "
          f"{t_sup / t_bird:.1f}x; exact / BIRD from Arrow = {t_exact / t_bird_arrow:.2f}x; target superset <= 3x "
          f"exact's own ratio to BIRD: superset / exact = {t_sup / t_exact:.2f}x")


if __name__ == "__main__":
    main()
