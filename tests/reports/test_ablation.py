"""The ablation table: its arithmetic on hand-made records, its inputs (results.jsonl and
pytest-json-report files), and one run of the five agent configurations against a
scripted loopback model, from which one command builds the table and the plot."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_sqleval.products.agent import CONFIGS, RAW_LLM
from pytest_sqleval.products.agent.backends import make_llm_backend, record_metadata
from pytest_sqleval.core.backends.base import BackendOptions
from pytest_sqleval.core.cases import BenchmarkCase
from pytest_sqleval.reports.ablation import ablation_rows, has_ablation, load_records, main, render_markdown
from pytest_sqleval.core.records import build_record
from tests.llm_server import Reply, RecordedRequest, ScriptedLLMServer
from tests.sqleval_helpers import INI


def rec(backend: str, qid: str, status: str, error_class: str | None = None, calls: int | None = 1,
        tokens: tuple[int, int] = (100, 10), latency: float = 50.0, cost: float | None = None) -> dict[str, Any]:
    """A record as a run writes it: an agent configuration's records carry its components and ablation step."""
    meta = record_metadata(CONFIGS[backend]) if backend in CONFIGS else {}
    if calls is not None:
        meta.update({"n_llm_calls": calls, "prompt_tokens": tokens[0], "completion_tokens": tokens[1],
                     "total_tokens": sum(tokens), "latency_ms": latency, "cost_usd": cost,
                     "model": "openai/m", "repair_rounds": calls - 1})
    return {"nodeid": f"s/q.jsonl::{qid}[{backend}]", "case_id": qid, "backend": backend, "status": status,
            "error_class": error_class, "backend_metadata": meta, "suite": "s"}


def test_rows_count_classes_means_and_the_pareto_frontier() -> None:
    records = [
        rec("a0", "q1", "failed", "hallucinated_column"), rec("a0", "q2", "failed", "stale_table"),
        rec("a1", "q1", "passed", calls=3, cost=0.01), rec("a1", "q2", "failed", "wrong_join", calls=1, cost=0.02),
        rec("a3", "q1", "passed", calls=2), rec("a3", "q2", "passed", calls=2),
        rec("a3-sc", "q1", "passed"), rec("a3-sc", "q2", "error", calls=None),
        rec("gold", "q1", "passed", calls=None), rec("gold", "q2", "passed", calls=None),
    ]
    rows = {r.config: r for r in ablation_rows(records)}
    assert list(rows) == ["a0", "a1", "a3", "a3-sc", "gold"]  # the ablation's order, then the rest
    a0, a1, a3, sc = rows["a0"], rows["a1"], rows["a3"], rows["a3-sc"]
    assert (a0.execution_accuracy, a0.classes["hallucinated_column"], a0.classes["stale_table"]) == (0.0, 1, 1)
    assert (a1.execution_accuracy, a1.mean_calls, a1.classes["wrong_join"], a1.total_cost_usd) == (0.5, 2.0, 1, 0.03)
    assert (sc.execution_accuracy, sc.errors, sc.graded, sc.mean_calls) == (1.0, 1, 1, 1.0)
    assert a1.mean_total_tokens == 110 and a1.mean_latency_ms == 50 and a3.total_cost_usd is None
    # frontier: a3-sc (100 %, 1 call); a3 is as accurate at 2 calls, a1 and a0 are dominated; gold has no calls
    assert {r.config for r in rows.values() if r.pareto} == {"a3-sc"}
    md = render_markdown(list(rows.values()))
    assert "| **a1** | retrieval + self-check | 50.0 | 1 / 2 | 1 | 0 | 0 | 0 | 0 | 0 | 2.00 |" in md
    assert "| a0 → a1 | +50.0 | +1 | +0 | -1 | -1 | +0 | +1.00 | +0 |" in md


def test_a2_desc_prices_descriptions_and_join_paths_apart() -> None:
    """With a2-desc in the run, checkpoint 3.3 gets one line per ingredient: a1 -> a2-desc
    (descriptions), a2-desc -> a2 (join paths), a2 -> a3 (anti-patterns)."""
    from pytest_sqleval.products.warehouse.course import ingredient_steps
    records = [rec(c, q, status, tokens=(t, 10)) for c, t, statuses in (
        ("a1", 1000, ("failed", "failed", "failed", "failed")), ("a2-desc", 1500, ("passed", "failed", "failed", "failed")),
        ("a2", 1700, ("passed", "passed", "failed", "failed")), ("a3", 2200, ("passed", "passed", "passed", "passed")))
        for q, status in zip(("q1", "q2", "q3", "q4"), statuses)]
    steps = [(st.base, st.config, st.label, st.accuracy_delta, st.added_prompt_tokens, st.pp_per_1k_tokens)
             for st in ingredient_steps(ablation_rows(records))]
    assert steps == [("a1", "a2-desc", "descriptions", 0.25, 500, 50.0), ("a2-desc", "a2", "join paths", 0.25, 200, 125.0),
                     ("a2", "a3", "anti-patterns", 0.5, 500, 100.0)]


