"""Spider's text rewrites of a query (``evaluation.py``'s placeholder, ``postprocess`` and
``replace_cur_year``): plain string work, apart from ``peers`` so that the grading process,
which only names them for a failure text (``layers.official``), does not load ``peers``'
comparison stack (pyarrow, numpy, DuckDB's bindings: about 0.4 s of CPU a run) for them."""
from __future__ import annotations

import re
from typing import Any

#: what Spider's evaluator writes for the placeholder a value-less model predicts
PLACEHOLDER, PLACEHOLDER_AS = "value", "1"
#: the spaced comparison operators ``postprocess`` joins, in the order it joins them
SPACED_OPERATORS = (("> =", ">="), ("< =", "<="), ("! =", "!="))
_CUR_YEAR = re.compile(r"YEAR\s*\(\s*CURDATE\s*\(\s*\)\s*\)\s*", re.IGNORECASE)


def official_prediction(sql: str) -> str:
    """The prediction as Spider's ``evaluation.py`` hands it on: every ``value`` (a plain
    substring, so inside identifiers and strings too) replaced by ``1``, then the spaced
    operators joined. Applying it twice changes nothing: a ``1`` cannot make a new
    ``value``, and a join removes a space without making a new ``x =``."""
    return join_spaced_operators(sql.replace(PLACEHOLDER, PLACEHOLDER_AS))


def join_spaced_operators(sql: str) -> str:
    """Spider's ``postprocess``, applied to the gold and the prediction alike."""
    for spaced, joined in SPACED_OPERATORS:
        sql = sql.replace(spaced, joined)
    return sql


def current_year(sql: str) -> str:
    """Spider's ``replace_cur_year``, applied to each query as it is executed."""
    return _CUR_YEAR.sub("2020", sql)


def official_rewrites(sql: str) -> list[dict[str, Any]]:
    """Where Spider's evaluator rewrites a prediction before running it, and how: one entry
    per kind (``value_placeholder``, ``spaced_operator``, ``current_year``) with the text it
    found, how many times, its first line and column, and what it becomes. Empty when the
    prediction runs as written (DISTINCT removal aside, which ``distinct_stripping`` names)."""
    found = []
    for kind, needles, becomes in (
            ("value_placeholder", [(PLACEHOLDER, PLACEHOLDER_AS)], f"every {PLACEHOLDER!r} becomes {PLACEHOLDER_AS!r}"),
            ("spaced_operator", list(SPACED_OPERATORS), "joined")):
        hits = [(sql.find(n), n, j) for n, j in needles if n in sql]
        if hits:
            at, text, joined = min(hits)
            found.append({"rewrite": kind, "text": text, "count": sum(sql.count(n) for _, n, _ in hits),
                          "line": sql.count("\n", 0, at) + 1, "col": at - (sql.rfind("\n", 0, at) + 1) + 1,
                          "becomes": becomes if kind == "value_placeholder" else joined})
    year = _CUR_YEAR.search(sql)
    if year is not None:
        at = year.start()
        found.append({"rewrite": "current_year", "text": year.group(0).strip(), "count": len(_CUR_YEAR.findall(sql)),
                      "line": sql.count("\n", 0, at) + 1, "col": at - (sql.rfind("\n", 0, at) + 1) + 1,
                      "becomes": "2020"})
    return found
