"""The README Quickstart's main job, as a newcomer runs it: the bundled sample predictions
answer every Vantage question, so the run shows passes and failures only (no case error),
each failure lands in the class its line says it was written for, the gate still means
something, and the Quickstart paragraph's numbers are the ones the run prints."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "cases" / "vantage" / "sample_predictions.jsonl"
QUESTIONS = ROOT / "cases" / "vantage" / "questions.jsonl"
GATE = 0.35


@pytest.fixture(scope="module")
def quickstart(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("quickstart") / "sqleval-results"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "cases/vantage", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
         "--sqleval-backend=gold,predictions:cases/vantage/sample_predictions.jsonl",
         f"--sqleval-min-pass-rate={GATE}", f"--sqleval-results={out}"],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    records = [json.loads(line) for line in (out / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    return {"proc": proc, "records": records, "summary": summary}


def _lines(path: Path) -> dict[str, dict[str, Any]]:
    return {d.get("id"): d for d in map(json.loads, path.read_text(encoding="utf-8").splitlines())}


def test_every_question_has_a_hand_written_sample_line() -> None:
    samples, questions = _lines(SAMPLES), _lines(QUESTIONS)
    assert sorted(samples) == sorted(questions)  # the held-out q51-q60 included
    for cid, line in samples.items():
        assert {"sql", "source", "note", "intended_class"} <= set(line), cid
        assert "not model output" in line["source"] and line["note"], cid
    held_out = [samples[c] for c, q in questions.items() if q.get("split") == "held_out"]
    assert any(d["intended_class"] is None for d in held_out)  # some right, some wrong
    assert any(d["intended_class"] is not None for d in held_out)


def test_the_quickstart_shows_no_case_error_and_meets_the_gate(quickstart: dict[str, Any]) -> None:
    proc = quickstart["proc"]
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert [r["case_id"] for r in quickstart["records"] if r["status"] == "error"] == []
    assert " error" not in proc.stdout.splitlines()[-1]  # pytest's last line: "N failed, M passed in ..."
    backends = quickstart["summary"]["backends"]
    assert (backends["gold"]["passed"], backends["gold"]["cases"]) == (60, 60)
    sample = backends["sample_predictions"]
    assert sample["cases"] == 60 and sample["errors"] == 0 and sample["no_prediction"] == 0
    assert GATE <= sample["pass_rate"] < 1.0  # the gate is met, and not by a sample that is all right


def test_each_sample_lands_in_its_intended_class(quickstart: dict[str, Any]) -> None:
    samples = _lines(SAMPLES)
    got = {r["case_id"]: r["error_class"] if r["status"] == "failed" else r["status"]
           for r in quickstart["records"] if r["backend"] == "sample_predictions"}
    want = {cid: line["intended_class"] or "passed" for cid, line in samples.items()}
    assert got == want
    held_out = {r["case_id"] for r in quickstart["records"] if (r.get("case_metadata") or {}).get("split")}
    assert {want[c] for c in held_out} >= {"passed", "hallucinated_column", "stale_table", "wrong_metric",
                                          "wrong_join", "other"}  # every class among the held-out ten too


def test_the_quickstart_tutorial_says_what_the_run_prints(quickstart: dict[str, Any]) -> None:
    text = " ".join((ROOT / "docs" / "tutorial" / "first-run.md").read_text(encoding="utf-8").split())
    quick = text[text.index("## What the run does"):text.index("## Read one failure")]
    sample = quickstart["summary"]["backends"]["sample_predictions"]
    m = re.search(r"sample passes (\d+) of (\d+) \(a ([\d.]+) % pass rate", quick)
    assert m, "the Quickstart paragraph no longer states the sample's pass count"
    assert (int(m[1]), int(m[2])) == (sample["passed"], sample["cases"])
    assert float(m[3]) == round(100 * sample["pass_rate"], 1)
    m = re.search(r"(\d+) hallucinated columns, (\d+) stale tables .*?(\d+) wrong metrics, (\d+) wrong joins and "
                  r"(\d+) others", quick)
    assert m, "the Quickstart paragraph no longer counts the failures per class"
    assert dict(zip(("hallucinated_column", "stale_table", "wrong_metric", "wrong_join", "other"),
                    map(int, m.groups()))) == sample["error_classes"]
    assert f"The other {sample['failed']} fail on purpose" in quick and f"{sample['passed']} of the 60" in quick
