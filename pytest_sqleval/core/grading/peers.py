"""The peers' verdicts: what BIRD's and Spider's official execution checks would have
said about a case, next to our strict comparison, and why they differ (grading evidence,
computed in the engine process beside our comparison; ``reports.sidebyside`` sums it up).

Both are our implementations of their published rules, applied to the same two results
(rows as the Python values a DB-API driver returns):

- **BIRD set comparison** (``evaluation.py`` of BIRD): ``set(predicted) == set(gold)``.
  Row order and duplicate rows are ignored; column order matters; values compare with
  Python ``==`` (so 1 == 1.0 == True, 0.1 + 0.2 != 0.3, and NaN never equals NaN).
- **Spider test-suite comparison** (``evaluation.py --etype exec`` of test-suite-sql-eval,
  default flags). Before anything runs, the prediction alone has every ``value`` (a plain,
  case-sensitive substring: ``value_id`` becomes ``1_id``, ``'value'`` becomes ``'1'``)
  replaced by ``1``, the placeholder of value-less models (``official_prediction``); then
  both queries get ``postprocess`` ('> =' -> '>=', '< =' -> '<=', '! =' -> '!=', in that
  order) and ``remove_distinct``
  (every DISTINCT keyword dropped, as ``keep_distinct`` is off by default, even inside
  ``COUNT(DISTINCT ...)``, which changes what the query counts: a known bug we
  reproduce, and name when it decides a case) and are run again when that changed
  them; order matters when the gold's text contains ``order by`` anywhere; rows compare
  as a bag (``multiset_eq``) or as a sequence, under *any* permutation of columns; two
  empty results are equal. The original prunes column permutations with 20 random rows;
  we prune with every row (the same answer, deterministically), and give up (``None``)
  beyond 100,000 candidate permutations. At execution each query has
  ``YEAR(CURDATE())`` replaced by ``2020`` (``replace_cur_year``). A test suite is a set of
  database variants; with one database this is the check run on that one database.

Results too large to hold or to compare whole decide what their size decides, and only
that (``over_cap``): a result of more rows than the gold's cannot be the same bag, so our
comparison and Spider's (whose ``result_eq`` compares lengths first) fail it; BIRD's sets
can still be equal (a million copies of the gold's three rows), so a prefix of the rows
decides BIRD's verdict only when it holds a row the gold has not, and it is left
undecided otherwise.

Both score a prediction that fails to execute, or overruns their timeout, as wrong, and
so do we (``reports.sidebyside``): every case of a run carries both verdicts, including
the cases we do not grade (an empty gold, a nondeterministic one), where they are
computed by the ``official`` request (``engine_side``) under the case's limits.
"""
from __future__ import annotations

import datetime
import decimal
import functools
import itertools
import math
import operator
import re
from collections import Counter
from typing import Any, Callable, Iterable

import pyarrow.types as pat

from .compare import GID_COLUMN, table_values
from .spider_text import current_year, join_spaced_operators, official_prediction, official_rewrites

MAX_ROWS = 1_000_000  # over this, rebuilding Python rows would cost more than the grading itself
MAX_PERMUTATIONS = 100_000
ALWAYS_SEARCHED = 6  # columns up to which the permutation search is never too large: 6 ** 6 <= MAX_PERMUTATIONS


# -- values ------------------------------------------------------------------------------
def _hashable(v: Any) -> Any:
    if isinstance(v, dict):
        keys = set(v)
        if keys == {"number", "text", "blob"}:  # SQLite's mixed-type column: the original value
            return next((v[k] for k in ("number", "text", "blob") if v[k] is not None), None)
        return tuple(sorted((str(k), _hashable(x)) for k, x in v.items()))
    if isinstance(v, (list, tuple)):
        return tuple(_hashable(x) for x in v)
    return v


#: Arrow types whose Python values are never dicts, lists or tuples: ``_hashable`` leaves them as they are
_FLAT_TYPES = (pat.is_null, pat.is_boolean, pat.is_integer, pat.is_floating, pat.is_decimal, pat.is_string,
               pat.is_large_string, pat.is_binary, pat.is_large_binary, pat.is_fixed_size_binary, pat.is_date,
               pat.is_timestamp, pat.is_time, pat.is_duration)


