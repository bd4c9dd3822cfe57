"""defog's sql-eval as it is shipped: its questions CSV (``question``, ``query``,
``db_name``, ``query_category``, optional ``instructions``, ``db_type``,
``full_instructions``, ``k_shot_prompt``, ``glossary``), read with no conversion step.

A defog gold query says which answers are acceptable in the query itself: ``;`` separates
whole alternative queries, and ``{a, b}`` means "any non-empty selection of ``a`` and
``b``, in that order" (``SELECT {id, name} FROM t`` accepts ``id``, ``name`` or both), with
``GROUP BY {}`` repeating the selection just made. ``expand_alternatives`` turns that into
the case's several golds when the file is read, so the grader sees plain SQL golds and
the record says which one matched. defog grades a prediction whose result *contains* the
gold's columns as correct (its ``subset_df``), so every case says ``columns = "superset"``;
and it ignores row order unless the category is ``order_by`` or the question says order,
sort or arrange (its ``normalize_table``), so those are the cases whose order we drop.

We expand more than defog's ``get_all_minimal_queries`` does, on purpose: every brace group
(defog expands only the first of each query), nested groups, and never a brace inside a
string literal, a quoted identifier or a comment (defog would split ``'{"a": 1}'``). An
expansion that would make more than ``MAX_EXPANSIONS`` golds is refused: each gold is
executed, so a query with twelve independent groups is a mistake, not a benchmark.
"""
from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from itertools import combinations, product
from pathlib import Path
from typing import Any, Iterator, Union

from ..errors import BadInputError
from .layouts import Layout, Predictions, Records, layout_text, register_layout

MAX_EXPANSIONS = 256  # golds one query may expand to; each is executed once per database

#: defog's own test of "the question asks for an order" (normalize_table)
ORDER_WORDS = re.compile(r"\b(order|sort|arrange)\b", re.IGNORECASE)
#: the CSV columns a case reads; the others go to its metadata as they are
REQUIRED_COLUMNS = ("question", "query", "db_name")


class AlternativesError(ValueError):
    """A gold query whose ``{...}`` alternatives cannot be expanded: unbalanced braces, an
    empty option, a ``{}`` with no earlier group, or too many expansions. ``offset`` is the
    character position in the query, when one is to blame."""

    def __init__(self, message: str, offset: int | None = None) -> None:
        super().__init__(message)
        self.offset = offset


# -- the template ---------------------------------------------------------------------------
@dataclass(frozen=True)
class _Group:
    options: tuple["_Template", ...]
    offset: int


@dataclass(frozen=True)
class _Repeat:  # "{}": the selection of the previous group, again
    offset: int


_Template = tuple[Union[str, _Group, _Repeat], ...]


def _opaque_end(sql: str, i: int) -> int:
    """Where the string literal, quoted identifier or comment starting at ``i`` ends (the
    index after it), or ``i`` when none starts there. Unclosed ones run to the end. A
    backslash escapes the next character inside quotes (``'I\\'m'``, as BigQuery and MySQL
    read it, and defog's files write it); a standard string ending in a backslash is rare."""
    ch = sql[i]
    if ch in "'\"`":
        j = i + 1
        while j < len(sql):
            if sql[j] == "\\" and ch != "`":  # \' inside a string (BigQuery, MySQL; defog's files use it)
                j += 2
                continue
            if sql[j] == ch:
                if j + 1 < len(sql) and sql[j + 1] == ch:  # '' inside '...': an escaped quote
                    j += 2
                    continue
                return j + 1
            j += 1
        return len(sql)
    if sql.startswith("--", i):
        end = sql.find("\n", i)
        return len(sql) if end < 0 else end
    if sql.startswith("/*", i):
        end = sql.find("*/", i + 2)
        return len(sql) if end < 0 else end + 2
    return i


