"""The self-check: run a candidate on the sandboxed engine and say what looks wrong.

A candidate is repaired when it

- **errors** (binder, parser, type, timeout ... the engine's own message is passed back);
- returns **nothing** (unless the case declares an empty answer);
- returns something **suspicious**:
  - *fan-out against the expected grain*: one value was expected (``expected_shape:
    scalar``) and several rows came back; or rows repeat the same key values (the text
    and date columns), the mark of a join that multiplies rows or a missing GROUP BY;
  - an **all-NULL column** (a join key or filter that never matched, a wrong column),
    unless the case declares an answer of NULLs only (``expected_shape: null``);
  - a **negative count** (a column named like a count, quantity or number below zero);
  - a result that is **too large** to be an analyst's answer (more than ``MAX_ROWS`` rows).

The heuristics only read the candidate's own result and the case's declared shape; the
gold query is never looked at."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

MAX_ROWS = 50_000
PREVIEW_ROWS = 5
_COUNTISH = re.compile(r"(^|_)(n|num|number|count|cnt|qty|quantity|units|orders|customers|users|visits)(_|$)|count",
                       re.I)


@dataclass(frozen=True)
class Problem:
    """Why a candidate needs repair; ``kind`` is error | empty | suspicious | no_sql."""

    kind: str
    message: str

    SEVERITY = {"suspicious": 1, "empty": 2, "error": 3, "no_sql": 4}

    @property
    def severity(self) -> int:
        return self.SEVERITY.get(self.kind, 5)

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "message": self.message}


def inspect(outcome: Any, expected_shape: str | None) -> tuple[Problem | None, str]:
    """``(problem or None, preview text for the repair prompt)`` for one ExecOutcome."""
    err = getattr(outcome, "error", None)
    if err is not None:
        if getattr(outcome, "truncated", False):
            return Problem("suspicious", f"the query returns more than {MAX_ROWS} rows; an answer to an analyst's "
                                         "question is an aggregate or a short list"), ""
        return Problem("error", f"{err.category}: {_short(err.message, 600)}"), ""
    table = outcome.table
    rows = table.num_rows
    preview = _preview(table)
    if rows == 0:
        if expected_shape == "empty":
            return None, preview
        return Problem("empty", "the query returned no rows"), preview
    if expected_shape == "scalar" and rows > 1:
        return Problem("suspicious", f"a single value was expected but the query returned {rows} rows "
                                     "(a join fanning out, or a missing aggregate)"), preview
    names = table.column_names
    for i, col in enumerate(table.columns):
        if col.null_count == rows and expected_shape != "null":
            return Problem("suspicious", f"column {i + 1} ({names[i]}) is NULL in every row "
                                         "(a join or filter that never matches, or the wrong column)"), preview
    import pyarrow as pa
    import pyarrow.compute as pc
    for i, col in enumerate(table.columns):
        if (pa.types.is_integer(col.type) or pa.types.is_floating(col.type) or pa.types.is_decimal(col.type)) \
                and _COUNTISH.search(names[i] or ""):
            try:
                low = pc.min(col).as_py()
            except Exception:
                continue
            if low is not None and low < 0:
                return Problem("suspicious", f"column {i + 1} ({names[i]}) looks like a count but has a negative "
                                             f"value ({low})"), preview
    if rows > 1 and table.num_columns > 1:
        keys = [i for i, col in enumerate(table.columns)
                if pa.types.is_string(col.type) or pa.types.is_large_string(col.type)
                or pa.types.is_date(col.type) or pa.types.is_timestamp(col.type) or pa.types.is_boolean(col.type)]
        measures = [i for i in range(table.num_columns) if i not in keys]
        if keys and measures:
            seen: set[tuple[Any, ...]] = set()
            dups = 0
            for row in zip(*(table.column(i).to_pylist() for i in keys)):
                if row in seen:
                    dups += 1
                else:
                    seen.add(row)
            if dups:
                return Problem("suspicious", f"{dups} of {rows} rows repeat the same "
                                             f"{'/'.join(names[i] for i in keys)} values: rows may be multiplied by "
                                             "a join, or a GROUP BY is missing"), preview
    return None, preview


def _preview(table: Any) -> str:
    cols = ", ".join(f"{n} {t}" for n, t in zip(table.column_names, (str(f.type) for f in table.schema)))
    lines = [f"{table.num_rows} row(s); columns: {cols}"]
    for row in table.slice(0, PREVIEW_ROWS).to_pylist():
        lines.append("  " + " | ".join(_short(repr(v), 60) for v in row.values()))
    return "\n".join(lines)


def _short(text: str, n: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 3] + "..."
