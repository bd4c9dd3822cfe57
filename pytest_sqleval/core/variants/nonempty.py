"""Rows for a gold that answers nothing on the pinned database (or NULLs only).

Such a gold cannot tell a right answer from a wrong one there: every query that matches
nothing gives the same empty answer (issue 31: 53 of Spider dev's 972 golds). Subsets,
shuffles and the witnesses of ``clones.py`` all start from a row that reaches the output,
and an empty gold has none. So here the row is *constructed* from the gold's AST: a
complete tuple through its join path that satisfies every conjunct, and the gold is run on
the variant to confirm it answers with a value; otherwise every write is undone.

Per SELECT of the gold (each side of a UNION; the left of an EXCEPT; both sides of an
INTERSECT, the right pinned to a row the left returns):

- its tables are taken parents first (an equality a dependency backs, ``child.fk =
  parent.key``, puts the parent first); equal columns (``T1.id = T2.id``) share one value;
- per table, an existing row that passes the table's own conjuncts and the values its
  parents fixed is used when there is one (first try);
- else a *new row*: a copy of a row of the table (one passing its own conjuncts if any),
  with fresh values in one column per key (``clones.fresh_columns``), the values its
  parents fixed, and each own conjunct's value taken from the gold's literals: ``= v``,
  ``IN (v, ...)``, ``BETWEEN v AND ...``, one unit past ``> v``, ``LIKE 'pat'`` without its
  wildcards, the value an ``IN (subquery)`` or scalar subquery has on the variant (a
  subquery with no row is satisfied first, the same way); a table with no row at all
  (Spider train's geo, imdb, yelp, ...) gets one made from scratch, a value of its type in
  every column the gold does not decide;
- the second try makes every table's row new, so conjuncts across tables that existing
  rows fail no longer decide it; a HAVING is met by copies of the last new row.

Every declared and observed constraint (``constraints.py``) still holds, or the tuple is
undone: a new row's reference that lands on no row gets that row (a copy of a parent row
with that key), and a fresh key that a *total* dependency requires every child table to
use gets a child row (a copy of one, moved onto it), to a fixpoint; then every touched
table's keys, NOT NULL columns and duplicate-free rows are checked. A frozen column is
never given a value. The values written are the gold's literals: a text column may take a
literal the pinned data does not hold (``continent = 'north america'``), the one place a
variant leaves a column's observed domain, because that literal is what the question asks
about. A gold that no such tuple makes informative (its conjuncts contradict each other or
an observed constraint: "singers with no concert" where every singer has one) stays
ungraded, which is then the honest verdict."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

# per query run while a tuple is built or checked: its work (watchdog.Work), and DuckDB's safety net in
# CPU seconds (its firing is recorded, the variant not kept)
NONEMPTY_WORK_S = 5.0
MAX_REPAIR_ROUNDS = 4  # passes adding the rows new rows' references and total dependencies need
MAX_REPAIR_ROWS = 24  # rows added by those passes, per tuple
MAX_HAVING_COPIES = 12  # copies of the last new row added to meet a HAVING
MAX_GOLD_ROWS = 1000  # rows of a gold's answer read to decide whether it has a value
SUBQUERY_DEPTH = 2  # an IN (subquery) with no row is satisfied first, this deep
SPREAD = 2  # each gold's tuple goes into every SPREAD-th variant (4 of 8), next golds into the others


@dataclass
class Written:
    """What the tuples wrote into one variant: rows per table, and per gold (by its
    ``clones.gold_digest``) the sentence a caught prediction's record shows."""

    rows: dict[str, int] = field(default_factory=dict)
    sentences: dict[str, list[str]] = field(default_factory=dict)


_UNINFORMATIVE: dict[tuple[Any, ...], list[str]] = {}


def uninformative_golds(database: Path, engine: str, gold_sqls: Iterable[str], dialect: str) -> list[str]:
    """The golds whose answer on the pinned database has no value (no row, or NULLs only),
    or is one row of zeros (``count(DISTINCT c.cust_id) ... WHERE s.country_code = 'JP'``
    where no store is Japanese: a count over no row, which every wrong filter and every
    aggregate swap answers too): once per database file and golds in a process."""
    golds = list(dict.fromkeys(gold_sqls))
    stat = database.stat()
    key = (str(database.resolve()), stat.st_size, stat.st_mtime_ns, dialect,
           hashlib.sha256(repr(golds).encode()).hexdigest())
    if key not in _UNINFORMATIVE:
        from .sqlite_io import variant_connection
        con = variant_connection(database, engine, read_only=True)
        try:
            _UNINFORMATIVE[key] = [g for g in golds
                                   if _has_value(con, _runnable(g, dialect, engine)) is False]
        finally:
            con.close()
    return _UNINFORMATIVE[key]


