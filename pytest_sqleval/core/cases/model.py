"""What a case and a suite are, apart from how they are read: the records every layer and
report shares, so none of them needs to import a reader."""
from __future__ import annotations

import hashlib
import json
from dataclasses import MISSING, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

# re-exported: the readers and callers that import them from here
from ..comparison import COLUMN_ORDERS as COLUMN_ORDERS, COLUMN_RULES as COLUMN_RULES
from ..comparison import COMPARE_SETTINGS as COMPARE_SETTINGS, ComparePolicy as ComparePolicy
from ..engines.base import Limits

MANIFEST_NAME = "sqleval.toml"
DEFAULT_DEPRECATED = ("*_old", "*_v1", "*_bak")
EXPECTED_SHAPES = ("scalar", "table", "empty", "null")
GOLD_KINDS = ("sql", "result")  # Gold.kind
RESULT_SUFFIXES = (".csv", ".parquet", ".jsonl")  # a result-file gold's formats, by extension




@dataclass(frozen=True)
class Gold:
    """One acceptable answer of a case: a gold SQL (``kind = "sql"``, ``source`` its text)
    or a result file (``kind = "result"``, ``source`` its path as the case wrote it,
    relative to the suite's folder; ``path`` resolved when the suite is read).

    Why a tuple of these beside ``BenchmarkCase.gold_sql``: every caller that knows one
    gold SQL keeps reading ``gold_sql`` (the first SQL gold); what needs all of them (the
    grader's alternatives, ``validate``, the record) walks ``BenchmarkCase.golds``, where
    ``index`` is the gold's place in the case (SQL golds first, in the order written, then
    the result files) and is what a record names. A result file has no SQL: no structural
    layer, no variants, no peers' verdicts; ``types`` are its declared column types
    (``(column name or position, SQL type)``; the rest inferred), the case's over the suite's.
    ``condition_cols``: this result file's own (Spider 2.0 names one list per gold CSV),
    over the case's; ``()`` means every column of this file (found among the prediction's),
    None the case's policy.

    ``engine``: None for a gold every engine grades with (written in the suite's dialect);
    an engine's name (``"spark"``) for a per-engine gold (``"gold_sql_spark"``), written in
    that engine's own dialect and graded with only there, in place of the default golds
    (``BenchmarkCase.golds_for``): for a construct that does not transpile (DuckDB's
    ``ASOF JOIN``) or an answer the engines give differently."""

    index: int
    kind: str
    source: str
    path: Path | None = field(default=None, compare=False)
    types: tuple[tuple[str | int, str], ...] = ()
    condition_cols: tuple[int, ...] | None = None
    engine: str | None = None

    @property
    def is_sql(self) -> bool:
        return self.kind == "sql"

    def describe(self) -> dict[str, Any]:
        """The gold as a record names it: index, kind, source (an SQL cut to one line's worth)."""
        source = self.source if self.kind == "result" or len(self.source) <= 200 else self.source[:200] + "…"
        return {"index": self.index, "kind": self.kind, "source": source, **({"engine": self.engine} if self.engine else {})}


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
    #: the case's comparison contract, made once when its suite's cases are read
    #: (``read_layout_cases``); None for a case read without a suite (the grader then uses
    #: its suite policy's ``for_case``). Not part of the case's identity or its dict.
    policy: ComparePolicy | None = field(default=None, compare=False, repr=False)
    #: every acceptable answer (``Gold``): SQL golds first, then result files. Left empty, it
    #: is the one SQL gold ``gold_sql``; given, ``gold_sql`` is its first SQL gold ("" when
    #: the case has only result files). A prediction passes if it matches any of them.
    golds: tuple[Gold, ...] = field(default=(), repr=False)
    #: per-engine golds (``Gold.engine`` set; ``"gold_sql_spark"`` in a case's record): when
    #: that engine grades, they replace ``golds`` (``golds_for``); every other engine ignores them
    engine_golds: tuple[Gold, ...] = field(default=(), repr=False)

    def __post_init__(self) -> None:
        if not self.golds and self.gold_sql:
            object.__setattr__(self, "golds", (Gold(0, "sql", self.gold_sql),))
        elif self.golds and not isinstance(self.golds, tuple):
            object.__setattr__(self, "golds", tuple(self.golds))
        if self.engine_golds and not isinstance(self.engine_golds, tuple):
            object.__setattr__(self, "engine_golds", tuple(self.engine_golds))

    @classmethod
    def of_checked(cls, values: dict[str, Any]) -> "BenchmarkCase":
        """The case of ``values``, fields already checked and normalised by the reader (a
        tuple of tags, ``golds`` given, ``metadata`` its own dict): made by filling the
        instance at once, not by the frozen dataclass's field-by-field ``__init__`` and
        ``__post_init__``, which were most of the time of reading a plain case. Fields not
        given take their defaults, so it is the case ``BenchmarkCase(**values)`` makes."""
        case = object.__new__(cls)
        filled = dict(_CASE_DEFAULTS)
        filled.update(values)
        vars(case).update(filled)
        return case

    def golds_for(self, engine: str | None) -> tuple[Gold, ...]:
        """The golds an engine grades this case with: its own (``gold_sql_<engine>``) when the
        case has any, else the default ``golds``. The one place the choice is made."""
        own = tuple(g for g in self.engine_golds if g.engine == engine) if engine else ()
        return own or self.golds

    @property
    def gold_engines(self) -> tuple[str, ...]:
        """The engines this case has a gold of its own for."""
        return tuple(sorted({g.engine for g in self.engine_golds if g.engine}))

    @property
    def sql_golds(self) -> tuple[Gold, ...]:
        return tuple(g for g in self.golds if g.is_sql)

    @property
    def several_golds(self) -> bool:
        """More than the one SQL gold every case had before several golds."""
        return len(self.golds) > 1 or any(not g.is_sql for g in self.golds)

    @property
    def case_id(self) -> str:  # seed-000 spelling
        return self.id

    @property
    def content_hash(self) -> str:
        """Identity of what a backend sees; keys the generation cache."""
        payload = {f.name: getattr(self, f.name) for f in fields(self)
                   if f.name not in ("source", "policy", "golds", "engine_golds")}
        if self.several_golds:  # a case of one SQL gold keeps the hash it had before several golds
            payload["golds"] = [[g.kind, g.source] for g in self.golds]
        if self.engine_golds:  # likewise a case without per-engine golds
            payload["engine_golds"] = [[g.engine, g.source] for g in self.engine_golds]
        blob = json.dumps(payload, sort_keys=True, default=str).encode()
        return hashlib.sha256(blob).hexdigest()[:32]

    def to_dict(self) -> dict[str, Any]:
        d = {f.name: getattr(self, f.name) for f in fields(self)
             if f.name not in ("source", "suite", "policy", "golds", "engine_golds")}
        d["tags"] = list(self.tags)
        if self.several_golds:
            d["golds"] = [g.describe() for g in self.golds]
        if self.engine_golds:
            d["engine_golds"] = [g.describe() for g in self.engine_golds]
        return d


#: every field of a case that has a default (``metadata``'s, a new dict, is the caller's to give)
_CASE_DEFAULTS = {f.name: f.default for f in fields(BenchmarkCase) if f.default is not MISSING}


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
    #: ``[gold_results] types``: declared column types (name -> SQL type) of every result-file
    #: gold of the suite; a case's own ``gold_types`` win
    gold_types: tuple[tuple[str, str], ...] = ()

    @property
    def root(self) -> Path:
        return self.path.parent
