"""The library API: grade one predicted query against a gold query, outside pytest."""
from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from .cases import DEFAULT_DEPRECATED, ComparePolicy, Limits
from .engines import is_url
from .grading.pipeline import SuiteGrader, Verdict

__all__ = ["compare", "Grader", "Verdict"]


class Grader:
    """A reusable grader for one database: the engine process and gold answers are kept."""

    def __init__(self, database: str | Path, *, dialect: str = "duckdb", cache_dir: str | Path | None = None,
                 deprecated_tables: tuple[str, ...] = (), limits: Limits | None = None, **contract: Any) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="sqleval-") if cache_dir is None else None
        self._grader = SuiteGrader(database if is_url(database) else Path(database), dialect=dialect, limits=limits or Limits(),
                                   policy=ComparePolicy().merged(**contract),
                                   deprecated=DEFAULT_DEPRECATED + tuple(deprecated_tables),
                                   cache_dir=Path(cache_dir) if cache_dir else Path(self._tmp.name))

    @property
    def content_hash(self) -> str:
        return self._grader.content_hash

    def compare(self, predicted_sql: str, gold_sql: str) -> Verdict:
        """Grade ``predicted_sql``; raises ``GoldError`` when the gold itself cannot be trusted."""
        return self._grader.grade(predicted_sql, self._grader.gold(gold_sql))

    def close(self) -> None:
        self._grader.close()
        if self._tmp is not None:
            self._tmp.cleanup()

    def __enter__(self) -> "Grader":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def compare(predicted_sql: str, gold_sql: str, database: str | Path, **contract: Any) -> Verdict:
    """Compare a predicted query with a gold query on ``database`` under the comparison
    contract (keywords: ``order_matters``, ``float_rel_tol``, ``float_abs_tol``,
    ``allow_empty``, ``dialect``, ``deprecated_tables``). Returns the verdict with every
    layer's evidence; ``verdict.passed`` and ``verdict.error_class`` are the headline."""
    with Grader(database, **contract) as grader:
        return grader.compare(predicted_sql, gold_sql)