def write_nonempty(target: Path, engine: str, constraints: Any, gold_sqls: Iterable[str], dialect: str,
                   database: Path, index: int) -> Written:
    """Write, into the variant ``target`` being built, a tuple for every gold that has no
    value on the pinned ``database``; each gold's tuple is kept only when the gold then
    answers with a value on the variant and every constraint holds."""
    from .clones import gold_digest
    out = Written()
    golds = uninformative_golds(database, engine, gold_sqls, dialect)
    if not golds:
        return out
    from .sqlite_io import variant_connection
    # SQLite's in autocommit (isolation_level=None): each gold's tuple is kept or undone by the
    # savepoint ``_Maker`` opens around it, and the driver must open no transaction of its own
    con = variant_connection(target, engine, isolation_level=None)
    try:
        maker = _Maker(con, engine, constraints, dialect, index)
        kept: dict[str, dict[str, int]] = {}
        for i, gold in enumerate(golds):
            if (i + index) % SPREAD:
                continue  # one gold's tuple can empty another's (an EXCEPT of the other's rows)
            made = maker.gold(gold)
            if made is not None:
                kept[gold] = made
        for gold, made in kept.items():
            for table, n in made.items():
                out.rows[table] = out.rows.get(table, 0) + n
            if made and _has_value(con, _runnable(gold, dialect, engine)):  # still, after the others' tuples
                out.sentences[gold_digest(gold)] = [
                    f"new rows in {', '.join(sorted(made))} through the gold's join path, satisfying every "
                    f"conjunct (the gold answers nothing, or a count of nothing, on the pinned database)"]
    finally:
        con.close()
    Path(str(target) + ".wal").unlink(missing_ok=True)
    return out


# -- running SQL ---------------------------------------------------------------------------
def _bounded(con: Any, sql: str, params: Iterable[Any] = (), many: int | None = None) -> list[tuple[Any, ...]]:
    """Run ``sql``, bounded by the work of ``NONEMPTY_WORK_S`` (``engines.watchdog.bounded_rows``)."""
    from ..engines.watchdog import Work, bounded_rows
    return bounded_rows(con, sql, params, work=Work.like(NONEMPTY_WORK_S), what="nonempty",
                        many=many)


def _runnable(sql: str, dialect: str, engine: str) -> str:
    """The gold as the engine's own driver runs it (transpiled when its dialect is another)."""
    if dialect == engine:
        return sql
    tree = _parse(sql, dialect, None)
    return sql if tree is None else str(tree.sql(dialect=engine))


def _has_value(con: Any, sql: str, *, trusted: bool = True) -> bool | None:
    """Whether the query's answer has a value: some row, not NULLs only (the grader's
    ungraded golds); with ``trusted``, also not one row of NULLs, zeros and NaN, which a
    variant's gold answer may not be (``engine_side._degenerate``). None when it fails or
    overruns."""
    try:
        rows = _bounded(con, sql, many=MAX_GOLD_ROWS)
    except Exception:  # a gold that fails here is reported by the grader, not made informative
        return None
    if not rows or all(v is None for row in rows for v in row):
        return False
    if trusted and len(rows) == 1 and all(v is None or v != v or v in (0, False) for v in rows[0]):
        return False
    return True


def _parse(sql: str, dialect: str, catalog: Any) -> Any:
    """The gold's tree, None when it does not parse (``witnesses.parsed_golds``: the grader
    reports it); from SQLite, its double-quoted strings made strings
    (``core.sqlite_quoting``): by the schema when ``catalog`` is given (Spider's golds:
    ``WHERE continent = "north america"``), else as the grader runs a gold on another engine."""
    from ..sqlite_quoting import sqlite_quoted_strings
    from .witnesses import parsed_golds
    for _, tree in parsed_golds([sql], dialect):
        if dialect != "sqlite":
            return tree
        known = None if catalog is None else [c for cols in catalog.lower.values() for c in cols]
        return sqlite_quoted_strings(tree, known)
    return None


# -- building a tuple ----------------------------------------------------------------------
class _Failed(Exception):
    """This try cannot build a tuple (undone by the caller)."""


