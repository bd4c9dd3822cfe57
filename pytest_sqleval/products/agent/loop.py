"""The agent loop: retrieve -> generate -> self-check -> repair (at most 3 rounds), under
per-case budgets, with every call, token and millisecond recorded.

One :class:`Agent` per configuration; ``await agent.generate(case)`` returns a
:class:`~pytest_sqleval.core.backends.base.GenerationResult` whose metadata is the case's
bill: ``n_llm_calls``, ``prompt_tokens``, ``completion_tokens``, ``total_tokens``,
``cost_usd`` (when litellm knows the price of every call), ``latency_ms``,
``repair_rounds``, the context tables and tokens, the budget and whether it ran out, the
self-check's history, and the case's trace (:mod:`.trace`: the retrieval, every model call's
messages and reply, every self-check round and its decision).

Failure policy:
- the *first* model call failing for good (after the client's retries on 429/5xx/timeouts)
  raises :class:`~pytest_sqleval.core.errors.BackendError`: the case is an error, the run goes on;
- a *repair* call failing ends the repairs; the best candidate so far is the answer;
- a reply with no SQL in it is repaired when the self-check is on; otherwise (or when the
  repairs run out) the reply itself is the answer, and grading fails it as a parse error:
  a model that talks instead of answering is wrong, not broken.
"""
from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

from ...core import BackendError, BenchmarkCase, GenerationResult
from .config import PROMPT_VERSION, AgentConfig
from .context import build_context
from .extract import extract_sql
from .prompts import question_prompt, repair_prompt, system_prompt
from .schema import SuiteWorkspace, workspace_for
from .selfcheck import MAX_ROWS, Problem, inspect
from .tokens import counter_for
from .trace import TRACE_KEY, Trace


@dataclass
class LLMSettings:
    """How to reach the model: a litellm model string and the client's limits."""

    model: str
    provider: str | None = None
    api_base: str | None = None
    api_key: str | None = None
    timeout_s: float = 60.0
    max_attempts: int = 4
    backoff_base: float = 0.5


@dataclass
class Budget:
    """Per-case limits, checked before every model call."""

    max_llm_calls: int
    max_total_tokens: int
    max_latency_s: float
    started: float = field(default_factory=time.monotonic)
    calls: int = 0
    attempts: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    costs: list[float | None] = field(default_factory=list)
    exhausted: str | None = None

    def refuse(self, next_prompt_tokens: int) -> str | None:
        """Why the next call may not be made (and remember it), or None."""
        if self.calls >= self.max_llm_calls:
            self.exhausted = f"calls: {self.calls} of {self.max_llm_calls} used"
        elif self.prompt_tokens + self.completion_tokens + next_prompt_tokens > self.max_total_tokens:
            self.exhausted = (f"tokens: {self.prompt_tokens + self.completion_tokens} used + {next_prompt_tokens} "
                              f"for the next call > {self.max_total_tokens}")
        elif time.monotonic() - self.started > self.max_latency_s:
            self.exhausted = f"latency: {time.monotonic() - self.started:.1f} s > {self.max_latency_s:g} s"
        return self.exhausted

    @property
    def cost_usd(self) -> float | None:
        if not self.costs or any(c is None for c in self.costs):
            return None
        return round(sum(c for c in self.costs if c is not None), 8)


@dataclass
class Candidate:
    sql: str | None
    reply: str
    extraction: str
    problem: Problem | None = None
    preview: str = ""
    checked: bool = False

    def to_dict(self, round_no: int) -> dict[str, Any]:
        return {"round": round_no, "sql": self.sql, "extraction": self.extraction, "checked": self.checked,
                "problem": self.problem.to_dict() if self.problem else None}


