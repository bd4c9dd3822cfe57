"""The agent (retrieval, context caps, self-check, repair, budgets) against a loopback
OpenAI-compatible server, on a small warehouse with a semantic layer.

``build_mini_suite`` is shared with tests/core/backends/test_llm_backends.py and tests/reports/test_ablation.py."""
from __future__ import annotations

import asyncio
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.llm_server import Reply, ScriptedLLMServer

pytest.importorskip("litellm", reason="the agent needs the 'llm' extra: pip install -e '.[llm]'")
pytest.importorskip("rank_bm25", reason="the agent needs the 'llm' extra: pip install -e '.[llm]'")

from pytest_sqleval.products.agent import CONFIGS, PROMPT_VERSION  # noqa: E402
from pytest_sqleval.products.agent.context import build_context  # noqa: E402
from pytest_sqleval.products.agent.extract import extract_sql  # noqa: E402
from pytest_sqleval.products.agent.retriever import SchemaRetriever, tokenize  # noqa: E402
from pytest_sqleval.products.agent.schema import reset_workspaces, workspace_for  # noqa: E402
from pytest_sqleval.products.agent.selfcheck import Problem, inspect  # noqa: E402
from pytest_sqleval.products.agent.tokens import TokenCounter  # noqa: E402
from pytest_sqleval.products.agent.backends import make_llm_backend  # noqa: E402
from pytest_sqleval.core.backends.base import BackendOptions  # noqa: E402
from pytest_sqleval.core.cases import BenchmarkCase, read_cases  # noqa: E402
from pytest_sqleval.core.errors import BackendError  # noqa: E402

# -- the mini warehouse -----------------------------------------------------------------------
#: 20 audit shards sort before every business table, so a0 ("the first 20 tables
#: alphabetically") never sees the tables the questions need.
MINI_SQL = """
CREATE SCHEMA audit; CREATE SCHEMA finance; CREATE SCHEMA legacy; CREATE SCHEMA sales;
{audit}
CREATE TABLE sales.customers (customer_id INTEGER, region VARCHAR, is_test BOOLEAN);
INSERT INTO sales.customers SELECT i, ['north', 'south', 'east'][1 + i % 3], i % 7 = 0 FROM range(1, 31) t(i);
COMMENT ON TABLE sales.customers IS 'Customer accounts.';
COMMENT ON COLUMN sales.customers.region IS 'sales region of the customer';
COMMENT ON COLUMN sales.customers.is_test IS 'internal test account';
CREATE TABLE sales.orders (order_id INTEGER, customer_id INTEGER, order_date DATE, status VARCHAR, total_usd DECIMAL(10,2));
INSERT INTO sales.orders SELECT i, 1 + (i * 7) % 30, DATE '2025-01-01' + CAST(i * 3 AS INTEGER),
    CASE WHEN i % 9 = 0 THEN 'cancelled' ELSE 'complete' END, 10 + (i * 13) % 90 FROM range(1, 81) t(i);
COMMENT ON TABLE sales.orders IS 'Customer orders with their status and total.';
CREATE TABLE finance.revenue_recognized (revenue_id INTEGER, order_id INTEGER, amount_usd DECIMAL(10,2),
    recognized_date DATE, posting_status VARCHAR);
INSERT INTO finance.revenue_recognized SELECT order_id, order_id, total_usd, order_date + 2,
    CASE WHEN order_id % 10 = 0 THEN 'pending' ELSE 'posted' END FROM sales.orders WHERE status = 'complete';
COMMENT ON TABLE finance.revenue_recognized IS 'Recognized revenue per order.';
COMMENT ON COLUMN finance.revenue_recognized.amount_usd IS 'recognized amount in USD';
CREATE TABLE finance.revenue_recognized_v1 AS SELECT * FROM finance.revenue_recognized WHERE revenue_id <= 40;
COMMENT ON TABLE finance.revenue_recognized_v1 IS 'Recognized revenue (v1).';
CREATE TABLE sales.rev_billed (invoice_line_id INTEGER, order_id INTEGER, amount_usd DECIMAL(10,2), billed_date DATE,
    line_type VARCHAR);
INSERT INTO sales.rev_billed SELECT order_id, order_id, total_usd * 1.1, order_date, 'merchandise' FROM sales.orders;
COMMENT ON TABLE sales.rev_billed IS 'Billed revenue lines (invoices).';
CREATE TABLE legacy.revenue_daily (day DATE, revenue_usd DECIMAL(12,2));
INSERT INTO legacy.revenue_daily SELECT recognized_date, sum(amount_usd) FROM finance.revenue_recognized_v1 GROUP BY 1;
COMMENT ON TABLE legacy.revenue_daily IS 'Daily revenue rollup.';
"""

