"""Benchmark cases and suite manifests, and the registry of the benchmark layouts they are
read from. Other parts import from here; nothing here imports grading, sessions or items."""
from __future__ import annotations

from ..engines.base import Limits
from ..textio import UTF8_BOM, iter_jsonl, not_utf8_error, read_text
from .layouts import (ENTRY_POINT_GROUP, Layout, LayoutError, all_layouts, get_layout, layout_names, layout_text, need,
                      read_layout_predictions, read_records, register_layout, reload_entry_points, unregister_layout)
from .manifest import find_manifest_for, load_manifest
from .model import (COMPARE_SETTINGS, DEFAULT_DEPRECATED, EXPECTED_SHAPES, MANIFEST_NAME, BenchmarkCase, ComparePolicy, Gold,
                    SuiteManifest)
from . import defog, spider2_lite  # noqa: F401  (they register their layouts)
from .read import (CASE_COMPARE_KEYS, SPLIT_KEY, collect_cases, database_manifest, parse_case, read_cases,
                   read_layout_cases, split_of, validate_records)

__all__ = [
    "CASE_COMPARE_KEYS", "COMPARE_SETTINGS", "SPLIT_KEY", "DEFAULT_DEPRECATED", "ENTRY_POINT_GROUP", "EXPECTED_SHAPES", "MANIFEST_NAME", "UTF8_BOM",
    "BenchmarkCase", "ComparePolicy", "Gold", "all_layouts", "Layout", "LayoutError", "Limits", "SuiteManifest", "collect_cases",
    "database_manifest", "find_manifest_for", "get_layout", "iter_jsonl", "layout_names", "layout_text", "load_manifest",
    "need", "not_utf8_error", "parse_case", "read_cases", "read_layout_cases", "read_layout_predictions", "read_records",
    "read_text", "register_layout", "split_of", "reload_entry_points", "unregister_layout", "validate_records",
]
