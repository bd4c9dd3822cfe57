"""A case of several SQL golds is sent ahead like a case of one: while the case before it
is graded, every one of its golds is sent to the engine (each executed once, stored, and
on a rerun none executed), and once they are stored its prediction is sent ahead too."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest

FIVE = [f"SELECT id{', name' * (k > 0)}{', region' * (k > 1)} FROM customers WHERE id <= {2 + k % 3}" for k in range(5)]

CONFTEST = '''
import json, os
from pytest_sqleval.core.engines.host import EngineHost
real = EngineHost.submit

def logged(self, op, payload, **kw):
    shown = payload  # a gold not analysed yet is analysed and run in the engine process: logged as a gold
    if op == "analysed_gold":
        shown = {"key": "analysed:" + payload["gold_sql"], "sql": payload["gold_sql"]}
    if op in ("gold", "grade", "analysed_gold"):
        with open(os.environ["SUBMIT_LOG"], "a") as fh:
            fh.write(json.dumps({"op": "gold" if op == "analysed_gold" else op, "ahead": kw.get("ahead", False),
                                 "key": shown.get("key"), "sql": shown.get("sql"),
                                 "alternatives": len(shown.get("alternatives") or ())}) + "\\n")
    return real(self, op, payload, **kw)

EngineHost.submit = logged
'''


def _run(pytester: pytest.Pytester, log: Path) -> list[dict[str, Any]]:
    if log.exists():
        log.unlink()
    result = pytester.runpytest_subprocess("suite", "--sqleval-backend=predictions:preds.jsonl",
                                           "-p", "no:cacheprovider", "-p", "no:randomly")
    result.assert_outcomes(passed=3)
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_every_gold_of_a_case_is_sent_ahead_executed_once_and_not_on_a_rerun(
        pytester: pytest.Pytester, make_suite: Callable[..., Path]) -> None:
    make_suite([{"id": "a", "question": "?", "gold_sql": "SELECT count(*) FROM customers"},
                {"id": "b", "question": "?", "gold_sql": FIVE},
                {"id": "c", "question": "?", "gold_sql": "SELECT max(id) FROM customers"}])
    (pytester.path / "preds.jsonl").write_text("".join(json.dumps(p) + "\n" for p in [
        {"id": "a", "sql": "SELECT count(*) FROM customers"}, {"id": "b", "sql": FIVE[3]},
        {"id": "c", "sql": "SELECT max(id) FROM customers"}]))
    pytester.makeconftest(CONFTEST)
    log = pytester.path / "submits.log"
    pytester._monkeypatch.setenv("SUBMIT_LOG", str(log))

    first = _run(pytester, log)
    golds = [e for e in first if e["op"] == "gold"]
    five = [e for e in golds if e["sql"] in FIVE]
    assert sorted(e["sql"] for e in five) == sorted(FIVE)  # each of the five golds asked for once
    assert len({e["key"] for e in golds}) == len(golds) == 7  # and no gold twice: 1 + 5 + 1
    assert all(e["ahead"] for e in five)  # all sent while case a was graded
    graded_b = [e for e in first if e["op"] == "grade" and e["alternatives"] == 4]
    assert len(graded_b) == 1  # its prediction executed once, compared with each gold there

    rerun = _run(pytester, log)
    assert [e for e in rerun if e["op"] == "gold"] == []  # every gold stored: none executed again
    graded_b = [e for e in rerun if e["op"] == "grade" and e["alternatives"] == 4]
    assert len(graded_b) == 1 and graded_b[0]["ahead"]  # its golds stored: its prediction sent ahead too
