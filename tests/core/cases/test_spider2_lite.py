"""Spider 2.0-lite's local part read as shipped: questions JSONL, the evaluation JSONL
(condition_cols, ignore_order), gold SQL and gold CSVs with ``_a``/``_b`` alternatives, the
SQLite databases, and its submission folder of ``<instance_id>.sql`` files."""
from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from pytest_sqleval.core.backends.registry import read_predictions
from pytest_sqleval.core.cases import database_manifest, get_layout, load_manifest
from pytest_sqleval.core.cases.spider2_lite import Spider2SkippedWarning, per_gold_condition_cols, unwrap_prediction
from pytest_sqleval.core.errors import BadInputError, UsageError
from tests.sqleval_helpers import read_results

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "suites" / "spider2_lite"


def records(path: Path) -> dict[str, tuple[int, dict[str, Any]]]:
    layout = get_layout("spider2-lite")
    assert layout is not None
    return {raw["id"]: (line, raw) for line, raw in layout.records(path)}


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    """A writable copy of the fixture's suite folder."""
    shutil.copytree(FIXTURE, tmp_path / "spider2-lite")
    return tmp_path / "spider2-lite"


def test_fixture_databases_are_their_sql_sources() -> None:
    for name in ("shop", "school"):
        built = sqlite3.connect(":memory:")
        built.executescript((FIXTURE / "resource" / "databases" / f"{name}.sql").read_text())
        shipped = sqlite3.connect(FIXTURE / "resource" / "databases" / "spider2-localdb" / f"{name}.sqlite")
        assert list(shipped.iterdump()) == list(built.iterdump())


def test_local_questions_become_cases_and_the_cloud_ones_are_skipped_with_a_warning() -> None:
    with pytest.warns(Spider2SkippedWarning, match=r"2 Spider 2.0-lite question\(s\) need BigQuery or Snowflake "
                                                   r"and were skipped \(bq001, sf_bq002\)"):
        got = records(FIXTURE / "spider2-lite.jsonl")
    assert list(got) == ["local001", "local002", "local003", "local004"]
    assert [line for line, _ in got.values()] == [2, 3, 4, 6]
    line, one = got["local001"]
    assert one["question"].startswith("What is the total amount of delivered orders")
    assert one["gold_sql"] == (FIXTURE / "evaluation_suite/gold/sql/local001.sql").read_text()
    assert one["gold_results"] == ["evaluation_suite/gold/exec_result/local001.csv"]
    assert one["compare"] == {"columns": "superset", "order_matters": False, "float_abs_tol": 0.01}
    assert one["db"] == "shop" and one["external_knowledge"] is None


def test_alternative_csvs_are_golds_and_their_own_condition_cols_stay_with_them() -> None:
    with pytest.warns(Spider2SkippedWarning):
        got = records(FIXTURE / "spider2-lite.jsonl")
    _, two = got["local002"]
    assert "gold_sql" not in two  # only result files: Spider 2.0 ships no query for this question
    # [[0, 1], [0]]: one list per CSV, each CSV's own (and kept for the official verdict)
    assert two["gold_results"] == [{"path": "evaluation_suite/gold/exec_result/local002_a.csv", "condition_cols": [0, 1]},
                                   {"path": "evaluation_suite/gold/exec_result/local002_b.csv", "condition_cols": [0]}]
    assert two["spider2_condition_cols"] == [[0, 1], [0]]
    assert "condition_cols" not in two["compare"] and two["compare"]["columns"] == "superset"
    _, three = got["local003"]
    assert three["compare"]["condition_cols"] == [1] and three["external_knowledge"] == "averages.md"
    assert three["external_knowledge_path"] == "resource/documents/averages.md"  # relative to the suite folder
    assert "external_knowledge_path" not in two
    _, four = got["local004"]
    assert four["compare"]["order_matters"] is True and four["spider2_ignore_order"] is False


@pytest.mark.parametrize(("value", "golds", "want"), [
    (None, 2, [[], []]), ([], 1, [[]]), ([[]], 3, [[], [], []]), ([None], 1, [[]]),
    ([0, 2], 2, [[0, 2], [0, 2]]), ([[1], [0], [0]], 3, [[1], [0], [0]]), ([[1]], 1, [[1]]),
    ([[2], [2]], 1, [[2]]),
])
def test_condition_cols_read_as_compare_multi_pandas_table_reads_them(value: Any, golds: int,
                                                                       want: list[list[int]]) -> None:
    assert per_gold_condition_cols(value, golds, Path("eval.jsonl"), 1) == want


