"""Database variants on TPC-H (sf 0.01, the acceptance data): how many wrong queries that
coincide with the gold on the pinned database the variants catch, whether every
equivalent rewrite still passes, and what grading with variants costs.

    .venv/bin/python bench/variants_bench.py [--variants 8]

The coincident set is built the way a reviewer would: near-miss mutants of the 22
official queries (the generator's mutants *beyond* the ones distillation chooses the
variants with, so the variants are never chosen on the queries they are scored on) that
return exactly the gold's rows on the pinned database. The rewrites are the acceptance
suite's (tests/tpch/cases.json, kind "rewrite")."""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pytest_sqleval.api import Grader  # noqa: E402
from pytest_sqleval.variants.distill import MUTANTS_PER_GOLD  # noqa: E402
from pytest_sqleval.variants.mutants import mutants  # noqa: E402

HELD_OUT = 120  # mutants per query drawn for the coincident set, after the distillation's own


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--variants", type=int, default=8)
    args = ap.parse_args()
    import subprocess
    out = subprocess.run([sys.executable, str(ROOT / "tests/tpch/make_tpch.py")], capture_output=True, text=True,
                         check=True).stdout.strip().splitlines()[-1]
    db = Path(out)
    queries = {q["query_nr"]: q["query"] for q in
               json.loads(db.with_name(db.name.replace(".duckdb", ".queries.json")).read_text())["queries"]}
    rewrites = [c for c in json.loads((ROOT / "tests/tpch/cases.json").read_text()) if c["kind"] == "rewrite"]
    cache = Path(tempfile.mkdtemp(prefix="sqleval-variants-bench-"))
    try:
        t0 = time.perf_counter()
        with Grader(db, cache_dir=cache / "plain") as plain:
            coincident = []
            for nr, gold in sorted(queries.items()):
                for m in mutants(gold, "duckdb", limit=MUTANTS_PER_GOLD + HELD_OUT)[MUTANTS_PER_GOLD:]:
                    v = plain.compare(m.sql, gold)
                    if v.passed:
                        coincident.append((nr, m))
            t_plain = time.perf_counter() - t0
        print(f"coincident mutants (pass on the pinned database): {len(coincident)} over "
              f"{len({nr for nr, _ in coincident})} queries ({t_plain:.1f} s to find)", flush=True)
        t0 = time.perf_counter()
        with Grader(db, cache_dir=cache / "variants", variants=args.variants,
                    variant_golds=list(queries.values())) as graded:
            t_build = time.perf_counter() - t0
            caught, kinds = 0, {}
            for nr, m in coincident:
                v = graded.compare(m.sql, queries[nr])
                hit = v.failure_kind == "coincidental_pass"
                caught += hit
                k = kinds.setdefault(m.kind, [0, 0])
                k[0] += hit
                k[1] += 1
            t_grade = time.perf_counter() - t0 - t_build
            bad = [c["name"] for c in rewrites if not graded.compare(c["sql"], queries[c["query_nr"]]).passed]
        print(f"caught as coincidental_pass: {caught}/{len(coincident)} = {caught / max(1, len(coincident)):.1%}")
        print("by mutation kind: " + ", ".join(f"{k} {a}/{b}" for k, (a, b) in sorted(kinds.items())))
        print(f"equivalent rewrites failing with variants: {len(bad)}/{len(rewrites)} {bad}")
        print(f"variant pool built in {t_build:.1f} s; grading (with distillation) {t_grade:.1f} s")
    finally:
        shutil.rmtree(cache, ignore_errors=True)


if __name__ == "__main__":
    main()
