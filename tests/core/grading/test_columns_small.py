"""Small results under a column policy (``columns = "superset"``, ``condition_cols``) are
matched on a plain-Python path (``compare.small_by_values``) that gives the general path's
verdict (``Comparator.by_values``): on random small results with NULLs, duplicate rows,
floats within tolerance, extra and look-alike columns, renamed and reordered columns,
ordered and not, and ``condition_cols``."""
from __future__ import annotations

import datetime as dt
import json
import math
from dataclasses import replace
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_sqleval.core.cases import ComparePolicy
from pytest_sqleval.core.grading import compare as C
from pytest_sqleval.core.grading.compare import Comparator
from tests.core.grading.test_compare_paths import PROPS

KINDS = {
    "int": (pa.int64(), st.one_of(st.none(), st.integers(-3, 3))),
    "float": (pa.float64(), st.one_of(st.none(), st.sampled_from([0.0, -0.0, 1.0, 1.5, -2.5, 0.1, math.nan]),
                                      st.floats(-1e6, 1e6, allow_nan=False))),
    "str": (pa.string(), st.one_of(st.none(), st.sampled_from(["", "a", "b", "1"]))),
    "date": (pa.date32(), st.one_of(st.none(), st.sampled_from([dt.date(2020, 1, 1), dt.date(1999, 12, 31)]))),
    "bool": (pa.bool_(), st.one_of(st.none(), st.booleans())),
    "dec": (pa.decimal128(10, 2), st.none()),  # a type the small path leaves to the general path
}


@pytest.fixture(scope="module")
def cmp() -> Comparator:
    return Comparator(threads=1)


@st.composite
def cases(draw: st.DrawFn) -> tuple[pa.Table, pa.Table, ComparePolicy]:
    kinds = draw(st.lists(st.sampled_from(sorted(set(KINDS) - {"dec"})), min_size=1, max_size=4))
    n = draw(st.integers(0, 6))
    cols = [draw(st.lists(KINDS[k][1], min_size=n, max_size=n)) for k in kinds]
    rows = list(zip(*cols))
    pred = list(rows)
    for _ in range(draw(st.integers(0, 3))):  # row edits: shuffle, float noise, duplicate, change, NULL
        edit = draw(st.sampled_from(["shuffle", "noise", "big_noise", "dup", "change", "null"]))
        if edit == "shuffle":
            pred = draw(st.permutations(pred))
        elif pred and edit in ("noise", "big_noise"):
            i = draw(st.integers(0, len(pred) - 1))
            rel = draw(st.floats(-9e-7, 9e-7) if edit == "noise" else st.floats(1e-6, 1e-5))
            pred[i] = tuple(v * (1 + rel) if isinstance(v, float) else v for v in pred[i])
        elif pred and edit == "dup":
            j = draw(st.integers(0, len(pred) - 1))
            pred[j] = pred[draw(st.integers(0, len(pred) - 1))]
        elif pred and edit in ("change", "null"):
            i, j = draw(st.integers(0, len(pred) - 1)), draw(st.integers(0, len(kinds) - 1))
            row = list(pred[i])
            row[j] = None if edit == "null" else draw(KINDS[kinds[j]][1])
            pred[i] = tuple(row)
    gold = pa.table({f"g{j}": pa.array([r[j] for r in rows], KINDS[k][0]) for j, k in enumerate(kinds)})
    named = draw(st.booleans())  # the prediction keeps the gold's names, or names of its own
    pcols: list[tuple[str, pa.Array]] = [(f"g{j}" if named else f"p{j}", pa.array([r[j] for r in pred], KINDS[k][0]))
                                         for j, k in enumerate(kinds)]
    for _ in range(draw(st.integers(0, 2))):  # extra columns: a copy (a look-alike), or values of their own
        if pcols and draw(st.booleans()):
            name, col = pcols[draw(st.integers(0, len(pcols) - 1))]
            pcols.append((f"copy_{len(pcols)}", col))
        else:
            k = draw(st.sampled_from(sorted(KINDS)))
            pcols.append((f"x{len(pcols)}", pa.array(draw(st.lists(KINDS[k][1], min_size=len(pred),
                                                                    max_size=len(pred))), KINDS[k][0])))
    if draw(st.integers(0, 5)) == 0 and pcols:  # a gold column dropped
        pcols.pop(draw(st.integers(0, len(pcols) - 1)))
    pcols = draw(st.permutations(pcols))
    predicted = pa.table({name: col for name, col in pcols}) if pcols else pa.table({"z": pa.array([], pa.int64())})
    condition = draw(st.one_of(st.none(), st.lists(st.integers(0, len(kinds) - 1), min_size=1, max_size=len(kinds),
                                                     unique=True)))
    policy = ComparePolicy(order_matters=draw(st.booleans()), columns=draw(st.sampled_from(["superset", "exact"])),
                           condition_cols=tuple(condition) if condition is not None else None)
    if not policy.by_values:
        policy = replace(policy, columns="superset")
    return gold, predicted, policy


