"""Database variants (``pytest_sqleval.core.variants``): the constraints observed on the pinned
database and the variants built from it, on DuckDB and SQLite. Every variant must keep
every declared and observed constraint, or a correct query fails on it."""
from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any, Callable

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from pytest_sqleval.core.engines import open_sandbox
from pytest_sqleval.core.engines.base import Limits
from pytest_sqleval.core.errors import UsageError
from pytest_sqleval.core.variants.build import MANIFEST_NAME, Variant, build_variants
from pytest_sqleval.core.variants.constraints import Constraints, observe_constraints, qualified, quote
from tests.rows import scalar

# customers.id PK, customers.email declared UNIQUE, orders.customer_id a declared FK;
# orders.ref unique but undeclared, payments.order_id an undeclared reference to orders.id,
# payments.payment_no unique but undeclared; events has duplicate rows (no key at all).
SCHEMA = """
CREATE TABLE customers (id INTEGER PRIMARY KEY, email VARCHAR NOT NULL UNIQUE, name VARCHAR, region VARCHAR,
                        signup DATE);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers (id), ref VARCHAR,
                     amount DECIMAL(10, 2), note VARCHAR, shipped DATE, delivered DATE);
CREATE TABLE payments (payment_no INTEGER, order_id INTEGER, amount DOUBLE, method VARCHAR);
CREATE TABLE events (kind VARCHAR, value INTEGER);
CREATE VIEW order_totals AS SELECT customer_id, sum(amount) AS total FROM orders GROUP BY customer_id;
"""


def rows() -> dict[str, list[tuple]]:
    import datetime as dt
    day = dt.date(2024, 1, 1)
    customers = [(i, f"c{i}@x.org", f"customer {i}", ["north", "south", "east"][i % 3],
                  day + dt.timedelta(days=i)) for i in range(1, 41)]
    orders = [(i, 1 + (i * 7) % 40, f"R-{i:04d}", (i * 37) % 500 + 0.25, None if i % 4 else f"note {i % 5}",
               day + dt.timedelta(days=i % 50), day + dt.timedelta(days=i % 50 + 1 + i % 6)) for i in range(1, 121)]
    payments = [(1000 + i, 1 + (i * 11) % 120, float(i % 90) + 0.5, None if i % 9 == 0 else ["card", "cash"][i % 2])
                for i in range(1, 101)]
    events = [(["click", "view"][i % 2], i % 5) for i in range(60)]
    return {"customers": customers, "orders": orders, "payments": payments, "events": events}


def make_duckdb(path: Path) -> Path:
    con = duckdb.connect(str(path))
    for stmt in duckdb.extract_statements(SCHEMA):
        con.execute(stmt)
    for table, data in rows().items():
        con.executemany(f"INSERT INTO {table} VALUES ({', '.join('?' * len(data[0]))})", data)
    con.execute("CHECKPOINT")
    con.close()
    return path


def make_sqlite(path: Path) -> Path:
    con = sqlite3.connect(str(path))
    con.executescript(SCHEMA.replace("VARCHAR", "TEXT").replace("DOUBLE", "REAL"))
    for table, data in rows().items():
        con.executemany(f"INSERT INTO {table} VALUES ({', '.join('?' * len(data[0]))})",
                        [tuple(str(v) if hasattr(v, "isoformat") else v for v in r) for r in data])
    con.commit()
    con.close()
    return path


MAKERS: dict[str, tuple[str, Callable[[Path], Path]]] = {"duckdb": ("shop.duckdb", make_duckdb),
                                                         "sqlite": ("shop.sqlite", make_sqlite)}


@pytest.fixture(scope="module", params=sorted(MAKERS))
def pinned(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    name, make = MAKERS[request.param]
    return make(tmp_path_factory.mktemp(request.param) / name)


@pytest.fixture(scope="module")
def built(pinned: Path, tmp_path_factory: pytest.TempPathFactory) -> list[Variant]:
    return build_variants(pinned, tmp_path_factory.mktemp("variants"), count=6, seed=7)


def tname(pinned: Path, table: str) -> str:
    return f"main.{table}" if pinned.suffix == ".duckdb" else table


def connect(path: Path) -> Any:
    if path.suffix == ".duckdb":
        return duckdb.connect(str(path), read_only=True)
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True)


