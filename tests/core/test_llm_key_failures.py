"""A missing or rejected API key stops an LLM backend once, naming the variable to set,
instead of failing on every case."""
from __future__ import annotations

from typing import Any

import pytest

from tests.sqleval_helpers import read_results, sqleval_ini  # noqa: F401


# -- a missing or rejected API key --------------------------------------------------
needs_llm = pytest.mark.skipif(
    __import__("importlib.util").util.find_spec("litellm") is None
    or __import__("importlib.util").util.find_spec("rank_bm25") is None,
    reason="needs the 'llm' extra: pip install -e '.[llm]'")


@needs_llm
def test_a_rejected_key_stops_the_backend_after_one_call(
        pytester: pytest.Pytester, llm_server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The server answers 401: one call in the whole run, every case a backend_error with the
    same one-line reason naming the variable to set."""
    from tests.llm_server import Reply
    from tests.sqleval_helpers import INI
    from tests.products.agent.test_agent import build_mini_suite
    pytester.makeini(INI)
    monkeypatch.setenv("SQLEVAL_LLM_MAX_ATTEMPTS", "4")
    suite = build_mini_suite(pytester.path)
    llm_server.respond_with(lambda req: Reply.error(401, "Incorrect API key provided (scripted)"))
    result = pytester.runpytest(str(suite), "-p", "no:cacheprovider", "--sqleval-backend=a1",
                                "--sqleval-model=scripted", f"--sqleval-api-base={llm_server.api_base}")
    records = read_results(pytester.path)
    assert len(records) >= 2 and all(r["status"] == "error" for r in records)
    result.assert_outcomes(errors=len(records))
    assert llm_server.calls == 1, "the key is rejected once, not retried, and not asked again per case"
    reasons = {r["case_error"].split(" failed on ", 1)[1].split(": ", 1)[1] for r in records}
    assert len(reasons) == 1, reasons
    [reason] = reasons
    assert "401" in reason and "$SQLEVAL_API_KEY" in reason and "\n" not in reason


@needs_llm
def test_a_missing_key_is_not_retried_and_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    """No key at all: the client refuses before sending anything (litellm reports it as a 500,
    which used to be retried on every case)."""
    import asyncio

    from pytest_sqleval.core.llm import LLMError, complete
    for var in ("OPENAI_API_KEY", "SQLEVAL_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(LLMError) as info:
        asyncio.run(complete([{"role": "user", "content": "hi"}], model="openai/gpt-4o-mini", api_key=None,
                             timeout=5, backoff_base=0.01))
    assert info.value.auth and info.value.attempts == 1 and not info.value.retryable
    assert "OPENAI_API_KEY" in info.value.message

