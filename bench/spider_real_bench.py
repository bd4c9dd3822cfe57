"""Real Spider dev, side by side with Spider's official evaluator, in one run.

    python bench/spider_real_bench.py --spider DIR --pred FILE --official DIR --official-python PY [--repeat 3] [--no-xdist]

``--spider``: a Spider release folder (``dev.json``, ``tables.json``, ``database/<db>/<db>.sqlite``);
``--pred``: one predicted SQL per line in ``dev.json`` order (e.g. DAIL-SQL's
``results/DAIL-SQL+GPT-4.txt``); ``--official``: a checkout of taoyds/test-suite-sql-eval;
``--official-python``: a Python with its needs (nltk, sqlparse, tqdm). Nothing is
downloaded: every input is a path. A question whose database file is absent from the
folder (some public copies lack ``wta_1.sqlite``) is left out of both sides, and said.

Each repeat runs, in turn, so load falls on all alike: the official ``evaluation.py --etype
exec`` (its defaults, as a whole process); pytest-sqleval serial with an empty gold cache
(cold); serial again (gold cached, warm); ``-n 2`` cold. Each figure is a median, with its
ratio to the official's median, as wall time and as CPU time (user + system of the process
and its children: what load on a shared machine moves least). Then both verdict
agreements, case by case: the official's own verdict (its ``eval_exec_match``, captured
around one ``evaluate`` call of its own code) against our record of Spider's verdict
(``sidebyside.spider``), and against our strict verdict (passed or not).

The official parser tokenizes with nltk's trained English Punkt model, a download from
nltk's servers; it is given an untrained one (``spider_bench.punkt_stand_in``), written by
``--official-python`` at run time.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _util import Report, check, fresh, load, median, pytest_cmd, read_records, run  # noqa: E402

WORK = Path(os.environ.get("SQLEVAL_BENCH_WORK", "/tmp/sqleval-bench")) / "spider-real"

#: run by --official-python: the untrained Punkt stand-in, written where nltk reads it
PUNKT = r"""
import os, sys, nltk
from nltk.tokenize.punkt import PunktParameters, save_punkt_params
root = sys.argv[1]
english = os.path.join(root, "tokenizers", "punkt_tab", "english")
os.makedirs(os.path.dirname(english), exist_ok=True)
nltk.data.path.append(root)
save_punkt_params(PunktParameters(), english)
"""

#: run by --official-python: one ``evaluate`` of the official code, each case's exec verdict captured
VERDICTS = r"""
import contextlib, io, json, os, sys
checkout, gold, pred, db_dir = sys.argv[1:5]
os.chdir(checkout)
sys.path.insert(0, checkout)
import evaluation
verdicts, exec_match = [], evaluation.eval_exec_match
def captured(*args, **kwargs):
    verdicts.append(bool(exec_match(*args, **kwargs)))
    return verdicts[-1]
evaluation.eval_exec_match = captured
with contextlib.redirect_stdout(io.StringIO()):
    evaluation.evaluate(gold, pred, db_dir, "exec", None, False, False, False)
print(json.dumps(verdicts))
"""


def prepare(spider: Path, pred: Path, out: Path) -> tuple[Path, Path, Path, int, list[str]]:
    """The questions whose database is present, in the spider layout for us, and as the
    official's gold and prediction files: (suite, gold file, prediction file, n, db_ids left out)."""
    dev = json.loads((spider / "dev.json").read_text())
    preds = pred.read_text().splitlines()
    if len(preds) != len(dev):
        raise SystemExit(f"{pred}: {len(preds)} predictions for {len(dev)} questions in {spider / 'dev.json'}")
    present = {c["db_id"] for c in dev if (spider / "database" / c["db_id"] / f"{c['db_id']}.sqlite").is_file()}
    missing = sorted({c["db_id"] for c in dev} - present)
    kept = [(c, p) for c, p in zip(dev, preds) if c["db_id"] in present]
    suite = fresh(out / "spider_dev")
    (suite / "database").mkdir()
    for db_id in sorted(present):
        (suite / "database" / db_id).symlink_to((spider / "database" / db_id).resolve())
    (suite / "dev.json").write_text(json.dumps([c for c, _ in kept], indent=1))
    tables = [t for t in json.loads((spider / "tables.json").read_text()) if t["db_id"] in present]
    (suite / "tables.json").write_text(json.dumps(tables))
    (suite / "sqleval.toml").write_text('[suite]\nname = "spider_dev"\nlayout = "spider"\ntables = "tables.json"\n')
    isolated = fresh(out / "spider_dev_in_process")  # the same questions, SQLite in the grading process
    for name in ("database", "dev.json", "tables.json"):
        (isolated / name).symlink_to(suite / name)
    (isolated / "sqleval.toml").write_text((suite / "sqleval.toml").read_text().replace("spider_dev", "spider_dev_in_process")
                                           + '[limits]\nisolation = "auto"\n')
    gold = out / "dev_gold.sql"
    gold.write_text("".join(f"{' '.join(c['query'].split())}\t{c['db_id']}\n" for c, _ in kept))
    pred_file = out / "pred.sql"
    pred_file.write_text("".join(p + "\n" for _, p in kept))
    return suite, gold, pred_file, len(kept), missing


