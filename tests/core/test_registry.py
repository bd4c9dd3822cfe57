"""The one registry mechanism, the same for the five kinds of plugin object (backends,
engines, layouts, layers, error classes): by call, by entry point (a real distribution
on ``sys.path``), a taken name, a broken entry point, and nothing loaded before the
first lookup. Then what only the grading kinds add: an entry-point layer runs in a pytest
run, and a classify hook's undeclared class is an error naming the fix."""
from __future__ import annotations

import importlib
import json
import secrets
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pytest

from pytest_sqleval.core.backends import registry as backends
from pytest_sqleval.core.cases import layouts
from pytest_sqleval.core.engines import registry as engines
from pytest_sqleval.core.grading import error_classes, layer_registry
from pytest_sqleval.core.registry import Registry
from tests.sqleval_helpers import read_results, sqleval_ini  # noqa: F401  (fixture)
from tests.core.engines.test_engine_registry import MYDB_ENGINE, write_suite


@dataclass(frozen=True)
class Kind:
    kind: str  # as the messages name it
    registry: Registry[Any]
    group: str
    define: str  # a module body defining OBJ, an object of this kind called {name}
    register: str  # the module line that registers OBJ by call
    builtin: str  # a name the kind has already


KINDS = [
    Kind("backend", backends.BACKENDS, "pytest_sqleval.backends",
         "def OBJ(options):\n    async def generate(case):\n        return case.gold_sql\n    return generate\n",
         "from pytest_sqleval.core.backends.registry import register_backend\nregister_backend('{name}', OBJ)\n",
         "gold"),
    Kind("engine", engines.ENGINES, "pytest_sqleval.engines",
         MYDB_ENGINE.format(cls="Engine", name="{name}", suffix=".{name}") + "\nOBJ = Engine()\n",
         "from pytest_sqleval.core.engines import register_engine\nregister_engine(OBJ)\n", "duckdb"),
    Kind("layout", layouts.LAYOUTS, "pytest_sqleval.layouts",
         "from pytest_sqleval.core.cases import Layout\nOBJ = Layout('{name}', print)\n",
         "from pytest_sqleval.core.cases import register_layout\nregister_layout(OBJ)\n", "sqleval"),
    Kind("layer", layer_registry.LAYERS, "pytest_sqleval.layers",
         "class OBJ:\n    name, ahead = '{name}', False\n\n    def run(self, candidate):\n"
         "        candidate.layers['{name}'] = {{'ran': True}}\n",
         "from pytest_sqleval.core.grading.layer_registry import register_layer\nregister_layer(OBJ)\n", "parse"),
    Kind("error class", error_classes.ERROR_CLASS_REGISTRY, "pytest_sqleval.error_classes",
         "from pytest_sqleval.core.grading.error_classes import ErrorClass\n"
         "OBJ = ErrorClass('{name}', 'a test class')\n",
         "from pytest_sqleval.core.grading.error_classes import register_error_class\nregister_error_class(OBJ)\n",
         "other"),
]
REGISTRIES = [k.registry for k in KINDS]


@pytest.fixture(autouse=True)
def clean_registries() -> Iterator[None]:
    """What a test (or an inner run's conftest) registers does not outlive it, in any registry."""
    before = [dict(r.registered) for r in REGISTRIES]
    for r in REGISTRIES:
        r.reload_entry_points()
    yield
    for r, held in zip(REGISTRIES, before):
        r.registered.clear()
        r.registered.update(held)
        r.reload_entry_points()


@pytest.fixture(params=KINDS, ids=[k.kind.replace(" ", "_") for k in KINDS])
def kind(request: pytest.FixtureRequest) -> Kind:
    return request.param


def fresh_name() -> str:
    """A module and object name no other test uses (so no module is imported already)."""
    return f"plug_{secrets.token_hex(4)}"


def write_module(site: Path, module: str, body: str) -> None:
    site.mkdir(parents=True, exist_ok=True)
    (site / f"{module}.py").write_text(body)


def declare(site: Path, group: str, name: str, value: str) -> None:
    """A distribution ``plug-dist`` in ``site`` whose entry point ``name = value`` is in ``group``."""
    info = site / "plug_dist-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: plug-dist\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{group}]\n{name} = {value}\n")


