"""What a case and a suite are, apart from how they are read: the records every layer and
report shares, so none of them needs to import a reader."""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from ..engines.base import Limits

MANIFEST_NAME = "sqleval.toml"
DEFAULT_DEPRECATED = ("*_old", "*_v1", "*_bak")
EXPECTED_SHAPES = ("scalar", "table", "empty")
COLUMN_ORDERS = ("position", "any")  # ComparePolicy.column_order


@dataclass(frozen=True)
class ComparePolicy:
    """The comparison contract's knobs; suites and cases may override each."""

    order_matters: bool | None = None  # None = ordered iff the gold has a top-level ORDER BY
    float_rel_tol: float = 1e-6
    float_abs_tol: float = 1e-9
    allow_empty: bool = False
    #: "position": columns by position (our default); "any": the prediction's columns may be
    #: any bijection of the gold's (Spider's convention; the spider layout's default)
    column_order: str = "position"

    def merged(self, **overrides: Any) -> "ComparePolicy":
        vals = {f.name: getattr(self, f.name) for f in fields(self)}
        vals.update({k: v for k, v in overrides.items() if v is not None})
        return ComparePolicy(**vals)

    def for_case(self, case: "BenchmarkCase | None") -> "ComparePolicy":
        """This (suite) policy with one case's overrides: its ``order_matters``, its
        ``"compare"`` tolerances (``metadata["compare"]``, checked by ``parse_case``) and
        ``"expected_shape": "empty"`` as ``allow_empty``. Grading and ``validate`` both use it."""
        if case is None:
            return self
        compare = case.metadata.get("compare")
        overrides = compare if isinstance(compare, dict) else {}
        return self.merged(**{**overrides, "order_matters": case.order_matters,
                              "allow_empty": True if case.expected_shape == "empty" else None})


@dataclass(frozen=True)
class BenchmarkCase:
    """One benchmark question. Unknown JSONL keys land in ``metadata``."""

    id: str
    question: str
    gold_sql: str
    difficulty: str | None = None
    expected_shape: str | None = None
    complexity: str | None = None
    category: str | None = None
    schema: str | None = None
    tags: tuple[str, ...] = ()
    order_matters: bool | None = None
    metadata: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    source: str = field(default="", compare=False)  # "file:line", for messages
    suite: str = field(default="", compare=False)

    @property
    def case_id(self) -> str:  # seed-000 spelling
        return self.id

    @property
    def content_hash(self) -> str:
        """Identity of what a backend sees; keys the generation cache."""
        payload = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("source",)}
        blob = json.dumps(payload, sort_keys=True, default=str).encode()
        return hashlib.sha256(blob).hexdigest()[:32]

    def to_dict(self) -> dict[str, Any]:
        d = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("source", "suite")}
        d["tags"] = list(self.tags)
        return d


@dataclass(frozen=True)
class VariantPolicy:
    """``[variants]``: how many database variants each case is also graded on (0: none),
    the seed they are built from, and columns no variant may change (``table.column``)."""

    count: int = 0
    seed: int = 0
    frozen_columns: tuple[str, ...] = ()


@dataclass(frozen=True)
class SuiteManifest:
    """A suite: a folder with ``sqleval.toml`` naming questions, database and dialect."""

    path: Path
    name: str
    questions: Path
    database: Path | str | None  # None: a judge-only suite, graded without executing anything; str: a URL
    dialect: str = "duckdb"
    build: Path | str | None = None  # a SQL script, or "module:function" called with the target path
    deprecated_tables: tuple[str, ...] = DEFAULT_DEPRECATED
    schema_ddl: Path | None = None  # CREATE TABLE statements for grounding when there is no database
    compare: ComparePolicy = ComparePolicy()
    limits: Limits = Limits()
    layout: str = "sqleval"  # a registered layout's name (see cases/layouts.py)
    tables: Path | None = None  # Spider/BIRD tables.json, when the suite names one
    constraints: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)  # checked by `validate`
    variants: VariantPolicy = field(default_factory=VariantPolicy, compare=False, hash=False)
    # deprecated table -> the live table that replaces it ([suite] replacements, else the semantic layer's)
    replacements: dict[str, str] = field(default_factory=dict, compare=False, hash=False)
    #: ``[splits] held_out``: the split whose cases (``"split": NAME`` in their record) are
    #: held out from development; cases without a split are the main set. None: no held-out split.
    held_out: str | None = None

    @property
    def root(self) -> Path:
        return self.path.parent
