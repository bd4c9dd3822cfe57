"""What grading with database variants costs, beside the same run without them, in one run:
on the Vantage suite (gold and the sample predictions, the Quickstart's main job) and on
a Spider-shaped run (``spider_bench.build``: 1000 cases on 20 SQLite databases).

    .venv/bin/python bench/variants_cost_bench.py [--variants 8] [--repeat 3] [--only vantage|spider]

Per suite: the first run with variants (building every variant, and distilling every gold
whose choice the suite has not frozen: the bundled Vantage suite ships its
``variants.frozen.json``, so a user's first run distils nothing; its first run without
it, what ``validate`` pays once, is reported beside), the
cached rerun with and without variants alternated ``--repeat`` times (medians, whole
pytest processes, wall time and CPU time of the run and its engine process), the size of
the variants against the databases', and the verdicts: coincidental passes caught and
any gold that stops passing."""
from __future__ import annotations

import argparse
import os
import resource
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _util import ROOT, Report, check, fresh, load, median, pytest_cmd, read_records, run  # noqa: E402

from pytest_sqleval.core import FROZEN_VARIANTS_NAME as FROZEN_NAME  # noqa: E402

# apart from other runs' on a shared machine, as the other benches (the command BENCHMARKS 9 gives sets it)
WORK = Path(os.environ.get("SQLEVAL_BENCH_WORK", "/tmp/sqleval-bench")) / "variants-cost"


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _timed(cmd: list[str], cwd: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one whole pytest process (its engine process included)."""
    cpu = _children_cpu()
    wall, proc = run(cmd, cwd=cwd)
    check(proc)
    return wall, _children_cpu() - cpu


def _size(path: Path, pattern: str = "*") -> int:
    return sum(p.stat().st_size for p in path.rglob(pattern) if p.is_file())


def _first_run(suite: Path, backends: str, cache: Path, results: Path, count: int) -> tuple[list[str], float, float]:
    """On an empty cache: the gold answers on the database, then the first run with
    ``count`` variants; its wall and CPU seconds, and the command line's common part."""
    common = [str(suite), f"--sqleval-backend={backends}", f"--sqleval-cache-dir={cache}", "-q", "-p",
              "no:cacheprovider", "--tb=no", "-rN", "--no-header"]
    _timed(pytest_cmd(*common, f"--sqleval-results={results}-0"), WORK)
    wall, cpu = _timed(pytest_cmd(*common, f"--sqleval-variants={count}", f"--sqleval-results={results}-{count}"), WORK)
    return common, wall, cpu


def measure(report: Report, section: str, suite: Path, backends: str, databases: int, count: int,
            repeat: int) -> None:
    cache, results = fresh(WORK / section / "cache"), WORK / section / "results"
    common, first, first_cpu = _first_run(suite, backends, cache, results, count)
    how = f"build; choices from the suite's {FROZEN_NAME}" if (suite / FROZEN_NAME).is_file() else "build and distill"
    report.add(section, f"first run with --sqleval-variants={count} ({how})", first, "s",
               target="< 60 s" if section == "vantage" else None,
               met=first < 60 if section == "vantage" else None, note=f"CPU {first_cpu:.1f} s")
    walls: dict[int, list[float]] = {0: [], count: []}
    cpus: dict[int, list[float]] = {0: [], count: []}
    for _ in range(repeat):
        for n in (0, count):
            wall, cpu = _timed(pytest_cmd(*common, f"--sqleval-variants={n}", f"--sqleval-results={results}-{n}"), WORK)
            walls[n].append(wall)
            cpus[n].append(cpu)
    base, with_v = median(walls[0]), median(walls[count])
    report.add(section, "cached rerun without variants (baseline)", base, "s", samples=walls[0],
               note=f"CPU {median(cpus[0]):.2f} s")
    report.add(section, f"cached rerun with --sqleval-variants={count}", with_v, "s", baseline=base,
               baseline_name="without variants", target="<= 1.5x", met=with_v <= 1.5 * base, samples=walls[count],
               note=f"CPU {median(cpus[count]):.2f} s ({median(cpus[count]) / median(cpus[0]):.2f}x)")
    variants_bytes = _size(cache / "variants", "*.duckdb") + _size(cache / "variants", "*.sqlite")
    report.add(section, "variants on disk", variants_bytes / 2 ** 20, "MiB", baseline=databases / 2 ** 20,
               baseline_name="the databases", target="<= 2x", met=variants_bytes <= 2 * databases)
    plain = {(r["case_id"], r["backend"]): r["status"] for r in read_records(Path(f"{results}-0"))}
    graded = read_records(Path(f"{results}-{count}"))
    caught = [r for r in graded if r.get("failure_kind") == "coincidental_pass"]
    gold_lost = [r for r in graded if r["backend"] == "gold" and r["status"] != "passed"]
    changed = [r for r in graded if plain[(r["case_id"], r["backend"])] != r["status"] and r not in caught]
    report.add(section, "coincidental passes caught", len(caught), "cases",
               note=f"of {sum(s == 'passed' for s in plain.values())} passing without variants; "
                    f"{len(gold_lost)} gold case(s) not passing; {len(changed)} other verdict(s) changed")


def first_run_distilling(report: Report, section: str, suite: Path, backends: str, count: int) -> None:
    """The first run of a copy of ``suite`` without its frozen choices (its files linked):
    build and distill, what the suite's author pays once in ``validate``."""
    copy = fresh(WORK / section / "unfrozen")
    for path in suite.iterdir():
        if path.name != FROZEN_NAME and not path.name.startswith((".", "__")):
            (copy / path.name).symlink_to(path.resolve())
    _, wall, cpu = _first_run(copy, backends.replace(str(suite), str(copy)), fresh(WORK / section / "unfrozen-cache"),
                              WORK / section / "unfrozen-results", count)
    report.add(section, f"first run with --sqleval-variants={count}, no {FROZEN_NAME} (build and distill: "
               "what validate pays once)", wall, "s", note=f"CPU {cpu:.1f} s")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--variants", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", choices=("vantage", "spider"))
    args = ap.parse_args()
    report = Report()
    print(f"== variants cost ({load()})", flush=True)
    if args.only in (None, "vantage"):
        suite = ROOT / "cases" / "vantage"
        db = suite / "vrg_snapshot_2025-11-30.duckdb"
        if not db.exists():
            raise SystemExit(f"{db} is not built: run the Quickstart's main job once")
        backends = f"gold,predictions:{suite / 'sample_predictions.jsonl'}"
        measure(report, "vantage", suite, backends, db.stat().st_size, args.variants, args.repeat)
        if (suite / FROZEN_NAME).is_file():
            first_run_distilling(report, "vantage", suite, backends, args.variants)
    if args.only in (None, "spider"):
        import spider_bench
        root, pred_file = spider_bench.build(WORK / "spider-data" / "spider", 20, 50)
        measure(report, "spider", root, f"predictions:{pred_file}", _size(root / "database"), args.variants,
                args.repeat)
    report.save(Path(__file__).resolve().parent / "results" / "variants_cost.json")


if __name__ == "__main__":
    main()
