"""The LLM backend factories: model strings, API keys, registry names, fingerprints,
cheap imports, raw_llm against a loopback server, and a run whose failed generations are
retried by the next run while its finished ones cost nothing."""
from __future__ import annotations

import asyncio
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_sqleval.products.agent.backends import make_llm_backend
from pytest_sqleval.core.backends.base import BackendOptions
from pytest_sqleval.core.backends.llm_backends import api_key_for, is_local_endpoint, model_string
from pytest_sqleval.core.backends.registry import known_backends, resolve_backend, resolve_backends
from pytest_sqleval.core.errors import UsageError
from tests.llm_server import Reply, RecordedRequest, ScriptedLLMServer
from tests.sqleval_helpers import INI

needs_llm = pytest.mark.skipif(
    importlib.util.find_spec("litellm") is None or importlib.util.find_spec("rank_bm25") is None,
    reason="needs the 'llm' extra: pip install -e '.[llm]'")


@pytest.mark.parametrize(("model", "provider", "api_base", "expected"), [
    ("gpt-4o-mini", "openai", None, ("openai/gpt-4o-mini", "openai")),
    ("anthropic/claude-3-5-haiku-latest", None, None, ("anthropic/claude-3-5-haiku-latest", "anthropic")),
    ("claude-3-5-haiku-latest", "anthropic", None, ("anthropic/claude-3-5-haiku-latest", "anthropic")),
    ("llama3.1", "ollama", "http://localhost:11434", ("ollama/llama3.1", "ollama")),
    ("Qwen2.5-7B", None, "http://127.0.0.1:8000/v1", ("openai/Qwen2.5-7B", "openai")),
    ("hosted_vllm/Qwen/Qwen2.5-7B", "hosted_vllm", "http://vllm:8000/v1", ("hosted_vllm/Qwen/Qwen2.5-7B", "hosted_vllm")),
])
def test_model_string_for_litellm(model: str, provider: str | None, api_base: str | None,
                                  expected: tuple[str, str]) -> None:
    assert model_string(BackendOptions(model=model, provider=provider, api_base=api_base)) == expected