#: pytest as ``python -c``, printing on its last stderr line its own CPU seconds (user + system)
#: and its children's (the engine process): the split of a run's CPU between the two processes
SPLIT = ("import atexit, resource, runpy, sys; "
         "u = lambda w: (lambda r: r.ru_utime + r.ru_stime)(resource.getrusage(w)); "
         "atexit.register(lambda: print('cpu-split', u(resource.RUSAGE_SELF), u(resource.RUSAGE_CHILDREN), "
         "file=sys.stderr)); "
         "sys.argv = ['pytest', *sys.argv[1:]]; runpy.run_module('pytest', run_name='__main__', alter_sys=True)")


def split_cmd(*args: str) -> list[str]:
    """``pytest_cmd`` through ``SPLIT``."""
    return [pytest_cmd()[0], "-c", SPLIT, *args]


def cpu_split(proc: subprocess.CompletedProcess[str]) -> tuple[float, float] | None:
    """(the grading process's CPU seconds, its children's: the engine process) from ``SPLIT``'s line."""
    for line in reversed(proc.stderr.splitlines()):
        if line.startswith("cpu-split "):
            own, children = line.split()[1:3]
            return float(own), float(children)
    return None


def verdict_fields(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Per case what must not move when work moves between processes: the status, the error
    class, our record of Spider's and BIRD's verdicts, and the exact-match evidence."""
    out = {}
    for r in records:
        side = r.get("sidebyside") or (r.get("compare") or {}).get("sidebyside") or {}
        structure = (r.get("layers") or {}).get("structure") or {}
        out[r["case_id"]] = (r["status"], r.get("error_class"), side.get("spider"), side.get("bird"),
                             r.get("exact_match"), r.get("no_values_exact_match"), r.get("normalized_match"),
                             structure.get("distance"))
    return out


def timed(cmd: list[str], cwd: Path, env: dict[str, str] | None = None,
          code: Path | None = None) -> tuple[float, float, subprocess.CompletedProcess[str]]:
    """Wall and CPU seconds (user + system of the process and its children) of one command;
    with ``code``, the plugin imported from that checkout instead of this one."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    if code is None:
        wall, proc = run(cmd, cwd=cwd, env=env)
    else:
        full_env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTHONDONTWRITEBYTECODE")}
        full_env["PYTHONPATH"] = str(code)
        start = time.perf_counter()
        proc = subprocess.run(cmd, cwd=str(cwd), env=full_env, capture_output=True, text=True, timeout=900)
        wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), proc


def official_accuracy(proc: subprocess.CompletedProcess[str]) -> float:
    if proc.returncode != 0:
        raise RuntimeError("the official evaluator failed: " + (proc.stdout + proc.stderr)[-2000:])
    lines = [ln.split() for ln in proc.stdout.splitlines() if ln.startswith("execution")]
    return float(lines[-1][-1])


def spider_verdict(record: dict[str, Any]) -> bool | None:
    """Our record of Spider's verdict: ``sidebyside`` (no comparison of ours), else the comparison's."""
    side = record.get("sidebyside") or (record.get("compare") or {}).get("sidebyside") or {}
    value = side.get("spider")
    return None if value is None else bool(value)


