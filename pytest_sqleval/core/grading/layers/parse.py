"""The parse layer: does the prediction parse in the suite's dialect (``grading.parse``)?"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..parse import parse_sql
from .base import Candidate, RecordView


@dataclass(frozen=True, slots=True)
class ParseEvidence(RecordView):
    """Whether the prediction parses; ``error`` says where it does not (message, line, col)."""

    ok: bool
    dialect: str = ""
    statements: int = 0
    error: dict[str, Any] | None = None
    layer_error: str | None = None  # it parsed, but is nested too deeply to transpile (the send layer)

    def to_dict(self) -> dict[str, Any]:
        out = {"ok": self.ok, "dialect": self.dialect, "statements": self.statements, "error": self.error}
        if self.layer_error is not None:
            out["layer_error"] = self.layer_error
        return out

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> "ParseEvidence":
        return cls(**record)


class ParseLayer:
    name, ahead = "parse", True

    def run(self, c: Candidate) -> None:
        c.parsed = parsed = parse_sql(c.sql, c.grader.dialect)
        c.layers["parse"] = ParseEvidence(parsed.ok, parsed.dialect, parsed.statements, parsed.error)
        c.stopped = not parsed.ok
