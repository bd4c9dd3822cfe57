"""A small async chat-completion client over litellm, shared by the LLM judge and LLM backends.

litellm costs seconds to import, so it is imported on the first call, never at module
import. Retries are ours (litellm's and the OpenAI SDK's are switched off, since they
stack): exponential backoff with jitter, honouring ``Retry-After`` on 429/5xx, a bounded
number of attempts and a per-call timeout. A rejected key is never retried: HTTP 401/403,
litellm's ``AuthenticationError``/``PermissionDeniedError``, or the client's own "missing
credentials" (which litellm reports as a 500) raise :class:`LLMError` with ``auth`` set
after one attempt.

:class:`CredentialGate` is the stop-after-one-key-failure mechanism shared by the LLM
backends and the LLM judge: the first call goes alone, and once a key is missing or rejected
every later call fails at once with the same one-line reason, naming the variable to set.
"""
from __future__ import annotations

import asyncio
import email.utils
import os
import random
import re
import sys
import threading
import time
from dataclasses import asdict, dataclass
from types import ModuleType
from typing import Any, Awaitable, Callable, Mapping, Sequence, TypeVar

__all__ = ["CredentialGate", "CredentialsStopped", "LLMError", "LLMReply", "PROVIDER_KEY_VARS", "complete",
           "caused_by_auth_failure"]

T = TypeVar("T")
PROVIDER_KEY_VARS: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",), "text-completion-openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",), "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "mistral": ("MISTRAL_API_KEY",), "groq": ("GROQ_API_KEY",), "deepseek": ("DEEPSEEK_API_KEY",),
    "together_ai": ("TOGETHERAI_API_KEY", "TOGETHER_API_KEY"), "openrouter": ("OPENROUTER_API_KEY",),
    "fireworks_ai": ("FIREWORKS_AI_API_KEY", "FIREWORKS_API_KEY"), "cohere": ("COHERE_API_KEY",),
    "azure": ("AZURE_API_KEY", "AZURE_OPENAI_API_KEY"), "xai": ("XAI_API_KEY",), "perplexity": ("PERPLEXITYAI_API_KEY",),
    "hosted_vllm": ("HOSTED_VLLM_API_KEY",), "ollama": ("OLLAMA_API_KEY",), "ollama_chat": ("OLLAMA_API_KEY",),
}

RETRYABLE_STATUS = frozenset({408, 409, 425, 429})
AUTH_STATUS = frozenset({401, 403})
AUTH_ERRORS = frozenset({"AuthenticationError", "PermissionDeniedError"})
# The OpenAI client (and litellm for other providers) finds no key before any request is sent;
# litellm wraps that as an InternalServerError (500), which must not be retried.
_MISSING_KEY = re.compile(r"missing credentials|api_key client option must be set|no api key|"
                          r"api key (is )?(missing|not (set|found|provided))", re.IGNORECASE)
MAX_RETRY_DELAY = 60.0