MINI_LAYER = """\
version: 1
dialect: duckdb
snapshot_logical_date: 2025-11-30
cubes:
  - name: revenue
    sql_table: finance.revenue_recognized
    description: Canonical revenue on the accrual basis. Use it for any revenue question.
    filters:
      - sql: "posting_status = 'posted'"
        description: pending rows are not revenue yet
    measures:
      - { name: amount, sql: amount_usd, type: sum, format: usd }
    dimensions:
      - { name: recognized_date, sql: recognized_date, type: time }
    joins:
      - { name: orders, sql: "{revenue}.order_id = {orders}.order_id", relationship: many_to_one }
    anti_patterns:
      - "finance.revenue_recognized_v1 was frozen at the ERP cutover; never query it."
      - "sales.rev_billed is billing (with tax), not revenue."
  - name: orders
    sql_table: sales.orders
    description: Orders. Order value metrics count complete orders only.
    measures:
      - { name: average_value, sql: total_usd, type: avg }
    dimensions:
      - { name: status, sql: status, type: string }
    joins:
      - { name: customers, sql: "{orders}.customer_id = {customers}.customer_id", relationship: many_to_one }
  - name: customers
    sql_table: sales.customers
    description: Customer accounts; exclude test accounts from every business metric.
    dimensions:
      - { name: region, sql: region, type: string }
deprecated_tables:
  - { table: finance.revenue_recognized_v1, use_instead: finance.revenue_recognized }
  - { table: legacy.revenue_daily, use_instead: finance.revenue_recognized }
"""

GOLD = {
    "r1": "SELECT sum(amount_usd) FROM finance.revenue_recognized WHERE posting_status = 'posted' "
          "AND recognized_date BETWEEN DATE '2025-01-01' AND DATE '2025-12-31'",
    "r2": "SELECT c.region, count(*) AS n FROM sales.orders o JOIN sales.customers c ON c.customer_id = o.customer_id "
          "GROUP BY c.region",
    "r3": "SELECT count(*) FROM sales.customers WHERE NOT is_test",
    "r4": "SELECT avg(total_usd) FROM sales.orders WHERE status = 'complete'",
}
QUESTIONS = {
    "r1": "What was total recognized revenue in 2025?",
    "r2": "How many orders per customer region?",
    "r3": "How many real customers are there, excluding test accounts?",
    "r4": "What is the average order value?",
}
SHAPES = {"r1": "scalar", "r2": "table", "r3": "scalar", "r4": "scalar"}
AUDIT_TABLES = [f"audit.event_log_{i:02d}" for i in range(1, 21)]
_TEMPLATE: Path | None = None


