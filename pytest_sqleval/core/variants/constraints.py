"""The constraints a correct query may rely on, as declared and as observed on the pinned
database: what every variant of it must keep.

A variant that breaks a fact of the pinned data that a correct rewrite relies on (every
order has a customer, so an INNER JOIN equals the gold's LEFT JOIN) fails a correct
prediction, so the grader would be wrong. Observation is therefore generous: a false
constraint only makes variants more conservative, a missed one makes the grader wrong.

Per table: declared primary and unique keys; observed unique columns (no NULL, all values
distinct); declared and observed NOT NULL (no NULL on the pinned data); whether the table
holds duplicate rows (then no set of columns is a key). Across tables: inclusion
dependencies ``child(cols) -> parent(cols)``, declared (foreign keys) and observed: a
column whose distinct non-null values all occur in a unique column of a compatible type,
and, for each of those, the reverse inclusion when every parent value is referenced (total
participation: ``count(DISTINCT customer_id) FROM orders`` equals ``count(*) FROM
customers``). Free columns are in no key, no dependency and not frozen, and not in a table
referenced by a natural key (a date or a code: its attributes are facts about the key's
value that correct queries rely on, such as a date's fiscal year; a text inclusion only
observed into a table the others reference by a number is shared words, not a key): only
they may move.

Engines: DuckDB and SQLite files, read with their own drivers (never the sandboxes).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Collection, Iterable

from ..errors import UsageError

Ref = tuple[str, tuple[str, ...]]  # (table, columns)


@dataclass(frozen=True)
class Dependency:
    """Inclusion ``child(columns) ⊆ parent(columns)`` over rows whose child columns are all
    non-null (the foreign key rule, MATCH SIMPLE)."""

    child: str
    child_columns: tuple[str, ...]
    parent: str
    parent_columns: tuple[str, ...]
    origin: str  # "declared" (a foreign key), "observed" (into a unique column), "total" (every parent value used)

    def __str__(self) -> str:
        return (f"{self.child}({', '.join(self.child_columns)}) -> "
                f"{self.parent}({', '.join(self.parent_columns)}) [{self.origin}]")


@dataclass
class TableConstraints:
    """What one table must keep. ``name`` is ``schema.table`` on DuckDB, the table's name on SQLite."""

    name: str
    columns: dict[str, str]  # column -> declared type
    rows: int
    primary_key: tuple[str, ...] = ()
    unique_keys: list[tuple[str, ...]] = field(default_factory=list)  # declared UNIQUE, the primary key excluded
    observed_unique: list[str] = field(default_factory=list)
    not_null_declared: list[str] = field(default_factory=list)
    not_null_observed: list[str] = field(default_factory=list)  # no NULL on the pinned data (declared ones too)
    duplicate_rows: bool = False  # two identical rows exist: no set of columns is a key
    free: list[str] = field(default_factory=list)
    anchor: str | None = None  # the column rows are sampled by (see _anchor)

    @property
    def key_columns(self) -> set[str]:
        out = set(self.primary_key) | set(self.observed_unique)
        for key in self.unique_keys:
            out |= set(key)
        return out

    @property
    def keys(self) -> list[tuple[str, ...]]:
        """Every key, declared or observed (an observed unique column as a key of one)."""
        return [k for k in [self.primary_key, *self.unique_keys, *[(c,) for c in self.observed_unique]] if k]

    @property
    def has_key(self) -> bool:
        return bool(self.primary_key or self.unique_keys or self.observed_unique) or not self.duplicate_rows


@dataclass
class Constraints:
    """Every table's constraints and the inclusion dependencies between them."""

    engine: str  # "duckdb" or "sqlite"
    tables: dict[str, TableConstraints]
    dependencies: list[Dependency]
    frozen: list[str] = field(default_factory=list)

    def dependency_columns(self, table: str) -> set[str]:
        out: set[str] = set()
        for dep in self.dependencies:
            if dep.child == table:
                out |= set(dep.child_columns)
            if dep.parent == table:
                out |= set(dep.parent_columns)
        return out

    def parents(self) -> set[str]:
        return {dep.parent for dep in self.dependencies}

    def references(self, table: str) -> list[Dependency]:
        """The table's references to other tables (its dependencies as a child, but the total ones)."""
        return [d for d in self.dependencies if d.child == table and d.parent != table and d.origin != "total"]

    def to_dict(self) -> dict[str, Any]:
        return {"engine": self.engine, "frozen": self.frozen,
                "tables": {n: {"rows": t.rows, "primary_key": list(t.primary_key),
                               "unique_keys": [list(k) for k in t.unique_keys],
                               "observed_unique": t.observed_unique, "not_null_declared": t.not_null_declared,
                               "not_null_observed": t.not_null_observed, "duplicate_rows": t.duplicate_rows,
                               "free": t.free} for n, t in self.tables.items()},
                "dependencies": [str(d) for d in self.dependencies]}


