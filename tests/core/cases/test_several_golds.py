"""A case's golds as read: several SQLs, result files, column policies, and the errors a
user gets for each mistake (one collection error naming the case, the file and the fix)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pytest_sqleval.core.cases import BenchmarkCase, ComparePolicy, collect_cases, load_manifest
from pytest_sqleval.core.cases.result_files import inferred_columns, read_result_file
from pytest_sqleval.core.errors import BadInputError


def _suite(root: Path, cases: list[dict[str, Any]], extra: str = "", files: dict[str, str | bytes] | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "questions.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    (root / "db.duckdb").write_bytes(b"")
    (root / "sqleval.toml").write_text('[suite]\nname = "s"\nquestions = "questions.jsonl"\n'
                                       'database = "db.duckdb"\ndialect = "duckdb"\n' + extra)
    for name, content in (files or {}).items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            (root / name).write_bytes(content)
        else:
            (root / name).write_text(content)
    return root


def _read(root: Path) -> list[BenchmarkCase]:
    manifest = load_manifest(root / "sqleval.toml")
    return [c for c, _ in collect_cases(manifest, manifest.questions)]


def test_a_list_of_gold_sqls_is_several_golds_and_gold_sql_is_the_first(tmp_path: Path) -> None:
    root = _suite(tmp_path, [{"id": "q1", "question": "?", "gold_sql": ["SELECT 1", "SELECT 1.0"]},
                             {"id": "q2", "question": "?", "gold_sql": "SELECT 2"}])
    q1, q2 = _read(root)
    assert q1.gold_sql == "SELECT 1" and [(g.index, g.kind, g.source) for g in q1.golds] == [
        (0, "sql", "SELECT 1"), (1, "sql", "SELECT 1.0")]
    assert q1.several_golds and not q2.several_golds
    assert q2.golds[0].source == "SELECT 2"
    # a case of one SQL gold keeps its identity (the generation cache's key) and its dict
    plain = BenchmarkCase("q2", "?", "SELECT 2", suite="s")
    assert q2.content_hash == plain.content_hash and "golds" not in q2.to_dict()
    assert q1.to_dict()["golds"][1] == {"index": 1, "kind": "sql", "source": "SELECT 1.0"}


def test_result_file_golds_resolve_against_the_suite_and_come_after_the_sqls(tmp_path: Path) -> None:
    root = _suite(tmp_path, [{"id": "q1", "question": "?", "gold_sql": "SELECT 1 AS a",
                              "gold_results": ["gold/q1_a.csv", "gold/q1_b.parquet"]},
                             {"id": "q2", "question": "?", "gold_results": ["gold/q1_a.csv"]}],
                  files={"gold/q1_a.csv": "a\n1\n"})
    pq.write_table(pa.table({"a": [1]}), root / "gold/q1_b.parquet")
    q1, q2 = _read(root)
    assert [(g.index, g.kind) for g in q1.golds] == [(0, "sql"), (1, "result"), (2, "result")]
    assert q1.golds[1].path == root / "gold/q1_a.csv"
    assert q2.gold_sql == "" and q2.golds[0].kind == "result" and q2.sql_golds == ()


@pytest.mark.parametrize(("case", "field", "says"), [
    ({"gold_sql": []}, "gold_sql", "non-empty string or a non-empty list"),
    ({"gold_sql": ["SELECT 1", ""]}, "gold_sql", "non-empty string or a non-empty list"),
    ({"gold_sql": "SELECT 1", "gold_results": "x.txt"}, "gold_results", "not one of .csv"),
    ({"gold_sql": "SELECT 1", "gold_results": [3]}, "gold_results", "list of file paths"),
    ({"gold_sql": "SELECT 1", "gold_types": {"a": "DATE"}}, "gold_types", "no result file"),
    ({"gold_sql": "SELECT 1", "compare": {"columns": "some"}}, "compare.columns", "\"exact\" or \"superset\""),
    ({"gold_sql": "SELECT 1", "compare": {"condition_cols": [0, 0]}}, "compare.condition_cols", "distinct"),
    ({"gold_sql": "SELECT 1", "compare": {"condition_cols": [-1]}}, "compare.condition_cols", "0-based"),
    ({"gold_sql": "SELECT 1", "compare": {"condition_cols": "0"}}, "compare.condition_cols", "0-based"),
    ({}, "gold_sql", "gold_results"),
])
def test_a_bad_gold_or_column_policy_names_the_line_field_and_fix(tmp_path: Path, case: dict[str, Any], field: str,
                                                                  says: str) -> None:
    root = _suite(tmp_path, [{"id": "ok", "question": "?", "gold_sql": "SELECT 1"},
                             {"id": "q", "question": "?", **case}])
    with pytest.raises(BadInputError) as err:
        _read(root)
    assert err.value.line == 2 and err.value.field == field and says in str(err.value), str(err.value)


@pytest.mark.parametrize(("files", "says"), [
    ({}, "does not exist"),
    ({"g.csv": "a,b\n1,2\n3\n"}, "line 3 has 1 fields, the header has 2"),
    ({"g.csv": ""}, "no header row"),
    ({"g.csv": "a,b\n1,x\n"}, "cannot be typed as INTEGER"),
    ({"g.jsonl": '{"a": 1}\n{"a": "x"}\n'}, "cannot be typed as JSON lines"),
    ({"g.parquet": b"not parquet"}, "not readable Parquet"),
])
def test_a_bad_result_file_is_one_collection_error_naming_case_and_file(tmp_path: Path, files: dict[str, Any],
                                                                        says: str) -> None:
    name = next(iter(files), "g.csv")
    root = _suite(tmp_path, [{"id": "q7", "question": "?", "gold_results": [name], "gold_types": {"b": "INTEGER"}}],
                  files=files)
    with pytest.raises(BadInputError) as err:
        _read(root)
    text = str(err.value)
    assert "case 'q7'" in text and name in text and says in text, text
    assert err.value.field == "gold_results" and err.value.line == 1


def test_condition_cols_beyond_a_result_files_columns_is_a_collection_error(tmp_path: Path) -> None:
    root = _suite(tmp_path, [{"id": "q1", "question": "?", "gold_results": ["g.csv"],
                              "compare": {"condition_cols": [0, 2]}}], files={"g.csv": "a,b\n1,2\n"})
    with pytest.raises(BadInputError, match=r"case 'q1': condition_cols names gold column\(s\) \[2\].*g.csv has 2"):
        _read(root)


def test_a_result_file_may_carry_its_own_condition_cols(tmp_path: Path) -> None:
    """Spider 2.0 names one condition_cols list per gold CSV: each file's own, over the case's."""
    root = _suite(tmp_path, [{"id": "q1", "question": "?", "compare": {"condition_cols": [1]},
                              "gold_results": [{"path": "a.csv", "condition_cols": [0, 1]}, "b.csv",
                                               {"path": "c.csv", "condition_cols": []}]}],
                  files={"a.csv": "a,b\n1,2\n", "b.csv": "x,y\n3,4\n", "c.csv": "z\n5\n"})
    (case,) = _read(root)
    assert [(g.source, g.condition_cols) for g in case.golds] == [("a.csv", (0, 1)), ("b.csv", None), ("c.csv", ())]


@pytest.mark.parametrize(("entry", "files", "says", "field"), [
    ({"path": "g.csv", "condition_cols": [0, 2]}, {"g.csv": "a,b\n1,2\n"},
     r"case 'q1': condition_cols names gold column\(s\) \[2\].*g.csv has 2", "compare.condition_cols"),
    ({"path": "g.csv", "condition_cols": [-1]}, {"g.csv": "a\n1\n"}, r"condition_cols.*0-based", "gold_results"),
    ({"path": "g.csv", "cols": [0]}, {"g.csv": "a\n1\n"}, r"a result file entry must be", "gold_results"),
    ({"condition_cols": [0]}, {}, r"must be a list of file paths", "gold_results"),
])
def test_a_bad_result_file_entry_is_a_collection_error(tmp_path: Path, entry: dict[str, Any],
                                                       files: dict[str, str | bytes], says: str, field: str) -> None:
    root = _suite(tmp_path, [{"id": "q1", "question": "?", "gold_results": [entry]}], files=files)
    with pytest.raises(BadInputError, match=says) as err:
        _read(root)
    assert err.value.field == field and err.value.line == 1


def test_the_column_policy_reaches_the_case_policy_and_the_wire(tmp_path: Path) -> None:
    root = _suite(tmp_path, [{"id": "q1", "question": "?", "gold_sql": "SELECT 1",
                              "compare": {"condition_cols": [1, 0]}},
                             {"id": "q2", "question": "?", "gold_sql": "SELECT 1"}],
                  extra='[compare]\ncolumns = "superset"\n')
    q1, q2 = _read(root)
    assert q1.policy is not None and q1.policy.condition_cols == (1, 0) and q1.policy.by_values
    assert q2.policy is not None and q2.policy.columns == "superset" and q2.policy.condition_cols is None
    assert ComparePolicy.from_wire(q1.policy.to_wire()) == q1.policy
    assert "columns" not in ComparePolicy().to_wire()  # a gold key stays what it was


@pytest.mark.parametrize(("extra", "field"), [('[compare]\ncolumns = "all"\n', "compare.columns"),
                                              ("[compare]\ncondition_cols = [0]\n", "condition_cols"),
                                              ('[gold_results]\ntypes = ["DATE"]\n', "gold_results.types")])
def test_the_manifest_refuses_a_bad_column_rule_and_per_case_keys(tmp_path: Path, extra: str, field: str) -> None:
    root = _suite(tmp_path, [{"id": "q", "question": "?", "gold_sql": "SELECT 1"}], extra=extra)
    with pytest.raises(BadInputError) as err:
        load_manifest(root / "sqleval.toml")
    assert err.value.field == field


def test_a_csv_is_typed_declared_types_win_and_inferred_columns_are_marked(tmp_path: Path) -> None:
    (tmp_path / "g.csv").write_text('d,n,s,e\n2020-01-02,1.50,x,""\n2020-01-03,2,,y\n')
    table = read_result_file(tmp_path / "g.csv", (("n", "DECIMAL(10,2)"),))
    assert [str(t) for t in table.schema.types] == ["date32[day]", "decimal128(10, 2)", "string", "string"]
    assert inferred_columns(table) == [0, 2, 3]
    assert table.column("s").to_pylist() == ["x", None]  # an empty field is NULL
    assert table.column("e").to_pylist() == ["", "y"]  # a quoted "" is the empty string


def test_suite_declared_types_apply_by_name_and_the_cases_win(tmp_path: Path) -> None:
    root = _suite(tmp_path, [{"id": "q", "question": "?", "gold_results": ["g.csv"], "gold_types": {"a": "BIGINT"}}],
                  extra='[gold_results]\ntypes = { a = "VARCHAR", b = "DATE" }\n',
                  files={"g.csv": "a,b\n1,2020-01-01\n"})
    (case,) = _read(root)
    assert dict(case.golds[0].types) == {"a": "BIGINT", "b": "DATE"}
