"""The gold answer of one case as the grader holds it: its shape and rows' description
from the engine (stored once per gold), the comparison policy it was computed under, and
its static analysis. Layers read it; ``pipeline.SuiteGrader.gold`` makes it."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from ..comparison import ComparePolicy
    from .gold_analysis import GoldAnalysis


@dataclass
class GoldAnswer:
    key: str
    rows: int
    columns: list[str]
    types: list[str]
    cached: bool
    policy: "ComparePolicy"  # the case's, resolved against this gold (case_contract); to_wire() in its request
    tables: list[str]
    joins: dict[str, Any]
    elapsed_ms: float = 0.0
    preview: list[list[Any]] = field(default_factory=list)
    tree: Any = field(default=None, repr=False, compare=False)  # parsed gold, if parsed in this process
    sql: str | None = field(default=None, repr=False, compare=False)  # as run on the engine (side-by-side rules)
    request: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)  # the engine's gold request
    #: no rows (or rows of NULLs only: ``null_only``) on the pinned database, and the case does
    #: not declare it: graded on the variants where it has a value
    empty: bool = False
    null_only: bool = False
    ties: dict[str, Any] | None = None  # its LIMIT cuts a tie group: any valid top-k is accepted (compare_topk)
    ambiguous: str | None = None  # a LIMIT below its top level cuts through ties: a mismatch is not graded
    analysis: "GoldAnalysis | None" = field(default=None, repr=False, compare=False)  # the structure layer's gold side
    #: which of its case's golds this is (``cases.Gold``): its index, kind ("sql" | "result")
    #: and source (the SQL, or the result file's path); a result file has no SQL, tree or analysis
    index: int = 0
    kind: str = "sql"
    source: str = ""
    #: the engine this gold is its own of (``cases.Gold.engine``: ``gold_sql_spark``), which
    #: replaced the case's default golds; None for a default gold
    engine: str | None = None
    #: the case's other golds (the first answer carries them): a prediction that does not
    #: match this one is compared with each of them in turn (``engine_side._other_golds``)
    alternatives: "list[GoldAnswer]" = field(default_factory=list, repr=False, compare=False)
    #: Spider 2.0's official standard for the case (a spider2-lite case's; ``spider2_standard``):
    #: its gold CSVs' paths with their case indices, per-gold condition_cols and ignore_order,
    #: for the official verdict the engine process records beside ours (``peers.spider2_tables``)
    spider2: dict[str, Any] | None = field(default=None, repr=False, compare=False)

    def by_index(self, index: int) -> "GoldAnswer":
        """This gold or the alternative of that index."""
        return next((g for g in [self, *self.alternatives] if g.index == index), self)

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "rows": self.rows, "columns": self.columns, "types": self.types,
                "cached": self.cached, "ordered": self.policy.ordered,
                "sort_keys": None if self.policy.sort_keys is None else list(self.policy.sort_keys),
                "elapsed_ms": self.elapsed_ms, "preview": self.preview,
                "ties": {k: v for k, v in self.ties.items()
                         if k in ("limit", "before", "group_rows", "candidates", "unordered")}
                if self.ties else None, **({"ambiguous": self.ambiguous} if self.ambiguous else {}),
                **({"kind": self.kind} if self.kind != "sql" else {}),
                **({"engine": self.engine, "source": self.source} if self.engine else {})}