def build_mini_suite(root: Path, *, layer: bool = True) -> Path:
    """Write ``root/mini/`` (database, questions, manifest, semantic layer); returns the folder."""
    import duckdb
    suite = root / "mini"
    suite.mkdir(parents=True, exist_ok=True)
    audit = "\n".join(f"CREATE TABLE audit.event_log_{i:02d} (event_id INTEGER, actor VARCHAR, happened_at TIMESTAMP);"
                      f"\nCOMMENT ON TABLE audit.event_log_{i:02d} IS 'Audit trail shard {i}.';" for i in range(1, 21))
    db = suite / "mini.duckdb"
    if not db.exists():
        global _TEMPLATE
        if _TEMPLATE is None or not _TEMPLATE.exists():  # built once per process, then copied
            template = Path(tempfile.mkdtemp(prefix="sqleval-mini-")) / "mini.duckdb"
            con = duckdb.connect(str(template))
            for stmt in duckdb.extract_statements(MINI_SQL.format(audit=audit)):
                con.execute(stmt)
            con.execute("CHECKPOINT")
            con.close()
            _TEMPLATE = template
        shutil.copyfile(_TEMPLATE, db)
    (suite / "questions.jsonl").write_text("".join(
        json.dumps({"id": qid, "question": QUESTIONS[qid], "gold_sql": GOLD[qid], "expected_shape": SHAPES[qid]}) + "\n"
        for qid in GOLD))
    (suite / "sqleval.toml").write_text('[suite]\nname = "mini"\nquestions = "questions.jsonl"\n'
                                        'database = "mini.duckdb"\ndialect = "duckdb"\n')
    if layer:
        (suite / "semantic_layer.yaml").write_text(MINI_LAYER)
    return suite


def fenced(sql: str) -> str:
    return f"```sql\n{sql}\n```"


# -- fixtures -----------------------------------------------------------------------------------
@pytest.fixture
def mini(tmp_path: Path) -> Iterator[dict[str, BenchmarkCase]]:
    suite = build_mini_suite(tmp_path)
    yield {c.id: c for c in read_cases(suite / "questions.jsonl", suite="mini")}
    reset_workspaces()


def backend(name: str, server: ScriptedLLMServer, tmp_path: Path, config: Any = None, **llm: Any) -> Any:
    llm.setdefault("backoff_base", 0.01)
    llm.setdefault("timeout_s", 5.0)
    return make_llm_backend(name, BackendOptions(model="scripted", api_base=server.api_base, rootdir=str(tmp_path)),
                            config, **llm)


def run(b: Any, case: BenchmarkCase) -> Any:
    return asyncio.run(b.generate(case))


# -- pieces ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "sql", "how"), [
    ("```sql\nSELECT 1 FROM t;\n```", "SELECT 1 FROM t", "fenced_sql"),
    ("Sure.\n```\nSELECT a FROM t\n```\nThis returns a.", "SELECT a FROM t", "fenced"),
    ("The answer is SELECT count(*) FROM orders WHERE x = 1. It counts orders.",
     "SELECT count(*) FROM orders WHERE x = 1", "prose"),
    ("select a\nfrom t\nwhere a > 1;\nDone.", "select a\nfrom t\nwhere a > 1", "prose"),
    ("I cannot answer that from the schema.", None, "none"),
    ("we select customers from the table", None, "none"),
    ("", None, "none"),
])
def test_sql_is_extracted_from_fences_and_prose(text: str, sql: str | None, how: str) -> None:
    assert extract_sql(text) == (sql, how)


def test_self_check_flags_errors_empty_and_suspicious_results(tmp_path: Path) -> None:
    import duckdb
    con = duckdb.connect()

    class Out:
        def __init__(self, sql: str) -> None:
            self.table, self.error, self.truncated = con.sql(sql).to_arrow_table(), None, False

    def problem(sql: str, shape: str) -> Problem:
        found = inspect(Out(sql), shape)[0]
        assert found is not None, sql
        return found

    assert inspect(Out("SELECT 1 AS n"), "scalar")[0] is None
    assert problem("SELECT 1 AS n WHERE false", "scalar").kind == "empty"
    assert inspect(Out("SELECT 1 AS n WHERE false"), "empty")[0] is None  # declared empty answer
    many = problem("SELECT * FROM range(3)", "scalar")
    assert many.kind == "suspicious" and "single value" in many.message
    assert "NULL in every row" in problem("SELECT 'a' AS k, NULL::INT AS v", "table").message
    assert inspect(Out("SELECT NULL::INT AS v"), "null")[0] is None  # a declared answer of NULLs only
    assert "negative" in problem("SELECT 'a' AS k, -3 AS order_count", "table").message
    dup = problem("SELECT 'north' AS region, 1 AS n UNION ALL SELECT 'north', 2", "table")
    assert dup.kind == "suspicious" and "repeat" in dup.message
    assert inspect(Out("SELECT 'north' AS region, 1 AS n UNION ALL SELECT 'south', 2"), "table")[0] is None


