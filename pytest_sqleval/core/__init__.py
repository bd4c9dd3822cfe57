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
    "GRADED_STATUSES": ("records", "GRADED"),
    "peer_verdicts": ("records", "peer_verdicts"),
    "CaseRecord": ("records", "CaseRecord"),
    "ErrorClass": ("grading.error_classes", "ErrorClass"),
    "register_error_class": ("grading.error_classes", "register_error_class"),
    "error_classes": ("grading.error_classes", "error_classes"),
    "register_layer": ("grading.layer_registry", "register_layer"),
    "register_backend": ("backends.registry", "register_backend"),
    "RECORD_VERSION": ("records", "RECORD_VERSION"),
    "Verdict": ("api", "Verdict"),
    "Grader": ("api", "Grader"),
    "GraderPool": ("pool", "GraderPool"),
    "Comparator": ("grading.compare", "Comparator"),
    "case_contract": ("grading.pipeline", "case_contract"),
    "case_policy": ("grading.pipeline", "case_policy"),
    "parse_sql": ("grading.parse", "parse_sql"),
    "order_info": ("ordering", "order_info"),
    "check_safety": ("grading.safety", "check_safety"),
    "portability": ("grading.portability", "portability"),
    "dialect_of_engine": ("grading.portability", "dialect_of_engine"),
    "table_names": ("grading.classify", "table_names"),
    "deprecated_refs": ("grading.classify", "deprecated_refs"),
    "nested_cut": ("grading.engine_side", "nested_cut"),
    "jsonable": ("grading.compare", "jsonable"),
    "python_values": ("grading.compare", "python_values"),
    "kind_of": ("grading.compare", "kind_of"),
    "Gold": ("cases.model", "Gold"),
    "read_result_file": ("cases.result_files", "read_result_file"),
    "ResultFileError": ("cases.result_files", "ResultFileError"),
    # database variants
    "VARIANT_BLOCK_SIZE": ("variants.build", "VARIANT_BLOCK_SIZE"),
    "remember_content_hash": ("variants.build", "remember_content_hash"),
    "FROZEN_VARIANTS_NAME": ("variants.distill", "FROZEN_NAME"),
    "read_frozen": ("variants.distill", "read_frozen"),
}

# a literal, so that a type checker reads it; tests/test_architecture.py holds it equal to _PUBLIC
__all__ = [
    "Backend", "BackendError", "BackendOptions", "BadInputError", "BenchmarkCase", "CaseError",
    "CaseRecord", "Comparator", "ComparePolicy", "DuckDBSandbox", "ERROR_CLASSES", "ErrorClass",
    "ExecError", "ExecOutcome", "FROZEN_VARIANTS_NAME", "GRADED_STATUSES", "GenerateFn",
    "GenerationResult", "Gold", "GoldError", "Grader", "GraderPool", "LLMError", "LLMReply", "Layout",
    "Limits", "MANIFEST_NAME", "MAX_TRACE_EVENTS", "MAX_TRACE_TEXT", "NOT_A_MODEL",
    "RECORD_VERSION", "REFUSED", "RUNS_ENV", "ResultFileError", "Sandbox", "SqlevalError", "SuiteManifest",
    "TRACE_KEY", "TRACE_REPORT_KEY", "Trace", "UsageError", "VARIANT_BLOCK_SIZE", "Verdict",
    "WATCHDOG", "api_key_for", "case_contract", "case_policy", "check_safety",
    "classify_duckdb_error", "client_limits", "clip_trace_text", "collect_cases", "compare",
    "complete", "credential_gated", "deprecated_refs", "display_location", "engine_display",
    "dialect_of_engine", "engine_name", "ensure_database", "error_classes", "find_manifest_for", "is_mock", "is_url",
    "iter_jsonl", "jsonable", "kind_of", "load_litellm", "load_manifest", "manifest_key_line",
    "mock_label", "model_string", "nested_cut", "open_sandbox", "order_info", "parse_sql",
    "peer_verdicts", "portability", "python_values", "read_cases", "read_frozen", "read_layout_cases", "read_result_file", "read_text",
    "register_backend", "remember_content_hash", "register_engine", "register_error_class", "register_layer",
    "register_layout", "render_trace", "runs_dir", "split_of", "table_names", "write_trace_report",
]

