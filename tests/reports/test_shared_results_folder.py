"""Two runs writing to one results folder never leave a broken results.jsonl or
summary.json: each file is whole, and both come from the same run."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import pytest

from tests.sqleval_helpers import sqleval_ini  # noqa: F401


# -- two runs sharing a results folder -------------------------------------------
SLOW_BACKEND = '''
import time

def generate(case):
    time.sleep(0.04)
    return case.gold_sql
'''


def _complete_jsonl(text: str) -> bool:
    try:
        return all(isinstance(json.loads(line), dict) for line in text.splitlines())
    except ValueError:
        return False


def test_two_runs_sharing_a_results_folder_never_leave_a_broken_file(pytester: pytest.Pytester,
                                                                     make_suite: Callable[..., Path]) -> None:
    """Two runs (two CI jobs on one workspace) write the same results folder at once. Every
    look at results.jsonl and summary.json, during the runs and after, finds complete
    JSON; when both are done, both files come from the same run (the last to finish)."""
    import os
    import subprocess
    import sys
    import threading
    import time
    from tests.sqleval_helpers import LEAN, gen_cases
    (pytester.path / "slow.py").write_text(SLOW_BACKEND)
    make_suite(gen_cases(40), folder="suite_a")
    make_suite([{**c, "question": c["question"] + " (the other job)" * 8} for c in gen_cases(30)], folder="suite_b")
    shared = pytester.path / "shared"
    procs = [subprocess.Popen([sys.executable, "-m", "pytest", f"suite_{x}", "-q", "-p", "no:cacheprovider", *LEAN,
                               "-o", "pythonpath=.", "--sqleval-backend=slow:generate", "--sqleval-concurrency=1",
                               f"--sqleval-results={shared}", f"--sqleval-cache-dir=cache_{x}"],
                              cwd=pytester.path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=dict(os.environ))
             for x in "ab"]
    broken: list[str] = []
    looks = 0

    def watch() -> None:
        nonlocal looks
        while any(p.poll() is None for p in procs):
            for name in ("results.jsonl", "summary.json"):
                try:
                    text = (shared / name).read_text()
                except OSError:
                    continue
                looks += 1
                ok = _complete_jsonl(text) if name.endswith("l") else _complete_jsonl(text.replace("\n", " "))
                if not ok:
                    broken.append(f"{name}: {text[-200:]!r}")
            time.sleep(0.002)

    watcher = threading.Thread(target=watch)
    watcher.start()
    outs = [p.communicate(timeout=120)[0].decode() for p in procs]
    watcher.join()
    assert [p.returncode for p in procs] == [0, 0], outs
    assert not broken, broken[:3]
    assert looks > 10
    records = [json.loads(line) for line in (shared / "results.jsonl").read_text().splitlines()]
    summary = json.loads((shared / "summary.json").read_text())
    run_ids = {r["run_metadata"]["run_id"] for r in records}
    assert run_ids == {summary["run"]["run_id"]}  # last writer wins, both files from one run
    assert len(records) == summary["cases_expected"] and len(records) in (30, 40)
    assert not list(shared.glob(".*.tmp")) and not list(shared.glob(".results.*.partial.jsonl"))

