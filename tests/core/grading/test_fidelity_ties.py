"""Tie-aware top-k: a gold whose ``ORDER BY ... LIMIT k`` cuts through a tie group accepts
any valid top-k (the rows ahead of the group, then the right number of rows of the whole
group, in an order the ORDER BY allows), and nothing else."""
from __future__ import annotations

import sys
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_sqleval.core.api import Grader
from pytest_sqleval.core.errors import GoldError
from pytest_sqleval.core.grading.compare import GID_COLUMN, Comparator, CompareSpec

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from conftest import build_shop  # noqa: E402

PROPS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
CMP = Comparator(threads=1)


@st.composite
def cut_ties(draw: st.DrawFn) -> dict:
    """Rows (key, value, score) sorted on key, a k whose cut lands inside a tie group, the
    gold's k rows as the engine returned them, and what a valid top-k may choose from."""
    keys = draw(st.lists(st.integers(0, 4), min_size=3, max_size=14))
    keys.sort()
    rows = [(key, i, draw(st.sampled_from([0.5, 1.25, None]))) for i, key in enumerate(keys)]
    cuts = [k for k in range(1, len(rows)) if keys[k - 1] == keys[k]]  # row k-1 is tied with row k
    k = draw(st.sampled_from(cuts)) if cuts else None
    from hypothesis import assume
    assume(k is not None)
    assert k is not None  # what assume made sure of
    tie_key = keys[k - 1]
    before = keys.index(tie_key)
    group = [r for r in rows if r[0] == tie_key]
    return {"rows": rows, "k": k, "before": before, "group": group, "order": draw(st.randoms())}


def _table(rows: list[tuple]) -> pa.Table:
    return pa.table({"key": pa.array([r[0] for r in rows], pa.int64()), "value": pa.array([r[1] for r in rows], pa.int64()),
                     "score": pa.array([r[2] for r in rows], pa.float64())})


def _gold(case: dict) -> pa.Table:
    top = _table(case["rows"][:case["k"]])
    return top.append_column(GID_COLUMN, CMP.tie_groups(top, [0]))


def _valid_topk(case: dict) -> list[tuple]:
    """Rows ahead of the group (each earlier tie group shuffled within itself), then any
    k - before rows of the whole group, in any order."""
    rnd, rows, before, k = case["order"], case["rows"], case["before"], case["k"]
    head: list[tuple] = []
    for key in sorted({r[0] for r in rows[:before]}):
        same = [r for r in rows[:before] if r[0] == key]
        rnd.shuffle(same)
        head += same
    return head + rnd.sample(case["group"], k - before)


def _grade(case: dict, pred: list[tuple]) -> bool:
    spec = CompareSpec(ordered=True, sort_keys=[0])
    return CMP.compare_topk(_gold(case), _table(case["group"]), case["before"], _table(pred), spec).match


@PROPS
@given(cut_ties())
def test_any_valid_top_k_passes(case: dict) -> None:
    assert _grade(case, _valid_topk(case))


@PROPS
@given(cut_ties(), st.data())
def test_a_row_from_outside_the_tie_group_fails(case: dict, data: st.DataObject) -> None:
    pred = _valid_topk(case)
    outside = [r for r in case["rows"] if r not in case["group"] and r not in pred]
    from hypothesis import assume
    assume(outside)
    at = data.draw(st.integers(case["before"], case["k"] - 1), label="replaced position")
    pred[at] = data.draw(st.sampled_from(outside), label="row from outside the group")
    assert not _grade(case, pred)


@PROPS
@given(cut_ties())
def test_a_tie_row_ahead_of_an_earlier_group_fails(case: dict) -> None:
    from hypothesis import assume
    assume(case["before"] > 0)
    pred = _valid_topk(case)
    pred.insert(0, pred.pop())  # a row of the cut group first: not an order the ORDER BY allows
    assert not _grade(case, pred)


