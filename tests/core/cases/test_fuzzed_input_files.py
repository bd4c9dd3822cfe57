"""Fuzzed input files (hypothesis, 150 examples each): the case reader, the predictions reader
and the manifest loader fail only with an error naming the file, the line and the fix."""
from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_sqleval.core.cases import load_manifest, read_cases
from pytest_sqleval.core.backends.registry import read_predictions
from pytest_sqleval.core.errors import BadInputError


# -- fuzzed input files --------------------------------------------------------------------
_json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                            lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                            max_leaves=8)
_case_like = st.fixed_dictionaries({}, optional={
    "id": st.one_of(st.text(max_size=6), st.integers(), st.none()), "question": _json_values,
    "gold_sql": st.one_of(st.just("SELECT 1"), _json_values), "tags": _json_values, "order_matters": _json_values,
    "expected_shape": st.one_of(st.sampled_from(["scalar", "table", "empty", "blob"]), _json_values),
    "difficulty": _json_values})
_lines = st.lists(st.one_of(_case_like.map(json.dumps), st.text(max_size=30), _json_values.map(json.dumps)), max_size=6)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=_lines)
def test_case_reader_fails_only_with_a_located_error(tmp_path: Path, lines: list[str]) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text("\n".join(line.replace("\n", " ") for line in lines) + "\n", encoding="utf-8")
    try:
        cases = read_cases(path)
    except BadInputError as exc:
        assert str(path) in str(exc) and exc.line is not None and exc.fix
    else:
        assert len({c.id for c in cases}) == len(cases)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=_lines)
def test_predictions_reader_fails_only_with_a_located_error(tmp_path: Path, lines: list[str]) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text("\n".join(line.replace("\n", " ") for line in lines) + "\n", encoding="utf-8")
    try:
        read_predictions(path)
    except BadInputError as exc:
        assert str(path) in str(exc) and exc.line is not None and exc.fix


_toml_values = st.one_of(st.text(max_size=10).map(json.dumps), st.integers().map(str), st.booleans().map(str).map(str.lower),
                         st.just("[1, 2]"), st.just('["legacy.*"]'), st.just("{"), st.just("1e-6"))
_toml_keys = st.sampled_from(["name", "questions", "database", "dialect", "build", "deprecated_tables", "schema",
                              "order_matters", "float_rel_tol", "timeout_s", "max_rows", "threads", "databse", "x"])
_sections = st.sampled_from(["[suite]", "[compare]", "[limits]", "[suit]", "", "[[suite]]"])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=st.lists(st.one_of(_sections, st.tuples(_toml_keys, _toml_values).map(lambda kv: f"{kv[0]} = {kv[1]}")),
                     max_size=8))
def test_manifest_loader_fails_only_with_a_located_error(tmp_path: Path, body: list[str]) -> None:
    (tmp_path / "questions.jsonl").write_text('{"id": "q1", "question": "?", "gold_sql": "SELECT 1"}\n')
    path = tmp_path / "sqleval.toml"
    path.write_text("\n".join(body) + "\n", encoding="utf-8")
    try:
        load_manifest(path)
    except BadInputError as exc:
        assert str(path) in str(exc) and exc.fix

