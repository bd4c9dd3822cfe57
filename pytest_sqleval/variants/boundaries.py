"""Boundary variants: rows given the values a suite's gold queries compare against.

A subset of the pinned database can only drop rows, and a shuffle only moves values
that exist already. So a wrong query whose change falls where the data has no values
(``< '1995-01-01'`` written ``<= '1995-01-01'`` with no order on that day; ``IN ('AIR')``
missing a mode no matching row uses) coincides with the gold on every such variant.
Test-suite accuracy (Zhong, Yu & Klein, 2020) meets this by drawing values near the
query's literals. Here: every literal a gold compares a column with (``=``, ``<>``,
``<``, ``<=``, ``>``, ``>=``, ``BETWEEN``, ``IN``) gives its value and its neighbours
(an integer ±1, a decimal ± one unit of its last place, a date ± one day), and a seeded
few rows of a copy of a variant take them. Only *free* columns (in no key, no inclusion
dependency, not frozen) change, so every key, reference and NOT NULL still holds; the
new values lie on the column's type, which the cast checks."""
from __future__ import annotations

import datetime as dt
import hashlib
import os
import shutil
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any, Iterable

SHARE_PER_VALUE = 0.01  # of a table's rows given each boundary value (at least MIN_ROWS) ...
MIN_ROWS = 2
MAX_SHARE = 0.25  # ... and at most this share of them changed per column


def literal_hints(gold_sqls: Iterable[str], dialect: str, columns: dict[str, set[str]]) -> dict[tuple[str, str], list[str]]:
    """``(table, column) -> literal texts`` for every column-vs-literal comparison in the
    golds. A column is found by its name among ``columns`` (table -> its column names):
    a qualified name whose table is known goes to that table, else to every table with a
    column of that name (a wider hint only adds boundary rows)."""
    from sqlglot import exp, parse_one
    out: dict[tuple[str, str], list[str]] = {}
    lower = {t.lower(): {c.lower(): c for c in cs} for t, cs in columns.items()}
    originals = {t.lower(): t for t in columns}
    bare = {t.rsplit(".", 1)[-1]: t for t in lower}  # DuckDB tables are "schema.table"

    def add(col: exp.Column, lit: exp.Expression, aliases: dict[str, str]) -> None:
        if not isinstance(lit, exp.Literal):
            lit = lit.find(exp.Literal) if isinstance(lit, exp.Cast) else None
            if lit is None:
                return
        name = col.name.lower()
        table = aliases.get(col.table.lower(), col.table.lower()) if col.table else None
        table = bare.get(table, table) if table else None
        tables = [table] if table in lower else [t for t, cs in lower.items() if name in cs]
        for t in tables:
            if name in lower[t]:
                values = out.setdefault((originals[t], lower[t][name]), [])
                if lit.this not in values:
                    values.append(lit.this)

    for sql in gold_sqls:
        try:
            tree = parse_one(sql, read=dialect)
        except Exception:  # a gold that does not parse gives no hints; the grader reports it
            continue
        aliases = {t.alias_or_name.lower(): ".".join(p for p in (t.db, t.name) if p).lower()
                   for t in tree.find_all(exp.Table)}
        for node in tree.find_all(exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE, exp.Between, exp.In):
            left = node.this
            if not isinstance(left, exp.Column):
                continue
            if isinstance(node, exp.Between):
                rights = [node.args.get("low"), node.args.get("high")]
            elif isinstance(node, exp.In):
                rights = list(node.expressions)
            else:
                rights = [node.expression]
            for right in rights:
                if right is not None:
                    add(left, right, aliases)
    return out


def neighbours(text: str) -> list[str]:
    """A literal and the values just either side of it, as SQL literal texts."""
    try:
        day = dt.date.fromisoformat(text)
        return [str(day), str(day - dt.timedelta(days=1)), str(day + dt.timedelta(days=1))]
    except ValueError:
        pass
    try:
        value = Decimal(text)
    except InvalidOperation:
        return [text]
    unit = Decimal(1).scaleb(value.as_tuple().exponent) if value.as_tuple().exponent < 0 else Decimal(1)
    return [str(value), str(value - unit), str(value + unit)]


