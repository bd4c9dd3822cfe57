"""The grounding layer: does every table and column the prediction names exist (``grading.grounding``)?"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..grounding import ground
from .base import Candidate, RecordView, failure_fields, guarded


@dataclass(frozen=True, slots=True)
class GroundingEvidence(RecordView):
    """The names the prediction reads that the catalog does not have (each a dict: name,
    line, col), the catalog tables it reads; ``ok`` None: not evaluated."""

    ok: bool | None
    hallucinated_tables: list[dict[str, Any]] = field(default_factory=list)
    hallucinated_columns: list[dict[str, Any]] = field(default_factory=list)
    tables: list[str] = field(default_factory=list)
    note: str | None = None
    skipped: str | None = None
    layer_error: str | None = None
    detail: str | None = None

    @property
    def hallucinated(self) -> list[dict[str, Any]]:
        return self.hallucinated_tables + self.hallucinated_columns

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "hallucinated_tables": self.hallucinated_tables,
                "hallucinated_columns": self.hallucinated_columns, "tables": self.tables, "note": self.note,
                **failure_fields(self)}

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> "GroundingEvidence":
        return cls(**record)


class GroundingLayer:
    name, ahead = "grounding", True

    def run(self, c: Candidate) -> None:
        if c.stopped or c.grader.index is None:
            return
        tree, index, budget = c.tree, c.grader.index, c.budget
        nodes = c.parsed.nodes if tree is not None and c.parsed is not None else None  # the tree's, made once

        def check() -> GroundingEvidence:
            r = ground(tree, index, budget, c.grader.dialect, nodes)
            return GroundingEvidence(r.ok, r.hallucinated_tables, r.hallucinated_columns, r.tables, r.note)
        c.layers["grounding"] = guarded(check, fallback=GroundingEvidence(None))
