"""The offline mock model: ``--sqleval-model=mockllm/...`` runs every agent configuration and
raw_llm end to end with no network or key, and says everywhere that it is not a model; the
ablation plot's labels never overlap."""
from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_sqleval.core import mockllm
from pytest_sqleval.core.llm import complete
from pytest_sqleval.reports.html import reproduce_command

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = """Schema:

CREATE TABLE sales.customers (
  customer_id BIGINT,
  first_name VARCHAR
)
CREATE TABLE finance.revenue_recognized (
  amount_usd DECIMAL(18,2),
  recognized_date DATE
)

Question: What was total revenue recognized in 2023?"""


def test_it_answers_like_an_openai_chat_completion_with_sql_from_the_prompt() -> None:
    body = mockllm.respond([{"role": "system", "content": "x"}, {"role": "user", "content": SCHEMA}], "mockllm/heuristic")
    assert body["object"] == "chat.completion" and body["model"] == "mockllm/heuristic"
    assert body["choices"][0]["message"]["content"] == "```sql\nSELECT sum(amount_usd) AS value FROM finance.revenue_recognized\n```"
    assert body["usage"]["total_tokens"] == body["usage"]["prompt_tokens"] + body["usage"]["completion_tokens"]
    repair = [{"role": "user", "content": SCHEMA}, {"role": "assistant", "content": "..."},
              {"role": "user", "content": "Your answer failed on the database: ..."}]
    assert "FROM sales.customers" in mockllm.write_sql(repair)  # a repair request: the next table
    assert mockllm.write_sql([{"role": "user", "content": "Question: How many stores are open?"}]).startswith(
        "SELECT count(*) AS n FROM ")  # no schema: a guessed table, as a model without context would


def test_the_client_answers_a_mockllm_model_without_litellm_or_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    import pytest_sqleval.core.llm as llm

    def no_litellm() -> Any:
        raise AssertionError("litellm was asked for")
    monkeypatch.setattr(llm, "_litellm", no_litellm)
    reply = asyncio.run(complete([{"role": "user", "content": SCHEMA}], model="mockllm/heuristic"))
    assert "revenue_recognized" in reply.text and reply.cost_usd == 0.0 and reply.attempts == 1


def test_the_ablation_runs_offline_and_every_output_says_it_is_not_a_model(tmp_path: Path) -> None:
    results, report = tmp_path / "results", tmp_path / "report"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "cases/vantage", "-q", "-p", "no:cacheprovider", "-k", "q01 or q04 or q07",
         "--sqleval-backend=raw_llm,a0,a1,a2,a3,a3-sc", "--sqleval-model=mockllm/heuristic", "--sqleval-no-cache",
         f"--sqleval-results={results}", f"--sqleval-ablation-dir={report}"],
        cwd=ROOT, capture_output=True, text=True, timeout=300, env={**_env(), "SQLEVAL_RUNS_DIR": str(tmp_path / "runs")})
    assert proc.returncode in (0, 1), proc.stdout[-3000:] + proc.stderr[-3000:]
    records = [json.loads(line) for line in (results / "results.jsonl").read_text().splitlines()]
    assert len(records) == 18 and {r["status"] for r in records} <= {"passed", "failed"}  # graded, not errors
    assert all(r["backend_metadata"]["not_a_model"] == mockllm.NOT_A_MODEL for r in records)
    assert all(r["backend_metadata"]["n_llm_calls"] >= 1 for r in records)
    assert "**Not a model:**" in (report / "ablation.md").read_text()
    assert (report / "ablation.png").stat().st_size > 5_000
    assert mockllm.NOT_A_MODEL in (results / "report.html").read_text()
    a1 = next(r for r in records if r["backend"] == "a1" and r["case_id"] == "q04")
    assert reproduce_command(a1) == ("pytest cases/vantage/questions.jsonl::q04 --sqleval-backend=a1 "
                                     "--sqleval-model=mockllm/heuristic")


def test_the_judge_runs_offline_and_repeats_the_deterministic_comparison(tmp_path: Path) -> None:
    results = tmp_path / "results"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "cases/vantage", "-q", "-p", "no:cacheprovider", "-k", "q01 or q04 or q45",
         "--sqleval-backend=predictions:cases/vantage/sample_predictions.jsonl", "--sqleval-judge=advisory",
         "--sqleval-judge-model=mockllm/judge", f"--sqleval-results={results}", f"--sqleval-cache-dir={tmp_path / 'c'}"],
        cwd=ROOT, capture_output=True, text=True, timeout=300, env=_env())
    assert proc.returncode in (0, 1), proc.stdout[-3000:] + proc.stderr[-3000:]
    judged = {r["case_id"]: r for r in map(json.loads, (results / "results.jsonl").read_text().splitlines())}
    assert {k: r["equivalence"] for k, r in judged.items()} == {
        "q01": "equivalent", "q04": "equivalent", "q45": "different"}  # q04: same rows, from a deprecated table
    assert all(mockllm.NOT_A_MODEL in r["rationale"] for r in judged.values())
    assert judged["q04"]["status"] == "failed"  # advisory: execution and the stale table still decide


def test_ablation_labels_never_overlap() -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.text import Text

    from pytest_sqleval.reports.ablation import AblationRow, _label_points
    rows = []
    for i, name in enumerate(["a0", "a1", "a2", "a3", "a3-sc", "raw_llm"]):
        row = AblationRow(config=name)
        row.mean_calls, row.failed = 1.0 + 0.01 * (i % 2), 50  # all but on one spot, at 0 %
        rows.append(row)
    fig, ax = plt.subplots(figsize=(6.4, 4.4), dpi=120)
    ax.set_xlim(0.8, 1.3)
    ax.set_ylim(-5, 110)
    fig.canvas.draw()
    _label_points(ax, rows)
    renderer = fig.canvas.get_renderer()
    boxes = [Text.get_window_extent(t, renderer) for t in ax.texts]
    plt.close(fig)
    assert len(boxes) == 6
    assert not [(i, j) for i in range(6) for j in range(i + 1, 6) if boxes[i].overlaps(boxes[j])]


def _env() -> dict[str, str]:
    import os
    return {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "ANTHROPIC", "SQLEVAL_API"))}


def test_served_over_http_it_answers_litellm_as_an_openai_server() -> None:
    import threading
    server = mockllm.serve()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}/v1"
        reply = asyncio.run(complete([{"role": "user", "content": SCHEMA}], model="openai/mockllm", api_base=base,
                                     api_key="none", max_attempts=1, timeout=20))
        assert "revenue_recognized" in reply.text and reply.prompt_tokens > 0
        assert mockllm.label("openai/mockllm") == {"not_a_model": mockllm.NOT_A_MODEL}
        assert mockllm.label("openai/gpt-4o-mini") == {}
    finally:
        server.shutdown()
        server.server_close()
