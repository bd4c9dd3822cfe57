"""What follows from a gold SQL alone, worked out once per gold and stored beside the gold
answers, so a rerun parses no gold: its ordering and tie keys (``ordering.order_info``), the
SQL the engine runs, the tables and joins it reads, and its side of the structural diff.

An entry is keyed by everything it depends on: the gold SQL, the suite's and the
engine's dialects, sqlglot's version and the source of the modules that compute it, so
a changed gold, dialect, sqlglot or grader misses the cache instead of reading a stale
answer. A damaged entry reads as missing and is written again."""
from __future__ import annotations

import hashlib
import json
import os
from collections import OrderedDict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import GoldError
from ..ordering import OrderInfo, order_info
from ..sqlite_quoting import sqlite_quoted_strings
from . import classify as classify_layer
from .guard import failure_evidence
from .parse import engine_sql, parse_sql
from .safety import check_safety
from .structure import GoldSide, gold_side

FOLDER = "gold-analysis"  # under the run's cache directory, beside "gold"
#: the source an analysis comes from (its version): these modules and the two below grading that it
#: calls, the ordering (``order_info``) and SQLite's double-quoted strings (``engine_sql``)
_MODULES = ("parse.py", "safety.py", "classify.py", "structure.py", "gold_analysis.py", "../ordering.py",
            "../sqlite_quoting.py")
_version: str | None = None


def analysis_version() -> str:
    """sqlglot's version and the source of the modules an analysis comes from."""
    global _version
    if _version is None:
        import sqlglot
        digest = hashlib.sha256(str(getattr(sqlglot, "__version__", "?")).encode())
        for name in _MODULES:
            digest.update((Path(__file__).parent / name).read_bytes())
        _version = digest.hexdigest()[:16]
    return _version


@dataclass
class GoldAnalysis:
    """A gold SQL's static analysis. ``structure`` is None when the structural diff cannot
    analyse the gold (``structure_error`` is then that layer's evidence); ``tree`` is the
    parse, kept only when it was made in this process (never stored)."""

    order: OrderInfo
    engine_sql: str
    tables: list[str]
    joins: dict[str, Any]
    structure: GoldSide | None = None
    structure_error: dict[str, Any] | None = None
    tree: Any = field(default=None, repr=False, compare=False)

    def to_json(self) -> dict[str, Any]:
        return {"order": asdict(self.order), "engine_sql": self.engine_sql, "tables": self.tables,
                "joins": self.joins, "structure": self.structure.to_json() if self.structure else None,
                "structure_error": self.structure_error}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "GoldAnalysis":
        structure = data["structure"]
        return cls(OrderInfo(**data["order"]), data["engine_sql"], data["tables"], data["joins"],
                   GoldSide.from_json(structure) if structure is not None else None, data["structure_error"])


def analyse(gold_sql: str, dialect: str, engine_dialect: str, refuse_unsafe: bool = True) -> GoldAnalysis:
    """Parse and analyse a gold; a gold that cannot be trusted raises ``GoldError`` (one
    the safety layer refuses too, when it is to be executed: ``refuse_unsafe``)."""
    parsed = parse_sql(gold_sql, dialect)
    safety = check_safety(parsed.expression, parsed.statements) if refuse_unsafe and parsed.ok else None
    if safety is not None and not safety.ok:  # several statements among them
        raise GoldError(f"gold SQL is refused by the safety layer: {safety.detail}")
    if not parsed.ok or parsed.expression is None:
        err = parsed.error or {}
        raise GoldError(f"gold SQL does not parse: {err.get('message')} (line {err.get('line')}, col {err.get('col')})")
    tree = parsed.expression
    try:
        ordered = sqlite_quoted_strings(tree) if dialect == "sqlite" and engine_dialect != "sqlite" else tree
        tables = classify_layer.table_names(tree)
        analysis = GoldAnalysis(order_info(ordered, engine_dialect),  # its SQL too is the engine's
                                engine_sql(tree, gold_sql, dialect, engine_dialect),
                                tables, classify_layer.join_structure(tree, tables), tree=tree)
    except RecursionError:  # a case error, counted as such: the gold cannot be analysed
        raise GoldError("gold SQL is nested too deeply for the grader to analyse") from None
    try:
        analysis.structure = gold_side(tree, dialect, gold_sql)
    except Exception as exc:  # the structure layer's evidence for every prediction of this gold
        analysis.structure_error = failure_evidence(exc)
    return analysis


