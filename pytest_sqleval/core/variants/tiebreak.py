"""Tie-breaking witnesses: a variant edited so that a gold's ``ORDER BY ... LIMIT k`` no
longer cuts through tied rows.

When every airline has 100 flights, ``... GROUP BY a.uid ORDER BY count(*) DESC LIMIT 1``
accepts any airline, so ``SELECT name FROM airlines LIMIT 1`` passes on the tie alone
(tie-only, or ``undecidable`` when every ranked row ties). A subset of the data rarely
makes the top unique (a small table stays whole), so a variant is *made* to: on the
variant's data, the gold's ranking (the gold without its LIMIT, projecting its group and
sort keys) is run; where row ``k`` ties with row ``k+1``, a few tie members are moved by
one step of the first sort key that can be moved:

- ``count(...)``: a row of the gold's FROM that joins into the member is copied, so the
  member's count rises by one; each key of the copy gets a new value in one column: a
  value of the column it references, if it references one, else the column's maximum + 1;
- ``sum/avg/max/min(col)`` of a free column: one of the member's rows gets ``col`` one
  unit of its grid higher or lower (an integer 1, a DECIMAL its last place, a date a day,
  a float 1e-3 of its magnitude), inside the column's domain on the pinned data;
- a free column itself, in a gold without GROUP BY: the member row's value, likewise.

The members moved to the front are taken in turn by the variant's index, the rows the
engine returns first for the ranking with its LIMIT last: the first variant refutes a query
that returns "the first airline", a later one a query that names another airline outright.
When they cannot move (a maximum already at the column's edge, a count that only rises for
an ASC key), every other member of the tie is moved back instead (at most
``MAX_TIE_EDITS``). An edit is kept only if the ranking, run again, no longer ties at the
LIMIT; else it is undone. A tie that another witness decided before (a clone witness's
copied row) is still broken the rotation's way (``TieWriter.break_tie``). Only free
columns change, a copied row keeps every key unique and every reference valid (a key
column changed in a copy takes a value of the column it references, and is in no total
dependency as a parent), so every constraint of ``constraints`` still holds."""
from __future__ import annotations

import datetime as dt
import hashlib
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

MAX_CANDIDATES = 64  # values tried for a copied row's key column that references another table
MAX_SWAP_ROWS = 2000  # rows of an unlimited gold's ranking an order witness reads
MAX_TIE_EDITS = 8  # members moved per gold and variant, at most (a larger all-tied group moves its few chosen)
MAX_PAIR_ROWS = 40  # output rows searched for a pair whose later keys disagree with the next (``_disagreeing``)
MAX_PAIRS = 4  # such pairs tried before the adjacent ones
MAX_TIE_STEPS = 4  # steps per member where an earlier witness decided the cut another way (``break_tie``)


@dataclass(frozen=True)
class SortKey:
    """How one ORDER BY key of a gold moves: ``kind`` ``count`` (a copied row raises it) or
    ``sum``/``avg``/``max``/``min``/``column`` (a value of ``column`` of source ``position``)."""

    kind: str
    desc: bool
    position: int = -1
    column: str = ""


@dataclass(frozen=True)
class TieBreak:
    """One gold's ranking: ``ranking`` projects ``members`` member columns (the group keys,
    or the sources' rowids without GROUP BY), then its sort keys, ordered as the gold and
    without its LIMIT; ``top`` is it with the LIMIT. ``rows_sql`` (grouped golds) gives a
    member's row tuples (``w0..``: rowids of ``tables``, then ``c0..``: the value keys'
    columns) for its group values bound as parameters."""

    ranking: str
    top: str
    limit: int
    members: int
    grouped: bool
    tables: tuple[str, ...]
    keys: tuple[SortKey | None, ...]
    rows_sql: str
    reads: frozenset[tuple[str, str]] = frozenset()  # (table, column) the gold reads: changed last in a copy


