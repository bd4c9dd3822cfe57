"""Schema retrieval: rank a suite's tables for a question with BM25 (``rank-bm25``'s Okapi
BM25) over table and column names, their comments and, when the configuration uses the
semantic layer, the layer's descriptions of each table.

Identifiers are split on ``_`` and ``.`` (``revenue_recognized`` -> ``revenue``,
``recognized``) and the whole identifier is kept too, so a question quoting a column
name verbatim ranks its table first. A light plural folding (``orders`` -> ``order``)
matches questions to names; there is no other stemming."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Sequence

from .schema import TableDoc

_WORD = re.compile(r"[a-z0-9]+(?:_[a-z0-9]+)*")
STOPWORDS = frozenset("""a an and are as at be by did do does for from had has have how i in is it its many much
of on or our per show that the their them there these they this those to was we were what when where which who
whom why with within without would you your give list me all each every any total number""".split())


def _fold(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def tokenize(text: str) -> list[str]:
    """Lower-cased words; ``snake_case`` identifiers give their parts and themselves."""
    out: list[str] = []
    for ident in _WORD.findall(text.lower()):
        parts = ident.split("_")
        if len(parts) > 1:
            out.append(ident)
        for p in parts:
            if len(p) >= 2 and p not in STOPWORDS:
                out.append(_fold(p))
    return out


def table_document(table: TableDoc, extra: str = "") -> list[str]:
    """The words a table is found by: its name (twice: names matter most), schema,
    comment, columns and their comments, and any layer text."""
    words = [table.qualified, table.name, table.schema, table.comment]
    for c in table.columns:
        words += [c.name, c.comment]
    words.append(extra)
    return tokenize(" ".join(w for w in words if w))


@dataclass
class Ranked:
    table: TableDoc
    score: float


class SchemaRetriever:
    """BM25 over one suite's tables; build once, query per case."""

    def __init__(self, tables: Sequence[TableDoc], extra_text: dict[str, str] | None = None) -> None:
        from rank_bm25 import BM25Okapi
        self.tables = list(tables)
        extra_text = extra_text or {}
        corpus = [table_document(t, extra_text.get(t.qualified.lower(), "")) or ["_"] for t in self.tables]
        self._bm25 = BM25Okapi(corpus)

    def rank(self, question: str) -> list[Ranked]:
        """Every table, best first (ties by name, so the order is deterministic)."""
        query = tokenize(question)
        if not query:
            return [Ranked(t, 0.0) for t in self.tables]
        scores: Any = self._bm25.get_scores(query)
        ranked = [Ranked(t, float(s)) for t, s in zip(self.tables, scores)]
        ranked.sort(key=lambda r: (-round(r.score, 9), r.table.qualified.lower()))
        return ranked
