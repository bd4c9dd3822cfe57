"""Two exact numbers compare exactly; only a float side brings the tolerance in.

The contract: numbers compare numerically (1 = 1.0 = 1.00); two exact numbers (integers
of any width, decimals) compare exactly, whatever their types; only where a side is
inexact (a float or double) are they equal within 1e-6 relative or 1e-9 absolute.

An aggregate is where this bites: DuckDB types ``sum()`` over BIGINT as HUGEINT (it
arrives through Arrow as a 128-bit decimal) and PostgreSQL's ``sum(bigint)`` is
``numeric``, so a sum off by one (1999000 vs 1998999, 5e-7 apart) must still fail, as must
2**53 + 1 against 2**53 (one double). Checked three ways: a table of near-misses and
equals over Arrow types, a property over each engine's own types (DuckDB, SQLite,
PostgreSQL: the values go through the engine and its conversion to Arrow), and a suite
run under pytest whose gold is ``SELECT sum(x)``.
"""
from __future__ import annotations

import decimal
import json
import sqlite3
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Callable, Iterator

import duckdb
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_sqleval.core.cases import Limits
from pytest_sqleval.core.engines import open_sandbox
from pytest_sqleval.core.grading.compare import Comparator, CompareSpec, jsonable
from tests.sqleval_helpers import read_results, sqleval_ini  # noqa: F401  (fixture)

SPEC = CompareSpec()
TWO_53 = 2 ** 53
D = Decimal


@pytest.fixture(scope="module")
def cmp() -> Comparator:
    return Comparator(threads=1)


# -- a near-miss table over Arrow types ----------------------------------------------------
def col(values: list[Any], t: pa.DataType) -> pa.Table:
    return pa.table({"v": pa.array(values, t)})


def chunked(values: list[Any], t: pa.DataType, pad: int = 3) -> pa.Table:
    """``values`` as a sliced, two-chunk column (buffer offsets, NULL slots around them)."""
    first = pa.array([D(7)] * pad + values[:1] + [None], t).slice(pad, 1)
    rest = pa.array([None] + values[1:], t).slice(1)
    return pa.table({"v": pa.chunked_array([first, rest], t)})


