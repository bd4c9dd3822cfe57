"""The LIMIT growth's work is bounded (issue 31, a cost defect): on TPC-DS-shaped suites most
golds end in ``ORDER BY ... LIMIT 100``, and ``outputs.OutputWriter`` grew each one on every
variant, one unit and one count of the gold at a time, up to 40 counts a gold, undoing what
failed; a TPC-DS first run did not finish. Counted here in questions and copies, not seconds:
a gold already past its LIMIT on the pinned data is not grown at all (LIMIT n - 1 and n + 1
differ there already), a gold no unit can lift costs one count per move and width (its trial
units written at once), and a variant's golds together stop at ``MAX_VARIANT_COUNTS``, the
rest skipped and said in the variant's tally."""
from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from pytest_sqleval.core.variants import clones, outputs
from pytest_sqleval.core.variants.constraints import observe_constraints
from tests.core.variants.test_limit_output_paths import BRANDS, _connect, make_shop
from tests.recorded_calls import record_calls
from tests.rows import scalar

# three Books brands sell on the pinned data: LIMIT 2 already cuts them
PAST = BRANDS.replace("LIMIT 8", "LIMIT 2")
# brands with at least four store sales: a copy moved to an unsold brand makes a group of one
# or two (no output row), a copy of a sale adds to a group that is there (no output row)
HEAVY = ("SELECT i_brand, count(*) AS n FROM store_sales, item WHERE ss_item_sk = i_item_sk "
         "AND i_category = 'Books' GROUP BY i_brand HAVING count(*) >= 4 ORDER BY n DESC, i_brand LIMIT 8")


@pytest.fixture(params=["duckdb", "sqlite"])
def shop(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    path = tmp_path / f"shop.{request.param}"
    make_shop(path)
    return path


@contextmanager
def _writer(pinned: Path, variant: Path, golds: list[str], monkeypatch: pytest.MonkeyPatch
            ) -> Iterator[tuple[Any, Any, list[Any], list[None]]]:
    """A connection to ``variant`` (a changed copy of ``pinned``), a writer on it, the golds'
    growths, and a list with an entry for each fact copy it writes; both closed after."""
    monkeypatch.setattr(outputs, "_PINNED_COUNTS", {}, raising=False)  # raising: main had none
    copies = record_calls(monkeypatch, clones.CloneWriter, "clone")
    dialect = pinned.suffix.lstrip(".")
    c = observe_constraints(pinned, golds=(golds, dialect))
    growths = outputs.output_growths(golds, dialect, dialect, c.tables, c.dependencies)
    con = _connect(variant, read_only=False)
    writer = outputs.OutputWriter(con, dialect, c, pinned, 0)
    try:
        yield con, writer, growths, copies
    finally:
        writer.close()
        con.close()


def _copy(shop: Path, tmp_path: Path) -> Path:
    """A copy of the pinned ``shop`` to make a variant of."""
    variant = tmp_path / f"variant{shop.suffix}"
    shutil.copy(shop, variant)
    return variant

def _count(con: Any, sql: str) -> int:
    return int(scalar(con, f"SELECT count(*) FROM ({sql.rsplit(' ORDER BY ', 1)[0]}) AS g"))


def test_a_gold_past_its_limit_on_the_pinned_data_is_not_grown(shop: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    variant = _copy(shop, tmp_path)
    con = _connect(variant, read_only=False)
    con.execute("DELETE FROM store_sales WHERE ss_item_sk = 3")  # a subset: brand #3 sells no more here
    con.execute("DELETE FROM web_sales WHERE ws_item_sk = 3")
    if shop.suffix == ".sqlite":
        con.commit()
    assert _count(con, PAST) == 2  # the gold's LIMIT 2 here: LIMIT 1 and 3 would differ only if it grew
    con.close()
    with _writer(shop, variant, [PAST], monkeypatch) as (con, writer, growths, copies):
        assert len(growths) == 1
        assert not writer.grow(growths[0])
        assert (len(copies), writer.spent) == (0, 0)  # not one copy, not one run of the gold here
        assert writer.written.tally == {"past_limit_on_pinned": 1}
        assert _count(con, PAST) == 2


def test_a_gold_no_unit_lifts_costs_one_count_per_move_and_width(shop: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    with _writer(shop, _copy(shop, tmp_path), [HEAVY], monkeypatch) as (con, writer, growths, copies):
        before = _count(con, HEAVY)
        assert 0 < before <= 8
        (g,) = growths
        trials = sum(len(leaf.moves) for leaf in g.leaves) * len(outputs.WIDTHS)
        assert not writer.grow(g)
        # the first and last counts, one per trial between (its units written at once); one unit at a
        # time took up to MAX_TRIALS counts per trial
        assert writer.counted <= 2 + trials, writer.counted
        assert len(copies) <= trials * outputs.MAX_TRIALS * max(outputs.WIDTHS)
        assert writer.written.tally["undone"] == 1 and writer.written.tally["counts"] == writer.counted
        assert _count(con, HEAVY) == before  # everything undone


def test_a_variants_golds_stop_at_the_budget_and_say_so(shop: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    golds = [HEAVY.replace(">= 4", f">= {k}") for k in (4, 5, 6, 7)]  # four golds no unit lifts
    with _writer(shop, _copy(shop, tmp_path), golds, monkeypatch) as (con, writer, growths, copies):
        monkeypatch.setattr(outputs, "MAX_VARIANT_COUNTS", 7, raising=False)
        assert len(growths) == 4
        for g in growths:
            assert not writer.grow(g)
        assert writer.spent <= 7
        tally = writer.written.tally
        assert tally["counts"] == writer.spent and tally.get("over_budget", 0) >= 1, tally
        assert sum(tally.get(k, 0) for k in ("grown", "undone", *outputs.SKIP_REASONS)) == 4