# -- engines ------------------------------------------------------------------------------
def engine_of(database: str | Path) -> str:
    """``duckdb`` or ``sqlite`` for a database file; a ``UsageError`` for anything else."""
    from ..engines import display_location, engine_name, is_url
    name = engine_name(database)
    if is_url(database) or name not in ("duckdb", "sqlite"):
        raise UsageError(f"database variants are not supported on this engine ({name}: "
                         f"{display_location(database)}). Fix: grade this suite without variants, or give it a "
                         "DuckDB or SQLite copy of the database (a .duckdb or .sqlite file)")
    if not Path(database).is_file():
        raise UsageError(f"database {database} does not exist. Fix: build the suite's database first")
    return name


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def parents_first(names: list[str], before: dict[str, set[str]]) -> list[str]:
    """``names`` with each one's parents (``before``, named or not) ahead of it; a cycle keeps
    the given order. A join path's aliases (``nonempty``), a database's tables (``build``)."""
    order: list[str] = []

    def visit(name: str, path: tuple[str, ...]) -> None:
        if name in order or name in path:
            return
        for parent in sorted(before.get(name, ())):
            visit(parent, path + (name,))
        order.append(name)

    for name in names:
        visit(name, ())
    return order


def qualified(table: str, engine: str) -> str:
    """``table`` as SQL: ``"schema"."table"`` on DuckDB, ``"table"`` on SQLite."""
    if engine == "duckdb":
        schema, _, name = table.partition(".")
        return f"{quote(schema)}.{quote(name)}"
    return quote(table)


def family(declared_type: str, engine: str) -> str:
    """A type family for the inclusion check: number, text, temporal, bool, any, other."""
    t = declared_type.upper()
    if engine == "sqlite":  # dynamically typed: only blobs stay apart (be generous)
        return "other" if "BLOB" in t else "any"
    if t.startswith(("DECIMAL", "NUMERIC")) or t in {"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT",
                                                     "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT", "UHUGEINT",
                                                     "FLOAT", "DOUBLE", "REAL"}:
        return "number"
    if t in {"VARCHAR", "UUID"} or t.startswith("ENUM"):
        return "text"
    if t.startswith(("DATE", "TIMESTAMP")):
        return "temporal"
    if t.startswith("TIME"):
        return "time"
    if t == "BOOLEAN":
        return "bool"
    return "other"


def _compatible(a: str, b: str) -> bool:
    if "other" in (a, b) or "bool" in (a, b):
        return False
    return a == b or "any" in (a, b)


