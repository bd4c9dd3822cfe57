"""Properties of the comparison contract, with hypothesis.

The light ones go through the whole Grader (parse, sandbox, stored gold, comparison) on
generated rows written as explicit ``VALUES``; the heavier ones drive the Comparator
directly with Arrow tables. Each property stays around a second or two."""
from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from grader_tests.helpers import describe
from pytest_sqleval.core.api import Grader
from pytest_sqleval.core.grading.compare import Comparator, CompareSpec

PROPS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

# -- through the Grader ------------------------------------------------------------------------
Row = tuple[int | None, str | None, float | None]

rows_strategy = st.lists(
    st.tuples(st.one_of(st.none(), st.integers(-5, 5)),
              st.one_of(st.none(), st.sampled_from(["", "a", "b", "O'Neil", "1"])),
              st.one_of(st.none(), st.sampled_from([0.0, -0.5, 1.25, 3.0, 1e6]))),
    min_size=1, max_size=10)


def _lit(v: object) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, str):
        return "'" + v.replace("'", "''") + "'"
    return repr(v)


def values_sql(rows: list[Row]) -> str:
    """Rows as a query; types are fixed once in the projection (cheap to parse, unlike a CAST per cell)."""
    body = ", ".join(f"({_lit(a)}, {_lit(b)}, {_lit(c)})" for a, b, c in rows)
    return f"SELECT a::BIGINT, b::VARCHAR, c::DOUBLE FROM (VALUES {body}) t(a, b, c)"


