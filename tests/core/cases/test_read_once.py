"""Reading a suite's inputs does each piece of work once: a predictions file is read from
disk once however many layouts look at it (and its digest hashes those same bytes), and
the JSON lines are the same values, lines and errors as a file read line by line. No clock:
speed is measured in bench/owncost_bench.py."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_sqleval.core.backends import BackendOptions
from pytest_sqleval.core.backends.registry import _predictions_backend, read_predictions
from pytest_sqleval.core.errors import BadInputError
from pytest_sqleval.core.textio import iter_jsonl, read_text


def _count_reads(monkeypatch: pytest.MonkeyPatch, target: Path) -> list[str]:
    """Every opening of ``target`` (``Path.open``, which ``read_bytes`` and ``read_text`` call), by mode."""
    reads: list[str] = []
    original = Path.open

    def counted(self: Path, mode: str = "r", *a: Any, **k: Any) -> Any:
        if self == target:
            reads.append(mode)
        return original(self, mode, *a, **k)
    monkeypatch.setattr(Path, "open", counted)
    return reads


@pytest.mark.parametrize("kind", ["jsonl", "spider", "bird"])
def test_a_predictions_file_is_read_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    """Each built-in layout looks at the file to tell whether it is its format, our JSONL
    reader reads it, and the backend hashes it for its generation key: one read in all
    (four before: Spider's check, BIRD's check, the JSONL lines and the digest)."""
    path = tmp_path / "preds.txt"
    if kind == "jsonl":
        path.write_text("".join(json.dumps({"id": f"q{i}", "sql": f"SELECT {i}"}) + "\n" for i in range(5)))
    elif kind == "spider":
        path.write_text("".join(f"SELECT {i}\tdb\n" for i in range(5)))
    else:
        path.write_text(json.dumps({str(i): f"SELECT {i}\t----- bird -----\tdb" for i in range(5)}))
    reads = _count_reads(monkeypatch, path)
    backend = _predictions_backend("predictions:preds.txt", str(path), BackendOptions(rootdir=str(tmp_path)))
    assert len(backend.predictions) == 5  # type: ignore[attr-defined]
    assert backend.predictions[("q3" if kind == "jsonl" else "3")][0] == "SELECT 3"  # type: ignore[attr-defined]
    assert reads == ["rb"], reads
    import hashlib
    assert hashlib.sha256(path.read_bytes()).hexdigest()[:16] in backend.description  # the same digest as before


@pytest.mark.parametrize("text", [
    '{"id": "a", "sql": "SELECT 1"}\r\n\r\n{"id": "b", "sql": "SELECT 2"}\r\n',
    '\ufeff{"id": "a", "sql": "SELECT 1"}\n  \n{"id": "b", "sql": "SELECT \\u2028 2"}',
    '{"id": "a", "sql": "SELECT 1"}\r{"id": "b", "sql": "SELECT \u2028 2"}\n',  # a raw U+2028 inside a string
    '{"id": "a", "sql": "SELECT 1"}\n{"id": "b", "sql": \n',
])
def test_lines_of_a_text_read_once_are_the_file_s_lines(tmp_path: Path, text: str) -> None:
    """Universal newlines, a BOM, blank lines, a line separator inside a JSON string: the
    same (line, value) pairs and the same located error as reading the file line by line."""
    from pytest_sqleval.core.textio import iter_jsonl_text
    path = tmp_path / "p.jsonl"
    path.write_bytes(text.encode("utf-8"))

    def pairs(values: Any) -> Any:
        try:
            return list(values)
        except BadInputError as exc:
            return str(exc)
    expected = pairs(iter_jsonl(path, fix="fix it"))
    assert pairs(iter_jsonl_text(read_text(path), path, fix="fix it")) == expected
    if not isinstance(expected, str):
        assert read_predictions(path) == {"a": ("SELECT 1", {}), "b": (expected[1][1]["sql"], {})}


#: records of every shape the reader takes: plain ones and the rest
RECORDS: list[Any] = [
    {"id": "q1", "question": "How many?", "gold_sql": "SELECT 1"},
    {"id": "q2", "question": "Q", "gold_sql": "SELECT 2", "difficulty": "hard", "expected_shape": "empty",
     "complexity": "join", "category": "sales", "schema": "s", "tags": ["a", "b c"], "order_matters": True},
    {"id": "q3", "question": "Q", "gold_sql": "SELECT 3", "expected_shape": "null", "tags": [], "order_matters": False},
    {"id": "q4", "question": "Q", "gold_sql": "SELECT 4", "tags": None, "difficulty": None, "split": "held",
     "db_id": "shop", "note": {"x": [1, 2]}},
    {"id": "q5", "question": "Q", "gold_sql": "SELECT 5", "expected_shape": "empty"},
    {"id": 6, "question": "Q", "gold_sql": "SELECT 6"},  # an int id: parse_case's
    {"qid": "q7", "question": "Q", "gold_sql": "SELECT 7"},
    {"id": "q8", "question": "Q", "gold_sql": ["SELECT 8", "SELECT 8.0"]},
    {"id": "q9", "question": "Q", "gold_sql": "SELECT 9", "tags": "one"},
    {"id": "q10", "question": "Q", "gold_sql": "SELECT 10", "compare": {"float_abs_tol": 0.5}},
    {"id": "q11", "question": "Q", "gold_sql": "SELECT 11", "gold_sql_spark": "SELECT 11"},
    {"id": "q12", "question": "Q", "gold_sql": "SELECT 12", "tags": 0},
]


def test_a_suite_s_record_is_the_case_parse_case_makes(tmp_path: Path) -> None:
    """Every field, the metadata, the source and the policy (shared within the suite, not
    rebuilt) are those of ``parse_case`` on the record alone, and the case filled at once
    (``BenchmarkCase.of_checked``) is the one the dataclass makes of its fields."""
    import dataclasses

    from pytest_sqleval.core.cases import BenchmarkCase, ComparePolicy, parse_case, validate_records
    path = tmp_path / "questions.jsonl"
    policy = ComparePolicy(float_rel_tol=1e-3)
    cases = validate_records(list(enumerate(RECORDS, 1)), path, "shop", policy)
    for line, (obj, case) in enumerate(zip(RECORDS, cases), 1):
        expected = parse_case(json.loads(json.dumps(obj)), path, line, "shop", policy)
        for f in dataclasses.fields(expected):
            assert getattr(case, f.name) == getattr(expected, f.name), (obj, f.name)
        assert type(case.tags) is tuple and type(case.golds) is tuple
        assert case.content_hash == expected.content_hash and case.to_dict() == expected.to_dict()
        made = BenchmarkCase(**{f.name: getattr(case, f.name) for f in dataclasses.fields(case)})
        assert vars(made) == vars(case)
    assert RECORDS[3]["tags"] is None  # the records are left as they were given


@pytest.mark.parametrize("bad", [
    {"id": "q 1", "question": "Q", "gold_sql": "SELECT 1"},
    {"id": "q1", "question": " ", "gold_sql": "SELECT 1"},
    {"id": "q1", "question": "Q", "gold_sql": ""},
    {"id": "q1", "question": "Q", "gold_sql": "SELECT 1", "expected_shape": "blob"},
    {"id": "q1", "question": "Q", "gold_sql": "SELECT 1", "tags": ["a", ""]},
    {"id": "q1", "question": "Q", "gold_sql": "SELECT 1", "order_matters": "yes"},
    {"id": "q1", "question": "Q", "gold_sql": "SELECT 1", "difficulty": 3},
])
def test_a_bad_record_gets_parse_case_s_error(tmp_path: Path, bad: dict[str, Any]) -> None:
    from pytest_sqleval.core.cases import parse_case, validate_records
    path = tmp_path / "questions.jsonl"
    with pytest.raises(BadInputError) as expected:
        parse_case(dict(bad), path, 2)
    with pytest.raises(BadInputError) as got:
        validate_records([(2, bad)], path)
    assert str(got.value) == str(expected.value) and f"{path}:2" in str(got.value)


def test_the_suite_policy_is_resolved_once_per_kind_of_case(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A suite of 300 plain cases of three kinds (order_matters, expected_shape) resolves its
    comparison policy three times, not once per case; cases of a kind share it."""
    from pytest_sqleval.core.cases import ComparePolicy, read_cases
    calls = []
    original = ComparePolicy.for_case_fields
    monkeypatch.setattr(ComparePolicy, "for_case_fields",
                        lambda self, *a: calls.append(a) or original(self, *a))
    path = tmp_path / "questions.jsonl"
    kinds = [{}, {"expected_shape": "empty"}, {"order_matters": True}]
    path.write_text("".join(json.dumps({"id": f"q{i}", "question": "Q", "gold_sql": "SELECT 1", **kinds[i % 3]}) + "\n"
                            for i in range(300)))
    cases = read_cases(path, "s", policy=ComparePolicy())
    assert len(calls) == 3, len(calls)
    assert cases[1].policy is cases[4].policy and cases[1].policy is not None and cases[1].policy.allow_empty
    assert cases[2].policy is not None and cases[2].policy.order_matters is True