def violations(path: Path, c: Constraints) -> list[str]:
    """Every constraint of ``c`` that the database at ``path`` breaks, checked with plain SQL."""
    out: list[str] = []
    con = connect(path)
    try:
        for t in c.tables.values():
            rel = qualified(t.name, c.engine)
            keys = [k for k in [t.primary_key, *t.unique_keys] if k] + [(col,) for col in t.observed_unique]
            for key in keys:
                cols = ", ".join(quote(col) for col in key)
                dup = scalar(con, f"SELECT count(*) FROM (SELECT {cols} FROM {rel} GROUP BY {cols} "
                                  "HAVING count(*) > 1) d")
                if dup:
                    out.append(f"{t.name}({cols}): {dup} duplicated keys")
            for col in set(t.not_null_declared) | set(t.not_null_observed) | set(t.observed_unique):
                if scalar(con, f"SELECT count(*) FROM {rel} WHERE {quote(col)} IS NULL"):
                    out.append(f"{t.name}.{col}: NULL")
        for dep in c.dependencies:
            nonnull = " AND ".join(f"c.{quote(col)} IS NOT NULL" for col in dep.child_columns)
            match = " AND ".join(f"p.{quote(pc)} = c.{quote(cc)}" for cc, pc in zip(dep.child_columns,
                                                                                    dep.parent_columns))
            dangling = scalar(con, f"SELECT count(*) FROM {qualified(dep.child, c.engine)} c WHERE {nonnull} AND "
                                   f"NOT EXISTS (SELECT 1 FROM {qualified(dep.parent, c.engine)} p WHERE {match})")
            if dangling:
                out.append(f"{dep}: {dangling} dangling rows")
    finally:
        con.close()
    return out


def catalog(path: Path) -> dict:
    box = open_sandbox(path, Limits())
    try:
        return box.catalog()
    finally:
        box.close()


# -- observation ------------------------------------------------------------------------------
def test_observe_finds_declared_and_observed_constraints(pinned: Path) -> None:
    c = observe_constraints(pinned)
    customers, orders, payments, events = (c.tables[tname(pinned, t)] for t in
                                           ("customers", "orders", "payments", "events"))
    assert customers.primary_key == ("id",) and ("email",) in customers.unique_keys
    assert {"id", "email"} <= set(customers.not_null_declared)
    assert "customer_id" in orders.not_null_declared
    deps = {(d.child, d.child_columns, d.parent, d.parent_columns, d.origin) for d in c.dependencies}
    o, cu, p = tname(pinned, "orders"), tname(pinned, "customers"), tname(pinned, "payments")
    assert (o, ("customer_id",), cu, ("id",), "declared") in deps
    assert (p, ("order_id",), o, ("id",), "observed") in deps  # undeclared, observed
    assert (cu, ("id",), o, ("customer_id",), "total") in deps  # every customer has an order
    assert {"ref", "id"} <= set(orders.observed_unique) and "payment_no" in payments.observed_unique
    assert "order_id" in payments.not_null_observed and "method" not in payments.not_null_observed
    assert "note" not in orders.not_null_observed
    assert events.duplicate_rows and not events.has_key
    assert customers.free == ["region"]  # name and signup are distinct on the pinned data: keys
    assert {"note", "shipped", "delivered"} <= set(orders.free)
    assert not {"id", "customer_id", "ref"} & set(orders.free) and "order_id" not in payments.free
    assert observe_constraints(pinned, frozen_columns=["customers.region", "orders.*"]).tables[o].free == []


def test_a_postgres_url_is_refused_with_the_fix(tmp_path: Path) -> None:
    for call in (lambda: observe_constraints("postgresql://u:secret@localhost/db"),
                 lambda: build_variants("postgresql://u:secret@localhost/db", tmp_path, count=2)):
        with pytest.raises(UsageError) as info:
            call()
        message = str(info.value)
        assert "database variants are not supported on this engine (postgres" in message
        assert "Fix:" in message and "secret" not in message


# -- the variants -------------------------------------------------------------------------------
def test_every_variant_keeps_every_declared_and_observed_constraint(pinned: Path, built: list[Variant]) -> None:
    c = observe_constraints(pinned)
    assert [v.kind for v in built] == ["subset", "subset+duplicates", "subset+shuffle"] * 2
    assert len({v.content_hash for v in built}) == len(built)
    pinned_catalog = catalog(pinned)
    for v in built:
        assert v.path.is_file() and v.path.suffix == pinned.suffix
        assert violations(v.path, c) == [], v
        assert catalog(v.path) == pinned_catalog  # tables, views, column types unchanged
        con = connect(v.path)
        try:
            assert scalar(con, "SELECT count(*) FROM order_totals") == scalar(
                con, "SELECT count(DISTINCT customer_id) FROM orders")  # the view still works
            # one permutation for all free columns of a row: delivered stays after shipped
            assert scalar(con, "SELECT count(*) FROM orders WHERE delivered < shipped") == 0
            for table in ("customers", "orders", "payments"):
                assert 0 < scalar(con, f"SELECT count(*) FROM {table}") < len(rows()[table])
        finally:
            con.close()


