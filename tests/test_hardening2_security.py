"""Hardening, second round: routes by which a prediction was graded as something it is not.

- backend labels that collide, so one predictions file silently stands in for another;
- the library API's deprecated-table patterns (defaults when left out, ``[]`` = none);
- the PostgreSQL sandbox: functions reached by quoting, schema qualification or an
  unlisted SQL-running function, a session killed from inside, a role undone with
  ``set_config``, and a superuser connection.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_sqleval.backends.base import Backend, BackendOptions
from pytest_sqleval.backends import registry
from tests.sqleval_helpers import gen_cases, read_results, sqleval_ini  # noqa: F401  (fixture)


# -- backend labels ------------------------------------------------------------------------
async def _never(case: Any) -> str:  # pragma: no cover - never called
    return ""


@pytest.mark.parametrize(("derived", "expected"), [
    (["run1", "run1", "run12"], ["run1", "run13", "run12"]),
    (["run12", "run1", "run1"], ["run12", "run1", "run13"]),
    (["gold", "gold"], ["gold", "gold2"]),
    (["a", "a", "a"], ["a", "a2", "a3"]),
    (["a", "a", "a2", "a3"], ["a", "a4", "a2", "a3"]),
    (["a", "b", "c"], ["a", "b", "c"]),
], ids=["issue_run1_run1_run12", "derived_name_first", "gold_twice", "three_alike", "suffixes_taken", "distinct"])
def test_backend_labels_are_unique_by_construction(derived: list[str], expected: list[str]) -> None:
    backends = [Backend(f"spec{i}", label, _never) for i, label in enumerate(derived)]
    registry.unique_labels(backends)
    assert [b.label for b in backends] == expected
    assert len(set(expected)) == len(expected)


def test_prediction_files_are_told_apart_by_path_and_content(tmp_path: Path) -> None:
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "run1.jsonl").write_text(json.dumps({"id": "q01", "sql": f"SELECT '{folder}'"}) + "\n")
    one, two = registry.resolve_backends("predictions:a/run1.jsonl,predictions:b/run1.jsonl",
                                BackendOptions(rootdir=str(tmp_path)))
    assert one.description != two.description
    assert str((tmp_path / "a" / "run1.jsonl").resolve()) in one.description
    from pytest_sqleval.cases import BenchmarkCase
    from pytest_sqleval.generation import _key
    case = BenchmarkCase(id="q01", question="?", gold_sql="SELECT 1")
    two.label = one.label  # even under one label, the generation key keeps them apart
    assert _key(one, case) != _key(two, case)


def test_three_prediction_files_whose_labels_collide_are_each_graded(
        pytester: pytest.Pytester, make_suite: Callable[..., Path]) -> None:
    """``a/run1``, ``b/run1`` (uniqued) and ``run12``: the third file is read, its wrong
    answers fail, and a 100 % gate does not pass the run."""
    make_suite(gen_cases(2))
    right = {f"q{i:02d}": f"SELECT count(*) FROM customers WHERE id <= {i}" for i in (1, 2)}
    for name in ("a/run1.jsonl", "b/run1.jsonl"):
        (pytester.path / name).parent.mkdir(exist_ok=True)
        (pytester.path / name).write_text("".join(json.dumps({"id": k, "sql": v}) + "\n" for k, v in right.items()))
    (pytester.path / "run12.jsonl").write_text("".join(json.dumps({"id": k, "sql": "SELECT -1"}) + "\n" for k in right))
    result = pytester.runpytest(
        "suite", "--sqleval-backend=predictions:a/run1.jsonl,predictions:b/run1.jsonl,predictions:run12.jsonl",
        "--sqleval-min-pass-rate=1.0", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=4, failed=2)
    assert result.ret != 0
    outcomes = {(r["case_id"], r["backend"]): r["pass"] for r in read_results(pytester.path)}
    assert outcomes == {("q01", "run1"): True, ("q02", "run1"): True, ("q01", "run13"): True,
                        ("q02", "run13"): True, ("q01", "run12"): False, ("q02", "run12"): False}


# -- the library API's deprecated tables ---------------------------------------------------
@pytest.fixture(scope="module")
def graveyard_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``orders`` and its frozen copies: ``orders_old``, ``orders_v1``, ``orders_bak``, ``legacy.orders``."""
    import duckdb
    path = tmp_path_factory.mktemp("graveyard") / "graveyard.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE orders AS SELECT range AS id FROM range(10)")
    for name in ("orders_old", "orders_v1", "orders_bak"):
        con.execute(f"CREATE TABLE {name} AS SELECT * FROM orders")
    con.execute("CREATE SCHEMA legacy")
    con.execute("CREATE TABLE legacy.orders AS SELECT * FROM orders")
    con.close()
    return path


_UNSET = object()


@pytest.mark.parametrize(("deprecated", "table", "stale"), [
    (_UNSET, "orders_old", True),
    (_UNSET, "orders_v1", True),
    (_UNSET, "orders_bak", True),
    (_UNSET, "legacy.orders", False),  # legacy.* is a suite's own pattern, not a default
    (None, "orders_old", True),
    ([], "orders_old", False),
    ((), "orders_bak", False),
    (["legacy.*"], "legacy.orders", True),
    (["legacy.*"], "orders_old", False),
    ("legacy.*", "legacy.orders", True),  # one string is one pattern
    ("legacy.*", "orders_old", False),
    (("*_old", "legacy.*"), "legacy.orders", True),
    (("*_old", "legacy.*"), "orders_v1", False),
], ids=lambda v: "unset" if v is _UNSET else repr(v))
def test_compare_applies_the_default_deprecated_patterns_unless_told_otherwise(
        graveyard_db: Path, deprecated: Any, table: str, stale: bool) -> None:
    from pytest_sqleval import compare
    kwargs = {} if deprecated is _UNSET else {"deprecated_tables": deprecated}
    v = compare(f"SELECT count(*) FROM {table}", "SELECT count(*) FROM orders", graveyard_db, **kwargs)
    assert v.layers["compare"]["match"] is True  # the numbers agree: only the table decides
    if stale:
        assert not v.passed and v.error_class == "stale_table" and v.stale_tables == [table], v.explanation
    else:
        assert v.passed and v.stale_tables == [], v.explanation


def test_compare_rejects_a_deprecated_list_that_is_not_patterns(graveyard_db: Path) -> None:
    from pytest_sqleval import compare
    with pytest.raises(TypeError, match="deprecated_tables must be table-name patterns"):
        compare("SELECT 1", "SELECT 1", graveyard_db, deprecated_tables=[None])
