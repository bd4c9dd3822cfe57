"""Group witnesses: new fact rows that change one output group's aggregate, on tables with no key.

``clones.py`` writes its witnesses (a copy of a row that reaches the output, a group pushed
to a HAVING bound) only into a table whose clone can take a fresh key: a declared key, a
unique column, or duplicate rows already there. A fact table loaded from CSV or Parquet has
none of them: TPC-H's ``lineitem`` (its key is ``(l_orderkey, l_linenumber)``) and every
TPC-DS fact table (``store_sales``: ``(ss_item_sk, ss_ticket_number)``). So on the TPC
databases no HAVING witness and no copy was ever written on a fact table: ``HAVING
sum(l_quantity) > 300`` moved to ``> 301`` (q18) and ``HAVING count(*) >= 10`` moved to ``>=
11`` (TPC-DS q06) coincided on every variant, as did ``sum`` for ``avg`` over lineitem.

Such a table gets a *row identity* here (``row_identity``): a pair (a reference column
``d``, an integer free column ``c``), both never NULL, that is unique on the pinned data
(a line number within its order, a ticket number within its item). A new row takes, in
``c``, one more than the greatest ``c`` of its ``d`` where ``c`` is a code domain (few values,
each repeated: ``boundaries.Domain``; line numbers 1-7 stay 1-7, a full order gets no
new line) and one more than the column's greatest value otherwise (a new ticket). A table
where two references are unique together (``partsupp``: a part's supplier; ``order_line``
keyed by order and product) has that pair as its identity instead (``Identity.pair``): a
copy keeps the reference the gold groups by and takes in the other a value the table holds
that the kept one has no row with, a reaching row's value first (another German supplier
of the part), then further copies from the group's other reaching rows once one row's
values run out. The pair stays unique, no row becomes a
duplicate, every reference holds (the copy keeps its
source's references, or takes another row's), every NOT NULL holds; every other value is one its source had or a
value inside the column's domain (``boundaries.Domain``).

Witnesses, per SELECT of a gold whose tables are joined by inner joins, the *fact* being
its table with the most rows (a witness row reaches the output through the gold's whole
join path: it is a copy of a row that passes every conjunct):

- ``count``: per ``HAVING count(*) op b`` (or ``count(col)``), a group brought by copies of
  its rows to exactly ``b + 1``, ``b`` and ``b - 1`` rows, in that order (a later push
  never takes an earlier one's group), the nearest group below each first;
- ``sum``/``avg``: per ``HAVING sum(x) op b`` or ``avg(x) op b`` over a free fact column,
  the group's sum or average brought to ``b`` and the values beside it (the greatest value
  first), copies at values within the column's domain;
- ``copy`` (only where ``clones`` writes none): one more row in a group, which tells
  ``COUNT`` from ``COUNT(DISTINCT ...)``, ``SUM`` from ``AVG``, a bag from a set; per
  ``HAVING sum(e) op (SELECT ...)`` (TPC-H q11's share of a nation's stock), a copy of the
  one row of a group whose value lies under the threshold and over its half: a random copy
  changes neither ``sum``'s nor ``avg``'s groups where the threshold is a small share;
- ``spread``: per ``min``/``max`` of a free fact column, a copy with the column at its
  least and at its greatest value on the variant: a group of one value (where ``min(x)``
  equals ``max(x)``) then has two;
- ``null``: per aggregate argument or group key that is a free fact column with NULLs on
  the pinned data (NOT NULL observed: never), a copy with it NULL: ``count(x)`` then
  differs from ``count(*)``, and a NULL group appears.

Each witness is one query on the variant (bounded by the watchdog) and a few inserts, with
a sentence the record shows when a variant catches a prediction."""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

MAX_GROUP_COPIES = 100  # rows added to push one group to a HAVING bound, at most
CANDIDATE_ROWS = 8  # rows tried per witness (a full order has no line number left; the fewest rows first)
MAX_WITNESSES = 16  # per SELECT of a gold
MAX_SINGLES = 3  # copy, spread and null witnesses per SELECT of a gold (each one query per variant)
KEYED_SPREAD = 2  # a keyed table's witnesses go into every (CLONE_SPREAD * this)-th variant: clones covers most
MAX_IDENTITY_CHECKS = 12  # (d, c) pairs checked for uniqueness per table
MAX_REFERENCE_PAIRS = 45  # pairs of references checked (none may be unique); more references: no identity
MAX_HELD_ROWS = 500  # a witness's group rows no later write may change, at most
MAX_SIBLINGS = 16  # other rows of a group a pair identity's copies are taken from, once one row's run out


