"""The coincidence bench's build helpers (bench/vbench/coincidence.py): a gold subset picks
the golds it names and refuses a name it does not know, the cached mutant lists are the
builder's own, and the in-process screen stops a runaway query by its CPU time."""
from __future__ import annotations

import sys
from pathlib import Path

import duckdb
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from vbench.coincidence import _bounded, _changes, select_golds  # noqa: E402
from vbench.mutate import controls, mutants  # noqa: E402

GOLDS = [{"gid": f"q{i:02d}"} for i in range(1, 8)] + [{"gid": "flights_1-008"}, {"gid": "flights_1-009"}]


def test_gold_subset_by_ids_and_ranges() -> None:
    assert [g["gid"] for g in select_golds(GOLDS, "q02-q04,q07")] == ["q02", "q03", "q04", "q07"]
    assert [g["gid"] for g in select_golds(GOLDS, "flights_1-008-flights_1-009")] == ["flights_1-008", "flights_1-009"]
    assert [g["gid"] for g in select_golds(GOLDS, "flights_1-009")] == ["flights_1-009"]
    assert select_golds(GOLDS, None) == GOLDS
    with pytest.raises(SystemExit, match="q99"):
        select_golds(GOLDS, "q01-q99")


def test_cached_changes_are_the_builders(tmp_path: Path) -> None:
    gold = "SELECT a, count(*) FROM t WHERE b > 3 AND c = 'x' GROUP BY a HAVING count(*) >= 2 ORDER BY a LIMIT 5"
    first = _changes(gold, "duckdb", tmp_path)
    assert list((tmp_path / "changes").iterdir())
    again = _changes(gold, "duckdb", tmp_path)  # read back from the cache
    assert first == again == (mutants(gold, "duckdb"), controls(gold, "duckdb"))


def test_screen_stops_a_runaway_query_by_cpu_time() -> None:
    con = duckdb.connect()
    assert _bounded(con, "SELECT 42") == [(42,)]
    with pytest.raises(duckdb.Error):
        _bounded(con, "SELECT count(*) FROM range(100000000000) a, range(100000) b WHERE a.range * b.range = -1",
                 cpu_s=0.3, wall_s=60)
