"""Per-engine golds, what does not transpile to Spark, and the known differences from
DuckDB (docs/explanation/spark.md) that tests/core/engines/test_spark.py does not show.

The tests that need no JVM read cases, transpile and run ``validate`` on DuckDB; those
marked ``spark`` run on a real local Spark: one in-process session for the module and one
grader (its own engine process) for the grading tests."""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Iterator

import pytest

from pytest_sqleval.core.engines.base import Limits
from pytest_sqleval.core.engines.spark_sandbox import SparkSettings, spark_location
from pytest_sqleval.core.errors import BadInputError
from tests.core.engines.test_spark import _spark_missing

#: a latest-rate-on-or-before join, DuckDB's way, and the same written out for Spark
ASOF_GOLD = ("SELECT round(sum(o.amount * fx.rate), 2) AS usd FROM orders o ASOF JOIN fx "
             "ON fx.cur = o.cur AND o.day >= fx.day")
SPARK_GOLD = ("WITH latest AS (SELECT o.id, max(fx.day) AS day FROM orders o JOIN fx ON fx.cur = o.cur AND fx.day <= o.day "
              "GROUP BY o.id) SELECT round(sum(o.amount * fx.rate), 2) AS usd FROM orders o JOIN latest l ON l.id = o.id "
              "JOIN fx ON fx.cur = o.cur AND fx.day = l.day")
RIGHT = ("SELECT round(sum(amount * (SELECT rate FROM fx WHERE fx.cur = o.cur AND fx.day <= o.day ORDER BY fx.day DESC "
         "LIMIT 1)), 2) FROM orders o")
WRONG = "SELECT round(sum(o.amount * fx.rate), 2) FROM orders o JOIN fx ON fx.cur = o.cur AND fx.day = DATE '2024-01-01'"


def _database(path: Path) -> Path:
    import duckdb
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE fx (cur VARCHAR, day DATE, rate DECIMAL(10,4))")
    con.execute("INSERT INTO fx VALUES ('EUR', '2024-01-01', 1.1000), ('EUR', '2024-01-10', 1.2000), "
                "('GBP', '2024-01-01', 1.3000), ('GBP', '2024-01-05', 1.2500)")
    con.execute("CREATE TABLE orders (id INTEGER, cur VARCHAR, day DATE, amount DECIMAL(10,2), opened TIME)")
    con.execute("INSERT INTO orders VALUES (1, 'EUR', '2024-01-03', 100.00, '09:00:00'), "
                "(2, 'EUR', '2024-01-12', 50.00, '10:30:00'), (3, 'GBP', '2024-01-06', 20.00, '23:59:00')")
    con.close()
    return path


def _suite(root: Path, cases: list[dict[str, Any]], extra: str = "") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    _database(root / "fx.duckdb")
    (root / "questions.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    (root / "sqleval.toml").write_text(f'[suite]\nname = "fx"\nquestions = "questions.jsonl"\ndatabase = "fx.duckdb"\n'
                                       f'dialect = "duckdb"\n{extra}')
    return root


CASES = [
    {"id": "asof_covered", "question": "USD total", "gold_sql": ASOF_GOLD, "gold_sql_spark": SPARK_GOLD},
    {"id": "asof_bare", "question": "USD total again", "gold_sql": ASOF_GOLD},
    {"id": "portable", "question": "orders", "gold_sql": "SELECT count(*) AS n FROM orders"},
    {"id": "time_read", "question": "late orders", "gold_sql": "SELECT count(*) FROM orders WHERE opened > '10:00:00'"},
]


# -- reading: no JVM -----------------------------------------------------------------------
def test_a_per_engine_gold_replaces_the_default_on_that_engine_only(tmp_path: Path) -> None:
    from pytest_sqleval.core import load_manifest, read_layout_cases
    cases = {c.id: c for c in read_layout_cases(load_manifest(_suite(tmp_path, CASES) / "sqleval.toml"))}
    case = cases["asof_covered"]
    assert case.gold_sql == ASOF_GOLD and [g.source for g in case.golds] == [ASOF_GOLD]
    assert [(g.source, g.engine) for g in case.golds_for("spark")] == [(SPARK_GOLD, "spark")]
    assert case.golds_for("duckdb") == case.golds and case.golds_for(None) == case.golds
    assert cases["asof_bare"].golds_for("spark") == cases["asof_bare"].golds
    assert case.gold_engines == ("spark",) and "gold_sql_spark" not in case.metadata
    assert case.to_dict()["engine_golds"][0]["engine"] == "spark"
    assert cases["portable"].content_hash != case.content_hash


