"""What a ``module:function`` (or entry-point) backend's generations depend on, for the
generation cache's key: the backend's module and every module of the user's project it
imports, at any depth, and the files it declares.

The project's modules are found from the source: each module's ``import`` statements
(those inside functions too) are read with :mod:`ast` and resolved to files, and only
files under the rootdir that are neither the interpreter's (stdlib, site-packages) nor
this plugin's are followed. A module outside the project is never imported to find out
(a lazy ``import torch`` inside a function costs nothing): only a top-level package whose
files lie in the project is looked into. Reading the imports of a handful of files costs
a few milliseconds (docs/reference/backends.md, "Generation cache")."""
from __future__ import annotations

import ast
import functools
import glob
import hashlib
import importlib.util
import sys
from pathlib import Path
from typing import Any, Iterable, Iterator

from ..errors import UsageError

#: A backend's declared files: ``generate.sqleval_depends_on = ["prompts/system.txt", "prompts/*.md"]``
DEPENDS_ATTR = "sqleval_depends_on"
_PLUGIN_DIR = Path(__file__).resolve().parents[2]  # the pytest_sqleval package


def code_key(obj: Any, rootdir: str | Path) -> str:
    """A digest of the source ``obj``'s generations depend on: its module's file and the
    project modules that module imports (names and bytes, in a stable order)."""
    root = Path(rootdir).resolve()
    module = getattr(obj, "__module__", None) or getattr(obj, "__name__", None) or ""
    digest = hashlib.sha256()
    for path in project_closure(module, root):
        digest.update(_shown(path, root).encode() + b"\0" + _read(path) + b"\0")
    return digest.hexdigest()[:16]


def project_closure(module: str, root: Path) -> list[Path]:
    """The module's own file (wherever it lives) and every project module it imports,
    directly or through another project module."""
    files: dict[Path, None] = {}
    seen: set[str] = set()
    todo = [module]
    first = True
    while todo:
        name = todo.pop()
        if not name or name in seen:
            continue
        seen.add(name)
        path = _module_file(name, root, top_level_ok=first)
        first = False
        if path is None:
            continue
        files[path] = None
        if path.suffix != ".py":
            continue
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        todo.extend(_imported_names(path, package))
    return sorted(files, key=lambda p: _shown(p, root))


def declared_files(values: Any, root: Path, spec: str) -> list[Path]:
    """The files a backend declares (``sqleval_depends_on``): paths or glob patterns
    relative to the rootdir (or absolute); a folder stands for every file under it. One
    that matches nothing is a usage error: a typo must not silently leave a file out."""
    if values is None:
        return []
    items = [values] if isinstance(values, (str, Path)) else list(values) if isinstance(values, (list, tuple)) else None
    if items is None or not all(isinstance(v, (str, Path)) for v in items):
        raise UsageError(f"backend {spec!r}: {DEPENDS_ATTR} must be a list of paths or glob patterns, got {values!r}. "
                         f'Fix: generate.{DEPENDS_ATTR} = ["prompts/system.txt"] (relative to the rootdir)')
    out: dict[Path, None] = {}
    for item in items:
        pattern = Path(item).expanduser()
        pattern = pattern if pattern.is_absolute() else root / pattern
        matches = [Path(m) for m in sorted(glob.glob(str(pattern), recursive=True))] if glob.has_magic(str(item)) \
            else ([pattern] if pattern.exists() else [])
        if not matches:
            raise UsageError(f"backend {spec!r}: {DEPENDS_ATTR} names {str(item)!r}, which matches no file under {root}. "
                             "Fix: give paths relative to the rootdir (or absolute), or remove the entry")
        for m in matches:
            for f in (sorted(p for p in m.rglob("*") if p.is_file()) if m.is_dir() else [m]):
                out[f.resolve()] = None
    return sorted(out)


def files_key(paths: Iterable[Path], root: Path) -> str:
    digest = hashlib.sha256()
    for path in paths:
        digest.update(_shown(path, root).encode() + b"\0" + _read(path) + b"\0")
    return digest.hexdigest()[:16]


def depends_on(*objs: Any) -> Any:
    """The first ``sqleval_depends_on`` among ``objs`` (the generate function, then its factory)."""
    for obj in objs:
        value = getattr(obj, DEPENDS_ATTR, None)
        if value is not None:
            return value
    return None


# -- resolving imports to files -------------------------------------------------------------------
def _imported_names(path: Path, package: str) -> Iterator[str]:
    """Every module name an import statement of ``path`` may load, parents included
    (``import a.b`` runs ``a`` and ``a.b``; ``from a import b`` may name the module ``a.b``)."""
    try:
        tree = ast.parse(_read(path), filename=str(path))
    except (SyntaxError, ValueError):
        return
    for node in _statements(tree.body):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield from _with_parents(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".") if package else []
                if node.level - 1 > len(parts):
                    continue
                base_parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join(base_parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            if not base:
                continue
            yield from _with_parents(base)
            for alias in node.names:
                if alias.name != "*":
                    yield f"{base}.{alias.name}"


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement, nested ones included (in functions, classes, ``if``, ``try``...),
    without walking expressions: an import is a statement, and a large module's expressions
    are most of its tree."""
    for node in body:
        yield node
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            inner = getattr(node, name, None)
            if isinstance(inner, list):
                yield from _statements(inner)


def _with_parents(name: str) -> Iterator[str]:
    parts = name.split(".")
    for i in range(1, len(parts) + 1):
        yield ".".join(parts[:i])


def _module_file(name: str, root: Path, *, top_level_ok: bool = False) -> Path | None:
    """The file of module ``name`` if it is a project file (any file for the backend's own
    module); None for the stdlib, installed packages, this plugin and names that are no module.
    Only a name whose top-level package lies in the project is looked up below the top."""
    mod = sys.modules.get(name)
    if mod is not None:
        found = getattr(mod, "__file__", None)
        path = Path(found).resolve() if found else None
    else:
        top = name.partition(".")[0]
        if top != name and not _is_project_package(top, root):
            return None
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError, AttributeError):  # not a module (a name imported from one)
            return None
        path = Path(spec.origin).resolve() if spec is not None and spec.has_location and spec.origin else None
    if path is None or not path.is_file():
        return None
    return path if top_level_ok or _is_project_file(path, root) else None


@functools.lru_cache(maxsize=1024)
def _is_project_package(top: str, root: Path) -> bool:
    mod = sys.modules.get(top)
    if mod is not None:
        locations = list(getattr(mod, "__path__", []) or [])
        found = getattr(mod, "__file__", None)
    else:
        try:
            spec = importlib.util.find_spec(top)  # a top-level name: found without importing anything
        except (ImportError, ValueError):
            return False
        if spec is None:
            return False
        locations = list(spec.submodule_search_locations or [])
        found = spec.origin if spec.has_location else None
    candidates = [Path(found)] if found else [Path(p) / "__init__.py" for p in locations]
    return any(_is_project_file(p.resolve(), root) for p in candidates)


@functools.lru_cache(maxsize=1)
def _excluded_roots() -> list[Path]:
    return [Path(p).resolve() for p in {sys.prefix, sys.base_prefix, sys.exec_prefix}] + [_PLUGIN_DIR]


def _is_project_file(path: Path, root: Path) -> bool:
    if not path.is_relative_to(root):
        return False
    if any(part in ("site-packages", "dist-packages") for part in path.parts):
        return False
    return not any(path.is_relative_to(p) for p in _excluded_roots())


def _shown(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix() if path.is_relative_to(root) else path.as_posix()


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""