@dataclass(frozen=True)
class GroupWitness:
    """One witness: ``rows_sql`` (one parameter, the variant's turn) gives rows ``w0`` (the
    fact row to copy), ``need`` (copies), ``r0`` (the value ``column`` takes in them),
    ``r1`` (the value of one more copy, or NULL for none), then what the sentence shows."""

    gold: str
    table: str
    rows_sql: str
    kind: str  # count, sum, avg, copy, spread, null
    column: str | None
    what: str  # the sentence, with {shown} and {need} filled in when written
    keyless: bool  # the fact table has no key a clone can take fresh: ``row_identity`` gives one
    # fact columns the gold groups by: a copy keeps them (a fresh ticket would leave a per-ticket group), and
    # where ``row_identity``'s number is one of them, its reference takes a value the group lacks instead
    keep: tuple[str, ...] = ()
    reads: tuple[str, ...] = ()  # fact columns the gold reads: that reference may not be one of them
    # every kind: the fact columns the gold groups by, and a query giving the row ids (``w0``) of the fact rows
    # that reach the output: a pair identity's copy keeps the former and takes the other reference from the latter
    grouped_by: tuple[str, ...] = ()
    reaching: str = ""
    # the row ids of the other reaching rows in the group of row ``{rowid}``: a pair identity's copies of one row
    # run out of values its kept reference lacks (an order has so many products), so further copies take these
    siblings: str = ""
    keyed_elsewhere: bool = False  # a group key is another table's column: a reference the gold reads may lead to it
    # the rows of the group of row ``{rowid}`` on the gold's join path: its fact rows' ids, then each joined
    # table's (``held_tables``); none may change once the witness is written (``GroupWriter._hold_group``)
    held: str = ""
    held_tables: tuple[str, ...] = ()


class Identity(NamedTuple):
    """``row_identity``: a new row takes a fresh ``c`` within its reference ``d`` (``code``: one
    more than ``d``'s greatest, never past ``top``; else the column's greatest plus one). With
    ``pair``, ``d`` and ``c`` are two references unique together (``partsupp``'s part and
    supplier, ``order_line``'s order and product): a copy keeps one and takes in the other a
    value the table holds that the kept one has no row with, a value of a row that reaches
    the gold's output first (another German supplier of the part, in TPC-H q11)."""

    d: str
    c: str
    code: bool
    top: Any
    pair: bool = False


def group_witnesses(gold_sqls: Iterable[str], dialect: str, tables: dict[str, Any],
                    dependencies: Iterable[Any]) -> list[GroupWitness]:
    """The group witnesses of every gold. ``tables``: ``constraints.TableConstraints`` by name."""
    from sqlglot import exp

    from .clones import gold_digest
    from .witnesses import Catalog, parsed_golds
    names = Catalog({t: set(c.columns) for t, c in tables.items()})
    every = list(dependencies)
    out: list[GroupWitness] = []
    for sql, tree in parsed_golds(gold_sqls, dialect):
        for select in tree.find_all(exp.Select):
            try:
                found = _select_witnesses(select, names, tables, every, dialect, gold_digest(sql))
            except Exception:  # an odd tree: no group witness for this SELECT
                continue
            out += [w for w in found if w not in out]
    return out


