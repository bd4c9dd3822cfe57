"""pytest-sqleval: a text-to-SQL benchmark as a pytest suite.

Kept import-light: the plugin module is loaded by every pytest run, so heavy pieces
(DuckDB, pyarrow, sqlglot, litellm) load only when something uses them.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._moved import install as _install_moved
from ._version import __version__  # noqa: F401  (the package version, read by pip and users)

_install_moved()  # the pre-0.2 import paths, for one release (pytest_sqleval/_moved.py)
__all__ = ["BenchmarkCase", "GenerationResult", "compare", "Verdict", "load_results"]

if TYPE_CHECKING:  # pragma: no cover
    from .core.api import Verdict, compare
    from .core.backends.base import GenerationResult
    from .core.cases import BenchmarkCase
    from .reports.table import load_results


def __getattr__(name: str) -> Any:
    if name in ("compare", "Verdict"):
        from .core import api
        return getattr(api, name)
    if name == "GenerationResult":
        from .core.backends.base import GenerationResult
        return GenerationResult
    if name == "BenchmarkCase":
        from .core.cases import BenchmarkCase
        return BenchmarkCase
    if name == "load_results":
        from .reports.table import load_results
        return load_results
    raise AttributeError(name)
