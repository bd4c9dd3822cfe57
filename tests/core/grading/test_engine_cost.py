"""The engine process's work per request (issue 35, engcost): what follows from a stored
gold alone is worked out once per process, not once per prediction graded against it, and
a request writes a message only where the parent needs one. The verdicts and evidence are
the same either way (the bench's 1000-case A/B compares every record)."""
from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_sqleval.core.cases import Limits
from pytest_sqleval.core.grading import compare, peers
from pytest_sqleval.core.grading.pipeline import SuiteGrader
from tests.recorded_calls import record_calls

GOLD = "SELECT DISTINCT region FROM customers ORDER BY region"  # Spider's evaluator runs it without DISTINCT
PRED = "SELECT region FROM customers GROUP BY region ORDER BY region"  # no DISTINCT: Spider runs it as written


def test_a_stored_spider_variant_of_the_gold_costs_no_message(shop_db: Path, tmp_path: Path,
                                                              frame_kinds: list[str]) -> None:
    """Spider's DISTINCT-free variant of a gold is run once and stored; read back, it runs
    nothing, so the engine sends no ``partial`` / ``started`` / ``executed`` for it (before:
    three frames for every prediction graded against such a gold, the partial one a pickle
    of the whole answer so far). Its verdicts are those of the first grade."""
    kinds = frame_kinds
    g = SuiteGrader(shop_db, limits=Limits(timeout_s=5), cache_dir=tmp_path)
    try:
        gold = g.gold(GOLD)
        first = g.grade(PRED, gold)  # the variant is run (a partial answer first, then its start and end)
        kinds.clear()
        again = g.grade(PRED, gold)  # read from the store: nothing runs
        assert kinds == ["executed", "result"]
        assert first.passed and again.passed
        # Spider's evaluator drops the gold's DISTINCT (a known bug of theirs): 40 rows against 4
        _same_sidebyside(first, again, spider=False)
    finally:
        g.close()


