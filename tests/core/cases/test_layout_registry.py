"""The layout registry: a benchmark format added by a conftest.py through the public API
(collected, split per database and graded like a built-in), one by an entry point, a
misspelt name with a "did you mean", and a broken plugin as one clear error."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Iterator

import pytest

from pytest_sqleval.core.cases import Layout, LayoutError, get_layout, layout_names, register_layout
from pytest_sqleval.core.cases import layouts as registry
from tests.sqleval_helpers import LEAN, read_results, read_summary, sqleval_ini  # noqa: F401  (fixture)

#: A format of our own: one JSON array per line, ``[id, question, gold SQL, database]``
#: (a CSV row in JSON clothes), and predictions as ``id;sql`` lines under an ``id;sql`` header.
QA_LAYOUT = '''
import json
from pathlib import Path

from pytest_sqleval.core.cases import Layout, iter_jsonl, register_layout


def qa_records(path):
    for line, row in iter_jsonl(path, fix="write one [id, question, gold SQL, database] per line"):
        if isinstance(row, list) and len(row) == 4:
            row = dict(zip(("id", "question", "gold_sql", "db_id"), row))
        yield line, row  # anything else: the one validation names the line and the field


def qa_predictions(path):
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    if not lines or lines[0] != "id;sql":
        return None  # not ours: the next layout is asked
    return {cid: (sql, {}) for cid, _, sql in (line.partition(";") for line in lines[1:] if line)}


LAYOUT = Layout("qa-lines", qa_records, questions="qa.jsonl", database="dbs", dialect="sqlite", split_by="db_id",
                predictions=qa_predictions, description="[id, question, gold, db] per line")
'''

SINGERS = """CREATE TABLE singer (id INTEGER, name TEXT, country TEXT);
INSERT INTO singer VALUES (1, 'Joe', 'France'), (2, 'Ann', 'France'), (3, 'Bo', 'US');"""
PETS = """CREATE TABLE pets (id INTEGER, kind TEXT);
INSERT INTO pets VALUES (1, 'cat'), (2, 'dog'), (3, 'dog');"""
QA = [
    ["n", "How many singers?", "SELECT count(*) FROM singer", "concert"],
    ["fr", "French singers", "SELECT name FROM singer WHERE country = 'France' ORDER BY name", "concert"],
    ["dogs", "How many dogs?", "SELECT count(*) FROM pets WHERE kind = 'dog'", "pets"],
]


@pytest.fixture(autouse=True)
def clean_registry() -> Iterator[None]:
    """Layouts registered by a test (or an inner run's conftest) do not outlive it."""
    before = dict(registry._registered)
    registry.reload_entry_points()
    yield
    registry._registered.clear()
    registry._registered.update(before)
    registry.reload_entry_points()


def make_db(path: Path, script: str) -> None:
    if path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path)
    con.executescript(script)
    con.close()


def write_suite(root: Path, layout: str = "qa-lines", rows: list[list[str]] = QA) -> Path:
    suite = root / "qa"
    make_db(suite / "dbs" / "concert" / "concert.sqlite", SINGERS)
    make_db(suite / "dbs" / "pets" / "pets.sqlite", PETS)
    (suite / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (suite / "sqleval.toml").write_text(f'[suite]\nname = "qa"\nlayout = "{layout}"\n')
    return suite


def entry_point_dist(site: Path, value: str, module: str | None = None) -> None:
    """A distribution in ``site`` declaring one layout entry point (and its module)."""
    info = site / "mybench_plugin-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mybench-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{registry.ENTRY_POINT_GROUP}]\nmybench = {value}\n")
    if module is not None:
        (site / "mybench_plugin.py").write_text(module)


