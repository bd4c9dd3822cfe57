"""The engine registry: built-in choice by location, plugin engines through
``register_engine`` and entry points (chosen for their locations in a full run), and a
broken plugin as one clear error."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any, Iterator

import pytest

from pytest_sqleval.core.cases import Limits
from pytest_sqleval.core.engines import engine_dialect, engine_name, open_sandbox, registry
from pytest_sqleval.core.engines.base import ExecError, ExecOutcome, Sandbox, fetch_capped, row_batch_size
from tests.rows import error_of, table_of
from tests.sqleval_helpers import read_results, read_summary, sqleval_ini  # noqa: F401  (fixture)

SHOP = """CREATE TABLE singer (id INTEGER, name TEXT, country TEXT, age INTEGER);
INSERT INTO singer VALUES (1, 'Joe', 'France', 52), (2, 'Ann', 'France', 43), (3, 'Bo', 'US', 30);"""

#: a wrapper engine around SQLite that claims ``.mydb`` files
MYDB_ENGINE = '''
from pytest_sqleval.core.engines.sqlite_sandbox import SQLiteSandbox


class {cls}:
    name = "{name}"
    dialect = "sqlite"

    @staticmethod
    def claims(location):
        return str(location).endswith("{suffix}")

    @staticmethod
    def open(location, limits):
        box = SQLiteSandbox(location, limits)
        box.name = "{name}"
        return box
'''


@pytest.fixture(autouse=True)
def clean_registry() -> Iterator[None]:
    """Engines registered by a test (or an inner run's conftest) do not outlive it."""
    before = dict(registry._registered)
    registry.reload_entry_points()
    yield
    registry._registered.clear()
    registry._registered.update(before)
    registry.reload_entry_points()


def make_db(path: Path) -> Path:
    con = sqlite3.connect(path)
    con.executescript(SHOP)
    con.close()
    return path


def write_suite(root: Path, database: str) -> None:
    suite = root / "suite"
    suite.mkdir()
    make_db(suite / database)
    cases = [{"id": "n", "question": "How many singers?", "gold_sql": "SELECT count(*) FROM singer"},
             {"id": "fr", "question": "French singers", "gold_sql": "SELECT name FROM singer WHERE country = 'France'"}]
    (suite / "questions.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    (suite / "sqleval.toml").write_text(f'[suite]\nname = "s"\nquestions = "questions.jsonl"\n'
                                        f'database = "{database}"\ndialect = "sqlite"\n')
    (root / "naive.jsonl").write_text(json.dumps({"id": "n", "sql": "SELECT count(*) FROM singer"}) + "\n"
                                      + json.dumps({"id": "fr", "sql": "SELECT name FROM singer"}) + "\n")


def entry_point_dist(site: Path, value: str, module: str | None = None) -> None:
    """A distribution in ``site`` declaring one engine entry point (and its module)."""
    info = site / "mydb_plugin-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mydb-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{registry.ENTRY_POINT_GROUP}]\nmydb = {value}\n")
    if module is not None:
        (site / "mydb_plugin.py").write_text(module)


# -- the built-in choice ------------------------------------------------------------------------
@pytest.mark.parametrize(("location", "name"), [
    ("a.duckdb", "duckdb"), ("a.ddb", "duckdb"), ("plain", "duckdb"), ("a.SQLITE", "sqlite"), ("a.sqlite3", "sqlite"),
    ("b.db", "sqlite"), ("b.db3", "sqlite"), ("postgresql://u@h/db", "postgres"), ("postgres://h/db", "postgres"),
    ("POSTGRESQL://h/db", "postgres"), ("magic", "sqlite")])
def test_the_builtin_choice_is_unchanged(tmp_path: Path, location: str, name: str) -> None:
    if location == "magic":  # any file with the SQLite header, whatever its name
        location = str(make_db(tmp_path / "spider.data"))
    assert engine_name(location) == name
    assert engine_dialect(location) == name
    assert engine_name(Path(location)) == name if "://" not in location else True


