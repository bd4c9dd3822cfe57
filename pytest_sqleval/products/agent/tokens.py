"""Counting context tokens with the model's own tokenizer where litellm knows the model.

- litellm knows the model (it has an entry in litellm's model map, e.g. ``openai/gpt-4o-mini``
  or ``anthropic/claude-...``): ``litellm.token_counter(model=..., text=...)``, which uses
  that model's tokenizer. Recorded as ``litellm:<model>``.
- litellm does not know it (a local vLLM or Ollama model, a loopback test server):
  litellm's default tokenizer, OpenAI's ``cl100k_base``. Recorded as ``approx:cl100k_base``.
  For Llama/Qwen/Mistral-family tokenizers this is within about 10-15 % on SQL and DDL;
  the 8k cap has headroom for that in any model with a context window of 16k or more.
- litellm is not installed: ``ceil(characters / 4)``, recorded as ``approx:chars/4``.
"""
from __future__ import annotations

import math
from functools import lru_cache


class TokenCounter:
    """Counts tokens for one model string; ``name`` says which tokenizer was used."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.has_litellm = False
        self.name = "approx:chars/4"
        try:
            from ...core import load_litellm
            litellm = load_litellm()
        except Exception:  # litellm missing: the character approximation
            return
        self.has_litellm = True
        self.known = _litellm_knows(litellm, model)
        self.name = f"litellm:{model}" if self.known else "approx:cl100k_base"

    def count(self, text: str) -> int:
        if not text:
            return 0
        if self.has_litellm:
            try:
                from ...core import load_litellm
                litellm = load_litellm()  # not kept: sys.modules may have been rolled back since (pytester)
                if self.known:
                    return int(litellm.token_counter(model=self.model, text=text))
                return int(litellm.token_counter(model="gpt-3.5-turbo", text=text))  # cl100k_base
            except Exception:  # a tokenizer that fails to load (e.g. needs a download): approximate
                pass
        return math.ceil(len(text) / 4)


def _litellm_knows(litellm: object, model: str) -> bool:
    try:
        info = litellm.get_model_info(model=model)  # type: ignore[attr-defined]
    except Exception:
        return False
    return bool(info)


@lru_cache(maxsize=16)
def counter_for(model: str) -> TokenCounter:
    return TokenCounter(model)