@pytest.fixture(scope="module")
def values_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A table ``t`` holding fixed rows; the generated rows arrive as VALUES."""
    path = tmp_path_factory.mktemp("props") / "props.duckdb"
    con = duckdb.connect(str(path))
    try:
        con.execute("CREATE TABLE t (a BIGINT, b VARCHAR, c DOUBLE)")
        con.execute("INSERT INTO t VALUES (1, 'x', 0.5), (1, 'x', 0.5), (2, NULL, NULL), (NULL, '', 0.0)")
    finally:
        con.close()
    return path


@pytest.fixture(scope="module")
def grader(values_db: Path) -> Iterator[Grader]:
    # generated golds may hold NULLs only: informative or not, the comparison's properties hold
    with Grader(values_db, allow_null=True) as g:
        yield g


def test_fixed_table_matches_its_values(grader: Grader) -> None:
    rows: list[Row] = [(1, "x", 0.5), (1, "x", 0.5), (2, None, None), (None, "", 0.0)]
    v = grader.compare(values_sql(list(reversed(rows))), "SELECT a, b, c FROM t")
    assert v.passed, describe(v)


@PROPS
@given(rows=rows_strategy, data=st.data())
def test_row_permutation_invariance_for_unordered_gold(grader: Grader, rows: list[Row], data: st.DataObject) -> None:
    permuted = data.draw(st.permutations(rows))
    v = grader.compare(values_sql(permuted), values_sql(rows))
    assert v.passed, describe(v)


@PROPS
@given(rows=rows_strategy, data=st.data())
def test_one_duplicate_more_or_less_fails(grader: Grader, rows: list[Row], data: st.DataObject) -> None:
    """Add a copy of one row, or drop one copy of a row that occurs twice: never equal."""
    dupes = [i for i, r in enumerate(rows) if rows.count(r) >= 2]
    if dupes and data.draw(st.booleans()):
        i = data.draw(st.sampled_from(dupes))
        changed = rows[:i] + rows[i + 1:]
    else:
        changed = rows + [rows[data.draw(st.integers(0, len(rows) - 1))]]
    v = grader.compare(values_sql(data.draw(st.permutations(changed))), values_sql(rows))
    assert not v.passed and v.failure_kind == "cardinality_mismatch", describe(v)


@PROPS
@given(rows=rows_strategy, data=st.data())
def test_null_for_a_value_fails_through_the_grader(grader: Grader, rows: list[Row], data: st.DataObject) -> None:
    """Replace one non-NULL cell with NULL (or one NULL with a value): never equal."""
    i = data.draw(st.integers(0, len(rows) - 1))
    j = data.draw(st.integers(0, 2))
    row = list(rows[i])
    replacement = {0: 0, 1: "", 2: 0.0}[j] if row[j] is None else None
    row[j] = replacement
    changed = rows[:i] + [tuple(row)] + rows[i + 1:]  # type: ignore[list-item]
    v = grader.compare(values_sql(changed), values_sql(rows))
    assert not v.passed, describe(v)


# -- the Comparator directly -------------------------------------------------------------------
@pytest.fixture(scope="module")
def comparator() -> Iterator[Comparator]:
    cmp = Comparator(threads=1)
    yield cmp
    cmp.con.close()


UNORDERED = CompareSpec()
finite = st.floats(min_value=1e-3, max_value=1e12, allow_nan=False, allow_infinity=False)
signed = st.builds(lambda x, neg: -x if neg else x, finite, st.booleans())


def _table(values: list, type_: pa.DataType, name: str = "x") -> pa.Table:
    return pa.table({name: pa.array(values, type=type_)})


@PROPS
@given(xs=st.lists(signed, min_size=1, max_size=20), data=st.data())
def test_relative_perturbation_below_1e6_passes(comparator: Comparator, xs: list[float], data: st.DataObject) -> None:
    rel = data.draw(st.floats(min_value=-9e-7, max_value=9e-7))
    assume(rel != 0.0)
    perturbed = [x * (1 + rel) for x in xs]
    res = comparator.compare(_table(xs, pa.float64()), _table(perturbed, pa.float64(), "y"), UNORDERED)
    assert res.match, (rel, res.reason)


@PROPS
@given(xs=st.lists(signed, min_size=1, max_size=20), data=st.data())
def test_relative_perturbation_above_1e5_fails(comparator: Comparator, xs: list[float], data: st.DataObject) -> None:
    i = data.draw(st.integers(0, len(xs) - 1))
    rel = data.draw(st.floats(min_value=1e-5, max_value=0.1)) * data.draw(st.sampled_from([-1, 1]))
    perturbed = list(xs)
    perturbed[i] = xs[i] * (1 + rel)
    # another row could absorb the perturbed value when two inputs are that close: rule it out
    assume(all(not math.isclose(perturbed[i], x, rel_tol=2e-6) for x in xs))
    res = comparator.compare(_table(xs, pa.float64()), _table(perturbed, pa.float64()), UNORDERED)
    assert not res.match, (rel, res.reason)


@PROPS
@given(delta=st.floats(min_value=-9e-10, max_value=9e-10), bigger=st.floats(min_value=1.5e-9, max_value=1e-3),
       neg=st.booleans())
def test_absolute_tolerance_near_zero(comparator: Comparator, delta: float, bigger: float, neg: bool) -> None:
    gold = _table([0.0, 0.0], pa.float64())
    assert comparator.compare(gold, _table([delta, 0.0], pa.float64()), UNORDERED).match
    assert not comparator.compare(gold, _table([-bigger if neg else bigger, 0.0], pa.float64()), UNORDERED).match


cell = st.one_of(st.integers(-3, 3), st.none())


@PROPS
@given(xs=st.lists(cell, min_size=1, max_size=15), data=st.data(),
       value=st.sampled_from([0, 1, -1]), as_type=st.sampled_from([pa.int64(), pa.float64(), pa.decimal128(10, 2)]))
def test_null_equals_null_and_nothing_else(comparator: Comparator, xs: list, data: st.DataObject,
                                           value: int, as_type: pa.DataType) -> None:
    gold = _table(xs, pa.int64())
    # the same cells, NULLs included, in another order and another numeric type: equal
    perm = data.draw(st.permutations(xs))
    same = _table([None if v is None else (float(v) if pa.types.is_floating(as_type) else v) for v in perm], as_type)
    assert comparator.compare(gold, same, UNORDERED).match
    # one NULL turned into a value, or one value turned into NULL: not equal
    i = data.draw(st.integers(0, len(xs) - 1))
    changed = list(xs)
    changed[i] = value if xs[i] is None else None
    pred = _table([None if v is None else (float(v) if pa.types.is_floating(as_type) else v) for v in changed], as_type)
    assert not comparator.compare(gold, pred, UNORDERED).match


@PROPS
@given(words=st.lists(st.one_of(st.none(), st.sampled_from(["", "a", "NULL", " "])), min_size=1, max_size=10),
       data=st.data())
def test_null_is_not_empty_string(comparator: Comparator, words: list, data: st.DataObject) -> None:
    i = data.draw(st.integers(0, len(words) - 1))
    changed = list(words)
    changed[i] = "" if words[i] is None else None
    assert not comparator.compare(_table(words, pa.string()), _table(changed, pa.string()), UNORDERED).match


@PROPS
@given(keys=st.lists(st.integers(0, 3), min_size=2, max_size=20), data=st.data())
def test_ordered_rows_compare_as_bags_within_tie_groups(comparator: Comparator, keys: list[int],
                                                         data: st.DataObject) -> None:
    """Gold sorted on column 0; a prediction that shuffles rows inside each group of equal
    keys passes, one that swaps two rows of different keys fails as order_only."""
    keys = sorted(keys)
    payload = list(range(len(keys)))
    spec = CompareSpec(ordered=True, sort_keys=[0])
    gold = pa.table({"k": keys, "v": payload})
    groups: dict[int, list[int]] = {}
    for k, v in zip(keys, payload):
        groups.setdefault(k, []).append(v)
    shuffled = [v for k in sorted(groups) for v in data.draw(st.permutations(groups[k]))]
    assert comparator.compare(gold, pa.table({"k": keys, "v": shuffled}), spec).match
    distinct = sorted(groups)
    assume(len(distinct) >= 2)
    a, b = data.draw(st.sampled_from([(x, y) for x in range(len(keys)) for y in range(len(keys))
                                      if keys[x] != keys[y]]))
    swapped_k, swapped_v = list(keys), list(payload)
    swapped_k[a], swapped_k[b] = swapped_k[b], swapped_k[a]
    swapped_v[a], swapped_v[b] = swapped_v[b], swapped_v[a]
    res = comparator.compare(gold, pa.table({"k": swapped_k, "v": swapped_v}), spec)
    assert not res.match and res.reason == "order_only", res.reason


@PROPS
@given(xs=st.lists(st.integers(-10**6, 10**6), min_size=1, max_size=20))
def test_numbers_compare_numerically_across_types(comparator: Comparator, xs: list[int]) -> None:
    gold = _table(xs, pa.int64())
    for pred in (_table([float(x) for x in xs], pa.float64()), _table(xs, pa.decimal128(12, 2)),
                 _table(xs, pa.int32())):
        assert comparator.compare(gold, pred, UNORDERED).match
    assert not comparator.compare(gold, _table([str(x) for x in xs], pa.string()), UNORDERED).match
