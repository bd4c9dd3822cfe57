"""The sink's per-record encoding: one encoder made once for the journal's lines and one for
the page's entries, not one per ``json.dumps`` call (seven a record for the page, one for the
line); the bytes are the same. No clock: speed is measured in bench/owncost_bench.py."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_sqleval.core.records import CaseRecord


def _record(i: int) -> CaseRecord:
    return CaseRecord(backend="gold", status="failed" if i % 3 else "passed", case_id=f"q{i}", suite="shop",
                      nodeid=f"suite/q.jsonl::q{i}", question="How many <orders>?", generated_sql="SELECT 1",
                      execution={"columns": ["n"], "preview": [[i], ["é"]], "rows": 2},
                      gold={"columns": ["n"], "preview": [[1]], "rows": 1},
                      compare={"match": False, "reason": "rows differ", "missing_rows": [[1]]},
                      layers={"parse": {"ok": True}, "structure": {"clauses": {"select": {"match": True}}}})


def test_no_encoder_is_made_per_record(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from pytest_sqleval.reports import html, sink
    made: list[int] = []
    init = json.JSONEncoder.__init__

    def counted(self: Any, *a: Any, **k: Any) -> None:
        made.append(1)
        init(self, *a, **k)
    monkeypatch.setattr(json.JSONEncoder, "__init__", counted)
    page = html.PageBuilder(tmp_path)
    lines = []
    for i in range(30):
        rec = _record(i)
        page.add(rec)
        lines.append(sink._record_line(rec.to_json_dict()))
    assert made == [], len(made)
    for i, line in enumerate(lines):  # the bytes json.dumps wrote
        assert line == (json.dumps(_record(i).to_json_dict(), default=str, sort_keys=True) + "\n").encode("ascii")
    monkeypatch.undo()
    assert page._entries[0][1].text == html._RunText.of(html._run(_record(0), tmp_path)).text
    assert "\\u003corders>" in page._entries[0][4] and "<" not in page._entries[0][4]
