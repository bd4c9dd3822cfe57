"""The package's parts import one way (every import counted, those inside functions too):
no cycle between parts or between modules; engines import nothing above them; reports read
records and import nothing from the agent or the engines; the grader never imports the
agent or the warehouse generator. Module by module: the products import only the core's
public API (``pytest_sqleval.core``, its ``__all__``), the reports that API and
``core.records``, and the core nothing of the wiring, the reports or the products."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

import pytest_sqleval

PACKAGE = Path(pytest_sqleval.__file__).parent
PRODUCTS = {"agent", "warehouse", "validate", "reproduce"}  # built on the grader (pytest_sqleval/products)
DRIVERS = {"cli", "__main__"}  # the command line drives the products


def part_of(module: str) -> str | None:
    """The part (subpackage or top-level module) a dotted module name belongs to."""
    parts = module.split(".")
    if parts[0] != "pytest_sqleval":
        return None
    if len(parts) > 2 and parts[1] in ("core", "products"):  # their children are the parts
        return parts[2]
    return parts[1] if len(parts) > 1 else "__init__"


def _exists(part: str) -> bool:
    return any((base / part).is_dir() or (base / f"{part}.py").exists()
               for base in (PACKAGE, PACKAGE / "core", PACKAGE / "products"))


def import_edges() -> dict[tuple[str, str], set[str]]:
    """(importing part, imported part) -> the modules that import it."""
    edges: dict[tuple[str, str], set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        module = ".".join(rel.parts).removesuffix(".__init__")
        package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
        source = part_of(module)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
                name = ".".join(base + ([node.module] if node.module else []))
                # "from . import x" names the module x; "from .x import y" the module x
                targets = [f"{name}.{a.name}" for a in node.names] if not node.module else [name]
            else:
                continue
            for target in targets:
                dest = part_of(target)
                if dest and dest != source and _exists(dest):
                    edges.setdefault((source, dest), set()).add(module)
    return edges


def cycles(edges: dict[tuple[str, str], set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one part (Tarjan)."""
    graph: dict[str, list[str]] = {}
    for a, b in edges:
        graph.setdefault(a, []).append(b)
        graph.setdefault(b, [])
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycle_between_the_packages_parts() -> None:
    edges = import_edges()
    assert ("grading", "engines") in edges and ("plugin", "reports") in edges  # the walk sees the package
    found = cycles(edges)
    detail = {tuple(c): sorted(f"{a} -> {b} ({', '.join(sorted(edges[a, b]))})" for a, b in edges
                               if a in c and b in c) for c in found}
    assert not found, detail


@pytest.mark.parametrize(("part", "forbidden"), [
    ("engines", {"grading", "reports", "agent", "warehouse", "cases", "backends", "session", "items", "pool"}),
    ("reports", {"agent", "engines", "warehouse"}),
    ("cases", {"grading", "reports", "agent", "warehouse", "backends", "session", "items", "pool"}),
    ("grading", {"reports", "agent", "warehouse", "session", "items", "pool", "backends"}),
    ("variants", {"grading", "reports", "agent", "warehouse", "session", "items", "pool", "backends"}),
])
def test_a_part_imports_nothing_above_it(part: str, forbidden: set[str]) -> None:
    wrong = {f"{a} -> {b}": sorted(m) for (a, b), m in import_edges().items() if a == part and b in forbidden}
    assert not wrong, wrong


def test_the_grader_never_imports_the_agent_or_the_warehouse_generator() -> None:
    """Every part but the products themselves and the command line is the grader."""
    wrong = {f"{a} -> {b}": sorted(m) for (a, b), m in import_edges().items()
             if a not in PRODUCTS | DRIVERS and b in PRODUCTS}
    assert not wrong, wrong


# -- module by module ----------------------------------------------------------------------------
CORE = "pytest_sqleval.core"
#: Cycles another change is taking apart; each is removed from here when it lands (none left).
KNOWN_CYCLES: list[set[str]] = []


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        out[".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")] = path
    return out


