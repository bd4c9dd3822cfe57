"""Spider dev graded on SQLite and on Spark (issue 33, "Truth on Spark"): the same
predictions, the same grader, two engines; every case whose verdict differs is listed with
both sides' evidence, so each one can be explained by an engine difference or fixed.

    python bench/spark_spider_agreement.py --spider /path/to/spider \\
        --predictions /path/to/DAIL-SQL+GPT-4.txt [--every K] [--out DIR]

``--spider`` is Spider's release folder (dev.json, tables.json, database/<db>/<db>.sqlite);
``--predictions`` one SQL per line in dev.json's order. Only the questions whose database
file exists are graded; ``--every K`` keeps every K-th of them (a deterministic subset).
Nothing is downloaded. Both runs are pytest subprocesses of this checkout
(``--sqleval-backend=predictions:...``, ``--sqleval-engine=spark`` for the second); their
CPU time (user+sys of the children) and wall time are printed beside the verdicts.
Prints one JSON object; ``--out`` keeps the suite folder and both runs' results."""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def build_suite(spider: Path, predictions: Path, out: Path, every: int) -> dict[str, int]:
    """A Spider-layout suite in ``out`` over the questions whose database exists (every
    ``every``-th): its own dev.json and one-SQL-per-line predictions, realigned; returns
    the new case id -> the question's index in the original dev.json."""
    dev = json.loads((spider / "dev.json").read_text())
    preds = (predictions.read_text(encoding="utf-8").split("\n"))
    if len(preds) < len(dev):
        raise SystemExit(f"{predictions}: {len(preds)} lines for {len(dev)} questions")
    kept = [i for i, q in enumerate(dev) if (spider / "database" / q["db_id"] / f"{q['db_id']}.sqlite").is_file()]
    kept = kept[::every]
    out.mkdir(parents=True, exist_ok=True)
    (out / "dev.json").write_text(json.dumps([dev[i] for i in kept], indent=1))
    (out / "pred.sql").write_text("\n".join(preds[i].split("\t")[0].strip() for i in kept) + "\n")
    (out / "tables.json").write_text((spider / "tables.json").read_text())
    link = out / "database"
    if not link.exists():
        link.symlink_to((spider / "database").resolve(), target_is_directory=True)
    (out / "sqleval.toml").write_text('[suite]\nname = "spider_dev"\nlayout = "spider"\ntables = "tables.json"\n'
                                      "[limits]\ntimeout_s = 30\n[spark]\nmaster = \"local[2]\"\n")
    return {str(n): i for n, i in enumerate(kept)}


def grade(suite: Path, results: Path, engine: list[str]) -> dict[str, Any]:
    """One pytest run over the suite; its records by case id, with its wall and CPU time."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    cmd = [sys.executable, "-m", "pytest", str(suite), "-q", "-p", "no:cacheprovider", "--no-header", "-rN",
           f"--sqleval-backend=predictions:{suite / 'pred.sql'}", f"--sqleval-results={results}",
           f"--sqleval-cache-dir={results / 'cache'}", *engine]
    proc = subprocess.run(cmd, cwd=str(suite), capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=4 * 3600)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    records = {}
    path = results / "results.jsonl"
    if not path.is_file():
        raise SystemExit(f"no results from {' '.join(cmd)}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    for line in path.read_text().splitlines():
        r = json.loads(line)
        records[r["case_id"]] = r
    return {"records": records, "wall_s": round(wall, 1),
            "cpu_s": round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 1),
            "tail": proc.stdout.strip().splitlines()[-1:] if proc.stdout.strip() else []}


def evidence(r: dict[str, Any]) -> dict[str, Any]:
    """What a side says about a case: its verdict and, for a fail, why."""
    execution = r.get("execution") or {}
    gold = r.get("gold") or {}
    return {"status": r["status"], "error_class": r.get("error_class"), "failure_kind": r.get("failure_kind"),
            "explanation": (r.get("explanation") or "")[:400], "case_error": (r.get("case_error") or "")[:300],
            "execution_error": (execution.get("error") if isinstance(execution, dict) else None),
            "gold_error": (gold.get("error") if isinstance(gold, dict) else None),
            "executed_sql": (r.get("executed_sql") or "")[:400]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--spider", required=True, type=Path)
    parser.add_argument("--predictions", required=True, type=Path)
    parser.add_argument("--every", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    work = args.out or Path(tempfile.mkdtemp(prefix="spider-spark-"))
    suite = work / "suite"
    index = build_suite(args.spider, args.predictions, suite, max(1, args.every))
    load = os.getloadavg()
    runs = {"sqlite": grade(suite, work / "sqlite", []), "spark": grade(suite, work / "spark", ["--sqleval-engine=spark"])}
    a, b = runs["sqlite"]["records"], runs["spark"]["records"]
    graded = sorted(set(a) & set(b), key=int)
    differ = [c for c in graded if a[c]["status"] != b[c]["status"]]
    out = {
        "questions": len(index), "every": args.every, "graded_both": len(graded), "load_before": load,
        "load_after": os.getloadavg(),
        "runs": {k: {"wall_s": v["wall_s"], "cpu_s": v["cpu_s"], "tail": v["tail"],
                     "passed": sum(r["status"] == "passed" for r in v["records"].values()),
                     "cases": len(v["records"])} for k, v in runs.items()},
        "agree": len(graded) - len(differ),
        "disagreements": [{"case": c, "dev_index": index[c], "db_id": (a[c].get("case_metadata") or {}).get("db_id"),
                           "gold_sql": a[c]["gold_sql"], "predicted_sql": a[c]["generated_sql"],
                           "sqlite": evidence(a[c]), "spark": evidence(b[c])} for c in differ],
    }
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
