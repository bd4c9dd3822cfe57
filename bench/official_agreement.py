"""Case by case: does the Spider verdict we record equal what Spider's official evaluator
(test-suite-sql-eval, ``evaluation.py --etype exec``, its defaults) says?

    python bench/official_agreement.py --official DIR [--official-python PY] [--databases 20 --per-database 50]
    python bench/official_agreement.py --official DIR [--official-python PY] --suite SPIDER_DIR --pred FILE [FILE ...]

On the Spider-shaped bench data (``spider_bench.build``) plus the table of crafted
predictions of ``tests/core/grading/test_official_rewrites.py`` (``value`` inside identifiers and
strings, a real column named ``value``, spaced operators, ``YEAR(CURDATE())``), ours runs
as a user runs it (pytest, the spider layout) and the official evaluator runs on each case
alone (its ``evaluate`` on a one-line gold and prediction file, imported once in a process
of ``--official-python``, a Python with nltk, sqlparse and tqdm; never copied here), so
each case has both verdicts. Its parser's Punkt model is the untrained stand-in
``spider_bench.punkt_stand_in`` describes, written in that process.

With ``--suite`` (a Spider dev folder: ``dev.json``, ``tables.json``, ``database/``, and a
``sqleval.toml`` with ``layout = "spider"``) and one or more published predictions files,
each file is reported on its own: agreement, the cases with no Spider verdict of ours, and
our strict verdict's passes, tie-only passes and undecidable cases. Nothing is downloaded:
the data and the files are paths.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _util import pytest_cmd, read_records, run  # noqa: E402

WORK = Path(os.environ.get("SQLEVAL_BENCH_WORK", "/tmp/sqleval-bench")) / "official-agreement"

#: run by --official-python: per case, the official ``evaluate`` on one gold and one prediction
DRIVER = r"""
import contextlib, io, json, os, sys, tempfile
checkout, cases_file, db_dir, nltk_data = sys.argv[1:5]
from nltk.tokenize.punkt import PunktParameters, save_punkt_params
english = os.path.join(nltk_data, "tokenizers", "punkt_tab", "english")
os.makedirs(os.path.dirname(english), exist_ok=True)
import nltk
nltk.data.path.insert(0, nltk_data)
save_punkt_params(PunktParameters(), english)
os.chdir(checkout)
sys.path.insert(0, checkout)
import evaluation
out = []
tmp = tempfile.mkdtemp()
for case in json.load(open(cases_file)):
    gold, pred = os.path.join(tmp, "gold.sql"), os.path.join(tmp, "pred.sql")
    open(gold, "w").write(f"{case['gold']}\t{case['db_id']}\n")
    open(pred, "w").write(case["pred"] + "\n")
    said = io.StringIO()
    try:
        with contextlib.redirect_stdout(said):
            evaluation.evaluate(gold, pred, db_dir, "exec", None, False, False, False)
        lines = [ln.split() for ln in said.getvalue().splitlines() if ln.startswith("execution")]
        out.append(float(lines[-1][-1]) == 1.0 if lines else None)
    except BaseException as exc:  # the official script stops (a gold its parser or SQLite rejects)
        out.append(f"{type(exc).__name__}: {exc}"[:200])
print(json.dumps(out))
"""


def build(root: Path, n_db: int, per_db: int) -> tuple[Path, Path, list[dict]]:
    """The bench's Spider-shaped suite plus one database of crafted cases; its cases."""
    import spider_bench
    from tests.core.grading.test_official_rewrites import CRAFTED, DB
    suite, pred_file = spider_bench.build(root, n_db, per_db)
    crafted = suite / "database" / "crafted" / "crafted.sqlite"
    crafted.parent.mkdir(parents=True)
    con = sqlite3.connect(crafted)
    con.executescript(DB)
    con.close()
    dev = json.loads((suite / "dev.json").read_text())
    preds = pred_file.read_text().splitlines()
    gold_spaced = ("SELECT name FROM singer WHERE country ! = 'US'", "SELECT name FROM singer WHERE country != 'US'")
    for gold, pred, *_ in [*CRAFTED, gold_spaced]:  # and a gold that parses only as Spider's evaluator rewrites it
        dev.append({"db_id": "crafted", "question": f"(crafted) {pred[:40]}", "query": gold})
        preds.append(pred)
    (suite / "dev.json").write_text(json.dumps(dev, indent=1))
    tables = json.loads((suite / "tables.json").read_text()) + [{"db_id": "crafted"}]
    (suite / "tables.json").write_text(json.dumps(tables))
    pred_file.write_text("\n".join(preds) + "\n")
    cases = [{"db_id": c["db_id"], "gold": c["query"], "pred": p} for c, p in zip(dev, preds)]
    return suite, pred_file, cases