def _select_witnesses(select: Any, names: Any, tables: dict[str, Any], every: list[Any], dialect: str,
                      digest: str) -> list[GroupWitness]:
    from sqlglot import exp

    from .clones import deps_columns, fresh_columns, positions, turned_rowid
    from .witnesses import band_terms, group_keys, resolve_column, select_sources, split_terms
    sources = select_sources(select, names)
    joins = select.args.get("joins") or []
    if not sources or any(j.args.get("using") or j.side or j.kind not in ("", None, "INNER", "CROSS") for j in joins):
        return []
    if len(sources) != 1 + len(joins) or select.args.get("from_", select.args.get("from")) is None:
        return []  # a derived table in FROM: its rows are not a table's
    conjuncts: list[Any] = []
    if select.args.get("where") is not None:
        conjuncts += split_terms(select.args["where"].this, exp.And)
    for j in joins:
        if j.args.get("on") is not None:
            conjuncts += split_terms(j.args["on"], exp.And)

    def resolve(c: Any) -> tuple[str, str] | None:
        return resolve_column(c, sources, names.lower)

    for cond in conjuncts:  # an outer query's column: the SELECT is correlated, its rows are no table's
        if any(resolve(c) is None for c in cond.find_all(exp.Column) if c.find_ancestor(exp.Select) is select):
            return []
    table_of = {a: names.originals[t] for a, t in sources.items()}
    fact = sorted(sources, key=lambda a: (-tables[table_of[a]].rows, a))[0]
    table = table_of[fact]
    t = tables[table]
    keyless = fresh_columns(t, deps_columns(every, table)) is None
    free = set(t.free)
    fact_name = table.rsplit(".", 1)[-1]
    path = ", ".join(sorted({table_of[a].rsplit(".", 1)[-1] for a in sources if a != fact}))
    through = f" joined through {path}" if path else ""
    base = select.copy()
    for arg in ("group", "having", "order", "limit", "offset", "qualify", "distinct", "windows", "where"):
        base.set(arg, None)
    for j in base.args.get("joins") or []:
        j.set("on", None)
        j.set("kind", "CROSS")

    def inner(columns: list[tuple[Any, str]], filters: list[Any]) -> str:
        q = base.copy()
        q.set("expressions", [exp.alias_(exp.column("rowid", table=fact), "w0")]
              + [exp.alias_(e, name) for e, name in columns])
        if filters:
            q.set("where", exp.Where(this=exp.and_(*[f.copy() for f in filters])))
        return str(q.sql(dialect=dialect))

    out: list[GroupWitness] = []
    keys = group_keys(select)
    shown_keys = [(k.copy(), f"v{i}") for i, k in enumerate(keys[:2])]
    shown_out = ", ".join(f"v{i}" for i in range(len(shown_keys))) or "NULL AS v0"
    # every rows_sql is ``w0, need, r0, r1`` and the shown keys: the turned row id, then all of them
    turned = f"{turned_rowid(exp.column('w0')).sql(dialect=dialect)}, {positions(4 + max(1, len(shown_keys)))}"

    def sentence(text: str) -> str:
        return text.replace("{through}", through).replace("{fact}", fact_name)

    filtered = {k for c in conjuncts for k in (resolve(col) for col in c.find_all(exp.Column)) if k}
    if keyless:
        out.append(GroupWitness(digest, table, f"SELECT w0, 1 AS need, NULL AS r0, NULL AS r1, {shown_out} FROM "
                                               f"({inner(shown_keys, conjuncts)}) AS r ORDER BY {turned} LIMIT {CANDIDATE_ROWS}",
                                "copy", None, sentence("a copy of a {fact} row that reaches the output{through}, "
                                                       "in the group {shown}"), keyless))
    not_null = set(t.not_null_observed)
    columns: list[tuple[str, str]] = []  # (column, how): the aggregate arguments and group keys of the fact
    for node in select.expressions:
        for agg in node.find_all(exp.Min, exp.Max, exp.Avg, exp.Sum, exp.Count):
            key = resolve(agg.this) if isinstance(agg.this, exp.Column) else None
            if key is not None and key[0] == fact and key[1] in free and key not in filtered:
                columns.append((key[1], "extreme" if isinstance(agg, (exp.Min, exp.Max)) else "aggregate"))
    for k in keys:
        key = resolve(k) if isinstance(k, exp.Column) else None
        if key is not None and key[0] == fact and key[1] in free and key not in filtered:
            columns.append((key[1], "key"))
    rel = exp.Table(this=exp.to_identifier(table.rsplit(".", 1)[-1]),
                    db=exp.to_identifier(table.split(".", 1)[0]) if "." in table else None).sql(dialect=dialect)
    for column, how in dict.fromkeys(columns):
        q_col = exp.to_identifier(column).sql(dialect=dialect)
        if how == "extreme" and _numeric(t.columns.get(column, "")):
            for edge in ("min", "max"):
                out.append(GroupWitness(
                    digest, table, f"SELECT w0, 1 AS need, (SELECT {edge}({q_col}) FROM {rel}) AS r0, NULL AS r1, "
                                   f"{shown_out} FROM ({inner(shown_keys, conjuncts)}) AS r ORDER BY {turned} LIMIT {CANDIDATE_ROWS}",
                    "spread", column, sentence(f"a copy of a {{fact}} row{{through}} with {column} at its "
                                               f"{'least' if edge == 'min' else 'greatest'} value joins the group "
                                               f"{{shown}}"), keyless))
        if column not in not_null:
            out.append(GroupWitness(
                digest, table, f"SELECT w0, 1 AS need, NULL AS r0, NULL AS r1, {shown_out} FROM "
                               f"({inner(shown_keys, conjuncts)}) AS r ORDER BY {turned} LIMIT {CANDIDATE_ROWS}",
                "null", column, sentence(f"a copy of a {{fact}} row{{through}} with {column} NULL (the pinned "
                                         f"column holds NULLs) joins the group {{shown}}"), keyless))
    out = out[:MAX_SINGLES]  # written before the HAVING pushes: a single copy never moves a pushed group
    ops = (exp.GT, exp.GTE, exp.LT, exp.LTE, exp.EQ)
    band = band_terms(select) if keys else []
    kept = tuple(dict.fromkeys(k[1] for k in (resolve(g) if isinstance(g, exp.Column) else None for g in keys)
                               if k is not None and k[0] == fact))
    reads = tuple(sorted({k[1] for k in (resolve(c) for c in select.find_all(exp.Column)
                                         if c.find_ancestor(exp.Select) is select) if k is not None and k[0] == fact}))
    first_count = len(out)
    for cond in band:
        if type(cond) not in ops:
            continue
        agg, bound = cond.this, cond.expression
        if isinstance(agg, exp.Literal):
            agg, bound = bound, agg
        if isinstance(agg, (exp.Sum, exp.Avg)) and isinstance(bound, exp.Subquery) and keyless \
                and not agg.find(exp.Distinct) and all(resolve(c) is not None and resolve(c)[0] == fact  # type: ignore[index]
                                                       for c in agg.find_all(exp.Column)):
            out.append(_doubling_witness(agg, bound, cond, keys, shown_keys, shown_out, table, inner, conjuncts,
                                         turned, dialect, digest, sentence, keyless))
            continue
        if not isinstance(bound, exp.Literal) or bound.is_string or agg.find(exp.Distinct):
            continue
        rendered = " ".join(cond.sql(dialect=dialect).split())
        window: Any
        if isinstance(agg, exp.Count) and bound.this.isdigit() and keyless:
            arg = agg.this
            counted = [] if isinstance(arg, exp.Star) or arg is None else [exp.not_(exp.Is(this=arg.copy(),
                                                                                              expression=exp.Null()))]
            window = exp.Window(this=agg.copy(), partition_by=[k.copy() for k in keys])
            grouped = inner([(window, "n")] + shown_keys, conjuncts + counted)
            b = int(bound.this)
            for target in [x for x in (b + 1, b, b - 1) if x >= 1]:
                rows_sql = (f"SELECT w0, {target} - n AS need, NULL AS r0, NULL AS r1, {shown_out} FROM ({grouped}) "
                            f"AS grouped WHERE n < {target} AND n >= {target - MAX_GROUP_COPIES} "
                            f"ORDER BY {target} - n, {turned} LIMIT {CANDIDATE_ROWS}")
                out.append(GroupWitness(digest, table, rows_sql, "count", None, sentence(
                    f"{{need}} copies of a {{fact}} row{{through}} bring the group {{shown}} to exactly {target} "
                    f"rows (the gold's HAVING `{rendered}`)"), keyless))
        elif isinstance(agg, (exp.Sum, exp.Avg)) and keyless:
            key = resolve(agg.this) if isinstance(agg.this, exp.Column) else None
            if key is None or key[0] != fact or key[1] not in free or key in filtered:
                continue
            out += _sum_witnesses(agg, bound.this, rendered, keys, shown_keys, shown_out, key[1], table, inner,
                                  conjuncts, turned, dialect, digest, sentence, keyless)
    out[first_count:] = [replace(w, keep=kept, reads=reads) for w in out[first_count:]]
    if band and keyless:
        out += _unjoined_witnesses(band, keys, conjuncts, fact, t, resolve, inner, shown_keys, shown_out, turned,
                                   dialect, digest, sentence, kept, reads)
    reaching, siblings = (inner([], conjuncts), _siblings(keys, inner, conjuncts, dialect)) if keyless else ("", "")
    joined = [a for a in sources if a != fact]
    # a SELECT without groups: a copy adds a row whatever the others hold (and "the group" is every row)
    held = _siblings(keys, inner, conjuncts, dialect, [exp.column("rowid", table=a) for a in joined]) if keys else ""
    elsewhere = len(kept) < len(keys)
    return [replace(w, grouped_by=kept, reads=reads, reaching=reaching, siblings=siblings, keyed_elsewhere=elsewhere,
                    held=held, held_tables=tuple(table_of[a] for a in joined)) for w in out[:MAX_WITNESSES]]


