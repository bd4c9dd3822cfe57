"""Join paths of gold queries: the column pairs their SELECTs join tables by.

A star schema whose references are neither declared nor named alike (TPC-DS's
``ss_sold_date_sk = d_date_sk``: no foreign key, and ``*_sk`` is no name the observer
links to a key) has no observed dependency, so its variants keep its tables apart: a
subset drops a dimension row its kept fact rows join (a five-table join keeps a few per
cent of its rows), and no clone witness finds a path to follow. The golds name the path:
each equality between two columns of two tables a SELECT reads is a candidate reference,
which ``constraints`` keeps only where the data agrees (one column a key, every value of
the other in it), as it does a candidate found by name."""
from __future__ import annotations

from collections.abc import Iterable

Join = tuple[str, str, str, str]  # (table, column, table, column), as the catalog spells them


def gold_joins(gold_sqls: Iterable[str], dialect: str, columns: dict[str, set[str]]) -> set[Join]:
    """Every column equality joining two tables in a gold's SELECTs (WHERE and ON conjuncts, and
    those every disjunct of an OR among them holds), in both orders, a derived table's column
    read as the base columns it reads. Columns of an outer query (correlated) and ambiguous ones are skipped."""
    from sqlglot import exp

    from .witnesses import Catalog, conjuncts_of, from_items, parsed_golds, resolve_column, select_sources
    names = Catalog(columns)
    out: set[Join] = set()
    for _, tree in parsed_golds(gold_sqls, dialect):
        for select in tree.find_all(exp.Select):
            if len(from_items(select)) < 2:
                continue  # one FROM item: no join (a derived table beside one table is two: TPC-DS q34)
            sources = select_sources(select, names)
            conditions = [select.args["where"].this] if select.args.get("where") is not None else []
            conditions += [j.args["on"] for j in select.args.get("joins") or [] if j.args.get("on") is not None]
            for cond in conditions:
                for c in conjuncts_of(cond):
                    if not (isinstance(c, exp.EQ) and isinstance(c.this, exp.Column)
                            and isinstance(c.expression, exp.Column)):
                        continue
                    for (a, x), (b, y) in ((p, q) for p in _bases(c.this, select, sources, names)
                                           for q in _bases(c.expression, select, sources, names)):
                        if a != b:
                            out |= {(a, x, b, y), (b, y, a, x)}
    return out


def _bases(col: object, select: object, sources: dict[str, str], names: object) -> list[tuple[str, str]]:
    """The (table, column) a join's column reads: its own table's, or through a derived table,
    CTE or UNION ALL the base column of each branch (TPC-DS's ``sold_item_sk = i_item_sk`` of a
    channel union: ``ws_item_sk``, ``cs_item_sk``, ``ss_item_sk``). Without it a subset kept
    the union's items and times apart from its sales, and the gold had no row on a variant."""
    from .tracing import base_columns
    from .witnesses import resolve_column
    key = resolve_column(col, sources, names.lower)  # type: ignore[attr-defined]
    if key is not None:
        return [(names.originals[sources[key[0]]], key[1])]  # type: ignore[attr-defined]
    return base_columns(select, col, names)


__all__ = ["Join", "gold_joins"]
