"""The LLM judge and the shared litellm client, against a scripted loopback server."""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_sqleval.core.grading.judge import JUDGE_PROMPT_VERSION, Judge, JudgeResult, parse_verdict
from tests.llm_server import Reply, ScriptedLLMServer

QUESTION = "How many customers are in the north region?"
GOLD = "SELECT count(*) FROM customers WHERE region = 'north'"
PRED = "SELECT count(id) FROM customers c WHERE c.region = 'north'"
EVIDENCE: dict[str, Any] = {"execution": {"gold_rows": 1, "pred_rows": 1}, "compare": {"match": True},
                            "structure": {"select": "count(*) vs count(id)"}}
MODEL = "openai/judge-test"

# litellm is the optional extra ``llm``; without it only the parsing and import tests run.
needs_litellm = pytest.mark.skipif(importlib.util.find_spec("litellm") is None,
                                   reason="litellm not installed: pip install -e '.[llm]'")


def make_judge(server: ScriptedLLMServer, cache_dir: Path, **kw: Any) -> Judge:
    kw.setdefault("backoff_base", 0.01)
    return Judge(MODEL, api_base=server.api_base, api_key="test-key", cache_dir=cache_dir, **kw)


@needs_litellm
@pytest.mark.asyncio
@pytest.mark.parametrize("equivalence", ["equivalent", "partially_equivalent", "different"])
async def test_scripted_verdict_round_trips(llm_server: ScriptedLLMServer, tmp_path: Path,
                                            equivalence: str) -> None:
    llm_server.script(Reply.verdict(equivalence, rationale="count(id) equals count(*) here", confidence=0.75))
    result = await make_judge(llm_server, tmp_path).judge(QUESTION, GOLD, PRED, EVIDENCE)

    assert (result.equivalence, result.rationale, result.confidence) == (
        equivalence, "count(id) equals count(*) here", 0.75)
    assert (result.model, result.prompt_version, result.cached, result.error) == (
        MODEL, JUDGE_PROMPT_VERSION, False, None)
    assert result.usage and result.usage["attempts"] == 1 and result.usage["prompt_tokens"] == 11
    assert JudgeResult.from_dict(json.loads(json.dumps(result.to_dict()))) == result

    [req] = llm_server.chat_requests
    assert req.model == "judge-test" and req.temperature == 0
    prompt = req.prompt_text
    for needle in (QUESTION, GOLD, PRED, json.dumps(EVIDENCE, sort_keys=True, separators=(",", ":"))):
        assert needle in prompt
    assert '"equivalence"' in prompt


@needs_litellm
@pytest.mark.asyncio
@pytest.mark.parametrize(("reply", "reason"), [
    (Reply(content="I believe both queries are equivalent."), "not a JSON object"),
    (Reply(content='{"equivalence": "equivalent", "rationale": "both count the no'), "not a JSON object"),
    (Reply.json({"equivalence": "maybe", "rationale": "?", "confidence": 0.5}), "invalid equivalence 'maybe'"),
    (Reply(content=""), "empty judge reply"),
    (Reply(content=None), "empty judge reply"),
    (Reply.json({"verdict": "equivalent"}), "no 'equivalence' key"),
], ids=["prose", "truncated-json", "bad-enum", "empty", "null-content", "missing-key"])
async def test_malformed_output_is_skipped_with_reason_and_not_cached(
        llm_server: ScriptedLLMServer, tmp_path: Path, reply: Reply, reason: str) -> None:
    judge = make_judge(llm_server, tmp_path)
    llm_server.script(reply, Reply.verdict("equivalent"))

    first = await judge.judge(QUESTION, GOLD, PRED, EVIDENCE)
    assert first.equivalence == "skipped" and first.skipped
    assert first.error and reason in first.error
    assert (first.confidence, first.model, first.cached) == (None, MODEL, False)

    second = await judge.judge(QUESTION, GOLD, PRED, EVIDENCE)  # a skip is not cached: asks again
    assert second.equivalence == "equivalent" and llm_server.calls == 2


