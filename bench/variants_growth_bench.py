"""The subsets of a database's variants (``build._build_one``: sample and growth, no golds'
rows), built in this process with the package first on PYTHONPATH: per variant its content
hash (to compare two packages' rows), wall and CPU seconds, and the growth's questions
(``ask``: queries, ``ask_deps``: dependency turns asked) and inserts, with their CPU seconds.

    PYTHONPATH=<package root> .venv/bin/python bench/variants_growth_bench.py DB OUT 0 3 [--count 8 --others 2]

``--others``: the suite's native variants sharing the size budget (Vantage: 2)."""
from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path
from typing import Any

import pytest_sqleval
from pytest_sqleval.core.variants import build as B


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("db", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("idx", nargs="+", type=int)
    ap.add_argument("--count", type=int, default=8)
    ap.add_argument("--others", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    print("package", pytest_sqleval.__file__, file=sys.stderr)
    engine = B.engine_of(a.db)
    c = B.observe_constraints(a.db)
    print(f"tables {len(c.tables)} dependencies {len(c.dependencies)}",
          {o: sum(d.origin == o for d in c.dependencies) for o in ("declared", "observed", "total")}, file=sys.stderr)
    scale = B._row_budget(a.count + a.others, c, engine) / (sum(B.FRACTIONS) / len(B.FRACTIONS))
    counts: dict[str, float] = {}
    builder: Any = B._DuckDBBuilder if engine == "duckdb" else B._SQLiteBuilder
    ask, add = B._Builder.any_missing_of, builder.add_missing

    def counted_ask(self: Any, deps: list[Any], since: int = 0) -> Any:
        counts["ask"] += (len(deps) + 49) // 50
        counts["ask_deps"] += len(deps)
        t = time.process_time()
        out = ask(self, deps, since) if since else ask(self, deps)  # an older package takes no ``since``
        counts["ask_s"] += time.process_time() - t
        return out

    def counted_add(self: Any, dep: Any, since: int = 0) -> int:
        counts["add"] += 1
        t = time.process_time()
        n: int = add(self, dep, since) if since else add(self, dep)
        counts["add_s"] += time.process_time() - t
        counts["add_rows"] += n
        return n

    B._Builder.any_missing_of = counted_ask  # type: ignore[method-assign]
    builder.add_missing = counted_add
    a.out.mkdir(parents=True, exist_ok=True)
    hashes = {}
    for i in a.idx:
        kind, fraction, tag = B.plan(i, a.seed)
        counts.update(ask=0, ask_deps=0, add=0, add_rows=0, ask_s=0.0, add_s=0.0)
        target = a.out / f"v{i}{'.duckdb' if engine == 'duckdb' else '.sqlite'}"
        target.unlink(missing_ok=True)
        wall, r0 = time.time(), resource.getrusage(resource.RUSAGE_SELF)
        params = B._build_one(engine, a.db, target, c, kind, min(1.0, fraction * scale), tag, i)
        r1 = resource.getrusage(resource.RUSAGE_SELF)
        cpu = r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime
        hashes[i] = B.content_hash(target)
        print(f"variant {i} {kind} fraction {params['fraction']} share {params['row_share']} "
              f"wall {time.time() - wall:.2f} cpu {cpu:.2f} {({k: round(v, 2) for k, v in counts.items()})} "
              f"hash {hashes[i][:16]}", flush=True)
        target.unlink()
    (a.out / "hashes.json").write_text(json.dumps(hashes), encoding="utf-8")


if __name__ == "__main__":
    main()