@pytest.mark.parametrize(("value", "message"), [
    ([[0], [1], [2]], "3 lists of condition_cols for 2 gold CSV(s)"),
    (["a"], "0-based column positions"), ([-1], "0-based column positions"), (3, "must be a list"),
])
def test_bad_condition_cols(value: Any, message: str) -> None:
    with pytest.raises(BadInputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        per_gold_condition_cols(value, 2, Path("eval.jsonl"), 4)


def test_missing_evaluation_file_names_the_fix(suite: Path) -> None:
    (suite / "evaluation_suite/gold/spider2lite_eval.jsonl").unlink()
    with pytest.raises(BadInputError, match="evaluation file does not exist") as exc:
        records(suite / "spider2-lite.jsonl")
    assert "spider2lite_eval.jsonl" in exc.value.path


def test_a_question_without_an_evaluation_line_or_a_gold_is_refused_with_its_line(suite: Path) -> None:
    eval_file = suite / "evaluation_suite/gold/spider2lite_eval.jsonl"
    eval_file.write_text("".join(line + "\n" for line in eval_file.read_text().splitlines() if "local003" not in line))
    with pytest.raises(BadInputError, match="local003 has no line in spider2lite_eval.jsonl") as exc:
        list(get_layout("spider2-lite").records(suite / "spider2-lite.jsonl"))  # type: ignore[union-attr]
    assert exc.value.line == 4
    (suite / "evaluation_suite/gold/exec_result/local001.csv").unlink()
    (suite / "evaluation_suite/gold/sql/local001.sql").unlink()
    with pytest.raises(BadInputError, match="local001 has no gold") as exc:
        list(get_layout("spider2-lite").records(suite / "spider2-lite.jsonl"))  # type: ignore[union-attr]
    assert exc.value.line == 2


def test_a_bad_ignore_order_names_the_evaluation_line(suite: Path) -> None:
    eval_file = suite / "evaluation_suite/gold/spider2lite_eval.jsonl"
    eval_file.write_text(eval_file.read_text().replace('"ignore_order": false', '"ignore_order": "no"'))
    with pytest.raises(BadInputError, match="field 'ignore_order': must be true or false") as exc:
        records(suite / "spider2-lite.jsonl")
    assert exc.value.line == 6 and exc.value.path.endswith("spider2lite_eval.jsonl")


def test_databases_are_the_local_sqlite_files_named_by_db() -> None:
    manifest = load_manifest(FIXTURE / "sqleval.toml")
    assert manifest.dialect == "sqlite" and manifest.questions == FIXTURE / "spider2-lite.jsonl"
    assert database_manifest(manifest, "school").database == (
        FIXTURE / "resource" / "databases" / "spider2-localdb" / "school.sqlite")


def test_the_submission_folder_is_read_as_predictions() -> None:
    got = read_predictions(FIXTURE / "submission")
    assert sorted(got) == ["local001", "local002", "local003", "local004"]
    assert got["local002"] == ("SELECT name, COUNT(*) AS n FROM customers JOIN orders USING (customer_id)\n"
                               "WHERE status = 'delivered' GROUP BY name HAVING COUNT(*) > 1", {"file": "local002.sql"})
    assert got["local004"][0] == "SELECT order_id, COALESCE(amount, 0) FROM orders ORDER BY order_id;"


@pytest.mark.parametrize(("text", "sql"), [
    ("SELECT 1", "SELECT 1"),
    ("prose\n```sql\nSELECT 2\n```\nmore ```sql\nSELECT 3\n```", "SELECT 2"),
    ("```SELECT 4```", "```SELECT 4```"),  # not a fenced sql block: evaluate.py runs the text as it is
])
def test_unwrap_prediction(text: str, sql: str) -> None:
    assert unwrap_prediction(text) == sql


def test_a_folder_of_result_csvs_or_of_nothing_is_refused(tmp_path: Path) -> None:
    (tmp_path / "local001.csv").write_text("a\n1\n")
    with pytest.raises(UsageError, match="exec_result mode"):
        read_predictions(tmp_path)
    (tmp_path / "local001.csv").unlink()
    with pytest.raises(UsageError, match=r"no <instance_id>\.sql file"):
        read_predictions(tmp_path)


def test_spider2_lite_suite_grades_end_to_end(pytester: pytest.Pytester) -> None:
    shutil.copytree(FIXTURE, pytester.path / "spider2-lite")
    result = pytester.runpytest("spider2-lite", "--sqleval-backend=predictions:spider2-lite/submission",
                                "-p", "no:cacheprovider", "-W", "ignore::UserWarning")
    # local001: same answer, unnamed column: pass; local002: name + count, the _b gold's columns found: pass;
    # local003: averages rounded to 2 places, within 0.01 of the gold CSV: pass;
    # local004: NULL written as 0: Spider 2.0 passes it (NULL counts as 0), we do not
    result.assert_outcomes(passed=3, failed=1)
    recs = {r["case_id"]: r for r in read_results(pytester.path)}
    assert [recs[i]["pass"] for i in ("local001", "local002", "local003", "local004")] == [True, True, True, False]
    assert json.dumps(recs["local002"]).count("local002_b.csv") >= 1  # the record names the gold that matched


def test_a_submission_folder_grades_any_suite_through_the_plugin(pytester: pytest.Pytester,
                                                                  shop_suite: Path) -> None:
    """The folder format works today on a suite the current reader takes (ours): one
    ``<id>.sql`` per case, a fenced block unwrapped, a missing file a wrong answer."""
    folder = pytester.path / "submission"
    folder.mkdir()
    (folder / "q01.sql").write_text("SELECT count(*) FROM customers WHERE NOT is_test\n")
    (folder / "q02.sql").write_text("Sure:\n```sql\nSELECT count(*) FROM orders WHERE status = 'complete'\n```\n")
    (folder / "q03.sql").write_text("SELECT region, count(*) FROM customers GROUP BY region")
    (folder / "q04.sql").write_text("SELECT status, count(*) FROM orders_old GROUP BY status")
    result = pytester.runpytest("suite", "--sqleval-backend=predictions:submission", "-p", "no:cacheprovider")
    recs = {r["case_id"]: r for r in read_results(pytester.path)}
    assert [recs[c]["pass"] for c in ("q01", "q02", "q03")] == [True, True, True]
    assert recs["q04"]["pass"] is False
    assert all(not recs[c]["pass"] for c in recs if c not in ("q01", "q02", "q03", "q04"))  # no file: wrong
    assert result.ret == 1
