"""Built-in LLM backends: ``raw_llm`` (seed 000) and the agent configurations ``a0``,
``a1``, ``a2``, ``a3``, ``a3-sc`` (seed 002).

``--sqleval-model``, ``--sqleval-provider`` and ``--sqleval-api-base`` reach these
factories through :class:`~.base.BackendOptions`, never the runner; a ``module:function``
backend never sees them.

- **Model string** (litellm's): ``--sqleval-model`` (or ``$SQLEVAL_MODEL``). With a
  provider and no ``/`` in the model, ``provider/model``; with an ``--sqleval-api-base``
  and neither, ``openai/model`` (any OpenAI-compatible server: vLLM, Ollama, LM Studio).
- **API key**: ``$SQLEVAL_API_KEY``; else, for a loopback or private-network endpoint,
  ``no-key-needed`` (a cloud key is never sent to a local server); else the provider's
  usual variable (``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``, ...); else, for any other
  explicit endpoint, ``no-key-needed``; else nothing, and litellm looks for itself.
- **Client limits** (not part of the fingerprint): ``$SQLEVAL_LLM_TIMEOUT`` seconds per
  call (60) and ``$SQLEVAL_LLM_MAX_ATTEMPTS`` (4; 429, 5xx and timeouts are retried with
  backoff that honours Retry-After; litellm's own retries are off).
- **Credentials are checked once**: a backend's first case goes alone (the others wait for
  it); a missing or rejected key (HTTP 401/403, or no key for the provider) is not retried
  and stops the backend for the run: that case and every later one is a ``backend_error``
  with the same one-line reason naming the variable to set, and no further call is made.
- **Fingerprint** (the generation cache's key): backend name, model, provider, prompt
  version, the configuration with its budgets, and a hash of the agent's code.
- **Predictions**: each generation is also written to ``runs/<config>/predictions.jsonl``
  under the rootdir (``$SQLEVAL_RUNS_DIR`` overrides the ``runs`` folder).
"""
from __future__ import annotations

import hashlib
import ipaddress
import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..errors import BackendError, UsageError
from ..llm import PROVIDER_KEY_VARS, CredentialGate, CredentialsStopped
from .base import Backend, BackendOptions, GenerationResult

SELF_HOSTED_PROVIDERS = frozenset({"ollama", "ollama_chat", "hosted_vllm", "vllm", "lm_studio", "llamafile"})
_CODE_FILES = ("agent", "backends/llm_backends.py", "llm.py")


def model_string(options: BackendOptions) -> tuple[str, str | None]:
    """``(litellm model string, provider)`` from the options (see the module docstring)."""
    model = (options.model or os.environ.get("SQLEVAL_MODEL") or "").strip()
    if not model:
        raise UsageError("the LLM backends need a model: add --sqleval-model=NAME (a litellm model string such as "
                         "openai/gpt-4o-mini or anthropic/claude-3-5-haiku-latest), optionally --sqleval-provider "
                         "and --sqleval-api-base; or set SQLEVAL_MODEL")
    provider = (options.provider or "").strip() or None
    if "/" not in model:
        if provider:
            model = f"{provider}/{model}"
        elif options.api_base:
            provider, model = "openai", f"openai/{model}"
    elif provider is None:
        provider = model.split("/", 1)[0]
    return model, provider


def is_local_endpoint(api_base: str | None) -> bool:
    """A loopback or private-network endpoint (a server of one's own)."""
    if not api_base:
        return False
    host = (urlsplit(api_base if "//" in api_base else f"//{api_base}").hostname or "").lower()
    if host in ("localhost", "host.docker.internal") or host.endswith(".local") or host.endswith(".localhost"):
        return True
    if host and "." not in host and ":" not in host:
        return True  # a bare service name (docker compose, k8s)
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return False
    return ip.is_loopback or ip.is_private or ip.is_link_local


def api_key_for(provider: str | None, api_base: str | None) -> str | None:
    key = os.environ.get("SQLEVAL_API_KEY")
    if key:
        return key
    if is_local_endpoint(api_base):
        return "no-key-needed"
    for var in PROVIDER_KEY_VARS.get(provider or "", ()):
        if os.environ.get(var):
            return os.environ[var]
    if api_base or (provider in SELF_HOSTED_PROVIDERS):
        return "no-key-needed"
    return None


def _env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if not raw:
        return default
    try:
        value = float(raw)
        if value <= 0:
            raise ValueError
        return value
    except ValueError:
        raise UsageError(f"${name}={raw!r}: expected a positive number") from None


def _code_hash() -> str:
    root = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for rel in _CODE_FILES:
        p = root / rel
        files = sorted(p.rglob("*.py")) if p.is_dir() else [p]
        for f in files:
            digest.update(f.relative_to(root).as_posix().encode() + b"\0" + f.read_bytes())
    return digest.hexdigest()[:16]