def test_duplicates_only_where_no_key_and_shuffle_only_free_columns(pinned: Path, built: list[Variant]) -> None:
    events = tname(pinned, "events")
    dup = next(v for v in built if v.kind == "subset+duplicates")
    assert dup.params["duplicated"] == [events]
    shuffled = next(v for v in built if v.kind == "subset+shuffle").params["shuffled"]
    c = observe_constraints(pinned)
    for table, cols in shuffled.items():
        assert set(cols) <= set(c.tables[table].free)
    pinned_pairs = set(connect(pinned).execute("SELECT id, region FROM customers").fetchall())
    moved = False
    for v in built:
        con = connect(v.path)
        pairs = set(con.execute("SELECT id, region FROM customers").fetchall())
        con.close()
        moved |= not pairs <= pinned_pairs
    assert moved, "no shuffle variant moved a free column"


def test_frozen_columns_never_move(pinned: Path, tmp_path: Path) -> None:
    variants = build_variants(pinned, tmp_path, count=3, seed=1, frozen_columns=["customers.region", "orders.*"])
    shuffle = variants[2]
    assert shuffle.kind == "subset+shuffle"
    assert tname(pinned, "orders") not in shuffle.params["shuffled"]
    assert "region" not in shuffle.params["shuffled"].get(tname(pinned, "customers"), [])
    src = connect(pinned)
    want = {t: set(src.execute(f"SELECT * FROM {t}").fetchall()) for t in ("orders",)}
    regions = set(src.execute("SELECT id, region FROM customers").fetchall())
    src.close()
    for v in variants:
        con = connect(v.path)
        assert set(con.execute("SELECT * FROM orders").fetchall()) <= want["orders"]
        assert set(con.execute("SELECT id, region FROM customers").fetchall()) <= regions
        con.close()


def test_same_inputs_give_the_same_variants(pinned: Path, built: list[Variant], tmp_path: Path) -> None:
    again = build_variants(pinned, tmp_path, count=6, seed=7)
    assert [v.content_hash for v in again] == [v.content_hash for v in built]
    assert [v.params for v in again] == [v.params for v in built]
    other = build_variants(pinned, tmp_path, count=2, seed=8)
    assert other[0].content_hash != built[0].content_hash


def test_a_second_call_builds_nothing_and_a_damaged_file_is_rebuilt(pinned: Path, tmp_path: Path) -> None:
    first = build_variants(pinned, tmp_path, count=3, seed=3)
    folder = first[0].path.parent
    assert folder.parent.parent == tmp_path and folder.name == "3" and (folder / MANIFEST_NAME).is_file()
    stamps = {v.path: v.path.stat().st_mtime_ns for v in first}
    assert build_variants(pinned, tmp_path, count=3, seed=3) == first
    assert {v.path: v.path.stat().st_mtime_ns for v in first} == stamps  # nothing rewritten
    damaged = first[1].path
    damaged.write_bytes(damaged.read_bytes()[: 4096] + b"\0garbage" * 64)
    first[2].path.unlink()
    again = build_variants(pinned, tmp_path, count=3, seed=3)
    assert again == first
    assert again[0].path.stat().st_mtime_ns == stamps[first[0].path]
    assert again[1].path.stat().st_mtime_ns != stamps[damaged]
    assert not [p for p in folder.iterdir() if p.name.startswith(".") and p.name != ".lock"]


def test_no_variant_is_larger_than_the_pinned_file(pinned: Path, built: list[Variant]) -> None:
    """A tiny file is its pages (SQLite: one per table and index; DuckDB: 256 KiB blocks), so
    the budget of all variants within twice the pinned file is checked on Vantage below."""
    assert all(v.path.stat().st_size <= pinned.stat().st_size for v in built)