def test_predictions_file_keeps_what_another_process_wrote_in_between(tmp_path: Path) -> None:
    from pytest_sqleval.products.agent.runs import record_prediction
    path = record_prediction(tmp_path, "a1", {"qid": "q2", "sql": "SELECT 2"})
    other = path.with_name("other-worker.tmp")  # another xdist worker rewrites the file whole
    other.write_text(path.read_text() + json.dumps({"qid": "q10", "sql": "SELECT 10"}) + "\n")
    other.replace(path)
    record_prediction(tmp_path, "a1", {"qid": "q1", "sql": "SELECT 1"})
    record_prediction(tmp_path, "a1", {"qid": "q2", "sql": "SELECT 2 AS again"})
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [(line["qid"], line["sql"]) for line in lines] == [("q1", "SELECT 1"), ("q2", "SELECT 2 AS again"),
                                                             ("q10", "SELECT 10")]


def test_tokens_are_counted_with_the_models_tokenizer_when_litellm_knows_it() -> None:
    known, unknown = TokenCounter("openai/gpt-4o-mini"), TokenCounter("openai/scripted-unknown-model")
    assert known.name == "litellm:openai/gpt-4o-mini"
    assert unknown.name == "approx:cl100k_base"
    text = "CREATE TABLE finance.revenue_recognized (amount_usd DECIMAL(14,2));"
    assert 5 < known.count(text) < 40 and 5 < unknown.count(text) < 40


def test_bm25_ranks_the_table_the_question_names(mini: dict[str, BenchmarkCase]) -> None:
    ws = workspace_for(mini["r3"])
    ranked = SchemaRetriever(ws.tables).rank("How many real customers are there, excluding test accounts?")
    assert ranked[0].table.qualified == "sales.customers" and ranked[0].score > 0
    assert "revenue_recognized" in tokenize("finance.revenue_recognized") and "revenue" in tokenize("revenues")


def test_a0_and_a3_differ_in_context_as_specified(mini: dict[str, BenchmarkCase]) -> None:
    case = mini["r1"]
    ws = workspace_for(case)
    counter = TokenCounter("openai/scripted")
    a0 = build_context(ws, CONFIGS["a0"], case.question, counter)
    a3 = build_context(ws, CONFIGS["a3"], case.question, counter)
    a1 = build_context(ws, CONFIGS["a1"], case.question, counter)
    a2 = build_context(ws, CONFIGS["a2"], case.question, counter)
    # a0: no retrieval, the first 20 tables alphabetically, no layer
    assert a0.tables == AUDIT_TABLES == sorted(t.qualified for t in ws.tables)[:20]
    assert "semantic layer" not in a0.text and not a0.warnings and not a0.scores
    # a3: retrieval puts the revenue tables first; layer notes, joins and anti-patterns are in
    assert a3.tables[0] == "finance.revenue_recognized" and "sales.orders" in a3.tables  # join partner
    assert "cube `revenue`" in a3.text and "always filter: posting_status = 'posted'" in a3.text
    assert "join to `orders`: finance.revenue_recognized.order_id = sales.orders.order_id" in a3.text
    assert "never query it" in a3.text and "DEPRECATED (semantic layer)" in a3.text and a3.warnings
    # a1 has retrieval only, a2 adds descriptions and joins but no anti-patterns
    assert "semantic layer" not in a1.text and a1.tables[0].startswith("finance.revenue_recognized")
    assert "cube `revenue`" in a2.text and not a2.warnings and "DEPRECATED" not in a2.text
    for ctx in (a0, a1, a2, a3):
        assert len(ctx.tables) <= 20 and ctx.tokens <= 8000