def test_an_unclaimed_url_is_the_same_error_as_before() -> None:
    with pytest.raises(ValueError, match=r"^unsupported database URL scheme 'mysql': use postgresql://, or a path "
                                         r"to a DuckDB or SQLite file$"):
        engine_name("mysql://h/db")


def test_importing_the_registry_loads_no_engine() -> None:
    import subprocess
    import sys
    code = ("import sys, pytest_sqleval.core.engines as e, pytest_sqleval.core.engines.registry; e.engine_name('x.sqlite'); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('duckdb', 'psycopg', 'pyarrow', 'sqlglot')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


# -- the shared capped fetch ----------------------------------------------------------------------
def test_the_capped_fetch_stops_at_either_cap_with_one_error() -> None:
    limits = Limits(max_rows=5, max_bytes=10_000, memory_limit="1GB")
    batches = [[(1, "x")] * 3, [(2, "y")] * 3]
    got = fetch_capped(iter(batches), row_batch_size, max_rows=5, limits=limits)
    assert got.batches == [] and got.truncated
    assert error_of(got).to_dict() == {"category": "resource_exceeded", "exception": "ResultTooLarge", "rows_over": 5,
                                       "cap": "max_rows",
                                       "message": "result has more than 5 rows (the row cap, max_rows); reading stopped there"}
    got = fetch_capped(iter(batches), row_batch_size, max_rows=6, limits=Limits(max_bytes=40, memory_limit="1GB"))
    assert error_of(got).message == "result exceeds the cap of 6 rows / 40 bytes (max_bytes)"
    assert (error_of(got).rows_over, error_of(got).cap) == (5, "bytes")  # the byte cap, after two batches of 3 rows
    assert fetch_capped(iter(batches), row_batch_size, max_rows=6, limits=limits).batches == batches
    stop = ExecError("timeout", "late", "QueryCanceled")
    got = fetch_capped(iter(batches), row_batch_size, max_rows=6, limits=limits, check=lambda: stop)
    assert got == ([], stop, False)


def test_the_builtin_sandboxes_meet_the_protocol(tmp_path: Path) -> None:
    box = open_sandbox(make_db(tmp_path / "s.sqlite"), Limits())
    try:
        assert isinstance(box, Sandbox) and isinstance(box.run("SELECT 1"), ExecOutcome)
    finally:
        box.close()
    from pytest_sqleval.core.engines import duckdb_sandbox
    assert duckdb_sandbox.ExecError is ExecError and duckdb_sandbox.ExecOutcome is ExecOutcome  # old home


# -- plugin engines -------------------------------------------------------------------------------
def test_a_registered_engine_is_chosen_for_its_locations(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "my_engines.py").write_text(MYDB_ENGINE.format(cls="MyDB", name="mydb", suffix=".mydb"))
    monkeypatch.syspath_prepend(str(tmp_path))
    import my_engines
    assert registry.register_engine(my_engines.MyDB) is my_engines.MyDB
    registry.register_engine(my_engines.MyDB)  # again: nothing changes
    assert registry.exported() == ["my_engines:MyDB"]
    assert engine_name("x.mydb") == "mydb" and engine_dialect("x.mydb") == "sqlite"
    assert engine_name("x.duckdb") == "duckdb" and engine_name("x.sqlite") == "sqlite"
    box = open_sandbox(make_db(tmp_path / "shop.mydb"), Limits())
    try:
        assert box.name == "mydb" and table_of(box.run("SELECT count(*) FROM singer")).to_pylist() == [{"count(*)": 3}]
    finally:
        box.close()
    with pytest.raises(registry.EngineError, match="'sqlite' is a built-in engine's"):
        registry.register_engine(type("X", (my_engines.MyDB,), {"name": "sqlite"}))
    with pytest.raises(registry.EngineError, match="lacks claims, open"):
        registry.register_engine(type("Half", (), {"name": "half", "dialect": "sqlite"}))

    def local() -> None:
        engine = registry.Engine("local", "sqlite", lambda loc: False, lambda loc, limits: None)
        registry.register_engine(engine)
    with pytest.raises(registry.EngineError, match="cannot be found again by the engine process"):
        local()


def test_a_registered_engine_grades_a_suite(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(MYDB_ENGINE.format(cls="MyDB", name="mydb", suffix=".mydb")
                          + "\nfrom pytest_sqleval.core.engines import register_engine\nregister_engine(MyDB)\n")
    write_suite(pytester.path, "shop.mydb")
    result = pytester.runpytest("suite", "--sqleval-backend=gold,predictions:naive.jsonl", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3, failed=1)
    records = {(r["case_id"], r["backend"]): r for r in read_results(pytester.path)}
    assert {r["engine"] for r in records.values()} == {"mydb"}
    assert records[("fr", "naive")]["status"] == "failed" and records[("n", "naive")]["status"] == "passed"
    assert read_summary(pytester.path)["backends"]["naive"]["execution_accuracy"] == pytest.approx(1 / 2)


def test_an_entry_point_engine_grades_a_suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    site = pytester.path / "site"
    entry_point_dist(site, "mydb_plugin:ENGINE",
                     MYDB_ENGINE.format(cls="Engine", name="mydb", suffix=".mydb") + "\nENGINE = Engine()\n")
    monkeypatch.syspath_prepend(str(site))  # the engine process gets the grading process's sys.path
    registry.reload_entry_points()
    assert engine_name("a.mydb") == "mydb" and engine_name("a.duckdb") == "duckdb"
    write_suite(pytester.path, "shop.mydb")
    result = pytester.runpytest("suite", "--sqleval-backend=gold,predictions:naive.jsonl", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3, failed=1)
    assert {r["engine"] for r in read_results(pytester.path)} == {"mydb"}


@pytest.mark.parametrize(("value", "module", "message"), [
    ("no_such_module:ENGINE", None, r"engine entry point 'mydb = no_such_module:ENGINE' \(group pytest_sqleval.engines, "
     r"from the distribution mydb-plugin\) cannot be loaded: ModuleNotFoundError: No module named 'no_such_module'"),
    ("mydb_plugin:ENGINE", "ENGINE = object()\n", r"is not an engine: it lacks name, dialect, claims, open"),
    ("mydb_plugin:ENGINE", "class ENGINE:\n    name = 'duckdb'\n    dialect = 'duckdb'\n"
     "    claims = staticmethod(lambda loc: True)\n    open = staticmethod(lambda loc, limits: None)\n",
     r"is named 'duckdb', which another engine has"),
])
def test_a_broken_entry_point_is_one_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str,
                                                  module: str | None, message: str) -> None:
    entry_point_dist(tmp_path, value, module)
    monkeypatch.syspath_prepend(str(tmp_path))
    registry.reload_entry_points()
    with pytest.raises(registry.EngineError, match=message) as info:
        engine_name("a.duckdb")
    assert info.value.__cause__ is None and "\n" not in str(info.value)


def test_a_broken_entry_point_fails_a_run_without_a_traceback(pytester: pytest.Pytester,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    site = pytester.path / "site"
    entry_point_dist(site, "no_such_module:ENGINE")
    monkeypatch.syspath_prepend(str(site))
    registry.reload_entry_points()
    write_suite(pytester.path, "shop.sqlite")
    result = pytester.runpytest("suite", "--sqleval-backend=gold", "-p", "no:cacheprovider")
    assert result.ret != 0
    out = result.stdout.str() + result.stderr.str()
    assert "engine entry point 'mydb = no_such_module:ENGINE'" in out, out
    assert "Traceback" not in out, out


def test_a_claims_that_raises_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(location: Any) -> bool:
        raise RuntimeError("no idea")
    engine = registry.Engine("boom", "sqlite", boom, lambda loc, limits: None)
    monkeypatch.setitem(registry._registered, "boom", (engine, "x:y"))
    with pytest.raises(registry.EngineError, match=r"engine 'boom' failed to decide on a.duckdb: RuntimeError: no idea"):
        engine_name("a.duckdb")