# -- the closure, as a property -----------------------------------------------------------------------
refs = st.lists(st.one_of(st.none(), st.integers(1, 12)), min_size=1, max_size=25)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parents=st.integers(1, 12), children=refs, grandchildren=refs, fraction_seed=st.integers(0, 50))
def test_the_closure_leaves_no_dangling_reference(tmp_path_factory: pytest.TempPathFactory, parents: int,
                                                  children: list[int | None], grandchildren: list[int | None],
                                                  fraction_seed: int) -> None:
    """parent <- child (declared) <- grandchild (observed: undeclared), with NULL references."""
    folder = tmp_path_factory.mktemp("closure")
    db = folder / "chain.sqlite"
    con = sqlite3.connect(str(db))
    con.executescript("CREATE TABLE parent (parent_id INTEGER PRIMARY KEY, label TEXT);"
                      "CREATE TABLE child (child_id INTEGER PRIMARY KEY, "
                      "parent_id INTEGER REFERENCES parent (parent_id));"
                      "CREATE TABLE grandchild (child_id INTEGER, amount REAL);")
    con.executemany("INSERT INTO parent VALUES (?, ?)", [(i, f"p{i}") for i in range(1, parents + 1)])
    kids = [(i + 1, r if r is None or r <= parents else 1 + r % parents) for i, r in enumerate(children)]
    con.executemany("INSERT INTO child VALUES (?, ?)", kids)
    grand = [(r if r is None else 1 + r % len(kids), 1.5 * i) for i, r in enumerate(grandchildren)]
    con.executemany("INSERT INTO grandchild VALUES (?, ?)", grand)
    con.commit()
    con.close()
    c = observe_constraints(db)
    if any(r is not None for r, _ in grand):
        assert any(d.child == "grandchild" and d.parent == "child" for d in c.dependencies)
    for v in build_variants(db, folder / "out", count=3, seed=fraction_seed):
        assert violations(v.path, c) == []


@pytest.mark.parametrize("reference", ["REFERENCES stadium", "REFERENCES stadium (stadium_id)",
                                       "REFERENCES \"Stadium\""])
def test_a_sqlite_reference_without_columns_names_the_parents_key(tmp_path: Path, reference: str) -> None:
    """Spider's schemas write ``REFERENCES stadium`` (the parent's primary key), and the
    referencing table often sorts before its parent: a variant is built, and it keeps the key."""
    db = tmp_path / "concert.sqlite"
    con = sqlite3.connect(str(db))
    con.executescript(f"CREATE TABLE stadium (stadium_id INTEGER PRIMARY KEY, name TEXT);"
                      f"CREATE TABLE concert (concert_id INTEGER PRIMARY KEY, stadium_id INTEGER {reference});")
    con.executemany("INSERT INTO stadium VALUES (?, ?)", [(i, f"s{i}") for i in range(1, 31)])
    con.executemany("INSERT INTO concert VALUES (?, ?)", [(i, 1 + i % 30) for i in range(1, 61)])
    con.commit()
    con.close()
    c = observe_constraints(db)
    assert [(d.child, d.child_columns, d.parent, d.parent_columns) for d in c.dependencies
            if d.origin == "declared"] == [("concert", ("stadium_id",), "stadium", ("stadium_id",))]
    for v in build_variants(db, tmp_path / "out", count=2):
        assert violations(v.path, c) == []


# -- the Vantage warehouse ----------------------------------------------------------------------------
def test_vantage_variants_keep_the_keys(vantage_01: Path, tmp_path: Path) -> None:
    c = observe_constraints(vantage_01)
    assert len(c.tables) == 126 and c.dependencies
    sales = c.tables["sales.customers"]
    assert "customer_id" in sales.observed_unique and "customer_id" not in sales.free
    assert any(d.child == "orders.orders" and d.child_columns == ("customer_id",) and d.parent == "sales.customers"
               for d in c.dependencies)
    variants = build_variants(vantage_01, tmp_path, count=4)
    assert len(variants) == 4
    for v in variants:
        assert violations(v.path, c) == [], v.kind
    assert all(v.path.stat().st_size < os.path.getsize(vantage_01) for v in variants)
    assert all(v.params["emptied_tables"] <= 12 for v in variants)  # no more than a tenth keep no row