def test_a2_desc_is_a2_without_the_join_paths(mini: dict[str, BenchmarkCase]) -> None:
    """Checkpoint 3.3 prices descriptions and join paths apart: a2-desc gives the model a2's
    notes without their join lines, and does not pull the joined tables into the context."""
    from pytest_sqleval.products.agent.backends import record_metadata
    case = mini["r1"]
    ws = workspace_for(case)
    counter = TokenCounter("openai/scripted")
    a1, desc, a2 = (build_context(ws, CONFIGS[c], case.question, counter) for c in ("a1", "a2-desc", "a2"))
    assert "cube `revenue`" in desc.text and "always filter: posting_status = 'posted'" in desc.text
    assert "join to `" not in desc.text and "join to `orders`" in a2.text
    assert desc.tables == a1.tables  # the ranking alone: no join partner pulled in
    def rank(ctx: Any) -> int:
        return ctx.tables.index("sales.orders") if "sales.orders" in ctx.tables else len(ctx.tables)
    assert rank(a2) < rank(desc)  # a2 pulls the join partner forward
    assert desc.tokens < a2.tokens
    assert [record_metadata(CONFIGS[c])["layer_ingredients"] for c in ("a1", "a2-desc", "a2", "a3")] == [
        [], ["descriptions"], ["descriptions", "joins"], ["descriptions", "joins", "anti_patterns"]]


def test_context_caps_hold_under_a_small_token_budget(mini: dict[str, BenchmarkCase]) -> None:
    case = mini["r1"]
    ws = workspace_for(case)
    counter = TokenCounter("openai/scripted")
    small = CONFIGS["a3"].with_budgets(max_context_tokens=250, max_tables=3)
    ctx = build_context(ws, small, case.question, counter)
    assert ctx.tokens <= 250 and 1 <= len(ctx.tables) <= 3
    assert build_context(ws, CONFIGS["a0"].with_budgets(max_tables=4), case.question, counter).tables == AUDIT_TABLES[:4]


# -- the loop against the loopback server -------------------------------------------------------------
BROKEN_R2 = "SELECT c.region_name, count(*) FROM sales.orders o JOIN sales.customers c USING (customer_id) GROUP BY 1"


def test_wrong_then_repaired_sql(llm_server: ScriptedLLMServer, mini: dict[str, BenchmarkCase], tmp_path: Path) -> None:
    llm_server.script(fenced(BROKEN_R2), fenced(GOLD["r2"]))
    result = run(backend("a1", llm_server, tmp_path), mini["r2"])
    meta = result.metadata
    assert result.sql == GOLD["r2"]
    assert (meta["n_llm_calls"], meta["repair_rounds"], meta["final_problem"]) == (2, 1, None)
    first = meta["self_check_history"][0]
    assert first["problem"]["kind"] == "error" and "region_name" in first["problem"]["message"]
    repair = llm_server.chat_requests[1]
    assert repair.temperature == 0 and repair.model == "scripted"
    assert repair.messages[-2] == {"role": "assistant", "content": fenced(BROKEN_R2)}
    assert "failed on the database" in repair.messages[-1]["content"] and "region_name" in repair.messages[-1]["content"]


def test_repair_rounds_are_bounded_at_three(llm_server: ScriptedLLMServer, mini: dict[str, BenchmarkCase],
                                            tmp_path: Path) -> None:
    llm_server.respond_with(lambda req: Reply(fenced(BROKEN_R2)))
    result = run(backend("a3", llm_server, tmp_path), mini["r2"])
    meta = result.metadata
    assert llm_server.calls == 4 and meta["n_llm_calls"] == 4 and meta["repair_rounds"] == 3
    assert meta["final_problem"]["kind"] == "error" and result.sql == BROKEN_R2
    assert len(meta["self_check_history"]) == 4


