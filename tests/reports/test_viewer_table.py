"""Results as data: ``load_results`` gives a run's records as a table, one row per case, with
every layer's evidence as columns, in DuckDB (or pandas, or Arrow)."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Callable

import duckdb
import pytest

from pytest_sqleval import load_results
from pytest_sqleval.core.errors import SqlevalError
from tests.sqleval_helpers import NAIVE_SQL, sqleval_ini  # noqa: F401  (autouse fixture)


@pytest.fixture
def results(pytester: pytest.Pytester, shop_suite: Path, write_predictions: Callable[..., Path]) -> Path:  # noqa: F811
    naive = write_predictions(NAIVE_SQL)
    pytester.runpytest("suite", f"--sqleval-backend=gold,predictions:{naive}", "-p", "no:cacheprovider")
    return pytester.path / "sqleval-results"


def test_one_row_per_case_with_the_layers_as_columns(results: Path) -> None:
    rel = load_results(results)
    assert rel.shape[0] == 12
    cols = set(rel.columns)
    assert {"case_id", "backend", "status", "error_class", "tags", "parse__ok", "structure__distance",
            "diagnostics__most_likely", "diagnostics__advice", "compare__reason", "execution__rows",
            "grounding__tables"} <= cols
    by_class = dict(rel.filter("status = 'failed'").aggregate("error_class, count(*)", "error_class").fetchall())
    assert by_class == {"stale_table": 1, "hallucinated_column": 1, "wrong_metric": 1, "wrong_join": 1, "other": 1}
    stale = rel.filter("error_class = 'stale_table'").select("grounding__tables, tags").fetchall()[0]
    assert stale == (["main.orders_old"], ["stale_trap"])  # lists stay lists
    preview = rel.filter("case_id = 'q06' AND backend = 'naive'").select("execution__preview").fetchall()[0][0]
    assert isinstance(json.loads(preview), list)  # nested evidence is JSON text


def test_the_table_is_a_view_on_a_connection_you_pass(results: Path) -> None:
    con = duckdb.connect()
    load_results(results / "results.jsonl", connection=con)
    assert con.execute("SELECT count(*) FROM results WHERE backend = 'gold' AND pass").fetchone() == (6,)


def test_arrow_and_pandas(results: Path) -> None:
    table = load_results(results, kind="arrow")
    assert table.num_rows == 12 and "layers" not in table.column_names
    if importlib.util.find_spec("pandas") is None:
        with pytest.raises(SqlevalError, match="needs pandas: pip install pandas"):
            load_results(results, kind="pandas")
    else:  # pragma: no cover - pandas is not in the test lock
        assert len(load_results(results, kind="pandas")) == 12


def test_a_file_that_is_not_results_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "results.jsonl"
    bad.write_text('{"case_id": "q01"}\n')
    with pytest.raises(SqlevalError, match=r"results.jsonl:1: not a case record"):
        load_results(bad)
