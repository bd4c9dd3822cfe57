"""The HTML report without a browser: written with every run, self-contained, bounded in
size at 10,000 cases, its reproduce command runs the one case, and ``view`` rebuilds and
serves it. (tests/reports/test_viewer_browser.py drives the page in Chromium.)"""
from __future__ import annotations

import copy
import json
import re
import shlex
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any, Callable

import pytest

from pytest_sqleval.cli import main as cli_main
from pytest_sqleval.reports.html import PREVIEW_ROWS, PREVIEW_ROWS_OVER_BUDGET, render_report
from tests.sqleval_helpers import NAIVE_SQL, sqleval_ini  # noqa: F401  (autouse fixture)

_DATA = re.compile(r"const D = (\{.*?\});\n", re.S)


def page_data(page: str) -> dict[str, Any]:
    return json.loads(_DATA.search(page).group(1))  # type: ignore[union-attr]


@pytest.fixture
def shop_run(pytester: pytest.Pytester, shop_suite: Path, write_predictions: Callable[..., Path]) -> Path:  # noqa: F811
    naive = write_predictions(NAIVE_SQL)
    result = pytester.runpytest("suite", f"--sqleval-backend=gold,predictions:{naive}", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=7, failed=5)
    result.stdout.fnmatch_lines(["*report: *sqleval-results*report.html*"])
    return pytester.path / "sqleval-results"


def test_every_run_writes_a_self_contained_report(shop_run: Path) -> None:
    page = (shop_run / "report.html").read_text(encoding="utf-8")
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)  # nothing fetched: no CDN, no link
    assert "<link" not in page and "<script src" not in page and "@import" not in page
    data = page_data(page)
    assert len(data["runs"]) == 12 and {r["backend"] for r in data["runs"]} == {"gold", "naive"}
    stale = next(r for r in data["runs"] if r["backend"] == "naive" and r["error_class"] == "stale_table")
    assert stale["advice"] == ["orders_old is deprecated: read orders, the live table the gold reads, instead"]
    assert "<h2>Error classes</h2>" in page and "<h2>Per suite and backend</h2>" in page


def test_the_reproduce_command_runs_that_one_case(shop_run: Path, pytester: pytest.Pytester) -> None:
    runs = page_data((shop_run / "report.html").read_text(encoding="utf-8"))["runs"]
    naive_q04 = next(r for r in runs if r["backend"] == "naive" and r["nodeid"].endswith("q04[naive]"))
    command = naive_q04["reproduce"]
    assert command.startswith("pytest suite/questions.jsonl::q04 --sqleval-backend=predictions:")
    args = shlex.split(command)[1:]
    result = pytester.runpytest(*args, "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*q04*wrong_metric*"])


def test_a_question_cannot_end_the_script_early() -> None:
    rec = _record(question="</script><script>alert(1)</script><!--")
    page = render_report([rec], None)
    assert page.count("</script>") == 1
    assert page_data(page)["cases"][0]["question"].startswith("</script>")


def test_ten_thousand_cases_stay_a_page_a_browser_opens() -> None:
    big = [[f"value {i} " + "x" * 300, i] for i in range(500)]
    records = []
    for i in range(10_000):
        rec = _record(case_id=f"q{i:05d}", question="How much? " * 40, status="failed" if i % 3 else "passed")
        rec["execution"]["preview"] = big
        rec["execution"]["rows"] = 123_456
        records.append(rec)
    page = render_report(records, None)  # its speed is bench/owncost_bench.py's, not a wall-clock assert here
    assert len(page.encode()) < 40_000_000, len(page)
    data = page_data(page)
    first = data["runs"][1]["preview"]  # a failure: served first
    assert first["shown"] == PREVIEW_ROWS and first["total"] == 123_456  # the page says "showing 20 of 123,456"
    assert all(len(v) < 300 for v in first["rows"][0] if isinstance(v, str))  # cells cut, the cut stated
    assert "truncated" in first["rows"][0][0]
    cut = [r for r in data["runs"] if r["layers"] is None]
    assert len(cut) == data["limits"]["detail_left_out"] > 0
    assert all(r["preview"]["shown"] == PREVIEW_ROWS_OVER_BUDGET for r in cut)
    assert all(r["layers"] is None for r in data["runs"] if r["status"] == "passed")  # failures kept first


def test_view_rebuilds_the_report_and_serves_it(shop_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (shop_run / "report.html").unlink()
    assert cli_main(["view", str(shop_run), "--no-open"]) == 0
    assert (shop_run / "report.html").is_file() and "report:" in capsys.readouterr().out
    proc = subprocess.Popen([sys.executable, "-m", "pytest_sqleval", "view", str(shop_run), "--serve"],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(2)]
        url = re.search(r"http://127\.0\.0\.1:\d+/report\.html", "".join(lines)).group(0)  # type: ignore[union-attr]
        with urllib.request.urlopen(url, timeout=10) as resp:
            assert resp.status == 200 and b"pytest-sqleval report" in resp.read()
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_view_names_a_missing_results_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["view", str(tmp_path / "nowhere"), "--no-open"]) == 2
    err = capsys.readouterr().err
    assert "no such results file" in err and "Traceback" not in err


def _record(*, case_id: str = "q01", question: str = "How many?", status: str = "failed") -> dict[str, Any]:
    rec: dict[str, Any] = {
        "case_id": case_id, "suite": "s", "nodeid": f"s/questions.jsonl::{case_id}", "question": question,
        "gold_sql": "SELECT count(*) FROM t", "generated_sql": "SELECT count(*) FROM t_old", "backend": "b",
        "backend_spec": "predictions:p.jsonl", "backend_metadata": {}, "status": status,
        "error_class": "stale_table" if status == "failed" else None, "failure_kind": None, "tags": ["x"],
        "difficulty": "easy", "explanation": "reads deprecated table t_old", "confidence": 0.9,
        "execution": {"columns": ["n"], "preview": [[1]], "rows": 1},
        "gold": {"columns": ["n"], "preview": [[1]], "rows": 1},
        "compare": {"reason": "equal", "missing_rows": [], "extra_rows": []},
        "layers": {"structure": {"clauses": {"from": {"match": False, "gold": ["t"], "predicted": ["t_old"]}},
                                 "blob": "e" * 1500}},
    }
    return copy.deepcopy(rec)
