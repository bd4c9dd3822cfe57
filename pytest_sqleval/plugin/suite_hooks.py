"""A suite's own hook implementations outside a pytest run: ``validate`` must build the same
pool of database variants as a run, the suite generator's native ones included
(``pytest_sqleval_native_variants``), or the ``variants.frozen.json`` it writes holds other
content than every run builds and each run refuses it."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from ..core import BadInputError

HOOK = "pytest_sqleval_native_variants"
#: files that make a folder pytest's project root: its conftest.py files are loaded from there down
PROJECT_FILES = ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")


def ask_native_variants(hook: Any, manifest: Any, folder: Path) -> list[Path]:
    """The files every implementation of the hook gives, in hook order (a run's and ``validate``'s)."""
    folder.mkdir(parents=True, exist_ok=True)
    answers = hook.pytest_sqleval_native_variants(manifest=manifest, folder=folder, seed=manifest.variants.seed)
    return [Path(p) for answer in answers if answer for p in answer]


def conftests_naming_the_hook(suite_root: Path) -> list[Path]:
    """The conftest.py files a pytest run of ``suite_root`` loads (its folder and each parent
    up to the project root, outermost first) that name the native-variants hook: the others
    are not imported (a test conftest has no business in ``validate``)."""
    folders = []
    for folder in [suite_root.resolve(), *suite_root.resolve().parents]:
        folders.append(folder)
        if any((folder / name).is_file() for name in PROJECT_FILES):
            break
    else:
        folders = folders[:1]  # no project root: pytest's rootdir is then the suite's own folder
    found = [folder / "conftest.py" for folder in reversed(folders) if (folder / "conftest.py").is_file()]
    return [path for path in found if HOOK in path.read_text(encoding="utf-8", errors="replace")]


def native_variants_of(suite_root: Path) -> Callable[[Any, Path], list[Path]]:
    """``GraderPool.native_variants`` for ``validate``: the hook as a pytest run of the suite
    asks it, from the conftest.py files that implement it; a conftest that fails to import is
    bad input naming the file."""
    import importlib.util

    import pytest

    from . import hookspecs
    manager = pytest.PytestPluginManager()
    manager.add_hookspecs(hookspecs)
    for number, path in enumerate(conftests_naming_the_hook(suite_root)):
        spec = importlib.util.spec_from_file_location(f"_sqleval_validate_conftest_{number}", path)
        if spec is None or spec.loader is None:
            continue
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            raise BadInputError(path, f"cannot be imported to ask its {HOOK} ({type(exc).__name__}: {exc})",
                                line=_line_in(exc, path),
                                fix="make it importable on its own, as a pytest run imports it") from None
        manager.register(module, name=str(path))
    return lambda manifest, folder: ask_native_variants(manager.hook, manifest, folder)


def _line_in(exc: BaseException, path: Path) -> int | None:
    """The line of ``path`` an import failed at (a syntax error's own, else the traceback's last there)."""
    import traceback
    if isinstance(exc, SyntaxError) and exc.filename == str(path):
        return exc.lineno
    lines = [f.lineno for f in traceback.extract_tb(exc.__traceback__) if f.filename == str(path)]
    return lines[-1] if lines else None
