"""The comparison's paths agree with the contract's definition, on random small results.

The oracle below is the contract written as plainly as possible: Python values, and
"equal within tolerance" as the existence of a perfect matching of rows within tolerance
(tried exhaustively). The Comparator is run three ways on the same tables: as it runs
on small results (sorting on values), with the machinery of large results forced on
(hash grouping, tolerance cells), and with a hash that collides everywhere (so every
grouping must be repaired by the value-by-value check). All three must give the
oracle's verdict, reason and per-column evidence: results this small always get the
exact matching, so no heuristic is involved.
"""
from __future__ import annotations

import datetime as dt
import decimal
import itertools
import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_sqleval.core.grading import compare as C
from pytest_sqleval.core.grading.compare import Comparator, CompareSpec, kind_of

PROPS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
SPEC = CompareSpec()


# -- the oracle --------------------------------------------------------------------------------
def _canon(v: Any, number: bool) -> Any:
    if v is None or not number:
        return v
    return float(v)


def _same(x: Any, y: Any) -> bool:
    if x is None or y is None:
        return x is None and y is None
    if isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y):
        return True
    return x == y


def _close(x: Any, y: Any, number: bool, spec: CompareSpec) -> bool:
    if _same(x, y):
        return True
    if not number or x is None or y is None or not (math.isfinite(x) and math.isfinite(y)):
        return False
    return abs(x - y) <= max(spec.float_abs_tol, spec.float_rel_tol * max(abs(x), abs(y)))


def _matching(a: list[tuple], b: list[tuple], ok: Any) -> bool:
    if len(a) != len(b):
        return False
    return any(all(ok(x, y) for x, y in zip(a, perm)) for perm in itertools.permutations(b))


def oracle(gold: pa.Table, pred: pa.Table, spec: CompareSpec) -> dict[str, Any]:
    gk = [kind_of(f.type) for f in gold.schema]
    pk = [kind_of(f.type) for f in pred.schema]
    if len(gk) != len(pk):
        return {"match": False, "reason": "arity_mismatch"}
    if not all(C._compatible(a, b) for a, b in zip(gk, pk)):
        return {"match": False, "reason": "type_mismatch"}
    number = ["float" in (a, b) for a, b in zip(gk, pk)]  # inexact: within tolerance; exact numbers by ==, exactly
    rows = [[tuple(_canon(v, number[i]) for i, v in enumerate(r)) for r in zip(*(c.to_pylist() for c in t.columns))]
            for t in (gold, pred)]
    g, p = rows

    def same_row(x: tuple, y: tuple) -> bool:
        return all(_same(u, v) for u, v in zip(x, y))

    def close_row(x: tuple, y: tuple) -> bool:
        return all(_close(u, v, n, spec) for u, v, n in zip(x, y, number))

    exact = _matching(g, p, same_row)
    tolerant = exact or (any(number) and _matching(g, p, close_row))
    if not tolerant:
        columns = [_matching([(r[i],) for r in g], [(r[i],) for r in p],
                             lambda x, y, n=number[i]: _close(x[0], y[0], n, spec)) for i in range(len(gk))]
        return {"match": False, "reason": "row_count" if len(g) != len(p) else "values", "column_matches": columns}
    if spec.ordered:
        keys = spec.sort_keys if spec.sort_keys is not None else list(range(len(gk)))
        for x, y in zip(g, p):
            if not all(_close(x[k], y[k], number[k], spec) for k in keys):
                return {"match": False, "reason": "order_only"}
        start = 0
        for i in range(1, len(g) + 1):  # tie groups: consecutive gold rows with identical keys
            if i == len(g) or not all(_same(g[i][k], g[i - 1][k]) for k in keys):
                if not _matching(g[start:i], p[start:i], close_row):
                    return {"match": False, "reason": "order_only"}
                start = i
    return {"match": True, "reason": "equal", "within_tolerance": not exact}


