"""Acceptance on a database this project did not build: TPC-H from DuckDB's own dbgen
(sf 0.01, written by DuckDB 1.5, opened read-only by 2.x), gold = the official queries.

Equivalent rewrites must pass and result-changing mutants must fail, both through the
library API and through the plugin on a suite folder."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_sqleval.core.api import Grader

HERE = Path(__file__).resolve().parent
CASES = json.loads((HERE / "cases.json").read_text())


@pytest.fixture(scope="session")
def tpch(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[int, str]]:
    """Build (or reuse from .sqleval-cache/tpch) the database and the 22 queries."""
    proc = subprocess.run([sys.executable, str(HERE / "make_tpch.py")], capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"make_tpch.py failed (it needs the package index once):\n{proc.stderr[-2000:]}"
    db = Path(proc.stdout.strip().splitlines()[-1])
    queries_file = db.with_name(db.name.replace(".duckdb", ".queries.json"))
    queries = {q["query_nr"]: q["query"] for q in json.loads(queries_file.read_text())["queries"]}
    assert len(queries) == 22
    return db, queries


@pytest.fixture(scope="module")
def grader(tpch: tuple[Path, dict[int, str]]):
    g = Grader(tpch[0])
    yield g
    g.close()


@pytest.mark.parametrize("case", [c for c in CASES if c["kind"] == "rewrite"], ids=lambda c: c["name"])
def test_equivalent_rewrite_passes(grader: Grader, tpch: tuple[Path, dict[int, str]], case: dict) -> None:
    v = grader.compare(case["sql"], tpch[1][case["query_nr"]])
    assert v.passed, f"{case['why']}: {v.explanation}"


@pytest.mark.parametrize("case", [c for c in CASES if c["kind"] == "mutant"], ids=lambda c: c["name"])
def test_result_changing_mutant_fails(grader: Grader, tpch: tuple[Path, dict[int, str]], case: dict) -> None:
    v = grader.compare(case["sql"], tpch[1][case["query_nr"]])
    assert not v.passed, f"mutant passed: {case['why']}"
    assert v.error_class is not None and v.explanation


def _suite(root: Path, db: Path, queries: dict[int, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "sqleval.toml").write_text(
        f'[suite]\nname = "tpch"\nquestions = "questions.jsonl"\ndatabase = "{db}"\ndialect = "duckdb"\n')
    lines = [json.dumps({"id": f"q{n:02d}", "question": f"TPC-H query {n}", "gold_sql": sql,
                         "expected_shape": "table", "tags": ["tpch"]}) for n, sql in sorted(queries.items())]
    (root / "questions.jsonl").write_text("\n".join(lines) + "\n")
    return root


def test_plugin_grades_tpch_gold_rewrites_and_mutants(pytester: pytest.Pytester,
                                                      tpch: tuple[Path, dict[int, str]]) -> None:
    db, queries = tpch
    before = Grader(db)
    hash_before = before.content_hash
    before.close()
    suite = _suite(pytester.path / "tpch", db, queries)
    first = {}
    for c in CASES:
        first.setdefault((c["kind"], c["query_nr"]), c)
    for kind in ("rewrite", "mutant"):
        (pytester.path / f"{kind}s.jsonl").write_text("".join(
            json.dumps({"id": f"q{n:02d}", "sql": c["sql"]}) + "\n" for (k, n), c in sorted(first.items()) if k == kind))
    result = pytester.runpytest_subprocess(
        str(suite), "-p", "no:cacheprovider", "-q",
        "--sqleval-backend=gold,predictions:rewrites.jsonl,predictions:mutants.jsonl")
    summary = json.loads((pytester.path / "sqleval-results" / "summary.json").read_text())
    backends = summary["backends"]
    # q17's answer on this small instance is one NULL (no part qualifies): a gold of NULLs only
    # cannot tell a right answer from a wrong one, so its case is an error, not graded
    assert backends["gold"]["passed"] == 21 and backends["gold"]["errors"] == 1, result.stdout.str()[-3000:]
    for kind, name in (("rewrite", "rewrites"), ("mutant", "mutants")):
        q17 = int((kind, 17) in first)  # a q17 prediction meets the ungraded gold: an error; none: no prediction
        predicted = sum(1 for k, n in first if k == kind) - q17
        counts = backends[name]
        assert counts["errors"] == q17
        # a query without a prediction fails, counted apart
        assert counts["no_prediction"] == 22 - predicted - q17
        if kind == "rewrite":
            assert counts["passed"] == predicted and counts["failed"] == counts["no_prediction"]
        else:
            assert counts["passed"] == 0 and counts["failed"] == 22 - q17
    assert summary["suites"]["tpch"]["content_hash"] == hash_before
    after = Grader(db)
    assert after.content_hash == hash_before
    after.close()
