"""The agent's configurations as backends: ``raw_llm`` and ``a0`` ... ``a3-sc``.

They reach ``--sqleval-backend`` the way any plugin's backends do, through the entry
points of the group ``pytest_sqleval.backends`` (pyproject.toml), so the grader never
imports the agent. Model, key, client limits and the credential gate are the grader's
generic LLM-backend rules (:mod:`pytest_sqleval.core.backends.llm_backends`).

- **Fingerprint** (the generation cache's key): backend name, model, provider, prompt
  version, the configuration with its budgets, a hash of the agent's code and of the
  semantic layers under the rootdir; with each case, the schema text of its suite
  (``SuiteWorkspace.schema_key``: tables, columns, types, comments, layer), so a changed
  database is asked again.
- **Records**: every record of a configuration carries its ``components`` and, for the
  five ablation configurations, its ``ablation_step``, even when its case crashed: the
  ablation table reads them from the records alone.
- **Predictions**: each generation is also written to ``runs/<config>/predictions.jsonl``
  under the rootdir (``$SQLEVAL_RUNS_DIR`` overrides the ``runs`` folder).
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

from ...core import (Backend, BackendOptions, GenerationResult, UsageError, api_key_for, client_limits,
                     credential_gated, mock_label, model_string, runs_dir, write_trace_report)
from ...reports.ablation import ABLATION_STEP, LAYER_INGREDIENTS_KEY
from ..warehouse.course import COURSE_SECTIONS
from .config import ABLATION_ORDER, CONFIGS, PROMPT_VERSION, RAW_LLM, AgentConfig
from .loop import Agent, LLMSettings
from .schema import workspace_for
from .runs import record_prediction

_CODE_FILES = ("products/agent", "core/backends/llm_backends.py", "core/llm.py")  # relative to the package


def _code_hash() -> str:
    root = Path(__file__).resolve().parents[2]
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


def record_metadata(config: AgentConfig) -> dict[str, Any]:
    """What every record of ``config`` carries for the reports: its components, and, when it
    is one of the ablation's configurations, its place in the ablation and the semantic
    layer's ingredients it gives the model (what each ingredient buys is read from them)."""
    meta: dict[str, Any] = {"components": config.components}
    if config.name in ABLATION_ORDER:
        meta[ABLATION_STEP] = ABLATION_ORDER.index(config.name)
        meta[LAYER_INGREDIENTS_KEY] = list(config.layer_ingredients)
    return meta


def make_llm_backend(name: str, options: BackendOptions, config: AgentConfig | None = None,
                     **llm_overrides: Any) -> Backend:
    """A backend for one agent configuration (``a0`` ... ``a3-sc``) or ``raw_llm``.

    ``config`` replaces the named configuration (e.g. other budgets); ``llm_overrides``
    set :class:`~pytest_sqleval.products.agent.loop.LLMSettings` fields (``timeout_s``,
    ``max_attempts``, ``backoff_base``, ``api_key``)."""
    if config is None:
        if name == "raw_llm":
            config = RAW_LLM
        elif name in CONFIGS:
            config = CONFIGS[name]
        else:
            raise UsageError(f"unknown agent configuration {name!r}; known: raw_llm, {', '.join(CONFIGS)}")
    model, provider = model_string(options)
    timeout_s, max_attempts = client_limits()
    settings = LLMSettings(model=model, provider=provider, api_base=options.api_base,
                           api_key=api_key_for(provider, options.api_base),
                           timeout_s=timeout_s, max_attempts=max_attempts)
    if llm_overrides:
        settings = replace(settings, **llm_overrides)
    out_root = runs_dir(options.rootdir)
    static_meta = {**record_metadata(config), **mock_label(model)}  # a mockllm run says it is not a model

    def on_result(case: Any, result: GenerationResult) -> None:
        m = result.metadata
        line = {"qid": case.id, "sql": result.sql, "config": config.name, "n_llm_calls": m.get("n_llm_calls"),
                "latency_ms": m.get("latency_ms"), "prompt_tokens": m.get("prompt_tokens"),
                "completion_tokens": m.get("completion_tokens"), "total_tokens": m.get("total_tokens"),
                "cost_usd": m.get("cost_usd"), "repair_rounds": m.get("repair_rounds"), "model": m.get("model"),
                "provider": m.get("provider"), "prompt_version": m.get("prompt_version"), "suite": case.suite,
                **static_meta}  # a predictions: regrade of this file still makes its ablation row
        try:
            m["predictions_file"] = str(record_prediction(out_root, config.name, line))
        except OSError as exc:  # never fail a generation over its copy on disk
            m["predictions_error"] = f"{type(exc).__name__}: {exc}"
        write_trace_report(out_root, config.name, case, result.sql, m)

    agent = Agent(config, settings, backend_name=name, on_result=on_result)
    fingerprint_src = json.dumps({"kind": "sqleval-llm-backend", "name": name, "model": model, "provider": provider,
                                  "prompt_version": PROMPT_VERSION, "config": config.fingerprint_dict(),
                                  "code": _code_hash(), "layers": _layers_hash(options.rootdir)}, sort_keys=True)
    gated = credential_gated(name, provider, settings.api_base, agent.generate)
    backend = Backend(name, name, gated, hashlib.sha256(fingerprint_src.encode()).hexdigest()[:24],
                      f"{config.components} [{model}, prompt {PROMPT_VERSION}]", static_meta,
                      case_key=lambda case: workspace_for(case).schema_key(),  # the schema it is prompted with
                      report_sections=COURSE_SECTIONS)
    backend.agent = agent  # type: ignore[attr-defined]
    return backend


def _factory(name: str) -> Callable[[BackendOptions], Backend]:
    def factory(options: BackendOptions) -> Backend:
        return make_llm_backend(name, options)
    factory.__name__ = name.replace("-", "_")
    factory.__doc__ = f"The agent configuration {name}."
    return factory


# the entry points of pyproject.toml's group pytest_sqleval.backends
raw_llm = _factory("raw_llm")
a0, a1, a2_desc, a2, a3, a3_sc = (_factory(name) for name in ABLATION_ORDER)
