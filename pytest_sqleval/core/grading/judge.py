"""The LLM judge layer: an advisory opinion on whether predicted SQL answers the question as
the gold SQL does, given the deterministic evidence the other layers gathered.

It asks a model (through :mod:`pytest_sqleval.core.llm`, so litellm loads only when a call is
made) for a strict JSON verdict and parses it forgivingly. It never raises for a bad
answer: malformed, empty or out-of-vocabulary output, or a failed call, yields
``equivalence="skipped"`` with the reason in ``error``. Good answers are cached on disk,
keyed by model, prompt version and every input, so a rerun makes no call.

Credentials are checked once, as for the LLM backends (the shared
:class:`~pytest_sqleval.core.llm.CredentialGate`): a missing or rejected key stops the judge for
the run, and every later case the judge would call the model for is ``skipped`` with the
same one-line reason, naming the variable to set, without a call. A cached answer is still
served (it needs no call).
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import math
import os
import re
import tempfile
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Mapping

__all__ = ["EQUIVALENCES", "JUDGE_PROMPT_VERSION", "Judge", "JudgeResult", "build_messages", "parse_verdict"]

JUDGE_PROMPT_VERSION = "judge-v1"
EQUIVALENCES = ("equivalent", "partially_equivalent", "different")
_ALIASES = {
    "partial": "partially_equivalent",
    "partially": "partially_equivalent",
    "partly_equivalent": "partially_equivalent",
    "not_equivalent": "different",
    "non_equivalent": "different",
    "inequivalent": "different",
}
_MAX_EVIDENCE_CHARS = 8000
_MAX_RATIONALE_CHARS = 1000

_SYSTEM_PROMPT = """\
You review SQL written by a text-to-SQL system. Decide whether the PREDICTED query answers \
the QUESTION the same way the GOLD query does.

- "equivalent": same answer as the gold on any data the schema allows. Column aliases, \
formatting, join syntax, CTE vs subquery, and row order when the question asks for none \
do not matter.
- "partially_equivalent": answers the question in substance but differs in a minor, \
defensible way (an extra or missing non-essential column, rounding, tie or NULL handling \
at the edges, a reasonable reading of an ambiguous question).
- "different": answers another question or returns a different result.

The DETERMINISTIC EVIDENCE comes from parsing, executing and comparing both queries; \
trust it over your own reading on facts such as row counts and values.

Reply with exactly one JSON object and nothing else (no prose, no code fence):
{"equivalence": "equivalent" | "partially_equivalent" | "different", \
"rationale": "<one or two sentences>", "confidence": <number from 0 to 1>}"""


@dataclass
class JudgeResult:
    """The judge's opinion on one case (``skipped`` when it could not give one)."""

    equivalence: str  # equivalent | partially_equivalent | different | skipped
    rationale: str
    confidence: float | None
    model: str | None
    prompt_version: str
    cached: bool
    error: str | None
    usage: dict[str, Any] | None = field(default=None)  # tokens, cost_usd, latency_ms, attempts of the call
    note: str | None = None  # what was dropped from the judge's answer (a confidence that is no number in [0, 1])

    def __post_init__(self) -> None:
        """Whoever made it (a reply, the cache, a plugin), the confidence is a number in [0, 1] or None."""
        confidence, note = checked_confidence(self.confidence)
        self.confidence = confidence
        if note and not self.note:
            self.note = note

    @property
    def skipped(self) -> bool:
        return self.equivalence == "skipped"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "JudgeResult":
        return cls(
            equivalence=str(data["equivalence"]), rationale=str(data.get("rationale") or ""),
            confidence=data.get("confidence"), model=data.get("model"),
            prompt_version=str(data.get("prompt_version") or JUDGE_PROMPT_VERSION),
            cached=bool(data.get("cached", False)), error=data.get("error"), usage=data.get("usage"),
            note=data.get("note") if isinstance(data.get("note"), str) else None)


def checked_confidence(value: Any) -> tuple[float | None, str | None]:
    """A judge's confidence as a float in [0, 1] (a numeric string is read as its number),
    else None and a note saying what was dropped: reports format it as a number."""
    if value is None:
        return None, None
    number = value
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            number = None
    if isinstance(number, bool) or not isinstance(number, (int, float)) or not math.isfinite(number) \
            or not 0 <= number <= 1:
        return None, f"the judge's confidence {_snippet(repr(value), 60)} is not a number from 0 to 1; left out"
    return float(number), None


def evidence_json(evidence: Mapping[str, Any] | None) -> str:
    """The evidence as compact, key-sorted JSON (stable, so it can key the cache)."""
    text = json.dumps(dict(evidence or {}), sort_keys=True, default=str, separators=(",", ":"),
                      ensure_ascii=False)
    if len(text) > _MAX_EVIDENCE_CHARS:
        text = text[:_MAX_EVIDENCE_CHARS] + " ...(truncated)"
    return text


