"""The case record: one typed ``CaseRecord`` inside, its JSON object only at the edges
(results.jsonl, the json-report, the xdist wire), converted by ``to_json_dict`` and
``from_json_dict`` and nowhere else."""
from __future__ import annotations

import json
import string
from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_sqleval.core.errors import BadInputError
from pytest_sqleval.core.records import (JSON_KEYS, KNOWN_VERSIONS, RECORD_VERSION, CaseRecord, GenerationInfo,
                                         StructureMatch)
from pytest_sqleval.reports.table import read_records
from tests.sqleval_helpers import NAIVE_SQL, shop_suite, sqleval_ini, write_predictions  # noqa: F401

# -- any record: a JSON round trip gives it back ------------------------------------------
_text = st.text(string.ascii_letters + string.digits + " _-'é…", max_size=12)
_json = st.recursive(st.none() | st.booleans() | st.integers(-10**6, 10**6)
                     | st.floats(allow_nan=False, allow_infinity=False) | _text,
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
                     max_leaves=6)
_mapping = st.dictionaries(_text, _json, max_size=3)
_evidence = st.none() | _mapping
_opt_text = st.none() | _text
_opt_bool = st.none() | st.booleans()
_texts = st.lists(_text, max_size=3).map(tuple)
_names = st.lists(st.fixed_dictionaries({"name": _text, "line": st.none() | st.integers(1, 99),
                                         "col": st.none() | st.integers(1, 99)}), max_size=2).map(tuple)

records = st.builds(
    CaseRecord, backend=_text, status=st.sampled_from(["passed", "failed", "undecidable", "error"]),
    record_version=st.sampled_from(list(KNOWN_VERSIONS)), case_id=_text, suite=_opt_text, nodeid=_text,
    question=_opt_text, gold_sql=_opt_text, generated_sql=_opt_text, backend_spec=_opt_text,
    backend_metadata=_mapping, passed=st.booleans(), tie_only=st.booleans(), parse_ok=_opt_bool,
    grounding_ok=_opt_bool, hallucinated_tables=_names, hallucinated_columns=_names, error_class=_opt_text,
    failure_kind=_opt_text, explanation=_opt_text, confidence=st.none() | st.floats(0, 1), severity=_opt_text,
    case_error=_opt_text, deterministic_verdict=_opt_text, decided_by=_opt_text, equivalence=_opt_text,
    rationale=_opt_text, ai_advisory_verdict=_opt_text, verdict_consistency_flag=_opt_text, judge=_evidence,
    blocked_reason=_opt_text, warnings=_texts,
    structure_match=st.builds(StructureMatch, _opt_bool, _opt_bool, _opt_bool), stale_tables=_texts,
    difficulty=_opt_text, expected_shape=_opt_text, complexity=_opt_text, category=_opt_text, schema=_opt_text,
    tags=_texts, case_metadata=_mapping, execution=_evidence, compare=_evidence,
    layers=st.dictionaries(_text, _mapping, max_size=3), executed_sql=_opt_text, gold=_evidence,
    generation=st.none() | st.builds(GenerationInfo, _opt_bool, st.none() | st.floats(0, 1e6), _opt_text),
    database=_opt_text, content_hash=_opt_text, engine=_opt_text, engine_version=_opt_text,
    grading_ms=st.none() | st.floats(0, 1e6), run_metadata=_mapping, sidebyside=_evidence,
    extra=st.dictionaries(_text.filter(lambda k: k not in JSON_KEYS), _json, max_size=3))


@settings(max_examples=200, deadline=None)
@given(records)
def test_any_record_comes_back_from_its_json(record: CaseRecord) -> None:
    data = record.to_json_dict()
    assert CaseRecord.from_json_dict(data) == record
    assert CaseRecord.from_json_dict(json.loads(json.dumps(data))) == record  # through the text of a results line
    assert list(data)[:len(JSON_KEYS)] == list(CaseRecord(backend="", status="").to_json_dict())  # extras come last
    assert {k: data[k] for k in record.extra} == dict(record.extra)  # a plugin's fields stay flat


# -- a real run's records ------------------------------------------------------------------
CONFTEST = "import pytest\n\n@pytest.hookimpl\ndef pytest_sqleval_record_fields(record):\n" \
           "    return {'team': 'data-platform', 'seen_status': record['status']}\n"