def module_imports() -> dict[str, set[str]]:
    """Module -> the package's modules it imports (every import, those inside functions and
    under TYPE_CHECKING too). ``from a import b`` imports the module ``a.b`` when there is one,
    else the module ``a`` (``b`` is a name in it)."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] if node.level else [])
                name = ".".join(p for p in (base, node.module or "") if p)
                names = [f"{name}.{a.name}" if f"{name}.{a.name}" in modules else name for a in node.names]
            else:
                continue
            for name in names:
                while name and name not in modules:  # "import a.b.c" of a package's name: its longest module
                    name = name.rpartition(".")[0]
                if name and name != module:
                    found.add(name)
        graph[module] = found
    return graph


def _within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def test_the_products_import_only_the_cores_public_api() -> None:
    """The products (agent, Vantage warehouse and its course material, validate, reproduce)
    import the core as ``pytest_sqleval.core`` and nothing below it: its ``__all__`` is the
    whole surface they build on, so the core's insides can move. They may import each other
    and the reports' modules (a product adds its parts to the ablation report), never the
    pytest wiring (``pytest_sqleval.plugin``)."""
    wrong = {m: sorted(t for t in targets if (_within(t, CORE) and t != CORE) or _within(t, "pytest_sqleval.plugin"))
             for m, targets in module_imports().items() if _within(m, "pytest_sqleval.products")}
    assert {m: t for m, t in wrong.items() if t} == {}


def test_reports_read_records_through_the_cores_public_api() -> None:
    """Reports import no product and no pytest wiring; of the core, its public API and the
    records' own module (``core.records``: what a report reads)."""
    allowed = {CORE, f"{CORE}.records"}
    wrong = {m: sorted(t for t in targets if (_within(t, CORE) and t not in allowed)
                       or _within(t, "pytest_sqleval.products") or _within(t, "pytest_sqleval.plugin"))
             for m, targets in module_imports().items() if _within(m, "pytest_sqleval.reports")}
    assert {m: t for m, t in wrong.items() if t} == {}


def test_the_core_imports_no_wiring_report_or_product() -> None:
    wrong = {m: sorted(t for t in targets if any(_within(t, f"pytest_sqleval.{p}")
                                                 for p in ("plugin", "reports", "products", "cli")))
             for m, targets in module_imports().items() if _within(m, CORE)}
    assert {m: t for m, t in wrong.items() if t} == {}


def test_no_import_cycle_between_modules() -> None:
    graph = module_imports()
    edges = {(a, b): {a} for a, targets in graph.items() for b in targets}
    assert ("pytest_sqleval.reports.sink", "pytest_sqleval.reports.files") in edges  # the walk sees the modules
    found = [c for c in cycles(edges) if set(c) not in KNOWN_CYCLES]
    detail = {tuple(c): sorted(f"{a} -> {b}" for a, b in edges if a in c and b in c) for c in found}
    assert not found, detail


def test_the_known_cycles_are_still_there() -> None:
    """A known cycle that is gone leaves this list (so it cannot come back unnoticed)."""
    graph = module_imports()
    edges = {(a, b): {a} for a, targets in graph.items() for b in targets}
    current = [set(c) for c in cycles(edges)]
    assert [c for c in KNOWN_CYCLES if c not in current] == []


def test_the_cores_public_api_resolves_and_importing_it_loads_nothing_else() -> None:
    import subprocess
    import sys

    import pytest_sqleval.core as core
    assert len(core.__all__) == len(set(core.__all__)) and "BenchmarkCase" in core.__all__
    assert sorted(core.__all__) == sorted(core._PUBLIC)  # the literal a type checker reads names what resolves
    missing = [name for name in core.__all__ if getattr(core, name, None) is None]
    assert missing == []
    from pytest_sqleval.core.cases import BenchmarkCase
    assert core.BenchmarkCase is BenchmarkCase and "BenchmarkCase" in dir(core)
    with pytest.raises(AttributeError):
        core.not_a_public_name  # noqa: B018
    loaded = subprocess.run([sys.executable, "-c", "import sys, pytest_sqleval.core; "
                             "print(sorted(m for m in sys.modules if m.startswith('pytest_sqleval.core.')))"],
                            capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == "[]"


#: the modules that read cases: the engine process never reads one (it is sent SQL and a policy)
CASE_READERS = {f"{CORE}.cases", f"{CORE}.cases.read", f"{CORE}.cases.layouts", f"{CORE}.cases.manifest",
                f"{CORE}.cases.defog", f"{CORE}.cases.spider2_lite", f"{CORE}.cases.result_files"}


def test_the_engine_process_loads_no_case_reader() -> None:
    """The engine process (``python -m pytest_sqleval.core.engines.host``, which loads the
    grader's handler by name) compares under a ``ComparePolicy`` and nothing else of a case:
    its start-up loads no case reader (``cases/__init__`` imports them all)."""
    import subprocess
    import sys

    probe = ("import runpy, sys; sys.argv = ['host']; "
             "host = runpy.run_module('pytest_sqleval.core.engines.host', run_name='not_main'); "
             "from pytest_sqleval.core.grading.engine_side import HANDLER; host['load_handler'](HANDLER); "
             "print(sorted(m for m in sys.modules if m.startswith('pytest_sqleval.')))")
    loaded = ast.literal_eval(subprocess.run([sys.executable, "-P", "-c", probe], capture_output=True, text=True, check=True,
                                 timeout=120).stdout)
    assert f"{CORE}.grading.engine_side" in loaded  # the probe loaded the handler
    assert sorted(CASE_READERS & set(loaded)) == []