def test_the_second_build_process_builds_what_this_one_would(pinned: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Half the variants are built in a second process; which process builds one changes
    nothing in it."""
    import pytest_sqleval.core.variants.build as build
    split = build_variants(pinned, tmp_path / "two", count=4, seed=3)
    monkeypatch.setattr(build, "BUILD_PROCESSES", 1)
    alone = build_variants(pinned, tmp_path / "one", count=4, seed=3)
    assert [(v.kind, v.content_hash) for v in split] == [(v.kind, v.content_hash) for v in alone]


def test_the_variants_of_a_small_sqlite_database_stay_within_twice_its_size(tmp_path: Path) -> None:
    """A table takes at least a page: with SQLite's default 4 KiB pages, each variant of a
    Spider-sized database was as large as the database."""
    db = make_sqlite(tmp_path / "shop.sqlite")
    variants = build_variants(db, tmp_path / "out", count=8)
    assert sum(v.path.stat().st_size for v in variants) <= 2 * db.stat().st_size


def test_witness_rows_leave_no_dead_blocks_in_a_variant(tmp_path: Path) -> None:
    """The boundary, witness and clone rows are written into a variant after its subset:
    updates and inserts that left the old blocks in the file (TPC-H's variants took 2.07x
    the pinned file on disk, over the 2x budget ``_row_budget`` computes from rows). A
    variant is as small as a fresh copy of its content, and all of them stay in budget."""
    from pytest_sqleval.core.variants.boundaries import BoundaryRows
    from pytest_sqleval.core.variants.build import SIZE_BUDGET, VARIANT_BLOCK_SIZE
    from tests.core.variants.test_new_rows import golds, make_shops
    db = tmp_path / "shops.duckdb"
    bound = make_shops(db)
    rows = BoundaryRows(db, list(golds(bound).values()), "duckdb", 0)
    try:
        variants = build_variants(db, tmp_path / "out", count=4, rows=rows)
    finally:
        rows.close()
    assert any("+boundary" in v.kind for v in variants)
    for v in variants:
        fresh = tmp_path / f"fresh-{v.index}.duckdb"
        con = duckdb.connect()
        con.execute(f"ATTACH '{v.path}' AS v (READ_ONLY)")
        con.execute(f"ATTACH '{fresh}' AS f (BLOCK_SIZE {VARIANT_BLOCK_SIZE})")
        con.execute("COPY FROM DATABASE v TO f")
        con.close()
        assert v.path.stat().st_size <= fresh.stat().st_size, (v.kind, v.path.stat().st_size, fresh.stat().st_size)
    assert sum(v.path.stat().st_size for v in variants) <= SIZE_BUDGET * db.stat().st_size


def test_the_growth_looks_at_new_child_rows_only_and_keeps_what_looking_at_all_would(
        pinned: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A dependency's later turns look only at the child rows added since its last turn
    (on Vantage each turn read both keep tables whole, 1114 turns a variant), and the
    growth keeps the rows that looking at every child row at every turn keeps; a target by
    a key is the same row whether or not rows are hashed to pick it."""
    from collections import deque

    import pytest_sqleval.core.variants.build as build
    monkeypatch.setattr(build, "BUILD_PROCESSES", 1)  # the growth counted and replaced in this process
    seen = {"later": 0, "adds": 0}
    engine_builder = build._DuckDBBuilder if pinned.suffix == ".duckdb" else build._SQLiteBuilder
    ask = engine_builder.any_missing_of
    add = engine_builder.add_missing

    def counted_ask(self: Any, deps: list[Any], since: int = 0) -> dict[Any, bool]:
        seen["later"] += since > 0
        return ask(self, deps, since)

    def counted_add(self: Any, dep: Any, since: int = 0) -> int:
        added = add(self, dep, since)
        seen["adds"] += added > 0
        return added

    monkeypatch.setattr(engine_builder, "any_missing_of", counted_ask)
    monkeypatch.setattr(engine_builder, "add_missing", counted_add)
    grown = build_variants(pinned, tmp_path / "grown", count=3, seed=5)
    assert seen["adds"] > 0 and seen["later"] > 0  # rows were added back, and later turns looked at new rows only

    def every_row_every_turn(self: Any) -> None:
        by_child: dict[str, list[Any]] = {}
        for dep in self.c.dependencies:
            by_child.setdefault(dep.child, []).append(dep)
        pending, queued = deque(self.c.dependencies), set(self.c.dependencies)
        while pending:
            dep = pending.popleft()
            queued.discard(dep)
            if ask(self, [dep])[dep] and add(self, dep):
                for again in by_child.get(dep.parent, []):
                    if again not in queued:
                        pending.append(again)
                        queued.add(again)

    monkeypatch.setattr(build._Builder, "grow", every_row_every_turn)
    monkeypatch.setattr(build, "_holds_key", lambda table, columns: False)  # every target row picked by its hash
    reference = build_variants(pinned, tmp_path / "reference", count=3, seed=5)
    assert [(v.kind, v.content_hash) for v in grown] == [(v.kind, v.content_hash) for v in reference]