class Agent:
    """One configuration of the agent, bound to one model."""

    def __init__(self, config: AgentConfig, llm: LLMSettings, *, backend_name: str | None = None,
                 on_result: Any = None) -> None:
        self.config = config
        self.llm = llm
        self.backend_name = backend_name or config.name
        self.on_result = on_result  # called with (case, GenerationResult) after each generation

    async def generate(self, case: BenchmarkCase) -> GenerationResult:
        started = time.monotonic()
        ws = await asyncio.to_thread(workspace_for, case)
        if self.config.uses_layer and ws.layer is None:
            raise BackendError(
                f"{self.config.name} needs the suite's semantic layer, but "
                + (ws.layer_error or f"{ws.manifest.root / 'semantic_layer.yaml'} does not exist")
                + ". Fix: write semantic_layer.yaml next to sqleval.toml, or run a0/a1")
        counter = await asyncio.to_thread(counter_for, self.llm.model)
        context = await asyncio.to_thread(build_context, ws, self.config, case.question, counter)
        trace = Trace()
        trace.retrieval(context.tables, scores=context.scores, tokens=context.tokens, warnings=len(context.warnings),
                        method=self.config.context)
        logical_date = ws.layer.snapshot_logical_date if (self.config.uses_layer and ws.layer is not None) else None
        messages: list[dict[str, str]] = [
            {"role": "system", "content": system_prompt(ws.dialect)},
            {"role": "user", "content": question_prompt(case.question, context.text, expected_shape=case.expected_shape,
                                                        logical_date=logical_date, layer_used=self.config.uses_layer)}]
        budget = Budget(self.config.max_llm_calls, self.config.max_total_tokens, self.config.max_latency_s,
                        started=started)
        text = await self._call(messages, budget, counter, trace, first=True)
        candidates: list[Candidate] = []
        repair_error: str | None = None
        can_check = self.config.self_check and ws.sandbox is not None
        while True:
            sql, how = extract_sql(text, ws.dialect)
            cand = Candidate(sql, text, how)
            if sql is None:
                cand.problem = Problem("no_sql", "the reply contains no SQL query")
            elif can_check:
                cand.problem, cand.preview = await asyncio.to_thread(self._check, ws, sql, case.expected_shape)
                cand.checked = True
            candidates.append(cand)
            rounds = len(candidates) - 1

            def decided(decision: str) -> None:
                trace.self_check(rounds, cand.sql, problem=cand.problem.to_dict() if cand.problem else None,
                                 preview=cand.preview, decision=decision)
            if not cand.checked and cand.problem is None:
                decided("answer unchecked: self-check " + ("unavailable" if self.config.self_check else "off"))
                break
            if cand.problem is None or not self.config.self_check or rounds >= self.config.max_repair_rounds:
                decided("accept" if cand.problem is None else "stop: " + (
                    "self-check off" if not self.config.self_check else
                    f"{self.config.max_repair_rounds} repair rounds used"))
                break
            messages += [{"role": "assistant", "content": text},
                         {"role": "user", "content": repair_prompt(cand.problem, cand.preview)}]
            if budget.refuse(counter.count("\n".join(m["content"] for m in messages))):
                decided(f"stop: budget exhausted ({budget.exhausted})")
                break
            decided("repair")
            try:
                text = await self._call(messages, budget, counter, trace, first=False)
            except BackendError as exc:
                repair_error = str(exc)
                break
        best = min(reversed(candidates), key=lambda c: c.problem.severity if c.problem else 0)
        final_sql = best.sql if best.sql is not None else best.reply
        meta = self._metadata(ws, context, budget, candidates, best, repair_error, started, can_check)
        meta[TRACE_KEY] = trace.to_list()
        result = GenerationResult(final_sql, meta)
        if self.on_result is not None:
            self.on_result(case, result)
        return result

    async def _call(self, messages: list[dict[str, str]], budget: Budget, counter: Any, trace: Trace, *,
                    first: bool) -> str:
        from ...core import LLMError, complete
        if first and budget.refuse(0):  # a zero budget: nothing may be spent
            raise BackendError(f"budget exhausted before the first call ({budget.exhausted})")
        budget.calls += 1
        t0 = time.monotonic()
        try:
            reply = await complete(messages, model=self.llm.model, api_base=self.llm.api_base,
                                   api_key=self.llm.api_key, timeout=self.llm.timeout_s,
                                   max_attempts=self.llm.max_attempts, temperature=self.config.temperature,
                                   backoff_base=self.llm.backoff_base)
        except LLMError as exc:
            budget.attempts += exc.attempts
            trace.llm_call(messages, "", model=self.llm.model, prompt_tokens=None, completion_tokens=None,
                           latency_ms=(time.monotonic() - t0) * 1000.0, error=exc.message)
            raise BackendError(f"model call failed ({self.llm.model}): {exc.message}") from None
        budget.attempts += reply.attempts
        pt = reply.prompt_tokens or counter.count("\n".join(m["content"] for m in messages))
        ct = reply.completion_tokens or counter.count(reply.text)
        budget.prompt_tokens += pt
        budget.completion_tokens += ct
        budget.costs.append(reply.cost_usd)
        trace.llm_call(messages, reply.text, model=self.llm.model, prompt_tokens=pt, completion_tokens=ct,
                       latency_ms=(time.monotonic() - t0) * 1000.0, cost_usd=reply.cost_usd)
        return reply.text

    @staticmethod
    def _check(ws: SuiteWorkspace, sql: str, expected_shape: str | None) -> tuple[Problem | None, str]:
        engine_dialect = getattr(ws.sandbox, "dialect", ws.dialect)
        run_sql = sql
        if engine_dialect != ws.dialect:
            import sqlglot
            try:
                run_sql = sqlglot.transpile(sql, read=ws.dialect, write=engine_dialect)[0]
            except Exception as exc:
                return Problem("error", f"syntax_error: {exc}"), ""
        outcome = ws.sandbox.run(run_sql, max_rows=MAX_ROWS)
        return inspect(outcome, expected_shape)

    def _metadata(self, ws: SuiteWorkspace, context: Any, budget: Budget, candidates: list[Candidate],
                  best: Candidate, repair_error: str | None, started: float, can_check: bool) -> dict[str, Any]:
        cfg = self.config
        return {
            "backend": self.backend_name,
            "config": cfg.name,
            "components": cfg.components,
            "model": self.llm.model,
            "provider": self.llm.provider,
            "prompt_version": PROMPT_VERSION,
            "context_level": cfg.context + ("+layer" if cfg.uses_layer else "") + ("+anti_patterns" if cfg.uses_anti_patterns else ""),
            "n_llm_calls": budget.calls,
            "http_attempts": budget.attempts,
            "prompt_tokens": budget.prompt_tokens,
            "completion_tokens": budget.completion_tokens,
            "total_tokens": budget.prompt_tokens + budget.completion_tokens,
            "cost_usd": budget.cost_usd,
            "latency_ms": round((time.monotonic() - started) * 1000.0, 1),
            "repair_rounds": len(candidates) - 1,
            "self_check": "on" if can_check else ("unavailable" if cfg.self_check else "off"),
            "self_check_history": [c.to_dict(i) for i, c in enumerate(candidates)],
            "final_problem": best.problem.to_dict() if best.problem else None,
            "extraction": best.extraction,
            "repair_error": repair_error,
            **context.summary(),
            "layer_sha": ws.layer_sha if cfg.uses_layer else None,
            "budget": {"max_llm_calls": cfg.max_llm_calls, "max_total_tokens": cfg.max_total_tokens,
                       "max_latency_s": cfg.max_latency_s, "max_context_tokens": cfg.max_context_tokens,
                       "max_tables": cfg.max_tables, "max_repair_rounds": cfg.max_repair_rounds if cfg.self_check else 0,
                       "exhausted": budget.exhausted},
        }
