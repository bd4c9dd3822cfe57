"""The public extension points, used the way a team would from its conftest.py: a custom
grading layer (``pytest_sqleval_layers``), a custom error class
(``pytest_sqleval_classify``), record fields and summary lines, and a custom engine
(``register_engine``): nothing but the hooks and registries docs/how-to/extending.md documents."""
from __future__ import annotations

import json

import pytest

from tests.sqleval_helpers import read_results, read_summary, sqleval_ini  # noqa: F401  (fixture)
from tests.core.engines.test_engine_registry import MYDB_ENGINE, clean_registry, write_suite  # noqa: F401  (fixture)
from tests.core.test_registry import clean_registries  # noqa: F401  (fixture: the conftest's error class does not outlive it)

CONFTEST = MYDB_ENGINE.format(cls="MyDB", name="mydb", suffix=".mydb") + '''
import pytest
from sqlglot import exp

from pytest_sqleval.core.engines import register_engine
from pytest_sqleval.core.grading.error_classes import ErrorClass, register_error_class
from pytest_sqleval.core.grading.verdict import Classification

register_engine(MyDB)
register_error_class(ErrorClass("select_star", "projects * where the gold names its columns"))


class SelectStar:
    """Evidence: does the prediction project ``*``?"""

    name, ahead = "select_star", False

    def run(self, candidate):
        if candidate.tree is not None:
            star = any(isinstance(e, exp.Star) or isinstance(e, exp.Column) and isinstance(e.this, exp.Star)
                       for e in candidate.tree.selects)
            candidate.layers["select_star"] = {"star": star}


class Broken:
    name, ahead = "broken", False

    def run(self, candidate):
        raise RuntimeError("this layer has a bug")


@pytest.hookimpl
def pytest_sqleval_layers(layers, manifest):
    at = [layer.name for layer in layers].index("structure")
    layers.insert(at, SelectStar())
    layers.append(Broken())


@pytest.hookimpl
def pytest_sqleval_classify(evidence):
    if evidence.get("select_star").get("star") and evidence.executed:
        return Classification("select_star", "lint", "projects * where the gold names its columns", 0.9)
    return None


@pytest.hookimpl
def pytest_sqleval_record_fields(record):
    return {"team": "data-platform"}


@pytest.hookimpl
def pytest_sqleval_summary_lines(summary):
    return [f"team summary: {sum(b['passed'] for b in summary['backends'].values())} passed"]
'''


def test_a_conftest_adds_a_layer_an_error_class_and_an_engine(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    write_suite(pytester.path, "shop.mydb")
    (pytester.path / "naive.jsonl").write_text(
        json.dumps({"id": "n", "sql": "SELECT count(*) FROM singer"}) + "\n"
        + json.dumps({"id": "fr", "sql": "SELECT * FROM singer WHERE country = 'France'"}) + "\n")
    result = pytester.runpytest("suite", "--sqleval-backend=gold,predictions:naive.jsonl", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3, failed=1)
    records = {(r["case_id"], r["backend"]): r for r in read_results(pytester.path)}
    assert {r["engine"] for r in records.values()} == {"mydb"}  # the custom engine ran every query
    star = records[("fr", "naive")]
    assert star["layers"]["select_star"] == {"star": True}  # the custom layer's evidence is in the record
    assert (star["error_class"], star["failure_kind"]) == ("select_star", "lint")  # the custom class won
    assert records[("n", "naive")]["layers"]["select_star"] == {"star": False}
    assert records[("n", "naive")]["status"] == "passed"  # a layer's evidence decides nothing by itself
    # a layer with a bug leaves its error as evidence; no case is lost
    assert all(r["layers"]["broken"]["layer_error"] == "RuntimeError" for r in records.values())
    assert {r["team"] for r in records.values()} == {"data-platform"}
    assert read_summary(pytester.path)["backends"]["naive"]["error_classes"]["select_star"] == 1
    result.stdout.fnmatch_lines(["*select_star*1*", "team summary: 3 passed"])


def test_without_the_plugin_the_builtin_classes_decide(pytester: pytest.Pytester) -> None:
    """The same suite without the conftest's classifier: the built-in precedence answers."""
    pytester.makeconftest(MYDB_ENGINE.format(cls="MyDB", name="mydb", suffix=".mydb")
                          + "\nfrom pytest_sqleval.core.engines import register_engine\nregister_engine(MyDB)\n")
    write_suite(pytester.path, "shop.mydb")
    (pytester.path / "naive.jsonl").write_text(
        json.dumps({"id": "fr", "sql": "SELECT * FROM singer WHERE country = 'France'"}) + "\n")
    result = pytester.runpytest("suite", "--sqleval-backend=predictions:naive.jsonl", "-k", "fr",
                                "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    (record,) = read_results(pytester.path)
    assert record["error_class"] == "other" and record["failure_kind"] == "projection_mismatch"
    assert "select_star" not in record["layers"] and "team" not in record


def test_a_record_field_may_not_replace_the_records_own(pytester: pytest.Pytester) -> None:
    pytester.makeconftest("import pytest\n\n@pytest.hookimpl\ndef pytest_sqleval_record_fields(record):\n"
                          "    return {'status': 'passed'}\n")
    write_suite(pytester.path, "shop.sqlite")
    result = pytester.runpytest("suite", "-p", "no:cacheprovider")
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*pytest_sqleval_record_fields hook returned 'status'*"])
    assert "Traceback" not in result.stdout.str()