@pytest.mark.parametrize("value, says", [("SELECT 1", "no engine named 'sprak'"), ("", "non-empty string")])
def test_a_bad_per_engine_gold_is_one_clear_error(tmp_path: Path, value: str, says: str) -> None:
    from pytest_sqleval.core import load_manifest, read_layout_cases
    key = "gold_sql_sprak" if "sprak" in says else "gold_sql_spark"
    root = _suite(tmp_path, [{"id": "a", "question": "q", "gold_sql": "SELECT 1", key: value}])
    with pytest.raises(BadInputError, match=says) as info:
        read_layout_cases(load_manifest(root / "sqleval.toml"))
    assert info.value.line == 1 and info.value.field == key
    if "sprak" in says:
        assert "did you mean 'spark'" in str(info.value)


@pytest.mark.parametrize("sql, construct", [
    (ASOF_GOLD, "ASOF JOIN"),
    ("SELECT o.id, f.cur FROM orders o POSITIONAL JOIN fx f", "POSITIONAL JOIN"),
    ("SELECT CAST(opened AS TIME) FROM orders", "TIME type"),
    ("SELECT id FROM orders WHERE opened > TIME '10:00:00'", "TIME type"),
    ("PIVOT fx ON cur USING sum(rate)", "refused"),
    ("SELECT id FROM orders WHERE amount >= ALL (SELECT amount FROM orders)", "ALL / ANY (subquery)"),
    ("SELECT o.id FROM orders o JOIN fx ON fx.cur = o.cur QUALIFY fx.rate = max(fx.rate) OVER (PARTITION BY o.id)",
     "QUALIFY"),
    ("SELECT id FROM orders QUALIFY row_number() OVER (ORDER BY id) <= 2 ORDER BY id LIMIT 1", "QUALIFY"),
])
def test_what_does_not_transpile_to_spark_is_named(sql: str, construct: str) -> None:
    from pytest_sqleval.core import portability
    assert construct in [i.construct for i in portability(sql, "duckdb", "spark")]


def test_a_read_of_a_time_column_is_named_and_portable_sql_is_not() -> None:
    from pytest_sqleval.core import portability
    issues = portability("SELECT id FROM orders WHERE opened > '10:00:00'", "duckdb", "spark",
                         time_columns=frozenset({"opened"}))
    assert [i.construct for i in issues] == ["TIME column"] and "opened" in issues[0].reason
    assert portability("SELECT o.id, count(*) FROM orders o JOIN fx USING (cur) GROUP BY ALL QUALIFY "
                       "row_number() OVER (ORDER BY o.id) = 1", "duckdb", "spark") == []


def test_validate_reports_per_case_what_does_not_transpile_and_what_covers_it(tmp_path: Path) -> None:
    from pytest_sqleval.products.validate import validate_suite
    root = _suite(tmp_path, CASES)
    lines: list[str] = []
    errs: list[str] = []
    code = validate_suite(root, out=lines.append, err=errs.append, threads=(1,), engines=("spark",), freeze=False)
    text = "\n".join(lines)
    assert code == 0, errs  # the suite's own engine is DuckDB: Spark's gaps are reported, not problems
    assert "spark: " in text and ": asof_covered: does not transpile: ASOF JOIN" in text
    assert "asof_covered: does not transpile: ASOF JOIN" in text and "covered by its gold_sql_spark" in text
    bare = next(line for line in lines if ": asof_bare:" in line)
    assert "not covered (add \"gold_sql_spark\"" in bare
    assert any(": time_read: does not transpile: TIME column: reads opened" in line for line in lines)
    assert not any(": portable:" in line for line in lines)
    assert "spark: 3 of 4 cases have a gold that does not transpile from duckdb; 1 covered by a gold_sql_spark, 2 not" in text