# -- random results ----------------------------------------------------------------------------
FLOATS = [0.0, -0.0, 1.0, 1.5, 3.0, -2.5, 0.1, 1e-300, 5e-324, 1e300, math.inf, -math.inf, math.nan, None]
KINDS = {
    "int": (pa.int64(), st.one_of(st.none(), st.integers(-3, 3), st.sampled_from([-2**63, 2**63 - 1]))),
    "float": (pa.float64(), st.one_of(st.sampled_from(FLOATS), st.floats(-1e6, 1e6, allow_nan=False))),
    "str": (pa.string(), st.one_of(st.none(), st.sampled_from(["", "a", "b", "NULL", "é"]))),
    "date": (pa.date32(), st.one_of(st.none(), st.sampled_from([dt.date(2020, 1, 1), dt.date(1999, 12, 31)]))),
    "ts": (pa.timestamp("us"), st.one_of(st.none(), st.sampled_from([dt.datetime(2020, 1, 1), dt.datetime(2020, 1, 1, 0, 0, 1)]))),
    "bool": (pa.bool_(), st.one_of(st.none(), st.booleans())),
    "dec": (pa.decimal128(38, 2), st.one_of(st.none(), st.sampled_from(  # exact: one cent apart never equal
        [decimal.Decimal(x) for x in ("0", "1.50", "-2.25", "1999000.00", "1999000.01", "1998999.99",
                                      "90071992547409.93", "90071992547409.92")]))),
}
# how a predicted column may be typed differently from the gold's, by gold kind
RETYPE = {
    "int": [pa.float64(), pa.int32(), pa.decimal128(20, 0), pa.string()],
    "float": [pa.float32(), pa.string()],
    "date": [pa.timestamp("us")],
    "str": [pa.int64()],
    "dec": [pa.decimal128(20, 4), pa.decimal256(40, 2), pa.float64(), pa.int64()],
}


@st.composite
def tables(draw: st.DrawFn, kinds_from: tuple[str, ...] = tuple(KINDS)) -> tuple[pa.Table, pa.Table, CompareSpec]:
    kinds = draw(st.lists(st.sampled_from(sorted(kinds_from)), min_size=1, max_size=3))
    n = draw(st.integers(0, 6))
    cols = [draw(st.lists(KINDS[k][1], min_size=n, max_size=n)) for k in kinds]
    rows = list(zip(*cols)) if cols else []
    pred = list(rows)
    for _ in range(draw(st.integers(0, 3))):  # edits: shuffle, noise, drop/duplicate, change a value
        edit = draw(st.sampled_from(["shuffle", "noise", "big_noise", "drop", "dup", "change", "null"]))
        if edit == "shuffle":
            pred = draw(st.permutations(pred))
        elif pred and edit in ("noise", "big_noise"):
            i = draw(st.integers(0, len(pred) - 1))
            rel = draw(st.floats(-9e-7, 9e-7) if edit == "noise" else st.floats(1e-6, 1e-5))
            pred[i] = tuple(v * (1 + rel) if isinstance(v, float) else v for v in pred[i])
        elif pred and edit == "drop":
            pred.pop(draw(st.integers(0, len(pred) - 1)))
        elif pred and edit == "dup":
            pred.append(pred[draw(st.integers(0, len(pred) - 1))])
        elif pred and edit in ("change", "null"):
            i, j = draw(st.integers(0, len(pred) - 1)), draw(st.integers(0, len(kinds) - 1))
            row = list(pred[i])
            row[j] = None if edit == "null" else draw(KINDS[kinds[j]][1])
            pred[i] = tuple(row)
    gold_t = pa.table({f"g{j}": pa.array([r[j] for r in rows], KINDS[k][0]) for j, k in enumerate(kinds)})
    pred_cols = {}
    for j, k in enumerate(kinds):
        values = [r[j] for r in pred]
        t = KINDS[k][0]
        if k in RETYPE and draw(st.integers(0, 4)) == 0:
            t = draw(st.sampled_from(RETYPE[k]))
            values = [_retyped(v, t) for v in values]
        pred_cols[f"p{j}"] = pa.array(values, t)
    if draw(st.integers(0, 9)) == 0:  # one column too many
        pred_cols["extra"] = pa.array([1] * len(pred), pa.int64())
    if draw(st.booleans()):
        ordered = CompareSpec(ordered=True, sort_keys=draw(st.one_of(st.none(), st.just([0]))))
        gold_t = _sorted(gold_t, ordered.sort_keys)
        return gold_t, pa.table(pred_cols), ordered
    return gold_t, pa.table(pred_cols), SPEC


