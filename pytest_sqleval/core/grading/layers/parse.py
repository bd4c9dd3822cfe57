"""The parse layer: does the prediction parse in the suite's dialect (``grading.parse``)?"""
from __future__ import annotations

from ..parse import parse_sql
from .base import Candidate


class ParseLayer:
    name, ahead = "parse", True

    def run(self, c: Candidate) -> None:
        c.parsed = parse_sql(c.sql, c.grader.dialect)
        c.layers["parse"] = c.parsed.to_dict()
        c.stopped = not c.parsed.ok
