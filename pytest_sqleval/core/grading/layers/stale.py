"""The stale layer: the deprecated tables the prediction reads and the gold does not."""
from __future__ import annotations

from .. import classify as classify_layer
from .base import Candidate, guarded


class StaleLayer:
    """Deprecated tables the prediction reads and the gold does not (a deprecated table
    the gold reads too is not stale, however either side qualifies it)."""

    name, ahead = "stale", True

    def run(self, c: Candidate) -> None:
        if c.stopped:
            return
        gold_tables = {t.removeprefix("main.") for t in c.gold.tables}
        tree, deprecated = c.tree, c.grader.deprecated
        if tree is None or not classify_layer.may_read_deprecated(
                tree, deprecated, c.parsed.nodes if c.parsed is not None else None):
            c.stale = []
            return
        c.stale = guarded(lambda: [t for t in classify_layer.deprecated_refs(classify_layer.table_names(tree), deprecated)
                                   if t.removeprefix("main.") not in gold_tables], fallback=[])
