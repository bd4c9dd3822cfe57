"""The peers' verdicts: what BIRD's and Spider's official execution checks would have
said about a case, next to our strict comparison, and why they differ (grading evidence,
computed in the engine process beside our comparison; ``reports.sidebyside`` sums it up).

Both are our implementations of their published rules, applied to the same two results
(rows as the Python values a DB-API driver returns):

- **BIRD set comparison** (``evaluation.py`` of BIRD): ``set(predicted) == set(gold)``.
  Row order and duplicate rows are ignored; column order matters; values compare with
  Python ``==`` (so 1 == 1.0 == True, 0.1 + 0.2 != 0.3, and NaN never equals NaN).
- **Spider test-suite comparison** (``exec_eval.py`` of test-suite-sql-eval, default
  flags): both queries get ``postprocess`` ('> =' -> '>=') and ``remove_distinct``
  (every DISTINCT keyword dropped, as ``keep_distinct`` is off by default, even inside
  ``COUNT(DISTINCT ...)``, which changes what the query counts: a known bug we
  reproduce, and name when it decides a case) and are run again when that changed
  them; order matters when the gold's text contains ``order by`` anywhere; rows compare
  as a bag (``multiset_eq``) or as a sequence, under *any* permutation of columns; two
  empty results are equal. The original prunes column permutations with 20 random rows;
  we prune with every row (the same answer, deterministically), and give up (``None``)
  beyond 100,000 candidate permutations. A test suite is a set of database variants;
  with one database this is the check run on that one database.

Both score a prediction that fails to execute, or overruns their timeout, as wrong, and
so do we (``reports.sidebyside``): every case of a run carries both verdicts, including
the cases we do not grade (an empty gold, a nondeterministic one), where they are
computed by the ``official`` request (``engine_side``) under the case's limits.
"""
from __future__ import annotations

import itertools
import math
from collections import Counter
from typing import Any, Callable, Iterable

from .compare import GID_COLUMN, python_values

MAX_ROWS = 1_000_000  # over this, rebuilding Python rows would cost more than the grading itself
MAX_PERMUTATIONS = 100_000


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


def python_rows(table: Any) -> list[tuple]:
    """An Arrow result as the list of tuples a DB-API ``fetchall()`` would give (infinite
    dates and timestamps as text, as ``python_values`` gives them)."""
    if GID_COLUMN in table.column_names:
        table = table.drop_columns([GID_COLUMN])
    cols = [python_values(table.column(i)) for i in range(table.num_columns)]
    return [tuple(_hashable(c[r]) for c in cols) for r in range(table.num_rows)]


# -- the rules ---------------------------------------------------------------------------
def bird_equal(gold: list[tuple], pred: list[tuple]) -> bool:
    """BIRD: ``set(predicted_res) == set(ground_truth_res)``."""
    return set(pred) == set(gold)


def _unorder_row(row: tuple) -> tuple:
    return tuple(sorted(row, key=lambda x: str(x) + str(type(x))))


def _multiset_eq(a: list[tuple], b: list[tuple]) -> bool:
    return len(a) == len(b) and Counter(a) == Counter(b)


def _permutations(gold: list[tuple], pred: list[tuple]) -> Iterable[tuple[int, ...]] | None:
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


def spider_equal(gold: list[tuple], pred: list[tuple], order_matters: bool) -> bool | None:
    """Spider test-suite ``result_eq``; ``None`` when the permutation search is too large."""
    if not gold and not pred:
        return True
    if len(gold) != len(pred):
        return False
    n = len(gold[0])
    if len(pred[0]) != n:
        return False
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


def spider_order_matters(gold_sql: str) -> bool:
    return "order by" in gold_sql.lower()


def spider_variant(sql: str, dialect: str) -> str:
    """``postprocess`` then ``remove_distinct`` (every DISTINCT keyword token dropped)."""
    sql = sql.replace("> =", ">=").replace("< =", "<=").replace("! =", "!=")
    out, pos = [], 0
    tokens = _tokens(sql, dialect)
    for tok in tokens:
        if tok.token_type == _token_types().DISTINCT:
            out.append(sql[pos:tok.start])
            pos = tok.end + 1
    out.append(sql[pos:])
    return "".join(out)


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
    from sqlglot.tokens import TokenType
    return TokenType