def test_a_gold_is_read_as_python_rows_once_per_process(shop_db: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The peers' rules read a gold's rows as Python values; the gold's are made once per
    gold in the engine process (served here in the grading process, ``isolation = "auto"``
    on SQLite would too), not once per prediction: three predictions against one gold read
    the gold's rows once and each prediction's once."""
    calls = record_calls(monkeypatch, peers, "python_rows", lambda table: table.num_rows)
    g = _in_process_grader(shop_db, tmp_path)
    try:
        gold = g.gold("SELECT id, name FROM products WHERE id <= 3")
        preds = ["SELECT id, name FROM products WHERE id < 4", "SELECT id, name FROM products WHERE id <= 2",
                 "SELECT id, name FROM products WHERE id IN (1, 2, 3)"]
        verdicts = [g.grade(p, gold) for p in preds]
        assert [v.passed for v in verdicts] == [True, False, True]
        assert calls == [3, 3, 2, 3]  # the gold's rows once, then each prediction's
    finally:
        g.close()


def test_a_small_result_s_values_are_read_once(shop_db: Path, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A request reads its prediction's values for the comparison, the preview and the
    peers' rules, and its gold's for the comparison: each small result is read once
    (``compare.table_values``), the gold once for every request graded against it."""
    calls = record_calls(monkeypatch, compare, "_read_columns", lambda table: table.num_rows)
    g = _in_process_grader(shop_db, tmp_path)
    try:
        gold = g.gold("SELECT id, name FROM products WHERE id <= 3")
        calls.clear()  # its two runs compared, its preview
        preds = ["SELECT id, name FROM products WHERE id < 4", "SELECT id, name FROM products WHERE id <= 2",
                 "SELECT id, name FROM products WHERE id IN (1, 2, 3)"]
        verdicts = [g.grade(p, gold) for p in preds]
        assert [v.passed for v in verdicts] == [True, False, True]
        assert calls == [3, 3, 2, 3]  # the stored gold once, then each prediction once
    finally:
        g.close()


@pytest.mark.parametrize("category, stored", [("timeout", False), ("resource_exceeded", False),
                                              ("unknown_error", False), ("missing_column", True)])
def test_a_spider_variant_that_failed_by_this_runs_limits_is_asked_again(tmp_path: Path, category: str,
                                                                         stored: bool) -> None:
    """Spider's DISTINCT-free variant of a gold that overran its time limit (or a cap, or the
    engine failed) on a loaded machine is not stored: the next run asks again, so one slow run
    does not settle Spider's verdict for every later run. An error of the query itself
    (a missing column) is stored like an answer."""
    from pytest_sqleval.core.engines.base import ExecError, ExecOutcome
    from pytest_sqleval.core.grading.engine_side import GradingHandler
    runs: list[str] = []

    def failing(sql: str) -> ExecOutcome:
        runs.append(sql)
        return ExecOutcome(None, ExecError(category, "as the engine said it", "E"), 1.0)
    handler = GradingHandler(db=None, limits=Limits(timeout_s=5), gold_dir=str(tmp_path))
    assert handler._gold_variant("k", "SELECT a FROM t", failing) == category
    again = GradingHandler(db=None, limits=Limits(timeout_s=5), gold_dir=str(tmp_path))  # the next run's process
    assert again._gold_variant("k", "SELECT a FROM t", failing) == category
    assert len(runs) == (1 if stored else 2)


def test_a_prediction_spider_rewrites_into_the_gold_s_variant_is_not_run_again(
        shop_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A prediction whose text Spider's evaluator rewrites into the gold's own rewritten text
    (here: written as the gold, DISTINCT and all) is the same query on the same database as
    the gold's DISTINCT-free variant, whose answer is stored: Spider's re-run of it reads that
    answer instead of running it again (sandcost). Before, it ran: a ``partial``, ``started``
    and ``executed`` more. The verdicts are those of running it (the re-run forced below)."""
    from pytest_sqleval.core.engines.duckdb_sandbox import DuckDBSandbox
    from pytest_sqleval.core.grading.engine_side import GradingHandler
    runs = record_calls(monkeypatch, DuckDBSandbox, "run", lambda self, sql, **kw: sql)
    variant = peers.spider_variant(GOLD, "duckdb")
    g = _in_process_grader(shop_db, tmp_path)
    try:
        gold = g.gold(GOLD)
        g.grade(GOLD, gold)  # the gold's variant is run and stored here
        runs.clear()
        reused = g.grade(GOLD, gold)
        assert variant not in runs and runs == [GOLD]  # the prediction, and no re-run
        monkeypatch.setattr(GradingHandler, "_as_gold_variant", lambda self, *a: None)
        ran = g.grade(GOLD, gold)
        assert runs == [GOLD, GOLD, variant]  # forced: the re-run runs
        assert reused.passed and ran.passed
        # Spider runs both without DISTINCT: 40 rows against the same 40 rows
        _same_sidebyside(ran, reused, spider=True)
    finally:
        g.close()


def test_the_re_run_reads_the_stored_variant_and_runs_nothing(shop_db: Path, tmp_path: Path,
                                                               frame_kinds: list[str]) -> None:
    """In the engine process: the second grade of a prediction written as a gold with DISTINCT
    costs the prediction's execution and its answer only (before: five frames)."""
    g = SuiteGrader(shop_db, limits=Limits(timeout_s=5), cache_dir=tmp_path)
    try:
        gold = g.gold(GOLD)
        first = g.grade(GOLD, gold)
        frame_kinds.clear()
        again = g.grade(GOLD, gold)
        assert frame_kinds == ["executed", "result"]
        assert again.layers["compare"]["sidebyside"] == first.layers["compare"]["sidebyside"]
    finally:
        g.close()


def _same_sidebyside(first: Any, again: Any, spider: bool) -> None:
    """Two grades' side-by-side verdicts are the same: Spider's ``spider``, BIRD's a pass,
    the gold's DISTINCT dropped for Spider."""
    sbs = again.layers["compare"]["sidebyside"]
    assert sbs == first.layers["compare"]["sidebyside"]
    assert sbs["spider"] is spider and sbs["bird"] is True and sbs["spider_distinct_removed"] is True


def _in_process_grader(shop_db: Path, tmp_path: Path) -> SuiteGrader:
    """A grader whose engine serves in this process (what it runs can be counted here)."""
    from pytest_sqleval.core.engines.host import InProcessEngine
    limits = Limits(timeout_s=5)
    return SuiteGrader(shop_db, limits=limits, cache_dir=tmp_path,
                       started=SuiteGrader.start_engine(shop_db, limits, tmp_path, InProcessEngine()))


_COMPARISONS = '''
import sys, duckdb
from pytest_sqleval.core.grading.compare import Comparator, CompareSpec
con = duckdb.connect()
def q(sql):
    return con.sql(sql).to_arrow_table()
gold = q("SELECT * FROM (VALUES (1, 'a', 1.50::DECIMAL(38,2), 0.5, DATE '2020-01-01', TRUE),"
         " (2, NULL, NULL, NULL, NULL, NULL), (2, 'b', 3.25::DECIMAL(38,2), 1e300, DATE '1999-12-31', FALSE)) t")
preds = [q("SELECT * FROM (VALUES (2, 'b', 3.25::DECIMAL(20,4), 1e300*(1+1e-9), DATE '1999-12-31', FALSE),"
           " (1, 'a', 1.5::DECIMAL(20,4), 0.5, DATE '2020-01-01', TRUE), (2, NULL, NULL, NULL, NULL, NULL)) t"),
         q("SELECT * FROM (VALUES (1, 'a', 1.51::DECIMAL(38,2), 0.5, DATE '2020-01-01', TRUE),"
           " (3, NULL, NULL, 2.0, NULL, NULL)) t"),
         q("SELECT range AS i, range::VARCHAR AS s FROM range(50)")]
cmp = Comparator(threads=1)
verdicts = [(cmp.compare(gold, p, CompareSpec(ordered=o)).to_dict()["reason"]) for p in preds for o in (False, True)]
ties = cmp.tie_groups(gold, [0])
print(verdicts, ties.to_pylist(), "pandas" in sys.modules)
'''


def test_comparing_results_on_the_general_path_does_not_import_pandas() -> None:
    """The general path reads Arrow columns as numpy from their buffers: pyarrow's
    ``to_numpy``, ``pa.array`` and ``fill_null(x, 0)`` import pandas on their first call,
    150 ms of the engine process's CPU in every run (0.15 ms a case of a 1000-case run)."""
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-c", _COMPARISONS], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[3])
    assert out.stdout.split()[-1] == "False", out.stdout
    assert out.stdout.startswith("['equal', 'order_only', 'row_count', 'row_count', 'arity_mismatch', "
                                 "'arity_mismatch'] [1, 2, 2]"), out.stdout


_VALUE = st.one_of(st.none(), st.integers(-2, 2), st.sampled_from([0.0, -0.0, 1.0, 1.5, 2.0, float("nan"), 1e300]),
                   st.booleans(), st.sampled_from([Decimal("1.5"), Decimal("1.50"), Decimal("2"), Decimal("2.05"),
                                                   Decimal("2.0"), Decimal("2.00"), Decimal("0.00"), Decimal("-0.00"),
                                                   Decimal("2.50"), Decimal("-1.25")]),
                   st.sampled_from(["a", "b", "1", "2.0"]), st.sampled_from([date(2020, 1, 1), date(1999, 12, 31)]),
                   st.just(datetime(2020, 1, 1)))


@st.composite
def _row_pairs(draw: Any) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """Two results of one width (1 to 7 columns), the second often the first's rows again,
    shuffled, with some values swapped for equal ones of another type or text (1 / 1.0 / True,
    1.5 / 1.50, 0.0 / -0.0) or columns permuted."""
    width = draw(st.integers(1, 7))
    gold = draw(st.lists(st.tuples(*[_VALUE] * width), min_size=1, max_size=6))
    pred = [list(r) for r in gold]
    if draw(st.booleans()):
        pred = [list(r) for r in draw(st.permutations(gold))]
    twins = {1: [1.0, True], 0: [0.0, -0.0, False, Decimal("0.00"), Decimal("-0.00")], 1.5: [Decimal("1.50"), 1.5],
             2: [2.0, Decimal("2.00")], 2.5: [Decimal("2.50"), Decimal("2.5")]}
    for row in pred:
        for i, v in enumerate(row):
            if type(v) in (int, float, Decimal) and v in twins and draw(st.integers(0, 3)) == 0:
                row[i] = draw(st.sampled_from(twins[v]))
    if draw(st.integers(0, 3)) == 0:
        perm = draw(st.permutations(range(width)))
        pred = [[r[j] for j in perm] for r in pred]
    if draw(st.integers(0, 3)) == 0:
        pred = draw(st.lists(st.tuples(*[_VALUE] * width), min_size=1, max_size=6))
    return gold, [tuple(r) for r in pred]


@settings(max_examples=600, derandomize=True, deadline=None)
@given(_row_pairs(), st.booleans())
def test_spider_s_rule_on_equal_rows_is_its_search_s_verdict(pair: Any, order_matters: bool) -> None:
    """Spider's ``result_eq`` on rows equal as they come (in order, or as bags) is decided
    without sorting every row's values by their text or searching the permutations, where
    that gives what they give: up to ``ALWAYS_SEARCHED`` columns, each of one type whose
    equal values print alike (decimals of one exponent). Its quirks stay: a row with 1 and 1.5 against 1.0 and 1.5 (or 2.0 and 2.05
    against 2.00 and 2.05) sorts otherwise, and Spider calls the results different."""
    gold, pred = pair
    fast = peers.spider_equal(gold, pred, order_matters)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(peers, "ALWAYS_SEARCHED", 0)
        assert fast == peers.spider_equal(gold, pred, order_matters)


def test_spider_s_rule_keeps_its_text_sorting_quirk() -> None:
    """Equal rows whose values print otherwise: ``_unorder_row`` sorts them apart, and
    Spider's rule (the search, not the shortcut for rows that print alike) says different."""
    assert not peers.spider_equal([(1, 1.5)], [(1.0, 1.5)], True)
    assert not peers.spider_equal([(Decimal("2.0"), Decimal("2.05"))], [(Decimal("2.00"), Decimal("2.05"))], False)
    assert not peers.spider_equal([(Decimal("0.00"), Decimal("-1.25"))], [(Decimal("-0.00"), Decimal("-1.25"))], True)
    assert peers.spider_equal([(Decimal("1.50"), "a", 2)], [(Decimal("1.50"), "a", 2)], True)  # one exponent
    assert peers.spider_equal([(1, "a"), (2, None)], [(2, None), (1, "a")], False)
    assert not peers.spider_equal([(1, "a"), (2, None)], [(2, None), (1, "a")], True)