class _Reader:
    """Read-only access to one database file with the engine's own driver."""

    def __init__(self, database: Path, engine: str) -> None:
        self.engine = engine
        from .sqlite_io import variant_connection
        self.conn: Any = variant_connection(database, engine, read_only=True)

    def close(self) -> None:
        self.conn.close()

    def all(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        rows: list[tuple[Any, ...]] = self.conn.execute(sql, params).fetchall()
        return rows

    def tables(self) -> dict[str, dict[str, str]]:
        out: dict[str, dict[str, str]] = {}
        if self.engine == "duckdb":
            rows = self.all("SELECT c.schema_name || '.' || c.table_name, c.column_name, c.data_type "
                            "FROM duckdb_columns() c JOIN duckdb_tables() t USING (database_name, schema_name, "
                            "table_name) WHERE c.database_name = current_database() AND NOT t.temporary "
                            "AND NOT t.internal ORDER BY 1, c.column_index")
            for table, column, dtype in rows:
                out.setdefault(table, {})[column] = dtype
            return out
        names = [r[0] for r in self.all("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE "
                                        "'sqlite\\_%' ESCAPE '\\' ORDER BY name")]
        for name in names:
            out[name] = {c: (t or "") for c, t in self.all("SELECT name, type FROM pragma_table_info(?) "
                                                          "ORDER BY cid", (name,))}
        return out

    def declared(self, tables: dict[str, TableConstraints]) -> list[Dependency]:
        """Fill declared keys and NOT NULL into ``tables``; return the declared foreign keys."""
        deps: list[Dependency] = []
        if self.engine == "duckdb":
            rows = self.all("SELECT schema_name, table_name, constraint_type, constraint_column_names, "
                            "referenced_table, referenced_column_names FROM duckdb_constraints() "
                            "WHERE database_name = current_database() ORDER BY ALL")
            for schema, table, kind, cols, ref_table, ref_cols in rows:
                t = tables.get(f"{schema}.{table}")
                if t is None:
                    continue
                if kind == "PRIMARY KEY":
                    t.primary_key = tuple(cols)
                elif kind == "UNIQUE":
                    t.unique_keys.append(tuple(cols))
                elif kind == "NOT NULL":
                    t.not_null_declared += [c for c in cols if c not in t.not_null_declared]
                elif kind == "FOREIGN KEY" and ref_table:
                    deps.append(Dependency(t.name, tuple(cols), f"{schema}.{ref_table}", tuple(ref_cols), "declared"))
            return deps
        for t in tables.values():
            info = self.all("SELECT name, \"notnull\", pk FROM pragma_table_info(?) ORDER BY cid", (t.name,))
            t.not_null_declared = [c for c, nn, pk in info if nn]
            pk = [c for c, _, n in sorted(info, key=lambda r: r[2]) if n]
            if pk:
                t.primary_key = tuple(pk)
                if len(pk) == 1 and t.columns[pk[0]].upper() == "INTEGER":  # the rowid: never NULL
                    t.not_null_declared.append(pk[0]) if pk[0] not in t.not_null_declared else None
            for _, index, unique, origin, _partial in self.all("SELECT * FROM pragma_index_list(?)", (t.name,)):
                if unique and origin != "pk":
                    cols = tuple(r[0] for r in self.all("SELECT name FROM pragma_index_info(?) ORDER BY seqno",
                                                        (index,)))
                    if cols and None not in cols and cols not in t.unique_keys:
                        t.unique_keys.append(cols)
        for t in tables.values():  # after every primary key is known: a reference may name none
            fks: dict[int, list[tuple[Any, ...]]] = {}
            for row in self.all("SELECT id, seq, \"table\", \"from\", \"to\" FROM pragma_foreign_key_list(?)",
                                (t.name,)):
                fks.setdefault(row[0], []).append(row)
            for parts in fks.values():
                parts.sort(key=lambda r: r[1])
                parent = _sqlite_table(parts[0][2], tables)
                if parent is None:
                    continue
                to = [r[4] for r in parts]
                if None in to:  # REFERENCES parent with no column list: the parent's primary key
                    to = list(tables[parent].primary_key)
                if len(to) != len(parts):  # a parent without the key it is referenced by: SQLite refuses it too
                    continue
                # SQLite stores a foreign key as written and checks its columns only when it is
                # enforced: Spider's imdb references keyword("kid") where keyword has "id". Such a
                # declaration constrains nothing (SQLite refuses every write it covers, "foreign
                # key mismatch"): skipped. Names are matched as SQLite does, case-insensitively.
                child_cols = _sqlite_columns([r[3] for r in parts], t.columns)
                parent_cols = _sqlite_columns(to, tables[parent].columns)
                if child_cols is None or parent_cols is None:
                    continue
                deps.append(Dependency(t.name, child_cols, parent, parent_cols, "declared"))
        return deps

    def stats(self, table: TableConstraints) -> tuple[int, dict[str, tuple[int, int, Any, Any]]]:
        """Rows, and per column: non-null count, distinct count, min, max (None where not ordered)."""
        rel = qualified(table.name, self.engine)
        cols = list(table.columns)
        if not cols:
            return self.all(f"SELECT count(*) FROM {rel}")[0][0], {}
        parts = ["count(*)"]
        ordered = []
        for c in cols:
            fam = family(table.columns[c], self.engine)
            ordered.append(fam in ("number", "text", "temporal", "time", "any"))
            q = quote(c)
            parts += [f"count({q})", f"count(DISTINCT {q})"]
            parts += [f"min({q})", f"max({q})"] if ordered[-1] else ["NULL", "NULL"]
        row = self.all(f"SELECT {', '.join(parts)} FROM {rel}")[0]
        out = {c: (row[1 + 4 * i], row[2 + 4 * i], row[3 + 4 * i], row[4 + 4 * i]) for i, c in enumerate(cols)}
        return row[0], out

    def duplicate_rows(self, table: TableConstraints) -> bool:
        rel = qualified(table.name, self.engine)
        distinct: int = self.all(f"SELECT count(*) FROM (SELECT DISTINCT * FROM {rel}) d")[0][0]
        return distinct < table.rows

    def included(self, child: str, checks: list[tuple[str, str, str]]) -> list[bool]:
        """For each ``(child column, parent table, parent column)``: whether every non-null
        value of the child column occurs in the parent column (one scan of the child)."""
        out: list[bool] = []
        for start in range(0, len(checks), 32):  # a bounded number of semi-joins per query
            part = checks[start:start + 32]
            exprs = []
            for ccol, ptable, pcol in part:
                c, p = quote(ccol), quote(pcol)
                exprs.append(f"min(CASE WHEN {c} IS NULL OR {c} IN (SELECT {p} FROM {qualified(ptable, self.engine)} "
                             f"WHERE {p} IS NOT NULL) THEN 1 ELSE 0 END)")
            row = self.all(f"SELECT {', '.join(exprs)} FROM {qualified(child, self.engine)}")[0]
            out += [v == 1 for v in row]
        return out


def _anchor(t: TableConstraints) -> str | None:
    """The column a table's rows are sampled by: its single-column key (the same value
    hashes alike in every table), else None (the whole row)."""
    single = [k[0] for k in [t.primary_key, *t.unique_keys] if len(k) == 1]
    return next(iter(single + t.observed_unique), None)


def _sqlite_columns(names: list[str], columns: dict[str, str]) -> tuple[str, ...] | None:
    """``names`` as the table spells its columns (SQLite's names are case-insensitive), or
    None when one is no column of the table."""
    spelled = {c.lower(): c for c in columns}
    out = tuple(spelled.get(str(n).lower(), "") for n in names)
    return None if "" in out else out


def _sqlite_table(name: str, tables: dict[str, TableConstraints]) -> str | None:
    if name in tables:
        return name
    for t in tables:  # SQLite table names are case-insensitive
        if t.lower() == name.lower():
            return t
    return None


def _integers(stats: tuple[int, int, Any, Any]) -> bool:
    """Whether a column's values are integers (by its min and max)."""
    lo, hi = stats[2], stats[3]
    return isinstance(lo, int) and isinstance(hi, int) and not isinstance(lo, bool)


_KEY_SUFFIXES = ("_id", "_no", "_key", "_code", "_num", "_nbr", "_number", "id", "no", "key", "code")


_GENERIC = frozenset({"id", "uid", "pk", "key", "no", "code", "rowid", "oid"})


def _stem(name: str) -> str:
    name = name.lower()
    for suffix in _KEY_SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)].rstrip("_")
    return name


