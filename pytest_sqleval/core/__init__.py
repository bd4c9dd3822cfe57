"""The grader: cases in, verdicts and records out. It never imports pytest's wiring
(``pytest_sqleval.plugin``), the reports or a product (``pytest_sqleval.products``).

Its public API is the names below, imported from this package (``from pytest_sqleval.core
import BenchmarkCase``): what the products (agent, warehouse, validate, reproduce) and
users build on. A submodule's other names are internal and may move without notice
(tests/test_architecture.py holds the products to this). Each name is imported on first
use, so importing this package stays cheap (the plugin loads in every pytest run).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

#: public name -> (submodule of the core, its name there)
_PUBLIC: dict[str, tuple[str, str]] = {
    # cases and suites
    "BenchmarkCase": ("cases", "BenchmarkCase"),
    "SuiteManifest": ("cases", "SuiteManifest"),
    "ComparePolicy": ("cases", "ComparePolicy"),
    "Limits": ("cases", "Limits"),
    "Layout": ("cases", "Layout"),
    "MANIFEST_NAME": ("cases", "MANIFEST_NAME"),
    "find_manifest_for": ("cases", "find_manifest_for"),
    "load_manifest": ("cases", "load_manifest"),
    "manifest_key_line": ("cases.manifest", "manifest_key_line"),
    "read_cases": ("cases", "read_cases"),
    "read_layout_cases": ("cases", "read_layout_cases"),
    "collect_cases": ("cases", "collect_cases"),
    "split_of": ("cases", "split_of"),
    "register_layout": ("cases", "register_layout"),
    "read_text": ("textio", "read_text"),
    "iter_jsonl": ("textio", "iter_jsonl"),
    # errors
    "SqlevalError": ("errors", "SqlevalError"),
    "BadInputError": ("errors", "BadInputError"),
    "UsageError": ("errors", "UsageError"),
    "CaseError": ("errors", "CaseError"),
    "GoldError": ("errors", "GoldError"),
    "BackendError": ("errors", "BackendError"),
    # engines
    "Sandbox": ("engines.base", "Sandbox"),
    "DuckDBSandbox": ("engines.duckdb_sandbox", "DuckDBSandbox"),
    "ExecError": ("engines.base", "ExecError"),
    "ExecOutcome": ("engines.base", "ExecOutcome"),
    "REFUSED": ("engines.base", "REFUSED"),
    "engine_display": ("grading.verdict", "engine_display"),
    "classify_duckdb_error": ("engines.duckdb_sandbox", "classify_error"),
    "WATCHDOG": ("engines.watchdog", "WATCHDOG"),
    "open_sandbox": ("engines", "open_sandbox"),
    "register_engine": ("engines", "register_engine"),
    "engine_name": ("engines", "engine_name"),
    "is_url": ("engines", "is_url"),
    "display_location": ("engines", "display_location"),
    "ensure_database": ("engines.build", "ensure_database"),
    # backends and models
    "Backend": ("backends.base", "Backend"),
    "BackendOptions": ("backends.base", "BackendOptions"),
    "GenerateFn": ("backends.base", "GenerateFn"),
    "GenerationResult": ("backends.base", "GenerationResult"),
    "model_string": ("backends.llm_backends", "model_string"),
    "api_key_for": ("backends.llm_backends", "api_key_for"),
    "client_limits": ("backends.llm_backends", "client_limits"),
    "credential_gated": ("backends.llm_backends", "credential_gated"),
    "complete": ("llm", "complete"),
    "load_litellm": ("llm", "load_litellm"),
    "LLMError": ("llm", "LLMError"),
    "LLMReply": ("llm", "LLMReply"),
    "NOT_A_MODEL": ("mockllm", "NOT_A_MODEL"),
    "is_mock": ("mockllm", "is_mock"),
    "mock_label": ("mockllm", "label"),
    # traces a backend records
    "Trace": ("traces", "Trace"),
    "TRACE_KEY": ("traces", "TRACE_KEY"),
    "TRACE_REPORT_KEY": ("traces", "TRACE_REPORT_KEY"),
    "RUNS_ENV": ("traces", "RUNS_ENV"),
    "MAX_TRACE_TEXT": ("traces", "MAX_TEXT"),
    "MAX_TRACE_EVENTS": ("traces", "MAX_EVENTS"),
    "clip_trace_text": ("traces", "clip"),
    "render_trace": ("traces", "render_markdown"),
    "runs_dir": ("traces", "runs_dir"),
    "write_trace_report": ("traces", "write_trace_report"),
    # grading
    "compare": ("api", "compare"),
    "ERROR_CLASSES": ("grading.verdict", "ERROR_CLASSES"),
    "GRADED_STATUSES": ("sidebyside", "GRADED"),
    "peer_verdicts": ("sidebyside", "peer_verdicts"),
    "Verdict": ("api", "Verdict"),
    "Grader": ("api", "Grader"),
    "GraderPool": ("pool", "GraderPool"),
    "Comparator": ("grading.compare", "Comparator"),
    "case_contract": ("grading.pipeline", "case_contract"),
    "case_policy": ("grading.pipeline", "case_policy"),
    "parse_sql": ("grading.parse", "parse_sql"),
    "order_info": ("grading.parse", "order_info"),
    "check_safety": ("grading.safety", "check_safety"),
    "table_names": ("grading.classify", "table_names"),
    "deprecated_refs": ("grading.classify", "deprecated_refs"),
    "nested_cut": ("grading.engine_side", "nested_cut"),
    "jsonable": ("grading.compare", "jsonable"),
    "python_values": ("grading.compare", "python_values"),
    "kind_of": ("grading.compare", "kind_of"),
    # database variants
    "VARIANT_BLOCK_SIZE": ("variants.build", "VARIANT_BLOCK_SIZE"),
    "FROZEN_VARIANTS_NAME": ("variants.distill", "FROZEN_NAME"),
    "read_frozen": ("variants.distill", "read_frozen"),
}

__all__ = sorted(_PUBLIC)

if TYPE_CHECKING:  # pragma: no cover - what a type checker sees; at run time, __getattr__
    from .api import Grader, Verdict, compare
    from .backends.base import Backend, BackendOptions, GenerateFn, GenerationResult
    from .backends.llm_backends import api_key_for, client_limits, credential_gated, model_string
    from .cases import (MANIFEST_NAME, BenchmarkCase, ComparePolicy, Layout, Limits, SuiteManifest, collect_cases,
                        find_manifest_for, load_manifest, read_cases, read_layout_cases, register_layout, split_of)
    from .cases.manifest import manifest_key_line
    from .engines import display_location, engine_name, is_url, open_sandbox, register_engine
    from .engines.base import REFUSED, ExecError, ExecOutcome, Sandbox
    from .engines.build import ensure_database
    from .engines.duckdb_sandbox import DuckDBSandbox
    from .engines.duckdb_sandbox import classify_error as classify_duckdb_error
    from .engines.watchdog import WATCHDOG
    from .errors import BackendError, BadInputError, CaseError, GoldError, SqlevalError, UsageError
    from .grading.classify import deprecated_refs, table_names
    from .grading.compare import Comparator, jsonable, kind_of, python_values
    from .grading.engine_side import nested_cut
    from .grading.parse import order_info, parse_sql
    from .grading.pipeline import case_contract, case_policy
    from .grading.safety import check_safety
    from .grading.verdict import ERROR_CLASSES, engine_display
    from .llm import LLMError, LLMReply, complete, load_litellm
    from .mockllm import NOT_A_MODEL, is_mock
    from .mockllm import label as mock_label
    from .pool import GraderPool
    from .sidebyside import GRADED as GRADED_STATUSES
    from .sidebyside import peer_verdicts
    from .textio import iter_jsonl, read_text
    from .traces import MAX_EVENTS as MAX_TRACE_EVENTS
    from .traces import MAX_TEXT as MAX_TRACE_TEXT
    from .traces import RUNS_ENV, TRACE_KEY, TRACE_REPORT_KEY, Trace, runs_dir, write_trace_report
    from .traces import clip as clip_trace_text
    from .traces import render_markdown as render_trace
    from .variants.build import VARIANT_BLOCK_SIZE
    from .variants.distill import FROZEN_NAME as FROZEN_VARIANTS_NAME
    from .variants.distill import read_frozen


def __getattr__(name: str) -> Any:
    """A public name, imported from its submodule on first use."""
    try:
        module, attr = _PUBLIC[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    from importlib import import_module
    value = getattr(import_module(f"{__name__}.{module}"), attr)
    globals()[name] = value  # the next lookup skips this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_PUBLIC))