def test_an_empty_result_is_repaired_but_not_without_self_check(llm_server: ScriptedLLMServer,
                                                                mini: dict[str, BenchmarkCase], tmp_path: Path) -> None:
    empty = "SELECT count(*) FROM sales.customers WHERE NOT is_test GROUP BY region HAVING false"
    llm_server.script(fenced(empty), fenced(GOLD["r3"]))
    assert run(backend("a1", llm_server, tmp_path), mini["r3"]).sql == GOLD["r3"]
    llm_server.script(fenced(empty))
    no_check = run(backend("a3-sc", llm_server, tmp_path), mini["r3"])
    assert no_check.sql == empty and no_check.metadata["n_llm_calls"] == 1
    assert no_check.metadata["self_check"] == "off" and no_check.metadata["repair_rounds"] == 0


def test_rate_limit_then_success_honours_retry_after(llm_server: ScriptedLLMServer, mini: dict[str, BenchmarkCase],
                                                     tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    llm_server.script(Reply.rate_limited(retry_after=0.3), fenced(GOLD["r3"]))
    asked: list[float] = []
    real_sleep = asyncio.sleep

    async def recorded_sleep(delay: float, *args: Any, **kwargs: Any) -> Any:
        asked.append(delay)  # every wait asked for; it still waits
        return await real_sleep(delay, *args, **kwargs)

    monkeypatch.setattr(asyncio, "sleep", recorded_sleep)
    result = run(backend("a0", llm_server, tmp_path), mini["r3"])
    assert 0.3 in asked  # the server's Retry-After, over the backoff's 5-10 ms (backoff_base 0.01)
    assert result.sql == GOLD["r3"] and llm_server.calls == 2
    assert result.metadata["n_llm_calls"] == 1 and result.metadata["http_attempts"] == 2


def test_a_first_call_that_times_out_is_a_backend_error(llm_server: ScriptedLLMServer, mini: dict[str, BenchmarkCase],
                                                        tmp_path: Path) -> None:
    llm_server.respond_with(lambda req: Reply(fenced(GOLD["r3"]), delay=3.0))
    with pytest.raises(BackendError, match=r"(?i)timeout after 2 attempt"):  # retried once, then given up
        run(backend("a1", llm_server, tmp_path, timeout_s=0.8, max_attempts=2), mini["r3"])


def test_a_repair_call_that_fails_keeps_the_best_candidate(llm_server: ScriptedLLMServer,
                                                           mini: dict[str, BenchmarkCase], tmp_path: Path) -> None:
    llm_server.script(fenced(BROKEN_R2), Reply.error(400, "bad request (scripted)"))
    result = run(backend("a1", llm_server, tmp_path), mini["r2"])
    assert result.sql == BROKEN_R2 and "bad request" in result.metadata["repair_error"]
    assert result.metadata["n_llm_calls"] == 2


def test_prose_instead_of_sql(llm_server: ScriptedLLMServer, mini: dict[str, BenchmarkCase], tmp_path: Path) -> None:
    prose = "You should count the rows of the customers table, leaving out the test accounts."
    llm_server.script(prose, fenced(GOLD["r3"]))
    repaired = run(backend("a1", llm_server, tmp_path), mini["r3"])
    assert repaired.sql == GOLD["r3"] and repaired.metadata["repair_rounds"] == 1
    assert repaired.metadata["self_check_history"][0]["problem"]["kind"] == "no_sql"
    assert "was not a SQL query" in llm_server.chat_requests[1].messages[-1]["content"]
    llm_server.script(prose)
    unrepaired = run(backend("a0", llm_server, tmp_path), mini["r3"])
    assert unrepaired.sql == prose and unrepaired.metadata["extraction"] == "none"  # graded as a parse failure


def test_budgets_are_recorded_and_enforced(llm_server: ScriptedLLMServer, mini: dict[str, BenchmarkCase],
                                           tmp_path: Path) -> None:
    llm_server.respond_with(lambda req: Reply(fenced(BROKEN_R2), prompt_tokens=900, completion_tokens=40))
    result = run(backend("a2", llm_server, tmp_path), mini["r2"])
    meta = result.metadata
    assert (meta["config"], meta["model"], meta["provider"], meta["prompt_version"]) == (
        "a2", "openai/scripted", "openai", PROMPT_VERSION)
    assert (meta["n_llm_calls"], meta["prompt_tokens"], meta["completion_tokens"], meta["total_tokens"]) == (
        4, 3600, 160, 3760)
    assert meta["cost_usd"] is None  # litellm has no price for a loopback model
    assert meta["latency_ms"] > 0 and meta["tokenizer"] == "approx:cl100k_base"
    assert 0 < meta["n_context_tables"] <= 20 and 0 < meta["context_tokens"] <= 8000
    assert meta["budget"]["max_llm_calls"] == 4 and meta["budget"]["exhausted"] is None
    assert meta["layer_sha"] and meta["self_check"] == "on"
    # a tighter budget stops the repairs and says why
    tight = CONFIGS["a2"].with_budgets(max_llm_calls=2)
    capped = run(backend("a2", llm_server, tmp_path, config=tight), mini["r2"]).metadata
    assert capped["n_llm_calls"] == 2 and capped["budget"]["exhausted"].startswith("calls")
    tokens = CONFIGS["a2"].with_budgets(max_total_tokens=1000)
    capped = run(backend("a2", llm_server, tmp_path, config=tokens), mini["r2"]).metadata
    assert capped["n_llm_calls"] == 1 and capped["budget"]["exhausted"].startswith("tokens")


def test_layer_configs_need_the_layer(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    suite = build_mini_suite(tmp_path, layer=False)
    case = read_cases(suite / "questions.jsonl", suite="mini")[0]
    try:
        with pytest.raises(BackendError, match="semantic_layer.yaml"):
            run(backend("a2", llm_server, tmp_path), case)
        assert llm_server.calls == 0
    finally:
        reset_workspaces()


def test_predictions_file_is_written_per_config_and_deduplicated(llm_server: ScriptedLLMServer,
                                                                 mini: dict[str, BenchmarkCase], tmp_path: Path) -> None:
    from pytest_sqleval.core.backends.registry import read_predictions
    llm_server.respond_with(lambda req: Reply(fenced(GOLD["r3"])))
    b = backend("a3-sc", llm_server, tmp_path)
    for qid in ("r3", "r1", "r3"):
        run(b, mini[qid])
    path = tmp_path / "runs" / "a3-sc" / "predictions.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [line["qid"] for line in lines] == ["r1", "r3"]
    assert {"qid", "sql", "config", "n_llm_calls", "latency_ms", "prompt_tokens", "completion_tokens",
            "total_tokens"} <= set(lines[0]) and lines[0]["config"] == "a3-sc"
    preds = read_predictions(path)  # the predictions: backend reads it as it is
    assert preds["r3"][0] == GOLD["r3"] and preds["r3"][1]["n_llm_calls"] == 1


@pytest.mark.parametrize("shape, told", [("scalar", "a single value"), ("empty", "possibly no rows"),
                                         ("null", "possibly NULL only"), (None, None)])
def test_the_prompt_tells_the_model_the_declared_answer_shape(shape: str | None, told: str | None) -> None:
    from pytest_sqleval.products.agent.prompts import question_prompt
    prompt = question_prompt("How much?", "t(x)", expected_shape=shape, logical_date=None, layer_used=False)
    assert (f"Expected answer: {told}" in prompt) if told else "Expected answer" not in prompt