def _text(res: C.CompareResult) -> str:
    return json.dumps(res.to_dict(), sort_keys=True, default=str)


def _general(cmp: Comparator, gold: pa.Table, pred: pa.Table, policy: ComparePolicy) -> C.CompareResult:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(C, "small_by_values", lambda *a: None)
        return cmp.compare(gold, pred, policy)


def test_the_small_path_gives_the_general_paths_verdict(cmp: Comparator) -> None:
    decided: list[bool] = []

    @PROPS
    @given(case=cases())
    def agree(case: tuple[pa.Table, pa.Table, ComparePolicy]) -> None:
        gold, pred, policy = case
        fast = C.small_by_values(gold, pred, policy)
        decided.append(fast is not None)
        general = _general(cmp, gold, pred, policy)
        both = cmp.compare(gold, pred, policy)
        where = (gold.to_pydict(), pred.to_pydict(), policy)
        assert (both.match, both.reason) == (general.match, general.reason), where
        if fast is None:
            assert _text(both) == _text(general), where
            return
        assert fast.match and general.match, where
        # the mapping the small path chose holds under the general path, column for column
        wanted = list(policy.condition_cols) if policy.condition_cols is not None else list(range(gold.num_columns))
        mapping: list[Any] = fast.column_mapping or []
        by_position = replace(policy, columns="exact", condition_cols=None)
        assert _general(cmp, gold.select(wanted), pred.select(mapping), by_position).match, where
        if fast.column_mapping == general.column_mapping:  # the same mapping: the same evidence to the last field
            assert _text(fast) == _text(general), where
    agree()
    assert sum(decided) >= 30, "the small path decided too few cases: the general path was compared with itself"


def test_a_five_row_superset_match_is_made_on_the_small_path(cmp: Comparator) -> None:
    gold = pa.table({"id": [1, 2, 3, 3, 5], "x": [0.5, None, 2.0, 2.0, -0.0], "s": ["a", "b", None, None, "é"]})
    pred = pa.table({"extra": [7, 7, 7, 7, 7], "c": [None, "é", "a", None, "b"], "b": [2.0, 0.0, 0.5, 2.0, None],
                     "a": [3, 5, 1, 3, 2]})
    superset = ComparePolicy(order_matters=False, columns="superset")
    fast = C.small_by_values(gold, pred, superset)
    assert fast is not None and fast.match and fast.column_mapping == [3, 2, 1]
    assert _text(fast) == _text(_general(cmp, gold, pred, superset))
    only_s = ComparePolicy(order_matters=False, condition_cols=(2,))
    assert C.small_by_values(gold, pred, only_s).column_mapping == [1]  # type: ignore[union-attr]
    nudged = pred.set_column(2, "b", pa.array([2.0 + 1e-12, 0.0, 0.5, 2.0, None]))
    assert C.small_by_values(gold, nudged, superset) is None  # within tolerance: the general path shows it
    assert cmp.compare(gold, nudged, superset).match
    wrong = pred.set_column(1, "c", pa.array([None, "e", "a", None, "b"]))
    assert C.small_by_values(gold, wrong, superset) is None
    assert not cmp.compare(gold, wrong, superset).match
