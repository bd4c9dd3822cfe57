"""Execute layer: the candidate's run on the sandboxed engine, as a plain record.

The error taxonomy itself lives with the engine that produces the errors
(``engines.duckdb_sandbox.classify_error``); this layer only shapes the evidence."""
from __future__ import annotations

from typing import Any


def execution_record(outcome: Any) -> dict[str, Any]:
    """``ok``, the error (category, raw message), time, and the result's shape."""
    table = outcome.table
    return {
        "ok": outcome.error is None,
        "error": outcome.error.to_dict() if outcome.error is not None else None,
        "elapsed_ms": outcome.elapsed_ms,
        "rows": table.num_rows if table is not None else None,
        "columns": table.column_names if table is not None else None,
    }


def timeout_record(message: str, elapsed_ms: float, over_limit: bool = True) -> dict[str, Any]:
    """A query stopped at process level because it ignored its interrupt: ``timeout`` when
    it spent more than its limit, ``unfinished`` when the wall bound came first."""
    return {"ok": False, "error": {"category": "timeout" if over_limit else "unfinished", "message": message,
                                   "exception": "ProcessKilled"},
            "elapsed_ms": elapsed_ms, "rows": None, "columns": None}


def engine_failure_record(message: str, elapsed_ms: float) -> dict[str, Any]:
    """The engine raised or died on this query (not a time limit): an unknown error."""
    return {"ok": False, "error": {"category": "unknown_error", "message": message, "exception": "EngineFailure"},
            "elapsed_ms": elapsed_ms, "rows": None, "columns": None}