@pytest.mark.parametrize("text", [
    '```json\n{"equivalence": "different", "rationale": "wrong join", "confidence": 0.8}\n```',
    'Sure! Here is my verdict:\n{"equivalence": "different", "rationale": "wrong join", "confidence": 0.8}'
    '\nLet me know if you need more.',
    '{"equivalence": "Different", "rationale": "wrong join", "confidence": "0.8"} {"note": 1}',
])
def test_parse_tolerates_fences_prose_and_trailing_text(text: str) -> None:
    assert parse_verdict(text) == ({"equivalence": "different", "rationale": "wrong join", "confidence": 0.8}, None)


def test_parse_normalises_labels_and_drops_bad_confidence() -> None:
    verdict, error = parse_verdict('{"equivalence": "Partially Equivalent", "rationale": 3, "confidence": 7}')
    assert error is None and verdict == {"equivalence": "partially_equivalent", "rationale": "3", "confidence": None,
                                         "note": "the judge's confidence 7 is not a number from 0 to 1; left out"}
    assert parse_verdict('{"equivalence": "skipped"}')[0] is None  # not the model's to say
    assert parse_verdict('{"equivalence": true}')[1] == (
        "judge reply has invalid equivalence True (expected one of equivalent, partially_equivalent, different)")


@pytest.mark.parametrize("confidence", ["high", "", "NaN", "inf", "-0.1", "1.5", 2, -1, True, [0.5], {"p": 0.5},
                                        float("nan"), float("inf")])
def test_a_confidence_that_is_no_number_in_0_1_is_dropped_with_a_note(confidence: Any) -> None:
    """Wherever a judgement comes from (a reply, the cache, a plugin), reports can format its confidence."""
    verdict, error = parse_verdict(json.dumps({"equivalence": "equivalent", "rationale": "ok", "confidence": confidence}))
    assert error is None and verdict is not None and verdict["confidence"] is None and "is not a number from 0 to 1" in verdict["note"]
    for result in (JudgeResult("equivalent", "ok", confidence, "m", JUDGE_PROMPT_VERSION, False, None),
                   JudgeResult.from_dict({"equivalence": "equivalent", "confidence": confidence})):
        assert result.confidence is None and result.note is not None and "is not a number from 0 to 1" in result.note
        assert result.to_dict()["note"] == result.note  # the record's judge says what was dropped


@pytest.mark.parametrize("confidence, number", [(0, 0.0), (1, 1.0), (0.75, 0.75), ("0.8", 0.8), (None, None)])
def test_a_confidence_in_0_1_is_kept_as_a_float(confidence: Any, number: float | None) -> None:
    verdict, _ = parse_verdict(json.dumps({"equivalence": "different", "rationale": "", "confidence": confidence}))
    assert verdict is not None and verdict["confidence"] == number and "note" not in verdict
    assert JudgeResult.from_dict({"equivalence": "different", "confidence": confidence}).note is None


