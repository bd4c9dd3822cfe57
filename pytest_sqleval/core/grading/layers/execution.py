"""The execution layer: the engine's answer to the prediction, its execution record and
result comparison, typed here from the engine wire's dicts (``engine_side.py``) in one
place each (``from_record``): a key the engine renames is a ``TypeError`` in a test, not a
silent None in a user's run."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from ...engines.base import ExecError
from ...engines.host import HostCrashed, HostTimeout
from ..execute import engine_failure_record, timeout_record
from .base import Candidate, RecordView
from .official import OfficialEvidence


@dataclass(frozen=True, slots=True)
class ExecutionEvidence(RecordView):
    """The candidate's run on the engine: ``ok``, its error (``engines.base.ExecError``),
    time and the result's shape; ``over_cap`` when it read more rows than the cap against a
    gold of at most that many (the cap, the gold's rows, which cap)."""

    ok: bool
    error: ExecError | None = None
    elapsed_ms: float | None = None
    rows: int | None = None
    columns: list[str] | None = None
    preview: Any = None
    over_cap: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {"ok": self.ok, "error": self.error.to_dict() if self.error is not None else None,
               "elapsed_ms": self.elapsed_ms, "rows": self.rows, "columns": self.columns}
        out.update({k: v for k, v in (("preview", self.preview), ("over_cap", self.over_cap)) if v is not None})
        return out

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> "ExecutionEvidence":
        error = record.get("error")
        return cls(**{**record, "error": ExecError(**{"exception": "", **error}) if error else None})


@dataclass(frozen=True, slots=True)
class CompareEvidence(RecordView):
    """The result comparison made in the engine process (``compare.CompareResult``), with
    what the engine adds: ``gold_ambiguous`` (a LIMIT below the gold's top level cuts
    through ties) and the peers' verdicts (``sidebyside``)."""

    match: bool
    reason: str = ""  # equal | arity_mismatch | type_mismatch | row_count | values | order_only
    gold_rows: int = 0
    pred_rows: int = 0
    gold_columns: list[str] = field(default_factory=list)
    pred_columns: list[str] = field(default_factory=list)
    gold_kinds: list[str] = field(default_factory=list)
    pred_kinds: list[str] = field(default_factory=list)
    ordered: bool = False
    order_only: bool = False
    within_tolerance: bool = False
    row_precision: float = 0.0
    row_recall: float = 0.0
    row_f1: float = 0.0
    cell_overlap: float = 0.0
    column_matches: list[bool] = field(default_factory=list)
    gold_columns_found_at: dict[str, int] = field(default_factory=dict)
    cardinality_delta: int = 0
    cardinality_ratio: float | None = None
    schema_match: bool = False
    missing_rows: list[list[Any]] = field(default_factory=list)
    extra_rows: list[list[Any]] = field(default_factory=list)
    first_diff: dict[str, Any] | None = None
    tie_group: dict[str, Any] | None = None
    column_order: str = "position"
    column_permutation: list[int] | None = None
    other_column_order: dict[str, Any] | None = None
    columns: str = "exact"
    column_mapping: list[int | None] | None = None
    condition_cols: list[int] | None = None
    gold_ambiguous: str | None = None
    sidebyside: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {name: getattr(self, name) for name in _COMPARE_FIELDS}
        out.update({k: v for k, v in (("gold_ambiguous", self.gold_ambiguous), ("sidebyside", self.sidebyside))
                    if v is not None})
        return out

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> "CompareEvidence":
        return cls(**record)


def golds_evidence(c: Candidate, answer: dict[str, Any], compare: dict[str, Any]) -> GoldsEvidence:
    """The engine's answer on a case's several golds, each gold named by kind and source."""
    index = answer.get("gold_index", c.gold.index)
    tried = answer.get("golds") or [{"index": c.gold.index, "match": compare.get("match"),
                                     "reason": compare.get("reason")}]
    named = []
    for entry in tried:
        gold = c.gold.by_index(entry["index"])
        source = gold.source if gold.kind == "result" or len(gold.source) <= 200 else gold.source[:200] + "…"
        named.append({**entry, "kind": gold.kind, "source": source})
    return GoldsEvidence(matched=index if compare.get("match") else None, compared=index, golds=named,
                         structural=c.gold.by_index(index).kind == "sql")


_COMPARE_FIELDS = tuple(f for f in CompareEvidence.__dataclass_fields__ if f not in ("gold_ambiguous", "sidebyside"))


@dataclass(frozen=True, slots=True)
class GoldsEvidence(RecordView):
    """A case of several golds (or a result-file gold): which gold the prediction matched
    (``matched``: its index, None when none did), which gold's comparison ``compare`` holds
    (``compared``: the matched one, else the nearest), and how it compared with each gold
    tried, each named by index, kind and source. ``structural``: the compared gold has SQL
    (a result file has no structural layers, no variants and no peers' verdicts)."""

    matched: int | None
    compared: int
    golds: list[dict[str, Any]] = field(default_factory=list)
    structural: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {"matched": self.matched, "compared": self.compared, "golds": self.golds,
                "structural": self.structural}

    def gold(self, index: int | None) -> dict[str, Any] | None:
        return next((g for g in self.golds if g["index"] == index), None)


class ExecutionLayer:
    """The engine's answer to the candidate sent by ``SendLayer``: the execution record and
    the result comparison (made in the engine process, next to the gold answer)."""

    name, ahead = "execution", False

    def run(self, c: Candidate) -> None:
        if c.ticket is None:
            return
        c.budget.pause()  # execution has its own limits, enforced in the engine process
        compare = None
        try:
            answer = c.grader.host.result(c.ticket)
            execution, compare = answer["execution"], answer["compare"]
            c.variants_answer = answer.get("variants")
            if answer.get("pred_preview") is not None:
                execution["preview"] = answer["pred_preview"]
            if answer.get("over_cap") is not None:  # more rows than the cap, against a gold of at most that many
                execution["over_cap"] = answer["over_cap"]
            if answer.get("sidebyside") is not None:  # no result of ours: the peers' verdicts stand alone
                c.layers["official"] = OfficialEvidence(sidebyside=answer["sidebyside"])
            if compare is not None and (c.gold.alternatives or c.gold.kind != "sql"):
                c.layers["golds"] = golds_evidence(c, answer, compare)
        except HostTimeout as exc:  # its time: the query's own run (the engine's clock), not its time queued behind others
            ran = exc.wall_s if exc.wall_s is not None else time.perf_counter() - c.sent_at
            execution = timeout_record(str(exc), round(ran * 1000, 3), exc.over_limit)
        except HostCrashed as exc:  # the engine failed on this query, or died: not a timeout
            execution = engine_failure_record(str(exc), round((time.perf_counter() - c.sent_at) * 1000, 3))
        c.budget.resume()
        c.layers["execution"] = ExecutionEvidence.from_record(execution)
        c.layers["compare"] = CompareEvidence.from_record(compare) if compare is not None else None
