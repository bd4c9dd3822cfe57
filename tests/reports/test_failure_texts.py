"""Every failure text of the bundled suites agrees with its own verdict and says what to do:
the bundled predictions (Vantage's sample and naive ones, the shop's naive ones) are graded
as a user would run them, and each failing case's text is read as the user reads it."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_sqleval.core.grading.diagnostics import CONSISTENT, DIMENSIONS
from pytest_sqleval.reports.terminal import render_failure

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = {  # suite -> the prediction files shipped with it
    "cases/vantage": ["cases/vantage/sample_predictions.jsonl", "cases/vantage/predictions/naive.jsonl"],
    "cases/shop": ["cases/shop/predictions/naive.jsonl"],
}


@pytest.fixture(scope="module")
def failures(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for suite, files in BUNDLED.items():
        results = tmp_path_factory.mktemp("texts") / "results"
        spec = ",".join(f"predictions:{f}" for f in files)
        proc = subprocess.run([sys.executable, "-m", "pytest", suite, "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                               f"--sqleval-backend={spec}", f"--sqleval-results={results}"],
                              cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert proc.returncode in (0, 1), proc.stdout[-2000:] + proc.stderr[-2000:]
        with open(results / "results.jsonl", encoding="utf-8") as fh:
            out += [r for r in map(json.loads, fh) if r["status"] == "failed"]
    assert len(out) > 40  # every error class, several times over
    return out


def test_no_diagnosis_contradicts_the_error_class(failures: list[dict[str, Any]]) -> None:
    wrong = []
    for rec in failures:
        diag = rec["layers"].get("diagnostics") or {}
        allowed = CONSISTENT.get(rec["error_class"], DIMENSIONS)
        if diag.get("most_likely") is not None and diag["most_likely"] not in allowed:
            wrong.append((rec["case_id"], rec["backend"], rec["error_class"], diag["most_likely"]))
        text = render_failure(rec)
        for part in re.findall(r"most likely an? (\w+) error", text):
            if part not in allowed:
                wrong.append((rec["case_id"], rec["backend"], rec["error_class"], part))
    assert not wrong


def test_failure_texts_say_what_to_do(failures: list[dict[str, Any]]) -> None:
    seen = set()
    for rec in failures:
        text = render_failure(rec)
        what = [line for line in text.splitlines() if line.startswith("  what to do: ")]
        cls = rec["error_class"]
        seen.add(cls)
        if cls == "stale_table" and rec["suite"] == "vantage":  # its semantic layer maps each deprecated table
            assert what and all(re.search(r"is deprecated: read (\S+) instead \(the suite's replacement", w)
                                for w in what), text
            live = re.search(r"read (\S+) instead", what[0]).group(1)  # type: ignore[union-attr]
            assert live == REPLACEMENTS[rec["stale_tables"][0]]
        elif cls == "stale_table":  # no map: the live table the gold reads
            assert what and all(re.search(r"is deprecated: read (\S+), the live table the gold reads", w) for w in what), text
            live = re.search(r"read (\S+),", what[0]).group(1)  # type: ignore[union-attr]
            assert live.lower() in rec["gold_sql"].lower()
            assert all(t not in live for t in rec["stale_tables"])
        elif cls == "hallucinated_column":
            assert what and re.search(r"(does|do) not exist; the nearest existing \w+ by name: .+; the gold reads ",
                                      what[0]), text
            assert (" do not" in what[0]) == ("," in what[0].split(" not exist")[0])  # "a, b do not exist"
        elif cls == "wrong_join" and rec["compare"] and rec["compare"]["pred_rows"] != rec["compare"]["gold_rows"]:
            assert what and re.search(r"the join (gains|loses) [\d,]+ rows?", what[0]), text
    assert {"stale_table", "hallucinated_column", "wrong_join", "wrong_metric", "other"} <= seen


def test_failure_texts_read_as_english(failures: list[dict[str, Any]]) -> None:
    """Our own lines, that is: not the question, the SQL or the rows quoted in them."""
    for rec in failures:
        ours = [line for line in render_failure(rec).splitlines()
                if not line.startswith(("    ", "  question:", "  why:"))]
        assert not [line for line in ours if re.search(r"\ba [aeiou]", line)], ours


REPLACEMENTS = {d["table"]: d["use_instead"] for d in yaml.safe_load(
    (Path(__file__).resolve().parents[2] / "cases/vantage/semantic_layer.yaml").read_text())["deprecated_tables"]}


def test_a_suite_names_its_replacements_over_the_semantic_layer(tmp_path: Path) -> None:
    from pytest_sqleval.core.cases import load_manifest
    from pytest_sqleval.core.errors import BadInputError
    (tmp_path / "q.jsonl").write_text("")
    (tmp_path / "db.duckdb").write_bytes(b"")
    (tmp_path / "semantic_layer.yaml").write_text(
        "deprecated_tables:\n  - { table: legacy.orders, use_instead: orders.orders }\n"
        "  - { table: legacy.stores, use_instead: sales.stores }\n")
    manifest = tmp_path / "sqleval.toml"
    manifest.write_text('[suite]\nquestions = "q.jsonl"\ndatabase = "db.duckdb"\n'
                        'replacements = { "legacy.orders" = "orders.orders_v2" }\n')
    assert load_manifest(manifest).replacements == {"legacy.orders": "orders.orders_v2", "legacy.stores": "sales.stores"}
    manifest.write_text('[suite]\nquestions = "q.jsonl"\ndatabase = "db.duckdb"\nreplacements = ["legacy.orders"]\n')
    with pytest.raises(BadInputError) as info:
        load_manifest(manifest)
    assert "sqleval.toml:4" in str(info.value) and "replacements = {" in str(info.value)