def tie_breaks(gold_sqls: Iterable[str], dialect: str, columns: dict[str, set[str]],
               free: Callable[[str, str], bool]) -> list[TieBreak]:
    """The ranking of every gold with a top-level ``ORDER BY ... LIMIT k`` (no OFFSET, no
    DISTINCT) over base tables whose first sort keys can move; none for the others."""
    from .witnesses import Catalog, parsed_golds
    names = Catalog(columns)
    out: list[TieBreak] = []
    for _, tree in parsed_golds(gold_sqls, dialect):
        found = _tie_break(tree, names, free, dialect)
        if found is not None and found not in out:
            out.append(found)
    return out


def _tie_break(select: Any, names: Any, free: Callable[[str, str], bool], dialect: str) -> TieBreak | None:
    from sqlglot import exp
    from .witnesses import resolve_column, select_sources
    if not isinstance(select, exp.Select) or select.args.get("distinct") or select.args.get("offset"):
        return None
    order, limit = select.args.get("order"), select.args.get("limit")
    value = limit.expression if limit is not None else None
    if order is None or not isinstance(value, exp.Literal) or value.is_string or not value.this.isdigit():
        return None
    k = int(value.this)
    sources = select_sources(select, names)
    if k < 1 or not sources:
        return None
    aliases = sorted(sources)
    tables = tuple(names.originals[sources[a]] for a in aliases)
    group = select.args.get("group")
    grouped = group is not None and bool(group.expressions)
    if not grouped and any(e.find(exp.AggFunc) for e in select.expressions):
        return None  # one row: nothing ranks
    member_exprs = ([_unalias(e, select, False) for e in group.expressions] if group is not None and grouped
                    else [exp.column("rowid", table=a) for a in aliases])
    keys: list[SortKey | None] = []
    key_exprs = []
    for ordered in order.expressions:
        node = _unalias(ordered.this, select, True)
        key_exprs.append((node, ordered))
        desc = bool(ordered.args.get("desc"))
        kind = None
        if isinstance(node, exp.Count) and grouped:
            keys.append(SortKey("count", desc))
            continue
        if isinstance(node, (exp.Sum, exp.Avg, exp.Max, exp.Min)) and grouped:
            kind, column = type(node).__name__.lower(), node.this
        elif isinstance(node, exp.Column) and not grouped:
            kind, column = "column", node
        where = resolve_column(column, sources, names.lower) if kind and isinstance(column, exp.Column) else None
        if where is None or kind is None or not free(names.originals[sources[where[0]]], where[1]):
            keys.append(None)
        else:
            keys.append(SortKey(kind, desc, aliases.index(where[0]), where[1]))
    if not any(keys):
        return None
    ranking = _ranking(select, member_exprs, key_exprs, grouped)
    rows_sql = ""
    if grouped:
        rows = select.copy()
        for key in ("group", "having", "order", "limit", "offset", "qualify", "windows"):
            rows.set(key, None)
        values = [exp.column(key.column, table=aliases[key.position]) for key in keys
                  if key is not None and key.kind != "count"]
        rows.set("expressions", [exp.alias_(exp.column("rowid", table=a), f"w{i}") for i, a in enumerate(aliases)]
                 + [exp.alias_(v, f"c{j}") for j, v in enumerate(values)])
        match = [exp.EQ(this=e.copy(), expression=exp.Placeholder()) for e in member_exprs]
        where = select.args.get("where")
        rows.set("where", exp.Where(this=exp.and_(*([where.this.copy()] if where is not None else []), *match)))
        rows_sql = rows.sql(dialect=dialect)
    reads = {resolve_column(c, sources, names.lower) for c in select.find_all(exp.Column)}
    return TieBreak(ranking.sql(dialect=dialect), ranking.copy().limit(k).sql(dialect=dialect), k,
                    len(member_exprs), grouped, tables, tuple(keys), rows_sql,
                    frozenset((names.originals[sources[r[0]]], r[1]) for r in reads if r is not None))


