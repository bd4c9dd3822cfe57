"""What every LLM backend shares, whoever builds it: the model string, the API key, the
client limits and the credential gate. The agent's configurations (``raw_llm``, ``a0`` ...
``a3-sc``) are built on these in :mod:`pytest_sqleval.products.agent.backends`; this module knows
nothing of them, so the grader never depends on the agent.

``--sqleval-model``, ``--sqleval-provider`` and ``--sqleval-api-base`` reach backend
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
"""
from __future__ import annotations

import ipaddress
import os
from typing import Any
from urllib.parse import urlsplit

from ..errors import BackendError, UsageError
from ..llm import PROVIDER_KEY_VARS, CredentialGate, CredentialsStopped
from .base import BackendOptions

SELF_HOSTED_PROVIDERS = frozenset({"ollama", "ollama_chat", "hosted_vllm", "vllm", "lm_studio", "llamafile"})


def model_string(options: BackendOptions) -> tuple[str, str | None]:
    """``(litellm model string, provider)`` from the options (see the module docstring)."""
    model = (options.model or os.environ.get("SQLEVAL_MODEL") or "").strip()
    if not model:
        raise UsageError("the LLM backends need a model: add --sqleval-model=NAME (a litellm model string such as "
                         "openai/gpt-4o-mini or anthropic/claude-3-5-haiku-latest), optionally --sqleval-provider "
                         "and --sqleval-api-base; or set SQLEVAL_MODEL. Offline, with no model: "
                         "--sqleval-model=mockllm/heuristic (a deterministic responder, not a model)")
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


def client_limits() -> tuple[float, int]:
    """``(timeout_s, max_attempts)`` for one model call, from the environment."""
    return _env_float("SQLEVAL_LLM_TIMEOUT", 60.0), int(_env_float("SQLEVAL_LLM_MAX_ATTEMPTS", 4))


def key_hint(provider: str | None, api_base: str | None) -> str:
    """Which variable holds the key, for an error message."""
    names = ["SQLEVAL_API_KEY"]
    if not is_local_endpoint(api_base):
        names += PROVIDER_KEY_VARS.get(provider or "", ())
    return " or ".join(f"${n}" for n in names)


def credential_gated(name: str, provider: str | None, api_base: str | None, generate: Any) -> Any:
    """``generate`` behind a :class:`~pytest_sqleval.core.llm.CredentialGate`: credentials are checked
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