@dataclass(frozen=True)
class LLMReply:
    """One model answer with what it cost."""

    text: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None
    latency_ms: float
    attempts: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class LLMError(Exception):
    """A model call that failed for good; ``retryable`` says whether the last failure was
    transient (rate limit, 5xx, timeout, connection) rather than a rejected request."""

    def __init__(self, message: str, retryable: bool, *, attempts: int = 0, status: int | None = None,
                 auth: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.retryable = retryable
        self.attempts = attempts
        self.status = status
        self.auth = auth  # the credentials were missing or rejected: no later call can succeed


_litellm_module: ModuleType | None = None
_calls_in_flight: dict[asyncio.AbstractEventLoop, int] = {}  # per event loop


def _litellm() -> ModuleType:
    """litellm as ``sys.modules`` holds it now, imported if it is not there.

    A module object kept from an earlier import is not reused once ``sys.modules`` no longer
    holds it (pytester's in-process runs, and other sandboxes, roll ``sys.modules`` back after
    a run that imported litellm): its function-level imports would load fresh copies of
    yarl/aiohttp/openai whose types the old copies reject, and every call would fail as
    ``OpenAIException - Connection error`` (yarl: "Constructor parameter should be str")."""
    global _litellm_module
    if _litellm_module is None or sys.modules.get("litellm") is not _litellm_module:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no cost-map fetch at import
        try:
            import litellm
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise LLMError("litellm is not installed; install the extra: pip install 'pytest-sqleval[llm]'",
                           retryable=False) from exc
        litellm.suppress_debug_info = True
        _litellm_module = litellm
    return _litellm_module


def load_litellm() -> ModuleType:
    """litellm, imported once and quiet (no cost-map fetch, no debug banner); ``LLMError``
    when it is not installed. For a product that counts tokens with its tokenizers."""
    return _litellm()


def _status(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


def is_auth_failure(exc: BaseException) -> bool:
    """A missing or rejected key: retrying, or asking again for the next case, cannot help."""
    if _status(exc) in AUTH_STATUS:
        return True
    if any(cls.__name__ in AUTH_ERRORS for cls in type(exc).__mro__):
        return True
    return bool(_MISSING_KEY.search(str(exc)))


def caused_by_auth_failure(exc: BaseException) -> bool:
    """Whether ``exc`` is, or was raised from, an :class:`LLMError` for missing or rejected
    credentials (a backend turns an LLMError into its own error and keeps it as the cause)."""
    seen: BaseException | None = exc
    for _ in range(5):
        if seen is None:
            return False
        if isinstance(seen, LLMError):
            return seen.auth
        seen = seen.__cause__ or seen.__context__
    return False


class CredentialsStopped(Exception):
    """A :class:`CredentialGate` refused a call: the key was missing or rejected earlier (or
    just now). ``reason`` is the one line every refused call reports."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class CredentialGate:
    """Checks credentials once, with the first call, and stops the caller for the rest of the
    run when they are missing or rejected.

    The first call runs alone; the others wait until it has reached the model once (success,
    or a failure other than credentials, lets them all go). After an authentication failure,
    every call raises the same :class:`CredentialsStopped` at once, without calling the API:
    one clear reason per case instead of N x attempts rejected calls. ``subject`` names what
    stops ("Backend a1", "The LLM judge"); ``key_hint`` the variable(s) to set. Polls with a
    lock, not an asyncio primitive: the caller may be awaited on more than one event loop."""

    def __init__(self, subject: str, key_hint: str) -> None:
        self.subject, self.key_hint = subject, key_hint
        self.lock = threading.Lock()
        self.checked = False  # a first call got through the credentials check
        self.probing = False
        self.stopped: str | None = None

    async def run(self, call: Callable[[], Awaitable[T]]) -> T:
        """``await call()`` behind the gate; raises :class:`CredentialsStopped` for a key failure."""
        prober = await self._admit()
        try:
            result = await call()
        except Exception as exc:
            if not caused_by_auth_failure(exc):
                raise
            with self.lock:
                if self.stopped is None:
                    self.stopped = (f"{_short(exc)} -- the API key was missing or rejected; set {self.key_hint}. "
                                    f"{self.subject} is stopped for this run: no further model calls")
                reason = self.stopped
            raise CredentialsStopped(reason) from None
        finally:
            if prober:
                with self.lock:
                    self.probing = False
        if prober:
            with self.lock:
                self.checked = True
        return result

    async def _admit(self) -> bool:
        """Wait for the first call's verdict on the credentials; True: this call is the first."""
        while True:
            with self.lock:
                if self.stopped is not None:
                    raise CredentialsStopped(self.stopped)
                if self.checked:
                    return False
                if not self.probing:
                    self.probing = True
                    return True
            await asyncio.sleep(0.02)  # bounded: the first call's attempts are (timeout x attempts)


def _is_retryable(exc: BaseException) -> bool:
    if is_auth_failure(exc):
        return False
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError, ConnectionError)):
        return True
    status = _status(exc)
    return status is not None and (status in RETRYABLE_STATUS or status >= 500)


def _retry_after(exc: BaseException) -> float | None:
    """Seconds the server asked us to wait (``retry-after-ms`` or ``Retry-After``), if any."""
    candidates: list[Any] = [getattr(exc, "litellm_response_headers", None), getattr(exc, "headers", None)]
    response = getattr(exc, "response", None)
    candidates.append(getattr(response, "headers", None))
    for headers in candidates:
        if not headers:
            continue
        try:
            ms = headers.get("retry-after-ms")
            raw = headers.get("retry-after")
        except AttributeError:
            continue
        try:
            if ms is not None:
                return max(0.0, float(ms) / 1000.0)
            if raw is not None:
                return max(0.0, float(raw))
        except (TypeError, ValueError):
            try:
                when = email.utils.parsedate_to_datetime(str(raw))
                return max(0.0, when.timestamp() - time.time())
            except (TypeError, ValueError, IndexError):
                continue
    return None


def _backoff(attempt: int, base: float) -> float:
    """Exponential backoff with jitter in [half, full] of ``base * 2**(attempt-1)``."""
    ceiling = min(MAX_RETRY_DELAY, base * 2 ** (attempt - 1))
    return random.uniform(ceiling / 2, ceiling)


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 300 else text[:297] + "..."


