"""Start-up: collecting a 10,000-case suite, and what importing the plugin adds to a bare
pytest start.

    python bench/startup_bench.py [--cases 10000] [--repeat 5]

``pytest --collect-only -q`` on a suite of N cases (the Vantage questions cycled, the
warehouse linked in, one backend) against the same command on an empty folder; and
pytest on the empty folder with the plugin against ``-p no:sqleval`` (the plugin is an
installed entry point, so that is the only way to start pytest without it). Runs are
interleaved so a change of machine load hits both sides alike.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _util import PYTHON, Report, check, fresh, load, median, pytest_cmd, run, vantage_database, variants, write_suite  # noqa: E402

SECTION = "startup"
WORK = Path("/tmp/sqleval-bench/startup")


def run_bench(report: Report, n: int, repeat: int) -> None:
    print(f"== start-up: collect {n} cases ({load()})", flush=True)
    database = vantage_database(1)
    suite = write_suite(fresh(WORK / f"suite-{n}"), variants(n), database, name="startup")
    empty = fresh(WORK / "empty")
    (empty / "pytest.ini").write_text("[pytest]\n")
    (suite / "pytest.ini").write_text("[pytest]\n")
    common = ["--collect-only", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"]
    collect, bare, plugin, no_plugin = [], [], [], []
    for i in range(repeat + 1):
        t1, p1 = run(pytest_cmd(str(suite), *common), cwd=suite)
        check(p1, (0,))
        t2, p2 = run(pytest_cmd(str(empty), *common), cwd=empty)
        t3, p3 = run(pytest_cmd(str(empty), *common, "-p", "no:sqleval"), cwd=empty)
        if i == 0:  # the first round warms the file cache and writes bytecode
            assert f"{n} tests collected" in p1.stdout or f"{n} test" in p1.stdout, p1.stdout[-500:]
            continue
        collect.append(t1)
        plugin.append(t2)
        no_plugin.append(t3)
    bare = no_plugin
    c = median(collect)
    report.add(SECTION, f"pytest --collect-only, {n}-case suite", c, "s", baseline=median(bare),
               baseline_name="bare pytest start (empty folder, no plugin)", target="< 1.5 s", met=c < 1.5, samples=collect)
    # The plugin's import, timed inside a process that has imported pytest (what a start
    # pays for it); the whole start with and without it is noted, though there the plugin
    # also freezes the collected objects, which makes pytest's collections at exit cheaper.
    code = ("import time, pytest; t = time.perf_counter(); import pytest_sqleval.plugin; "
            "print(time.perf_counter() - t)")
    imports = []
    for _ in range(repeat):
        _, proc = run([PYTHON, "-c", code], cwd=empty)
        check(proc, (0,))
        imports.append(float(proc.stdout.strip().splitlines()[-1]))
    added = median(imports)
    report.add(SECTION, "importing the plugin: added to a bare pytest start", added, "s", baseline=median(no_plugin),
               baseline_name="bare pytest start", target="< 0.15 s", met=added < 0.15, samples=imports,
               note=f"import timed after pytest's; whole start with plugin {median(plugin):.3f} s "
                    f"vs -p no:sqleval {median(no_plugin):.3f} s")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    report = Report()
    run_bench(report, args.cases, args.repeat)
    report.save(Path(__file__).resolve().parent / "results" / "startup.json")


if __name__ == "__main__":
    main()