HUGE = pa.decimal128(38, 0)  # DuckDB's HUGEINT through Arrow
NEAR_MISSES = [  # (id, gold, predicted): exact on both sides, one unit apart
    ("hugeint_sum_off_by_one", col([D(1999000)], HUGE), col([D(1998999)], HUGE)),
    ("hugeint_vs_bigint_off_by_one", col([D(1999000)], HUGE), col([1998999], pa.int64())),
    ("int32_vs_hugeint_off_by_one", col([1999000], pa.int32()), col([D(1999001)], HUGE)),
    ("past_2_53_hugeint", col([D(TWO_53 + 1)], HUGE), col([D(TWO_53)], HUGE)),
    ("past_2_53_bigint_vs_hugeint", col([TWO_53], pa.int64()), col([D(TWO_53 + 1)], HUGE)),
    ("past_2_53_uint64_vs_decimal", col([TWO_53 + 1], pa.uint64()), col([D(TWO_53)], pa.decimal128(20, 0))),
    ("decimal_one_cent", col([D("1999000.00")], pa.decimal128(38, 2)), col([D("1999000.01")], pa.decimal128(38, 2))),
    ("decimal_scales_differ_one_unit", col([D("1999000.5")], pa.decimal128(10, 1)),
     col([D("1999000.51")], pa.decimal128(12, 2))),
    ("integer_vs_decimal_one_cent", col([1999000], pa.int64()), col([D("1999000.01")], pa.decimal128(12, 2))),
    ("decimal32_vs_decimal64", col([D("12345.67")], pa.decimal32(7, 2)), col([D("12345.68")], pa.decimal64(12, 2))),
    ("beyond_int64_hugeint", col([D(10 ** 30)], HUGE), col([D(10 ** 30 + 1)], HUGE)),
    ("beyond_int64_once_scaled", col([D(10 ** 17)], HUGE), col([D("100000000000000000.01")], pa.decimal128(38, 2))),
    ("decimal256_one_unit", col([D(10 ** 50)], pa.decimal256(60, 0)), col([D(10 ** 50 + 1)], pa.decimal256(60, 0))),
    ("uint64_past_int64", col([2 ** 64 - 1], pa.uint64()), col([D(2 ** 64 - 2)], pa.decimal128(20, 0))),
    ("sliced_chunks_with_nulls", chunked([D(1999000), None, D(5)], HUGE), chunked([D(1998999), None, D(5)], HUGE)),
    ("one_row_of_many", col([D(i) for i in range(3000)], HUGE),
     col([D(i) for i in range(2999)] + [D(3000)], HUGE)),
]
EQUALS = [  # (id, gold, predicted): the same exact values, typed differently
    ("hugeint_vs_bigint", col([D(1999000)], HUGE), col([1999000], pa.int64())),
    ("integer_vs_decimal_scale_2", col([1], pa.int32()), col([D("1.00")], pa.decimal128(5, 2))),
    ("decimal_scales_1_vs_3", col([D("1.5"), None], pa.decimal128(5, 1)), col([None, D("1.500")], pa.decimal128(9, 3))),
    ("past_2_53_bigint_vs_hugeint", col([TWO_53 + 1], pa.int64()), col([D(TWO_53 + 1)], HUGE)),
    ("beyond_int64_vs_decimal256", col([D(10 ** 30), D(-3)], HUGE), col([D(-3), D(10 ** 30)], pa.decimal256(50, 2))),
    ("uint64_vs_decimal", col([2 ** 64 - 1], pa.uint64()), col([D(2 ** 64 - 1)], pa.decimal128(20, 0))),
    ("decimal32_vs_int64", col([D("123.00")], pa.decimal32(5, 2)), col([123], pa.int64())),
    ("sliced_chunks_with_nulls", chunked([D(1999000), None, D(5)], HUGE), chunked([D(5), D(1999000), None], HUGE)),
    ("many_rows_reordered", col([D(i) for i in range(3000)], HUGE),
     col([i for i in reversed(range(3000))], pa.int64())),
]
FLOAT_SIDE = [  # (id, gold, predicted, match): a double on one side, so within 1e-6 relative
    ("double_vs_hugeint_within", col([1999000.0], pa.float64()), col([D(1999001)], HUGE), True),
    ("hugeint_vs_double_2_53", col([D(TWO_53 + 1)], HUGE), col([float(TWO_53)], pa.float64()), True),
    ("decimal_vs_double_within", col([D("1999000.01")], pa.decimal128(12, 2)), col([1999000.0], pa.float64()), True),
    ("double_vs_decimal_outside", col([1.0], pa.float64()), col([D("1.01")], pa.decimal128(5, 2)), False),
]


@pytest.mark.parametrize("gold, pred", [c[1:] for c in NEAR_MISSES], ids=[c[0] for c in NEAR_MISSES])
def test_exact_numbers_one_unit_apart_never_match(cmp: Comparator, gold: pa.Table, pred: pa.Table) -> None:
    for g, p in ((gold, pred), (pred, gold)):
        res = cmp.compare(g, p, SPEC)
        assert not res.match and res.reason == "values", res
        assert res.column_matches == [False]
        assert not cmp.compare(g, p, CompareSpec(float_rel_tol=0.5, float_abs_tol=2.0)).match  # no tolerance applies


@pytest.mark.parametrize("gold, pred", [c[1:] for c in EQUALS], ids=[c[0] for c in EQUALS])
def test_equal_exact_numbers_match_whatever_their_types(cmp: Comparator, gold: pa.Table, pred: pa.Table) -> None:
    for g, p in ((gold, pred), (pred, gold)):
        res = cmp.compare(g, p, SPEC)
        assert res.match and not res.within_tolerance, res


@pytest.mark.parametrize("gold, pred, match", [c[1:] for c in FLOAT_SIDE], ids=[c[0] for c in FLOAT_SIDE])
def test_a_float_side_compares_within_tolerance(cmp: Comparator, gold: pa.Table, pred: pa.Table, match: bool) -> None:
    assert cmp.compare(gold, pred, SPEC).match is match
    assert cmp.compare(pred, gold, SPEC).match is match


def test_kinds_say_which_numbers_are_exact(cmp: Comparator) -> None:
    res = cmp.compare(col([1], pa.int64()), col([D(2)], HUGE), SPEC)
    assert (res.gold_kinds, res.pred_kinds) == (["integer"], ["decimal"])
    res = cmp.compare(col([1.0], pa.float64()), col([D(2)], HUGE), SPEC)
    assert (res.gold_kinds, res.pred_kinds) == (["float"], ["decimal"])


