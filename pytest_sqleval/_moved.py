"""Old import paths of the modules that moved in 0.2 (the core / plugin / products split),
kept working for one release with a DeprecationWarning that names the new path.

An old name resolves to the very module object of the new one (``sys.modules`` holds it
under both names), so a class imported either way is the same class and ``isinstance`` and
monkeypatching agree."""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from types import CodeType, ModuleType

REMOVED_IN = "0.3"

#: old module (or package) -> where it lives now; a submodule of an old package follows it.
MOVED: dict[str, str] = {
    "pytest_sqleval.api": "pytest_sqleval.core.api",
    "pytest_sqleval.backends": "pytest_sqleval.core.backends",
    "pytest_sqleval.builtin_hooks": "pytest_sqleval.plugin.builtin_hooks",
    "pytest_sqleval.cases": "pytest_sqleval.core.cases",
    "pytest_sqleval.engines": "pytest_sqleval.core.engines",
    "pytest_sqleval.entrypoints": "pytest_sqleval.core.registry",
    "pytest_sqleval.errors": "pytest_sqleval.core.errors",
    "pytest_sqleval.gate": "pytest_sqleval.plugin.gate",
    "pytest_sqleval.generation": "pytest_sqleval.core.generation",
    "pytest_sqleval.grading": "pytest_sqleval.core.grading",
    "pytest_sqleval.hookspecs": "pytest_sqleval.plugin.hookspecs",
    "pytest_sqleval.items": "pytest_sqleval.plugin.items",
    "pytest_sqleval.llm": "pytest_sqleval.core.llm",
    "pytest_sqleval.mockllm": "pytest_sqleval.core.mockllm",
    "pytest_sqleval.numeric": "pytest_sqleval.core.numeric",
    "pytest_sqleval.pool": "pytest_sqleval.core.pool",
    "pytest_sqleval.reports.records": "pytest_sqleval.core.records",
    "pytest_sqleval.reproduce": "pytest_sqleval.products.reproduce",
    "pytest_sqleval.runconfig": "pytest_sqleval.plugin.runconfig",
    "pytest_sqleval.scheduling": "pytest_sqleval.plugin.scheduling",
    "pytest_sqleval.session": "pytest_sqleval.plugin.session",
    "pytest_sqleval.textio": "pytest_sqleval.core.textio",
    "pytest_sqleval.traces": "pytest_sqleval.core.traces",
    "pytest_sqleval.variants": "pytest_sqleval.core.variants",
    "pytest_sqleval.warehouse.validate": "pytest_sqleval.products.validate",
    "pytest_sqleval.warehouse": "pytest_sqleval.products.warehouse",
    "pytest_sqleval.xdist_wire": "pytest_sqleval.plugin.xdist_wire",
    "pytest_sqleval.agent": "pytest_sqleval.products.agent",
}


def new_name(old: str) -> str | None:
    """Where the module once called ``old`` lives now (the longest moved prefix decides)."""
    best = max((o for o in MOVED if old == o or old.startswith(o + ".")), key=len, default=None)
    return None if best is None else MOVED[best] + old[len(best):]


class _Alias(importlib.abc.Loader):
    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        warnings.warn(f"{spec.name} is now {self.target}; the old name goes in {REMOVED_IN}",
                      DeprecationWarning, stacklevel=2)
        module = importlib.import_module(self.target)
        self.real_spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        # the import system stamped the alias spec on the real module: give it back its own
        module.__spec__ = self.real_spec

    def get_code(self, fullname: str) -> CodeType | None:  # ``python -m <old name>`` asks for it
        spec = importlib.util.find_spec(self.target)
        # the alias was found, so its target has a spec with a loader
        code: CodeType | None = spec.loader.get_code(self.target)  # type: ignore[union-attr]
        return code


class _MovedFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: object = None, target: object = None) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith("pytest_sqleval."):
            return None
        moved = new_name(fullname)
        found = None if moved is None else importlib.util.find_spec(moved)
        if moved is None or found is None:
            return None
        return importlib.util.spec_from_loader(fullname, _Alias(moved),
                                               is_package=found.submodule_search_locations is not None)


def install() -> None:
    """First on ``sys.meta_path``: a submodule of an old package name must come here, not be
    found again by path through its parent and loaded a second time under the old name."""
    if not any(isinstance(f, _MovedFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _MovedFinder())