# -- a layout from a conftest.py ---------------------------------------------------------------
def test_a_conftest_layout_is_collected_split_per_database_and_graded(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(QA_LAYOUT + "\nregister_layout(LAYOUT)\n")
    write_suite(pytester.path)
    (pytester.path / "preds.csv").write_text("id;sql\nn;SELECT count(*) FROM singer\n"
                                             "fr;SELECT name FROM singer\ndogs;SELECT count(id) FROM pets WHERE kind = 'dog'\n")
    result = pytester.runpytest("qa", "--sqleval-backend=gold,predictions:preds.csv", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=5, failed=1)
    records = {(r["case_id"], r["backend"]): r for r in read_results(pytester.path)}
    assert {cid for cid, _ in records} == {"n", "fr", "dogs"}
    assert records[("n", "gold")]["suite"] == "qa/concert" and records[("dogs", "gold")]["suite"] == "qa/pets"
    assert records[("dogs", "gold")]["case_metadata"] == {"db_id": "pets"}
    assert {r["engine"] for r in records.values()} == {"sqlite"}
    assert records[("n", "gold")]["content_hash"] != records[("dogs", "gold")]["content_hash"]
    assert records[("fr", "preds")]["status"] == "failed" and records[("dogs", "preds")]["status"] == "passed"
    assert read_summary(pytester.path)["backends"]["preds"]["execution_accuracy"] == pytest.approx(2 / 3)


def test_a_conftest_layout_under_xdist(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(QA_LAYOUT + "\nregister_layout(LAYOUT)\n")
    write_suite(pytester.path)
    result = pytester.runpytest_subprocess(*LEAN, "-n", "2", "qa", "-p", "no:cacheprovider", timeout=120)
    result.assert_outcomes(passed=3)


def test_a_conftest_layout_gets_the_one_validation(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(QA_LAYOUT + "\nregister_layout(LAYOUT)\n")
    write_suite(pytester.path, rows=[*QA, ["n", "Again?", "SELECT 1", "concert"]])
    out = pytester.runpytest("qa", "-p", "no:cacheprovider").stdout.str()
    assert "qa.jsonl:4: field 'id': duplicate id 'n' (first on line 1)" in out and "Traceback" not in out
    write_suite(pytester.path, rows=[QA[0], {"id": "x", "gold_sql": "SELECT 1", "db_id": "pets"}])  # type: ignore[list-item]
    out = pytester.runpytest("qa", "-p", "no:cacheprovider").stdout.str()
    assert "qa.jsonl:2: field 'question': missing required field" in out and "Traceback" not in out


def test_a_misspelt_layout_is_a_did_you_mean(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(QA_LAYOUT + "\nregister_layout(LAYOUT)\n")
    write_suite(pytester.path, layout="qa-line")
    result = pytester.runpytest("qa", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    out = result.stdout.str()
    assert "sqleval.toml:3: field 'suite.layout': unknown layout 'qa-line' (did you mean 'qa-lines'?)" in out
    assert "fix: use one of sqleval, spider, bird, sql-create-context, defog, spider2-lite, qa-lines" in out
    assert "Traceback" not in out


# -- a layout from an entry point ------------------------------------------------------------
def test_an_entry_point_layout_grades_a_suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    site = pytester.path / "site"
    entry_point_dist(site, "mybench_plugin:LAYOUT", QA_LAYOUT)
    monkeypatch.syspath_prepend(str(site))
    registry.reload_entry_points()
    assert "qa-lines" in layout_names() and get_layout("qa-lines").split_by == "db_id"  # type: ignore[union-attr]
    write_suite(pytester.path)
    result = pytester.runpytest("qa", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)


@pytest.mark.parametrize(("value", "module", "message"), [
    ("no_such_module:LAYOUT", None, r"layout entry point 'mybench = no_such_module:LAYOUT' \(group "
     r"pytest_sqleval.layouts, from the distribution mybench-plugin\) cannot be loaded: ModuleNotFoundError: No module "
     r"named 'no_such_module'. Fix: repair or uninstall mybench-plugin"),
    ("mybench_plugin:LAYOUT", "LAYOUT = object()\n", r"is not a layout \(got object\). Fix: make it a "
                                                     r"pytest_sqleval.core.cases.Layout"),
    ("mybench_plugin:LAYOUT", "from pytest_sqleval.core.cases import Layout\nLAYOUT = Layout('spider', print)\n",
     r"is named 'spider', which another layout has. Fix: rename one of them"),
])
def test_a_broken_entry_point_is_one_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str,
                                                  module: str | None, message: str) -> None:
    entry_point_dist(tmp_path, value, module)
    monkeypatch.syspath_prepend(str(tmp_path))
    registry.reload_entry_points()
    with pytest.raises(LayoutError, match=message) as info:
        get_layout("sqleval")
    assert info.value.__cause__ is None and "\n" not in str(info.value)


def test_a_broken_entry_point_fails_a_run_without_a_traceback(pytester: pytest.Pytester,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    site = pytester.path / "site"
    entry_point_dist(site, "no_such_module:LAYOUT")
    monkeypatch.syspath_prepend(str(site))
    registry.reload_entry_points()
    write_suite(pytester.path, layout="spider")
    result = pytester.runpytest("qa", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    out = result.stdout.str() + result.stderr.str()
    assert "layout entry point 'mybench = no_such_module:LAYOUT'" in out and "Traceback" not in out, out


# -- registering -----------------------------------------------------------------------------
def test_registration_mistakes_are_one_clear_error() -> None:
    qa = Layout("qa-lines", lambda path: iter(()))
    assert register_layout(qa) is qa and register_layout(qa) is qa and get_layout("qa-lines") is qa
    again = Layout("qa-lines", lambda path: iter(()))
    assert register_layout(again) is again and get_layout("qa-lines") is again  # the same module again: replaced
    registry._registered["qa-lines"] = (again, "someone.else")
    with pytest.raises(LayoutError, match=r"^layout name 'qa-lines' is registered already \(by someone.else\). "
                                          r"Fix: give the layout another name$"):
        register_layout(Layout("qa-lines", lambda path: iter(())))
    with pytest.raises(LayoutError, match=r"layout name 'spider' is registered already \(by pytest_sqleval.core.cases"):
        register_layout(Layout("spider", lambda path: iter(())))
    with pytest.raises(LayoutError, match=r"is not a layout \(got dict\)"):
        register_layout({"name": "x"})  # type: ignore[arg-type]
    with pytest.raises(LayoutError, match=r"has the name 'My Bench'. Fix: name it in lower case"):
        register_layout(Layout("My Bench", lambda path: iter(())))
    with pytest.raises(LayoutError, match=r"layout 'x' .*: records must be a function"):
        register_layout(Layout("x", "rows.jsonl"))  # type: ignore[arg-type]


def test_a_conftest_that_registers_a_taken_name_names_the_fix(pytester: pytest.Pytester) -> None:
    pytester.makeconftest("from pytest_sqleval.core.cases import Layout, register_layout\n"
                          "register_layout(Layout('bird', lambda path: iter(())))\n")
    write_suite(pytester.path, layout="bird")
    result = pytester.runpytest("qa", "-p", "no:cacheprovider")
    assert result.ret != 0
    assert "layout name 'bird' is registered already (by pytest_sqleval.core.cases.layouts). Fix: give the layout " \
           "another name" in result.stdout.str() + result.stderr.str()
