"""Hardening, second round, input side: a damaged gold cache is recomputed rather than
blamed on the prediction, per-case comparison overrides are validated at collection and
work, text files are read with or without a BOM and a non-UTF-8 one is one clear error,
the command line never ends bad input in a traceback, a predictions file made for
another suite is called out, and a backend's own traceback reaches the case's report."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest

from pytest_sqleval.core.cases import read_cases
from pytest_sqleval.core.errors import BadInputError
from tests.sqleval_helpers import SHOP_CASES, read_results, shop_suite, sqleval_ini  # noqa: F401

BOM = b"\xef\xbb\xbf"


# -- defect 9: a damaged gold cache entry --------------------------------------------------
GOLD = "SELECT region, count(*) AS n FROM customers GROUP BY region"


def _other_numbers(arrow: Path) -> None:
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.feather as feather
    table = feather.read_table(str(arrow))
    doubled = pa.table({name: (pc.multiply(col, 2) if pa.types.is_integer(col.type) else col)
                        for name, col in zip(table.column_names, table.columns)})
    feather.write_feather(doubled, str(arrow), compression="uncompressed")


DAMAGE: dict[str, Callable[[Path, Path], None]] = {
    "arrow deleted": lambda arrow, meta: arrow.unlink(),
    "arrow rewritten with other numbers": lambda arrow, meta: _other_numbers(arrow),
    "arrow truncated": lambda arrow, meta: arrow.write_bytes(arrow.read_bytes()[:40]),
    "json deleted": lambda arrow, meta: meta.unlink(),
    "json truncated": lambda arrow, meta: meta.write_text(meta.read_text()[:25]),
    "json not an object": lambda arrow, meta: meta.write_text("[1, 2]"),
    "json without a checksum": lambda arrow, meta: meta.write_text(json.dumps(
        {k: v for k, v in json.loads(meta.read_text()).items() if k != "arrow_sha256"})),
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_gold_cache_entry_is_recomputed_not_blamed_on_the_prediction(
        shop_db: Path, tmp_path: Path, damage: str) -> None:
    from pytest_sqleval.core.grading.pipeline import SuiteGrader
    g = SuiteGrader(shop_db, cache_dir=tmp_path)
    try:
        gold = g.gold(GOLD)
        assert g.gold_executions == 1
    finally:
        g.close()
    arrow, meta = tmp_path / "gold" / f"{gold.key}.arrow", tmp_path / "gold" / f"{gold.key}.json"
    DAMAGE[damage](arrow, meta)
    g = SuiteGrader(shop_db, cache_dir=tmp_path)  # a later run: a fresh engine process
    try:
        gold = g.gold(GOLD)
        verdict = g.grade(GOLD, gold)
        assert verdict.passed, (verdict.failure_kind, verdict.explanation)
        assert g.gold_executions == 1  # discarded and computed again
        assert "arrow_sha256" in json.loads(meta.read_text())  # and stored whole again
        assert g.grade("SELECT region, count(*) + 1 FROM customers GROUP BY region", gold).error_class == "wrong_metric"
    finally:
        g.close()


# -- defect 13: per-case comparison overrides ----------------------------------------------
def _case(**extra: Any) -> str:
    return json.dumps({"id": "q01", "question": "?", "gold_sql": "SELECT 1", **extra}) + "\n"


@pytest.mark.parametrize("compare, needles", [
    ({"order_matter": False}, ["field 'compare.order_matter'", "did you mean 'order_matters'"]),
    ({"float_rel_tolerance": 0.01}, ["field 'compare.float_rel_tolerance'", "did you mean 'float_rel_tol'"]),
    ({"float_rel_tol": "0.01"}, ["field 'compare.float_rel_tol'", "expected a finite number at least 0, got '0.01'"]),
    ({"float_abs_tol": True}, ["field 'compare.float_abs_tol'", "expected a finite number at least 0, got True"]),
    ({"float_abs_tol": -1}, ["field 'compare.float_abs_tol'", "expected a finite number at least 0, got -1"]),
    ({"order_matters": "no"}, ["field 'compare.order_matters'", "expected true or false"]),
    ({"allow_empty": True}, ["field 'compare.allow_empty'", '"expected_shape": "empty"']),
    ([["order_matters", False]], ["field 'compare'", "must be a JSON object"]),
])
def test_a_bad_per_case_compare_override_names_file_line_and_field(
        tmp_path: Path, compare: Any, needles: list[str]) -> None:
    path = tmp_path / "questions.jsonl"
    path.write_text(_case() .replace('"q01"', '"q00"') + _case(compare=compare))
    with pytest.raises(BadInputError) as info:
        read_cases(path)
    message = str(info.value)
    assert message.startswith(f"{path}:2: ")
    for needle in needles:
        assert needle in message
    assert "fix:" in message


def test_conflicting_order_matters_on_the_case_and_in_its_compare_object(tmp_path: Path) -> None:
    path = tmp_path / "questions.jsonl"
    path.write_text(_case(order_matters=True, compare={"order_matters": False}))
    with pytest.raises(BadInputError, match=r"questions.jsonl:1: field 'compare.order_matters': .*conflicts"):
        read_cases(path)


def test_per_case_compare_overrides_are_read_as_typed_values(tmp_path: Path) -> None:
    path = tmp_path / "questions.jsonl"
    path.write_text(_case(compare={"order_matters": False, "float_rel_tol": 0, "float_abs_tol": 0.5}))
    (case,) = read_cases(path)
    assert case.order_matters is False
    assert case.metadata["compare"] == {"float_rel_tol": 0.0, "float_abs_tol": 0.5}


def test_the_documented_per_case_compare_override_works(
        pytester: pytest.Pytester, make_suite: Callable[..., Path]) -> None:
    cases = [{"id": "q00", "question": "?", "gold_sql": "SELECT count(*) FROM customers"},
             {"id": "q01", "question": "?", "gold_sql": "SELECT id FROM products ORDER BY id",
              "compare": {"order_matters": False}},
             {"id": "q02", "question": "?", "gold_sql": "SELECT 1.0::DOUBLE AS x", "compare": {"float_abs_tol": 0.2}}]
    make_suite(cases)
    preds = {"q00": "SELECT count(*) FROM customers", "q01": "SELECT id FROM products ORDER BY id DESC",
             "q02": "SELECT 1.1::DOUBLE AS x"}
    (pytester.path / "p.jsonl").write_text("".join(json.dumps({"id": k, "sql": v}) + "\n" for k, v in preds.items()))
    result = pytester.runpytest("--sqleval-backend=predictions:p.jsonl")
    result.assert_outcomes(passed=3)
    assert "LOST" not in result.stdout.str()


def test_a_bad_per_case_override_is_one_collection_error_without_a_traceback(
        pytester: pytest.Pytester, make_suite: Callable[..., Path]) -> None:
    make_suite([SHOP_CASES[0], {**SHOP_CASES[1], "compare": {"order_matter": False}}])
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.INTERRUPTED
    out = result.stdout.str()
    assert "suite/questions.jsonl:2: field 'compare.order_matter'" in out and "did you mean 'order_matters'" in out
    assert "Traceback" not in out and len(out.splitlines()) < 40


# -- defect 14: encodings -------------------------------------------------------------------
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


# -- defect 15: the command line ------------------------------------------------------------
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


# -- defect 16: a predictions file made for another suite -----------------------------------
def _preds(pytester: pytest.Pytester, ids: list[str], name: str = "p.jsonl") -> None:
    (pytester.path / name).write_text("".join(json.dumps({"id": i, "sql": "SELECT 1"}) + "\n" for i in ids))


def test_predictions_for_another_suite_entirely_are_a_usage_error(
        pytester: pytest.Pytester, shop_suite: Path) -> None:
    _preds(pytester, [f"x{i:02d}" for i in range(1, 9)])
    result = pytester.runpytest("--sqleval-backend=predictions:p.jsonl")
    assert result.ret != pytest.ExitCode.OK
    out = result.stdout.str()
    assert "none of the 8 ids in" in out and "p.jsonl" in out and "suite 'suite'" in out
    assert "x01" in out and "Traceback" not in out
    result.assert_outcomes(errors=1)


def test_predictions_mostly_for_another_suite_warn_once_with_counts(
        pytester: pytest.Pytester, shop_suite: Path) -> None:
    _preds(pytester, ["q01", "q02"] + [f"x{i:02d}" for i in range(1, 7)])
    result = pytester.runpytest("--sqleval-backend=predictions:p.jsonl,gold", "-p", "no:randomly")
    out = result.stdout.str()
    assert out.count("2 of the 8 ids in") == 1, out
    assert "4 of its 6 cases have no prediction" in out and "x01" in out and "q03" in out
    assert "fail as no_prediction" in out
    result.assert_outcomes(passed=6, failed=6, errors=0)


def test_predictions_that_cover_the_suite_say_nothing(pytester: pytest.Pytester, shop_suite: Path) -> None:
    _preds(pytester, ["q01", "q02", "q03", "q04", "q05"])
    result = pytester.runpytest("--sqleval-backend=predictions:p.jsonl")
    assert "ids in" not in result.stdout.str() and "warning" not in result.stdout.str().lower()


# -- defect 17: a backend's own traceback ---------------------------------------------------
BOOM = '''
def _call_model(case):
    raise RuntimeError("model exploded")


def generate(case):
    if case.id == "q01":
        return _call_model(case)
    return case.gold_sql
'''


@pytest.mark.parametrize("tb", ["auto", "short", "long", "no"])
def test_a_backend_exception_shows_the_backends_own_traceback(
        pytester: pytest.Pytester, make_suite: Callable[..., Path], tb: str) -> None:
    make_suite(SHOP_CASES[:2])
    pytester.makepyfile(boom=BOOM)
    result = pytester.runpytest("--sqleval-backend=boom:generate", f"--tb={tb}")
    result.assert_outcomes(passed=1, errors=1)
    out = result.stdout.str()
    if tb == "no":
        assert "_call_model" not in out
        return
    assert "backend generate failed on q01: RuntimeError: model exploded" in out
    assert "boom.py:2" in out and "boom.py:7" in out  # both of the backend's frames, by file and line
    assert 'raise RuntimeError("model exploded")' in out
    assert "return _call_model(case)" in out  # the user's calling frame
    report = out.split("ERROR at setup")[1].split("sqleval summary")[0]
    assert "pytest_sqleval" not in report and "asyncio" not in report and "concurrent" not in report  # no plumbing
    if tb == "long":
        assert "def _call_model(case):" in out and "def generate(case):" in out