def _unprefixed(name: str) -> str:
    """A column name without a short per-table prefix (``o_custkey`` -> ``custkey``)."""
    head, sep, rest = name.partition("_")
    return rest if sep and 1 <= len(head) <= 3 and head.isalpha() and rest else name


def _singular(name: str) -> str:
    name = name.lower().rsplit(".", 1)[-1]
    for plural, one in (("ies", "y"), ("ses", "s"), ("s", "")):
        if name.endswith(plural) and len(name) > len(plural) + 1:
            return name[: -len(plural)] + one
    return name


def related_names(child_table: str, child_column: str, parent_table: str, parent_column: str,
                  key_names: frozenset[str] = frozenset()) -> bool:
    """Whether a child column's name could refer to a parent key, generously: the same name
    or stem, a one-word abbreviation (``cust_no`` -> ``customer_id``), a stem ending in the
    parent's (``parent_department_id`` -> ``department_id``), the parent table's name
    (``store`` -> ``stores``), or an ``_id`` column of the same table (``manager_id`` ->
    ``employee_id``) whose name is no table's name or key column (``key_names``). Used only where the
    data cannot tell: an integer parent, whose range holds most small integers, and a date
    parent that is no calendar (a date of every other day at least)."""
    c, p = child_column.lower(), parent_column.lower()
    cs, ps, table = _stem(c), _stem(p), _singular(parent_table)
    if cs == c and c != p:
        return False  # a count or a measure (``orders``, ``visits``), no key-like name
    if c in _GENERIC and child_table != parent_table:
        return False  # every table's own "id": no reference (1:1 tables sample alike by it anyway)
    if c == p or cs == ps or cs == table:
        return True
    if _unprefixed(c) == _unprefixed(p) != c:
        return True  # a per-table column prefix (TPC-H's o_custkey -> c_custkey)
    if len(cs) >= 3 and len(ps) >= 3 and "_" not in cs + ps and (cs.startswith(ps) or ps.startswith(cs)):
        return True  # an abbreviation of one word: cust_no -> customer_id
    if cs.endswith("_" + ps) or cs.endswith("_" + table):
        return True
    if child_table == parent_table and c.endswith("_id") and c not in key_names and cs not in key_names \
            and not any(c.endswith("_" + k) for k in key_names):
        return True
    return False