def test_a_missing_model_is_a_usage_error_that_says_what_to_add(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SQLEVAL_MODEL", raising=False)
    with pytest.raises(UsageError, match="--sqleval-model"):
        resolve_backend("a1", BackendOptions())
    monkeypatch.setenv("SQLEVAL_MODEL", "openai/gpt-4o-mini")
    assert resolve_backend("a1", BackendOptions()).label == "a1"


def test_api_keys_come_from_the_provider_and_never_go_to_a_local_server(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("SQLEVAL_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-cloud")
    assert api_key_for("openai", None) == "sk-cloud"
    assert api_key_for("openai", "http://127.0.0.1:9999/v1") == "no-key-needed"  # loopback: no cloud key
    assert api_key_for("openai", "http://192.168.1.20:8000/v1") == "no-key-needed"
    assert api_key_for("anthropic", None) is None  # litellm reports the missing key itself
    assert api_key_for("ollama", None) == "no-key-needed"
    monkeypatch.setenv("SQLEVAL_API_KEY", "sk-override")
    assert api_key_for("openai", "http://127.0.0.1:9999/v1") == "sk-override"
    assert is_local_endpoint("http://localhost:11434") and is_local_endpoint("http://[::1]:8000/v1")
    assert not is_local_endpoint("https://api.openai.com/v1")


def test_every_configuration_is_a_builtin_with_a_fingerprint_of_what_decides_its_answers(tmp_path: Path) -> None:
    opts = BackendOptions(model="gpt-4o-mini", provider="openai", rootdir=str(tmp_path))
    names = ["raw_llm", "a0", "a1", "a2", "a3", "a3-sc"]
    assert set(names) <= set(known_backends())
    backends = resolve_backends(",".join(names), opts)
    assert [b.label for b in backends] == names
    prints = {b.fingerprint for b in backends}
    assert len(prints) == len(names)  # every configuration caches apart
    again = resolve_backend("a1", opts)
    assert again.fingerprint == backends[2].fingerprint  # stable across resolutions (and processes)
    other_model = resolve_backend("a1", BackendOptions(model="gpt-4o", provider="openai"))
    assert other_model.fingerprint != again.fingerprint
    same_model_other_server = resolve_backend("a1", BackendOptions(model="openai/gpt-4o-mini", rootdir=opts.rootdir,
                                                                   api_base="http://127.0.0.1:1/v1"))
    assert same_model_other_server.fingerprint == again.fingerprint  # the endpoint does not decide the answer
    from pytest_sqleval.products.agent import CONFIGS
    tighter = make_llm_backend("a1", opts, CONFIGS["a1"].with_budgets(max_llm_calls=2))
    assert tighter.fingerprint != again.fingerprint
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "semantic_layer.yaml").write_text("version: 1\n")
    assert resolve_backend("a1", opts).fingerprint != again.fingerprint  # an edited layer is not answered from cache


def test_importing_the_registry_loads_neither_litellm_nor_the_agent() -> None:
    code = ("import sys, pytest_sqleval.core.backends.registry, pytest_sqleval.core.backends.llm_backends; "
            "print(sorted(m for m in ('litellm', 'rank_bm25', 'pytest_sqleval.products.agent', 'matplotlib') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@needs_llm
def test_raw_llm_shows_every_table_compactly_in_one_call(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    from pytest_sqleval.products.agent.schema import reset_workspaces
    from pytest_sqleval.core.cases import read_cases
    from tests.products.agent.test_agent import GOLD, build_mini_suite
    suite = build_mini_suite(tmp_path)
    case = {c.id: c for c in read_cases(suite / "questions.jsonl", suite="mini")}["r3"]
    llm_server.script(f"Here you go:\n```sql\n{GOLD['r3']};\n```\nIt counts real customers.")
    b = make_llm_backend("raw_llm", BackendOptions(model="scripted", api_base=llm_server.api_base, rootdir=str(tmp_path)))
    try:
        result = asyncio.run(b.generate(case))
    finally:
        reset_workspaces()
    assert result.sql == GOLD["r3"]
    meta = result.metadata
    assert (meta["backend"], meta["config"], meta["n_llm_calls"], meta["n_context_tables"]) == ("raw_llm", "raw_llm", 1, 26)
    [req] = llm_server.chat_requests
    assert req.temperature == 0 and "sales.customers(customer_id INTEGER, region VARCHAR, is_test BOOLEAN)" in req.prompt_text
    assert "audit.event_log_20(" in req.prompt_text and "Question: " + case.question in req.prompt_text
    assert (tmp_path / "runs" / "raw_llm" / "predictions.jsonl").exists()


@needs_llm
def test_failed_generations_are_case_errors_and_a_rerun_spends_calls_only_on_them(
        pytester: pytest.Pytester, llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.products.agent.test_agent import GOLD, QUESTIONS, build_mini_suite
    pytester.makeini(INI)
    monkeypatch.setenv("SQLEVAL_LLM_TIMEOUT", "1")
    monkeypatch.setenv("SQLEVAL_LLM_MAX_ATTEMPTS", "2")
    suite = build_mini_suite(pytester.path)
    down = {"r3", "r4"}

    def model(req: RecordedRequest) -> Reply:
        qid = next(q for q, text in QUESTIONS.items() if text in req.messages[1]["content"])
        if qid == "r3" and qid in down:
            return Reply(f"```sql\n{GOLD[qid]}\n```", delay=2.5)  # always too slow
        if qid == "r4" and qid in down:
            return Reply.error(503, "overloaded (scripted)")
        return Reply(f"```sql\n{GOLD[qid]}\n```")

    llm_server.respond_with(model)
    args = [str(suite), "-p", "no:cacheprovider", "--sqleval-backend=a3-sc", "--sqleval-model=scripted",
            f"--sqleval-api-base={llm_server.api_base}"]
    first = pytester.runpytest(*args)
    first.assert_outcomes(passed=2, errors=2)
    records = {json.loads(line)["case_id"]: json.loads(line)
               for line in (pytester.path / "sqleval-results" / "results.jsonl").read_text().splitlines()}
    assert records["r3"]["failure_kind"] == "backend_error" and "timeout" in records["r3"]["case_error"]
    assert "503" in records["r4"]["case_error"] or "overloaded" in records["r4"]["case_error"]
    calls_before = llm_server.calls
    assert "2 attempt(s)" in records["r3"]["case_error"] and "2 attempt(s)" in records["r4"]["case_error"]

    down.clear()
    second = pytester.runpytest(*args)
    second.assert_outcomes(passed=4)
    assert llm_server.calls == calls_before + 2  # only the two unfinished cases were asked again
