"""Model calls keep working after ``sys.modules`` is rolled back under the LLM client.

pytester's in-process runs (and other sandboxes) snapshot ``sys.modules`` and drop what a
run imported. When that run was the first to call a model (the agent backends in
``pytester.runpytest``), litellm, aiohttp and yarl were dropped with it; a client that kept
the old litellm then mixed it with fresh copies of its lazily imported modules, and every
later call (the ``api.Grader`` judge under ``asyncio.run``) failed as
``OpenAIException - Connection error``.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.llm_server import Reply, ScriptedLLMServer

needs_litellm = pytest.mark.skipif(__import__("importlib.util").util.find_spec("litellm") is None,
                                   reason="needs the 'llm' extra: pip install -e '.[llm]'")

# Run in a fresh interpreter: the sequence needs litellm to be first imported inside the
# rolled-back run, which this test process cannot promise (other tests may have imported it).
SEQUENCE = r"""
import asyncio, sys, threading
from _pytest.pytester import SysModulesSnapshot
from pytest_sqleval.core.llm import complete

kw = dict(model="openai/scripted", api_base=sys.argv[1], api_key="sk-test", timeout=30, max_attempts=1)
messages = [{"role": "user", "content": "hi"}]

def on_a_loop_thread():
    # the generation service's pattern (agent backends): one event loop in a background thread
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        return asyncio.run_coroutine_threadsafe(complete(messages, **kw), loop).result(60).text
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()

snapshot = SysModulesSnapshot()  # what pytester.runpytest_inprocess takes around a run
first = on_a_loop_thread()
snapshot.restore()  # the run's imports (litellm, aiohttp, yarl, ...) are dropped again
second = asyncio.run(complete(messages, **kw)).text  # the judge's pattern: asyncio.run on the main thread
print("replies:", first, second)
"""


@needs_litellm
def test_a_call_after_the_first_callers_imports_were_dropped_reaches_the_model(
        llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    llm_server.respond_with(lambda req: Reply(f"answer-{len(llm_server.chat_requests)}"))
    script = tmp_path / "sequence.py"
    script.write_text(SEQUENCE)
    repo = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(repo), os.environ.get("PYTHONPATH", "")]),
           "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    done = subprocess.run([sys.executable, str(script), llm_server.api_base], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "replies: answer-1 answer-2"
    assert llm_server.calls == 2