def _dates(stats: tuple[int, int, Any, Any]) -> bool:
    import datetime as dt
    return isinstance(stats[2], dt.date) and isinstance(stats[3], dt.date)


def _calendar(stats: tuple[int, int, Any, Any]) -> bool:
    """Whether a unique date column holds at least half the days of its range (a calendar)."""
    import datetime as dt
    lo, hi = stats[2], stats[3]
    days = (hi.date() if isinstance(hi, dt.datetime) else hi) - (lo.date() if isinstance(lo, dt.datetime) else lo)
    return stats[1] * 2 >= days.days + 1


def _within(inner: tuple[Any, Any], outer: tuple[Any, Any]) -> bool:
    """Whether the range ``inner`` lies in ``outer``; True when it cannot be told."""
    try:
        return not (inner[0] is not None and outer[0] is not None and inner[0] < outer[0]) and \
            not (inner[1] is not None and outer[1] is not None and inner[1] > outer[1])
    except TypeError:
        return True


def is_frozen(table: str, column: str, frozen: Iterable[str]) -> bool:
    """Whether ``table.column`` is named by a frozen spec: ``table.column`` or ``table.*``,
    where ``table`` is the qualified name or, on DuckDB, the bare table name."""
    bare = table.rsplit(".", 1)[-1] if "." in table else table
    for spec in frozen:
        t, _, c = spec.rpartition(".")
        if t.lower() in (table.lower(), bare.lower()) and (c == "*" or c.lower() == column.lower()):
            return True
    return False


def observe_constraints(database: str | Path, *, frozen_columns: Iterable[str] = (),
                        golds: tuple[list[str], str] | None = None) -> Constraints:
    """The declared and observed constraints of a DuckDB or SQLite database file (see the
    module docstring). ``frozen_columns`` (``table.column`` or ``table.*``) are never free.
    ``golds`` (queries, dialect): a column pair a gold joins on is a candidate reference
    whatever its names (``joinpath.gold_joins``); the data must still agree.
    Any other location raises ``UsageError``."""
    engine = engine_of(database)
    frozen = sorted(set(frozen_columns))
    reader = _Reader(Path(database), engine)
    try:
        tables = {name: TableConstraints(name, cols, 0) for name, cols in reader.tables().items()}
        deps = reader.declared(tables)
        stats: dict[str, dict[str, tuple[int, int, Any, Any]]] = {}
        for t in tables.values():
            t.rows, stats[t.name] = reader.stats(t)
            t.not_null_observed = [c for c, s in stats[t.name].items() if s[0] == t.rows]
            t.observed_unique = [c for c, s in stats[t.name].items()
                                 if t.rows > 0 and s[0] == t.rows and s[1] == t.rows
                                 and family(t.columns[c], engine) not in ("bool", "other")]
            if not (t.primary_key or t.unique_keys or t.observed_unique) and t.rows > 1:
                t.duplicate_rows = reader.duplicate_rows(t)
        joined: set[tuple[str, str, str, str]] = set()
        if golds is not None:
            from .joinpath import gold_joins
            joined = gold_joins(golds[0], golds[1], {t.name: set(t.columns) for t in tables.values()})
        deps += _observe_inclusions(reader, tables, stats, deps, joined)
        referenced = {(d.parent, c) for d in deps for c in d.parent_columns}
        for t in tables.values():
            if t.rows == 1:  # one row: every column is unique by chance; the keys are the referenced ones
                t.observed_unique = [c for c in t.observed_unique if (t.name, c) in referenced]
        for t in tables.values():
            t.anchor = _anchor(t)
    finally:
        reader.close()
    constraints = Constraints(engine, tables, deps, frozen)
    # a table referenced by a natural key (a date, a code) holds facts about that key's value
    # that correct queries rely on (a date's fiscal year, a currency's name): never moved. An
    # undeclared text inclusion into a table other tables reference by a number (a surrogate
    # key) is a shared vocabulary, not a key (TPC-DS: `store(s_store_name) -> item(i_product_name)`
    # froze every item, so no variant held an item at a moved price, class or colour)
    surrogate = {d.parent for d in deps if d.child != d.parent and d.origin != "total"
                 and all(family(tables[d.parent].columns.get(c, ""), engine) == "number" for c in d.parent_columns)}
    natural = {d.parent for d in deps
               if any(family(tables[d.parent].columns.get(c, ""), engine) == "temporal"
                      or family(tables[d.parent].columns.get(c, ""), engine) == "text"
                      and (d.origin == "declared" or d.parent not in surrogate) for c in d.parent_columns)}
    for t in tables.values():
        if t.name in natural:
            t.free = []
            continue
        fixed = t.key_columns | constraints.dependency_columns(t.name)
        t.free = [c for c in t.columns if c not in fixed and not is_frozen(t.name, c, frozen)]
    return constraints


