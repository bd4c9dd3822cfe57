"""Database variants: how many wrong queries that coincide with the gold on the pinned
database the variants catch, whether every equivalent rewrite still passes, and what
grading with variants costs.

Held-out coincidence sets on three schema families (TPC-H, TPC-DS, Spider-style SQLite),
with ground truth from instances the grader never sees (``bench/vbench``; see
BENCHMARKS.md section 9 for the commands)::

    python bench/variants_bench.py build --family tpcds --pinned P.duckdb --truth T.duckdb \
        --queries P.queries.json --seed 1000 --out /work/vbench-data/sets/tpcds-1000
    python bench/variants_bench.py measure --set /work/vbench-data/sets/tpcds-1000 [--variants 8] [--show-missed]

The historical TPC-H check (no subcommand) scores the grader's own held-out mutants::

    .venv/bin/python bench/variants_bench.py [--variants 8] [--seeds 0,1,2] [--show-missed]

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

import duckdb  # noqa: E402
import sqlglot  # noqa: E402
from sqlglot import exp  # noqa: E402
from sqlglot.optimizer.simplify import simplify  # noqa: E402

from pytest_sqleval.core.api import Grader  # noqa: E402

HELD_OUT = 120  # mutants per query drawn for the coincident set, after the distillation's own


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] in ("build", "measure"):
        sys.path.insert(0, str(ROOT / "bench"))
        from vbench.coincidence import main as held_out_main
        held_out_main(sys.argv[1:])
        return
    legacy_main()


def legacy_main() -> None:
    """The TPC-H check of earlier rounds, on the grader's own held-out mutants."""
    from pytest_sqleval.core.variants.distill import MUTANTS_PER_GOLD
    from pytest_sqleval.core.variants.mutants import mutants
    ap = argparse.ArgumentParser()
    ap.add_argument("--variants", type=int, default=8)
    ap.add_argument("--show-missed", action="store_true", help="list the coincidences the variants miss")
    ap.add_argument("--seeds", type=lambda text: [int(x) for x in text.split(",")], default=[0, 1, 2],
                    help="variant seeds, each graded apart (default 0,1,2): one seed's variants are one sample")
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
        con = duckdb.connect(str(db), read_only=True)
        outside = {id(m) for nr, m in coincident if _outside_or_false(queries[nr], m.sql, con)}
        told = len(coincident) - len(outside)
        print(f"of these, {len(outside)} move a literal only outside the column's domain (equivalent on the data "
              f"the suite describes); the catch rate is over the other {told}")
        totals = [0, 0]
        for seed in args.seeds:
            t0 = time.perf_counter()
            with Grader(db, cache_dir=cache / f"variants-{seed}", variants=args.variants, variant_seed=seed,
                        variant_golds=list(queries.values())) as graded:
                t_build = time.perf_counter() - t0
                caught, kinds = 0, {}
                for nr, m in coincident:
                    if id(m) in outside:
                        continue
                    hit = graded.compare(m.sql, queries[nr]).failure_kind == "coincidental_pass"
                    caught += hit
                    if args.show_missed and not hit:
                        print(f"  seed {seed}: missed q{nr} {m.kind}: {m.detail}")
                    k = kinds.setdefault(m.kind, [0, 0])
                    k[0] += hit
                    k[1] += 1
                t_grade = time.perf_counter() - t0 - t_build
                bad = [c["name"] for c in rewrites if not graded.compare(c["sql"], queries[c["query_nr"]]).passed]
            totals[0] += caught
            totals[1] += told
            print(f"seed {seed}: caught as coincidental_pass {caught}/{told} = {caught / max(1, told):.1%} ("
                  + ", ".join(f"{k} {a}/{b}" for k, (a, b) in sorted(kinds.items()))
                  + f"); equivalent rewrites failing: {len(bad)}/{len(rewrites)} {bad}; "
                  f"pool built in {t_build:.1f} s, grading (with distillation) {t_grade:.1f} s", flush=True)
        print(f"over {len(args.seeds)} seeds: caught {totals[0]}/{totals[1]} = {totals[0] / max(1, totals[1]):.1%}")
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def _outside_or_false(gold: str, mutant: str, con: "duckdb.DuckDBPyConnection") -> bool:
    try:
        return _only_outside_domain(gold, mutant, con)
    except duckdb.Error:  # a comparison the domain query cannot state alone (a correlated name)
        return False


def _only_outside_domain(gold: str, mutant: str, con: "duckdb.DuckDBPyConnection") -> bool:
    """Whether ``mutant`` moves one literal of a column comparison so that the old and the
    new comparison agree on every value of the column's domain on the pinned database:
    each value it holds and, for numbers and dates, each folded bound and the values one
    unit either side of it within the column's [min, max]."""
    from pytest_sqleval.core.variants.boundaries import neighbours
    g, m = sqlglot.parse_one(gold, read="duckdb"), sqlglot.parse_one(mutant, read="duckdb")
    twins = list(zip(g.walk(), m.walk()))
    moved = [a for a, b in twins if isinstance(a, exp.Literal) and a != b]
    old = moved[0].find_ancestor(exp.Predicate) if len(moved) == 1 else None
    if old is None or not isinstance(old.this, exp.Column):
        return False
    new = next(b for a, b in twins if a is old)
    column = old.this.name
    found = con.execute("SELECT table_name, data_type FROM duckdb_columns() WHERE column_name = ?", [column]).fetchall()
    if len(found) != 1:
        return False
    table, ctype = found[0]
    bare = {id(c): exp.column(column) for c in (old.this, new.this)}
    gp, mp = (p.transform(lambda n: bare.get(id(n), n)).sql("duckdb") for p in (old, new))
    probes: list[str] = []
    if ctype != "VARCHAR":
        for p in (old, new):
            for node in p.iter_expressions():
                if node is p.this or node.find(exp.Column):
                    continue
                folded = simplify(node.copy())
                value = folded.this if isinstance(folded, exp.Cast) else folded
                if isinstance(value, exp.Literal):
                    probes += neighbours(value.this)
    values = " UNION ALL ".join(f"SELECT TRY_CAST(? AS {ctype})" for _ in probes)
    candidates = f"SELECT DISTINCT {column} FROM {table}" + (f" UNION {values}" if values else "")
    return con.execute(
        f"SELECT count(*) FROM ({candidates}) AS domain({column}) "
        f"WHERE {column} BETWEEN (SELECT min({column}) FROM {table}) AND (SELECT max({column}) FROM {table}) "
        f"AND ({gp}) IS DISTINCT FROM ({mp})", probes).fetchone()[0] == 0


if __name__ == "__main__":
    main()