# -- one case ----------------------------------------------------------------------------
def _has_nan(rows: list[tuple]) -> bool:
    return any(isinstance(v, float) and v != v for row in rows for v in row)


def _as_float_rows(rows: list[tuple]) -> list[tuple]:
    def f(v: Any) -> Any:
        if isinstance(v, bool) or v is None:
            return v
        try:
            return round(float(v), 9) if isinstance(v, (int, float)) or type(v).__name__ == "Decimal" else v
        except (TypeError, ValueError, OverflowError):
            return v
    return [tuple(f(v) for v in row) for row in rows]


def _reason(rule: str, rule_pass: bool, gold: list[tuple], pred: list[tuple], compare: dict[str, Any],
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
                 cut: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """The BIRD and Spider verdicts for one executed prediction, and why each differs from
    ours (``compare``; None on a case we do not grade, where there is no "why").

    ``run(sql)`` executes a query on the same sandbox (for Spider's DISTINCT removal);
    ``gold_variant(sql)`` does the same for the gold's variant, from a cache (an Arrow
    table, or the error category as a string). Both run under the case's limits.

    ``cut(undecided)``, if given, is told before each re-run what to record should the
    re-run be stopped at the case's limits: Spider's verdict undecided, with the reason."""
    if gold_table.num_rows > MAX_ROWS or pred_table.num_rows > MAX_ROWS:
        return {"bird": None, "spider": None, "note": f"results over {MAX_ROWS} rows are not compared side by side"}
    gold, pred = python_rows(gold_table), python_rows(pred_table)
    ours = None if compare is None else bool(compare.get("match"))
    out: dict[str, Any] = {"ours_compare": ours, "note": None}
    out["bird"] = bird_equal(gold, pred)
    out["bird_reason"] = (None if ours is None or out["bird"] == ours
                          else _reason("bird", out["bird"], gold, pred, compare or {}))

    order = spider_order_matters(gold_sql) if gold_sql is not None else bool((compare or {}).get("ordered"))
    g2, p2, removed, in_call = gold, pred, False, False
    if gold_sql is not None and run is not None:
        gv, pv = spider_variant(gold_sql, dialect), spider_variant(pred_sql, dialect)
        if gv != gold_sql:
            removed, in_call = True, distinct_in_call(gold_sql, dialect)
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
            g2 = python_rows(variant)
        if pv != pred_sql:
            removed, in_call = True, in_call or distinct_in_call(pred_sql, dialect)
            if cut is not None:
                cut(_undecided(out, order, "the prediction"))
            outcome = run(pv)
            p2 = None if outcome.error is not None else python_rows(outcome.table)
    elif gold_sql is None:
        out["note"] = "gold SQL unknown to this engine process; Spider's order rule approximated by ours"
    spider = False if p2 is None else spider_equal(g2, p2, order)
    out.update(spider=spider, spider_order_matters=order, spider_distinct_removed=removed)
    if spider is None:
        out["note"] = "too many column permutations to search"
        out["spider_reason"] = None
    elif ours is None or spider == ours:
        out["spider_reason"] = None
    else:
        raw = spider_equal(gold, pred, order) if removed else spider
        decided = ("distinct_in_count" if in_call else "distinct_stripping") if removed and raw == ours else None
        out["spider_reason"] = _reason("spider", spider, gold, pred, compare or {}, order, decided)
    return out


def _undecided(out: dict[str, Any], order: bool, which: str) -> dict[str, Any]:
    """The side-by-side verdict to record if the DISTINCT-free re-run of ``which`` is cut."""
    return {**out, "spider": None, "spider_order_matters": order, "spider_distinct_removed": True,
            "spider_reason": None, "note": f"Spider's DISTINCT-free re-run of {which} did not finish within the "
                                           "case's limits (timeout and process guard); Spider's verdict is undecided"}
