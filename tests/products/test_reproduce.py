"""The Lab study end to end on a small run (the mini suite, three agent configurations, a
scripted loopback model): the report answers the handout's checkpoints 3.2 (a1's error-class
histogram) and 3.3 (accuracy bought per added context token, per semantic-layer ingredient)
with the numbers the records imply; and ``python -m pytest_sqleval reproduce`` regrades the
report from its cached generations without calling the model, agrees with an untouched run,
and names each number that an edited generation changes."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_sqleval.cli import main as cli
from tests.llm_server import Reply, RecordedRequest, ScriptedLLMServer
from tests.sqleval_helpers import INI
from tests.reports.test_ablation import scripted_model


def sized_model(req: RecordedRequest) -> Reply:
    """The ablation test's scripted model, billing the prompt by its size (characters / 4), so
    the layer's ingredients cost what they add to the prompt."""
    reply = scripted_model(req)
    reply.prompt_tokens = len(req.prompt_text) // 4
    return reply


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (path / "results.jsonl").read_text().splitlines()]


def _implied(records: list[dict[str, Any]], config: str) -> tuple[float, float]:
    """(execution accuracy, mean prompt tokens) of one configuration, straight from its records."""
    mine = [r for r in records if r["backend"] == config]
    graded = [r for r in mine if r["status"] in ("passed", "failed")]
    tokens = [r["backend_metadata"]["prompt_tokens"] for r in mine if "n_llm_calls" in r["backend_metadata"]]
    return sum(r["status"] == "passed" for r in graded) / len(graded), sum(tokens) / len(tokens)


