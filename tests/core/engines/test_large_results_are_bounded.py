"""A large result costs bounded memory and a bounded report: a result over an eighth of the
memory limit is refused, huge values are truncated in records and failure texts, and the
engine process keeps no copy of the gold answers it computed."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest

from tests.sqleval_helpers import LEAN, read_results, sqleval_ini  # noqa: F401


# -- memory and report size ----------------------------------------------------------
ENGINE_PEAK = r'''
import io, json, resource, sys
from pathlib import Path
import duckdb
from pytest_sqleval.core.engines.host import _Server
from pytest_sqleval.core.grading.engine_side import HANDLER
from pytest_sqleval.core.grading.compare import CompareSpec
root = Path(sys.argv[1])
duckdb.connect(str(root / "t.duckdb")).close()
srv = _Server(str(root / "t.duckdb"), {"timeout_s": 60.0, "memory_limit": "256MB", "threads": 1}, str(root), HANDLER,
              (str(root / "gold"),)).handler
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
big = "SELECT i, repeat('x', 990) || i{} AS s FROM range(300000) r(i)"  # ~300 MB of distinct text
gold = srv.gold({"key": "k", "sql": big.format(""), "spec": CompareSpec().to_wire()}, io.BytesIO())
pred = srv.grade({"sql": big.format(" || 'y'"), "gold_key": "k", "spec": CompareSpec().to_wire()}, io.BytesIO())
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"growth_mb": (peak - base) / 1024, "gold": gold, "pred": pred["execution"]}, default=str))
'''


def test_a_result_over_an_eighth_of_memory_limit_is_refused_and_the_engine_stays_small(tmp_path: Path) -> None:
    """memory_limit 256MB and a 300 MB result (under max_bytes): the engine process used to
    peak ~1.5 GB above its start (Arrow batches, the gold's two runs, the comparison's
    encoding); the result cap is now max_bytes and at most memory_limit / 8."""
    out = subprocess.run([sys.executable, "-c", ENGINE_PEAK, str(tmp_path)], capture_output=True, text=True,
                         timeout=120, cwd=Path(__file__).resolve().parents[2])
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["growth_mb"] < 400, got["growth_mb"]
    for err in (got["gold"]["error"]["error"], got["pred"]["error"]):
        assert err["category"] == "resource_exceeded"
        assert "32000000 bytes (memory_limit 256MB / 8)" in err["message"]


HUGE = 10 * 1024 * 1024


def test_huge_values_are_truncated_in_records_and_failure_texts(
        pytester: pytest.Pytester, make_suite: Callable[..., Path]) -> None:
    """Five rows of 10 MB strings a side: the record and the terminal stay small, and each
    cut value says how long it was."""
    make_suite([{"id": "big", "question": "Five long strings",
                 "gold_sql": f"SELECT i, repeat('x', {HUGE}) || i AS s FROM range(5) t(i)"}])
    (pytester.path / "preds.jsonl").write_text(json.dumps(
        {"id": "big", "sql": f"SELECT i, repeat('y', {HUGE}) || i AS s FROM range(5) t(i)"}) + "\n")
    result = pytester.runpytest_subprocess("--sqleval-backend=predictions:preds.jsonl", *LEAN, timeout=120)
    result.assert_outcomes(failed=1)
    text = "\n".join(result.outlines)
    assert len(text) < 50_000, len(text)
    assert f"({HUGE + 1:,} characters, truncated)" in text
    size = (pytester.path / "sqleval-results" / "results.jsonl").stat().st_size
    assert size < 100_000, size
    [record] = read_results(pytester.path)
    missing = record["compare"]["missing_rows"]
    assert len(missing) == 5 and missing[0][1].endswith(f"… ({HUGE + 1:,} characters, truncated)")
    assert len(missing[0][1]) < 300


GOLDS_HELD = r'''
import io, json, sys
from pathlib import Path
import duckdb
from pytest_sqleval.core.engines.host import _Server
from pytest_sqleval.core.grading.engine_side import HANDLER
from pytest_sqleval.core.grading.compare import CompareSpec


def anon_mb():
    for line in open("/proc/self/status"):
        if line.startswith("RssAnon"):
            return int(line.split()[1]) / 1024


root = Path(sys.argv[1])
duckdb.connect(str(root / "t.duckdb")).close()
srv = _Server(str(root / "t.duckdb"), {"timeout_s": 60.0, "memory_limit": "2GB", "threads": 1}, str(root), HANDLER,
              (str(root / "gold"),)).handler
before = anon_mb()
for k in range(3):  # three gold answers of ~100 MB each
    sql = f"SELECT i, repeat('x', 990) || i || '{k}' AS s FROM range(100000) r(i)"
    assert srv.gold({"key": f"k{k}", "sql": sql, "spec": CompareSpec().to_wire()}, io.BytesIO())["rows"] == 100000
print(json.dumps({"held_mb": anon_mb() - before}))
'''


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads RssAnon from /proc")
def test_the_engine_process_keeps_no_copy_of_the_gold_answers_it_computed(tmp_path: Path) -> None:
    """Fresh gold answers used to stay in the engine process (up to 65 of them, each up to
    the byte cap); they are read back memory-mapped from the gold cache instead."""
    out = subprocess.run([sys.executable, "-c", GOLDS_HELD, str(tmp_path)], capture_output=True, text=True,
                         timeout=120, cwd=Path(__file__).resolve().parents[2])
    assert out.returncode == 0, out.stderr[-2000:]
    held = json.loads(out.stdout.strip().splitlines()[-1])["held_mb"]
    assert held < 150, held  # was ~300 MB: every answer kept