def test_a_configurations_records_say_what_its_row_is_even_when_its_case_crashed(tmp_path: Path) -> None:
    opts = BackendOptions(model="scripted", api_base="http://127.0.0.1:1/v1", rootdir=str(tmp_path))
    a1, raw = make_llm_backend("a1", opts), make_llm_backend("raw_llm", opts)
    crashed = build_record(case=BenchmarkCase("q1", "How many?", "SELECT 1"), backend=a1, nodeid="s/q.jsonl::q1[a1]",
                           suite={"name": "s"}, status="error", case_error="BackendError: no key")
    assert crashed.backend_metadata == {"components": "retrieval + self-check", "ablation_step": 1,
                                           "layer_ingredients": []}
    assert has_ablation([crashed]) and [(r.config, r.components, r.errors) for r in ablation_rows([crashed])] == [
        ("a1", "retrieval + self-check", 1)]
    assert raw.metadata == {"components": RAW_LLM.components}  # a backend, but no step of the ablation
    assert not has_ablation([rec("gold", "q1", "passed"), {**crashed.to_json_dict(), "backend_metadata": raw.metadata}])


def test_inputs_merge_results_and_json_reports_and_bad_input_is_refused(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    results = tmp_path / "results.jsonl"
    results.write_text("".join(json.dumps(r) + "\n" for r in [rec("a1", "q1", "failed", "other"),
                                                             rec("a1", "q2", "passed")]))
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"tests": [{"nodeid": "x", "metadata": {"sqleval": rec("a1", "q1", "passed")}},
                                            {"nodeid": "y", "metadata": {}}]}))
    records = load_records([results, report])  # q1 is in both: the later input wins
    assert sorted((r.case_id, r.status) for r in records) == [("q1", "passed"), ("q2", "passed")]
    (tmp_path / "bad.jsonl").write_text(json.dumps(rec("a1", "q1", "passed")) + '\n{"no": "record"}\n')
    assert main([str(tmp_path / "bad.jsonl"), "--out", str(tmp_path / "out")]) == 2
    assert "bad.jsonl:2: not a case record" in capsys.readouterr().err
    (tmp_path / "summary.json").write_text('{"backends": {}}')
    assert main([str(tmp_path / "summary.json"), "--out", str(tmp_path / "out")]) == 2
    assert "neither a pytest-json-report" in capsys.readouterr().err
    assert main([str(tmp_path / "missing"), "--out", str(tmp_path / "out")]) == 2


# -- five configurations in one run ----------------------------------------------------------------
def _question_of(req: RecordedRequest) -> str:
    from tests.products.agent.test_agent import QUESTIONS
    text = req.messages[1]["content"]
    return next(qid for qid, q in QUESTIONS.items() if f"Question: {q}" in text)


def scripted_model(req: RecordedRequest) -> Reply:
    """Plays a model whose mistakes each component can fix: without the business tables it
    invents one (hallucinated column); without anti-patterns it reads the frozen revenue
    table (stale table); without the layer it averages every order (wrong metric); its
    first try at r2 names a missing column, which only the self-check repairs."""
    from tests.products.agent.test_agent import GOLD
    qid = _question_of(req)
    prompt = req.messages[1]["content"]
    if len(req.messages) > 2:  # a repair round
        return Reply(f"```sql\n{GOLD[qid]}\n```", prompt_tokens=300, completion_tokens=30)
    if "sales.customers" not in prompt and "finance.revenue_recognized" not in prompt:
        sql = "SELECT count(*) FROM revenue"
    elif qid == "r1" and "Anti-patterns" not in prompt:
        sql = "SELECT sum(amount_usd) FROM finance.revenue_recognized_v1"
    elif qid == "r2":
        sql = "SELECT c.region_name, count(*) FROM sales.orders o JOIN sales.customers c USING (customer_id) GROUP BY 1"
    elif qid == "r4" and "semantic layer" not in prompt:
        sql = "SELECT avg(total_usd) FROM sales.orders"
    else:
        sql = GOLD[qid]
    return Reply(f"```sql\n{sql}\n```", prompt_tokens=200, completion_tokens=20)