def _ranking(select: Any, member_exprs: list[Any], key_exprs: list[tuple[Any, Any]], grouped: bool) -> Any:
    """The gold's ranking: its query without the LIMIT, projecting each member (``g0``...) and
    sort key (``k0``...), ordered as the gold orders; what a tie break or an order swap reads."""
    from sqlglot import exp
    ranking = select.copy()
    ranking.set("limit", None)
    ranking.set("expressions", [exp.alias_(e.copy(), f"g{i}") for i, e in enumerate(member_exprs)]
                + [exp.alias_(e.copy(), f"k{j}") for j, (e, _) in enumerate(key_exprs)])
    if grouped:
        ranking.set("group", exp.Group(expressions=[e.copy() for e in member_exprs]))
    ranking.set("order", exp.Order(expressions=[exp.Ordered(this=e.copy(), desc=o.args.get("desc"),
                                                            nulls_first=o.args.get("nulls_first"))
                                                for e, o in key_exprs]))
    return ranking


def _unalias(node: Any, select: Any, alias_first: bool) -> Any:
    """An ORDER BY / GROUP BY item as the expression it names: a position or an output alias
    (ORDER BY prefers the alias, GROUP BY a source column of that name)."""
    from sqlglot import exp
    projections = select.expressions
    if isinstance(node, exp.Literal) and not node.is_string and node.this.isdigit():
        i = int(node.this) - 1
        return projections[i].unalias() if 0 <= i < len(projections) else node
    if isinstance(node, exp.Column) and not node.table and alias_first:
        for p in projections:
            if isinstance(p, exp.Alias) and p.alias.lower() == node.name.lower():
                return p.this
    return node


