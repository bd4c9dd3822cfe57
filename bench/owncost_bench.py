"""The plugin's own cost per case: what a pytest-sqleval run costs beyond the queries it
runs and beyond pytest itself, on many small cases with gold answers cached.

    python bench/owncost_bench.py [--cases 1000] [--repeat 5] [--big 10000]

Three measurements, alternated in the same run, medians over ``--repeat``:

- **the run**: ``pytest SUITE --sqleval-backend=predictions:FILE``, a whole process from
  interpreter start to exit (results, summary and report.html written), on ``--cases``
  Vantage cases (the throughput bench's suite: gold SQL for three variants in four, the
  naive near-miss for the fourth; gold answers cached by a warm-up run);
- **DuckDB alone**: one in-process connection on the same warehouse, read-only, one
  thread (the harness's), running every predicted query and fetching it as Arrow;
- **empty pytest**: the same pytest command, the same installed plugins, on a test file
  of ``--cases`` empty parametrized tests.

own cost per case = (run - DuckDB alone - empty pytest) / cases (the issue's definition).

A fourth run splits it: **failing pytest**, the same empty tests where the ones whose case
failed in the run raise ``AssertionError`` carrying that case's own failure text
(``render_failure`` of its record). Its excess over empty pytest is what pytest itself
spends on reporting the run's failures, which empty tests that all pass never pay.

Then, on ``--big`` cases: collection (``--collect-only``; pytest's own "collected in"
time and the process's wall, next to empty parametrized tests' collection), and a whole
run's controller peak RSS (the pytest process's own high-water mark, not its engine's).

The figures go to ``owncost.json`` in the work folder (``$SQLEVAL_BENCH_WORK/owncost``) or
to ``--out``: never into the checkout the bench runs from, whose tree another run compares.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _util import PYTHON, ROOT, Report, check, fresh, load, median, pytest_cmd, read_records, run  # noqa: E402
import throughput_bench  # noqa: E402
from throughput_bench import duckdb_alone, setup  # noqa: E402

SECTION = "own cost"
WORK = Path(os.environ.get("SQLEVAL_BENCH_WORK", "/tmp/sqleval-bench")) / "owncost"  # apart from other benches'
throughput_bench.WORK = WORK  # its suites are written here, apart from a throughput run's
TIMEOUT_S = 900.0  # one pytest process at most (--timeout)
COMMON = ["-q", "-p", "no:cacheprovider", "-p", "no:randomly", "--no-header", "--tb=no", "-rN"]

# pytest as ``python -m pytest``, printing on its last stderr line the process's own peak
# RSS in KiB (its engine processes are children and not counted), then its CPU seconds
# (user + system) and its children's (the engine process), then the folder of the
# ``pytest_sqleval`` it imported. Run with ``python -P``: ``-c`` alone puts the working
# directory (this checkout) first on ``sys.path``, ahead of ``PYTHONPATH``, so a ``--before``
# run graded with this checkout's code, not the older one (every A/B before 2026-11-29 did).
_SELF_PEAK = ("import atexit, resource, runpy, sys; "
              "u = lambda w: (lambda r: r.ru_utime + r.ru_stime)(resource.getrusage(w)); "
              "atexit.register(lambda: print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "
              "u(resource.RUSAGE_SELF), u(resource.RUSAGE_CHILDREN), "
              "getattr(sys.modules.get('pytest_sqleval'), '__path__', ['-'])[0], file=sys.stderr)); "
              "sys.argv = ['pytest', *sys.argv[1:]]; runpy.run_module('pytest', run_name='__main__', alter_sys=True)")
CPU: dict[str, list[float]] = {}  # figure -> CPU seconds (process and children) of each sample
SPLIT: dict[str, list[tuple[float, float]]] = {}  # figure -> (the pytest process's CPU, its engine's) of each sample


def empty_tests(n: int) -> Path:
    folder = WORK / f"empty-{n}"
    fresh(folder)
    (folder / "test_empty.py").write_text(
        "import pytest\n\n\n"
        f"@pytest.mark.parametrize('i', range({n}))\n"
        "def test_case(i):\n"
        "    pass\n")
    return folder / "test_empty.py"


def failing_tests(n: int, records: list[dict]) -> Path:
    """``n`` parametrized tests, test ``i`` failing with record ``i``'s failure text when
    that case failed (the records are in the run's order, which is the tests' order)."""
    import json
    from pytest_sqleval.reports.terminal import render_failure
    folder = WORK / f"failing-{n}"
    fresh(folder)
    texts = [render_failure(r) if r["status"] != "passed" else None for r in records]
    (folder / "texts.json").write_text(json.dumps(texts), encoding="utf-8")
    (folder / "test_failing.py").write_text(
        "import json, pathlib\nimport pytest\n\n"
        "TEXTS = json.loads((pathlib.Path(__file__).parent / 'texts.json').read_text(encoding='utf-8'))\n\n\n"
        f"@pytest.mark.parametrize('i', range({n}))\n"
        "def test_case(i):\n"
        "    if TEXTS[i] is not None:\n"
        "        raise AssertionError(TEXTS[i])\n")
    return folder / "test_failing.py"


def pytest_run(args: list[str], *, peak: bool = False, code: Path | None = None,
               label: str | None = None) -> tuple[float, str, float | None]:
    """One pytest process; ``code``: a folder holding another ``pytest_sqleval`` (an older
    commit's, for a before/after in the same run) imported instead of this checkout's.
    Returns its wall, its output and its own peak RSS in MiB; its CPU seconds (its own and
    its children's) go to ``CPU[label]``."""
    cmd = [PYTHON, "-P", "-c", _SELF_PEAK, *args]
    # the working directory is the code's folder: the engine process is started as
    # ``python -m pytest_sqleval.core.engines.host``, which imports from the working directory
    # first (the suite and its results are absolute paths; no ini file is read from either)
    wall, proc = run(cmd, cwd=ROOT if code is None else code, env=None if code is None else {"PYTHONPATH": str(code)},
                     root_first=code is None, timeout=TIMEOUT_S)
    check(proc)
    kib, own, children, package = proc.stderr.strip().splitlines()[-1].split(maxsplit=3)
    expected = (code if code is not None else ROOT) / "pytest_sqleval"
    if package != "-" and Path(package).resolve() != expected.resolve():  # "-": a run that never loaded the plugin
        raise RuntimeError(f"the pytest process imported {package}, not {expected}")
    if label:
        CPU.setdefault(label, []).append(float(own) + float(children))
        SPLIT.setdefault(label, []).append((float(own), float(children)))
    return wall, proc.stdout, (int(kib) / 1024 if peak else None)


def split_note(label: str) -> str:
    """The CPU split of a figure's runs between the pytest process and its engine process
    (medians): where a serial run's work is, so whether one process waits on the other."""
    parts = SPLIT.get(label) or []
    if not parts:
        return ""
    return (f"grading process {median([p[0] for p in parts]):.2f} s, engine process "
            f"{median([p[1] for p in parts]):.2f} s (medians)")


def suite_args(suite: Path, preds: Path, cache: Path, results: Path) -> list[str]:
    fresh(results)
    return [str(suite), f"--sqleval-backend=predictions:{preds}", f"--sqleval-cache-dir={cache}",
            f"--sqleval-results={results}", *COMMON]


def reported_seconds(stdout: str) -> float:
    """pytest's own "N tests collected in X s" (or "... in X s" of a run)."""
    found = re.findall(r" in ([0-9.]+)s", stdout)
    if not found:
        raise RuntimeError(f"no duration in pytest's output: {stdout[-500:]}")
    return float(found[-1])


def run_bench(report: Report, n: int, repeat: int, big: int, before: Path | None = None) -> None:
    print(f"== own cost per case: {n} Vantage cases, gold cached ({load()})", flush=True)
    cache, results = WORK / "cache", WORK / "results"
    suite, preds, database, sqls = setup(n, 1)
    empty = empty_tests(n)
    pytest_run(suite_args(suite, preds, cache, results))  # warm-up: gold answers computed and cached
    pytest_run([str(empty), *COMMON])
    failing = failing_tests(n, read_records(results))
    runs: list[float] = []
    alone: list[float] = []
    bare: list[float] = []
    fails: list[float] = []
    olds: list[float] = []
    if before is not None:
        pytest_run(suite_args(suite, preds, cache, results), code=before)
    for _ in range(repeat):  # alternated, so a slow stretch of the machine hits all three (four)
        runs.append(pytest_run(suite_args(suite, preds, cache, results), label="run")[0])
        cpu0 = time.process_time()
        alone.append(duckdb_alone(database, sqls))
        CPU.setdefault("duckdb", []).append(time.process_time() - cpu0)
        bare.append(pytest_run([str(empty), *COMMON], label="empty")[0])
        fails.append(pytest_run([str(failing), *COMMON], label="failing")[0])
        if before is not None:
            olds.append(pytest_run(suite_args(suite, preds, cache, results), code=before, label="before")[0])
    recs = read_records(results)
    gold_runs = sum(1 for r in recs if r.get("gold") and not r["gold"].get("cached"))
    if len(recs) != n or gold_runs:
        raise RuntimeError(f"expected {n} records with cached gold, got {len(recs)} ({gold_runs} gold queries run)")
    t, d, e = median(runs), median(alone), median(bare)
    own_ms = 1000 * (t - d - e) / n
    ct, cd, ce = median(CPU["run"]), median(CPU["duckdb"]), median(CPU["empty"])
    own_cpu_ms = 1000 * (ct - cd - ce) / n
    report.add(SECTION, f"{n} cases: CPU seconds (pytest and its engine process)", ct, "s", samples=CPU["run"],
               note=split_note("run"))
    report.add(SECTION, f"{n} queries: DuckDB alone, CPU seconds", cd, "s", samples=CPU["duckdb"])
    report.add(SECTION, f"{n} empty parametrized tests: CPU seconds", ce, "s", samples=CPU["empty"])
    report.add(SECTION, "own cost per case, CPU", own_cpu_ms, "ms", target="<= 0.5 ms", met=own_cpu_ms <= 0.5,
               note=f"({ct:.2f} - {cd:.2f} - {ce:.2f}) s / {n}")
    if before is not None:
        cb = median(CPU["before"])
        report.add(SECTION, f"{n} cases: CPU seconds, the code before ({before})", cb, "s", samples=CPU["before"],
                   note=f"own cost per case, CPU, before: {1000 * (cb - cd - ce) / n:.2f} ms; {split_note('before')}")
    report.add(SECTION, f"{n} cases: pytest-sqleval run", t, "s", samples=runs,
               note=f"passed {sum(r['status'] == 'passed' for r in recs)}, failed {sum(r['status'] == 'failed' for r in recs)}")
    report.add(SECTION, f"{n} queries: DuckDB alone in-process", d, "s", samples=alone)
    report.add(SECTION, f"{n} empty parametrized tests: pytest", e, "s", samples=bare)
    report.add(SECTION, "own cost per case", own_ms, "ms", target="<= 0.5 ms", met=own_ms <= 0.5,
               note=f"({t:.2f} - {d:.2f} - {e:.2f}) s / {n}; run / DuckDB alone {t / d:.2f}x")
    f, cf = median(fails), median(CPU["failing"])
    nfail = sum(r["status"] != "passed" for r in recs)
    report.add(SECTION, f"{n} parametrized tests, {nfail} failing with the run's failure texts: pytest", f, "s",
               samples=fails, note=f"CPU {cf:.2f} s; pytest's own cost of the failures: "
                                   f"{1000 * (f - e) / n:.2f} ms a case wall, {1000 * (cf - ce) / n:.2f} ms CPU")
    report.add(SECTION, "own cost per case beyond pytest's own cost of the failures", 1000 * (t - d - f) / n, "ms",
               note=f"({t:.2f} - {d:.2f} - {f:.2f}) s / {n}; CPU {1000 * (ct - cd - cf) / n:.2f} ms")
    if olds:
        o = median(olds)
        old_ms = 1000 * (o - d - e) / n
        report.add(SECTION, f"{n} cases: the same run on the code before ({before})", o, "s", samples=olds,
                   note=f"own cost per case before: {old_ms:.2f} ms; after / before (own cost) "
                        f"{own_ms / old_ms if old_ms > 0 else float('nan'):.2f}")
        report.extra["owncost_before"] = {"code": str(before), "run_s": olds}
    per_case = [1000 * (a - b - c) / n for a, b, c in zip(runs, alone, bare)]
    report.extra["owncost"] = {"cases": n, "run_s": runs, "duckdb_alone_s": alone, "empty_pytest_s": bare,
                               "own_ms_per_case_each": per_case}
    if big:
        big_collection(report, big, repeat)


def big_collection(report: Report, n: int, repeat: int, peak_runs: int = 1, collection: bool = True,
                   before: Path | None = None) -> None:
    print(f"== {n} cases: collection and controller peak RSS ({load()})", flush=True)
    cache, results = WORK / "cache", WORK / "results-big"
    suite, preds, _, _ = setup(n, 1)
    empty = empty_tests(n)
    collect = [*suite_args(suite, preds, cache, results), "--collect-only"]
    if collection:
        pytest_run(collect)
    walls, reported, ewalls, ereported = [], [], [], []
    for _ in range(repeat if collection else 0):
        wall, out, _ = pytest_run(collect)
        walls.append(wall)
        reported.append(reported_seconds(out))
        wall, out, _ = pytest_run([str(empty), *COMMON, "--collect-only"])
        ewalls.append(wall)
        ereported.append(reported_seconds(out))
    if not collection:
        return peak_run(report, n, suite, preds, cache, results, empty, peak_runs, before)
    c = median(reported)
    report.add(SECTION, f"{n} cases: collection (pytest's 'collected in')", c, "s", samples=reported,
               baseline=median(ereported), baseline_name=f"{n} empty parametrized tests", target="<= 1.0 s",
               met=c <= 1.0, note=f"whole --collect-only process {median(walls):.2f} s (empty tests {median(ewalls):.2f} s)")
    if peak_runs:
        peak_run(report, n, suite, preds, cache, results, empty, peak_runs, before)


def peak_run(report: Report, n: int, suite: Path, preds: Path, cache: Path, results: Path, empty: Path,
             runs: int, before: Path | None = None) -> None:
    """The controller's own peak RSS over a whole run of ``n`` cases (gold answers cached:
    the suite's gold SQL is the 1000-case suite's, already cached). With ``before``, the
    same run on the older code at the same time (peak RSS does not depend on the machine's
    load; wall and CPU do), then both runs' outputs compared, timings aside."""
    from concurrent.futures import ThreadPoolExecutor
    peaks, pwalls, old_peaks = [], [], []
    other = results.with_name(results.name + "-before")
    for _ in range(runs):
        with ThreadPoolExecutor(2) as pool:
            mine = pool.submit(pytest_run, [*suite_args(suite, preds, cache, results), "--sqleval-run-id=peak"],
                               peak=True, label="peak")
            old = (pool.submit(pytest_run, [*suite_args(suite, preds, cache, other), "--sqleval-run-id=peak"],
                               peak=True, code=before, label="peak-before") if before is not None else None)
            wall, _, mib = mine.result()
            assert mib is not None
            peaks.append(mib)
            pwalls.append(wall)
            if old is not None:
                old_peaks.append(old.result()[2])
    _, _, empty_mib = pytest_run([str(empty), *COMMON], peak=True)
    p = median(peaks)
    report.add(SECTION, f"{n} cases: controller peak RSS", p, "MiB", samples=peaks, baseline=empty_mib,
               baseline_name=f"{n} empty parametrized tests", target="<= 400 MB", met=p * 2**20 <= 400e6,
               note=f"run wall {median(pwalls):.1f} s, CPU {median(CPU['peak']):.1f} s")
    if before is not None:
        report.add(SECTION, f"{n} cases: controller peak RSS, the code before ({before})", median(old_peaks), "MiB",
                   samples=old_peaks, note=f"CPU {median(CPU['peak-before']):.1f} s; outputs equal timings aside: "
                                           f"{same_outputs(results, other)}")


_TIMING = re.compile(r'("(?:elapsed_ms|grading_ms|duration_ms)":\s*)(-?[0-9.eE+-]+|null)')


def same_outputs(a: Path, b: Path) -> bool:
    """results.jsonl, summary.json and report.html of two runs equal byte for byte once
    their timing fields are blanked (both runs carry the same --sqleval-run-id)."""
    same = True
    for name in ("results.jsonl", "summary.json", "report.html"):
        x, y = (_TIMING.sub(r"\g<1>0", (d / name).read_text(encoding="utf-8")) for d in (a, b))
        if x != y:
            print(f"  {name} differs between {a} and {b}", flush=True)
            same = False
    return same


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--big", type=int, default=10_000, help="cases for the collection and memory figures (0: skip)")
    ap.add_argument("--before", type=Path, default=None, metavar="DIR",
                    help="a folder holding an older pytest_sqleval (git archive COMMIT pytest_sqleval | tar -x -C DIR): "
                         "its run is alternated with the others, a before/after in the same run")
    ap.add_argument("--peak-runs", type=int, default=1, help="whole --big runs for the peak RSS (0: skip)")
    ap.add_argument("--only-peak", action="store_true", help="only the --big peak RSS runs")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds one pytest process may take")
    ap.add_argument("--out", type=Path, default=None, metavar="FILE",
                    help="where the figures are saved (default: owncost.json, or owncost-peak.json with --only-peak, "
                         "in the work folder, $SQLEVAL_BENCH_WORK/owncost; never into the checkout it runs from)")
    args = ap.parse_args()
    global TIMEOUT_S
    TIMEOUT_S = args.timeout
    report = Report()
    if args.only_peak:
        big_collection(report, args.big, args.repeat, args.peak_runs, collection=False, before=args.before)
        print(f"figures saved to {report.save(args.out or WORK / 'owncost-peak.json')}", flush=True)
        return
    run_bench(report, args.cases, args.repeat, 0, args.before)
    if args.big:
        big_collection(report, args.big, args.repeat, args.peak_runs, before=args.before)
    print(f"figures saved to {report.save(args.out or WORK / 'owncost.json')}", flush=True)


if __name__ == "__main__":
    main()