def test_by_call(kind: Kind, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    name = fresh_name()
    write_module(tmp_path, name, kind.define.format(name=name) + kind.register.format(name=name))
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module(name)
    assert kind.registry.get(name) is module.OBJ
    assert name in kind.registry and name in kind.registry.names() and module.OBJ in kind.registry.all()
    assert kind.registry.registered[name] == (module.OBJ, f"{name}:OBJ" if kind.kind == "engine" else name)
    kind.registry.unregister(name)
    assert kind.registry.get(name) is None


def test_by_entry_point_loaded_at_the_first_lookup(kind: Kind, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    name = fresh_name()
    write_module(tmp_path, name, kind.define.format(name=name))
    declare(tmp_path, kind.group, name, f"{name}:OBJ")
    monkeypatch.syspath_prepend(str(tmp_path))
    kind.registry.reload_entry_points()
    assert name not in sys.modules  # declared, never imported: nothing is loaded at import or registration
    obj = kind.registry.get(name)
    assert obj is sys.modules[name].OBJ
    assert name in kind.registry.names()
    assert kind.registry.get(kind.builtin) is not None  # the built-ins are still there


def test_a_taken_name_is_an_error(kind: Kind, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    name = fresh_name()
    first, second = f"{name}_a", f"{name}_b"
    write_module(tmp_path, first, kind.define.format(name=name) + kind.register.format(name=name))
    write_module(tmp_path, second, kind.define.format(name=name) + kind.register.format(name=name))
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.import_module(first)
    owner = f"{first}:OBJ" if kind.kind == "engine" else first
    with pytest.raises(kind.registry.error, match=rf"^{kind.kind} name '{name}' is registered already \(by {owner}\). "
                                                  rf"Fix: give the {kind.kind} another name$"):
        importlib.import_module(second)
    importlib.reload(sys.modules[first])  # the same module registering again (a conftest imported again) replaces
    assert kind.registry.get(name) is sys.modules[first].OBJ


def test_an_entry_point_under_a_taken_name_is_an_error(kind: Kind, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    module = fresh_name()
    write_module(tmp_path, module, kind.define.format(name=kind.builtin))
    declare(tmp_path, kind.group, kind.builtin, f"{module}:OBJ")
    monkeypatch.syspath_prepend(str(tmp_path))
    kind.registry.reload_entry_points()
    with pytest.raises(kind.registry.error, match=rf"^{kind.kind} entry point '{kind.builtin} = {module}:OBJ' \(group "
                                                  rf"{kind.group}, from the distribution plug-dist\) is named "
                                                  rf"'{kind.builtin}', which another {kind.kind} has. "
                                                  "Fix: rename one of them$"):
        kind.registry.get(kind.builtin)


@pytest.mark.parametrize("broken", ["unimportable", "not_one"])
def test_a_broken_entry_point_names_its_distribution_and_the_fix(kind: Kind, tmp_path: Path, broken: str,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    name = fresh_name()
    value = f"no_such_module_{name}:OBJ" if broken == "unimportable" else f"{name}:OBJ"
    write_module(tmp_path, name, "OBJ = 42\n")
    declare(tmp_path, kind.group, name, value)
    monkeypatch.syspath_prepend(str(tmp_path))
    kind.registry.reload_entry_points()
    where = rf"^{kind.kind} entry point '{name} = {value}' \(group {kind.group}, from the distribution plug-dist\) "
    message = (rf"cannot be loaded: ModuleNotFoundError: No module named 'no_such_module_{name}'. "
               "Fix: repair or uninstall plug-dist$")
    if broken == "not_one":
        message = rf"is not an? {kind.kind}\b.* Fix: "
    with pytest.raises(kind.registry.error, match=where + message) as info:
        kind.registry.get(name)
    assert info.value.__cause__ is None and "\n" not in str(info.value)
    with pytest.raises(kind.registry.error, match=where):  # not remembered as loaded: the next lookup says it again
        kind.registry.get(name)


def test_only_a_named_backend_is_loaded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Backends are named by their entry points: listing them loads none, and a broken one
    breaks only a run that names it (the agent's configurations are entry points too)."""
    declare(tmp_path, "pytest_sqleval.backends", "broken", "no_such_module_xyz:OBJ")
    monkeypatch.syspath_prepend(str(tmp_path))
    backends.BACKENDS.reload_entry_points()
    assert "broken" in backends.known_backends()
    assert backends.BACKENDS.get("gold") is backends.BUILTINS["gold"]
    with pytest.raises(backends.UsageError, match="cannot be loaded"):
        backends.BACKENDS.get("broken")


def test_engines_ask_added_ones_first_and_layouts_keep_registration_order() -> None:
    assert engines.ENGINES.names()[-4:] == ["postgres", "spark", "sqlite", "duckdb"]
    assert layouts.LAYOUTS.names()[:4] == ["sqleval", "spider", "bird", "sql-create-context"]
    assert layer_registry.LAYERS.names()[:3] == ["parse", "safety", "send"]
    assert error_classes.ERROR_CLASS_REGISTRY.names()[:5] == list(
        ("hallucinated_column", "stale_table", "wrong_metric", "wrong_join", "other"))


def test_the_old_load_group_reads_a_group_as_the_registry_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_sqleval.core.registry import load_group
    name = fresh_name()
    write_module(tmp_path, name, layouts_define(name))
    declare(tmp_path, "pytest_sqleval.layouts", name, f"{name}:OBJ")
    monkeypatch.syspath_prepend(str(tmp_path))
    got = load_group("pytest_sqleval.layouts", "layout", layouts.LayoutError, lambda obj, where: obj.name, {"sqleval"})
    assert [layout.name for layout in got] == [name]
    with pytest.raises(layouts.LayoutError, match="which another layout has"):
        load_group("pytest_sqleval.layouts", "layout", layouts.LayoutError, lambda obj, where: obj.name, {name})


def layouts_define(name: str) -> str:
    return KINDS[2].define.format(name=name)


# -- the grading kinds in a pytest run ---------------------------------------------------------
def test_an_entry_point_layer_and_error_class_grade_in_a_run(pytester: pytest.Pytester,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A plugin package, no conftest: its layer's evidence reaches every record, and its
    declared class is the one its classify hook gives."""
    site = pytester.path / "site"
    write_module(site, "star_plugin", '''
import pytest
from pytest_sqleval.core.grading.error_classes import ErrorClass
from pytest_sqleval.core.grading.verdict import Classification

SELECT_STAR = ErrorClass("select_star", "projects * where the gold names its columns")


class StarLayer:
    name, ahead = "select_star", False

    def run(self, candidate):
        candidate.layers["select_star"] = {"star": "SELECT *" in candidate.sql}


@pytest.hookimpl
def pytest_sqleval_classify(evidence):
    return Classification("select_star", "lint", "projects *", 0.9) if evidence.get("select_star").get("star") else None
''')
    info = site / "star_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: star-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[pytest_sqleval.layers]\nselect_star = star_plugin:StarLayer\n"
                                           "[pytest_sqleval.error_classes]\nselect_star = star_plugin:SELECT_STAR\n")
    monkeypatch.syspath_prepend(str(site))
    write_suite(pytester.path, "shop.sqlite")
    (pytester.path / "naive.jsonl").write_text(json.dumps({"id": "n", "sql": "SELECT count(*) FROM singer"}) + "\n"
                                               + json.dumps({"id": "fr", "sql": "SELECT * FROM singer"}) + "\n")
    result = pytester.runpytest("suite", "--sqleval-backend=predictions:naive.jsonl", "-p", "star_plugin",
                                "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    records = {r["case_id"]: r for r in read_results(pytester.path)}
    assert records["n"]["layers"]["select_star"] == {"star": False}
    assert (records["fr"]["layers"]["select_star"], records["fr"]["error_class"]) == ({"star": True}, "select_star")
    report = (pytester.path / "sqleval-results" / "report.html").read_text()
    assert "<dt>select_star</dt><dd>projects * where the gold names its columns</dd>" in report  # the declared meaning
    assert "<dt>wrong_join</dt><dd>row count or values off, and the join structure differs</dd>" in report


def test_an_undeclared_class_is_kept_with_a_warning_naming_the_fix(pytester: pytest.Pytester) -> None:
    pytester.makeconftest('''
import pytest
from pytest_sqleval.core.grading.verdict import Classification


@pytest.hookimpl
def pytest_sqleval_classify(evidence):
    return Classification("selct_star", "lint", "a typo of a class", 0.9)
''')
    write_suite(pytester.path, "shop.sqlite")
    result = pytester.runpytest("suite", "--sqleval-backend=predictions:naive.jsonl", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    assert ("a pytest_sqleval_classify hook gave the error class 'selct_star', which is not declared (declared: "
            "hallucinated_column, stale_table, wrong_metric, wrong_join, other). Fix: register it") in out, out
    assert "entry point in group pytest_sqleval.error_classes" in out and "Traceback" not in out
    assert "error class: selct_star" in out or "selct_star" in out.split("sqleval summary")[-1]  # kept as given