def _siblings(keys: list[Any], inner: Callable[..., str], conjuncts: list[Any], dialect: str,
              path: list[Any] | None = None) -> str:
    """``GroupWitness.siblings``: the reaching rows whose group keys equal row ``{rowid}``'s;
    with ``path`` (the joined tables' row ids), those too (``GroupWitness.held``)."""
    from sqlglot import exp
    path = path or []
    grouped = inner([(k.copy(), f"g{i}") for i, k in enumerate(keys)]
                    + [(p, f"h{i}") for i, p in enumerate(path)], conjuncts)
    same = [exp.NullSafeEQ(this=exp.column(f"g{i}", table="s"), expression=exp.column(f"g{i}", table="o"))
            for i in range(len(keys))]
    on = f" AND {exp.and_(*same).sql(dialect=dialect)}" if same else ""
    shown = "".join(f", s.h{i}" for i in range(len(path)))
    return f"SELECT s.w0{shown} FROM ({grouped}) AS s, ({grouped}) AS o WHERE o.w0 = {{rowid}}{on}"


def _unjoined_witnesses(band: list[Any], keys: list[Any], conjuncts: list[Any], fact: str, t: Any,
                        resolve: Callable[[Any], tuple[str, str] | None], inner: Callable[..., str],
                        shown_keys: list[tuple[Any, str]], shown_out: str, turned: str, dialect: str, digest: str,
                        sentence: Callable[[str], str], kept: tuple[str, ...],
                        reads: tuple[str, ...]) -> list[GroupWitness]:
    """Per join ``fact.fk = other.col`` whose ``fk`` holds NULLs on the pinned data: a copy of a
    row of a group that passes the gold's band, its ``fk`` NULL, in the same group (its
    ticket kept: ``keep``). The join drops it; a near-miss that drops the join predicate
    pairs it with every row of ``other`` its filters keep and counts it: where one store
    passes (TPC-DS's ``s_county IN (...)`` at SF 0.01) that is the only row that tells them
    apart, and a copy given a fresh ticket is a group of one line, outside the band. The
    group the band keeps with the greatest aggregate first (at its upper edge, one more row
    takes it out)."""
    from sqlglot import exp
    from .witnesses import band_windows
    found = band_windows(band, keys)
    if found is None:
        return []
    windows, renamed = found
    where = " AND ".join(r.sql(dialect=dialect) for r in renamed)
    grouped = inner(windows + shown_keys, conjuncts)
    out = []
    for cond in conjuncts:
        if not (isinstance(cond, exp.EQ) and isinstance(cond.this, exp.Column) and isinstance(cond.expression,
                                                                                                exp.Column)):
            continue
        sides = [resolve(cond.this), resolve(cond.expression)]
        for mine, other in ((sides[0], sides[1]), (sides[1], sides[0])):
            if mine is None or other is None or mine[0] != fact or other[0] == fact \
                    or mine[1] in t.not_null_observed or mine[1] in t.not_null_declared or mine[1] in kept:
                continue
            rows_sql = (f"SELECT w0, 1 AS need, NULL AS r0, NULL AS r1, {shown_out} FROM ({grouped}) AS grouped "
                        f"WHERE {where} ORDER BY a0_0 DESC, {turned} LIMIT {CANDIDATE_ROWS}")
            out.append(GroupWitness(digest, t.name, rows_sql, "unjoined", mine[1], sentence(
                f"a copy of a {{fact}} row{{through}} in the group {{shown}}, its {mine[1]} NULL (joined to no row "
                f"of the gold's `{' '.join(cond.sql(dialect=dialect).split())}`)"), True, kept, reads))
    return out