def test_a_report_never_shows_two_different_exact_numbers_alike(cmp: Comparator) -> None:
    """A decimal is reported as a double only where the double is the same number."""
    res = cmp.compare(col([D(TWO_53 + 1)], HUGE), col([D(TWO_53)], HUGE), SPEC)
    assert res.missing_rows == [[TWO_53 + 1]] and res.extra_rows == [[float(TWO_53)]]
    assert jsonable(D("1999000.01")) == 1999000.01 and jsonable(D("1.50")) == 1.5
    assert jsonable(D("123456789012345678.01")) == "123456789012345678.01"


# -- the same, through each engine's own types ----------------------------------------------
@dataclass(frozen=True)
class Form:
    """One way an engine returns a number: ``sql(text)`` is a query whose one value is the
    number written ``text``; ``holds(v)`` says whether this form holds ``v`` exactly."""
    name: str
    sql: Callable[[str], str]
    holds: Callable[[Decimal], bool]
    exact: bool = True


EXACT = decimal.Context(prec=100)  # arithmetic on the test's values, never rounded


def _scale(v: Decimal) -> int:
    return max(0, -v.as_tuple().exponent)


def _digits(v: Decimal) -> int:
    return len(v.as_tuple().digits)


def _integral(lo: int, hi: int) -> Callable[[Decimal], bool]:
    return lambda v: _scale(v) == 0 and lo <= v <= hi


def _text(v: Decimal) -> str:
    return format(v, "f")


