"""Held-out questions: a suite declares its held-out split (``[splits] held_out``) and its cases
opt in with ``"split"``; a typo is a collection error naming file, line and fix; the Vantage
suite holds 10 out; the ablation reports main against held-out accuracy per configuration and
flags a gap (a run of the offline mock model with a layer that embeds main-set answers)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_sqleval.core.cases import load_manifest, read_layout_cases, split_of
from pytest_sqleval.core.errors import BadInputError
from pytest_sqleval.reports.ablation import LEAKAGE_GAP, ablation_rows, render_markdown
from tests.sqleval_helpers import SHOP_CASES, sqleval_ini  # noqa: F401  (autouse fixture)

ROOT = Path(__file__).resolve().parents[3]
VANTAGE = ROOT / "cases" / "vantage"


def _held(cases: list[dict[str, Any]], *ids: str, split: str = "held_out") -> list[dict[str, Any]]:
    return [{**c, "split": split} if c["id"] in ids else c for c in cases]


def test_a_declared_split_is_read_and_the_rest_is_the_main_set(make_suite: Any) -> None:
    suite = make_suite(_held(SHOP_CASES, "q05", "q06"), manifest_extra='[splits]\nheld_out = "held_out"\n')
    manifest = load_manifest(suite / "sqleval.toml")
    assert manifest.held_out == "held_out"
    assert {c.id: split_of(c) for c in read_layout_cases(manifest)} == {
        "q01": "main", "q02": "main", "q03": "main", "q04": "main", "q05": "held_out", "q06": "held_out"}


@pytest.mark.parametrize(("extra", "problem", "line"), [
    ('[splits]\nheld_out = 3\n', "expected the name of the held-out split, got 3", 7),
    ('[splits]\nheld_out = "main"\n', "expected the name of the held-out split, got 'main'", 7),
    ('[splits]\nheldout = "x"\n', "unknown key in [splits] (did you mean 'held_out'?)", 7),
])
def test_a_bad_splits_section_names_line_and_fix(make_suite: Any, extra: str, problem: str, line: int) -> None:
    suite = make_suite(SHOP_CASES, manifest_extra=extra)
    with pytest.raises(BadInputError) as info:
        load_manifest(suite / "sqleval.toml")
    text = str(info.value)
    assert problem in text and f"sqleval.toml:{line}" in text and "fix:" in text, text


def test_a_case_in_an_undeclared_split_is_a_collection_error(pytester: pytest.Pytester, make_suite: Any) -> None:
    """A typo in a case's split would silently grade it as main: it stops collection instead."""
    make_suite(_held(SHOP_CASES, "q03", split="heldout"), manifest_extra='[splits]\nheld_out = "held_out"\n')
    result = pytester.runpytest("suite", "--sqleval-backend=gold", "-p", "no:cacheprovider")
    assert result.ret != 0
    out = result.stdout.str()
    assert "questions.jsonl:3" in out and "split 'heldout' is not a split of this suite" in out, out
    assert 'add [splits] held_out = "heldout"' in out and "Traceback" not in out


def test_held_out_cases_are_graded_like_any_other(pytester: pytest.Pytester, make_suite: Any) -> None:
    make_suite(_held(SHOP_CASES, "q06"), manifest_extra='[splits]\nheld_out = "held_out"\n')
    result = pytester.runpytest("suite", "--sqleval-backend=gold", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=6)
    result.stdout.fnmatch_lines(["    held out: main 100.0% (5/5) vs held-out 100.0% (1/1), gap +0.0 pp"])
    assert "LEAKAGE" not in result.stdout.str()
    plain = pytester.runpytest("suite", "--sqleval-backend=gold", "-p", "no:cacheprovider", "-k", "not q06")
    assert "held out:" not in plain.stdout.str()  # no held-out case ran: no line


def test_vantage_holds_out_ten_questions_on_the_same_warehouse() -> None:
    manifest = load_manifest(VANTAGE / "sqleval.toml")
    cases = read_layout_cases(manifest)
    held = [c for c in cases if split_of(c) == manifest.held_out]
    assert [c.id for c in held] == [f"q{i}" for i in range(51, 61)] and len(cases) == 60
    frozen = json.loads((VANTAGE / "gold_answers.json").read_text())
    assert set(frozen["answers"]) == {c.id for c in cases}  # validate checked and froze all 60
    traps = {t for c in held for t in c.tags}
    assert {"deprecated_trap", "fiscal_calendar", "fx", "soft_delete", "test_accounts", "trap_metric"} <= traps


def _rec(backend: str, qid: str, status: str, held: bool) -> dict[str, Any]:
    return {"nodeid": f"s/q.jsonl::{qid}[{backend}]", "case_id": qid, "backend": backend, "status": status,
            "error_class": "other" if status == "failed" else None, "backend_metadata": {},
            "case_metadata": {"split": "held_out"} if held else {}, "suite": "s"}


