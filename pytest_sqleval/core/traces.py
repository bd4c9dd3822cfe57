"""Per-case traces (seed 000's RecordingHooks and per-question reports): what a backend
retrieved, what it asked the model, what the model answered, and why its self-check
repaired or stopped, so a failing case can be debugged from the run's outputs alone.

A backend records its steps on a :class:`Trace` and returns ``trace.to_list()`` under
``metadata["trace"]`` (:data:`TRACE_KEY`); the built-in agent does, and a
``module:function`` backend can do the same with the same methods. The record keeps it with
the case; :func:`write_trace_report` renders it (:func:`render_markdown`) to the per-question
report ``runs/<config>/traces/<qid>.md`` and names that file in the metadata
(:data:`TRACE_REPORT_KEY`), which the failure text and report.html point to. It sits below
the grader and the agent (it imports nothing of the package) so both write the same report.

Each model call records the messages added since the previous call (the model's own earlier
replies are left out: they are the previous calls' responses), so a conversation is stored
once. Bounded: each text (a message, a reply, a preview) keeps its first and last
``MAX_TEXT`` / 2 characters, and a trace keeps at most ``MAX_EVENTS`` events (the first
ones, then a count of those dropped), so a trace costs at most about 100 KiB whatever the
context size or the number of repairs."""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

TRACE_KEY = "trace"
TRACE_REPORT_KEY = "trace_report"  # metadata key: the path of the case's rendered trace
RUNS_ENV = "SQLEVAL_RUNS_DIR"  # overrides the ``runs`` folder under the rootdir
MAX_TEXT = 2_000
MAX_EVENTS = 40


def clip(text: object, limit: int = MAX_TEXT) -> str:
    """The text, or its head and tail around a note of how much was cut."""
    text = "" if text is None else str(text)
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n… [{len(text) - 2 * half:,} characters cut] …\n{text[-half:]}"


@dataclass
class Trace:
    """The steps of one generation, in order."""

    events: list[dict[str, Any]] = field(default_factory=list)
    dropped: int = 0
    _sent: int = 0  # messages already recorded with an earlier call

    def add(self, kind: str, **fields: Any) -> None:
        if len(self.events) >= MAX_EVENTS:
            self.dropped += 1
            return
        self.events.append({"kind": kind, **fields})

    def retrieval(self, tables: Sequence[str], *, scores: dict[str, float] | None = None, tokens: int | None = None,
                  warnings: int = 0, method: str = "") -> None:
        self.add("retrieval", method=method, tables=list(tables), scores=dict(scores or {}), tokens=tokens,
                 warnings=warnings)

    def llm_call(self, messages: Sequence[dict[str, Any]], response: str, *, model: str, prompt_tokens: int | None,
                 completion_tokens: int | None, latency_ms: float, cost_usd: float | None = None,
                 error: str | None = None) -> None:
        new = [m for m in messages[self._sent:] if m.get("role") != "assistant"]
        self._sent = len(messages)
        self.add("llm_call", model=model, messages=[{"role": m.get("role"), "content": clip(m.get("content"))}
                                                    for m in new],
                 response=clip(response), prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
                 latency_ms=round(latency_ms, 1), cost_usd=cost_usd, error=error)

    def self_check(self, round_no: int, sql: str | None, *, problem: dict[str, Any] | None, preview: str = "",
                   decision: str) -> None:
        self.add("self_check", round=round_no, sql=clip(sql), problem=problem, preview=clip(preview), decision=decision)

    def to_list(self) -> list[dict[str, Any]]:
        return self.events + ([{"kind": "dropped", "events": self.dropped}] if self.dropped else [])


def render_markdown(*, case_id: str, question: str, backend: str, sql: str | None,
                    events: Sequence[dict[str, Any]]) -> str:
    """The per-question report: each recorded step under its own heading."""
    lines = [f"# {case_id} [{backend}]", "", f"**Question:** {question}", "", "**Answer:**", "", "```sql",
             (sql or "").strip(), "```", ""]
    calls = 0
    for ev in events:
        kind = ev.get("kind")
        if kind == "retrieval":
            lines += [f"## Retrieval ({ev.get('method') or 'context'}): {len(ev.get('tables') or [])} tables, "
                      f"{ev.get('tokens')} tokens, {ev.get('warnings', 0)} warnings", ""]
            scores = ev.get("scores") or {}
            lines += [f"- `{t}`" + (f" (score {scores[t]:.3f})" if t in scores else "") for t in ev.get("tables") or []]
            lines.append("")
        elif kind == "llm_call":
            calls += 1
            cost = ev.get("cost_usd")
            lines += [f"## LLM call {calls}: {ev.get('model')}, {ev.get('prompt_tokens')} prompt + "
                      f"{ev.get('completion_tokens')} completion tokens, {ev.get('latency_ms')} ms"
                      + (f", ${cost:.6f}" if isinstance(cost, (int, float)) else ""), ""]
            for m in ev.get("messages") or []:
                lines += [f"**{m.get('role')}:**", "", "````text", str(m.get("content") or ""), "````", ""]
            lines += ["**response:**" if not ev.get("error") else f"**error:** {ev['error']}", "", "````text",
                      str(ev.get("response") or ""), "````", ""]
        elif kind == "self_check":
            problem = ev.get("problem")
            why = (f"{problem.get('kind')}: {problem.get('message')}" if isinstance(problem, dict)
                   else "no problem found" if ev.get("decision") == "accept" else "not run")
            lines += [f"## Self-check, round {ev.get('round')}: {why} → {ev.get('decision')}", ""]
            if ev.get("preview"):
                lines += ["````text", str(ev["preview"]), "````", ""]
        elif kind == "dropped":
            lines += [f"_{ev.get('events')} more events were not kept (at most {MAX_EVENTS} per trace)._", ""]
        else:
            lines += [f"## {kind}", "", "```json", json.dumps(ev, indent=2, default=str), "```", ""]
    return "\n".join(lines)


def runs_dir(rootdir: str | Path) -> Path:
    """Where configurations leave their predictions and traces: ``<rootdir>/runs``, or ``$SQLEVAL_RUNS_DIR``."""
    env = os.environ.get(RUNS_ENV)
    return Path(env) if env else Path(rootdir) / "runs"


def write_trace(root: Path, config: str, qid: str, text: str) -> Path:
    """``root/<config>/traces/<qid>.md``, replaced whole (a rerun of the question overwrites it)."""
    folder = root / _safe(config) / "traces"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{_safe(qid)}.md"
    tmp = folder / f".{path.name}.{os.getpid()}.tmp"
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return path


def write_trace_report(root: Path, config: str, case: Any, sql: str | None, metadata: dict[str, Any]) -> None:
    """Render ``metadata["trace"]`` (when it is a list of events) to the case's markdown report
    and name it under ``metadata["trace_report"]``; a write that fails is noted, never raised:
    a generation is not lost over its copy on disk."""
    events = metadata.get(TRACE_KEY)
    if not isinstance(events, list) or not all(isinstance(e, Mapping) for e in events):
        return
    try:
        metadata[TRACE_REPORT_KEY] = str(write_trace(root, config, case.id, render_markdown(
            case_id=case.id, question=case.question, backend=config, sql=sql, events=events)))
    except OSError as exc:
        metadata["trace_report_error"] = f"{type(exc).__name__}: {exc}"


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)
