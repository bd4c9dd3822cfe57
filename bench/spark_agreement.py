"""Truth on Spark (issue 33, item 6): the same predictions graded on DuckDB and on a local
Spark, verdict by verdict.

Two sets, each graded by the whole grader (``SuiteGrader``: parse, safety, execution in
the engine process, comparison, error class) once on the DuckDB file and once on Spark
(the file mirrored, ``spark_sandbox``), with the case's golds as that engine grades them
(a case's ``gold_sql_spark`` on Spark):

- TPC-H (sf 0.01, DuckDB's own dbgen: ``tests/tpch/make_tpch.py``): the 22 official
  queries as golds; predictions = each gold itself, the repository's 30 equivalent
  rewrites and 70 result-changing mutants (``tests/tpch/cases.json``), and up to
  ``--mutants`` single-point mutants per gold from ``core.variants.mutants``;
- Vantage (``cases/vantage``, 60 golds; 4 use ASOF JOIN and carry a ``gold_sql_spark``):
  predictions = each gold, ``sample_predictions.jsonl`` and ``naive.jsonl`` of
  ``cases/vantage/predictions``, and up to ``--mutants`` single-point mutants per gold.

Every disagreement is printed with both verdicts (pass/fail, failure kind, error
category, the first line of the explanation) so it can be explained by a documented
engine difference (docs/explanation/spark.md) or fixed.

    python bench/spark_agreement.py [--tpch PATH] [--mutants 3] [--out results.json]

Needs pyspark and Java. Prints one JSON object (and writes it to ``--out``)."""
from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _cpu() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _verdict(grader: Any, case: Any, sql: str) -> dict[str, Any]:
    from pytest_sqleval.core.errors import CaseError
    try:
        gold = grader.case_gold(case)
    except CaseError as exc:
        return {"status": "gold_error", "passed": None, "why": str(exc).splitlines()[0][:200]}
    v = grader.grade(sql, gold)
    err = (v.layers.get("execution") or {}).get("error") or {}
    return {"status": v.status, "passed": v.passed, "failure_kind": v.failure_kind, "error_class": v.error_class,
            "category": err.get("category"), "why": (v.explanation or "").splitlines()[0][:200] if v.explanation else "",
            "gold": "spark" if getattr(gold, "engine", None) else "default"}


def _predictions(cases: list[Any], extra: dict[str, list[tuple[str, str]]], n_mutants: int,
                 dialect: str) -> list[tuple[Any, str, str]]:
    """(case, kind, sql): the gold itself, the given predictions, and single-point mutants."""
    from pytest_sqleval.core.variants.mutants import mutants
    out = []
    for case in cases:
        out.append((case, "gold", case.gold_sql))
        out += [(case, kind, sql) for kind, sql in extra.get(case.id, [])]
        out += [(case, f"mutant:{m.kind}", m.sql) for m in mutants(case.gold_sql, dialect, limit=n_mutants)]
    return out


def _grade_set(name: str, database: Path, cases: list[Any], preds: list[tuple[Any, str, str]], dialect: str,
               work: Path, mirror: Path) -> dict[str, Any]:
    from pytest_sqleval.core.engines.base import Limits
    from pytest_sqleval.core.engines.spark_sandbox import SparkSettings, spark_location
    from pytest_sqleval.core.grading.pipeline import SuiteGrader
    limits = Limits(timeout_s=60.0)
    rows: dict[str, list[dict[str, Any]]] = {}
    timing: dict[str, dict[str, float]] = {}
    for engine, location in (("duckdb", database),
                             ("spark", spark_location(database, SparkSettings(master="local[2]", driver_memory="2g",
                                                                              cache_dir=str(mirror))))):
        cpu, wall = _cpu(), time.perf_counter()
        grader = SuiteGrader(location, dialect=dialect, limits=limits, cache_dir=work / f"{name}-{engine}")
        opened = time.perf_counter() - wall
        try:
            rows[engine] = [_verdict(grader, case, sql) for case, _, sql in preds]
        finally:
            grader.close()
        timing[engine] = {"open_s": round(opened, 2), "wall_s": round(time.perf_counter() - wall, 2),
                          "cpu_s": round(_cpu() - cpu, 2)}
    agree = disagree = 0
    listed = []
    for (case, kind, sql), d, s in zip(preds, rows["duckdb"], rows["spark"]):
        if d["passed"] == s["passed"] and (d["status"] == "gold_error") == (s["status"] == "gold_error"):
            agree += 1
            continue
        disagree += 1
        listed.append({"case": case.id, "kind": kind, "sql": sql, "duckdb": d, "spark": s})
    both_pass = sum(1 for d, s in zip(rows["duckdb"], rows["spark"]) if d["passed"] and s["passed"])
    return {"predictions": len(preds), "cases": len(cases), "agree": agree, "disagree": disagree,
            "passed_duckdb": sum(1 for d in rows["duckdb"] if d["passed"]),
            "passed_spark": sum(1 for s in rows["spark"] if s["passed"]), "passed_both": both_pass,
            "gold_errors_duckdb": sum(1 for d in rows["duckdb"] if d["status"] == "gold_error"),
            "gold_errors_spark": sum(1 for s in rows["spark"] if s["status"] == "gold_error"),
            "spark_gold_used": sum(1 for s in rows["spark"] if s.get("gold") == "spark"),
            "timing": timing, "disagreements": listed}