class _Maker:
    """Builds tuples in one variant's connection, each gold's inside a savepoint."""

    def __init__(self, con: Any, engine: str, constraints: Any, dialect: str, index: int) -> None:
        from .witnesses import Catalog
        self.con, self.engine, self.c, self.dialect = con, engine, constraints, dialect
        self.tables: dict[str, Any] = constraints.tables
        self.catalog = Catalog({t: set(c.columns) for t, c in self.tables.items()})
        self.salt = (index * 2246822519 + 1013904223) % 4294967291
        self.frozen = list(getattr(constraints, "frozen", []) or [])
        self.made: dict[str, int] = {}  # table -> rows inserted in the current try
        self.new: list[tuple[str, int]] = []  # (table, rowid) inserted in the current try

    # transactions: a savepoint on SQLite, a transaction on DuckDB
    def _begin(self) -> None:
        self.con.execute("BEGIN TRANSACTION" if self.engine == "duckdb" else "SAVEPOINT sqleval_nonempty")
        self.made, self.new = {}, []

    def _undo(self) -> None:
        if self.engine == "duckdb":
            self.con.execute("ROLLBACK")
        else:
            self.con.execute("ROLLBACK TO sqleval_nonempty")
            self.con.execute("RELEASE sqleval_nonempty")

    def _keep(self) -> None:
        self.con.execute("COMMIT" if self.engine == "duckdb" else "RELEASE sqleval_nonempty")

    def gold(self, sql: str) -> dict[str, int] | None:
        """Rows per table of a kept tuple for this gold, or None (nothing written)."""
        tree = _parse(sql, self.dialect, self.catalog)
        if tree is None:
            return None
        runnable = _runnable(sql, self.dialect, self.engine)
        counted = self._counted(tree)
        for fresh_everywhere, twin in ((f, t) for f in (False, True) for t in ((True, False) if counted else (False,))):
            self._begin()
            try:
                self._query(tree, [], fresh_everywhere, 0)
                self._repair()
                if not _has_value(self.con, runnable) and not self._having(tree, runnable):
                    raise _Failed("the gold still has no value")
                if twin:
                    self._twin(counted, runnable)
                self._check()
            except Exception:  # _Failed, or a write the engine refused: nothing of this try stays
                self._undo()
                continue
            self._keep()
            return dict(self.made)
        return None

    def _query(self, tree: Any, pins: list[tuple[Any, Any]], fresh: bool, depth: int) -> None:
        """Make ``tree`` (a SELECT or a set operation) return a row."""
        from sqlglot import exp
        if isinstance(tree, exp.Subquery):
            return self._query(tree.this, pins, fresh, depth)
        if isinstance(tree, exp.Except):
            return self._query(tree.this, pins, fresh, depth)
        if isinstance(tree, exp.Intersect):
            self._query(tree.this, pins, fresh, depth)
            left = _bounded(self.con, str(tree.this.sql(dialect=self.engine)), many=1)
            if not left:
                raise _Failed("the left of INTERSECT has no row")
            right = tree.expression
            outputs = [s.unalias() for s in right.selects] if isinstance(right, exp.Select) else []
            return self._query(right, pins + list(zip(outputs, left[0])), fresh, depth)
        if isinstance(tree, exp.Union):
            try:
                self._query(tree.this, pins, fresh, depth)
            except _Failed:
                self._query(tree.expression, pins, fresh, depth)
            return None
        if not isinstance(tree, exp.Select):
            raise _Failed(f"not a SELECT: {type(tree).__name__}")
        return self._select(tree, pins, fresh, depth)

    def _select(self, select: Any, pins: list[tuple[Any, Any]], fresh: bool, depth: int) -> None:
        from sqlglot import exp

        from .constraints import parents_first
        from .witnesses import resolve_column, select_sources, split_terms
        sources = select_sources(select, self.catalog)
        joins = select.args.get("joins") or []
        if not sources or len(sources) != 1 + len(joins):
            raise _Failed("a FROM that is not tables")
        table_of = {a: self.catalog.originals[t] for a, t in sources.items()}
        conjuncts: list[Any] = []
        where = select.args.get("where")
        for node in ([where.this] if where is not None else []) + [j.args["on"] for j in joins if j.args.get("on")]:
            for c in split_terms(node, exp.And):
                if isinstance(c, exp.Or):  # a disjunction: its first branch, conjunct by conjunct
                    c = split_terms(c, exp.Or)[0]
                conjuncts += split_terms(c, exp.And)

        def resolve(col: Any) -> tuple[str, str] | None:
            return resolve_column(col, sources, self.catalog.lower)

        def owners(node: Any) -> set[str] | None:
            out = set()
            for col in node.find_all(exp.Column):
                if col.find_ancestor(exp.Select) is not select:
                    continue
                key = resolve(col)
                if key is None:
                    return None
                out.add(key[0])
            return out

        # equal columns share a value (union-find over (alias, column))
        root: dict[tuple[str, str], tuple[str, str]] = {}

        def find(x: tuple[str, str]) -> tuple[str, str]:
            root.setdefault(x, x)
            while root[x] != x:
                x = root[x]
            return x

        before: dict[str, set[str]] = {a: set() for a in sources}  # alias -> aliases decided before it
        own: dict[str, list[Any]] = {a: [] for a in sources}
        for cond in conjuncts:
            if isinstance(cond, exp.EQ) and all(isinstance(x, exp.Column) for x in (cond.this, cond.expression)):
                left, right = resolve(cond.this), resolve(cond.expression)
                if left is not None and right is not None and left[0] != right[0]:
                    root[find(left)] = find(right)
                    backed = {}  # (child alias, parent alias) -> declared?
                    for (ca, cc), (pa, pc) in ((left, right), (right, left)):
                        origins = {d.origin for d in self.c.dependencies if d.child == table_of[ca]
                                   and d.child_columns == (cc,) and d.parent == table_of[pa]
                                   and d.parent_columns == (pc,) and d.origin != "total"}
                        if origins:
                            backed[(ca, pa)] = "declared" in origins
                    if len(backed) == 2 and any(backed.values()):  # both ways: the declared foreign key decides
                        backed = {k: v for k, v in backed.items() if v}
                    for ca, pa in backed:
                        before[ca].add(pa)
                    continue
            who = owners(cond)
            if who is not None and len(who) == 1:
                own[next(iter(who))].append(cond)
        order = parents_first(list(sources), before)
        value: dict[tuple[str, str], Any] = {}
        for node, v in pins:  # an INTERSECT's right side: the values of a row its left returns
            key = resolve(node) if isinstance(node, exp.Column) else None
            if key is not None:
                value[find(key)] = v
        for alias in sources:
            for cond in own[alias]:
                if isinstance(cond, exp.EQ) and isinstance(cond.this, exp.Column):
                    key = resolve(cond.this)
                    literal = self._constant(cond.expression, depth, fresh)
                    if key is not None and literal is not _NONE and find(key) not in value:
                        value[find(key)] = literal
        projected = {resolve(c) for s in select.selects for c in s.find_all(exp.Column)
                     if c.find_ancestor(exp.Select) is select} - {None}
        for alias in order:
            table = table_of[alias]
            t = self.tables[table]
            fixed = {col: value[find((alias, col))] for col in t.columns if find((alias, col)) in value}
            nonnull = [col for a, col in projected if a == alias]  # type: ignore[misc]
            filters = [c.sql(dialect=self.engine) for c in own[alias]]
            row = None if fresh else self._existing(table, alias, filters, fixed, nonnull)
            if row is None:
                assigns = dict(fixed)
                for cond in own[alias]:
                    for col, v in self._assignments(cond, resolve, alias, depth, fresh):
                        assigns.setdefault(col, v)
                # a table with no row at all gets one made from scratch (source None)
                source = self._existing(table, alias, filters, {}, []) or self._existing(table, alias, [], {}, [])
                try:
                    row = self.insert(table, source, assigns, nonnull)
                except _Failed:
                    row = self._existing(table, alias, filters, fixed, nonnull) if fresh else None
                    if row is None:
                        raise
            values = dict(zip(t.columns, _bounded(
                self.con, f"SELECT {', '.join(_q(c) for c in t.columns)} FROM {self._rel(table)} "
                          f"WHERE rowid = {int(row)}")[0]))
            for col in t.columns:
                value.setdefault(find((alias, col)), values[col])

    # -- values of conjuncts
    def _constant(self, node: Any, depth: int, fresh: bool) -> Any:
        """A literal's value, or a scalar subquery's value on the variant; ``_NONE`` else."""
        from sqlglot import exp

        from .witnesses import constant_value
        if isinstance(node, (exp.Subquery, exp.Select)):
            inner = node.this if isinstance(node, exp.Subquery) else node
            rows = self._rows_of(inner, depth, fresh)
            return rows[0][0] if rows and rows[0] and rows[0][0] is not None else _NONE
        if isinstance(node, exp.Null):
            return _NONE
        value = constant_value(node)
        if value is None:
            return _NONE
        return _python(value)

    def _rows_of(self, inner: Any, depth: int, fresh: bool) -> list[tuple[Any, ...]]:
        """A subquery's rows on the variant; one with none is made to return one first."""
        sql = str(inner.sql(dialect=self.engine))
        try:
            rows = _bounded(self.con, sql, many=1)
        except Exception:  # correlated to the outer query: no value here
            return []
        if not rows and depth < SUBQUERY_DEPTH:
            try:
                self._query(inner, [], fresh, depth + 1)
                rows = _bounded(self.con, sql, many=1)
            except _Failed:
                return []
        return rows

    def _assignments(self, cond: Any, resolve: Any, alias: str, depth: int, fresh: bool) -> list[tuple[str, Any]]:
        """(column, value) a new row takes to pass ``cond``, a conjunct on its own table."""
        from sqlglot import exp

        from .witnesses import neighbours
        if isinstance(cond, exp.Not):  # NOT LIKE, NOT IN, IS NOT NULL: the copied row's value
            return []
        flips = {exp.GT: exp.LT, exp.LT: exp.GT, exp.GTE: exp.LTE, exp.LTE: exp.GTE, exp.EQ: exp.EQ}
        if type(cond) in flips and not isinstance(cond.this, exp.Column) and isinstance(cond.expression, exp.Column):
            cond = flips[type(cond)](this=cond.expression.copy(), expression=cond.this.copy())
        column = cond.this if isinstance(getattr(cond, "this", None), exp.Column) else None
        key = resolve(column) if column is not None else None
        if key is None or key[0] != alias:
            return []
        col = key[1]
        if isinstance(cond, exp.Is):
            return [(col, None)] if isinstance(cond.expression, exp.Null) else []
        if isinstance(cond, exp.In):
            query = cond.args.get("query")
            if query is not None:
                rows = self._rows_of(query.this if isinstance(query, exp.Subquery) else query, depth, fresh)
                return [(col, rows[0][0])] if rows and rows[0][0] is not None else []
            for item in cond.expressions:
                v = self._constant(item, depth, fresh)
                if v is not _NONE:
                    return [(col, v)]
            return []
        if isinstance(cond, exp.Between):
            v = self._constant(cond.args.get("low"), depth, fresh)
            return [] if v is _NONE else [(col, v)]
        if isinstance(cond, (exp.Like, exp.ILike)):
            pattern = cond.expression
            if isinstance(pattern, exp.Literal) and pattern.is_string:
                return [(col, pattern.this.replace("%", "").replace("_", "a"))]
            return []
        if not isinstance(cond, (exp.EQ, exp.GT, exp.GTE, exp.LT, exp.LTE)):
            return []
        v = self._constant(cond.expression, depth, fresh)
        if v is _NONE:
            return []
        if isinstance(cond, (exp.GT, exp.LT)):  # one unit past the bound (an integer 1, a day)
            try:
                moved = neighbours(str(v))[2 if isinstance(cond, exp.GT) else 1]
            except Exception:  # no grid: a text bound
                return []
            v = _python(_typed(moved, v))
        return [(col, v)]

    # -- rows
    def _rel(self, table: str) -> str:
        from .constraints import qualified
        return qualified(table, self.engine)

    def _order(self) -> str:
        return f"ORDER BY (rowid * 2654435761 + {self.salt}) % 4294967291"

    def _existing(self, table: str, alias: str, filters: list[str], fixed: dict[str, Any],
                  nonnull: list[str]) -> int | None:
        """A row of ``table`` (as ``alias``) passing ``filters`` with ``fixed`` values."""
        conds = list(filters) + [f"{_q(alias)}.{_q(c)} IS NULL" if v is None else f"{_q(alias)}.{_q(c)} = ?"
                                 for c, v in fixed.items()] + [f"{_q(alias)}.{_q(c)} IS NOT NULL" for c in nonnull]
        params = [v for v in fixed.values() if v is not None]
        where = f" WHERE {' AND '.join(conds)}" if conds else ""
        try:
            rows = _bounded(self.con, f"SELECT {_q(alias)}.rowid FROM {self._rel(table)} AS {_q(alias)}{where} "
                                      f"{self._order().replace('rowid', _q(alias) + '.rowid')} LIMIT 1", params)
        except Exception:  # a filter this engine cannot run alone (correlated): no such row
            return None
        return int(rows[0][0]) if rows else None

    def insert(self, table: str, source: int | None, assigns: dict[str, Any], nonnull: Iterable[str] = ()) -> int:
        """Insert a copy of row ``source`` with ``assigns`` and fresh key values; its rowid.
        With ``source`` None (a table with no row to copy: Spider's geo, imdb, yelp, ...
        hold none at all) the row is made from scratch: ``assigns`` (the gold's literals and
        the values its parents fixed), fresh keys, and a value of the column's type in every
        other column (``_some_value``), so every NOT NULL holds (on an empty table every
        column is observed NOT NULL). A table with a frozen column gets no such row."""
        from .clones import deps_columns
        from .constraints import is_frozen
        t = self.tables[table]
        rel = self._rel(table)
        values = {c: v for c, v in assigns.items() if c in t.columns}
        if any(is_frozen(table, c, self.frozen) for c in (values if source is not None else t.columns)):
            raise _Failed(f"{table}: a frozen column would take a value")
        fresh = self._fresh_keys(table, deps_columns(self.c.dependencies, table), values)
        for col in [c for c in fresh if c not in values]:
            upper = t.columns[col].upper()
            if any(w in upper for w in ("INT", "DECIMAL", "NUMERIC", "DOUBLE", "FLOAT", "REAL")) or \
                    (self.engine == "sqlite" and upper == ""):
                top = _bounded(self.con, f"SELECT max({_q(col)}) FROM {rel}")[0][0]
                values[col] = (int(top) if isinstance(top, (int, float)) else 0) + 1
            elif source is None:  # the column's name and a number no row of it holds
                count = _bounded(self.con, f"SELECT count(*) FROM {rel}")[0][0]
                values[col] = f"{col} {int(count) + 1}"
            else:
                own = _bounded(self.con, f"SELECT {_q(col)}, (SELECT count(*) FROM {rel}) FROM {rel} "
                                         f"WHERE rowid = {int(source)}")[0]
                values[col] = f"{own[0] if own[0] is not None else ''}#{own[1]}"
        if source is None:
            for col in t.columns:
                if col not in values:
                    values[col] = self._some_value(table, col)
        for col in nonnull:
            if col not in values and source is not None:
                held = _bounded(self.con, f"SELECT {_q(col)} FROM {rel} WHERE rowid = {int(source)}")[0][0]
                if held is None:
                    values[col] = self._some_value(table, col)
        cols = list(t.columns)
        exprs = [(f"CAST(? AS {t.columns[c]})" if self.engine == "duckdb" and t.columns[c] else "?")
                 if c in values else _q(c) for c in cols]
        params = [values[c] for c in cols if c in values]
        if source is None:
            cur = self.con.execute(f"INSERT INTO {rel} ({', '.join(_q(c) for c in cols)}) "
                                   f"VALUES ({', '.join(exprs)})", params)
        else:
            cur = self.con.execute(f"INSERT INTO {rel} ({', '.join(_q(c) for c in cols)}) SELECT {', '.join(exprs)} "
                                   f"FROM {rel} WHERE rowid = {int(source)}", params)
        # SQLite: the row's own id (an INTEGER PRIMARY KEY given a literal is no maximum); DuckDB appends
        rowid = int(cur.lastrowid if self.engine == "sqlite"
                    else _bounded(self.con, f"SELECT max(rowid) FROM {rel}")[0][0])
        self.made[table] = self.made.get(table, 0) + 1
        self.new.append((table, rowid))
        return rowid

    def _fresh_keys(self, table: str, linked: set[str], values: dict[str, Any]) -> list[str]:
        """The columns that get a fresh value (max + 1, or the copied text with ``#n``), one per
        key of ``table`` that ``values`` does not fully give (a link table's pair of references
        is given): a number or text outside every reference, the INTEGER first; else a day or
        timestamp no row references, which takes the next one after its greatest; else a
        reference column (an id whose values all occur in another table's key, as Spider's
        small integer ids often do), which takes a value of the referenced column that no row
        of ``table`` holds yet (``values`` gains it and the last two), so the key stays unique
        and the reference holds. Raises ``_Failed`` for a key with none of them."""
        from .clones import freshable
        from .witnesses import neighbours
        t = self.tables[table]
        fresh: list[str] = []
        referenced = {c for d in self.c.dependencies if d.parent == table for c in d.parent_columns}
        for key in [k for k in [t.primary_key, *t.unique_keys, *[(c,) for c in t.observed_unique]] if k]:
            if set(key) <= set(values) or set(key) & set(fresh):
                continue
            options = sorted((c for c in key if c not in values and c not in linked and freshable(t.columns[c])),
                             key=lambda c: "INT" not in t.columns[c].upper())
            if options:
                fresh.append(options[0])
                continue
            for col in [c for c in key if c not in values]:
                if col not in linked and col not in referenced:  # a day or a timestamp: the next after the last
                    top = _bounded(self.con, f"SELECT max({_q(col)}) FROM {self._rel(table)}")[0][0]
                    if top is None:  # the column holds no value yet: any value of its type is fresh
                        values[col] = self._some_value(table, col)
                        break
                    after = neighbours(str(top))[2:] if isinstance(top, str) else []
                    if after and after[0] != str(top):
                        values[col] = after[0]
                        break
                for d in self.c.dependencies:
                    if d.child != table or d.child_columns != (col,) or d.origin == "total":
                        continue
                    pc = _q(d.parent_columns[0])
                    unused = _bounded(self.con, f"SELECT p.{pc} FROM {self._rel(d.parent)} p WHERE p.{pc} IS NOT NULL "
                                                f"AND p.{pc} NOT IN (SELECT {_q(col)} FROM {self._rel(table)} WHERE "
                                                f"{_q(col)} IS NOT NULL) {self._order().replace('rowid', 'p.rowid')} "
                                                f"LIMIT 1")
                    if unused:
                        values[col] = unused[0][0]
                        break
                if col in values:
                    break
            else:
                raise _Failed(f"{table}: no fresh value for the key ({', '.join(key)})")
        return fresh

    def _some_value(self, table: str, col: str) -> Any:
        """A value for a projected column that is NULL on the copied row (or a column of a
        row made from scratch): one the column holds, else one of its type."""
        held = _bounded(self.con, f"SELECT {_q(col)} FROM {self._rel(table)} WHERE {_q(col)} IS NOT NULL LIMIT 1")
        if held:
            return held[0][0]
        upper = self.tables[table].columns[col].upper()
        if any(w in upper for w in ("INT", "DECIMAL", "NUMERIC", "DOUBLE", "FLOAT", "REAL", "BOOL")):
            return 1
        if "DATE" in upper or "TIMESTAMP" in upper:
            return "2000-01-01"
        if "TIME" in upper:
            return "00:00:00"
        return col

    def _repair(self) -> None:
        """Add the rows the new rows' references need (a copy of a parent row with that key)
        and those a total dependency asks of a fresh key (a copy of a child row moved onto
        it), to a fixpoint."""
        added = 0
        for _ in range(MAX_REPAIR_ROUNDS):
            touched = {table for table, _ in self.new}
            missing: list[tuple[Any, Any]] = []
            for d in self.c.dependencies:
                if d.child not in touched:
                    continue
                if len(d.child_columns) != 1:
                    if self._missing(d):
                        raise _Failed(f"{d}: a composite reference would dangle")
                    continue
                missing += [(d, v) for v in self._missing(d)]
            if not missing:
                return
            for d, v in missing:
                if added >= MAX_REPAIR_ROWS:
                    raise _Failed("too many rows to keep every dependency")
                source = self._existing(d.parent, "p", [], {}, [])  # None: a parent made from scratch
                self.insert(d.parent, source, {d.parent_columns[0]: v})
                added += 1
        raise _Failed("dependencies still dangle")

    def _missing(self, d: Any) -> list[Any]:
        """Values of the dependency's child columns in this try's new rows that no parent row
        holds (at most 5); a reference the pinned data already breaks is left alone."""
        pairs = list(zip(d.child_columns, d.parent_columns))
        ids = sorted(rowid for table, rowid in self.new if table == d.child)
        if not ids:
            return []
        nonnull = " AND ".join([f"c.rowid IN ({', '.join(map(str, ids))})"] + [f"c.{_q(cc)} IS NOT NULL"
                                                                               for cc, _ in pairs])
        match = " AND ".join(f"p.{_q(pc)} = c.{_q(cc)}" for cc, pc in pairs)
        rows = _bounded(self.con, f"SELECT DISTINCT {', '.join('c.' + _q(cc) for cc, _ in pairs)} "
                                  f"FROM {self._rel(d.child)} c WHERE {nonnull} AND NOT EXISTS "
                                  f"(SELECT 1 FROM {self._rel(d.parent)} p WHERE {match}) LIMIT 5")
        return [r[0] if len(r) == 1 else r for r in rows]

    def _having(self, tree: Any, runnable: str) -> bool:
        """Copies of the last new row until a grouped gold has a value (a HAVING bound)."""
        from sqlglot import exp
        if not any(s.args.get("having") is not None for s in tree.find_all(exp.Select)) or not self.new:
            return False
        table, rowid = self._sink()
        for _ in range(MAX_HAVING_COPIES):
            self.insert(table, rowid, {})
            self._repair()
            if _has_value(self.con, runnable):
                return True
        return False

    def _counted(self, tree: Any) -> set[str]:
        """The tables whose column a ``count(DISTINCT x)`` of the gold counts."""
        from sqlglot import exp

        from .witnesses import select_sources
        out = set()
        for count in tree.find_all(exp.Count):
            arg, select = count.this, count.find_ancestor(exp.Select)
            if not isinstance(arg, exp.Distinct) or len(arg.expressions) != 1 or select is None \
                    or not isinstance(arg.expressions[0], exp.Column):
                continue
            col = arg.expressions[0]
            sources = select_sources(select, self.catalog)
            owners = [t for a, t in sources.items() if (a == col.table.lower() if col.table
                                                        else col.name.lower() in self.catalog.lower[t])]
            if len(owners) == 1:
                out.add(self.catalog.originals[owners[0]])
        return out

    def _twin(self, counted: set[str], runnable: str) -> None:
        """A second copy of the tuple's new row that a ``count(DISTINCT x)`` counts (fresh
        keys, ``x`` kept): a tuple of one row answers 1, as ``count(x)`` does; two rows with one
        ``x`` tell them apart. Where no copy keeps the gold's value, the try without it."""
        mine = [(table, rowid) for table, rowid in self.new if table in counted]
        if not mine:
            return
        table, rowid = mine[-1]
        self.insert(table, rowid, {})
        self._repair()
        if not _has_value(self.con, runnable):
            raise _Failed("the gold has no value with a second counted row")

    def _sink(self) -> tuple[str, int]:
        """The new row no other new row's table references (the fact of the tuple)."""
        parents = {d.parent for d in self.c.dependencies if d.origin != "total"}
        for table, rowid in self.new:
            if table not in parents:
                return table, rowid
        return self.new[0]

    def _check(self) -> None:
        """Every key, NOT NULL column and duplicate-free table the tuple touched still is, for
        the tuple's own rows: a column unique only by chance that an earlier witness of the
        variant repeated (two orders on the day a gold's ``order_date < '2018-05-23'`` bounds)
        refused every tuple on that table, though none of its rows repeated a value."""
        for table in {table for table, _ in self.new}:
            t = self.tables[table]
            rel = self._rel(table)
            mine = ", ".join(str(int(rowid)) for name, rowid in self.new if name == table)
            keys = [k for k in [t.primary_key, *t.unique_keys, *[(c,) for c in t.observed_unique]] if k]
            for key in keys:
                cols = ", ".join(_q(c) for c in key)
                same = " AND ".join(f"a.{_q(c)} = b.{_q(c)}" for c in key)
                if _bounded(self.con, f"SELECT 1 FROM {rel} a JOIN {rel} b ON {same} AND a.rowid <> b.rowid "
                                      f"WHERE a.rowid IN ({mine}) LIMIT 1"):
                    raise _Failed(f"{table}: key ({cols}) would repeat")
            nulls = [c for c in t.not_null_observed]
            if nulls and _bounded(self.con, f"SELECT 1 FROM {rel} WHERE rowid IN ({mine}) AND "
                                            f"({' OR '.join(f'{_q(c)} IS NULL' for c in nulls)}) LIMIT 1"):
                raise _Failed(f"{table}: a NOT NULL column would hold NULL")
            if not keys and not t.duplicate_rows:
                distinct = _bounded(self.con, f"SELECT count(*) FROM (SELECT DISTINCT * FROM {rel}) AS d")[0][0]
                if distinct != _bounded(self.con, f"SELECT count(*) FROM {rel}")[0][0]:
                    raise _Failed(f"{table}: a row would be duplicated")


class _NoValue:
    def __repr__(self) -> str:
        return "<no value>"


_NONE: Any = _NoValue()


def _q(name: str) -> str:
    from .constraints import quote
    return quote(name)


def _python(value: Any) -> Any:
    """A folded constant as a value the drivers bind (a whole number as int)."""
    import datetime as dt
    from decimal import Decimal
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat(sep=" ") if isinstance(value, dt.datetime) else value.isoformat()
    return value


def _typed(text: str, like: Any) -> Any:
    """``neighbours``' text as the kind of value ``like`` is."""
    from decimal import Decimal
    if isinstance(like, (int, float)) and not isinstance(like, bool):
        return Decimal(text)
    return text


__all__ = ["NONEMPTY_WORK_S", "Written", "uninformative_golds", "write_nonempty"]