if TYPE_CHECKING:  # pragma: no cover - what a type checker sees (re-exported: `X as X`); at run time, __getattr__
    from .api import Grader as Grader
    from .api import Verdict as Verdict
    from .api import compare as compare
    from .backends.base import Backend as Backend
    from .backends.base import BackendOptions as BackendOptions
    from .backends.base import GenerateFn as GenerateFn
    from .backends.base import GenerationResult as GenerationResult
    from .backends.llm_backends import api_key_for as api_key_for
    from .backends.llm_backends import client_limits as client_limits
    from .backends.llm_backends import credential_gated as credential_gated
    from .backends.llm_backends import model_string as model_string
    from .cases import MANIFEST_NAME as MANIFEST_NAME
    from .cases import BenchmarkCase as BenchmarkCase
    from .cases import ComparePolicy as ComparePolicy
    from .cases import Gold as Gold
    from .cases.result_files import ResultFileError as ResultFileError
    from .cases.result_files import read_result_file as read_result_file
    from .cases import Layout as Layout
    from .cases import Limits as Limits
    from .cases import SuiteManifest as SuiteManifest
    from .cases import collect_cases as collect_cases
    from .cases import find_manifest_for as find_manifest_for
    from .cases import load_manifest as load_manifest
    from .cases import read_cases as read_cases
    from .cases import read_layout_cases as read_layout_cases
    from .cases import register_layout as register_layout
    from .cases import split_of as split_of
    from .cases.manifest import manifest_key_line as manifest_key_line
    from .engines import display_location as display_location
    from .engines import engine_name as engine_name
    from .engines import is_url as is_url
    from .engines import open_sandbox as open_sandbox
    from .engines import register_engine as register_engine
    from .engines.base import REFUSED as REFUSED
    from .engines.base import ExecError as ExecError
    from .engines.base import ExecOutcome as ExecOutcome
    from .engines.base import Sandbox as Sandbox
    from .engines.build import ensure_database as ensure_database
    from .engines.duckdb_sandbox import DuckDBSandbox as DuckDBSandbox
    from .engines.duckdb_sandbox import classify_error as classify_duckdb_error
    from .engines.watchdog import WATCHDOG as WATCHDOG
    from .errors import BackendError as BackendError
    from .errors import BadInputError as BadInputError
    from .errors import CaseError as CaseError
    from .errors import GoldError as GoldError
    from .errors import SqlevalError as SqlevalError
    from .errors import UsageError as UsageError
    from .grading.classify import deprecated_refs as deprecated_refs
    from .grading.classify import table_names as table_names
    from .grading.compare import Comparator as Comparator
    from .grading.compare import jsonable as jsonable
    from .grading.compare import kind_of as kind_of
    from .grading.compare import python_values as python_values
    from .grading.engine_side import nested_cut as nested_cut
    from .grading.parse import parse_sql as parse_sql
    from .grading.pipeline import case_contract as case_contract
    from .grading.pipeline import case_policy as case_policy
    from .grading.portability import dialect_of_engine as dialect_of_engine
    from .grading.portability import portability as portability
    from .grading.safety import check_safety as check_safety
    from .grading.verdict import ERROR_CLASSES as ERROR_CLASSES
    from .grading.verdict import engine_display as engine_display
    from .llm import LLMError as LLMError
    from .llm import LLMReply as LLMReply
    from .llm import complete as complete
    from .llm import load_litellm as load_litellm
    from .mockllm import NOT_A_MODEL as NOT_A_MODEL
    from .mockllm import is_mock as is_mock
    from .mockllm import label as mock_label
    from .ordering import order_info as order_info
    from .pool import GraderPool as GraderPool
    from .records import GRADED as GRADED_STATUSES
    from .records import peer_verdicts as peer_verdicts
    from .records import CaseRecord as CaseRecord
    from .records import RECORD_VERSION as RECORD_VERSION
    from .grading.error_classes import ErrorClass as ErrorClass
    from .grading.error_classes import register_error_class as register_error_class
    from .grading.error_classes import error_classes as error_classes
    from .grading.layer_registry import register_layer as register_layer
    from .backends.registry import register_backend as register_backend
    from .textio import iter_jsonl as iter_jsonl
    from .textio import read_text as read_text
    from .traces import MAX_EVENTS as MAX_TRACE_EVENTS
    from .traces import MAX_TEXT as MAX_TRACE_TEXT
    from .traces import RUNS_ENV as RUNS_ENV
    from .traces import TRACE_KEY as TRACE_KEY
    from .traces import TRACE_REPORT_KEY as TRACE_REPORT_KEY
    from .traces import Trace as Trace
    from .traces import runs_dir as runs_dir
    from .traces import write_trace_report as write_trace_report
    from .traces import clip as clip_trace_text
    from .traces import render_markdown as render_trace
    from .variants.build import VARIANT_BLOCK_SIZE as VARIANT_BLOCK_SIZE
    from .variants.build import remember_content_hash as remember_content_hash
    from .variants.distill import FROZEN_NAME as FROZEN_VARIANTS_NAME
    from .variants.distill import read_frozen as read_frozen


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
