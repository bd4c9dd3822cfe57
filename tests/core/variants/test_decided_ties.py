"""A tie a gold's LIMIT cuts on a variant, decided by another witness before the tie writer
runs (a clone witness copies a flight of one of the two busiest airlines), is still broken
the rotation's way: on one variant one airline is the unique top, on the next the other.
Without this, the tie writer found no tie on the variants a clone had reached, and on the
others its rotation (one step per variant index) always landed on the same airline, so a
query naming that airline outright passed on every variant."""
from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from pytest_sqleval.core.variants.constraints import observe_constraints
from pytest_sqleval.core.variants.tiebreak import TieWriter, tie_breaks
from tests.core.variants.test_tie_breaking_variants import MOST, flight_2

TOP = "SELECT T1.uid FROM airlines AS T1 JOIN flights AS T2 ON T2.Airline = T1.uid GROUP BY T1.uid " \
      "ORDER BY count(*) DESC LIMIT 1"


def _top_after(pinned: Path, variant: Path, turn: int, decided_by: int | None) -> int:
    """The busiest airline on a copy of ``pinned`` after the tie writer's turn ``turn``,
    where a witness first gave airline ``decided_by`` one more flight."""
    shutil.copy(pinned, variant)
    c = observe_constraints(pinned, golds=([MOST], "sqlite"))
    (tb,) = tie_breaks([MOST], "sqlite", {t: set(x.columns) for t, x in c.tables.items()},
                       lambda t, col: col in c.tables[t].free)
    con = sqlite3.connect(variant)
    writer = TieWriter(con, "sqlite", c.tables, c.dependencies, lambda sql, params: con.execute(sql, params).fetchall(),
                       lambda table, column, value: True, {})
    before = writer.cut(tb)
    assert before is not None and sorted(before[1]) == [(2,), (3,)]  # Blu and Cal tie with three flights
    if decided_by is not None:  # what a clone witness does: one more flight for one of them
        con.execute("INSERT INTO flights VALUES (?, 99, 'AAA', 'BBB')", (decided_by,))
    writer.break_tie(tb, turn, before)
    (top,) = con.execute(TOP).fetchone()
    (tied,) = con.execute("SELECT count(*) FROM (SELECT Airline FROM flights GROUP BY Airline "
                          "HAVING count(*) = (SELECT max(n) FROM (SELECT count(*) AS n FROM flights GROUP BY Airline)))"
                          ).fetchone()
    con.close()
    assert tied == 1  # the top is unique
    return int(top)


def test_a_tie_decided_by_an_earlier_witness_still_rotates(tmp_path: Path) -> None:
    pinned = flight_2(tmp_path / "flight_3.sqlite", {1: 2, 2: 3, 3: 3, 4: 1})
    undecided = {_top_after(pinned, tmp_path / f"u{turn}.sqlite", turn, None) for turn in (0, 1)}
    assert undecided == {2, 3}  # the rotation alone: each airline on top once
    for clone in (2, 3):  # a witness gave Blu (or Cal) a flight first: the rotation still decides
        assert {_top_after(pinned, tmp_path / f"d{clone}{turn}.sqlite", turn, clone) for turn in (0, 1)} == {2, 3}