# -- on a variant -----------------------------------------------------------------------
class TieWriter:
    """Breaks the ties of one variant's copy. ``run(sql, params)`` runs a bounded query,
    ``allowed(table, column, text)`` says whether a value lies in the pinned domain."""

    def __init__(self, con: Any, engine: str, tables: dict[str, Any], dependencies: list[Any],
                 run: Callable[[str, tuple[Any, ...]], list[tuple[Any, ...]]], allowed: Callable[[str, str, str], bool],
                 changed: dict[str, int]) -> None:
        self.con, self.engine, self.tables, self.deps = con, engine, tables, dependencies
        self.run, self.allowed, self.changed = run, allowed, changed

    def cut(self, tb: TieBreak) -> Cut | None:
        """The tie ``tb``'s LIMIT cuts on this variant as it is now, or None."""
        try:
            tied = _cut(self.run(tb.ranking, ()), tb)
            if tied is None:
                return None
            own = frozenset(tuple(r[:tb.members]) for r in self.run(tb.top, ()))
        except Exception:  # a ranking the engine refuses or overruns: no witness here
            return None
        return tied[0], tied[1], own

    def break_tie(self, tb: TieBreak, turn: int, before: Cut | None = None) -> bool:
        """Make ``tb``'s top ``limit`` rows unique on this variant, if its LIMIT cuts a tie here;
        True when a tie was broken. ``turn`` (the variant's index) rotates which members go
        to the front: the members the engine returns first come last in the rotation, so the
        first variants refute a query that returns "the first row", and later ones a query
        that names another member outright.

        ``before``: the tie the LIMIT cut on this variant before its other witnesses were
        written (``cut``). A clone witness that copies a tie member's row decides the cut
        too (or ties a third member in), but not by the rotation: on the variants that get
        it the tie writer then found no tie, and on the others the rotation alone chose
        (with a tie of two and a clone on every second variant, always the same member: a
        pass naming it outright passed on every variant). So where the cut no longer ties
        as it did before, the rotation over the tie as it was picks the members, and they
        are moved to the front still, up to ``MAX_TIE_STEPS`` steps each."""
        now = self.cut(tb)
        tied = before or now
        if tied is None:
            return False
        decided = before is not None and (now is None or set(now[1]) != set(before[1]))
        first, group, own = tied
        needed = tb.limit - first
        ordered = sorted(group, key=lambda m: (m in own, _salt(tb.ranking, repr(m))))
        start = (turn * needed) % len(ordered)
        ordered = ordered[start:] + ordered[:start]
        front, back = ordered[:needed], ordered[needed:]
        if decided and self._settled(tb, front):
            return False  # decided the rotation's way already
        for key in tb.keys:
            if key is None:
                continue
            toward_front = key.desc  # a DESC key moves a member ahead by rising
            for members, up in ((front, toward_front), (back, not toward_front)):
                if len(members) > MAX_TIE_EDITS or (key.kind == "count" and not up):
                    continue
                undo: list[Callable[[], None]] = []
                for _ in range(MAX_TIE_STEPS if decided else 1):
                    if not all(self._move(tb, key, m, up, undo) for m in members):
                        break
                    if self._settled(tb, front if decided else ()):
                        return True
                for step in reversed(undo):
                    step()
        return False

    def _settled(self, tb: TieBreak, front: Iterable[tuple[Any, ...]] = ()) -> bool:
        """Whether the ranking, run again, no longer ties at the LIMIT (and has ``front``
        among its top ``limit`` rows)."""
        try:
            rows = self.run(tb.ranking, ())
        except Exception:  # overran its time this time: the edit is not known to work
            return False
        top = {tuple(r[:tb.members]) for r in rows[:tb.limit]}
        return _cut(rows, tb) is None and all(m in top for m in front)

    def _move(self, tb: TieBreak, key: SortKey, member: tuple[Any, ...], up: bool, undo: list[Callable[[], None]]) -> bool:
        try:
            if key.kind == "count":
                return self._copy_row(tb, member, undo)
            return self._nudge(tb, key, member, up, undo)
        except Exception:  # a value or row the engine refuses: this plan fails and is undone
            return False

    def _member_rows(self, tb: TieBreak, member: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        if any(v is None for v in member):
            return []
        return self.run(tb.rows_sql, member)

    def _copy_row(self, tb: TieBreak, member: tuple[Any, ...], undo: list[Callable[[], None]]) -> bool:
        """Copy a row of one of the member's row tuples, a table no dependency's parent first
        (a copied parent row has no children and joins into nothing); kept if the member's row
        tuples grew by one."""
        from .constraints import qualified
        rows = sorted(self._member_rows(tb, member))
        if not rows:
            return False
        parents = {d.parent for d in self.deps}
        for pos in sorted(range(len(tb.tables)), key=lambda p: (tb.tables[p] in parents, p)):
            table = tb.tables[pos]
            inserted = self._insert_copy(table, rows[0][pos], tb.reads)
            if inserted is None:
                continue
            q = qualified(table, self.engine)

            def remove(q: str = q, rowid: int = inserted) -> None:
                self.con.execute(f"DELETE FROM {q} WHERE rowid = {rowid}")
            if len(self._member_rows(tb, member)) == len(rows) + 1:
                undo.append(remove)
                self._count(f"{table}+rows", 1, undo)
                return True
            remove()
        return False

    def _insert_copy(self, table: str, rowid: int, reads: frozenset[tuple[str, str]]) -> int | None:
        """Insert a copy of ``rowid`` whose every key differs, in a column the gold does not read
        if it can (a flight number, not the airline it joins on); its rowid, or None when a key
        has no column that may take a new value (``_fresh``)."""
        from .constraints import qualified, quote
        t = self.tables[table]
        keys = [tuple(t.primary_key)] + [tuple(k) for k in t.unique_keys] + [(c,) for c in t.observed_unique]
        keys = [k for k in keys if k]
        if not keys and not t.duplicate_rows:
            return None  # no two rows alike: a copy would be the first duplicate
        q, columns = qualified(table, self.engine), list(t.columns)
        found = self.run(f"SELECT {', '.join(map(quote, columns))} FROM {q} WHERE rowid = {int(rowid)}", ())
        if not found:
            return None
        row = dict(zip(columns, found[0]))
        new: dict[str, Any] = {}
        for key in keys:
            if self._taken(table, key, {**row, **new}):
                order = sorted(key, key=lambda c: (table, c) in reads)
                value = next(((c, v) for c in order for v in [self._fresh(table, c, key, {**row, **new})]
                              if v is not None), None)
                if value is None:
                    return None
                new[value[0]] = value[1]
        if any(self._taken(table, key, {**row, **new}) for key in keys):
            return None
        select = ", ".join("?" if c in new else quote(c) for c in columns)
        self.con.execute(f"INSERT INTO {q} ({', '.join(map(quote, columns))}) SELECT {select} FROM {q} "
                         f"WHERE rowid = {int(rowid)}", [new[c] for c in columns if c in new])
        return int(self.run(f"SELECT max(rowid) FROM {q}", ())[0][0])

    def _taken(self, table: str, key: tuple[str, ...], row: dict[str, Any]) -> bool:
        from .constraints import qualified, quote
        if any(row[c] is None for c in key):
            return False  # a NULL in a key equals nothing
        where = " AND ".join(f"{quote(c)} = ?" for c in key)
        return bool(self.run(f"SELECT count(*) FROM {qualified(table, self.engine)} WHERE {where}",
                             tuple(row[c] for c in key))[0][0])

    def _fresh(self, table: str, column: str, key: tuple[str, ...], row: dict[str, Any]) -> Any:
        """A value for ``column`` of a copied row under which ``key`` is not taken: a value of
        the column it references (an inclusion dependency, declared or observed, must still
        hold), else its maximum + 1; None for a column every value of which is referenced (a
        total dependency) or that is neither."""
        from .constraints import qualified, quote
        deps = [d for d in self.deps if d.child == table and column in d.child_columns]
        if any(d.parent == table and d.origin == "total" and column in d.parent_columns for d in self.deps) \
                or any(len(d.child_columns) > 1 for d in deps):
            return None
        if deps:
            first, others = deps[0], deps[1:]
            candidates = [r[0] for r in self.run(
                f"SELECT DISTINCT {quote(first.parent_columns[0])} FROM {qualified(first.parent, self.engine)} "
                f"WHERE {quote(first.parent_columns[0])} IS NOT NULL ORDER BY 1 LIMIT {MAX_CANDIDATES}", ())]
            candidates = [v for v in candidates if all(self.run(
                f"SELECT count(*) FROM {qualified(d.parent, self.engine)} WHERE {quote(d.parent_columns[0])} = ?",
                (v,))[0][0] for d in others)]
        else:
            top = self.run(f"SELECT max({quote(column)}) FROM {qualified(table, self.engine)}", ())[0][0]
            candidates = [top + 1] if isinstance(top, int) and not isinstance(top, bool) else []
        return next((v for v in candidates if not self._taken(table, key, {**row, column: v})), None)

    def _nudge(self, tb: TieBreak, key: SortKey, member: tuple[Any, ...], up: bool, undo: list[Callable[[], None]]) -> bool:
        """Move one of the member's values of ``key.column`` one grid unit up or down, inside
        the column's domain: for a maximum the row holding its largest value, for a minimum
        its smallest, for a sum or an average the first row whose step stays inside."""
        from .constraints import qualified, quote
        table = tb.tables[key.position]
        q, col = qualified(table, self.engine), quote(key.column)
        if tb.grouped:
            at = len(tb.tables) + [k for k in tb.keys if k is not None and k.kind != "count"].index(key)
            rows = [(r[key.position], r[at]) for r in self._member_rows(tb, member)]
        else:
            rowid = member[key.position]
            rows = [(rowid, self.run(f"SELECT {col} FROM {q} WHERE rowid = {int(rowid)}", ())[0][0])]
        rows = [r for r in rows if r[1] is not None]
        if not rows:
            return False
        if key.kind in ("max", "min"):  # only the extreme row moves the extreme
            rows = [max(rows, key=lambda r: (r[1], -r[0])) if key.kind == "max"
                    else min(rows, key=lambda r: (r[1], r[0]))]
        else:  # the smallest going up, the largest going down: a step that more likely stays inside
            rows = sorted(rows, key=lambda r: (r[1], r[0]), reverse=not up)
        rowid, old, new = next(((r[0], r[1], v) for r in rows for v in [_step(r[1], up)]
                                if v is not None and self.allowed(table, key.column, v)), (None, None, None))
        if new is None or rowid is None:
            return False
        ctype = self.tables[table].columns.get(key.column, "")
        cast = f"CAST(? AS {ctype})" if self.engine == "duckdb" and ctype else "?"
        self.con.execute(f"UPDATE {q} SET {col} = {cast} WHERE rowid = {int(rowid)}", [new])
        undo.append(lambda: self.con.execute(f"UPDATE {q} SET {col} = ? WHERE rowid = {int(rowid)}", [old]))
        self._count(f"{table}.{key.column}", 1, undo)
        return True

    def _count(self, name: str, n: int, undo: list[Callable[[], None]]) -> None:
        self.changed[name] = self.changed.get(name, 0) + n

        def uncount() -> None:
            self.changed[name] -= n
            if not self.changed[name]:
                del self.changed[name]
        undo.append(uncount)


#: a tie a LIMIT cuts: (rows ahead of it, its members, the members the gold's top returns)
Cut = tuple[int, list[tuple[Any, ...]], frozenset[tuple[Any, ...]]]


def _cut(rows: list[tuple[Any, ...]], tb: TieBreak) -> tuple[int, list[tuple[Any, ...]]] | None:
    """(rows ahead of the tie group, the group's members) when the LIMIT cuts through a
    tie group of the ranking's rows; None when the top ``limit`` rows are determined."""
    k, n = tb.limit, tb.members
    if len(rows) <= k:
        return None
    keys = [tuple(r[n:]) for r in rows]
    if keys[k - 1] != keys[k]:
        return None
    tied = keys[k - 1]
    at = [i for i, key in enumerate(keys) if key == tied]
    return at[0], [tuple(rows[i][:n]) for i in at]


def _step(value: Any, up: bool) -> str | None:
    """The text of the value one unit of its grid above or below ``value``."""
    sign = 1 if up else -1
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = dt.date.fromisoformat(value)
        except ValueError:
            return None
    if isinstance(value, dt.datetime):
        return None
    if isinstance(value, dt.date):
        return (value + sign * dt.timedelta(days=1)).isoformat()
    if isinstance(value, int):
        return str(value + sign)
    if isinstance(value, Decimal):
        exponent = value.as_tuple().exponent
        unit = Decimal(1).scaleb(exponent) if isinstance(exponent, int) and exponent < 0 else Decimal(1)
        return format(value + sign * unit, "f")
    if isinstance(value, float) and math.isfinite(value):
        unit = Decimal(1).scaleb(math.floor(math.log10(max(abs(value), 1.0))) - 3)
        return format((Decimal(repr(value)) + sign * unit).quantize(unit), "f")
    return None


def _salt(*parts: str) -> int:
    return int(hashlib.sha256("|".join(parts).encode()).hexdigest()[:8], 16)


# -- order witnesses --------------------------------------------------------------------------
@dataclass(frozen=True)
class OrderSwap:
    """A gold's ``ORDER BY`` of two keys or more, some of them a free column of a source (in a
    grouped gold, a GROUP BY column): ``ranking`` projects the members (``g0..``: the group keys,
    or the sources' rowids) then the sort keys (``k0..``), ordered as the gold, without its LIMIT;
    ``columns`` says per sort key which (source position, column) moves it; ``rows_sql`` (grouped)
    gives a member's row tuples (``w0..``) for its group values."""

    ranking: str
    limit: int | None
    members: int
    grouped: bool
    tables: tuple[str, ...]
    columns: tuple[tuple[int, str] | None, ...]
    desc: tuple[bool, ...]
    rows_sql: str


def order_swaps(gold_sqls: Iterable[str], dialect: str, columns: dict[str, set[str]],
                free: Callable[[str, str], bool]) -> list[OrderSwap]:
    """Order witnesses (``TieWriter.swap_order``): an ORDER BY change shows only where two
    output rows are ordered differently by the changed keys. A dropped first key coincides
    where the second key orders the rows the same way (TPC-H q18 on two rows: by
    ``o_totalprice DESC`` and by ``o_orderdate``); a reversed or dropped later key where no
    two rows tie on the keys before it. So on a variant, for the first two adjacent output
    rows that differ on a key, the second row's next key is moved one grid unit past the
    first row's (they disagree), or, on every other variant, its differing key is set to the
    first row's (they tie, and the next key decides)."""
    from sqlglot import exp

    from .witnesses import Catalog, parsed_golds, resolve_column, select_sources
    names = Catalog(columns)
    out: list[OrderSwap] = []
    for _, select in parsed_golds(gold_sqls, dialect):
        if not isinstance(select, exp.Select) or select.args.get("distinct") or select.args.get("offset"):
            continue
        order, limit = select.args.get("order"), select.args.get("limit")
        if order is None or len(order.expressions) < 2:
            continue
        value = limit.expression if limit is not None else None
        if limit is not None and not (isinstance(value, exp.Literal) and not value.is_string and value.this.isdigit()):
            continue
        sources = select_sources(select, names)
        if not sources:
            continue
        aliases = sorted(sources)
        tables = tuple(names.originals[sources[a]] for a in aliases)
        group = select.args.get("group")
        grouped = group is not None and bool(group.expressions)
        if not grouped and any(e.find(exp.AggFunc) for e in select.expressions):
            continue
        member_exprs = ([_unalias(e, select, False) for e in group.expressions] if group is not None and grouped
                        else [exp.column("rowid", table=a) for a in aliases])
        group_columns = {resolve_column(e, sources, names.lower) for e in member_exprs if isinstance(e, exp.Column)}
        specs: list[tuple[int, str] | None] = []
        key_exprs = []
        for ordered in order.expressions:
            node = _unalias(ordered.this, select, True)
            key_exprs.append((node, ordered))
            where = resolve_column(node, sources, names.lower) if isinstance(node, exp.Column) else None
            ok = where is not None and (not grouped or where in group_columns) \
                and free(names.originals[sources[where[0]]], where[1])
            specs.append((aliases.index(where[0]), where[1]) if ok and where is not None else None)
        if not any(specs):
            continue
        ranking = _ranking(select, member_exprs, key_exprs, grouped)
        rows_sql = ""
        if grouped:
            rows = select.copy()
            for key in ("group", "having", "order", "limit", "offset", "qualify", "windows"):
                rows.set(key, None)
            rows.set("expressions", [exp.alias_(exp.column("rowid", table=a), f"w{i}") for i, a in enumerate(aliases)])
            match = [exp.EQ(this=e.copy(), expression=exp.Placeholder()) for e in member_exprs]
            where_node = select.args.get("where")
            rows.set("where", exp.Where(this=exp.and_(*([where_node.this.copy()] if where_node is not None else []),
                                                      *match)))
            rows_sql = rows.sql(dialect=dialect)
        if value is None:  # only the first rows are compared: a gold of many rows is not fetched whole
            ranking.set("limit", exp.Limit(expression=exp.Literal.number(MAX_SWAP_ROWS)))
        swap = OrderSwap(ranking.sql(dialect=dialect), int(value.this) if value is not None else None,
                         len(member_exprs), grouped, tables, tuple(specs),
                         tuple(bool(o.args.get("desc")) for o in order.expressions), rows_sql)
        if swap not in out:
            out.append(swap)
    return out


def _disagreeing(top: list[tuple[Any, ...]], sw: OrderSwap) -> list[tuple[tuple[Any, ...], tuple[Any, ...]]]:
    """Pairs of output rows (among the first ``MAX_PAIR_ROWS``) that, once tied on the key they
    first differ on, are ordered one way by the next key and the other way by the keys after
    it: a tie there shows that next key dropped, not only reversed (a gold's ``c_last_name,
    c_first_name, c_salutation``: two customers of one last name whose salutations sort
    against their first names). Adjacent pairs tie rows whose later keys mostly agree."""
    n, out = sw.members, []
    head = top[:MAX_PAIR_ROWS]
    for i, a in enumerate(head):
        for b in head[i + 1:]:
            j = next((j for j in range(len(sw.columns) - 2) if a[n + j] != b[n + j]), None)
            if j is None or sw.columns[j] is None:
                continue
            nxt = _sense(a[n + j + 1], b[n + j + 1], sw.desc[j + 1])
            rest = next((c for c in (_sense(a[n + m], b[n + m], sw.desc[m]) for m in range(j + 2, len(sw.desc)))
                         if c), 0)
            if nxt and rest and nxt != rest:
                out.append((a, b))
                if len(out) >= MAX_PAIRS:
                    return out
    return out


def _sense(a: Any, b: Any, desc: bool) -> int:
    """-1 where one key orders ``a`` first, 1 where ``b``, 0 on a tie, a NULL or no order."""
    if a is None or b is None or a == b:
        return 0
    try:
        return (1 if a > b else -1) * (-1 if desc else 1)
    except TypeError:
        return 0


def _swap_value(a: Any, b: Any, desc: bool, tie: bool) -> str | None:
    """The text ``b``'s key takes: ``a`` itself (a tie), or one grid unit past ``a`` so that this
    key alone orders ``b`` first; None where it already does, or the value has no grid."""
    if a is None or b is None:
        return None
    if tie:
        return _text_of(a)
    try:
        if (b > a) if desc else (b < a):
            return None  # the pinned order already disagrees: nothing to write
    except TypeError:
        return None
    return _step(a, desc)


def _text_of(value: Any) -> str:
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value)