def _halves(v: str) -> tuple[str, str]:
    """An integer as two near halves, for a sum."""
    n = int(v)
    return str(n // 2), str(n - n // 2)


def _halves_in(lo: int, hi: int) -> Callable[[Decimal], bool]:
    return lambda v: _scale(v) == 0 and all(lo <= int(h) <= hi for h in _halves(_text(v)))


def _decimal(p: int, s: int) -> Callable[[Decimal], bool]:
    return lambda v: _scale(v) <= s and _digits(v) - _scale(v) <= p - s


def _cast(t: str) -> Callable[[str], str]:
    return lambda v: f"SELECT CAST('{v}' AS {t}) AS v"


def _sum_of_halves(t: str) -> Callable[[str], str]:
    def sql(v: str) -> str:
        a, b = _halves(v)
        return f"SELECT sum(x) AS v FROM (SELECT CAST('{a}' AS {t}) AS x UNION ALL SELECT CAST('{b}' AS {t})) h"
    return sql


I32, I64 = (-2 ** 31, 2 ** 31 - 1), (-2 ** 63, 2 ** 63 - 1)
BEYOND_38 = 10 ** 38 - 1
FORMS: dict[str, list[Form]] = {
    "duckdb": [
        Form("INTEGER", _cast("INTEGER"), _integral(*I32)),
        Form("BIGINT", _cast("BIGINT"), _integral(*I64)),
        Form("HUGEINT", _cast("HUGEINT"), _integral(-BEYOND_38, BEYOND_38)),
        Form("sum(BIGINT) -> HUGEINT", _sum_of_halves("BIGINT"), _halves_in(*I64)),
        Form("sum(INTEGER) -> HUGEINT", _sum_of_halves("INTEGER"), _halves_in(*I32)),
        *(Form(f"DECIMAL({p},{s})", _cast(f"DECIMAL({p},{s})"), _decimal(p, s)) for p, s in
          ((4, 0), (9, 2), (18, 0), (18, 3), (18, 6), (38, 0), (38, 2), (38, 10))),
        Form("sum(DECIMAL(18,2)) -> DECIMAL(38,2)",
             lambda v: f"SELECT sum(x) AS v FROM (SELECT CAST('{v}' AS DECIMAL(18,2)) AS x UNION ALL SELECT 0) h",
             _decimal(18, 2)),
        Form("DOUBLE", _cast("DOUBLE"), lambda v: True, exact=False),
    ],
    # SQLite has no exact decimal: a number with a fraction is a REAL (inexact), an
    # integral NUMERIC is an INTEGER
    "sqlite": [
        Form("INTEGER", _cast("INTEGER"), _integral(*I64)),
        Form("sum(INTEGER)", _sum_of_halves("INTEGER"), lambda v: _integral(*I64)(v) and _halves_in(*I64)(v)),
        Form("NUMERIC (integral)", _cast("NUMERIC"), _integral(*I64)),
        Form("REAL", _cast("REAL"), lambda v: True, exact=False),
    ],
    "postgres": [
        Form("integer", _cast("integer"), _integral(*I32)),
        Form("bigint", _cast("bigint"), _integral(*I64)),
        Form("sum(integer) -> bigint", _sum_of_halves("integer"), _halves_in(*I32)),
        Form("sum(bigint) -> numeric", _sum_of_halves("bigint"), _halves_in(*I64)),
        *(Form(f"numeric({p},{s})", _cast(f"numeric({p},{s})"), _decimal(p, s)) for p, s in
          ((4, 0), (9, 2), (18, 3), (38, 2), (60, 4))),
        Form("numeric", _cast("numeric"), lambda v: True),
        Form("sum(numeric(20,4)) -> numeric",
             lambda v: f"SELECT sum(x) AS v FROM (SELECT CAST('{v}' AS numeric(20,4)) AS x UNION ALL SELECT 0) h",
             _decimal(20, 4)),
        Form("double precision", _cast("double precision"), lambda v: True, exact=False),
    ],
}
ENGINES = sorted(FORMS)
AROUND = [0, 1, 999, 1999000, 2 ** 31, 10 ** 9, TWO_53, 10 ** 15, 2 ** 62, 2 ** 63 - 2, 10 ** 18, 10 ** 27, 10 ** 36]


@st.composite
def exact_values(draw: st.DrawFn) -> Decimal:
    """An exact number: an unscaled integer near a type's edge (or small), at scale 0-4."""
    base = draw(st.one_of(st.integers(-10 ** 6, 10 ** 6),
                          st.sampled_from(AROUND).map(lambda b: b + draw(st.integers(-2, 2)))))
    sign = draw(st.sampled_from([1, -1]))
    return Decimal(f"{sign * base}E-{draw(st.integers(0, 4))}")  # exact: no context rounds it


def _value(box: Any, sql: str) -> pa.Table:
    out = box.run(sql)
    assert out.error is None, (sql, out.error)
    return out.table


@pytest.fixture(scope="module")
def boxes(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[dict[str, Any]]:
    """One sandbox per engine, opened lazily (PostgreSQL starts a server)."""
    made: dict[str, Any] = {}

    class Boxes(dict):
        def __missing__(self, engine: str) -> Any:
            root = tmp_path_factory.mktemp(engine)
            if engine == "duckdb":
                duckdb.connect(str(root / "n.duckdb")).close()
                where: Any = root / "n.duckdb"
            elif engine == "sqlite":
                sqlite3.connect(root / "n.sqlite").close()
                where = root / "n.sqlite"
            else:
                where = request.getfixturevalue("pg").create_db("numbers")
            self[engine] = made[engine] = open_sandbox(where, Limits())
            return self[engine]

    yield Boxes()
    for box in made.values():
        box.close()


PROPS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _two_forms(data: st.DataObject, engine: str, *values: Decimal, exact: bool = True) -> list[Form]:
    """A gold form holding ``values[0]`` and a predicted form holding ``values[-1]``."""
    out = []
    for v in (values[0], values[-1]):
        fits = [f for f in FORMS[engine] if f.exact == exact and f.holds(v)]
        if not fits:
            return []
        out.append(data.draw(st.sampled_from(fits), label="form"))
    return out


@pytest.mark.parametrize("engine", ENGINES)
@PROPS
@given(data=st.data())
def test_equal_exact_values_match_whatever_the_type_pair(engine: str, data: st.DataObject, boxes: dict[str, Any],
                                                         cmp: Comparator) -> None:
    v = data.draw(exact_values(), label="value")
    forms = _two_forms(data, engine, v)
    if not forms:
        return
    gold, pred = (_value(boxes[engine], f.sql(_text(v))) for f in forms)
    res = cmp.compare(gold, pred, SPEC)
    assert res.match and not res.within_tolerance, (v, [f.name for f in forms], gold.schema, pred.schema)


@pytest.mark.parametrize("engine", ENGINES)
@PROPS
@given(data=st.data())
def test_exact_values_one_unit_apart_never_match(engine: str, data: st.DataObject, boxes: dict[str, Any],
                                                 cmp: Comparator) -> None:
    v = data.draw(exact_values(), label="value")
    w = EXACT.add(v, Decimal(f"{data.draw(st.sampled_from([1, -1]))}E-{_scale(v)}"))  # one unit at v's scale
    forms = _two_forms(data, engine, v, w)
    if not forms:
        return
    gold, pred = _value(boxes[engine], forms[0].sql(_text(v))), _value(boxes[engine], forms[1].sql(_text(w)))
    assert gold.column(0).to_pylist() == [v] and pred.column(0).to_pylist() == [w]  # each engine held it exactly
    res = cmp.compare(gold, pred, SPEC)
    assert not res.match, (v, w, [f.name for f in forms], gold.schema, pred.schema)


@pytest.mark.parametrize("engine", ENGINES)
@PROPS
@given(data=st.data())
def test_a_double_within_tolerance_matches_an_exact_value(engine: str, data: st.DataObject, boxes: dict[str, Any],
                                                          cmp: Comparator) -> None:
    v = data.draw(exact_values(), label="value")
    exact = [f for f in FORMS[engine] if f.exact and f.holds(v)]
    double = next(f for f in FORMS[engine] if not f.exact)
    gold_form = data.draw(st.sampled_from(exact + [double]), label="gold form")
    rel = data.draw(st.floats(-9e-7, 9e-7), label="relative noise")
    noisy = repr(float(v) * (1 + rel))
    gold, pred = _value(boxes[engine], gold_form.sql(_text(v))), _value(boxes[engine], double.sql(noisy))
    assert cmp.compare(gold, pred, SPEC).match, (v, noisy, gold_form.name)
    far = repr(float(v) * (1 + 1e-5) + (1e-6 if v >= 0 else -1e-6))  # outside both tolerances
    assert not cmp.compare(gold, _value(boxes[engine], double.sql(far)), SPEC).match, (v, far, gold_form.name)


# -- a suite under pytest ---------------------------------------------------------------------
def test_a_sum_off_by_one_fails_under_pytest(pytester: pytest.Pytester) -> None:
    """``SELECT sum(x)`` over BIGINT is a HUGEINT: a prediction one short fails, the same
    sum typed BIGINT or DECIMAL passes."""
    suite = pytester.path / "sums"
    suite.mkdir()
    con = duckdb.connect(str(suite / "ledger.duckdb"))
    con.execute("CREATE TABLE ledger AS SELECT CAST(i AS BIGINT) AS x FROM range(2000) t(i)")  # sum 1999000
    con.close()
    cases = [{"id": "total", "question": "Total of x?", "gold_sql": "SELECT sum(x) FROM ledger"},
             {"id": "total_2_53", "question": "2**53 plus one?",
              "gold_sql": "SELECT sum(v) FROM (VALUES (CAST(9007199254740992 AS BIGINT)), (1)) t(v)"}]
    (suite / "questions.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    (suite / "sqleval.toml").write_text('[suite]\nname = "sums"\nquestions = "questions.jsonl"\n'
                                        'database = "ledger.duckdb"\ndialect = "duckdb"\n')
    preds = {"off_by_one": {"total": "SELECT sum(x) FROM ledger WHERE x <> 1",
                            "total_2_53": "SELECT CAST(9007199254740992 AS BIGINT)"},
             "retyped": {"total": "SELECT CAST(sum(x) AS DECIMAL(20, 2)) FROM ledger",
                         "total_2_53": "SELECT CAST(9007199254740993 AS BIGINT)"}}
    for name, sqls in preds.items():
        (pytester.path / f"{name}.jsonl").write_text("".join(json.dumps({"id": k, "sql": s}) + "\n"
                                                             for k, s in sqls.items()))
    result = pytester.runpytest("sums", "--sqleval-backend=predictions:off_by_one.jsonl,predictions:retyped.jsonl",
                                "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=2)
    records = {(r["case_id"], r["backend"]): r for r in read_results(pytester.path)}
    for case in ("total", "total_2_53"):
        wrong, right = records[(case, "off_by_one")], records[(case, "retyped")]
        assert not wrong["pass"] and wrong["failure_kind"] == "value_mismatch", wrong["explanation"]
        assert right["pass"] and not right["compare"]["within_tolerance"], right["explanation"]