def build_boundary(base: Path, target: Path, engine: str, tables: dict[str, Any], hints: dict[tuple[str, str], list[str]],
                   tag: str) -> dict[str, Any]:
    """Copy ``base`` to ``target`` and give a few rows of each hinted free column the
    hint values and their neighbours. Returns what was changed (the variant's params)."""
    from .constraints import qualified, quote
    shutil.copyfile(base, target)
    changed: dict[str, int] = {}
    con = _connect(target, engine)
    try:
        for (table, column), literals in sorted(hints.items()):
            t = tables.get(table)
            if t is None or column not in t.free:
                continue
            values = [v for lit in literals for v in neighbours(lit)]
            ctype = t.columns[column]
            q_table, q_col = qualified(table, engine), quote(column)
            salt = int(hashlib.sha256(f"{tag}|{table}|{column}".encode()).hexdigest()[:8], 16)
            per_value = max(MIN_ROWS, int(SHARE_PER_VALUE * t.rows))
            per_value = max(1, min(per_value, int(MAX_SHARE * t.rows) // max(1, len(values))))
            rows = [r[0] for r in con.execute(
                f"SELECT rowid FROM {q_table} ORDER BY (rowid * 2654435761 + {salt}) % 4294967291 "
                f"LIMIT {per_value * len(values)}").fetchall()]
            for i, value in enumerate(values):
                ids = rows[i * per_value:(i + 1) * per_value]
                if not ids:
                    break
                cast = f"CAST(? AS {ctype})" if engine == "duckdb" and ctype else "?"
                try:
                    con.execute(f"UPDATE {q_table} SET {q_col} = {cast} WHERE rowid IN ({', '.join(map(str, ids))})",
                                [value])
                except Exception:  # a value the column's type refuses: that boundary is skipped
                    continue
                changed[f"{table}.{column}"] = changed.get(f"{table}.{column}", 0) + len(ids)
        if engine == "duckdb":
            con.execute("CHECKPOINT")
        else:
            con.commit()
    finally:
        con.close()
    for leftover in (Path(str(target) + ".wal"),):
        leftover.unlink(missing_ok=True)
    return {"boundary_rows": changed, "tag": tag, "base": base.name}


def column_names(database: Path) -> dict[str, set[str]]:
    """Table -> column names (``schema.table`` on DuckDB), read from the catalog: cheap."""
    from .constraints import engine_of, quote
    engine = engine_of(database)
    con = _connect(database, engine, read_only=True)
    try:
        if engine == "duckdb":
            rows = con.execute("SELECT schema_name || '.' || table_name, column_name FROM duckdb_columns() "
                               "WHERE NOT internal AND database_name = current_database()").fetchall()
        else:
            tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
            rows = [(t, r[1]) for t in tables for r in con.execute(f"PRAGMA table_info({quote(t)})")]
    finally:
        con.close()
    out: dict[str, set[str]] = {}
    for table, column in rows:
        out.setdefault(table, set()).add(column)
    return out


def _connect(database: Path, engine: str, read_only: bool = False) -> Any:
    """A connection with the engine's own driver (variants are built outside the sandboxes)."""
    if engine == "duckdb":
        import duckdb
        return duckdb.connect(str(database), read_only=read_only)
    import sqlite3
    return sqlite3.connect(f"file:{database}?mode=ro", uri=True) if read_only else sqlite3.connect(str(database))


def boundary_variants(database: Path, pool: list[Any], hints: dict[tuple[str, str], list[str]], folder: Path,
                      count: int, seed: int, free_columns: Any) -> list[Any]:
    """``count`` boundary variants, each a copy of one of the pool's variants (in turn)
    with boundary rows in the free columns (``free_columns()``: the tables of
    ``constraints.observe_constraints``, asked only when a variant must be built);
    built once per (pool, hints, seed), then reused from ``folder``."""
    from .build import Variant, content_hash
    from .constraints import engine_of
    if not hints or not pool or count <= 0:
        return []
    engine = engine_of(database)
    digest = hashlib.sha256(repr((sorted(hints.items()), [v.content_hash for v in pool], seed)).encode()).hexdigest()[:16]
    out_dir = Path(folder) / f"boundary-{digest}"
    out_dir.mkdir(parents=True, exist_ok=True)
    variants = []
    tables: dict[str, Any] | None = None
    for k in range(count):
        base = pool[k % len(pool)]
        index = len(pool) + k
        path = out_dir / f"boundary-{k:03d}{base.path.suffix}"
        tag = f"{seed}:boundary:{k}"
        if not path.is_file():
            tmp = out_dir / f".{path.name}.{os.getpid()}.building"
            tables = tables if tables is not None else free_columns()
            try:
                build_boundary(base.path, tmp, engine, tables, hints, tag)
                os.replace(tmp, path)
                path.with_name(path.name + ".content-hash").unlink(missing_ok=True)
            finally:
                tmp.unlink(missing_ok=True)
        sha = path.with_name(path.name + ".content-hash")
        if not sha.is_file():
            sha.write_text(content_hash(path), encoding="utf-8")
        variants.append(Variant(index, f"{base.kind}+boundary", {"base": base.index, "tag": tag}, path,
                                sha.read_text(encoding="utf-8").strip()))
    return variants