@functools.lru_cache(maxsize=512)
def _flat(t: Any) -> bool:
    return any(test(t) for test in _FLAT_TYPES)


def python_rows(table: Any) -> list[tuple[Any, ...]]:
    """An Arrow result as the list of tuples a DB-API ``fetchall()`` would give (infinite
    dates and timestamps as text, as ``python_values`` gives them). Only nested and
    interval values go through ``_hashable``: the others are hashable as they come."""
    read, _ = table_values(table)  # read once a request (the comparison read them)
    cols = [values if _flat(t) else [_hashable(v) for v in values]
            for name, t, values in zip(table.column_names, table.schema.types, read) if name != GID_COLUMN]
    return list(zip(*cols)) if cols else [() for _ in range(table.num_rows)]


# -- the rules ---------------------------------------------------------------------------
def bird_equal(gold: list[tuple[Any, ...]], pred: list[tuple[Any, ...]]) -> bool:
    """BIRD: ``set(predicted_res) == set(ground_truth_res)``."""
    return set(pred) == set(gold)


def _unorder_row(row: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(sorted(row, key=lambda x: str(x) + str(type(x))))


def _multiset_eq(a: list[tuple[Any, ...]], b: list[tuple[Any, ...]]) -> bool:
    return len(a) == len(b) and Counter(a) == Counter(b)


def _permutations(gold: list[tuple[Any, ...]], pred: list[tuple[Any, ...]]) -> Iterable[tuple[int, ...]] | None:
    n = len(gold[0])
    gold_sets = [{row[i] for row in gold} for i in range(n)]
    candidates = [set(range(n)) for _ in range(n)]
    if n > 3:
        for row in pred:
            for gi in range(n):
                for pj in list(candidates[gi]):
                    if row[pj] not in gold_sets[gi]:
                        candidates[gi].discard(pj)
    if math.prod(len(c) for c in candidates) > MAX_PERMUTATIONS:
        return None
    return itertools.product(*[sorted(c) for c in candidates])


def spider_equal(gold: list[tuple[Any, ...]], pred: list[tuple[Any, ...]], order_matters: bool) -> bool | None:
    """Spider test-suite ``result_eq``; ``None`` when the permutation search is too large."""
    if not gold and not pred:
        return True
    if len(gold) != len(pred):
        return False
    n = len(gold[0])
    if len(pred[0]) != n:
        return False
    if n <= ALWAYS_SEARCHED and (gold == pred if order_matters else _multiset_eq(gold, pred)) \
            and _print_alike(gold, pred):
        return True  # what the search below finds: the rows sort alike, and the identity permutation is tried
    s1, s2 = [_unorder_row(r) for r in gold], [_unorder_row(r) for r in pred]
    if (s1 != s2) if order_matters else (set(s1) != set(s2)):
        return False
    perms = _permutations(gold, pred)
    if perms is None:
        return None
    for perm in perms:
        if len(set(perm)) != len(perm):
            continue
        permuted = pred if n == 1 else [tuple(row[i] for i in perm) for row in pred]
        if order_matters:
            if gold == permuted:
                return True
        elif set(gold) == set(permuted) and _multiset_eq(gold, permuted):
            return True
    return False


_PRINT_ALIKE = frozenset({int, str, bool, datetime.date, float, decimal.Decimal})


def _print_alike(gold: list[tuple[Any, ...]], pred: list[tuple[Any, ...]]) -> bool:
    """Whether values equal at one position of two rows always print alike, so
    ``_unorder_row`` (which sorts a row's values by their text and type) sorts equal rows
    alike: each column holds one type on both sides (NULLs aside: ``1 == 1.0 == True``
    print otherwise), of integers, text, booleans, dates, floats but zero (``0.0 ==
    -0.0``), or finite decimals of one exponent, no negative zero (``1.5 == 1.50``). Not
    timestamps or times (one instant in two time zones)."""
    for values in map(operator.add, zip(*gold), zip(*pred)):
        types = set(map(type, values))
        types.discard(type(None))
        if not types:
            continue
        if len(types) > 1 or not types <= _PRINT_ALIKE:
            return False
        kind = types.pop()
        if kind is float and any(v == 0 for v in values if v is not None):
            return False
        if kind is decimal.Decimal:
            present = [v for v in values if v is not None]
            if len({v.as_tuple().exponent for v in present}) > 1 or not all(
                    v.is_finite() and not (v.is_zero() and v.is_signed()) for v in present):
                return False
    return True


def spider_order_matters(gold_sql: str) -> bool:
    return "order by" in gold_sql.lower()


@functools.lru_cache(maxsize=256)  # a gold's variant is asked for once per prediction graded against it
def spider_variant(sql: str, dialect: str, prediction: bool = False) -> str:
    """The query Spider's evaluator executes: for a prediction ``official_prediction``
    first; then ``postprocess``, ``remove_distinct`` (every DISTINCT keyword token dropped)
    and ``replace_cur_year``, in that order, as the official code applies them."""
    sql = official_prediction(sql) if prediction else join_spaced_operators(sql)
    out, pos = [], 0
    tokens = _tokens(sql, dialect)
    for tok in tokens:
        if tok.token_type == _token_types().DISTINCT:
            out.append(sql[pos:tok.start])
            pos = tok.end + 1
    out.append(sql[pos:])
    return current_year("".join(out))


@functools.lru_cache(maxsize=256)
def distinct_in_call(sql: str, dialect: str) -> bool:
    """Whether ``sql`` has a DISTINCT inside a call's parentheses (``COUNT(DISTINCT x)``),
    which Spider's ``remove_distinct`` strips too, so it counts something else."""
    t = _token_types()
    tokens = _tokens(sql, dialect)
    return any(tok.token_type == t.DISTINCT and i >= 2 and tokens[i - 1].token_type == t.L_PAREN
               and tokens[i - 2].token_type != t.L_PAREN for i, tok in enumerate(tokens))


def _tokens(sql: str, dialect: str) -> list[Any]:
    """sqlglot's tokens of a query that says DISTINCT somewhere (none otherwise, or when it
    cannot be tokenized: then nothing is removed, as nothing could be found)."""
    if "distinct" not in sql.lower():
        return []
    import sqlglot
    try:
        return list(sqlglot.tokenize(sql, read=dialect))
    except Exception:
        return []


def _token_types() -> Any:
    from sqlglot import TokenType
    return TokenType



# -- Spider 2.0 ----------------------------------------------------------------------------
#: the texts pandas' ``read_csv`` reads as missing by default (its ``na_values``)
PANDAS_NA = frozenset({"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
                       "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"})
_PANDAS_TRUE, _PANDAS_FALSE = frozenset({"True", "TRUE", "true"}), frozenset({"False", "FALSE", "false"})
_INT_TEXT = re.compile(r"[+-]?\d+")
SPIDER2_ABS_TOL = 1e-2  # compare_pandas_table's math.isclose(abs_tol=1e-2)
Spider2Frame = list[list[Any]]  # columns of values, as pandas hands them to compare_pandas_table


def _csv_text(v: Any) -> str:
    """A value as pandas' ``to_csv`` writes it (NULL as an empty field)."""
    if v is None or (isinstance(v, float) and v != v):
        return ""
    if isinstance(v, float):
        return repr(v)
    return str(v)


def _pandas_column(texts: list[str]) -> list[Any]:
    """One CSV column as ``pd.read_csv`` types it: missing texts are NaN; then int64 when
    every other text is an integer (float64 when one is missing), float64 when every one
    is a number, bool when every one is True/False, else the texts."""
    present = [t for t in texts if t not in PANDAS_NA]
    nan = float("nan")
    if present and all(_INT_TEXT.fullmatch(t.strip()) for t in present):
        if len(present) == len(texts):
            return [int(t) for t in texts]
        return [nan if t in PANDAS_NA else float(int(t)) for t in texts]
    if present and not any("_" in t for t in present):  # Python reads 1_000 as a number, pandas does not
        try:
            return [nan if t in PANDAS_NA else float(t) for t in texts]
        except ValueError:
            pass
    if present and all(t in _PANDAS_TRUE or t in _PANDAS_FALSE for t in present):
        return [nan if t in PANDAS_NA else t in _PANDAS_TRUE for t in texts]
    return [nan if t in PANDAS_NA else t for t in texts]


def spider2_frame(rows: list[tuple[Any, ...]], width: int | None = None) -> Spider2Frame:
    """A result as Spider 2.0's ``evaluate.py`` compares it: written to CSV by pandas and
    read back (``pd.read_csv``), so 1 and '1' are one value, NULL and '' and 'NA' are NaN,
    and a date is its text. ``width``: the column count of an empty result."""
    n = len(rows[0]) if rows else (width or 0)
    return [_pandas_column([_csv_text(row[i]) for row in rows]) for i in range(n)]


def spider2_csv_frame(text: str) -> Spider2Frame:
    """A gold CSV (``<id>.csv``, ``<id>_a.csv``) as ``pd.read_csv`` reads it (header first)."""
    import csv
    import io
    table = list(csv.reader(io.StringIO(text, newline="")))
    if not table:
        return []
    width = len(table[0])
    body = [r + [""] * (width - len(r)) for r in table[1:] if r]
    return [_pandas_column([r[i] for r in body]) for i in range(width)]


def _spider2_normalize(v: Any) -> Any:
    return 0 if v is None or (isinstance(v, float) and v != v) else v  # pd.isna(value) -> 0


def _spider2_vectors_match(gold: list[Any], pred: list[Any], ignore_order: bool, tol: float) -> bool:
    a, b = [_spider2_normalize(x) for x in gold], [_spider2_normalize(x) for x in pred]
    if ignore_order:  # each column sorted on its own: row correspondence is not kept
        def key(x: Any) -> tuple[bool, str, bool]:
            return x is None, str(x), isinstance(x, (int, float))
        a, b = sorted(a, key=key), sorted(b, key=key)
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if isinstance(x, (int, float)) and isinstance(y, (int, float)):
            if not math.isclose(float(x), float(y), abs_tol=tol):
                return False
        elif x != y:
            return False
    return True


def spider2_equal(gold: Spider2Frame, pred: Spider2Frame, condition_cols: list[int] | None = None,
                  ignore_order: bool = False, tol: float = SPIDER2_ABS_TOL) -> bool:
    """Spider 2.0's ``compare_pandas_table``: every gold column (only ``condition_cols``,
    when given and not empty) must equal *some* column of the prediction, matched by
    values alone (names ignored, extra prediction columns allowed, two gold columns may
    match the same one); NULL (NaN) counts as 0; numbers agree within ``tol`` absolute;
    with ``ignore_order`` each column is sorted on its own before comparing, so rows need
    not correspond. A ``condition_cols`` position the gold lacks fails the case, as the
    official ``iloc`` error scores 0."""
    if condition_cols:
        if any(i >= len(gold) for i in condition_cols):
            return False
        gold = [gold[i] for i in condition_cols]
    return all(any(_spider2_vectors_match(g, p, ignore_order, tol) for p in pred) for g in gold)


def spider2_match(golds: list[Spider2Frame], pred: Spider2Frame, condition_cols: list[list[int]] | None = None,
                  ignore_order: bool = False, tol: float = SPIDER2_ABS_TOL) -> int | None:
    """Spider 2.0's ``compare_multi_pandas_table``: the position of the first gold the
    prediction matches (``spider2_equal``), or None; ``condition_cols`` one list per gold
    (``cases.spider2_lite.per_gold_condition_cols`` reads the evaluation file's forms)."""
    for i, gold in enumerate(golds):
        cols = condition_cols[i] if condition_cols else None
        if spider2_equal(gold, pred, cols, ignore_order, tol):
            return i
    return None


def spider2_tables(golds: list[Any], pred_table: Any, condition_cols: list[list[int]] | None = None,
                   ignore_order: bool = False) -> int | None:
    """``spider2_match`` on Arrow results: each gold an Arrow table (a gold query's result,
    round-tripped through CSV as Spider 2.0 saves every result) or a gold CSV's text."""
    frames = [spider2_csv_frame(g) if isinstance(g, str) else spider2_frame(python_rows(g), g.num_columns)
              for g in golds]
    return spider2_match(frames, spider2_frame(python_rows(pred_table), pred_table.num_columns), condition_cols,
                         ignore_order)

class _Null:
    """A missing value kept apart from 0 (and equal only to itself), to ask whether Spider
    2.0's NULL-as-0 decided a verdict."""

    def __repr__(self) -> str:
        return "NULL"


_NULL = _Null()


def _nulls_kept(frame: Spider2Frame) -> Spider2Frame:
    return [[_NULL if v is None or (isinstance(v, float) and v != v) else v for v in col] for col in frame]


def spider2_reason(official: bool, golds: list[Any], pred_table: Any, condition_cols: list[list[int]] | None,
                   ignore_order: bool, compare: dict[str, Any]) -> str:
    """Why Spider 2.0's verdict (``official``) differs from our comparison (``compare``) on
    this prediction (the reasons ``reports.sidebyside`` counts): ``types`` (text read back
    from CSV as a number), ``nulls`` (NULL counted as 0), ``float_noise`` (its 0.01 absolute
    tolerance, or ours), ``ties`` (we accepted another valid top-k), ``other`` (among them:
    each column sorted on its own under ``ignore_order``, two gold columns matched by one)."""
    frames = [spider2_csv_frame(g) if isinstance(g, str) else spider2_frame(python_rows(g), g.num_columns)
              for g in golds]
    pred = spider2_frame(python_rows(pred_table), pred_table.num_columns)
    if official:  # it accepted what we reject
        if compare.get("reason") == "type_mismatch":
            return "types"
        if spider2_match([_nulls_kept(f) for f in frames], _nulls_kept(pred), condition_cols, ignore_order) is None:
            return "nulls"
        if spider2_match(frames, pred, condition_cols, ignore_order, tol=0.0) is None:
            return "float_noise"
        return "other"
    if (compare.get("tie_group") or {}).get("chosen"):
        return "ties"
    if compare.get("within_tolerance"):
        return "float_noise"
    return "other"


# -- one case ----------------------------------------------------------------------------
def _has_nan(rows: list[tuple[Any, ...]]) -> bool:
    return any(isinstance(v, float) and v != v for row in rows for v in row)


def _as_float_rows(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    def f(v: Any) -> Any:
        if isinstance(v, bool) or v is None:
            return v
        try:
            return round(float(v), 9) if isinstance(v, (int, float)) or type(v).__name__ == "Decimal" else v
        except (TypeError, ValueError, OverflowError):
            return v
    return [tuple(f(v) for v in row) for row in rows]


def _reason(rule: str, rule_pass: bool, gold: list[tuple[Any, ...]], pred: list[tuple[Any, ...]], compare: dict[str, Any],
            order_matters: bool = False, distinct: str | None = None) -> str:
    """Why ``rule`` disagrees with our result comparison on this pair of results (one of
    the reasons ``reports.sidebyside`` counts); ``distinct``: Spider's DISTINCT removal
    decided it, and how (``distinct_stripping`` or ``distinct_in_count``)."""
    if distinct is not None:
        return distinct
    if rule_pass:  # the rule accepted what we reject
        if not _multiset_eq(gold, pred) and set(gold) == set(pred):
            return "duplicates"
        if _multiset_eq(gold, pred):
            return "order" if compare.get("reason") == "order_only" else "types"
        if rule == "spider" and spider_equal(gold, pred, False):
            return "column_order"
        if compare.get("reason") == "type_mismatch":
            return "types"
        return "other"
    # the rule rejected what we accept
    if compare.get("column_permutation") is not None:
        return "column_order"  # we matched under a bijection of the columns (column_order = "any")
    if (compare.get("tie_group") or {}).get("chosen"):
        return "ties"  # another valid top-k than the rows the gold's LIMIT happened to keep
    if compare.get("within_tolerance"):
        return "float_noise"
    if _has_nan(gold) or _has_nan(pred):
        return "nulls"
    if rule == "spider" and order_matters and _multiset_eq(gold, pred):
        return "order"
    if _multiset_eq(_as_float_rows(gold), _as_float_rows(pred)):
        return "float_noise"
    return "other"


def side_by_side(gold_table: Any, pred_table: Any, compare: dict[str, Any] | None, *, gold_sql: str | None,
                 pred_sql: str, dialect: str, run: Callable[[str], Any] | None = None,
                 gold_variant: Callable[[str], Any] | None = None,
                 cut: Callable[[dict[str, Any]], None] | None = None, pred_over_cap: int | None = None,
                 ours: bool | None = None, gold_rows: list[tuple[Any, ...]] | None = None) -> dict[str, Any]:
    """The BIRD and Spider verdicts for one prediction, and why each differs from ours
    (``compare``, or ``ours`` where there is no comparison; None on a case we do not grade,
    where there is no "why").

    ``pred_table`` is the prediction's result as written; None when it gave none: then
    ``pred_over_cap`` is how many rows it is known to exceed (it was stopped at a cap), or
    it failed, and Spider's verdict comes from the query Spider's evaluator runs instead
    (``spider_variant``), when that differs.

    ``run(sql)`` executes a query on the same sandbox (for Spider's rewrites);
    ``gold_variant(sql)`` does the same for the gold's variant, from a cache (an Arrow
    table, or the error category as a string). Both run under the case's limits.

    ``cut(undecided)``, if given, is told before each re-run what to record should the
    re-run be stopped at the case's limits: Spider's verdict undecided, with the reason.

    ``gold_rows``: ``python_rows(gold_table)``, when the caller keeps it (a gold's rows are
    the same for every prediction graded against it)."""
    if ours is None and compare is not None:
        ours = bool(compare.get("match"))
    out: dict[str, Any] = {"ours_compare": ours, "note": None}
    whole = pred_table is not None and max(gold_table.num_rows, pred_table.num_rows) <= MAX_ROWS
    gold = (gold_rows if gold_rows is not None else python_rows(gold_table)) if gold_table.num_rows <= MAX_ROWS else None
    pred = python_rows(pred_table) if whole else None
    if pred_table is None:
        out["bird"] = None if pred_over_cap is not None else False  # BIRD runs it as written: an error is wrong
    elif whole and gold is not None and pred is not None:  # (whole: both are read)
        out["bird"] = bird_equal(gold, pred)
    else:
        out["bird"] = bird_prefix(gold, pred_table)
    out["bird_reason"] = (None if ours is None or out["bird"] is None or out["bird"] == ours
                          else _reason("bird", out["bird"], gold, pred, compare or {})
                          if whole and gold is not None and pred is not None else "other")
    if pred_over_cap is not None:
        out["note"] = (f"the prediction returned more than {pred_over_cap} rows (reading stopped at a cap); "
                       f"the gold returns {gold_table.num_rows}"
                       + ("" if out["bird"] is not None else ": BIRD compares sets, which a result's size does not decide"))
    elif pred_table is not None and not whole:
        out["note"] = f"a result over {MAX_ROWS} rows is judged by its size (and BIRD's by a prefix of its rows)"

    order = spider_order_matters(gold_sql) if gold_sql is not None else bool((compare or {}).get("ordered"))
    g2: Any = gold_table
    p2: Any = pred_table if pred_table is not None else (pred_over_cap if pred_over_cap is not None else "error")
    removed, in_call = False, False
    rewrites = official_rewrites(pred_sql)
    if gold_sql is not None and run is not None:
        gv, pv = spider_variant(gold_sql, dialect), spider_variant(pred_sql, dialect, prediction=True)
        if gv != gold_sql:
            removed = gv != current_year(join_spaced_operators(gold_sql))
            in_call = removed and distinct_in_call(gold_sql, dialect)
            if cut is not None:
                cut(_undecided(out, order, "the gold"))
            if gold_variant is not None:
                variant = gold_variant(gv)
            else:
                outcome = run(gv)
                variant = outcome.error.category if outcome.error is not None else outcome.table
            if isinstance(variant, str):  # Spider's evaluator asserts that the gold runs: it gives no verdict
                out.update(spider=None, spider_order_matters=order, spider_distinct_removed=True,
                           spider_reason=None, note=f"the gold without DISTINCT fails on this database ({variant})")
                return out
            g2 = variant
        if pv != pred_sql and (pred_table is not None or rewrites or pred_over_cap is not None):
            if pv != current_year(official_prediction(pred_sql)):
                removed, in_call = True, in_call or distinct_in_call(pred_sql, dialect)
            if cut is not None:
                cut(_undecided(out, order, "the prediction"))
            outcome = run(pv)
            p2 = outcome.table if outcome.error is None else (
                outcome.error.rows_over if getattr(outcome.error, "rows_over", None) is not None else "error")
    elif gold_sql is None:
        out["note"] = "gold SQL unknown to this engine process; Spider's order rule approximated by ours"
    spider = spider_sized(g2, p2, order, gold if g2 is gold_table else None, pred if p2 is pred_table else None)
    out.update(spider=spider, spider_order_matters=order, spider_distinct_removed=removed)
    if rewrites:
        out["spider_rewrites"] = [r["rewrite"] for r in rewrites]
    if spider is None:
        why = (f"Spider: its gold returns {g2.num_rows} rows, as many as the cap or more, so the prediction's size "
               "does not decide" if isinstance(p2, int) else "too many column permutations to search"
               if g2.num_rows <= MAX_ROWS else
               f"Spider: two results of {g2.num_rows} rows (over {MAX_ROWS}) are not compared")
        out["note"] = f"{out['note']}; {why}" if out["note"] else why
        out["spider_reason"] = None
    elif ours is None or spider == ours:
        out["spider_reason"] = None
    else:
        as_written = pred_table if pred_table is not None else (
            pred_over_cap if pred_over_cap is not None else "error")
        raw = spider_sized(gold_table, as_written, order, gold, pred) if removed or rewrites else spider
        decided = None
        if rewrites and raw == ours:
            decided = rewrites[0]["rewrite"]
        elif removed and raw == ours:
            decided = "distinct_in_count" if in_call else "distinct_stripping"
        out["spider_reason"] = decided or (_reason("spider", spider, gold, pred, compare or {}, order)
                                           if whole and gold is not None and pred is not None else "other")
    return out


def spider_sized(gold: Any, pred: Any, order_matters: bool, gold_rows: list[tuple[Any, ...]] | None = None,
                 pred_rows: list[tuple[Any, ...]] | None = None) -> bool | None:
    """Spider's ``result_eq`` on two Arrow results, the prediction possibly only known by
    its size: an int (it returned more rows than that cap) or "error" (it failed, which
    scores 0). Lengths are compared first, as ``result_eq`` does, so a result too large to
    hold or compare is decided when the gold's length differs; None: two results of the
    same size over ``MAX_ROWS``, or a permutation search too large. ``gold_rows`` and
    ``pred_rows``: their Python rows, when made already."""
    if isinstance(pred, str):
        return False
    if isinstance(pred, int):
        return False if gold.num_rows <= pred else None
    if gold.num_rows != pred.num_rows:
        return False
    if gold.num_rows > MAX_ROWS:
        return None
    return spider_equal(python_rows(gold) if gold_rows is None else gold_rows,
                        python_rows(pred) if pred_rows is None else pred_rows, order_matters)


PREFIX_ROWS = 10_000  # rows of a result too large to compare whole that BIRD's verdict reads


def bird_prefix(gold: list[tuple[Any, ...]] | None, pred_table: Any) -> bool | None:
    """BIRD's set comparison on a result too large to compare whole: False when its first
    rows hold one the gold has not (its set cannot equal the gold's), else None: a bag of
    copies of the gold's rows is an equal set, and only all of it would tell."""
    if gold is None:
        return None
    known = set(gold)
    head = python_rows(pred_table.slice(0, PREFIX_ROWS))
    return False if any(row not in known for row in head) else None


def _undecided(out: dict[str, Any], order: bool, which: str) -> dict[str, Any]:
    """The side-by-side verdict to record if Spider's re-run of ``which`` is cut."""
    return {**out, "spider": None, "spider_order_matters": order, "spider_distinct_removed": True,
            "spider_reason": None, "note": f"Spider's re-run of {which} as its evaluator rewrites it did not finish "
                                           "within the case's limits (timeout and process guard); Spider's verdict "
                                           "is undecided"}
