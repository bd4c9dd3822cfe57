"""The text-to-SQL agent of seed 002 (Lab 3): schema retrieval (BM25), generation at
temperature 0 with a pinned model, a self-check that runs each candidate on the
sandboxed engine and repairs errors, empty and suspicious results (at most 3 rounds), the
semantic layer as an ablatable input, and per-case budgets.

Configurations ``a0``, ``a1``, ``a2``, ``a3``, ``a3-sc`` (see :mod:`.config`) are
backends, registered as entry points by :mod:`.backends`:
``pytest --sqleval-backend=a0,a1,a2,a3,a3-sc --sqleval-model=... cases/vantage``.
Nothing here imports litellm until a model is called."""
from .config import ABLATION_ORDER, CONFIGS, PROMPT_VERSION, RAW_LLM, AgentConfig
from .loop import Agent, Budget, LLMSettings

__all__ = ["ABLATION_ORDER", "Agent", "AgentConfig", "Budget", "CONFIGS", "LLMSettings", "PROMPT_VERSION", "RAW_LLM"]