def _doubling_witness(agg: Any, bound: Any, cond: Any, keys: list[Any], shown_keys: list[tuple[Any, str]],
                      shown_out: str, table: str, inner: Callable[..., str], conjuncts: list[Any], turned: str,
                      dialect: str, digest: str, sentence: Callable[[str], str], keyless: bool) -> GroupWitness:
    """Per ``HAVING sum(e) op (SELECT ...)`` or ``avg``, over fact columns (TPC-H q11: a part's
    stock value against a share of the nation's): a copy of the one row of a group whose
    value lies at or under the threshold and over its half. Its sum then crosses the
    threshold and its average does not, so ``sum`` and ``avg`` keep different groups; a copy
    of a random row changes neither where the threshold is a small share of the total."""
    from sqlglot import exp
    window_s = exp.Window(this=exp.Sum(this=agg.this.copy()), partition_by=[k.copy() for k in keys])
    window_n = exp.Window(this=exp.Count(this=exp.Star()), partition_by=[k.copy() for k in keys])
    grouped = inner([(window_s, "s"), (window_n, "n")] + shown_keys, conjuncts)
    threshold = bound.sql(dialect=dialect)
    rendered = " ".join(cond.sql(dialect=dialect).split())[:120]
    rows_sql = (f"SELECT w0, 1 AS need, NULL AS r0, NULL AS r1, {shown_out} FROM ({grouped}) AS grouped "
                f"WHERE n = 1 AND s > 0 AND s <= {threshold} AND 2 * s > {threshold} "
                f"ORDER BY {turned} LIMIT {CANDIDATE_ROWS}")
    return GroupWitness(digest, table, rows_sql, "copy", None, sentence(
        f"a copy of the one {{fact}} row{{through}} of the group {{shown}}, whose value lies under the gold's "
        f"threshold and over its half: its sum crosses it, its average does not (the gold's HAVING `{rendered}`)"),
        keyless)


def _numeric(ctype: str) -> bool:
    upper = ctype.upper()
    return any(w in upper for w in ("INT", "DECIMAL", "NUMERIC", "DOUBLE", "FLOAT", "REAL"))


def _sum_witnesses(agg: Any, bound: str, rendered: str, keys: list[Any], shown_keys: list[tuple[Any, str]],
                   shown_out: str, column: str, table: str, inner: Callable[..., str], conjuncts: list[Any],
                   turned: str, dialect: str, digest: str, sentence: Callable[[str], str],
                   keyless: bool) -> list[GroupWitness]:
    """A group's sum brought to the bound and its neighbours by copies at the column's greatest
    value and one with the rest; an average by one copy with the value that makes it exact.
    The greatest target first: a group brought to ``b + 1`` is not taken again for ``b``."""
    from decimal import Decimal, InvalidOperation

    from sqlglot import exp

    from .witnesses import neighbours
    rel = exp.Table(this=exp.to_identifier(table.rsplit(".", 1)[-1]),
                    db=exp.to_identifier(table.split(".", 1)[0]) if "." in table else None).sql(dialect=dialect)
    q_col = exp.to_identifier(column).sql(dialect=dialect)
    arg = agg.this
    window_sum = exp.Window(this=exp.Sum(this=arg.copy()), partition_by=[k.copy() for k in keys])
    window_n = exp.Window(this=exp.Count(this=arg.copy()), partition_by=[k.copy() for k in keys])
    grouped = inner([(window_sum, "s"), (window_n, "n")] + shown_keys, conjuncts)
    low, high = f"(SELECT min({q_col}) FROM {rel})", f"(SELECT max({q_col}) FROM {rel})"
    try:
        targets = sorted(neighbours(bound), key=Decimal, reverse=True)
    except InvalidOperation:
        return []
    out = []
    for target in targets:
        if isinstance(agg, exp.Sum):
            steps = (f"CAST(gap * 1.0 / top - 0.000001 AS INTEGER)" if dialect == "sqlite"
                     else "CAST(floor(gap / top - 0.000001) AS BIGINT)")
            rows_sql = (f"SELECT w0, need, top AS r0, gap - need * top AS r1, {shown_out} FROM (SELECT *, {steps} "
                        f"AS need FROM (SELECT w0, n, {target} - s AS gap, {high} AS top, {low} AS bottom, "
                        f"{shown_out} FROM ({grouped}) AS grouped "
                        f"WHERE s IS NOT NULL) AS gaps WHERE gap > 0 AND top > 0) AS steps "
                        f"WHERE need >= 0 AND need < {MAX_GROUP_COPIES} AND gap - need * top BETWEEN bottom AND top "
                        f"ORDER BY n + need, {turned} LIMIT {CANDIDATE_ROWS}")
            what = (f"{{need}} copies of a {{fact}} row{{through}} at its greatest {column} and one more bring "
                    f"the group {{shown}} to a sum of exactly {target} (the gold's HAVING `{rendered}`)")
            kind = "sum"
        else:
            value = f"({target} * (n + 1) - s)"
            rows_sql = (f"SELECT w0, 0 AS need, NULL AS r0, {value} AS r1, {shown_out} FROM ({grouped}) AS grouped "
                        f"WHERE s IS NOT NULL AND {value} BETWEEN {low} AND {high} "
                        f"ORDER BY {turned} LIMIT {CANDIDATE_ROWS}")
            what = (f"a copy of a {{fact}} row{{through}} brings the group {{shown}} to an average of exactly "
                    f"{target} (the gold's HAVING `{rendered}`)")
            kind = "avg"
        out.append(GroupWitness(digest, table, rows_sql, kind, column, sentence(what), keyless))
    return out