def test_validate_checks_spark_only_when_asked_or_named(tmp_path: Path) -> None:
    from pytest_sqleval.products.validate import validate_suite
    root = _suite(tmp_path, [c for c in CASES if "gold_sql_spark" not in c])
    lines: list[str] = []
    validate_suite(root, out=lines.append, err=lines.append, threads=(1,), freeze=False)
    assert not any(line.startswith("spark:") for line in lines)  # no Spark gold, not asked: no Spark lines
    root = _suite(tmp_path / "b", CASES[:1])
    lines = []
    validate_suite(root, out=lines.append, err=lines.append, threads=(1,), freeze=False)
    assert any(line.startswith("spark: 1 of 1 cases") for line in lines)  # a case names Spark: checked


def test_a_per_engine_gold_spark_cannot_run_is_a_problem(tmp_path: Path) -> None:
    from pytest_sqleval.products.validate import validate_suite
    root = _suite(tmp_path, [{**CASES[0], "gold_sql_spark": ASOF_GOLD.replace("ASOF JOIN", "POSITIONAL JOIN")}])
    errs: list[str] = []
    assert validate_suite(root, out=lambda s: None, err=errs.append, threads=(1,), freeze=False) == 1
    assert any("its gold_sql_spark is not a query spark runs" in e for e in errs), errs


def test_gold_answers_are_frozen_per_engine() -> None:
    from pytest_sqleval.products.validate import GOLD_ANSWERS, answers_name
    assert answers_name("duckdb") == GOLD_ANSWERS == answers_name(None)
    assert answers_name("spark") == "gold_answers.spark.json"


# -- on Spark ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def spark_suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    missing = _spark_missing()
    if missing:
        pytest.skip(missing)
    root = tmp_path_factory.mktemp("spark-golds")
    return _suite(root / "suite", CASES, f'engine = "spark"\n[spark]\nmaster = "local[1]"\ncache_dir = "{root / "mirror"}"\n')


