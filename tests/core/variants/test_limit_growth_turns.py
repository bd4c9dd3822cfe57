"""A LIMIT gold's growth past its LIMIT does not hang on its place among the suite's golds
(issue 31). Each gold is grown first on every ``OUTPUT_SPREAD``-th variant, its turn, found
by its place in the suite; beside other golds that turn moves to other variants. A gold
whose growth found no path on the variants of its new turn was grown nowhere, and its
LIMIT n - 1 / n + 1 coincided, though graded alone it was caught (TPC-DS: a per-brand,
per-store window-deviation gold beside q01-q30). So a variant grows the golds out of its
turn too, after the ones in turn (``outputs.in_turn``)."""
from __future__ import annotations

import shutil
from pathlib import Path

from pytest_sqleval.core.variants.clones import gold_digest
from pytest_sqleval.core.variants.constraints import observe_constraints
from pytest_sqleval.core.variants.outputs import output_growths, write_outputs
from tests.core.variants.test_limit_output_paths import BRANDS, TICKETS, make_shop
from tests.rows import scalar


def _grown_rows(pinned: Path, variant: Path, golds: list[str], index: int) -> int:
    """BRANDS' rows (its LIMIT off) on a copy of ``pinned`` once variant ``index``'s LIMIT
    growth has run for ``golds``."""
    import duckdb
    shutil.copy(pinned, variant)
    c = observe_constraints(pinned, golds=(golds, "duckdb"))
    grown = write_outputs(variant, "duckdb", c, golds, "duckdb", pinned, index)
    assert any("past its LIMIT 8" in s for s in grown.sentences.get(gold_digest(BRANDS), [])), grown.tally
    con = duckdb.connect(str(variant), read_only=True)
    try:
        return int(scalar(con, f"SELECT count(*) FROM ({BRANDS.rsplit(' ORDER BY ', 1)[0]}) AS g"))
    finally:
        con.close()


def test_a_gold_grown_alone_is_grown_beside_another_gold(tmp_path: Path) -> None:
    """On variant 0 BRANDS alone is in its turn; with TICKETS before it, it is not, and was
    not grown there. Now it is lifted past its LIMIT 8 either way."""
    pinned = tmp_path / "shop.duckdb"
    make_shop(pinned)
    assert _grown_rows(pinned, tmp_path / "alone.duckdb", [BRANDS], 0) > 8
    assert _grown_rows(pinned, tmp_path / "beside.duckdb", [TICKETS, BRANDS], 0) > 8


def test_the_golds_in_turn_are_grown_first(tmp_path: Path) -> None:
    """The turns spend a variant's budget of counts first: a variant grows what its turn
    gave it before, then the other golds, in the suite's order."""
    from pytest_sqleval.core.variants.outputs import in_turn
    pinned = tmp_path / "shop.duckdb"
    make_shop(pinned)
    golds = [TICKETS, BRANDS]
    c = observe_constraints(pinned, golds=(golds, "duckdb"))
    growths = output_growths(golds, "duckdb", "duckdb", c.tables, c.dependencies)
    assert [g.gold for g in in_turn(growths, 0)] == [gold_digest(TICKETS), gold_digest(BRANDS)]
    assert [g.gold for g in in_turn(growths, 1)] == [gold_digest(BRANDS), gold_digest(TICKETS)]
