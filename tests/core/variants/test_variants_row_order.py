"""Variants are a function of the pinned database's content, not of its file (issue 31:
deterministic from content, seed and golds). Two files of one content may hold their rows
in other orders (the Vantage warehouse is written by several threads, in another order on
every machine); the builders take "a row" in a file's order (the first row reaching a
gold's output, the first of a tie), and the same suite used to build other variants on
another machine, whose frozen choices then could not be checked against them."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pytest

from pytest_sqleval.core.variants.boundaries import BoundaryRows
from pytest_sqleval.core.variants.build import build_variants, content_hash
from tests.core.variants.test_new_rows import golds, make_shops


def _reordered(pinned: Path, out: Path, order: str) -> None:
    """``pinned``'s content written to ``out`` with every table's rows in ``order`` of their values."""
    con = duckdb.connect(":memory:")
    con.execute(f"ATTACH '{pinned}' AS src (READ_ONLY)")
    con.execute(f"ATTACH '{out}' AS dst")
    con.execute("COPY FROM DATABASE src TO dst (SCHEMA)")
    for (name,) in con.execute("SELECT table_name FROM duckdb_tables() WHERE database_name = 'src' "
                               "ORDER BY table_name IN ('store', 'orders') DESC").fetchall():
        con.execute(f"INSERT INTO dst.{name} SELECT * FROM src.{name} ORDER BY ALL {order}")
    con.close()


def test_two_files_of_one_content_build_the_same_variants(tmp_path: Path) -> None:
    pinned = tmp_path / "shops.duckdb"
    bound = make_shops(pinned)
    hashes = []
    for order in ("ASC", "DESC"):
        copy = tmp_path / f"shops-{order}.duckdb"
        _reordered(pinned, copy, order)
        assert content_hash(copy) == content_hash(pinned)  # one content
        rows = BoundaryRows(copy, list(golds(bound).values()), "duckdb", 0)
        try:
            hashes.append([v.content_hash for v in build_variants(copy, tmp_path / order, count=4, rows=rows)])
        finally:
            rows.close()
    assert hashes[0] == hashes[1]
    assert not list((tmp_path / "ASC").rglob(".canonical-*"))  # the build's copy is gone


def test_the_engines_plans_do_not_decide_what_a_variant_holds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A builder query that keeps its first rows orders them totally: with a filter pushed
    down or not, joins ordered or built otherwise (what another DuckDB release may plan),
    one content builds the same variants. A replacement store cross joined to a reaching
    sale tied on the sale's row id, and ``LIMIT 1`` kept whichever store the plan gave first."""
    from pytest_sqleval.core.variants import build as build_module
    pinned = tmp_path / "shops.duckdb"
    bound = make_shops(pinned)
    monkeypatch.setattr(build_module, "BUILD_PROCESSES", 1)  # every builder connection opened here
    connect = duckdb.connect
    hashes = {}
    for plans in ("", "filter_pushdown", "join_order", "build_side_probe_side"):
        def planned(*args: Any, _plans: str = plans, **kwargs: Any) -> duckdb.DuckDBPyConnection:
            con = connect(*args, **kwargs)
            if _plans:  # beside what the builder turns off itself (filter pushdown on DuckDB 2.0.0)
                off = con.execute("SELECT current_setting('disabled_optimizers')").fetchone()[0]
                con.execute(f"SET disabled_optimizers = '{','.join(filter(None, [off, _plans]))}'")
            return con
        monkeypatch.setattr(duckdb, "connect", planned)
        rows = BoundaryRows(pinned, list(golds(bound).values()), "duckdb", 0)
        try:
            hashes[plans] = [v.content_hash for v in build_variants(pinned, tmp_path / (plans or "default"), count=4,
                                                                    rows=rows)]
        finally:
            rows.close()
    assert {plans: [h[:10] for h in built] for plans, built in hashes.items() if built != hashes[""]} == {}


def test_the_order_variants_are_built_in_changes_nothing_in_them(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The build takes the variants keeping the most rows first, so that its two processes end
    together; the order is free only because no variant depends on those built before it
    (the golds' analysis a build process keeps is the same for each)."""
    from pytest_sqleval.core.variants import build as build_module
    pinned = tmp_path / "shops.duckdb"
    bound = make_shops(pinned)
    monkeypatch.setattr(build_module, "BUILD_PROCESSES", 1)  # one process takes them all, in its order
    claims = build_module._claims
    hashes = {}
    for order, taken in (("largest first", claims),
                         ("reversed", lambda counter, indices: reversed(list(claims(counter, indices))))):
        monkeypatch.setattr(build_module, "_claims", taken)
        rows = BoundaryRows(pinned, list(golds(bound).values()), "duckdb", 0)
        try:
            hashes[order] = [v.content_hash for v in build_variants(pinned, tmp_path / order, count=4, rows=rows)]
        finally:
            rows.close()
    assert hashes["reversed"] == hashes["largest first"]


def test_the_constraints_of_the_pinned_file_are_those_of_its_copy_in_value_order(tmp_path: Path) -> None:
    """A build observes the pinned file while it writes the copy its builders read (every
    table's rows in the order of their values): what it observes must hold for the copy."""
    from pytest_sqleval.core.variants.constraints import observe_constraints
    pinned = tmp_path / "shops.duckdb"
    make_shops(pinned)
    copy = tmp_path / "shops-desc.duckdb"
    _reordered(pinned, copy, "DESC")
    assert observe_constraints(copy).to_dict() == observe_constraints(pinned).to_dict()