class GoldAnalyses:
    """The analyses of one grader's golds: in memory, and on disk under ``folder`` (None:
    memory only, for a grader without a database)."""

    def __init__(self, folder: Path | None, dialect: str, engine_dialect: str, *, refuse_unsafe: bool = True,
                 memory: int = 256) -> None:
        self.folder, self.refuse_unsafe = folder, refuse_unsafe
        self.dialect, self.engine_dialect = dialect, engine_dialect
        self.memory = memory
        self._known: OrderedDict[str, GoldAnalysis] = OrderedDict()

    def get(self, gold_sql: str, dialect: str | None = None) -> GoldAnalysis:
        """The analysis of a gold written in ``dialect`` (default: the suite's; a per-engine
        gold is written in the engine's own)."""
        known = self.known(gold_sql, dialect)
        if known is not None:
            return known
        dialect = dialect or self.dialect
        analysis = analyse(gold_sql, dialect, self.engine_dialect, self.refuse_unsafe)
        self._write(self._key(gold_sql, dialect), gold_sql, analysis)
        self.adopt(gold_sql, dialect, analysis)
        return analysis

    def known(self, gold_sql: str, dialect: str | None = None) -> GoldAnalysis | None:
        """The analysis if it is made already (in memory, or stored), else None: never parses.
        The grader asks this before sending a gold ahead, so an unknown gold is analysed in
        the engine process beside its execution (``engine_side.GradingHandler.analysed_gold``)."""
        dialect = dialect or self.dialect
        hit = self._known.get(self._memo(gold_sql, dialect))
        if hit is not None:
            return hit
        stored = self._read(self._key(gold_sql, dialect), gold_sql)
        if stored is not None:
            self.adopt(gold_sql, dialect, stored)
        return stored

    def adopt(self, gold_sql: str, dialect: str | None, analysis: GoldAnalysis) -> None:
        """Keep an analysis made elsewhere (the engine process stored it already)."""
        memo = self._memo(gold_sql, dialect or self.dialect)
        if memo not in self._known and len(self._known) >= self.memory:
            self._known.popitem(last=False)
        self._known[memo] = analysis

    def _memo(self, gold_sql: str, dialect: str) -> str:
        return gold_sql if dialect == self.dialect else f"{dialect}\0{gold_sql}"

    def _key(self, gold_sql: str, dialect: str) -> str:
        return hashlib.sha256(json.dumps([gold_sql, dialect, self.engine_dialect, analysis_version()]).encode()
                              ).hexdigest()[:40]

    def _read(self, key: str, gold_sql: str) -> GoldAnalysis | None:
        if self.folder is None:
            return None
        try:
            data = json.loads((self.folder / f"{key}.json").read_text(encoding="utf-8"))
            if data.get("gold_sql") != gold_sql:
                return None
            return GoldAnalysis.from_json(data["analysis"])
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None

    def _write(self, key: str, gold_sql: str, analysis: GoldAnalysis) -> None:
        if self.folder is None:
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            tmp = self.folder / f".{key}.{os.getpid()}.tmp"
            tmp.write_text(json.dumps({"gold_sql": gold_sql, "analysis": analysis.to_json()}), encoding="utf-8")
            os.replace(tmp, self.folder / f"{key}.json")
        except (OSError, TypeError, ValueError):
            pass  # not stored: analysed again next run


def gold_request(static: GoldAnalysis, policy: Any, identity: list[Any]) -> dict[str, Any]:
    """The engine's request for a gold answer: what it runs (from the gold's analysis), the
    case's ``policy`` resolved against the gold (``pipeline.case_contract``), and ``key``, a
    hash of the request and the database's ``identity`` (content hash, engine, its version,
    the row cap): everything the answer depends on. The grader and the engine process
    (which analyses a gold sent ahead, ``engine_side.GradingHandler.analysed_gold``) build
    it here alike, so both name the same stored answer."""
    order = static.order
    ordered = policy.ordered
    augmented = order.augmented_sql if ordered else None
    request: dict[str, Any] = {"sql": static.engine_sql, "exec_sql": augmented, "spec": policy.to_wire(),
                               "limit": order.limit, "key_positions": order.key_positions if ordered else None,
                               "n_appended": order.n_appended if augmented else 0,
                               "probe_sql": order.probe_sql if ordered else None}
    if ordered and order.full_sql:  # a LIMIT that cuts a tie group is graded tie-aware (compare.compare_topk)
        request["full_sql"] = order.full_sql
    if order.unordered_limit and not ordered:  # any k rows of the whole result are valid
        request.update(unordered_limit=True, probe_sql=order.probe_sql, full_sql=order.full_sql)
    if order.nested_limits:  # a LIMIT below the top level: does it cut through ties on this database?
        request["nested_limits"] = order.nested_limits
    request["key"] = hashlib.sha256(json.dumps([*identity, request], sort_keys=True).encode()).hexdigest()[:40]
    return request