def row_identity(con: Any, engine: str, t: Any, dependencies: Iterable[Any]) -> Identity | None:
    """The ``Identity`` of a table with no key a clone can take fresh (see the module
    docstring), found on the pinned database ``con``; None when no pair is unique there."""
    from .constraints import qualified, quote
    not_null = set(t.not_null_observed)
    refs = sorted({d.child_columns[0] for d in dependencies if d.child == t.name and d.origin != "total"
                   and len(d.child_columns) == 1 and d.child_columns[0] in not_null})
    ints = [c for c in t.free if c in not_null and c not in refs
            and ("INT" in t.columns.get(c, "").upper() or (engine == "sqlite" and t.columns.get(c, "") == ""))]
    if not refs or t.duplicate_rows:
        return None
    rel = qualified(t.name, engine)
    try:
        stats = {c: con.execute(f"SELECT count(DISTINCT {quote(c)}), max({quote(c)}) FROM {rel}").fetchone()
                 for c in ints}
    except Exception:  # a type the engine cannot count: no identity
        return None
    from .witnesses import CODE_DOMAIN_VALUES, CODE_REPEATS

    def unique(a: str, b: str) -> bool:
        try:
            return not con.execute(f"SELECT 1 FROM {rel} GROUP BY {quote(a)}, {quote(b)} HAVING count(*) > 1 "
                                   f"LIMIT 1").fetchall()
        except Exception:  # the engine refused the check: not known to be unique
            return False

    # two references unique together (partsupp's part and supplier) are a key a copy would
    # duplicate, whatever its identity column: the pair is the identity then (one of them moves)
    pairs = [(a, b) for i, a in enumerate(refs) for b in refs[i + 1:]][:MAX_REFERENCE_PAIRS]
    if len(refs) * (len(refs) - 1) // 2 > MAX_REFERENCE_PAIRS:
        return None
    for a, b in pairs:
        if unique(a, b):
            others = [k for k in [t.primary_key, *t.unique_keys] if k and set(k) != {a, b}]
            return None if others or t.observed_unique else Identity(a, b, False, None, pair=True)
    checks = 0
    for c in sorted(ints, key=lambda c: (-int(stats[c][0] or 0), c)):  # most values first: fewest collisions
        for d in refs:
            if checks >= MAX_IDENTITY_CHECKS:
                return None
            checks += 1
            if unique(d, c):
                distinct = int(stats[c][0] or 0)
                return Identity(d, c, distinct <= CODE_DOMAIN_VALUES and distinct * CODE_REPEATS <= t.rows,
                                stats[c][1])
    return None


