"""``python -m pytest_sqleval reproduce [REPORT_DIR]``: regrade the cases behind a committed
``report/ablation.md`` from their cached generations, on the pinned database, and say which
of its numbers no longer come out the same (seed 002: "make reproduce regenerates every
number in the report from the tag, on the pinned snapshot").

No model is asked anything: each row is regraded by the backend its ``ablation.json``
names for replay (:func:`pytest_sqleval.reports.ablation.provenance`), which is
``predictions:`` of the file the configuration wrote (``runs/<config>/predictions.jsonl``,
every generation with its calls, tokens, cost and latency) or ``gold``. A row with nothing
to replay cannot be reproduced and says so. The regraded table, JSON and plot are written to
``--out`` (default ``REPORT_DIR/reproduced``) and compared with the committed ones: every
number of every row, the histogram and the ingredient prices, each suite's database content
hash, and then the markdown line by line. Exit 0 when all agree, 1 naming each difference,
2 on bad input."""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Sequence

from ..core import CaseRecord, UsageError

COMPARED = ("rows", "layer_baseline", "ingredients")  # the parts of ablation.json that hold the report's numbers
_PARAM = re.compile(r"\[[^\[\]]*\]$")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pytest_sqleval reproduce",
        description="Regrade a report's cases from their cached generations (no model call) and compare every number.")
    parser.add_argument("report", nargs="?", default="report", help="the folder holding ablation.md and ablation.json "
                        "(default: report)")
    parser.add_argument("--out", default=None, help="where the regraded table goes (default: REPORT/reproduced)")
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    report = Path(args.report)
    committed = _read_report(report)
    prov = committed["provenance"]
    rootdir = (report / prov["rootdir"]).resolve()
    out = Path(args.out) if args.out else report / "reproduced"
    if prov.get("judge_decided"):
        print("not reproducible without a model: an LLM judge decided verdicts of this report (--sqleval-judge=decide)")
        return 1
    unreplayable = sorted(c for c, entry in prov["configs"].items() if not entry.get("replay"))
    if unreplayable:
        print("not reproducible: " + ", ".join(unreplayable) + " left no cached generations to regrade (no "
              "predictions file and not gold), so their rows cannot be checked without calling their backends")
        return 1
    records = _regrade(prov, rootdir)
    from ..reports.ablation import write_ablation
    from .warehouse.course import COURSE_SECTIONS
    paths = write_ablation(records, out, sources=committed.get("sources") or [], rootdir=rootdir,
                           sections=COURSE_SECTIONS)
    fresh = json.loads(paths["json"].read_text(encoding="utf-8"))
    differences = compare(committed, fresh)
    if not differences:
        differences = _markdown_differences(report / "ablation.md", paths["markdown"], measured_latency(committed))
    where = f"{paths['markdown']}" + (f" and {paths['plot']}" if "plot" in paths else "")
    if differences:
        print(f"{report / 'ablation.md'} does not reproduce ({len(differences)} difference(s); regraded: {where}):")
        for line in differences:
            print(f"  {line}")
        return 1
    print(f"reproduced: every number of {report / 'ablation.md'} ({len(fresh['rows'])} rows, {len(records)} cases) "
          f"from cached generations on the pinned database, no model called; regraded: {where}")
    for config in measured_latency(committed):
        print(f"  not compared: the mean latency of {config}, which its backend did not report (the run timed it)")
    return 0


def _read_report(report: Path) -> dict[str, Any]:
    path = report / "ablation.json"
    if not path.is_file():
        raise UsageError(f"{path}: no such file. Fix: give the folder a run wrote its ablation into "
                         "(--sqleval-ablation-dir, default report)")
    try:
        doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))  # a dict: checked below
    except ValueError as exc:
        raise UsageError(f"{path}: not valid JSON ({exc}). Fix: restore it from version control, or write it again "
                         "with a run of the ablation") from None
    prov = doc.get("provenance") if isinstance(doc, dict) else None
    if not isinstance(prov, dict) or not isinstance(prov.get("configs"), dict) or not all(
            isinstance(e, dict) and isinstance(e.get("nodeids"), list) for e in prov["configs"].values()):
        raise UsageError(f"{path}: it does not say where its numbers came from (no usable 'provenance': written "
                         "by an older version, or edited). Fix: run the ablation again, or rebuild it with "
                         "`python -m pytest_sqleval report sqleval-results --out REPORT`")
    return doc


