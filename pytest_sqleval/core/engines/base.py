"""What every engine shares: the ``Sandbox`` protocol, the outcome and error types, and
the capped fetch (rows and bytes) with its one error.

An engine is a sandbox over one database: it runs one candidate query at a time and
returns an Arrow table or a categorised ``ExecError``; it never grades. Engines are
chosen by database location through ``engines.registry``.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, NamedTuple, Protocol, TypeVar, runtime_checkable

if TYPE_CHECKING:  # pragma: no cover - pyarrow is imported by the engines, not by this module
    import pyarrow as pa
    from .watchdog import QueryTime

RESULT_SHARE = 8  # a result may hold at most memory_limit / RESULT_SHARE bytes (see result_byte_cap)
B = TypeVar("B")


@dataclass(frozen=True)
class Limits:
    """Resource bounds for every query run on a suite's database."""

    timeout_s: float = 10.0  # CPU seconds per query where the engine's CPU clock is read (engines.watchdog)
    max_rows: int = 10_000_000
    max_bytes: int = 2 * 1024**3
    memory_limit: str = "2GB"
    threads: int = 1
    #: where queries run: ``process`` (the default), every engine in the engine process;
    #: ``auto`` runs an engine that enforces every limit itself (SQLite: progress handler,
    #: interrupt, hard heap limit, authorizer) in the grading process, the others there.
    #: The engine process is the default because it is faster in wall time: it overlaps its
    #: work with pytest's on a second core (BENCHMARKS.md section 12)
    isolation: str = "process"


@dataclass
class ExecError:
    """A query the engine refused or failed, in the taxonomy of DESIGN.md."""

    category: str  # missing_table, missing_column, missing_function, type_mismatch, division_by_zero,
    #                invalid_aggregation, ambiguous_reference, permission_error, timeout, resource_exceeded,
    #                syntax_error, unknown_error
    message: str
    exception: str
    #: what the error is about, where the engine names it: the function a ``missing_function``
    #: calls, or the sandbox rule that refused the query (``exception == "Refused"``), so the
    #: grader names it without reading the engine's wording
    subject: str | None = None
    #: a result stopped at a cap (``too_large``) has more rows than this: the rows read
    #: past ``max_rows``, or before the byte cap; the grader decides a gold of at most
    #: that many rows against it. ``cap`` says which cap stopped it ("max_rows", "bytes").
    rows_over: int | None = None
    cap: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"category": self.category, "message": self.message, "exception": self.exception}
        if self.subject is not None:
            out["subject"] = self.subject
        if self.rows_over is not None:
            out.update(rows_over=self.rows_over, cap=self.cap)
        return out


def timed(error: ExecError, clock: "QueryTime") -> ExecError:
    """A query stopped by its time limit says which limit stopped it, with its figures
    (``QueryTime.stopped``: ``timeout`` past its CPU limit, ``unfinished`` at its wall bound)."""
    if error.category != "timeout":
        return error
    category, message = clock.stopped()
    return ExecError(category, message, error.exception)


REFUSED = "Refused"  # ``ExecError.exception`` of a query a sandbox rule refused before the engine ran it


def refusal(rule: str, detail: str) -> ExecError:
    """A sandbox rule's refusal: ``permission_error``, named by ``rule`` (the safety layer's
    reasons: multiple_statements, not_a_query, file_or_system_access)."""
    return ExecError("permission_error", f"refused ({rule}): {detail}", REFUSED, subject=rule)


@dataclass
class ExecOutcome:
    table: "pa.Table | None"
    error: ExecError | None
    elapsed_ms: float
    truncated: bool = False  # a row or byte cap was hit
    meta: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Sandbox(Protocol):
    """One database, read-only and bounded; what the grader and the engine host use."""

    name: str  # the engine's name, as the registry knows it ("duckdb", "sqlite", "postgres", ...)
    version: str  # the engine's version, part of every gold answer's key
    dialect: str  # the sqlglot dialect gold and predictions are transpiled to

    def run(self, sql: str, *, max_rows: int | None = None) -> ExecOutcome:
        """Run one statement, bounded in time, rows and bytes; never raises for bad SQL."""

    def catalog(self) -> dict[str, dict[str, dict[str, str]]]:
        """``{schema: {table: {column: type}}}`` for grounding."""

    def content_hash(self) -> str:
        """A hash of everything a query can see, stable across rebuilds and engine releases."""

    def close(self) -> None:
        """Release the database."""


