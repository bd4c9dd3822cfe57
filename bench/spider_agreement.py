"""Case-by-case agreement with Spider's official evaluator on real, published prediction files.

    python bench/spider_agreement.py --spider DIR --official CHECKOUT [--official-python PY] PRED.sql ...

``DIR`` is a Spider dev layout (``dev.json``, ``dev_gold.sql``, ``tables.json``,
``database/<db_id>/<db_id>.sqlite`` and a ``sqleval.toml`` with ``layout = "spider"``);
``CHECKOUT`` a checkout of test-suite-sql-eval, run by ``PY`` (an interpreter with nltk and
sqlparse; its tokenizer model is the untrained stand-in of ``spider_bench.punkt_stand_in``).
Each predictions file holds one SQL per line, in question order, as the official script
reads it. Nothing is downloaded: the data, the files and the checkout are paths.

Why it exists: a figure on data the project built itself says little about agreement with
the official evaluator on what people actually submit. The official script prints only
totals, so its ``evaluate`` runs unchanged in a child process with ``eval_exec_match``
wrapped to note each case's return value; pytest-sqleval grades the same file, and each
record's official-compatible (Spider) verdict is set beside the official one.

Per file it reports: cases, official accuracy, cases where both gave a verdict and they
agree / disagree (with the first disagreements), cases we leave without an
official-compatible verdict (and why), tie-only passes of the strict verdict, and cases
the strict verdict leaves undecidable.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _util import check, fresh, pytest_cmd, read_records, run  # noqa: E402

DRIVER = textwrap.dedent("""
    import json, os, sys
    checkout, gold, pred, db, out = sys.argv[1:6]
    sys.path.insert(0, checkout)
    os.chdir(checkout)
    import evaluation
    verdicts = []
    unwrapped = evaluation.eval_exec_match
    def noted(*args, **kwargs):
        verdict = unwrapped(*args, **kwargs)
        verdicts.append(int(bool(verdict)))
        return verdict
    evaluation.eval_exec_match = noted
    evaluation.evaluate(gold, pred, db, "exec", None, False, False, False)
    with open(out, "w") as f:
        json.dump(verdicts, f)
""")


def official_verdicts(checkout: Path, python: str, root: Path, pred: Path, work: Path, nltk_data: Path,
                      timeout: float) -> list[int]:
    """The official evaluator's verdict on each case of ``pred``, in order (1 right, 0 wrong)."""
    out = work / f"official-{pred.stem}.json"
    driver = work / "official_driver.py"
    driver.write_text(DRIVER)
    proc = subprocess.run([python, str(driver), str(checkout), str(root / "dev_gold.sql"), str(pred),
                           str(root / "database"), str(out)], env={"NLTK_DATA": str(nltk_data), "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"the official evaluator failed on {pred}: {proc.stderr[-2000:]}")
    return json.loads(out.read_text())


def ours(root: Path, pred: Path, work: Path, extra: list[str]) -> list[dict[str, Any]]:
    """pytest-sqleval's records for ``pred``, in question order."""
    results = work / f"results-{pred.stem}"
    _, proc = run(pytest_cmd(str(root), f"--sqleval-backend=predictions:{pred}", f"--sqleval-results={results}",
                             f"--sqleval-cache-dir={work / 'cache'}", "-q", "-p", "no:cacheprovider", "--tb=no",
                             "-rN", "--no-header", *extra), cwd=work, timeout=3600)
    check(proc)
    return sorted(read_records(results), key=lambda r: int(r["case_id"]))  # the spider layout's ids are indexes


def spider_verdict(r: dict[str, Any]) -> bool | None:
    from pytest_sqleval.reports.sidebyside import peer_verdicts
    v = peer_verdicts(r)
    return None if v is None else v.get("spider")


def compare_file(name: str, official: list[int], records: list[dict[str, Any]]) -> dict[str, Any]:
    """One file's figures."""
    if len(official) != len(records):
        raise RuntimeError(f"{name}: {len(official)} official verdicts, {len(records)} records")
    agree, differ, none = 0, [], Counter()
    tie_only = undecidable = 0
    for i, (o, r) in enumerate(zip(official, records)):
        v = spider_verdict(r)
        if v is None:
            none[r.get("failure_kind") or r.get("status") or "?"] += 1
        elif bool(v) == bool(o):
            agree += 1
        else:
            differ.append({"case": i, "case_id": r["case_id"], "official": o, "ours_official_compatible": v,
                           "strict": r.get("status"), "sql": r.get("generated_sql")})
        tie = (r.get("compare") or {}).get("tie_only") or (r.get("tie") or {}).get("tie_only")
        tie_only += bool(tie) and r.get("status") == "passed"
        undecidable += r.get("status") == "undecidable" or r.get("failure_kind") == "undecidable"
    return {"file": name, "cases": len(records), "official_passed": sum(official),
            "official_accuracy": round(sum(official) / len(official), 4), "agree": agree, "disagree": len(differ),
            "no_official_compatible_verdict": dict(none), "strict_passed": sum(r.get("status") == "passed" for r in records),
            "strict_tie_only_passes": tie_only, "strict_undecidable": undecidable, "first_disagreements": differ[:10]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spider", type=lambda s: Path(s).resolve(), required=True, metavar="DIR")
    ap.add_argument("--official", type=Path, required=True, metavar="CHECKOUT")
    ap.add_argument("--official-python", default=sys.executable, metavar="PY")
    ap.add_argument("--work", type=Path, default=Path("/tmp/sqleval-bench/spider-agreement"))
    ap.add_argument("--timeout", type=float, default=3600)
    ap.add_argument("--out", type=Path, default=None, help="write the figures as JSON here")
    ap.add_argument("preds", type=Path, nargs="+")
    args, extra = ap.parse_known_args()
    work = fresh(args.work)
    nltk_data = work / "nltk_data"
    subprocess.run([args.official_python, "-c", textwrap.dedent(f"""
        import sys; sys.path.insert(0, {str(Path(__file__).resolve().parent)!r})
        from spider_bench import punkt_stand_in; from pathlib import Path; punkt_stand_in(Path({str(nltk_data)!r}))""")],
                   check=True, timeout=120, env={"PYTHONPATH": "", "PATH": "/usr/bin:/bin"})
    figures = []
    for pred in (p.resolve() for p in args.preds):
        official = official_verdicts(args.official, args.official_python, args.spider, pred, work, nltk_data, args.timeout)
        figures.append(compare_file(pred.name, official, ours(args.spider, pred, work, extra)))
        f = figures[-1]
        print(f"{f['file']}: {f['cases']} cases; official {f['official_accuracy']:.1%}; agree {f['agree']}, disagree "
              f"{f['disagree']}, no official-compatible verdict {sum(f['no_official_compatible_verdict'].values())}; "
              f"strict passed {f['strict_passed']} (tie-only {f['strict_tie_only_passes']}), undecidable "
              f"{f['strict_undecidable']}", flush=True)
        for d in f["first_disagreements"]:
            print(f"    {d['case_id']}: official {d['official']}, ours {d['ours_official_compatible']}: {d['sql']}")
    total = {k: sum(f[k] for f in figures) for k in ("cases", "agree", "disagree", "official_passed", "strict_passed")}
    print(f"all files: {total}")
    if args.out:
        args.out.write_text(json.dumps({"files": figures, "total": total}, indent=1))


if __name__ == "__main__":
    main()