def _split_top(sql: str, sep: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """``(start, end)`` spans of ``sql[start:end]`` split on ``sep`` where it stands outside
    quotes, comments, parentheses and braces."""
    end = len(sql) if end is None else end
    spans, depth, i, begin = [], 0, start, start
    while i < end:
        skip = _opaque_end(sql, i)
        if skip != i:
            i = skip
            continue
        ch = sql[i]
        if ch in "({":
            depth += 1
        elif ch in ")}":
            depth -= 1
        elif ch == sep and depth == 0:
            spans.append((begin, i))
            begin = i + 1
        i += 1
    spans.append((begin, end))
    return spans


def _parse(sql: str, start: int, end: int) -> _Template:
    """The template of ``sql[start:end]``: text, and brace groups whose options are templates."""
    parts: list[str | _Group | _Repeat] = []
    i, text_from = start, start
    while i < end:
        skip = _opaque_end(sql, i)
        if skip != i:
            i = min(skip, end)
            continue
        ch = sql[i]
        if ch == "}":
            raise AlternativesError("a '}' closes no '{'", i)
        if ch != "{":
            i += 1
            continue
        close = _matching_brace(sql, i, end)
        parts.append(sql[text_from:i])
        inner = sql[i + 1:close]
        if not inner.strip():
            parts.append(_Repeat(i))
        else:
            options = []
            for a, b in _split_top(sql, ",", i + 1, close):
                if not sql[a:b].strip():
                    raise AlternativesError("an empty option in a '{...}' group", a)
                lead = len(sql[a:b]) - len(sql[a:b].lstrip())
                trail = len(sql[a:b].rstrip())
                options.append(_parse(sql, a + lead, a + trail))
            parts.append(_Group(tuple(options), i))
        i = text_from = close + 1
    parts.append(sql[text_from:end])
    return tuple(p for p in parts if p != "")


def _matching_brace(sql: str, at: int, end: int) -> int:
    depth, i = 0, at
    while i < end:
        skip = _opaque_end(sql, i)
        if skip != i:
            i = skip
            continue
        if sql[i] == "{":
            depth += 1
        elif sql[i] == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise AlternativesError("a '{' is never closed", at)


# -- counting and expanding -----------------------------------------------------------------
def _count(template: _Template) -> int:
    total = 1
    for part in template:
        if isinstance(part, _Group):
            n = 1
            for option in part.options:  # every non-empty subset, each option expanded: prod(1 + k) - 1
                n *= 1 + _count(option)
            total *= n - 1
    return total


def _expand(template: _Template) -> Iterator[str]:
    """Every text ``template`` stands for, groups varying left to right (last fastest)."""
    choices: list[list[str]] = []
    for part in template:
        if isinstance(part, _Group):
            picks = []
            for r in range(1, len(part.options) + 1):
                for subset in combinations(part.options, r):
                    for texts in product(*[list(_expand(o)) for o in subset]):
                        picks.append(", ".join(texts))
            choices.append(picks)
    for picked in product(*choices):
        out, k, last = [], 0, None
        for part in template:
            if isinstance(part, str):
                out.append(part)
            elif isinstance(part, _Group):
                last = picked[k]
                k += 1
                out.append(last)
            else:
                if last is None:
                    raise AlternativesError("'{}' repeats the previous '{...}' selection, but none comes before it",
                                            part.offset)
                out.append(last)
        yield "".join(out)


def expand_alternatives(sql: str, limit: int = MAX_EXPANSIONS) -> list[str]:
    """Every query a defog gold stands for, in order, without duplicates: its
    ``;``-separated alternatives, each with every ``{a, b, ...}`` group replaced by each
    non-empty selection of its options (kept in order, joined by ", ") and each ``{}`` by
    the selection of the group before it. Braces, semicolons and commas inside string
    literals, quoted identifiers and comments are text. More than ``limit`` expansions,
    or a malformed group, is an ``AlternativesError``."""
    out: dict[str, None] = {}
    total = 0
    for a, b in _split_top(sql, ";"):
        if not sql[a:b].strip():
            continue
        lead = len(sql[a:b]) - len(sql[a:b].lstrip())
        template = _parse(sql, a + lead, a + len(sql[a:b].rstrip()))
        total += _count(template)
        if total > limit:
            raise AlternativesError(f"the alternatives expand to more than {limit} gold queries (at least {total})")
        for text in _expand(template):
            out.setdefault(text, None)
    if not out:
        raise AlternativesError("no query (only ';' and whitespace)")
    return list(out)


# -- the layout -----------------------------------------------------------------------------
def _rows(path: Path) -> Iterator[tuple[int, dict[str, str]]]:
    """``(line, row)`` of a CSV file with a header, the line where each row starts."""
    text = layout_text(path)  # read once when the predictions reader reads it too
    reader = csv.DictReader(io.StringIO(text, newline=""))
    fields = reader.fieldnames or []
    missing = [c for c in REQUIRED_COLUMNS if c not in fields]
    if missing:
        raise BadInputError(path, f"the header has no column {', '.join(map(repr, missing))} (it has {', '.join(fields)})",
                            line=1, fix="give defog's questions CSV: question, query, db_name, query_category, ...")
    start = reader.line_num + 1
    try:
        for row in reader:
            if None in row:
                raise BadInputError(path, f"{len(fields) + len(row[None])} fields, the header has {len(fields)}",
                                    line=start, fix="quote fields that contain commas")
            yield start, row
            start = reader.line_num + 1
    except csv.Error as exc:
        raise BadInputError(path, f"not valid CSV ({exc})", line=reader.line_num,
                            fix="check the quoting of this row") from None


def _defog_records(path: Path) -> Records:
    """One case per row, its id the 0-based row position (as defog's results are keyed)."""
    for index, (line, row) in enumerate(_rows(path)):
        for key in REQUIRED_COLUMNS:
            if not (row.get(key) or "").strip():
                raise BadInputError(path, "missing or empty", line=line, field=key,
                                    fix="every row needs a question, a query and a db_name")
        query = row["query"]
        try:
            golds = expand_alternatives(query)
        except AlternativesError as exc:
            at = "" if exc.offset is None else f" (at character {exc.offset + 1}: {query[exc.offset:exc.offset + 30]!r})"
            raise BadInputError(path, f"{exc}{at}", line=line, field="query",
                                fix="balance the braces, or write fewer alternatives (separate whole queries "
                                    "with ';')") from None
        category = (row.get("query_category") or "").strip()
        compare: dict[str, Any] = {"columns": "superset"}
        if category != "order_by" and not ORDER_WORDS.search(row["question"]):
            compare["order_matters"] = False  # defog sorts both results before comparing
        meta = {k: v for k, v in row.items() if k not in ("question", "query", "query_category") and v is not None}
        raw: dict[str, Any] = {**meta, "id": str(index), "question": row["question"],
                               "gold_sql": golds[0] if len(golds) == 1 else golds, "compare": compare}
        if category:
            raw["category"] = category
        if len(golds) > 1:
            raw["gold_template"] = query  # the gold as written, before expansion
        yield line, raw


def _defog_predictions(path: Path) -> Predictions | None:
    """defog's results CSV (its questions' columns plus ``generated_query``), keyed by row
    position; None for any other file."""
    if path.is_dir() or path.suffix.lower() != ".csv":
        return None
    text = layout_text(path)
    header = next(csv.reader(io.StringIO(text, newline="")), [])
    if "generated_query" not in header:
        return None
    out: Predictions = {}
    for index, (_, row) in enumerate(_rows(path)):
        meta = {k: row[k] for k in ("latency_seconds", "tokens_used", "error_msg") if row.get(k)}
        out[str(index)] = ((row.get("generated_query") or "").strip(), meta)
    return out


DEFOG = register_layout(Layout(
    "defog", _defog_records, questions="questions_gen_postgres.csv", dialect="postgres", split_by="db_name",
    database_file="{0}.db", predictions=_defog_predictions,
    description="defog sql-eval's questions CSV (question, query, db_name, query_category, instructions); "
                "'{a, b}' alternatives and ';'-separated queries become several golds, a prediction may return extra "
                "columns (columns = \"superset\"); databases <folder>/<db_name>.db or a URL with {db_id}"))