def _regrade(prov: dict[str, Any], rootdir: Path) -> list[CaseRecord]:
    """One pytest run over the union of the rows' cases with every row's replay backend;
    of its records, those of the report's (case, row) pairs."""
    wanted = {(_case_node(n), config) for config, entry in prov["configs"].items() for n in entry["nodeids"] if n}
    nodes = sorted({node for node, _ in wanted})
    specs = [entry["replay"] for entry in prov["configs"].values()]
    with tempfile.TemporaryDirectory(prefix="sqleval-reproduce-") as tmp:
        results = Path(tmp) / "results"
        cmd = [sys.executable, "-m", "pytest", *nodes, "-q", "-p", "no:cacheprovider", "--sqleval-no-cache",
               f"--sqleval-backend={','.join(specs)}", f"--sqleval-results={results}",
               f"--sqleval-ablation-dir={Path(tmp) / 'ablation'}",
               *[str(a) for a in prov.get("grading_args") or []]]
        env = {**os.environ, "SQLEVAL_RUNS_DIR": str(Path(tmp) / "runs")}  # the replay writes nothing beside the report
        proc = subprocess.run(cmd, cwd=rootdir, capture_output=True, text=True, env=env)
        path = results / "results.jsonl"
        if proc.returncode not in (0, 1) or not path.is_file():
            lines = (proc.stdout + proc.stderr).strip().splitlines()
            why = [line for line in lines if line.startswith(("ERROR", "error:"))] or lines[-5:]
            raise UsageError(f"regrading in {rootdir} failed (pytest exit {proc.returncode}): {' '.join(why)} -- run it "
                             "from the checkout the report was made in, with its suites, databases and runs/ folder")
        from ..reports.table import read_records
        _, records = read_records(path)
    return [r for r in records if (_case_node(r.nodeid), r.backend) in wanted]


def _case_node(nodeid: str) -> str:
    """A case's node id without its ``[backend]`` part: the same item whichever backends run."""
    return _PARAM.sub("", nodeid)


def compare(committed: dict[str, Any], fresh: dict[str, Any]) -> list[str]:
    """Each number (and label) of the report that the regrade gives differently, named."""
    out: list[str] = []
    old = {part: _keyed(committed.get(part)) for part in COMPARED}
    new = {part: _keyed(fresh.get(part)) for part in COMPARED}
    for config in measured_latency(committed):  # a wall clock, not a number a replay can give again
        for rows in (old["rows"], new["rows"]):
            if isinstance(rows, dict) and isinstance(rows.get(config), dict):
                rows[config] = {k: v for k, v in rows[config].items() if k != "mean_latency_ms"}
    for part in COMPARED:
        _diff(old[part], new[part], part, out)
    old_hashes = (committed.get("provenance") or {}).get("content_hashes") or {}
    new_hashes = (fresh.get("provenance") or {}).get("content_hashes") or {}
    for suite, digest in sorted(old_hashes.items()):
        if new_hashes.get(suite) != digest:
            out.append(f"suite {suite}: database content hash {digest[:16]} in the report, "
                       f"{str(new_hashes.get(suite))[:16]} now (not the pinned snapshot)")
    return out


def measured_latency(doc: dict[str, Any]) -> list[str]:
    """Rows whose backend did not report its latency: the report's figure is the run's own timing."""
    configs = (doc.get("provenance") or {}).get("configs") or {}
    return sorted(c for c, entry in configs.items() if entry.get("latency_reported") is False)


def _keyed(value: Any) -> Any:
    """Rows and ingredient steps by their name rather than their position."""
    if isinstance(value, list) and value and all(isinstance(v, dict) and "config" in v for v in value):
        return {(f"{v['base']} → {v['config']}" if "base" in v else v["config"]): v for v in value}
    return value


def _diff(old: Any, new: Any, where: str, out: list[str]) -> None:
    if isinstance(old, dict) and isinstance(new, dict):
        for key in list(old) + [k for k in new if k not in old]:
            _diff(old.get(key), new.get(key), f"{where}.{key}" if where else str(key), out)
    elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for i, (a, b) in enumerate(zip(old, new)):
            _diff(a, b, f"{where}[{i}]", out)
    elif not _same(old, new):
        out.append(f"{where}: {_show(old)} in the report, {_show(new)} reproduced")


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool) and not isinstance(b, bool):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    return bool(a == b)


def _show(v: Any) -> str:
    """A value as the message names it: enough digits that two different numbers never read the same."""
    if v is None:
        return "absent"
    if isinstance(v, float):
        return f"{v:.12g}"
    return json.dumps(v) if isinstance(v, (list, dict, str)) else str(v)


def _markdown_differences(committed: Path, fresh: Path, measured: list[str]) -> list[str]:
    """The numbers agree: any other difference is in the committed markdown itself (edited by
    hand?). The latency cell of a row whose latency the run timed is left out, as in :func:`compare`."""
    if not committed.is_file():
        return [f"{committed}: missing"]
    old, new = (_without_timed_latency(path.read_text(encoding="utf-8").splitlines(), measured)
                for path in (committed, fresh))
    out = [f"{committed.name} line {i}: {a!r} in the report, {b!r} reproduced"
           for i, (a, b) in enumerate(zip(old, new), 1) if a != b]
    if len(old) != len(new):
        out.append(f"{committed.name}: {len(old)} lines in the report, {len(new)} reproduced")
    return out


def _without_timed_latency(lines: list[str], measured: list[str]) -> list[str]:
    """The table's rows of ``measured`` configurations with their mean latency cell blanked."""
    header = next((line.split(" | ") for line in lines if line.startswith("| config | components |")), None)
    if not measured or header is None or "mean latency (ms)" not in header:
        return lines
    col = header.index("mean latency (ms)")
    out = []
    for line in lines:
        cells = line.split(" | ")
        if any(line.startswith(f"| **{c}** |") for c in measured) and len(cells) == len(header):
            cells[col] = "(timed)"
        out.append(" | ".join(cells))
    return out