def ours(suite: Path, pred_file: Path) -> list[dict]:
    """Our records, in question order."""
    results = WORK / "results"
    _, proc = run(pytest_cmd(str(suite), f"--sqleval-backend=predictions:{pred_file}",
                             f"--sqleval-cache-dir={WORK / 'cache'}", f"--sqleval-results={results}", "-q",
                             "-p", "no:cacheprovider", "-p", "no:randomly", "--tb=no", "-rN", "--no-header"), cwd=WORK)
    if proc.returncode not in (0, 1):
        raise SystemExit(proc.stdout[-2000:] + proc.stderr[-2000:])
    return sorted(read_records(results), key=lambda r: int(r["case_id"]))


def spider_verdicts(records: list[dict]) -> list[bool | None]:
    """Spider's verdict as we record it, per case."""
    from pytest_sqleval.reports.sidebyside import peer_verdicts
    return [(peer_verdicts(r) or {}).get("spider") for r in records]


def strict_figures(records: list[dict]) -> str:
    """Our own verdict on the same file: passes, tie-only passes, undecidable, ungraded."""
    status = [r.get("status") for r in records]
    return (f"strict: {status.count('passed')} passed ({sum(bool(r.get('tie_only')) for r in records)} tie-only), "
            f"{status.count('failed')} failed, {status.count('undecidable')} undecidable, "
            f"{status.count('error')} not graded")


def official(checkout: Path, python: str, suite: Path, cases: list[dict]) -> list[bool | None | str]:
    cases_file = WORK / "cases.json"
    cases_file.write_text(json.dumps(cases))
    proc = subprocess.run([python, "-c", DRIVER, str(checkout.resolve()), str(cases_file), str(suite / "database"),
                           str(WORK / "nltk_data")], capture_output=True, text=True, timeout=3000)
    if proc.returncode != 0:
        raise SystemExit(f"the official evaluator did not run: {proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--official", type=Path, required=True, metavar="DIR", help="a checkout of test-suite-sql-eval")
    ap.add_argument("--official-python", default=sys.executable,
                    help="a Python with nltk, sqlparse and tqdm (the official evaluator's own needs)")
    ap.add_argument("--databases", type=int, default=20)
    ap.add_argument("--per-database", type=int, default=50)
    ap.add_argument("--suite", type=Path, default=None, metavar="DIR",
                    help="instead of the bench's data: a Spider folder (dev.json, database/, sqleval.toml) ...")
    ap.add_argument("--pred", type=Path, nargs="+", default=None, metavar="FILE",
                    help="... and its predictions files, one SQL per line; each is reported on its own")
    args = ap.parse_args()
    if args.suite is None:
        sys.exit(agree(args, *build(WORK / "spider", args.databases, args.per_database)))
    dev = json.loads((args.suite / "dev.json").read_text())
    failed = 0
    for pred_file in args.pred:
        print(f"== {pred_file.name}")
        cases = [{"db_id": c["db_id"], "gold": c["query"], "pred": p.partition("\t")[0].strip()}
                 for c, p in zip(dev, pred_file.read_text().splitlines())]
        failed += agree(args, args.suite.resolve(), pred_file.resolve(), cases)
    sys.exit(1 if failed else 0)


def agree(args: argparse.Namespace, suite: Path, pred_file: Path, cases: list[dict]) -> int:
    """One predictions file: our Spider verdict against the official one, case by case; 1 if any differs."""
    WORK.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(WORK / "cache", ignore_errors=True)
    shutil.rmtree(WORK / "results", ignore_errors=True)
    t = time.perf_counter()
    records = ours(suite, pred_file)
    mine = spider_verdicts(records)
    t_ours = time.perf_counter() - t
    t = time.perf_counter()
    theirs = official(args.official, args.official_python, suite, cases)
    t_official = time.perf_counter() - t
    differ = [(i, c, m, o) for i, (c, m, o) in enumerate(zip(cases, mine, theirs)) if m != o]
    crafted = [i for i, c in enumerate(cases) if c["db_id"] == "crafted"]
    print(f"{len(cases)} cases ({len(crafted)} crafted): Spider's verdict as we record it equals the official "
          f"evaluator's on {len(cases) - len(differ)}; differs on {len(differ)} "
          f"(ours {t_ours:.1f} s as a pytest run, the official case by case {t_official:.1f} s)")
    print(f"official passes {sum(o is True for o in theirs)}, ours records {sum(m is True for m in mine)} Spider passes; "
          f"no Spider verdict of ours on {sum(m is None for m in mine)}; {strict_figures(records)}")
    for i, c, m, o in differ:
        print(f"  case {i} ({c['db_id']}): ours {m}, official {o}\n    gold: {c['gold']}\n    pred: {c['pred']}")
    if crafted:
        print("crafted cases (official verdict):")
    for i in crafted:
        print(f"  {theirs[i]!s:5} ours {mine[i]!s:5}  {cases[i]['pred']}")
    return 1 if differ else 0


if __name__ == "__main__":
    main()
