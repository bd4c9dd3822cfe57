"""Getting one SQL statement out of a model's reply: a fenced block, or SQL in prose.

Order of preference: the last ```sql block; else the last fenced block that starts
like a query; else the first ``SELECT``/``WITH`` in the text, cut where sqlglot stops
accepting it (a prose tail such as "This query counts ..." is dropped). ``None`` when the
reply holds no query at all."""
from __future__ import annotations

import re

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.S)
_START = re.compile(r"(?im:^\s*\(?\s*(?:select|with)\b)|\b(?:SELECT|WITH)\b(?=\s)")
_QUERYISH = re.compile(r"^\s*\(?\s*(SELECT|WITH|FROM)\b", re.I)


def extract_sql(text: str | None, dialect: str = "duckdb") -> tuple[str | None, str]:
    """``(sql, how)`` with ``how`` in ``fenced_sql``, ``fenced``, ``prose``, ``none``."""
    if not text or not text.strip():
        return None, "none"
    blocks = _FENCE.findall(text)
    sql_blocks = [b for lang, b in blocks if lang.lower() in ("sql", "duckdb", "postgresql", "postgres", "sqlite")]
    for b in reversed(sql_blocks):
        cleaned = _clean(b)
        if cleaned:
            return cleaned, "fenced_sql"
    for _, b in reversed(blocks):
        cleaned = _clean(b)
        if cleaned and _QUERYISH.match(cleaned):
            return cleaned, "fenced"
    m = _START.search(text)
    if m is None:
        return None, "none"
    candidate = text[m.start():]
    best = _longest_parsing_prefix(candidate, dialect)
    return (best, "prose") if best else (None, "none")


def _clean(sql: str) -> str:
    sql = sql.strip()
    while sql.endswith(";"):
        sql = sql[:-1].rstrip()
    return sql


def _longest_parsing_prefix(text: str, dialect: str) -> str | None:
    """Cut at the first semicolon or blank line, then at a sentence end, then word by word
    from the end, until sqlglot parses one query that reads a table."""
    import sqlglot
    from sqlglot import exp
    text = text.split(";", 1)[0]
    text = re.split(r"\n\s*\n", text, maxsplit=1)[0].rstrip()
    sentence = re.split(r"(?<=[^.\s])\.\s+(?=[A-Z])", text, maxsplit=1)
    candidates = [text] + ([sentence[0]] if len(sentence) > 1 else [])
    cuts = [m.start() for m in re.finditer(r"\s+", text)]
    candidates += [text[:i] for i in reversed(cuts)][:_MAX_CUTS]
    for cand in candidates:
        cand = _clean(cand)
        if not cand or not re.search(r"\bFROM\b", cand, re.I):
            continue
        try:
            parsed = sqlglot.parse(cand, read=dialect)
        except Exception:
            continue
        if len(parsed) == 1 and isinstance(parsed[0], exp.Query):
            return cand
    return None


_MAX_CUTS = 200