@pytest.fixture(scope="module")
def grader(spark_suite: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from pytest_sqleval.core.grading.pipeline import SuiteGrader
    location = spark_location(spark_suite / "fx.duckdb", SparkSettings(master="local[1]", driver_memory="1g",
                                                                        cache_dir=str(spark_suite.parent / "mirror")))
    g = SuiteGrader(location, limits=Limits(timeout_s=30.0), cache_dir=tmp_path_factory.mktemp("gold-cache"))
    yield g
    g.close()


def _cases(root: Path) -> dict[str, Any]:
    from pytest_sqleval.core import load_manifest, read_layout_cases
    return {c.id: c for c in read_layout_cases(load_manifest(root / "sqleval.toml"))}


@pytest.mark.spark
def test_on_spark_the_per_engine_gold_grades_and_the_record_names_it(grader: Any, spark_suite: Path) -> None:
    from pytest_sqleval.core.records import _record
    case = _cases(spark_suite)["asof_covered"]
    gold = grader.case_gold(case)
    assert gold.engine == "spark" and gold.source == SPARK_GOLD and gold.rows == 1
    right = grader.grade(RIGHT, gold)
    assert right.passed, right.explanation
    assert not grader.grade(WRONG, gold).passed
    from types import SimpleNamespace
    record = _record(case=case, backend=SimpleNamespace(label="x", spec="x", metadata={}), nodeid="n",
                     suite={"engine": "spark"}, status="passed", generation=None, verdict=right, gold=gold,
                     case_error=None, case_error_kind=None)
    assert record.gold_sql == SPARK_GOLD and record.matched_gold is not None
    assert record.matched_gold["engine"] == "spark" and SPARK_GOLD.startswith(record.matched_gold["source"].rstrip("…"))
    assert record.gold is not None and record.gold["engine"] == "spark"


@pytest.mark.spark
def test_on_spark_a_case_without_its_gold_fails_as_a_gold_error(grader: Any, spark_suite: Path) -> None:
    from pytest_sqleval.core.errors import GoldError
    with pytest.raises(GoldError, match="syntax_error"):
        grader.case_gold(_cases(spark_suite)["asof_bare"])  # ASOF JOIN, passed through by sqlglot


@pytest.mark.spark
def test_gold_answers_are_kept_per_engine(grader: Any, spark_suite: Path, tmp_path: Path) -> None:
    """The same gold on the same content: the DuckDB and the Spark answer have different keys
    (the engine is in the key), so a Spark run never reads DuckDB's answer."""
    from pytest_sqleval.core.grading.pipeline import SuiteGrader
    case = _cases(spark_suite)["portable"]
    spark_gold = grader.case_gold(case)
    duck = SuiteGrader(spark_suite / "fx.duckdb", cache_dir=tmp_path / "cache")
    try:
        duck_gold = duck.case_gold(case)
        assert duck.content_hash == grader.content_hash  # the mirror's hash is its source's
        assert duck_gold.key != spark_gold.key and duck_gold.engine is None
    finally:
        duck.close()


@pytest.mark.spark
def test_validate_on_spark_freezes_its_own_answers_and_never_reads_duckdbs(spark_suite: Path, tmp_path: Path) -> None:
    from pytest_sqleval.products.validate import validate_suite
    root = tmp_path / "suite"
    shutil.copytree(spark_suite, root)
    cases = [c for c in CASES if c["id"] != "asof_bare"]
    (root / "questions.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    duck = root / "duck"
    duck.mkdir()
    for name in ("questions.jsonl", "fx.duckdb"):
        shutil.copy(root / name, duck / name)
    (duck / "sqleval.toml").write_text('[suite]\nname = "fx"\nquestions = "questions.jsonl"\ndatabase = "fx.duckdb"\n')
    assert validate_suite(duck, out=lambda s: None, err=print, threads=(1,)) == 0
    shutil.copy(duck / "gold_answers.json", root / "gold_answers.json")
    lines: list[str] = []
    errs: list[str] = []
    assert validate_suite(root, out=lines.append, err=errs.append, threads=(1,)) == 0, errs
    spark_answers = json.loads((root / "gold_answers.spark.json").read_text())
    duck_answers = json.loads((root / "gold_answers.json").read_text())
    assert spark_answers["engine"] == "spark" and duck_answers["engine"] == "duckdb"
    assert spark_answers["answers"]["asof_covered"]["data"] == duck_answers["answers"]["asof_covered"]["data"]
    assert spark_answers["answers"]["asof_covered"]["gold_sql_sha256"] != duck_answers["answers"]["asof_covered"][
        "gold_sql_sha256"]  # the Spark gold's text, not DuckDB's
    assert not any("TIME column" in line for line in lines if ": asof_covered" in line)


# -- known differences (docs/explanation/spark.md) not shown in test_spark.py ----------------
@pytest.fixture(scope="module")
def sandbox(spark_suite: Path) -> Iterator[Any]:
    from pytest_sqleval.core.engines.spark_sandbox import SparkSandbox
    sb = SparkSandbox(spark_location(spark_suite / "fx.duckdb", SparkSettings(cache_dir=str(spark_suite.parent / "mirror"))),
                      Limits(timeout_s=30.0))
    yield sb
    sb.close()


def _both(sandbox: Any, source: Path, duckdb_sql: str) -> tuple[Any, Any]:
    import duckdb
    import sqlglot
    con = duckdb.connect(str(source), read_only=True)
    try:
        duck = con.sql(duckdb_sql).to_arrow_table()
    finally:
        con.close()
    return duck, sandbox.run(sqlglot.transpile(duckdb_sql, read="duckdb", write="spark")[0])


@pytest.mark.spark
def test_difference_unnamed_columns_are_named_otherwise(sandbox: Any, spark_suite: Path) -> None:
    duck, spark = _both(sandbox, spark_suite / "fx.duckdb", "SELECT count(*), sum(id) FROM orders")
    assert duck.column_names == ["count_star()", "sum(id)"]
    assert spark.error is None and spark.table.column_names == ["count(1)", "sum(id)"]
    assert duck.to_pylist()[0]["count_star()"] == spark.table.to_pylist()[0]["count(1)"] == 3


@pytest.mark.spark
def test_difference_asof_join_is_passed_through_and_fails(sandbox: Any, spark_suite: Path) -> None:
    duck, spark = _both(sandbox, spark_suite / "fx.duckdb", ASOF_GOLD)
    assert duck.num_rows == 1 and spark.table is None and spark.error is not None
    assert spark.error.category == "syntax_error"
    ok = sandbox.run(SPARK_GOLD)
    assert ok.error is None and ok.table.column(0).to_pylist() == duck.column(0).to_pylist()


@pytest.mark.spark
def test_difference_a_time_cast_becomes_todays_timestamp(sandbox: Any, spark_suite: Path) -> None:
    import datetime as dt
    duck, spark = _both(sandbox, spark_suite / "fx.duckdb", "SELECT CAST('10:30:00' AS TIME) AS t")
    assert duck.column(0).to_pylist() == [dt.time(10, 30)]
    value = spark.table.column(0).to_pylist()[0]
    assert isinstance(value, dt.datetime) and value.time() == dt.time(10, 30)  # a date came with it


@pytest.mark.spark
def test_difference_a_multiplied_interval_makes_a_timestamp(sandbox: Any, spark_suite: Path) -> None:
    import datetime as dt
    duck, spark = _both(sandbox, spark_suite / "fx.duckdb", "SELECT DATE '2024-01-01' + 3 * INTERVAL 1 DAY AS d")
    assert duck.column(0).to_pylist() == [dt.datetime(2024, 1, 4)]
    value = spark.table.column(0).to_pylist()[0]
    assert isinstance(value, dt.datetime) and value.replace(tzinfo=None) == dt.datetime(2024, 1, 4)
    assert value.tzinfo is not None  # Spark's TIMESTAMP (with the session zone, UTC), not a DATE


@pytest.mark.spark
def test_difference_a_time_column_compares_as_text(sandbox: Any, spark_suite: Path) -> None:
    """The mirror holds TIME as HH:MM:SS text: a comparison with text still orders alike
    (zero-padded), but the value is a string, never a time."""
    import datetime as dt
    duck, spark = _both(sandbox, spark_suite / "fx.duckdb", "SELECT opened FROM orders WHERE opened > '10:00:00' ORDER BY id")
    assert duck.column(0).to_pylist() == [dt.time(10, 30), dt.time(23, 59)]
    assert spark.table.column(0).to_pylist() == ["10:30:00", "23:59:00"]


@pytest.mark.spark
def test_difference_decimal_arithmetic_keeps_a_scale_of_its_own(sandbox: Any, spark_suite: Path) -> None:
    """avg() and sum()/count() of a decimal: doubles on DuckDB (equal within the tolerance),
    decimals at two scales on Spark (exact numbers, so compared exactly they differ)."""
    import decimal
    import pyarrow as pa
    sql = "SELECT avg(amount) AS a, sum(amount) / count(*) AS b FROM orders WHERE id < 4"
    duck, spark = _both(sandbox, spark_suite / "fx.duckdb", sql)
    assert all(pa.types.is_floating(t) for t in duck.schema.types)
    assert abs(duck.column(0)[0].as_py() - duck.column(1)[0].as_py()) < 1e-9
    a, b = spark.table.column(0)[0].as_py(), spark.table.column(1)[0].as_py()
    assert isinstance(a, decimal.Decimal) and isinstance(b, decimal.Decimal)
    assert spark.table.schema.types[0] != spark.table.schema.types[1]  # scale 6 against a wider one
    assert a != b and round(a, 6) == round(b, 6)  # 56.666667 against 56.666666666...


@pytest.mark.spark
def test_difference_a_quantified_subquery_comparison_is_a_syntax_error(sandbox: Any, spark_suite: Path) -> None:
    duck, spark = _both(sandbox, spark_suite / "fx.duckdb",
                        "SELECT id FROM orders WHERE amount >= ALL (SELECT amount FROM orders)")
    assert duck.column(0).to_pylist() == [1]
    assert spark.error is not None and spark.error.category == "syntax_error"


@pytest.mark.spark
def test_difference_qualify_naming_an_alias_is_rewritten_wrongly(sandbox: Any, spark_suite: Path) -> None:
    duck, spark = _both(sandbox, spark_suite / "fx.duckdb", "SELECT o.id FROM orders o JOIN fx ON fx.cur = o.cur "
                        "QUALIFY fx.day = max(fx.day) OVER (PARTITION BY o.id) ORDER BY o.id")
    assert duck.column(0).to_pylist() == [1, 2, 3]
    assert spark.error is not None and spark.error.category == "missing_column"


@pytest.mark.spark
def test_difference_epoch_of_an_interval_is_a_type_mismatch(sandbox: Any, spark_suite: Path) -> None:
    duck, spark = _both(sandbox, spark_suite / "fx.duckdb",
                        "SELECT epoch(TIMESTAMP '2024-01-02' - TIMESTAMP '2024-01-01') AS s")
    assert duck.column(0).to_pylist() == [86400.0]
    assert spark.error is not None and spark.error.category == "type_mismatch"
