"""The command line never ends bad input in a traceback: one line naming the problem, exit
code 2."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.sqleval_helpers import sqleval_ini  # noqa: F401


# -- the command line ------------------------------------------------------------
def _cli_inputs(tmp_path: Path) -> dict[str, tuple[list[str], str]]:
    corrupt = tmp_path / "corrupt.jsonl"
    corrupt.write_text('{"case_id": "q01", "backend": "gold", "status": "passed"}\n{"case_id": "q02", "pass": \n')
    not_objects = tmp_path / "lists.jsonl"
    not_objects.write_text("[1, 2]\n")
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes('{"case_id": "caf\xe9"}\n'.encode("latin-1"))
    text = tmp_path / "notes.txt"
    text.write_text("this is not a database\n")
    bad_suite = tmp_path / "bad_suite"
    bad_suite.mkdir()
    (bad_suite / "sqleval.toml").write_text("[suite\n")
    return {
        "summary corrupt": (["summary", str(corrupt)], f"{corrupt}:2"),
        "summary not objects": (["summary", str(not_objects)], f"{not_objects}:1"),
        "summary latin-1": (["summary", str(latin)], f"{latin}:1"),
        "summary missing": (["summary", str(tmp_path / "nope")], "nope"),
        "hash not a database": (["hash", str(text)], str(text)),
        "hash missing": (["hash", str(tmp_path / "nope.duckdb")], "nope.duckdb"),
        "validate missing": (["validate", str(tmp_path / "nowhere")], "nowhere"),
        "validate bad manifest": (["validate", str(bad_suite)], "sqleval.toml:1"),
        "report corrupt": (["report", str(corrupt), "--out", str(tmp_path / "report")], "corrupt.jsonl"),
        "report missing": (["report", str(tmp_path / "nope"), "--out", str(tmp_path / "report")], "nope"),
    }


@pytest.mark.parametrize("case", ["summary corrupt", "summary not objects", "summary latin-1", "summary missing",
                                  "hash not a database", "hash missing", "validate missing", "validate bad manifest",
                                  "report corrupt", "report missing"])
def test_cli_bad_input_is_one_line_and_exit_code_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                   case: str) -> None:
    from pytest_sqleval.cli import main
    argv, needle = _cli_inputs(tmp_path)[case]
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2, (out, err)
    assert "Traceback" not in out + err
    assert needle in err
    assert err.startswith("error: ")

