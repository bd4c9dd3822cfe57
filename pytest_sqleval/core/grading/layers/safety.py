"""The safety layer: is the prediction one read-only query (``grading.safety``)?"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..safety import check_safety
from .base import Candidate, RecordView, guarded


@dataclass(frozen=True, slots=True)
class SafetyEvidence(RecordView):
    """Whether the prediction is one read-only query; ``reason`` and ``detail`` say why not."""

    ok: bool
    reason: str | None = None
    detail: str | None = None
    layer_error: str | None = None
    skipped: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"ok": self.ok, "reason": self.reason, "detail": self.detail}
        out.update({k: v for k, v in (("layer_error", self.layer_error), ("skipped", self.skipped)) if v is not None})
        return out

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> "SafetyEvidence":
        return cls(**record)


class SafetyLayer:
    """A crash in the safety check refuses the query: it fails closed."""

    name, ahead = "safety", True

    def run(self, c: Candidate) -> None:
        if c.stopped or c.parsed is None:
            return
        parsed = c.parsed

        def check() -> SafetyEvidence:
            result = check_safety(parsed.expression, parsed.statements,
                                  parsed.nodes if parsed.expression is not None else None)
            return SafetyEvidence(result.ok, result.reason, result.detail)
        evidence = guarded(check, fallback=SafetyEvidence(False, "layer_error"))
        c.layers["safety"] = evidence
        c.stopped = not evidence.ok