def result_byte_cap(limits: Any) -> int:
    """The bytes a fetched result may hold: ``max_bytes``, and at most an eighth of
    ``memory_limit``. The database's memory limit does not cover a result once it is Arrow
    data in the engine process, and grading holds more than one copy of it: the gold answer
    and the prediction side by side, the comparison's encoding of both (about five times one
    result in all, measured), so a result of ``memory_limit / 8`` keeps the engine process
    within about ``memory_limit`` beyond the query itself."""
    from .shared import parse_size
    try:
        share = parse_size(limits.memory_limit) // RESULT_SHARE
    except (TypeError, ValueError):
        return int(limits.max_bytes)
    return max(1, min(int(limits.max_bytes), share))


def too_large(max_rows: int, cap: int, limits: Any, rows_read: int = 0) -> ExecError:
    """The error of a result over a cap, naming the caps and where each comes from, and
    how many rows it is known to exceed (``rows_over``): ``max_rows`` when more were read,
    else the rows read before the byte cap stopped it, less one."""
    why = "max_bytes" if cap >= limits.max_bytes else f"memory_limit {limits.memory_limit} / {RESULT_SHARE}"
    if rows_read > max_rows:
        return ExecError("resource_exceeded", f"result has more than {max_rows} rows (the row cap, max_rows); "
                                              "reading stopped there", "ResultTooLarge", rows_over=max_rows,
                         cap="max_rows")
    return ExecError("resource_exceeded", f"result exceeds the cap of {max_rows} rows / {cap} bytes ({why})",
                     "ResultTooLarge", rows_over=rows_read - 1 if rows_read else None,
                     cap="bytes" if rows_read else None)


class Fetched(NamedTuple):
    """What ``fetch_capped`` returns: the batches, or the error that stopped the fetch."""

    batches: list[Any]
    error: ExecError | None = None
    truncated: bool = False  # the error is a row or byte cap


def fetch_capped(batches: Iterable[B], size: Callable[[B], tuple[int, int]], *, max_rows: int, limits: Any,
                 check: Callable[[], ExecError | None] | None = None) -> Fetched:
    """Collect ``batches`` until they run out or pass a cap: ``max_rows`` rows, or
    ``result_byte_cap(limits)`` bytes. ``size(batch)`` is ``(rows, bytes)`` of one batch
    (Arrow batches know theirs; Python rows use ``approx_bytes``). The caps are checked
    after each batch, so a fetch overshoots by at most one batch; past a cap what was
    collected is dropped at once and the error is ``too_large``. ``check`` runs after each
    batch too (e.g. a deadline) and stops the fetch with the error it returns."""
    cap = result_byte_cap(limits)
    kept: list[B] = []
    rows = nbytes = 0
    for batch in batches:
        kept.append(batch)
        n, b = size(batch)
        rows += n
        nbytes += b
        if rows > max_rows or nbytes > cap:
            kept.clear()  # dropped at once, not when the outcome is
            return Fetched([], too_large(max_rows, cap, limits, rows_read=rows), True)
        if check is not None:
            error = check()
            if error is not None:
                kept.clear()
                return Fetched([], error)
    return Fetched(kept)


def fetch_batches(cursor: Any, size: int) -> Iterable[list[tuple[Any, ...]]]:
    """A DB-API cursor's rows in ``fetchmany(size)`` batches."""
    while True:
        batch = cursor.fetchmany(size)
        if not batch:
            return
        yield batch


def approx_bytes(rows: list[tuple[Any, ...]]) -> int:
    """The bytes of Python rows, roughly: text and blobs by length, anything else 8."""
    n = 0
    for row in rows:
        for v in row:
            n += len(v) if isinstance(v, (str, bytes)) else 8
    return n


def row_batch_size(batch: list[tuple[Any, ...]]) -> tuple[int, int]:
    """``(rows, bytes)`` of a batch of Python rows, for ``fetch_capped``."""
    return len(batch), approx_bytes(batch)


def flat_rows(batches: list[list[tuple[Any, ...]]]) -> list[tuple[Any, ...]]:
    """The rows of ``fetch_capped``'s batches of Python rows, as one list (the batches are released)."""
    rows = batches[0] if len(batches) == 1 else [r for b in batches for r in b]
    batches.clear()
    return rows


def resource_error(exc: BaseException) -> ExecError:
    """A ``MemoryError``/``RecursionError``/``OverflowError`` in the engine process as an error."""
    return ExecError("resource_exceeded", str(exc) or type(exc).__name__, type(exc).__name__)


def elapsed_ms(start: float) -> float:
    """Milliseconds since ``start`` (a ``time.perf_counter()``), as outcomes record them."""
    return round((time.perf_counter() - start) * 1000, 3)