def test_the_gap_is_flagged_only_above_the_threshold() -> None:
    """Five main and five held-out cases: a gap of exactly 20 pp is not flagged, 40 pp is."""
    main = ["passed"] * 4 + ["failed"]
    records = [_rec("x", f"m{i}", s, False) for i, s in enumerate(main)]
    records += [_rec("x", f"h{i}", s, True) for i, s in enumerate(["passed"] * 3 + ["failed"] * 2)]
    records += [_rec("y", f"m{i}", s, False) for i, s in enumerate(main)]
    records += [_rec("y", f"h{i}", s, True) for i, s in enumerate(["passed"] * 2 + ["failed"] * 3)]
    records.append(_rec("y", "h9", "error", True))  # not graded: counts in neither set
    rows = {r.config: r for r in ablation_rows(records)}
    assert LEAKAGE_GAP == pytest.approx(0.2)
    assert (rows["x"].main_accuracy, rows["x"].held_out_accuracy, rows["x"].possible_leakage) == (0.8, 0.6, False)
    assert (rows["y"].held_out_graded, rows["y"].held_out_accuracy, rows["y"].possible_leakage) == (5, 0.4, True)
    md = render_markdown(list(rows.values()))
    assert "| y | 80.0 | 4 / 5 | 40.0 | 2 / 5 | +40.0 | **possible leakage** |" in md
    assert "| x | 80.0 | 4 / 5 | 60.0 | 3 / 5 | +20.0 |  |" in md
    no_split = render_markdown(ablation_rows([_rec("x", "m1", "passed", False)]))
    assert "held-out" not in no_split  # a suite without a held-out split keeps its table as it was


LEAKED = ("q01", "q32", "q36")  # main questions whose gold SQL the leaky layer embeds
HELD = ("q53", "q54", "q60")


def _leaky_suite(tmp: Path) -> Path:
    """cases/vantage with a semantic layer that quotes three main questions and their gold SQL
    (the leak the Lab's held-out check exists to catch), reading the same warehouse."""
    suite = tmp / "vantage"
    suite.mkdir()
    (suite / "questions.jsonl").write_text((VANTAGE / "questions.jsonl").read_text())
    manifest = (VANTAGE / "sqleval.toml").read_text().replace(
        'database = "vrg_snapshot_2025-11-30.duckdb"', f'database = "{VANTAGE / "vrg_snapshot_2025-11-30.duckdb"}"')
    (suite / "sqleval.toml").write_text(manifest)
    cases = {c["id"]: c for c in map(json.loads, (VANTAGE / "questions.jsonl").read_text().splitlines())}
    layer = (VANTAGE / "semantic_layer.yaml").read_text().rstrip("\n").split("\ncubes:\n", 1)
    leaks = "".join(
        f"  - name: leak_{qid}\n    sql_table: {table}\n"
        f"    description: {json.dumps('For ' + cases[qid]['question'] + ' use ' + cases[qid]['gold_sql'])}\n"
        for qid, table in zip(LEAKED, ("sales.customers", "hr.employees", "sales.stores")))
    (suite / "semantic_layer.yaml").write_text(layer[0] + "\ncubes:\n" + leaks + layer[1] + "\n")
    return suite


def test_a_leaky_layer_is_flagged_by_the_held_out_gap(tmp_path: Path) -> None:
    suite = _leaky_suite(tmp_path)
    results, report = tmp_path / "results", tmp_path / "report"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", str(suite), "-q", "-p", "no:cacheprovider", "-k", " or ".join(LEAKED + HELD),
         "--sqleval-backend=a1,a2", "--sqleval-model=mockllm/heuristic", "--sqleval-no-cache",
         f"--sqleval-results={results}", f"--sqleval-ablation-dir={report}"],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1), proc.stdout[-3000:] + proc.stderr[-3000:]
    rows = {r["config"]: r for r in json.loads((report / "ablation.json").read_text())["rows"]}
    a1, a2 = rows["a1"], rows["a2"]
    assert (a2["main_passed"], a2["main_graded"], a2["held_out_graded"]) == (3, 3, 3)  # it copied the leaked answers
    assert a2["possible_leakage"] and a2["held_out_gap"] > LEAKAGE_GAP
    assert not a1["possible_leakage"]  # without the layer, nothing leaks
    # the run's own summary says it, with the ablation's numbers and flag
    line = next(line for line in proc.stdout.splitlines() if line.startswith("backend a2"))
    held_line = proc.stdout.splitlines()[proc.stdout.splitlines().index(line) + 1]
    assert held_line.startswith("    held out: main 100.0% (3/3) vs held-out 0.0% (0/3), gap +100.0 pp | POSSIBLE LEAKAGE")
    a1_line = next(line for line in proc.stdout.splitlines() if line.startswith("    held out:") and line != held_line)
    assert "LEAKAGE" not in a1_line
    summary = json.loads((results / "summary.json").read_text())["backends"]
    assert summary["a2"]["held_out"]["possible_leakage"] and not summary["a1"]["held_out"]["possible_leakage"]
    md = (report / "ablation.md").read_text()
    assert "## Main set against held-out questions" in md and "**possible leakage**" in md
    assert "a layer written while watching the agent fail on the main set" in md
    out = subprocess.run([sys.executable, "-m", "pytest_sqleval", "report", str(results), "--out", str(tmp_path / "r2")],
                         cwd=ROOT, capture_output=True, text=True, timeout=120).stdout
    assert "POSSIBLE LEAKAGE" in next(line for line in out.splitlines() if line.strip().startswith("a2"))