def build_messages(question: str, gold_sql: str, predicted_sql: str,
                   evidence: Mapping[str, Any] | None) -> list[dict[str, str]]:
    """The chat messages of prompt version :data:`JUDGE_PROMPT_VERSION`."""
    user = (f"QUESTION:\n{question.strip()}\n\n"
            f"GOLD SQL:\n{gold_sql.strip()}\n\n"
            f"PREDICTED SQL:\n{predicted_sql.strip()}\n\n"
            f"DETERMINISTIC EVIDENCE (JSON):\n{evidence_json(evidence)}")
    return [{"role": "system", "content": _SYSTEM_PROMPT}, {"role": "user", "content": user}]


_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)```", re.DOTALL)


def _json_objects(text: str) -> list[dict[str, Any]]:
    """Every JSON object that decodes at some ``{`` of ``text``, outermost first."""
    decoder = json.JSONDecoder()
    found: list[dict[str, Any]] = []
    pos = text.find("{")
    while pos != -1:
        try:
            obj, end = decoder.raw_decode(text, pos)
        except ValueError:
            pos = text.find("{", pos + 1)
            continue
        if isinstance(obj, dict):
            found.append(obj)
        pos = text.find("{", end)
    return found


def _snippet(text: str, limit: int = 120) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def parse_verdict(text: str | None) -> tuple[dict[str, Any] | None, str | None]:
    """Parse a judge reply into ``{"equivalence", "rationale", "confidence"}``.

    Tolerates code fences, prose before and after, and a JSON object nested among others.
    Returns ``(verdict, None)`` or ``(None, reason)``.
    """
    if text is None or not text.strip():
        return None, "empty judge reply"
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    objects = [obj for chunk in candidates for obj in _json_objects(chunk)]
    if not objects:
        return None, f"judge reply is not a JSON object: {_snippet(text)!r}"
    verdict = next((o for o in objects if "equivalence" in o), None)
    if verdict is None:
        return None, f"judge reply has no 'equivalence' key: {_snippet(text)!r}"
    raw = verdict.get("equivalence")
    label = re.sub(r"[\s-]+", "_", raw.strip().lower()) if isinstance(raw, str) else ""
    label = _ALIASES.get(label, label)
    if label not in EQUIVALENCES:
        return None, f"judge reply has invalid equivalence {raw!r} (expected one of {', '.join(EQUIVALENCES)})"
    rationale = verdict.get("rationale")
    rationale = rationale if isinstance(rationale, str) else ("" if rationale is None else json.dumps(rationale))
    confidence, note = checked_confidence(verdict.get("confidence"))
    out: dict[str, Any] = {"equivalence": label, "rationale": rationale.strip()[:_MAX_RATIONALE_CHARS],
                           "confidence": confidence}
    if note:
        out["note"] = note
    return out, None


def judge_key_hint(model: str, api_base: str | None) -> str:
    """Which variable holds the judge's key, for an error message: ``$SQLEVAL_JUDGE_API_KEY``,
    then ``$OPENAI_API_KEY`` for an explicit (OpenAI-compatible) endpoint, else the model's
    provider's usual variable."""
    from ..llm import PROVIDER_KEY_VARS
    names = ["SQLEVAL_JUDGE_API_KEY"]
    if api_base:
        names.append("OPENAI_API_KEY")
    elif "/" in model:
        names += PROVIDER_KEY_VARS.get(model.split("/", 1)[0], ())
    return " or ".join(f"${n}" for n in names)


class Judge:
    """An LLM judge bound to one model, endpoint and answer cache.

    ``model`` is a litellm model name (``openai/<name>`` for any OpenAI-compatible
    ``api_base``). ``cache_dir`` holds one JSON file per answered question.
    """

    def __init__(self, model: str, *, api_base: str | None = None, api_key: str | None = None,
                 cache_dir: Path, timeout: float = 60, max_attempts: int = 4,
                 backoff_base: float = 0.5, key_hint: str | None = None) -> None:
        from ..llm import CredentialGate  # light module; litellm itself loads on the call
        self.model = model
        self.api_base = api_base
        self.api_key = api_key
        self.cache_dir = Path(cache_dir)
        self.timeout = timeout
        self.max_attempts = max_attempts
        self.backoff_base = backoff_base
        self.prompt_version = JUDGE_PROMPT_VERSION
        self.gate = CredentialGate("The LLM judge", key_hint or judge_key_hint(model, api_base))

    def cache_key(self, question: str, gold_sql: str, predicted_sql: str,
                  evidence: Mapping[str, Any] | None) -> str:
        payload = json.dumps([self.model, self.prompt_version, question, gold_sql, predicted_sql,
                              evidence_json(evidence)], ensure_ascii=False)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()

    def _skipped(self, error: str, usage: dict[str, Any] | None = None) -> JudgeResult:
        return JudgeResult("skipped", "", None, self.model, self.prompt_version, False, error, usage)

    async def judge(self, question: str, gold_sql: str, predicted_sql: str,
                    evidence: Mapping[str, Any] | None = None) -> JudgeResult:
        """The verdict for one case; never raises (a failure is a ``skipped`` result)."""
        try:
            key = self.cache_key(question, gold_sql, predicted_sql, evidence)
            messages = build_messages(question, gold_sql, predicted_sql, evidence)
        except Exception as exc:
            return self._skipped(f"could not build the judge prompt: {type(exc).__name__}: {exc}")
        cached = self._read_cache(key)
        if cached is not None:
            return cached

        from ..llm import CredentialsStopped, LLMError, complete  # light; litellm itself loads on the call

        try:
            reply = await self.gate.run(lambda: complete(
                messages, model=self.model, api_base=self.api_base, api_key=self.api_key, timeout=self.timeout,
                max_attempts=self.max_attempts, temperature=0, backoff_base=self.backoff_base))
        except CredentialsStopped as stop:
            return self._skipped(f"judge call failed: {stop.reason}")
        except LLMError as exc:
            return self._skipped(f"judge call failed ({'transient' if exc.retryable else 'rejected'}): {exc.message}",
                                 {"attempts": exc.attempts})
        except Exception as exc:  # a bug below us must not take the run down
            return self._skipped(f"judge call failed: {type(exc).__name__}: {exc}")
        usage = {"prompt_tokens": reply.prompt_tokens, "completion_tokens": reply.completion_tokens,
                 "cost_usd": reply.cost_usd, "latency_ms": reply.latency_ms, "attempts": reply.attempts,
                 "answered_by": reply.model}
        verdict, error = parse_verdict(reply.text)
        if verdict is None:
            return self._skipped(error or "unparseable judge reply", usage)
        result = JudgeResult(verdict["equivalence"], verdict["rationale"], verdict["confidence"], self.model,
                             self.prompt_version, False, None, usage, verdict.get("note"))
        self._write_cache(key, result)
        return result

    @classmethod
    def configured(cls, model: str, *, api_base: str | None, cache_dir: Path) -> "Judge":
        """The judge of a run or an ``api.Grader``: its key from ``SQLEVAL_JUDGE_API_KEY``, else
        the provider's usual variable; a self-hosted endpoint may need no key, but the OpenAI
        client insists on one."""
        api_key = os.environ.get("SQLEVAL_JUDGE_API_KEY") or (
            os.environ.get("OPENAI_API_KEY", "no-key-needed") if api_base else None)
        return cls(model, api_base=api_base, api_key=api_key, cache_dir=cache_dir)

    def call(self, evidence: Any) -> JudgeResult:
        """The judgement of one candidate from the grader's evidence (``verdict.decide``'s judge)."""
        from .verdict import judge_evidence
        return self.judge_sync(evidence.question or "", evidence.gold_sql or "", evidence.sql,
                               judge_evidence(evidence.layers))

    def judge_sync(self, question: str, gold_sql: str, predicted_sql: str,
                   evidence: Mapping[str, Any] | None = None) -> JudgeResult:
        """:meth:`judge` for synchronous callers. Without a running event loop it runs on a
        fresh one; inside a running loop (where it cannot nest) it runs on a helper thread
        and blocks the caller until done — prefer ``await judge(...)`` there."""
        coro_args = (question, gold_sql, predicted_sql, evidence)
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.judge(*coro_args))
        box: list[JudgeResult] = []

        def run() -> None:
            box.append(asyncio.run(self.judge(*coro_args)))

        worker = threading.Thread(target=run, name="sqleval-judge", daemon=True)
        worker.start()
        worker.join()
        return box[0] if box else self._skipped("judge thread ended without a result")

    # -- cache -------------------------------------------------------------------
    def _path(self, key: str) -> Path:
        return self.cache_dir / f"{key}.json"

    def _read_cache(self, key: str) -> JudgeResult | None:
        try:
            data = json.loads(self._path(key).read_text(encoding="utf-8"))
            result = JudgeResult.from_dict(data["result"])
        except (OSError, ValueError, KeyError, TypeError):
            return None  # missing or unreadable: ask again
        if result.equivalence not in EQUIVALENCES:
            return None
        result.cached = True
        return result

    def _write_cache(self, key: str, result: JudgeResult) -> None:
        """Atomic write (temp file + rename), safe across xdist workers; failures are ignored."""
        tmp: str | None = None
        try:
            self.cache_dir.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{key[:16]}.", suffix=".tmp", dir=self.cache_dir)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump({"key": key, "result": result.to_dict()}, fh, sort_keys=True, indent=1)
            os.replace(tmp, self._path(key))
        except OSError:
            if tmp is not None:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