def agreement(official: list[bool], records: list[dict[str, Any]]) -> dict[str, Any]:
    by_index = {int(r["case_id"]): r for r in records}
    spider_same = spider_none = strict_same = 0
    spider_differ, strict_differ = [], []
    for i, verdict in enumerate(official):
        r = by_index[i]
        ours = spider_verdict(r)
        if ours is None:
            spider_none += 1
        elif ours == verdict:
            spider_same += 1
        else:
            spider_differ.append(i)
        if (r["status"] == "passed") == verdict:
            strict_same += 1
        else:
            strict_differ.append(i)
    return {"n": len(official), "official_right": sum(official), "spider_same": spider_same,
            "spider_none": spider_none, "spider_differ": spider_differ, "strict_same": strict_same,
            "strict_differ": len(strict_differ), "strict_statuses": _statuses(records, strict_differ)}


def _statuses(records: list[dict[str, Any]], indices: list[int]) -> dict[str, int]:
    by_index = {int(r["case_id"]): r["status"] for r in records}
    out: dict[str, int] = {}
    for i in indices:
        out[by_index[i]] = out.get(by_index[i], 0) + 1
    return out


def sqlglot_build() -> str:
    """sqlglot's version, and whether its mypyc-compiled build (sqlglotc, the ``fast`` extra) is loaded."""
    import sqlglot
    import sqlglot.expressions.core as core
    return f"{sqlglot.__version__} ({'compiled' if not core.__file__.endswith('.py') else 'pure Python'})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--spider", type=Path, required=True, help="Spider folder: dev.json, tables.json, database/")
    ap.add_argument("--pred", type=Path, required=True, help="one predicted SQL per line, dev.json order")
    ap.add_argument("--official", type=Path, required=True, help="a checkout of taoyds/test-suite-sql-eval")
    ap.add_argument("--official-python", default=sys.executable, help="a Python with nltk, sqlparse and tqdm")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--baseline-code", type=Path, default=None, metavar="DIR",
                    help="also run ours from this checkout (an earlier commit), serial cold and warm, in turn")
    ap.add_argument("--isolation-ab", action="store_true",
                    help="also run ours with SQLite in the grading process ([limits] isolation = \"auto\")")
    ap.add_argument("--no-xdist", action="store_true", help="leave out the -n 2 run (the serial targets only)")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results" / "spider_real.json")
    args = ap.parse_args()
    report = Report()
    fresh(WORK)
    suite, gold, pred, n, missing = prepare(args.spider.resolve(), args.pred.resolve(), WORK)
    left_out = f"; left out (database file absent): {', '.join(missing)}" if missing else ""
    print(f"== real Spider dev: {n} questions{left_out}; sqlglot {sqlglot_build()} ({load()})", flush=True)
    nltk_data = WORK / "nltk_data"
    subprocess.run([args.official_python, "-c", PUNKT, str(nltk_data)], check=True)
    official_cmd = [args.official_python, str(args.official.resolve() / "evaluation.py"), "--gold", str(gold),
                    "--pred", str(pred), "--db", str(suite / "database"), "--table", str(suite / "tables.json"),
                    "--etype", "exec"]
    official_env = {"NLTK_DATA": str(nltk_data)}
    cache, results = WORK / "cache", WORK / "results"
    common = [str(suite), f"--sqleval-backend=predictions:{pred}", f"--sqleval-cache-dir={cache}",
              f"--sqleval-results={results}", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "--tb=no", "-rN",
              "--no-header"]
    kinds: dict[str, list[float]] = {"official": [], "serial, cold": [], "serial, warm (gold cached)": [],
                                     "-n 2, cold": [], "serial, cold, isolation = auto": [],
                                     "serial, warm, isolation = auto": [],
                                     "baseline code: serial, cold": [], "baseline code: serial, warm": []}
    in_process_common = [str(WORK / "spider_dev_in_process"), *common[1:]]
    in_process_common[2] = f"--sqleval-cache-dir={WORK / 'cache-in-process'}"
    cpu: dict[str, list[float]] = {k: [] for k in kinds}
    split: dict[str, list[tuple[float, float] | None]] = {k: [] for k in kinds}  # (grading, engine) CPU
    fields: dict[str, dict[str, Any]] = {}  # run kind -> its last run's verdict fields per case
    loads, accuracy, records = [], 0.0, []
    for _ in range(args.repeat):
        loads.append(os.getloadavg()[0])
        wall, used, proc = timed(official_cmd, args.official.resolve(), official_env)
        accuracy = official_accuracy(proc)
        kinds["official"].append(wall)
        cpu["official"].append(used)
        print(f"  official: {wall:.2f} s wall, {used:.2f} s CPU ({load()})", flush=True)
        for name, args_of, cold in (("serial, cold", common, True), ("serial, warm (gold cached)", common, False),
                                    ("-n 2, cold", [*common, "-n", "2"], True),
                                    ("serial, cold, isolation = auto", in_process_common, True),
                                    ("serial, warm, isolation = auto", in_process_common, False),
                                    ("baseline code: serial, cold", common, True),
                                    ("baseline code: serial, warm", common, False)):
            if (not args.isolation_ab and "isolation" in name) or (args.baseline_code is None and "baseline" in name) \
                    or (args.no_xdist and "-n 2" in name):
                continue
            if cold:
                fresh(cache)
                fresh(WORK / "cache-in-process")
            wall, used, proc = timed(split_cmd(*args_of), WORK, code=args.baseline_code if "baseline" in name else None)
            check(proc)
            kinds[name].append(wall)
            cpu[name].append(used)
            split[name].append(cpu_split(proc))
            fields[name] = verdict_fields(read_records(results))
            parts = split[name][-1]
            shown = f" (grading process {parts[0]:.2f} s, engine process {parts[1]:.2f} s)" if parts else ""
            print(f"  {name}: {wall:.2f} s wall, {used:.2f} s CPU{shown} ({load()})", flush=True)
            if name.startswith("serial, warm"):
                records = read_records(results)
    at_load = f"1-min load at each turn: {', '.join(f'{x:.1f}' for x in loads)}"
    base, base_cpu = median(kinds["official"]), median(cpu["official"])
    report.add("spider-real", f"{n} questions: official evaluation.py --etype exec", base, "s", samples=kinds["official"],
               note=f"execution accuracy {accuracy:.3f}; CPU {base_cpu:.2f} s; {at_load}")
    targets = {"serial, cold": 1.3, "serial, warm (gold cached)": 1.0}
    for name, samples in kinds.items():
        if name == "official" or not samples:
            continue
        value, used = median(samples), median(cpu[name])
        target = targets.get(name)
        parts = [p for p in split[name] if p is not None]
        where = (f"; grading process {median([p[0] for p in parts]):.2f} s, engine process "
                 f"{median([p[1] for p in parts]):.2f} s (medians)" if parts else "")
        report.add("spider-real", f"{n} questions: ours {name}", value, "s", baseline=base,
                   baseline_name="official", samples=samples,
                   target=f"<= {target}x the official" if target else None,
                   met=value <= target * base if target else None,
                   note=f"CPU {used:.2f} s = {used / base_cpu:.2f}x the official's CPU{where}")
    same: dict[str, Any] = {}
    for a, b in (("serial, cold", "serial, warm (gold cached)"), ("serial, cold", "baseline code: serial, cold"),
                 ("serial, warm (gold cached)", "baseline code: serial, warm")):
        if a in fields and b in fields:
            differ = sorted(k for k in fields[a] if fields[a][k] != fields[b].get(k))
            same[f"{a} = {b}"] = {"same": len(fields[a]) - len(differ), "of": len(fields[a]), "differ": differ[:20]}
            report.add("spider-real", f"verdicts: {a} = {b}", len(fields[a]) - len(differ), "",
                       note=f"of {len(fields[a])} cases: status, error class, Spider's and BIRD's verdicts, "
                            f"exact match (differ: {differ[:20]})")
    verdicts = json.loads(subprocess.run([args.official_python, "-c", VERDICTS, str(args.official.resolve()), str(gold),
                                          str(pred), str(suite / "database")], env={**os.environ, **official_env},
                                         capture_output=True, text=True, check=True).stdout)
    agree = agreement(verdicts, records)
    report.add("spider-real", "agreement: our record of Spider's verdict = the official's", agree["spider_same"], "",
               note=f"of {n} ({agree['spider_none']} with no Spider verdict of ours; differ on case(s) "
                    f"{agree['spider_differ'][:20]}); the official scores {agree['official_right']} right")
    report.add("spider-real", "agreement: our strict verdict (passed) = the official's", agree["strict_same"], "",
               note=f"of {n}; the {agree['strict_differ']} that differ are ours {agree['strict_statuses']}")
    report.extra.update({"sqlglot": sqlglot_build(), "questions": n, "left_out_databases": missing, "loads": loads, "cpu_s": cpu,
                         "cpu_split_s": split, "same_verdicts": same, "agreement": agree})
    report.save(args.out)


if __name__ == "__main__":
    main()