@needs_litellm
@pytest.mark.asyncio
async def test_429_with_retry_after_is_honoured_then_succeeds(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    llm_server.script(Reply.rate_limited(retry_after=1), Reply.verdict("equivalent"))
    result = await make_judge(llm_server, tmp_path).judge(QUESTION, GOLD, PRED, EVIDENCE)

    assert result.equivalence == "equivalent" and result.error is None
    assert result.usage and result.usage["attempts"] == 2
    first, second = llm_server.chat_requests
    assert second.received_at - first.received_at >= 0.9  # waited Retry-After, not the 10 ms backoff
    assert all(r.temperature == 0 for r in (first, second))


@needs_litellm
@pytest.mark.asyncio
async def test_persistent_500_is_skipped_after_bounded_attempts(llm_server: ScriptedLLMServer,
                                                                 tmp_path: Path) -> None:
    llm_server.script(*[Reply.error(500)] * 3)
    result = await make_judge(llm_server, tmp_path, max_attempts=3).judge(QUESTION, GOLD, PRED, EVIDENCE)

    assert result.equivalence == "skipped" and llm_server.calls == 3
    assert result.error and "transient" in result.error and "after 3 attempt(s)" in result.error
    assert "InternalServerError" in result.error and "server error (scripted)" in result.error
    assert not list(tmp_path.glob("*.json"))


@needs_litellm
@pytest.mark.asyncio
@pytest.mark.parametrize("reply", [Reply(body="<html>not json"), Reply(content="x" * 200, truncate_body=40)],
                         ids=["malformed-body", "truncated-body"])
async def test_broken_http_body_is_retried_then_answered(llm_server: ScriptedLLMServer, tmp_path: Path,
                                                         reply: Reply) -> None:
    llm_server.script(reply, Reply.verdict("different"))
    result = await make_judge(llm_server, tmp_path).judge(QUESTION, GOLD, PRED, EVIDENCE)
    assert result.equivalence == "different" and result.usage and result.usage["attempts"] == 2


@needs_litellm
@pytest.mark.asyncio
async def test_client_error_is_not_retried(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    llm_server.script(Reply.error(400, "bad request (scripted)"), Reply.verdict("equivalent"))
    result = await make_judge(llm_server, tmp_path).judge(QUESTION, GOLD, PRED, EVIDENCE)
    assert result.equivalence == "skipped" and llm_server.calls == 1
    assert result.error and "rejected" in result.error and "bad request (scripted)" in result.error


@needs_litellm
@pytest.mark.asyncio
async def test_per_call_timeout_then_retry(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    llm_server.script(Reply.verdict("different", delay=2.0), Reply.verdict("equivalent"))
    result = await make_judge(llm_server, tmp_path, timeout=0.5).judge(QUESTION, GOLD, PRED, EVIDENCE)
    assert result.equivalence == "equivalent" and result.usage and result.usage["attempts"] == 2


@needs_litellm
@pytest.mark.asyncio
async def test_unreachable_endpoint_is_skipped(tmp_path: Path) -> None:
    with ScriptedLLMServer() as dead:
        api_base = dead.api_base
    judge = Judge(MODEL, api_base=api_base, api_key="k", cache_dir=tmp_path, max_attempts=2, backoff_base=0.01)
    result = await judge.judge(QUESTION, GOLD, PRED, EVIDENCE)
    assert result.equivalence == "skipped" and result.error and "after 2 attempt(s)" in result.error


@needs_litellm
@pytest.mark.asyncio
async def test_cache_makes_a_rerun_call_free(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    llm_server.respond_with(lambda req: Reply.verdict("equivalent"))
    first = await make_judge(llm_server, tmp_path).judge(QUESTION, GOLD, PRED, EVIDENCE)
    again = await make_judge(llm_server, tmp_path).judge(QUESTION, GOLD, PRED, dict(reversed(EVIDENCE.items())))
    assert llm_server.calls == 1
    assert (first.cached, again.cached) == (False, True)
    assert again.equivalence == "equivalent" and again.model == MODEL

    await make_judge(llm_server, tmp_path).judge(QUESTION, GOLD, PRED, {**EVIDENCE, "compare": {"match": False}})
    await Judge("openai/other-judge", api_base=llm_server.api_base, api_key="k",
                cache_dir=tmp_path).judge(QUESTION, GOLD, PRED, EVIDENCE)
    assert llm_server.calls == 3  # other evidence, other model: new keys


@needs_litellm
def test_judge_sync_outside_a_loop(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    llm_server.script(Reply.verdict("partially_equivalent"), Reply.verdict("different"))
    judge = make_judge(llm_server, tmp_path)
    assert judge.judge_sync(QUESTION, GOLD, PRED, EVIDENCE).equivalence == "partially_equivalent"
    assert judge.judge_sync(QUESTION, GOLD, "SELECT 1", EVIDENCE).equivalence == "different"  # a second loop
    assert judge.judge_sync(QUESTION, GOLD, PRED, EVIDENCE).cached


@needs_litellm
@pytest.mark.asyncio
async def test_judge_sync_inside_a_running_loop(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    llm_server.script(Reply.verdict("equivalent"))
    assert make_judge(llm_server, tmp_path).judge_sync(QUESTION, GOLD, PRED, EVIDENCE).equivalence == "equivalent"


@needs_litellm
@pytest.mark.asyncio
async def test_complete_reports_usage_and_cost(llm_server: ScriptedLLMServer) -> None:
    from pytest_sqleval.core.llm import complete

    llm_server.script(Reply(content="hello", prompt_tokens=1000, completion_tokens=500), Reply(content="hi"))
    priced = await complete([{"role": "user", "content": "hi"}], model="openai/gpt-4o-mini",
                            api_base=llm_server.api_base, api_key="k")
    assert (priced.text, priced.prompt_tokens, priced.completion_tokens, priced.attempts) == ("hello", 1000, 500, 1)
    assert priced.cost_usd is not None and priced.cost_usd > 0 and priced.latency_ms >= 0
    unpriced = await complete([{"role": "user", "content": "hi"}], model=MODEL, api_base=llm_server.api_base,
                              api_key="k")
    assert unpriced.cost_usd is None and unpriced.model == "judge-test"
    assert [r.model for r in llm_server.chat_requests] == ["gpt-4o-mini", "judge-test"]


def test_retry_after_parsing() -> None:
    from email.utils import formatdate
    import time

    from pytest_sqleval.core.llm import _retry_after

    class Exc(Exception):
        def __init__(self, headers: dict[str, str]) -> None:
            self.litellm_response_headers = headers

    assert _retry_after(Exc({"retry-after": "2"})) == 2.0
    assert _retry_after(Exc({"retry-after-ms": "250", "retry-after": "9"})) == 0.25
    assert 5 <= (_retry_after(Exc({"retry-after": formatdate(time.time() + 8, usegmt=True)})) or 0) <= 8
    assert _retry_after(Exc({"retry-after": "soon"})) is None and _retry_after(Exc({})) is None


def test_importing_the_judge_does_not_import_litellm() -> None:
    code = ("import sys, pytest_sqleval.core.grading.judge, pytest_sqleval.core.llm; "
            "heavy = sorted(m for m in ('litellm', 'openai', 'httpx', 'tiktoken') if m in sys.modules); "
            "print(heavy); sys.exit(1 if heavy else 0)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          cwd=Path(__file__).resolve().parents[3])
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.asyncio
async def test_missing_litellm_is_a_skip_not_a_crash(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import pytest_sqleval.core.llm as llm

    def missing() -> None:
        raise llm.LLMError("litellm is not installed; install the extra", retryable=False)

    monkeypatch.setattr(llm, "_litellm", missing)
    result = await Judge(MODEL, cache_dir=tmp_path).judge(QUESTION, GOLD, PRED, EVIDENCE)
    assert result.equivalence == "skipped" and result.error and "not installed" in result.error


@needs_litellm
@pytest.mark.asyncio
async def test_concurrent_judgements(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    import asyncio

    llm_server.respond_with(lambda req: Reply.verdict("different" if "LIMIT" in req.prompt_text else "equivalent"))
    judge = make_judge(llm_server, tmp_path)
    preds = [PRED, f"{PRED} LIMIT 1", "SELECT 1", "SELECT 2 LIMIT 3", "SELECT 3"]
    results = await asyncio.gather(*(judge.judge(QUESTION, GOLD, p, EVIDENCE) for p in preds))
    assert [r.equivalence for r in results] == ["equivalent", "different", "equivalent", "different", "equivalent"]
    assert llm_server.calls == 5 and len(list(tmp_path.glob("*.json"))) == 5