# -- end to end: the gold is run, its tie group found, the prediction graded -----------------
@pytest.fixture(scope="module")
def grader(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("ties")
    with Grader(build_shop(root / "shop.duckdb"), cache_dir=root / "cache") as g:
        yield g


# customers: ids 2, 6, ..., 38 are 'east' (10 rows), the first region in order
TOP3_EAST = "SELECT id FROM customers ORDER BY region LIMIT 3"
TOP_REGIONS = "SELECT region, count(*) AS n FROM customers GROUP BY region ORDER BY n DESC LIMIT 2"


@pytest.mark.parametrize("gold, pred, status", [
    (TOP3_EAST, "SELECT id FROM customers ORDER BY region, id LIMIT 3", "passed"),
    (TOP3_EAST, "SELECT id FROM customers ORDER BY region, id DESC LIMIT 3", "passed"),
    (TOP3_EAST, "SELECT id FROM customers WHERE id IN (38, 2, 22)", "passed"),
    (TOP3_EAST, "SELECT id FROM customers WHERE id IN (2, 6, 3)", "failed"),  # 3 is 'west'
    (TOP3_EAST, "SELECT id FROM customers ORDER BY region LIMIT 2", "failed"),
    (TOP3_EAST, "SELECT id FROM customers ORDER BY region LIMIT 4", "failed"),
    # the 4 regions have 10 customers each: every row the gold ranks ties, the database cannot tell
    (TOP_REGIONS, "SELECT region, count(*) FROM customers GROUP BY 1 ORDER BY 2 DESC, 1 DESC LIMIT 2", "undecidable"),
    (TOP_REGIONS, "SELECT region, count(*) + 1 FROM customers GROUP BY 1 ORDER BY 2 DESC LIMIT 2", "failed"),
    ("SELECT id, name FROM customers ORDER BY region DESC, id % 2 LIMIT 5",  # 'west' (3, 7, ...), ids all odd
     "SELECT id, name FROM customers WHERE region = 'west' ORDER BY id DESC LIMIT 5", "passed"),
], ids=["first-three", "last-three", "unordered-within-tie", "outside-row", "too-few", "too-many",
        "group-by-count", "wrong-measure", "appended-sort-key"])
def test_limit_through_ties_is_graded_tie_aware(grader: Grader, gold: str, pred: str, status: str) -> None:
    verdict = grader.compare(pred, gold)
    assert verdict.status == status, verdict.explanation
    assert verdict.layers["compare"]["tie_group"]["limit"] in (2, 3, 5)


def test_rows_ahead_of_the_tie_group_must_come_first(grader: Grader) -> None:
    gold = "SELECT id FROM customers WHERE region IN ('east', 'north') ORDER BY region DESC LIMIT 12"
    # 10 'north' rows, then 2 of the 10 'east' rows
    ok = grader.compare("SELECT id FROM customers WHERE region IN ('east', 'north') ORDER BY region DESC, id DESC "
                        "LIMIT 12", gold)
    assert ok.passed and ok.layers["compare"]["tie_group"]["before"] == 10
    swapped = grader.compare("SELECT id FROM (SELECT id, region FROM customers WHERE region IN ('east', 'north') "
                             "ORDER BY region DESC, id LIMIT 12) ORDER BY region, id", gold)
    assert not swapped.passed and swapped.layers["compare"]["reason"] == "order_only"


def test_a_tie_with_an_offset_stays_a_gold_error(grader: Grader) -> None:
    with pytest.raises(GoldError, match="cuts through rows tied.*OFFSET"):
        grader.compare("SELECT 1", "SELECT id FROM customers ORDER BY region LIMIT 3 OFFSET 1")


def test_a_tie_with_columns_in_another_order_under_column_order_any(tmp_path: Path) -> None:
    gold = "SELECT id, region FROM customers ORDER BY region LIMIT 3"
    with Grader(build_shop(tmp_path / "shop.duckdb"), cache_dir=tmp_path / "cache", column_order="any") as g:
        swapped = g.compare("SELECT region, id FROM customers ORDER BY region, id DESC LIMIT 3", gold)
        assert swapped.passed and swapped.layers["compare"]["column_permutation"] == [1, 0]
        assert not g.compare("SELECT region, id FROM customers ORDER BY region DESC LIMIT 3", gold).passed


def test_a_damaged_tie_group_is_computed_again(tmp_path: Path) -> None:
    db, cache = build_shop(tmp_path / "shop.duckdb"), tmp_path / "cache"
    pred = "SELECT id FROM customers ORDER BY region, id DESC LIMIT 3"
    with Grader(db, cache_dir=cache) as g:
        assert g.compare(pred, TOP3_EAST).passed
    (ties,) = (cache / "gold").glob("*.ties.arrow")
    ties.write_bytes(ties.read_bytes()[:-16])
    with Grader(db, cache_dir=cache) as g:
        assert g.compare(pred, TOP3_EAST).passed  # not a verdict against the prediction
        assert g._grader.gold_executions == 1


def test_the_whole_tie_group_is_bounded_by_the_case_limits(tmp_path: Path) -> None:
    """The gold without its LIMIT returns 40 rows; a case limited to 20 keeps the gold error."""
    from pytest_sqleval.core.cases import Limits
    with Grader(build_shop(tmp_path / "shop.duckdb"), cache_dir=tmp_path / "cache", limits=Limits(max_rows=20)) as g:
        with pytest.raises(GoldError, match="without its LIMIT.*did not finish within the case's limits"):
            g.compare("SELECT 1", TOP3_EAST)
        assert g.compare("SELECT id FROM customers ORDER BY region, id LIMIT 3",
                         "SELECT id FROM customers WHERE region IN ('east', 'west') ORDER BY region LIMIT 3").passed

