"""Text files are read with or without a BOM, and a file that is not UTF-8 is one clear error
naming the line of its first bad byte, never an internal error."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import pytest

from pytest_sqleval.core.cases import read_cases
from pytest_sqleval.core.errors import BadInputError
from tests.sqleval_helpers import SHOP_CASES, sqleval_ini  # noqa: F401

BOM = b"\xef\xbb\xbf"


# -- encodings -------------------------------------------------------------------
QUESTIONS = "".join(json.dumps(c) + "\n" for c in SHOP_CASES[:3])


def test_a_bom_is_accepted_on_every_text_file_we_read(tmp_path: Path) -> None:
    from pytest_sqleval.core.backends.registry import read_predictions
    from pytest_sqleval.core.cases import load_manifest
    from pytest_sqleval.core.cases import read_records
    (tmp_path / "q.jsonl").write_bytes(BOM + QUESTIONS.encode())
    assert [c.id for c in read_cases(tmp_path / "q.jsonl")] == ["q01", "q02", "q03"]
    (tmp_path / "p.jsonl").write_bytes(BOM + b'{"id": "q01", "sql": "SELECT 1"}\n{"id": "q02", "sql": "SELECT 2"}\n')
    assert set(read_predictions(tmp_path / "p.jsonl")) == {"q01", "q02"}  # not Spider's one SQL per line
    (tmp_path / "bird.json").write_bytes(BOM + b'{"0": "SELECT 1\\t----- bird -----\\tdb"}')
    assert read_predictions(tmp_path / "bird.json") == {"0": ("SELECT 1", {"db_id": "db"})}
    (tmp_path / "dev.json").write_bytes(BOM + b'[{"db_id": "d", "question": "?", "query": "SELECT 1"}]')
    assert [obj["db_id"] for _, obj in read_records(tmp_path / "dev.json")] == ["d"]
    (tmp_path / "shop.duckdb").write_bytes(b"")
    (tmp_path / "sqleval.toml").write_bytes(BOM + b'[suite]\nquestions = "q.jsonl"\ndatabase = "shop.duckdb"\n')
    assert load_manifest(tmp_path / "sqleval.toml").questions == tmp_path / "q.jsonl"


@pytest.mark.parametrize("name, reader", [
    ("questions.jsonl", "cases"), ("predictions.jsonl", "predictions"), ("pred.sql", "predictions"),
    ("dev.json", "records"), ("sqleval.toml", "manifest"),
])
def test_a_file_that_is_not_utf8_names_the_line_of_the_first_bad_byte(tmp_path: Path, name: str, reader: str) -> None:
    from pytest_sqleval.core.backends.registry import read_predictions
    from pytest_sqleval.core.cases import load_manifest
    from pytest_sqleval.core.cases import read_records
    lines = {"cases": QUESTIONS.splitlines(), "predictions": ['{"id": "q01", "sql": "SELECT 1"}'] * 3,
             "records": ["[", '{"db_id": "d", "question": "?", "query": "SELECT 1"},',
                         '{"db_id": "d", "question": "?", "query": "SELECT 2"}', "]"],
             "manifest": ["[suite]", 'questions = "q.jsonl"', 'name = "x"']}[reader]
    if name == "pred.sql":
        lines = ["SELECT 1", "SELECT 2", "SELECT 3"]
    lines[2] = lines[2].replace("?", "caf\xe9?").replace("SELECT", "SELECT 'caf\xe9',").replace('"x"', '"caf\xe9"')
    path = tmp_path / name
    path.write_bytes("\n".join(lines).encode("latin-1") + b"\n")
    read = {"cases": read_cases, "predictions": read_predictions, "manifest": load_manifest,
            "records": lambda p: list(read_records(p))}[reader]
    with pytest.raises(BadInputError) as info:
        read(path)
    message = str(info.value)
    assert message.startswith(f"{path}:3: ") and "not UTF-8" in message and "0xe9" in message
    assert "save it as UTF-8" in message


@pytest.mark.parametrize("which", ["questions", "predictions"])
def test_latin1_input_is_one_clear_error_not_an_internal_error(
        pytester: pytest.Pytester, make_suite: Callable[..., Path], which: str) -> None:
    root = make_suite(SHOP_CASES[:2])
    preds = '{"id": "q01", "sql": "SELECT 1"}\n{"id": "q02", "sql": "SELECT \'caf\xe9\'"}\n'
    (pytester.path / "p.jsonl").write_bytes(preds.encode("latin-1"))
    if which == "questions":
        (root / "questions.jsonl").write_bytes(QUESTIONS.replace("How many", "Caf\xe9: how many").encode("latin-1"))
        result = pytester.runpytest()
        assert result.ret == pytest.ExitCode.INTERRUPTED
        text, where = result.stdout.str(), "suite/questions.jsonl:1: "
    else:
        result = pytester.runpytest("--sqleval-backend=predictions:p.jsonl")
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        text, where = result.stderr.str(), "p.jsonl:2: "
    assert where in text and "save it as UTF-8" in text
    assert "INTERNALERROR" not in text + result.stdout.str() and "Traceback" not in text


def test_a_bom_on_questions_and_predictions_grades_normally(
        pytester: pytest.Pytester, make_suite: Callable[..., Path]) -> None:
    root = make_suite(SHOP_CASES[:2])
    (root / "questions.jsonl").write_bytes(BOM + (root / "questions.jsonl").read_bytes())
    preds = "".join(json.dumps({"id": c["id"], "sql": c["gold_sql"]}) + "\n" for c in SHOP_CASES[:2])
    (pytester.path / "p.jsonl").write_bytes(BOM + preds.encode())
    result = pytester.runpytest("--sqleval-backend=predictions:p.jsonl")
    result.assert_outcomes(passed=2)