def _tpch(path: Path, n_mutants: int) -> tuple[list[Any], list[tuple[Any, str, str]]]:
    from pytest_sqleval.core import BenchmarkCase
    queries_file = path.with_name(path.name.replace(".duckdb", ".queries.json"))
    queries = {q["query_nr"]: q["query"] for q in json.loads(queries_file.read_text())["queries"]}
    cases = [BenchmarkCase(id=f"tpch_q{n:02d}", question=f"TPC-H query {n}", gold_sql=sql)
             for n, sql in sorted(queries.items())]
    extra: dict[str, list[tuple[str, str]]] = {}
    for c in json.loads((ROOT / "tests" / "tpch" / "cases.json").read_text()):
        extra.setdefault(f"tpch_q{c['query_nr']:02d}", []).append((f"{c['kind']}:{c['name']}", c["sql"]))
    return cases, _predictions(cases, extra, n_mutants, "duckdb")


def _vantage(n_mutants: int) -> tuple[Path, list[Any], list[tuple[Any, str, str]]]:
    from pytest_sqleval.core import ensure_database, load_manifest, read_layout_cases
    manifest = load_manifest(ROOT / "cases" / "vantage" / "sqleval.toml")
    ensure_database(manifest.database, manifest.build)
    cases = read_layout_cases(manifest)
    extra: dict[str, list[tuple[str, str]]] = {}
    for name in ("sample_predictions.jsonl", "predictions/naive.jsonl"):
        for line in (ROOT / "cases" / "vantage" / name).read_text().splitlines():
            if line.strip():
                p = json.loads(line)
                extra.setdefault(p["id"], []).append((name.split("/")[-1].split(".")[0], p["sql"]))
    return Path(manifest.database), cases, _predictions(cases, extra, n_mutants, manifest.dialect)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tpch", default=str(ROOT / ".sqleval-cache" / "tpch" / "tpch-sf0.01.duckdb"))
    parser.add_argument("--mutants", type=int, default=3)
    parser.add_argument("--mirror", default=None, help="Spark mirror cache (default: a fresh temporary folder)")
    parser.add_argument("--only", choices=("tpch", "vantage"), default=None)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="spark-agreement-"))
    mirror = Path(args.mirror) if args.mirror else work / "mirror"
    out: dict[str, Any] = {"load_1min_start": os.getloadavg()[0], "cores": os.cpu_count(), "mutants_per_gold": args.mutants}
    cpu, wall = _cpu(), time.perf_counter()
    if args.only in (None, "tpch"):
        cases, preds = _tpch(Path(args.tpch), args.mutants)
        out["tpch"] = _grade_set("tpch", Path(args.tpch), cases, preds, "duckdb", work, mirror)
    if args.only in (None, "vantage"):
        db, cases, preds = _vantage(args.mutants)
        out["vantage"] = _grade_set("vantage", db, cases, preds, "duckdb", work, mirror)
    out["wall_s"], out["cpu_s"] = round(time.perf_counter() - wall, 1), round(_cpu() - cpu, 1)
    out["load_1min_end"] = os.getloadavg()[0]
    text = json.dumps(out, indent=1, default=str)
    if args.out:
        Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
