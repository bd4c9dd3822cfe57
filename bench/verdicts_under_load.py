"""Same predictions, same data, a quiet machine and a loaded one: are the verdicts the same?

    python bench/verdicts_under_load.py SUITE PREDICTIONS [--hogs 4] [--repeat 1] [-- pytest args]

Runs the suite with ``--sqleval-backend=predictions:PREDICTIONS`` alone, then beside
``--hogs`` busy-loop processes (each stops itself after ``--hog-seconds``), and compares
every record's status, error class and failure kind. A verdict that changes with the
machine's load is not reproducible; the time limit counts a query's CPU time for that
reason (docs/explanation/sandbox.md). Reports the cases that differ and both runs' wall times.
"""
from __future__ import annotations

import argparse
import multiprocessing
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _util import check, fresh, load, pytest_cmd, read_records, run  # noqa: E402


def _busy(seconds: float) -> None:
    end = time.monotonic() + seconds
    x = 0
    while time.monotonic() < end:
        x = (x * 1103515245 + 12345) % 2147483648


def verdicts(suite: Path, preds: Path, work: Path, extra: list[str]) -> tuple[float, dict[str, tuple]]:
    """One whole pytest run, gold answers cached beforehand: wall seconds and each case's verdict."""
    results = fresh(work / "results")
    t, proc = run(pytest_cmd(str(suite), f"--sqleval-backend=predictions:{preds}", f"--sqleval-results={results}",
                             f"--sqleval-cache-dir={work / 'cache'}", "-q", "-p", "no:cacheprovider", "--tb=no",
                             "-rN", "--no-header", *extra), cwd=work, timeout=3600)
    check(proc)
    return t, {r["case_id"]: (r["status"], r.get("error_class"), r.get("failure_kind")) for r in read_records(results)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("suite", type=lambda s: Path(s).resolve())
    ap.add_argument("predictions", type=lambda s: Path(s).resolve())
    ap.add_argument("--hogs", type=int, default=4)
    ap.add_argument("--hog-seconds", type=float, default=600)
    ap.add_argument("--work", type=Path, default=Path("/tmp/sqleval-bench/under-load"))
    args, extra = ap.parse_known_args()
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    fresh(work / "cache")
    verdicts(args.suite, args.predictions, work, extra)  # gold answers stored: both runs below grade alike
    quiet_load = load()
    t_quiet, quiet = verdicts(args.suite, args.predictions, work, extra)
    hogs = [multiprocessing.Process(target=_busy, args=(args.hog_seconds,), daemon=True) for _ in range(args.hogs)]
    for h in hogs:
        h.start()
    try:
        time.sleep(2)
        busy_load = load()
        t_busy, busy = verdicts(args.suite, args.predictions, work, extra)
    finally:
        for h in hogs:
            h.terminate()
    differ = sorted(c for c in quiet if quiet[c] != busy.get(c))
    print(f"{len(quiet)} cases; quiet run {t_quiet:.1f} s ({quiet_load}); beside {args.hogs} busy loops {t_busy:.1f} s "
          f"({busy_load}); verdicts differ on {len(differ)}")
    for c in differ[:20]:
        print(f"  {c}: quiet {quiet[c]}, loaded {busy.get(c)}")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