def test_a_runs_records_parse_and_serialise_to_the_same_json(pytester: pytest.Pytester, shop_suite: Path,
                                                             write_predictions: Callable[..., Path]) -> None:
    """Every line of results.jsonl and every json-report record parses into a CaseRecord that
    writes the same JSON again, byte for byte, a plugin's fields included."""
    pytester.makeconftest(CONFTEST)
    write_predictions(NAIVE_SQL, name="naive.jsonl", model="naive-model")
    result = pytester.runpytest("--sqleval-backend=gold,predictions:naive.jsonl", "--json-report",
                                "--json-report-file=report.json", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    lines = (pytester.path / "sqleval-results" / "results.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2 * len(NAIVE_SQL)
    statuses = set()
    for line in lines:
        data = json.loads(line)
        record = CaseRecord.from_json_dict(data)
        assert record.to_json_dict() == data
        assert json.dumps(record.to_json_dict(), default=str, sort_keys=True) == line
        assert record.record_version == RECORD_VERSION and data["record_version"] == RECORD_VERSION
        assert dict(record.extra) == {"team": "data-platform", "seen_status": record.status}
        assert record.passed is data["pass"] and record.structure_match.exact_match is data["exact_match"]
        assert record.generation is not None and record.generation.elapsed_ms == data["generation"]["elapsed_ms"]
        statuses.add(record.status)
    assert statuses == {"passed", "failed"}
    _, read = read_records(pytester.path / "sqleval-results")
    assert [r.to_json_dict() for r in read] == [json.loads(line) for line in lines]
    report = json.loads((pytester.path / "report.json").read_text(encoding="utf-8"))
    for test in report["tests"]:
        data = test["metadata"]["sqleval"]
        assert list(CaseRecord.from_json_dict(data).to_json_dict().items()) == list(data.items())  # key order too


# -- a record this release cannot read -----------------------------------------------------
def _results(tmp_path: Path, *records: dict[str, Any]) -> Path:
    path = tmp_path / "results.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_a_record_of_an_unknown_version_names_file_line_and_fix(tmp_path: Path) -> None:
    good = CaseRecord(backend="gold", status="passed", case_id="q1", nodeid="s::q1").to_json_dict()
    path = _results(tmp_path, good, {**good, "record_version": RECORD_VERSION + 1})
    with pytest.raises(BadInputError) as info:
        read_records(path)
    text = str(info.value)
    assert text.startswith(f"{path}:2: field 'record_version': record version {RECORD_VERSION + 1} is not one")
    assert "fix: read it with the pytest-sqleval release that wrote it" in text
    for version in ("2", None, True, 0):
        with pytest.raises(BadInputError, match="record version"):
            CaseRecord.from_json_dict({**good, "record_version": version})


def test_a_record_without_its_required_keys_names_file_line_and_fix(tmp_path: Path) -> None:
    good = CaseRecord(backend="gold", status="passed").to_json_dict()
    for missing in ("backend", "status"):
        path = _results(tmp_path, good, {k: v for k, v in good.items() if k != missing})
        with pytest.raises(BadInputError) as info:
            read_records(path)
        assert str(info.value).startswith(f"{path}:2: not a case record (no 'backend' or 'status')")
        assert "fix: give sqleval-results/results.jsonl as a run wrote it" in str(info.value)
    with pytest.raises(BadInputError, match="not a case record"):
        CaseRecord.from_json_dict(["not", "an", "object"])


def test_a_record_of_an_older_version_is_read() -> None:
    """Version 1 records (before undecidable and tie-only) hold the same fields; they stay readable."""
    old = {"record_version": 1, "backend": "b", "status": "failed", "case_id": "q1", "error_class": "other"}
    record = CaseRecord.from_json_dict(old)
    assert (record.record_version, record.status, record.error_class, record.tie_only) == (1, "failed", "other", False)


def test_usage_reads_only_finite_numbers_from_the_backends_metadata() -> None:
    """What the ablation averages: a bool, a NaN, a text or a missing figure is not reported."""
    meta = {"n_llm_calls": 3, "prompt_tokens": 90.5, "completion_tokens": True, "total_tokens": float("nan"),
            "cost_usd": "0.01", "model": "m"}
    usage = CaseRecord(backend="a1", status="passed", backend_metadata=meta).usage
    assert (usage.n_llm_calls, usage.prompt_tokens, usage.completion_tokens, usage.total_tokens, usage.cost_usd,
            usage.latency_ms) == (3.0, 90.5, None, None, None, None)
