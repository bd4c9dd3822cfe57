"""The hooks a plugin or a ``conftest.py`` implements to extend grading: add or replace
layers, classify a failure, add record fields, add summary lines, add a suite's native
database variants. Registered with
``pytest_addhooks``; the built-ins are ordinary implementations (``builtin_hooks.py``).
docs/how-to/extending.md has a conftest example of each."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:  # pragma: no cover
    from pathlib import Path

    from ..core.cases import SuiteManifest
    from ..core.grading.layers import Layer
    from ..core.grading.verdict import Classification, Evidence

hookspec = pluggy.HookspecMarker("pytest")


@hookspec
def pytest_sqleval_layers(layers: "list[Layer]", manifest: "SuiteManifest") -> None:
    """Add, remove or replace the grading layers of a suite's grader, in place.

    Called once per grader with the list the built-in implementation (``tryfirst``) has
    filled with the built-in layers in order (parse, safety, send, grounding, stale,
    structure, execution), then those of ``register_layer`` and of the entry-point group
    ``pytest_sqleval.layers`` (``core.grading.layer_registry``). A layer has ``name``, ``ahead`` (run before the case's turn,
    before its execution is sent) and ``run(candidate)``, which adds evidence to
    ``candidate.layers[name]``; the evidence reaches the record's ``layers``. A built-in
    layer's evidence there is typed (``core.grading.layers``: ``ParseEvidence``, ...): read
    it by attribute (``candidate.layers["parse"].ok``)."""


@hookspec(firstresult=True)
def pytest_sqleval_classify(evidence: "Evidence") -> "Classification | None":
    """The error class of a failed candidate; the first non-None answer wins.

    The built-in precedence (parse, unsafe, hallucinated_column, stale_table, execution
    errors, wrong_metric / wrong_join / other) is a ``trylast`` implementation, so a
    plugin's answer comes first and ``None`` leaves the case to it. ``evidence.parse``,
    ``evidence.execution``, ``evidence.compare`` ... are the built-in layers' typed evidence;
    ``evidence.get(name)`` a layer's evidence in its record form (a plugin layer's own dict).
    A class of the plugin's own is declared (``register_error_class`` or the entry-point group
    ``pytest_sqleval.error_classes``); an undeclared one is kept, with a warning naming the fix."""


@hookspec
def pytest_sqleval_record_fields(record: dict[str, Any]) -> "dict[str, Any] | None":
    """Fields to add to a case's record (results.jsonl, the summary's input). ``record`` is
    the record's JSON object (``CaseRecord.to_json_dict``); the fields added are the record's
    ``extra``, flat in the JSON. A field that would replace one of the record's own is a usage error."""


@hookspec
def pytest_sqleval_summary_lines(summary: dict[str, Any]) -> "list[str] | None":
    """Lines to add to the terminal's "sqleval summary" section."""


@hookspec
def pytest_sqleval_native_variants(manifest: "SuiteManifest", folder: "Path", seed: int) -> "list[Path] | None":
    """Database files a suite's own generator makes (other seeds of it), graded on as
    variants next to the generic ones; ``folder`` is where to write them (kept between
    runs: build only what is missing). Distillation chooses among all of them, and
    ``validate`` freezes their content hashes like the others'. Only asked when the run
    grades on variants."""
