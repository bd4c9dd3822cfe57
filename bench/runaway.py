"""How long a runaway query lives past its time limit, interruptible or not.

    python bench/runaway.py [--timeout 1] [--repeat 5]

Prints the median time from submitting the query to getting the verdict back, and the
overshoot past the limit (the issue's bound: limit + 1 s)."""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from conftest import build_shop  # noqa: E402
from pytest_sqleval.core.api import Grader  # noqa: E402
from pytest_sqleval.core.cases import Limits  # noqa: E402

QUERIES = {
    "interruptible (cross join)": "SELECT count(*) FROM range(100000) a, range(100000) b, range(1000) c",
    "uninterruptible (huge scalar)": "SELECT md5(repeat('ab', 400000000))",
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--timeout", type=float, default=1.0)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = build_shop(Path(tmp) / "shop.duckdb")
        with Grader(db, limits=Limits(timeout_s=args.timeout)) as g:
            g.compare("SELECT 1", "SELECT 1")  # warm the engine process
            for name, sql in QUERIES.items():
                times, kinds = [], set()
                for _ in range(args.repeat):
                    t = time.perf_counter()
                    v = g.compare(sql, "SELECT count(*) FROM orders")
                    times.append(time.perf_counter() - t)
                    kinds.add((v.failure_kind, v.layers["execution"]["error"]["exception"]))
                    assert g.compare("SELECT 1", "SELECT 1").passed  # the next case is unaffected
                med = statistics.median(times)
                print(f"{name:<32} limit {args.timeout:.1f} s  median {med:.2f} s  max {max(times):.2f} s  "
                      f"overshoot {med - args.timeout:+.2f} s  outcome {sorted(kinds)}")
            print(f"engine process restarts: {g._grader.host.restarts}")


if __name__ == "__main__":
    main()