def _layers_hash(rootdir: str) -> str:
    """Semantic layers under the rootdir (suites sit at most three folders deep): editing
    one must not replay generations cached against the old text."""
    digest = hashlib.sha256()
    root = Path(rootdir)
    for pattern in ("semantic_layer.yaml", "*/semantic_layer.yaml", "*/*/semantic_layer.yaml",
                    "*/*/*/semantic_layer.yaml"):
        for f in sorted(root.glob(pattern)):
            digest.update(f.relative_to(root).as_posix().encode() + b"\0" + f.read_bytes())
    return digest.hexdigest()[:16]


def make_llm_backend(name: str, options: BackendOptions, config: Any | None = None, **llm_overrides: Any) -> Backend:
    """A backend for one agent configuration (``a0`` ... ``a3-sc``) or ``raw_llm``.

    ``config`` replaces the named configuration (e.g. other budgets); ``llm_overrides``
    set :class:`~pytest_sqleval.agent.loop.LLMSettings` fields (``timeout_s``,
    ``max_attempts``, ``backoff_base``, ``api_key``)."""
    from ..agent.config import CONFIGS, PROMPT_VERSION, RAW_LLM
    from ..agent.loop import Agent, LLMSettings
    from ..agent.runs import record_prediction, runs_dir
    if config is None:
        if name == "raw_llm":
            config = RAW_LLM
        elif name in CONFIGS:
            config = CONFIGS[name]
        else:
            raise UsageError(f"unknown agent configuration {name!r}; known: raw_llm, {', '.join(CONFIGS)}")
    model, provider = model_string(options)
    settings = LLMSettings(model=model, provider=provider, api_base=options.api_base,
                           api_key=api_key_for(provider, options.api_base),
                           timeout_s=_env_float("SQLEVAL_LLM_TIMEOUT", 60.0),
                           max_attempts=int(_env_float("SQLEVAL_LLM_MAX_ATTEMPTS", 4)))
    if llm_overrides:
        settings = replace(settings, **llm_overrides)
    out_root = runs_dir(options.rootdir)

    def on_result(case: Any, result: GenerationResult) -> None:
        m = result.metadata
        line = {"qid": case.id, "sql": result.sql, "config": config.name, "n_llm_calls": m.get("n_llm_calls"),
                "latency_ms": m.get("latency_ms"), "prompt_tokens": m.get("prompt_tokens"),
                "completion_tokens": m.get("completion_tokens"), "total_tokens": m.get("total_tokens"),
                "cost_usd": m.get("cost_usd"), "repair_rounds": m.get("repair_rounds"), "model": m.get("model"),
                "provider": m.get("provider"), "prompt_version": m.get("prompt_version"), "suite": case.suite}
        try:
            m["predictions_file"] = str(record_prediction(out_root, config.name, line))
        except OSError as exc:  # never fail a generation over its copy on disk
            m["predictions_error"] = f"{type(exc).__name__}: {exc}"

    agent = Agent(config, settings, backend_name=name, on_result=on_result)
    fingerprint_src = json.dumps({"kind": "sqleval-llm-backend", "name": name, "model": model, "provider": provider,
                                  "prompt_version": PROMPT_VERSION, "config": config.fingerprint_dict(),
                                  "code": _code_hash(), "layers": _layers_hash(options.rootdir)}, sort_keys=True)
    gated = _gated(name, provider, settings.api_base, agent.generate)
    backend = Backend(name, name, gated, hashlib.sha256(fingerprint_src.encode()).hexdigest()[:24],
                      f"{config.components} [{model}, prompt {PROMPT_VERSION}]")
    backend.agent = agent  # type: ignore[attr-defined]
    return backend


def key_hint(provider: str | None, api_base: str | None) -> str:
    """Which variable holds the key, for an error message."""
    names = ["SQLEVAL_API_KEY"]
    if not is_local_endpoint(api_base):
        names += PROVIDER_KEY_VARS.get(provider or "", ())
    return " or ".join(f"${n}" for n in names)


def _gated(name: str, provider: str | None, api_base: str | None, generate: Any) -> Any:
    """``generate`` behind a :class:`~pytest_sqleval.llm.CredentialGate`: credentials are checked
    with the backend's first case, and after a key failure every case of the backend raises the
    same :class:`BackendError` at once, without calling the API. A case error rather than a
    usage error, because an ablation run's other backends are still graded and no case goes
    unrecorded; the gate fails the run."""
    gate = CredentialGate(f"Backend {name}", key_hint(provider, api_base))

    async def gated(case: Any) -> Any:
        try:
            return await gate.run(lambda: generate(case))
        except CredentialsStopped as stop:
            raise BackendError(stop.reason) from None

    gated.__name__ = getattr(generate, "__name__", "generate")
    gated.gate = gate  # type: ignore[attr-defined]
    return gated


def raw_llm(options: BackendOptions) -> Backend:
    return make_llm_backend("raw_llm", options)


def _agent_factory(name: str) -> Any:
    def factory(options: BackendOptions) -> Backend:
        return make_llm_backend(name, options)
    factory.__name__ = f"agent_{name.replace('-', '_')}"
    factory.__doc__ = f"The agent configuration {name}."
    return factory


AGENT_FACTORIES = {name: _agent_factory(name) for name in ("a0", "a1", "a2", "a3", "a3-sc")}