async def _flush_litellm_logging() -> None:
    """Let litellm's background logging finish on this loop, so nothing is left pending on
    a loop that may close next (``asyncio.run`` per call, pytest's per-test loops). Only the
    last call in flight on a loop flushes: the flush waits for every call's logging, so
    flushing in each of C concurrent calls would hold each call's slot for the others'
    (tens of milliseconds per call at C=32)."""
    try:
        from litellm.litellm_core_utils.logging_worker import GLOBAL_LOGGING_WORKER
        await asyncio.wait_for(GLOBAL_LOGGING_WORKER.flush(), 2.0)
    except Exception:  # best effort: logging is never worth failing a call
        pass


async def complete(
    messages: Sequence[Mapping[str, Any]],
    *,
    model: str,
    api_base: str | None = None,
    api_key: str | None = None,
    timeout: float = 60,
    max_attempts: int = 4,
    temperature: float = 0,
    backoff_base: float = 0.5,
) -> LLMReply:
    """Ask ``model`` (a litellm model name, e.g. ``openai/gpt-4o-mini``; use the ``openai/``
    prefix for any OpenAI-compatible ``api_base``) for one chat completion.

    Raises :class:`LLMError` when the request is rejected or every attempt failed. A
    ``mockllm/...`` model is answered offline by :mod:`pytest_sqleval.core.mockllm`, not a model.
    """
    from . import mockllm
    if mockllm.is_mock(model):
        started = time.monotonic()
        body = mockllm.respond(messages, model)
        await asyncio.sleep(0)  # a turn of the loop, as a real call gives, so calls interleave
        return LLMReply(text=body["choices"][0]["message"]["content"], model=model,
                        prompt_tokens=body["usage"]["prompt_tokens"], completion_tokens=body["usage"]["completion_tokens"],
                        cost_usd=0.0, latency_ms=round((time.monotonic() - started) * 1000.0, 1), attempts=1)
    litellm = _litellm()
    attempts = max(1, int(max_attempts))
    started = time.monotonic()
    loop = asyncio.get_running_loop()
    _calls_in_flight[loop] = _calls_in_flight.get(loop, 0) + 1
    try:
        for attempt in range(1, attempts + 1):
            try:
                response = await asyncio.wait_for(
                    litellm.acompletion(
                        model=model, messages=[dict(m) for m in messages], api_base=api_base, api_key=api_key,
                        temperature=temperature, timeout=timeout, max_retries=0),
                    timeout + 1.0)
            except Exception as exc:  # litellm maps provider errors onto OpenAI's classes
                if is_auth_failure(exc):
                    status = _status(exc)
                    raise LLMError(f"authentication failed{f' (HTTP {status})' if status in AUTH_STATUS else ''}: "
                                   f"{_short(exc)}", False, attempts=attempt, status=status, auth=True) from exc
                retryable = _is_retryable(exc)
                if not retryable or attempt == attempts:
                    kind = "timeout" if isinstance(exc, (asyncio.TimeoutError, TimeoutError)) else type(exc).__name__
                    raise LLMError(f"{kind} after {attempt} attempt(s): {_short(exc)}", retryable,
                                   attempts=attempt, status=_status(exc)) from exc
                delay = _backoff(attempt, backoff_base)
                hinted = _retry_after(exc)
                if hinted is not None:
                    delay = max(delay, min(hinted, MAX_RETRY_DELAY))
                await asyncio.sleep(delay)
                continue
            return _reply(litellm, response, model, attempt, started)
        raise AssertionError("unreachable")  # pragma: no cover
    finally:
        _calls_in_flight[loop] -= 1
        if not _calls_in_flight[loop]:
            del _calls_in_flight[loop]
            await _flush_litellm_logging()


def _reply(litellm: ModuleType, response: Any, model: str, attempts: int, started: float) -> LLMReply:
    try:
        text = response.choices[0].message.content or ""
    except (AttributeError, IndexError, TypeError):
        text = ""
    usage = getattr(response, "usage", None)
    try:
        cost: float | None = float(litellm.completion_cost(completion_response=response))
    except Exception:  # unknown model (a loopback or local server): no price
        cost = None
    return LLMReply(
        text=text if isinstance(text, str) else str(text),
        model=str(getattr(response, "model", None) or model),
        prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
        completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        cost_usd=cost,
        latency_ms=round((time.monotonic() - started) * 1000.0, 1),
        attempts=attempts,
    )