def test_the_report_answers_the_checkpoints_and_reproduces_without_a_model(
        pytester: pytest.Pytester, llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """One story, about 15 s on 2 cores: it needs three pytest processes (the agent run, whose
    litellm clients must not outlive it, and the two regrades reproduce starts)."""
    from tests.products.agent.test_agent import build_mini_suite
    pytester.makeini(INI)
    monkeypatch.setenv("SQLEVAL_LLM_TIMEOUT", "10")
    monkeypatch.delenv("SQLEVAL_RUNS_DIR", raising=False)
    suite = build_mini_suite(pytester.path)
    llm_server.respond_with(sized_model)
    # in a process of its own: litellm keeps its HTTP clients per process, bound to the event loop of
    # the first in-process run that made them
    result = pytester.runpytest_subprocess(str(suite), "-p", "no:cacheprovider", "--sqleval-backend=a1,a2,a3,gold",
                                           "--sqleval-model=scripted", f"--sqleval-api-base={llm_server.api_base}")
    result.assert_outcomes(passed=13, failed=3)
    calls = llm_server.calls
    report = pytester.path / "report"
    doc = json.loads((report / "ablation.json").read_text())
    md = (report / "ablation.md").read_text()
    records = _records(pytester.path / "sqleval-results")

    # checkpoint 3.2: a1's failing cases per error class (r1 reads the frozen revenue table, r4 averages every order)
    a1_classes = {c: sum(r["error_class"] == c for r in records if r["backend"] == "a1" and r["status"] == "failed")
                  for c in doc["layer_baseline"]["error_classes"]}
    assert doc["layer_baseline"] == {"config": "a1", "failed": 2, "graded": 4, "error_classes": a1_classes}
    assert a1_classes["stale_table"] == 1 and a1_classes["wrong_metric"] == 1 and sum(a1_classes.values()) == 2
    assert "## Error classes before the semantic layer (a1)" in md
    assert "| stale-table | 1 | ████████████████████ |" in md and "| wrong-join | 0 |  |" in md

    # checkpoint 3.3: per ingredient, accuracy delta / mean added prompt tokens, as the records imply
    steps = {s["label"]: s for s in doc["ingredients"]}
    assert list(steps) == ["descriptions + join paths", "anti-patterns"]
    for label, (x, y) in {"descriptions + join paths": ("a1", "a2"), "anti-patterns": ("a2", "a3")}.items():
        (acc_x, tok_x), (acc_y, tok_y) = _implied(records, x), _implied(records, y)
        st = steps[label]
        assert (st["base"], st["config"]) == (x, y)
        assert st["accuracy_delta"] == pytest.approx(acc_y - acc_x) == 0.25
        assert st["added_prompt_tokens"] == pytest.approx(tok_y - tok_x) and tok_y > tok_x  # the layer costs tokens
        assert st["pp_per_1k_tokens"] == pytest.approx(100 * (acc_y - acc_x) / (tok_y - tok_x) * 1000)
    best = max(steps.values(), key=lambda s: s["pp_per_1k_tokens"])
    assert "## Accuracy per added context token, per semantic-layer ingredient" in md
    assert f"Most accuracy per added token: **{best['label']}** ({best['base']} → {best['config']})" in md

    # reproduce: an untouched run agrees, and nothing reaches the model
    assert cli(["reproduce", str(report)]) == 0
    out = capsys.readouterr().out
    assert "reproduced: every number of" in out and "no model called" in out
    assert "not compared: the mean latency of gold, which its backend did not report" in out  # gold replays too
    assert llm_server.calls == calls
    again = (report / "reproduced" / "ablation.md").read_text().splitlines()
    assert [line for line in again if not line.startswith("| **gold** |")] == [  # gold's latency is the run's clock
        line for line in md.splitlines() if not line.startswith("| **gold** |")] and len(again) == len(md.splitlines())
    assert (report / "reproduced" / "ablation.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    # an edited generation: a2's answer to r4 now averages every order, as a1's did
    pred = pytester.path / "runs" / "a2" / "predictions.jsonl"
    lines = [json.loads(line) for line in pred.read_text().splitlines()]
    for line in lines:
        if line["qid"] == "r4":
            line["sql"] = "SELECT avg(total_usd) FROM sales.orders"
    pred.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert cli(["reproduce", str(report)]) == 1
    out = capsys.readouterr().out
    assert "does not reproduce" in out
    assert "rows.a2.execution_accuracy: 0.75 in the report, 0.5 reproduced" in out
    assert "rows.a2.classes.wrong_metric: 0 in the report, 1 reproduced" in out
    assert "ingredients.a1 → a2.accuracy_delta: 0.25 in the report, 0 reproduced" in out
    assert "ingredients.a2 → a3.accuracy_delta: 0.25 in the report, 0.5 reproduced" in out
    assert "rows.a1." not in out and "rows.a3." not in out and "rows.gold" not in out  # only what the edit changed
    assert llm_server.calls == calls


def test_reproduce_refuses_a_folder_without_a_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["reproduce", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'ablation.json'}: no such file. Fix:" in err and "Traceback" not in err
    (tmp_path / "ablation.json").write_text('{"rows": []}')
    assert cli(["reproduce", str(tmp_path)]) == 2
    assert "does not say where its numbers came from" in capsys.readouterr().err


@pytest.mark.parametrize(("provenance", "named"), [
    ({"configs": {"mine": {"replay": None, "nodeids": ["s/q.jsonl::q1"]}}},
     "not reproducible: mine left no cached generations to regrade"),
    ({"configs": {"a1": {"replay": "predictions:runs/a1/predictions.jsonl", "nodeids": []}}, "judge_decided": True},
     "not reproducible without a model: an LLM judge decided verdicts"),
])
def test_a_report_that_needs_a_model_is_not_reproduced(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        provenance: dict[str, Any], named: str) -> None:
    (tmp_path / "ablation.json").write_text(json.dumps({"rows": [], "provenance": {"rootdir": ".", **provenance}}))
    assert cli(["reproduce", str(tmp_path)]) == 1
    assert named in capsys.readouterr().out


def test_a_hand_edit_of_the_markdown_is_named_and_a_timed_latency_is_not(tmp_path: Path) -> None:
    from pytest_sqleval.products.reproduce import _markdown_differences
    head = ("| config | components | exec acc (%) | mean latency (ms) | Pareto |\n|---|---|---:|---:|:---:|\n")
    committed, fresh = tmp_path / "ablation.md", tmp_path / "fresh.md"
    fresh.write_text(head + "| **a1** | x | 50.0 | 327 |  |\n| **gold** | – | 100.0 | 0 |  |\n")
    committed.write_text(head + "| **a1** | x | 50.0 | 327 |  |\n| **gold** | – | 100.0 | 11 |  |\n")
    assert _markdown_differences(committed, fresh, ["gold"]) == []  # gold's latency was timed by its run
    committed.write_text(head + "| **a1** | x | 75.0 | 327 |  |\n| **gold** | – | 100.0 | 11 |  |\n")
    (diff,) = _markdown_differences(committed, fresh, ["gold"])
    assert diff.startswith("ablation.md line 3: '| **a1** | x | 75.0 | 327 |  |' in the report")