def _retyped(v: Any, t: pa.DataType) -> Any:
    if v is None:
        return None
    if pa.types.is_string(t):
        return str(v)
    if pa.types.is_floating(t):
        return float(v)
    if pa.types.is_decimal(t):
        return decimal.Decimal(v)
    if pa.types.is_int32(t):
        return max(-2**31, min(2**31 - 1, v))
    if pa.types.is_timestamp(t):
        return dt.datetime(v.year, v.month, v.day) if isinstance(v, dt.date) else v
    if pa.types.is_integer(t):
        return len(v) if isinstance(v, str) else int(v)
    return v


def _sorted(t: pa.Table, keys: list[int] | None) -> pa.Table:
    """The gold in the order an ORDER BY on ``keys`` (all columns by default) gives, NULLs last."""
    names = [t.column_names[k] for k in (keys if keys is not None else range(t.num_columns))]
    return t.sort_by([(nm, "ascending") for nm in names])


# -- the three ways ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def cmp() -> Iterator[Comparator]:
    yield Comparator(threads=1)


def _verdict(cmp: Comparator, gold: pa.Table, pred: pa.Table, spec: CompareSpec) -> dict[str, Any]:
    res = cmp.compare(gold, pred, spec)
    out: dict[str, Any] = {"match": res.match, "reason": res.reason}
    if res.match:
        out["within_tolerance"] = res.within_tolerance
    elif res.reason in ("row_count", "values"):
        out["column_matches"] = res.column_matches
    return out


def _large_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(C, "HASH_ROWS", 0)
    monkeypatch.setattr(C, "CELL_ROWS", 1)


@PROPS
@given(case=tables())
def test_small_path_agrees_with_the_oracle(cmp: Comparator, case: tuple) -> None:
    gold, pred, spec = case
    assert _verdict(cmp, gold, pred, spec) == oracle(gold, pred, spec), (gold.to_pydict(), pred.to_pydict(), spec)


@PROPS
@given(case=tables())
def test_large_path_agrees_with_the_oracle(cmp: Comparator, case: tuple) -> None:
    gold, pred, spec = case
    with pytest.MonkeyPatch.context() as mp:
        _large_paths(mp)
        got = _verdict(cmp, gold, pred, spec)
    assert got == oracle(gold, pred, spec), (gold.to_pydict(), pred.to_pydict(), spec)


@PROPS
@given(case=tables())
def test_hash_collisions_cost_time_not_verdicts(cmp: Comparator, case: tuple) -> None:
    gold, pred, spec = case
    with pytest.MonkeyPatch.context() as mp:
        _large_paths(mp)
        mp.setattr(C._Stack, "hash", lambda self: np.zeros(self.n, np.uint64))  # every row collides
        got = _verdict(cmp, gold, pred, spec)
    assert got == oracle(gold, pred, spec), (gold.to_pydict(), pred.to_pydict(), spec)


def test_cells_pair_noise_across_many_rows(cmp: Comparator) -> None:
    """Large results: float noise is paired through cells, round numbers included, and a
    single value off by more than the tolerance still fails."""
    n = 50_000
    x = np.arange(n) * 0.37
    y = (np.arange(n) % 3) * 1.5  # round numbers: their low bits are zero
    gold = pa.table({"k": np.arange(n) % 5000, "x": x, "y": y})
    noise = 1 + 3e-9 * ((np.arange(n) % 7) - 3) / 3
    perm = np.random.default_rng(0).permutation(n)
    pred = pa.table({"k": (np.arange(n) % 5000)[perm], "x": (x * noise)[perm], "y": (y * noise)[perm]})
    res = cmp.compare(gold, pred, SPEC)
    assert res.match and res.within_tolerance
    off = (x * noise)[perm].copy()
    off[17] += 1
    res = cmp.compare(gold, pa.table({"k": pred["k"], "x": off, "y": pred["y"]}), SPEC)
    assert not res.match and res.reason == "values" and res.column_matches == [True, False, True]