def _swap_order(writer: TieWriter, sw: OrderSwap, turn: int) -> bool:
    """See ``order_swaps``; True when a row was moved (and kept: the ranking, run again,
    still holds every member, and the moved pair orders as intended)."""
    from .constraints import qualified, quote
    try:
        rows = writer.run(sw.ranking, ())
    except Exception:  # a ranking the engine refuses or overruns: no witness here
        return False
    top = rows[:sw.limit] if sw.limit is not None else rows
    n, tie = sw.members, turn % 2 == 1
    for first, second in (_disagreeing(top, sw) if tie else []) + list(zip(top, top[1:])):
        j = next((j for j in range(len(sw.columns) - 1) if first[n + j] != second[n + j]), None)
        if j is None:
            continue
        at = j if tie else j + 1
        spec = sw.columns[at]
        if spec is None or (tie and first[n + j + 1] == second[n + j + 1]):
            continue  # a tie shows a reversed next key only where the next key differs
        new = _swap_value(first[n + at], second[n + at], sw.desc[at], tie)
        position, column = spec
        table = sw.tables[position]
        if new is None or not writer.allowed(table, column, new):
            continue
        try:
            if sw.grouped:
                ids = sorted({r[position] for r in writer.run(sw.rows_sql, tuple(second[:n]))})
            else:
                ids = [second[position]]
            if not ids or len(ids) > MAX_TIE_EDITS:
                continue
            q, col = qualified(table, writer.engine), quote(column)
            id_list = ", ".join(str(int(i)) for i in ids)
            old = writer.run(f"SELECT rowid, {col} FROM {q} WHERE rowid IN ({id_list})", ())
            ctype = writer.tables[table].columns.get(column, "")
            cast = f"CAST(? AS {ctype})" if writer.engine == "duckdb" and ctype else "?"
            writer.con.execute(f"UPDATE {q} SET {col} = {cast} WHERE rowid IN ({id_list})", [new])
            if len(writer.run(sw.ranking, ())) == len(rows):
                writer.changed[f"{table}.{column}"] = writer.changed.get(f"{table}.{column}", 0) + len(ids)
                return True
            for rowid, value in old:  # a member merged or left the output: undone
                writer.con.execute(f"UPDATE {q} SET {col} = ? WHERE rowid = {int(rowid)}", [value])
        except Exception:  # a value or query the engine refuses: this pair gives no witness
            continue
    return False
