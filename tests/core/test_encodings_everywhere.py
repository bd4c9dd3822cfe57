"""Every text file a user writes is read as UTF-8 with or without a BOM, and a file in
another encoding (Latin-1 here) is one clear error naming the file, the line of its first
bad byte and the fix, through each reader's public entry point. Also: ``validate`` checks
a gold's determinism with the comparison policy grading uses (the case's ``compare``)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest

from pytest_sqleval.core.errors import BadInputError
from tests.sqleval_helpers import sqleval_ini  # noqa: F401  (fixture: every pytester dir gets the ini)
from tests.products.test_validate import GOOD, SHOP_LAYER, Capture, write_suite

FIX = "save it as UTF-8"
BOM = b"\xef\xbb\xbf"


def encode(text: str, encoding: str) -> bytes:
    """``latin-1`` (the é on line 2 is byte 0xe9, not UTF-8) or ``utf-8-bom``."""
    return text.encode("latin-1") if encoding == "latin-1" else BOM + text.encode("utf-8")


def assert_names_file_line_and_fix(message: str, path: Path, line: int) -> None:
    assert f"{path}:{line}" in message, message
    assert "not UTF-8" in message and FIX in message, message
    assert "Traceback" not in message and "UnicodeDecodeError" not in message, message


# -- one reader per parameter: (write the file in an encoding, run the public entry point) -> error text or None
# The é sits on line 2 of every file.
def ablation_results(tmp: Path, pytester: pytest.Pytester, encoding: str, capsys: Any,
        shop_db: Path) -> tuple[Path, str | None]:
    from pytest_sqleval.reports.ablation import main
    recs = [{"nodeid": f"s/q.jsonl::{q}[gold]", "case_id": q, "backend": "gold", "status": "passed",
             "error_class": None, "backend_metadata": {}, "suite": "s", "question": q} for q in ("q1", "q2: café")]
    path = tmp / "results.jsonl"
    path.write_bytes(encode("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs), encoding))
    ret = main([str(path), "--out", str(tmp / "report")])
    err = capsys.readouterr().err
    assert ret == (2 if encoding == "latin-1" else 0), err
    return path, err or None


def semantic_layer(tmp: Path, pytester: pytest.Pytester, encoding: str, capsys: Any,
        shop_db: Path) -> tuple[Path, str | None]:
    from pytest_sqleval.products.warehouse.semantic import load_layer
    path = tmp / "semantic_layer.yaml"
    path.write_bytes(encode(SHOP_LAYER.replace("version: 1\n", "version: 1\n# café\n", 1), encoding))
    try:
        layer = load_layer(path)
    except BadInputError as exc:
        return path, str(exc)
    assert [c.name for c in layer.cubes] == ["orders", "customers"]
    return path, None


def validate_manifest(tmp: Path, pytester: pytest.Pytester, encoding: str, capsys: Any,
        shop_db: Path) -> tuple[Path, str | None]:
    from pytest_sqleval import cli
    db = shop_db
    suite = write_suite(tmp / "shop", db, GOOD, extra="[constraints]\ncases = 3\n")
    path = suite / "sqleval.toml"
    text = path.read_text()
    path.write_bytes(encode("# café\n" + text, encoding))
    ret = cli.main(["validate", str(suite), "--no-freeze", "--threads", "1"])
    err = capsys.readouterr().err
    assert ret == (2 if encoding == "latin-1" else 0), err
    return path, err if ret else None


def validate_schema_ddl(tmp: Path, pytester: pytest.Pytester, encoding: str, capsys: Any,
        shop_db: Path) -> tuple[Path, str | None]:
    from pytest_sqleval import cli
    db = shop_db
    suite = write_suite(tmp / "shop", db, GOOD, extra='schema = "schema.sql"\n', layer=SHOP_LAYER)
    path = suite / "schema.sql"
    path.write_bytes(encode("CREATE TABLE customers (id INTEGER, name VARCHAR);\n-- café\n", encoding))
    ret = cli.main(["validate", str(suite), "--no-freeze", "--threads", "1"])
    err = capsys.readouterr().err
    assert ret == (2 if encoding == "latin-1" else 0), err
    return path, err if ret else None


def build_script(tmp: Path, pytester: pytest.Pytester, encoding: str, capsys: Any,
        shop_db: Path) -> tuple[Path, str | None]:
    suite = pytester.mkdir("suite")
    (suite / "questions.jsonl").write_text(json.dumps({"id": "q1", "question": "?", "gold_sql": "SELECT count(*) FROM t"}) + "\n")
    (suite / "sqleval.toml").write_text('[suite]\nname = "w"\nquestions = "questions.jsonl"\n'
                                        'database = "w.duckdb"\nbuild = "build.sql"\n')
    path = suite / "build.sql"
    path.write_bytes(encode("CREATE TABLE t (name VARCHAR);\nINSERT INTO t VALUES ('café');\n", encoding))
    result = pytester.runpytest("suite", "-p", "no:cacheprovider", "--sqleval-backend=gold")
    out = result.stdout.str() + result.stderr.str()
    if encoding == "latin-1":
        result.assert_outcomes(errors=1)
        assert not (suite / "w.duckdb").exists()
        return path, out
    result.assert_outcomes(passed=1)
    return path, None


def schema_only_suite(tmp: Path, pytester: pytest.Pytester, encoding: str, capsys: Any,
        shop_db: Path) -> tuple[Path, str | None]:
    suite = pytester.mkdir("nodb")
    (suite / "q.jsonl").write_text(json.dumps({"id": "q1", "question": "?", "gold_sql": "SELECT name FROM t"}) + "\n")
    (suite / "sqleval.toml").write_text('[suite]\nname = "nodb"\nquestions = "q.jsonl"\nschema = "schema.sql"\n')
    path = suite / "schema.sql"
    path.write_bytes(encode("CREATE TABLE t (name VARCHAR);\n-- café\n", encoding))
    result = pytester.runpytest("nodb", "-p", "no:cacheprovider", "--sqleval-backend=gold")
    out = result.stdout.str() + result.stderr.str()
    if encoding == "latin-1":
        assert result.ret != pytest.ExitCode.OK
        assert out.count(f"{path}:2") >= 1 and "INTERNALERROR" not in out, out
        return path, out
    result.assert_outcomes(passed=1)
    return path, None


def agent_schema(tmp: Path, pytester: pytest.Pytester, encoding: str, capsys: Any,
        shop_db: Path) -> tuple[Path, str | None]:
    from pytest_sqleval.products.agent.schema import workspace_for
    from pytest_sqleval.core.cases import read_cases
    suite = tmp / "nodb"
    suite.mkdir()
    (suite / "q.jsonl").write_text(json.dumps({"id": "q1", "question": "?", "gold_sql": "SELECT name FROM t"}) + "\n")
    (suite / "sqleval.toml").write_text('[suite]\nname = "nodb"\nquestions = "q.jsonl"\nschema = "schema.sql"\n')
    path = suite / "schema.sql"
    path.write_bytes(encode("CREATE TABLE t (name VARCHAR);\n-- café\n", encoding))
    case = read_cases(suite / "q.jsonl", "nodb")[0]
    try:
        ws = workspace_for(case)
    except BadInputError as exc:
        return path, str(exc)
    assert [t.qualified for t in ws.tables] == ["t"]
    return path, None


READERS: dict[str, Callable[..., tuple[Path, str | None]]] = {
    "ablation-results": ablation_results, "semantic-layer": semantic_layer, "validate-manifest": validate_manifest,
    "validate-schema-ddl": validate_schema_ddl, "build-script": build_script, "schema-only-suite": schema_only_suite,
    "agent-schema-ddl": agent_schema,
}


@pytest.mark.parametrize("kind", list(READERS))
def test_latin1_file_is_one_error_naming_file_line_and_fix(kind: str, tmp_path: Path, pytester: pytest.Pytester,
                                                           capsys: pytest.CaptureFixture[str], shop_db: Path) -> None:
    path, message = READERS[kind](tmp_path, pytester, "latin-1", capsys, shop_db)
    assert message is not None
    assert_names_file_line_and_fix(message, path, 2 if kind != "validate-manifest" else 1)


@pytest.mark.parametrize("kind", list(READERS))
def test_utf8_file_with_a_bom_is_read_normally(kind: str, tmp_path: Path, pytester: pytest.Pytester,
                                               capsys: pytest.CaptureFixture[str], shop_db: Path) -> None:
    _, message = READERS[kind](tmp_path, pytester, "utf-8-bom", capsys, shop_db)
    assert message is None


def test_yaml_errors_in_a_layer_with_a_bom_keep_their_line(tmp_path: Path) -> None:
    from pytest_sqleval.products.warehouse.semantic import load_layer
    broken = SHOP_LAYER.replace("    sql_table: customers\n", "    sql_table: customers\n   description: [oops\n")
    line = broken.splitlines().index("   description: [oops") + 1
    path = tmp_path / "semantic_layer.yaml"
    path.write_bytes(BOM + broken.encode("utf-8"))
    with pytest.raises(BadInputError) as info:
        load_layer(path)
    assert info.value.line == line and "not valid YAML" in str(info.value)


# -- validate's determinism check uses the case's comparison policy ----------------------------------------------
def test_validate_determinism_honours_the_cases_compare_tolerances(tmp_path: Path) -> None:
    """The gold's first row depends on scan order: 100.001 on the database, 100.035 on the
    shuffled copy. Within the case's float_abs_tol that is the same answer, as grading would
    judge it; without the override it is a nondeterministic gold."""
    import duckdb
    db = tmp_path / "t.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE t AS SELECT i AS id FROM range(1, 51) r(i)")
    con.execute("CHECKPOINT")
    con.close()
    case = {"id": "f1", "question": "A measure within a tolerance.", "gold_sql": "SELECT 100.0 + first(id) * 1e-3 FROM t"}
    strict = Capture()
    assert strict.run(write_suite(tmp_path / "strict", db, [case]), freeze=False, threads=(1,)) == 1
    assert len(strict.problems) == 1 and "f1: nondeterministic gold" in strict.problems[0], strict.problems
    tolerant = Capture()
    loose = dict(case, compare={"float_abs_tol": 0.1})
    assert tolerant.run(write_suite(tmp_path / "tolerant", db, [loose]), freeze=False, threads=(1,)) == 0, tolerant.err
    assert tolerant.problems == []


def test_grading_and_validate_share_one_policy_function() -> None:
    from pytest_sqleval.core.cases import ComparePolicy, parse_case
    case = parse_case({"id": "c", "question": "?", "gold_sql": "SELECT 1", "expected_shape": "empty",
                       "compare": {"float_rel_tol": 0.01, "order_matters": True}}, Path("q.jsonl"), 1)
    policy = ComparePolicy().for_case(case)
    assert (policy.float_rel_tol, policy.float_abs_tol, policy.order_matters, policy.allow_empty) == (0.01, 1e-9, True, True)
    assert ComparePolicy().for_case(None) == ComparePolicy()