def test_five_configurations_in_one_run_make_the_ablation_table_and_plot(
        pytester: pytest.Pytester, llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.products.agent.test_agent import build_mini_suite
    pytester.makeini(INI)
    monkeypatch.setenv("SQLEVAL_LLM_TIMEOUT", "10")
    suite = build_mini_suite(pytester.path)
    llm_server.respond_with(scripted_model)
    args = [str(suite), "-p", "no:cacheprovider", "--sqleval-backend=a0,a1,a2,a3,a3-sc", "--sqleval-model=scripted",
            f"--sqleval-api-base={llm_server.api_base}", "--json-report", "--json-report-file=report.json"]
    result = pytester.runpytest(*args)
    result.assert_outcomes(passed=12, failed=8)
    calls = llm_server.calls
    assert calls == 4 + 5 + 5 + 5 + 4  # one per case, plus one repair of r2 per self-checking config

    assert main(["sqleval-results", "report.json", "--out", "report"]) == 0
    md = (pytester.path / "report" / "ablation.md").read_text()
    rows = {r["config"]: r for r in json.loads((pytester.path / "report" / "ablation.json").read_text())["rows"]}
    acc = {k: r["execution_accuracy"] for k, r in rows.items()}
    assert acc == {"a0": 0.0, "a1": 0.5, "a2": 0.75, "a3": 1.0, "a3-sc": 0.75}
    assert rows["a0"]["classes"]["hallucinated_column"] == 4 and rows["a1"]["classes"]["stale_table"] == 1
    assert rows["a1"]["classes"]["wrong_metric"] == 1 and rows["a3-sc"]["classes"]["hallucinated_column"] == 1
    assert {k: r["mean_calls"] for k, r in rows.items()} == {"a0": 1, "a1": 1.25, "a2": 1.25, "a3": 1.25, "a3-sc": 1}
    assert rows["a1"]["mean_total_tokens"] == (4 * 220 + 330) / 4
    assert {k for k, r in rows.items() if r["pareto"]} == {"a3", "a3-sc"}
    assert "| **a3** | a2 + anti-patterns | 100.0 | 4 / 4 |" in md and "![accuracy against mean LLM calls](ablation.png)" in md
    png = (pytester.path / "report" / "ablation.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000

    # every configuration left its predictions, which grade again without any model call
    for config in ("a0", "a1", "a2", "a3", "a3-sc"):
        lines = (pytester.path / "runs" / config / "predictions.jsonl").read_text().splitlines()
        assert [json.loads(line)["qid"] for line in lines] == ["r1", "r2", "r3", "r4"]
    again = pytester.runpytest(str(suite), "-p", "no:cacheprovider", "--sqleval-backend=predictions:runs/a3/predictions.jsonl")
    again.assert_outcomes(passed=4)
    # a rerun of the same configurations answers from the generation cache: no call at all
    rerun = pytester.runpytest(*args[:-2])
    rerun.assert_outcomes(passed=12, failed=8)
    assert llm_server.calls == calls


def test_the_course_checkpoints_come_from_the_product_not_the_table(tmp_path: Path) -> None:
    """The table knows no course: ``reports.ablation`` alone writes no checkpoint 3.2 or 3.3;
    ``python -m pytest_sqleval report`` passes the Vantage course's sections, which add both to
    ablation.md and ablation.json."""
    from pytest_sqleval.cli import main as cli
    records = [rec(c, q, status, tokens=(t, 10)) for c, t, statuses in (
        ("a1", 1000, ("failed", "failed")), ("a2", 1500, ("passed", "failed")), ("a3", 2000, ("passed", "passed")))
        for q, status in zip(("q1", "q2"), statuses)]
    results = tmp_path / "results.jsonl"
    results.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert main([str(results), "--out", str(tmp_path / "plain")]) == 0
    plain = json.loads((tmp_path / "plain" / "ablation.json").read_text())
    assert "layer_baseline" not in plain and "ingredients" not in plain and [r["config"] for r in plain["rows"]] == [
        "a1", "a2", "a3"]
    plain_md = (tmp_path / "plain" / "ablation.md").read_text()
    assert "Error classes before the semantic layer" not in plain_md and "ingredient" not in plain_md
    assert cli(["report", str(results), "--out", str(tmp_path / "course")]) == 0
    doc = json.loads((tmp_path / "course" / "ablation.json").read_text())
    assert doc["layer_baseline"] == {"config": "a1", "failed": 2, "graded": 2,
                                     "error_classes": plain["rows"][0]["classes"]}
    assert doc["layer_baseline"]["error_classes"]["other"] == 2
    assert [(s["base"], s["config"], s["label"]) for s in doc["ingredients"]] == [
        ("a1", "a2", "descriptions + join paths"), ("a2", "a3", "anti-patterns")]
    md = (tmp_path / "course" / "ablation.md").read_text()
    assert "## Error classes before the semantic layer (a1)" in md
    assert "## Accuracy per added context token, per semantic-layer ingredient" in md
    assert doc["rows"] == plain["rows"]  # the table itself is the same
