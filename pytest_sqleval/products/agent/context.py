"""Assembling the schema context of one case under the configuration's caps
(at most ``max_tables`` tables and ``max_context_tokens`` tokens, counted with the
model's tokenizer; see :mod:`.tokens`).

- ``alphabetical`` (a0): the first tables by qualified name, in order, until a cap is hit.
- ``retrieval`` (a1-a3): BM25 order; with the layer, the join partners the layer gives
  the three best tables come right after them. Tables with no matching word are left out
  once five tables are in. A table too large for what is left of the budget is skipped,
  and the next one tried.
- ``compact`` (raw_llm): every table as ``schema.table(col TYPE, ...)``, until 8k tokens.

With the layer (a2, a3) each table is followed by the notes of the cubes built on it;
a3 adds a warnings section (anti-patterns and deprecated tables) about the chosen
tables, and marks deprecated tables in their DDL. Everything counts against the cap.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from . import layer as L
from .config import AgentConfig
from .retriever import SchemaRetriever
from .schema import SuiteWorkspace, TableDoc
from .tokens import TokenCounter

MIN_TABLES = 5
SEEDS_FOR_JOINS = 3
WARNINGS_HEADER = "Anti-patterns and deprecated tables (from the semantic layer; obey them):"


@dataclass
class SchemaContext:
    text: str
    tables: list[str]
    tokens: int
    tokenizer: str
    warnings: list[str] = field(default_factory=list)
    scores: dict[str, float] = field(default_factory=dict)  # retrieval scores of the chosen tables
    skipped_for_budget: int = 0

    def summary(self) -> dict[str, Any]:
        return {"context_tables": self.tables, "n_context_tables": len(self.tables), "context_tokens": self.tokens,
                "tokenizer": self.tokenizer, "n_warnings": len(self.warnings),
                "retrieval_scores": {k: round(v, 3) for k, v in self.scores.items()},
                "skipped_for_budget": self.skipped_for_budget}


def build_context(ws: SuiteWorkspace, config: AgentConfig, question: str, counter: TokenCounter) -> SchemaContext:
    layer = ws.layer if config.uses_layer else None
    if config.context == "compact":
        return _compact(ws, config, counter)
    if config.context == "alphabetical":
        order: list[tuple[TableDoc, float | None]] = [(t, None) for t in ws.tables]
    else:
        order = _retrieval_order(ws, config, question, layer)
    max_tables = config.max_tables or len(ws.tables)
    budget = config.max_context_tokens
    chosen: list[tuple[TableDoc, str, int, float | None]] = []
    used = 0
    skipped = 0
    for table, score in order:
        if len(chosen) >= max_tables:
            break
        if config.context == "retrieval" and score is not None and score <= 0 and len(chosen) >= MIN_TABLES:
            break
        text, n = _block(ws, config, table, layer, counter)
        if used + n > budget:
            if config.context == "alphabetical":
                break  # "the first N tables": no skipping ahead
            skipped += 1
            continue
        chosen.append((table, text, n, score))
        used += n
    warnings: list[str] = []
    if config.uses_anti_patterns and layer is not None:
        while True:
            warnings = L.warnings_lines(layer, [t.qualified for t, *_ in chosen])
            w_tokens = counter.count("\n".join([WARNINGS_HEADER, *warnings])) if warnings else 0
            if used + w_tokens <= budget or len(chosen) <= 1:
                break
            _, _, n, _ = chosen.pop()  # make room: the warnings outrank the weakest table
            used -= n
            skipped += 1
        while warnings and used + counter.count("\n".join([WARNINGS_HEADER, *warnings])) > budget:
            warnings.pop()  # one table and a few warnings beat many warnings about nothing
    parts = [text for _, text, _, _ in chosen]
    if warnings:
        parts.append("\n".join([WARNINGS_HEADER, *warnings]))
    text = "\n\n".join(parts)
    return SchemaContext(text=text, tables=[t.qualified for t, *_ in chosen], tokens=counter.count(text),
                         tokenizer=counter.name, warnings=warnings,
                         scores={t.qualified: s for t, _, _, s in chosen if s is not None}, skipped_for_budget=skipped)


def _retrieval_order(ws: SuiteWorkspace, config: AgentConfig, question: str,
                     layer: Any) -> list[tuple[TableDoc, float | None]]:
    key = ("retriever", config.layer if layer is not None else "none")  # the ranking ignores joins
    with ws.lock:
        retriever = ws.cache.get(key)
        if retriever is None:
            extra = {t.qualified.lower(): L.retrieval_text(layer, t.qualified) for t in ws.tables} if layer else None
            retriever = ws.cache[key] = SchemaRetriever(ws.tables, extra)
    ranked = retriever.rank(question)
    order = [(r.table, r.score) for r in ranked]
    if layer is None or not config.joins:
        return order
    by_name = {t.qualified.lower(): (t, s) for t, s in order}
    head = order[:SEEDS_FOR_JOINS]
    out = list(head)
    seen = {t.qualified.lower() for t, _ in head}
    for t, _ in head:
        for other in L.join_neighbours(layer, t.qualified):
            if other in by_name and other not in seen:
                seen.add(other)
                out.append(by_name[other])
    out += [(t, s) for t, s in order if t.qualified.lower() not in seen]
    return out


def _block(ws: SuiteWorkspace, config: AgentConfig, table: TableDoc, layer: Any,
           counter: TokenCounter) -> tuple[str, int]:
    key = ("block", table.qualified, config.layer if layer is not None else "none", config.joins, counter.name)
    hit: tuple[str, int] | None = ws.cache.get(key)
    if hit is not None:
        return hit
    note = L.deprecated_note(layer, table.qualified) if config.uses_anti_patterns and layer is not None else ""
    text = table.ddl(note=note)
    if layer is not None:
        notes = L.table_notes(layer, table.qualified, joins=config.joins)
        if notes:
            text += "\n" + notes
    hit = (text, counter.count(text) + 1)  # + the separator
    ws.cache[key] = hit
    return hit


def _compact(ws: SuiteWorkspace, config: AgentConfig, counter: TokenCounter) -> SchemaContext:
    """Every table's columns, whatever the question: built once per workspace, since
    counting its tokens again for every question cost about 10 ms a question."""
    key = ("compact", config.max_tables, config.max_context_tokens, counter.name)
    hit = ws.cache.get(key)
    if hit is None:
        hit = ws.cache[key] = _build_compact(ws, config, counter)
    return hit


def _build_compact(ws: SuiteWorkspace, config: AgentConfig, counter: TokenCounter) -> SchemaContext:
    lines: list[str] = []
    used = 0
    skipped = 0
    for t in ws.tables:
        if config.max_tables is not None and len(lines) >= config.max_tables:
            break
        line = t.compact()
        n = counter.count(line) + 1
        if used + n > config.max_context_tokens:
            skipped += 1
            continue
        lines.append(line)
        used += n
    text = "\n".join(lines)
    return SchemaContext(text=text, tables=[line.split("(", 1)[0] for line in lines], tokens=counter.count(text),
                         tokenizer=counter.name, skipped_for_budget=skipped)