def _observe_inclusions(reader: _Reader, tables: dict[str, TableConstraints],
                        stats: dict[str, dict[str, tuple[int, int, Any, Any]]],
                        declared: list[Dependency],
                        joined: Collection[tuple[str, str, str, str]] = ()) -> list[Dependency]:
    engine = reader.engine
    known = {(d.child, d.child_columns, d.parent, d.parent_columns) for d in declared}
    parents: list[tuple[str, str]] = []  # (table, column) of every single-column key
    for t in tables.values():
        keys = [k[0] for k in [t.primary_key, *t.unique_keys] if len(k) == 1] + t.observed_unique
        parents += [(t.name, c) for c in dict.fromkeys(keys) if stats[t.name][c][0] > 0]
    key_names = frozenset([c.lower() for _, c in parents] + [_singular(t) for t in tables])
    found: list[Dependency] = []
    for child in tables.values():
        checks: list[tuple[str, str, str]] = []
        for ccol, (nonnull, distinct, lo, hi) in stats[child.name].items():
            cfam = family(child.columns[ccol], engine)
            if nonnull == 0 or cfam in ("bool", "other"):
                continue
            for ptable, pcol in parents:
                if (ptable, pcol) == (child.name, ccol) or (child.name, (ccol,), ptable, (pcol,)) in known:
                    continue
                pfam = family(tables[ptable].columns[pcol], engine)
                pstats = stats[ptable][pcol]
                if not (_compatible(cfam, pfam) and distinct <= pstats[1] and _within((lo, hi), pstats[2:])):
                    continue
                if (_integers(pstats) or (_dates(pstats) and not _calendar(pstats)) or tables[ptable].rows == 1) and \
                        not related_names(child.name, ccol, ptable, pcol, key_names) and \
                        (child.name, ccol, ptable, pcol) not in joined:
                    # small integers lie in most id ranges, month starts in most date keys, a column of one value in
                    # every table of one row (TPC-DS's lone store and call centre at SF 0.01); a gold's join says more
                    continue
                checks.append((ccol, ptable, pcol))
        if not checks:
            continue
        for (ccol, ptable, pcol), ok in zip(checks, reader.included(child.name, checks)):
            if ok:
                found.append(Dependency(child.name, (ccol,), ptable, (pcol,), "observed"))
    # total participation: every parent value is used by the child (reverse inclusion)
    reverse: dict[str, list[Dependency]] = {}
    for dep in declared + found:
        if len(dep.child_columns) == 1 and dep.child != dep.parent:
            reverse.setdefault(dep.parent, []).append(dep)
    for parent, deps in reverse.items():  # one scan of each parent table
        checks = [(d.parent_columns[0], d.child, d.child_columns[0]) for d in deps]
        for dep, ok in zip(deps, reader.included(parent, checks)):
            if ok:
                found.append(Dependency(dep.parent, dep.parent_columns, dep.child, dep.child_columns, "total"))
    return list(dict.fromkeys(found))