class GroupWriter:
    """Writes group witnesses into one variant. A keyed table's copies go through
    ``clones.CloneWriter.clone`` (fresh keys, total dependencies kept); a keyless one's take a
    fresh ``row_identity`` value. Remembers the new rows' ids (no later boundary write may
    change them) and the sentences."""

    def __init__(self, con: Any, engine: str, tables: dict[str, Any], cloner: Any,
                 bounded: Callable[[str, list[Any]], list[tuple[Any, ...]]],
                 identity: Callable[[str], Identity | None],
                 allowed: Callable[[str, str, str], bool]) -> None:
        self.con, self.engine, self.tables, self.cloner, self.bounded = con, engine, tables, cloner, bounded
        self.identity, self.allowed = identity, allowed
        self.rows: dict[str, set[int]] = {}
        self.sentences: dict[str, list[str]] = {}

    def write(self, w: GroupWitness, turn: int = 0) -> bool:
        from .clones import MAX_SENTENCES, _salt_of, _show
        if w.keyless and self.identity(w.table) is None:
            return False
        try:
            found = self.bounded(w.rows_sql, [_salt_of(turn)])
        except Exception:  # too slow, or a form this engine refuses: no witness here
            return False
        for row in found:
            w0, need, r0, r1, shown = row[0], int(row[1] or 0), row[2], row[3], row[4:]
            if need < 0 or need > MAX_GROUP_COPIES or (need == 0 and r1 is None):
                continue
            moved = {w.column: r0} if w.column is not None and w.kind in ("sum", "spread", "null", "unjoined") else {}
            if not all(v is None or self.allowed(w.table, c, _plain(v)) for c, v in moved.items()):
                continue  # a value outside the pinned column's domain is never written
            last = {w.column: r1} if w.column is not None and r1 is not None else None
            if last and not all(self.allowed(w.table, c, _plain(v)) for c, v in last.items()):
                continue
            made: list[int] = []
            ok = all(self._copy(w.table, int(w0), moved, made, w) for _ in range(need))
            ok = ok and (last is None or self._copy(w.table, int(w0), last, made, w))
            if not ok:
                self._undo(w.table, made)
                continue
            text = ", ".join(f"{k} = {_show(v)}" for k, v in zip(("key", "key 2"), shown) if v is not None)
            sentence = w.what.replace("{shown}", text or "of the output").replace("{need}", str(need))
            kept = self.sentences.setdefault(w.gold, [])
            if len(kept) < MAX_SENTENCES:
                kept.append(sentence)
            self._hold_group(w, int(w0))
            return True
        return False

    def _hold_group(self, w: GroupWitness, rowid: int) -> None:
        """Count the group's rows and the rows they join on the gold's path among the written
        ones, so no later write changes them: a boundary value written over a small variant's
        rows (most of a sampled ``lineitem``) moved the quantities of an order pushed to a sum of
        exactly 300, and the push was lost."""
        from .clones import positions
        if not w.held:
            return
        try:  # ordered by every column: which rows a LIMIT keeps is the same under every plan
            group = self.bounded(f"{w.held.replace('{rowid}', str(rowid))} ORDER BY {positions(1 + len(w.held_tables))} "
                                 f"LIMIT {MAX_HELD_ROWS}", [])
        except Exception:  # too slow, or refused: the copies alone are held
            return
        for row in group:
            for table, held in zip((w.table, *w.held_tables), row):
                if held is not None:
                    self.rows.setdefault(table, set()).add(int(held))

    def copy_row(self, table: str, rowid: int, moved: dict[str, Any]) -> bool:
        """One copy of row ``rowid`` of ``table`` with ``moved`` values, fresh keys or a fresh row
        identity (``separators`` rolls it back itself when it separates nothing)."""
        return self._copy(table, rowid, moved, [])

    def _copy(self, table: str, rowid: int, moved: dict[str, Any], made: list[int],
              w: GroupWitness | None = None) -> bool:
        """One copy of row ``rowid`` with ``moved`` values; its new row id appended to ``made``.
        Where the gold groups by the identity's number (``w.keep``: a per-ticket count), the
        copy keeps it and its reference takes a value the number has no row with instead
        (another item on the same ticket: still no duplicate identity, still in the group)."""
        from .constraints import qualified, quote
        t = self.tables[table]
        rel = qualified(table, self.engine)
        ident = self.identity(table)
        if ident is None:  # a keyed table, or one with duplicate rows: the clone writer's fresh keys
            before = set(self.cloner.rows.get(table, set()))
            if self.cloner.clone(table, rowid, moved) is None:
                return False
            new = self.cloner.rows.get(table, set()) - before
            self.rows.setdefault(table, set()).update(new)
            return True
        if ident.pair:
            return w is not None and self._copy_in_pair(table, rowid, moved, made, ident, w)
        d, c, code, top = ident.d, ident.c, ident.code, ident.top
        if c in moved:
            return False
        if w is not None and c in w.keep:
            return self._copy_in_group(table, rowid, moved, made, c, w)
        try:
            own = self.con.execute(f"SELECT {quote(d)} FROM {rel} WHERE rowid = {int(rowid)}").fetchone()
            if own is None or own[0] is None:
                return False
            if d in moved:  # the copy's reference moved: its identity is counted within the new one
                own = (moved[d],)
            if code:  # one more than the greatest of its reference's, never past the pinned maximum
                value = self.con.execute(f"SELECT max({quote(c)}) + 1 FROM {rel} WHERE {quote(d)} = ?",
                                         [own[0]]).fetchone()[0]
                if value is None or top is None or value > top:
                    return False
            else:
                value = self.con.execute(f"SELECT max({quote(c)}) + 1 FROM {rel}").fetchone()[0]
            values = {**moved, c: value}
            cols = list(t.columns)
            exprs = [(f"CAST(? AS {t.columns[k]})" if self.engine == "duckdb" and t.columns[k] else "?")
                     if k in values else quote(k) for k in cols]
            self.con.execute(f"INSERT INTO {rel} ({', '.join(quote(k) for k in cols)}) SELECT {', '.join(exprs)} "
                             f"FROM {rel} WHERE rowid = {int(rowid)}", [values[k] for k in cols if k in values])
            new = self.con.execute(f"SELECT rowid FROM {rel} WHERE {quote(d)} = ? AND {quote(c)} = ?",
                                   [own[0], value]).fetchall()
        except Exception:  # a constraint the engine checks refused it: no witness
            return False
        made += [r[0] for r in new]
        self.rows.setdefault(table, set()).update(r[0] for r in new)
        return True

    def _copy_in_group(self, table: str, rowid: int, moved: dict[str, Any], made: list[int], c: str,
                       w: GroupWitness) -> bool:
        """``_copy`` keeping the identity's number ``c`` (a group key): another column takes a
        value the number has no row with (``CloneWriter.partner``)."""
        from .constraints import qualified, quote
        partner = self.cloner.partner(table, rowid, c, {*w.keep, *w.reads, *moved})
        if partner is None:
            return False
        t = self.tables[table]
        rel = qualified(table, self.engine)
        values = {**moved, **partner}
        (d, value), = partner.items()
        try:
            cols = list(t.columns)
            exprs = [(f"CAST(? AS {t.columns[k]})" if self.engine == "duckdb" and t.columns[k] else "?")
                     if k in values else quote(k) for k in cols]
            self.con.execute(f"INSERT INTO {rel} ({', '.join(quote(k) for k in cols)}) SELECT {', '.join(exprs)} "
                             f"FROM {rel} WHERE rowid = {int(rowid)}", [values[k] for k in cols if k in values])
            new = self.con.execute(f"SELECT rowid FROM {rel} WHERE {quote(d)} = ? AND {quote(c)} = (SELECT "
                                   f"{quote(c)} FROM {rel} WHERE rowid = {int(rowid)})", [value]).fetchall()
        except Exception:  # a constraint the engine checks refused it: no witness
            return False
        made += [r[0] for r in new]
        self.rows.setdefault(table, set()).update(r[0] for r in new)
        return True

    def _copy_in_pair(self, table: str, rowid: int, moved: dict[str, Any], made: list[int], ident: Identity,
                      w: GroupWitness) -> bool:
        """``_copy`` into a table whose identity is a pair of references: the copy keeps the one
        the gold groups by (a part, a product) and takes in the other a value the table holds
        and the kept one has no row with, a reaching row's first (``w.reaching``), so the pair
        stays unique, every reference holds, and the copy joins the gold's path as its source did."""
        from .constraints import qualified, quote
        rel = qualified(table, self.engine)
        options = [(m, k) for m, k in ((ident.c, ident.d), (ident.d, ident.c))
                   if m not in moved and m not in w.grouped_by]
        options.sort(key=lambda o: o[0] in w.reads)  # a column the gold does not read first
        if self._pair_copy(rel, table, rowid, moved, made, options, w):
            return True
        try:
            others = [int(r[0]) for r in self.bounded(f"{w.siblings.format(rowid=int(rowid))} ORDER BY 1 LIMIT "
                                                      f"{MAX_SIBLINGS + 1}", [])] if w.siblings else []
        except Exception:  # too slow, or refused: no other row of the group
            return False
        return any(self._pair_copy(rel, table, other, moved, made, options, w) for other in others if other != rowid)

    def _pair_copy(self, rel: str, table: str, rowid: int, moved: dict[str, Any], made: list[int],
                   options: list[tuple[str, str]], w: GroupWitness) -> bool:
        from .constraints import quote
        for m, kept in options:
            qm, qk = quote(m), quote(kept)
            lacking = (f"{qm} IS NOT NULL AND {qm} NOT IN (SELECT {qm} FROM {rel} WHERE {qm} IS NOT NULL AND "
                       f"{qk} = (SELECT {qk} FROM {rel} WHERE rowid = {int(rowid)}))")
            if m in w.reads and w.keyed_elsewhere:  # it may lead to the group key: a value of the group's rows only
                pools = [f"rowid IN ({w.siblings.format(rowid=int(rowid))}) AND "] if w.siblings else []
            else:  # a value of a reaching row first: the copy joins the gold's path as that row does
                pools = ([f"rowid IN (SELECT w0 FROM ({w.reaching}) AS r) AND "] if w.reaching else []) + [""]
            try:
                value = next((v[0] for v in (self.con.execute(f"SELECT min({qm}) FROM {rel} WHERE {pool}{lacking}")
                                             .fetchone() for pool in pools) if v is not None and v[0] is not None),
                             None)
                if value is None:
                    continue
                values = {**moved, m: value}
                cols = list(self.tables[table].columns)
                types = self.tables[table].columns
                exprs = [(f"CAST(? AS {types[k]})" if self.engine == "duckdb" and types[k] else "?")
                         if k in values else quote(k) for k in cols]
                self.con.execute(f"INSERT INTO {rel} ({', '.join(quote(k) for k in cols)}) SELECT "
                                 f"{', '.join(exprs)} FROM {rel} WHERE rowid = {int(rowid)}",
                                 [values[k] for k in cols if k in values])
                new = self.con.execute(f"SELECT rowid FROM {rel} WHERE {qm} = ? AND {qk} = (SELECT {qk} FROM {rel} "
                                       f"WHERE rowid = {int(rowid)})", [value]).fetchall()
            except Exception:  # a constraint the engine checks refused it: not this column
                continue
            made += [r[0] for r in new]
            self.rows.setdefault(table, set()).update(r[0] for r in new)
            return True
        return False

    def _undo(self, table: str, made: list[int]) -> None:
        """Remove the copies of a witness that could not be written whole (a keyless table's only:
        a keyed copy may have copied child rows onto its key, which are kept with it)."""
        from .constraints import qualified
        if made and self.identity(table) is not None:
            try:
                self.con.execute(f"DELETE FROM {qualified(table, self.engine)} WHERE rowid IN "
                                 f"({', '.join(str(int(r)) for r in made)})")
            except Exception:  # the copies stay: each is a valid row (its identity fresh, its references kept)
                return
            self.rows.get(table, set()).difference_update(made)


def _plain(value: Any) -> str:
    """A value as the literal text ``Domain`` checks."""
    from decimal import Decimal
    if isinstance(value, float):
        value = Decimal(repr(value))
    return format(value, "f") if isinstance(value, Decimal) else str(value)


__all__ = ["GroupWitness", "GroupWriter", "Identity", "group_witnesses", "row_identity"]
