"""What the variants' witness tests share: a database made by a test's own maker, and a
``Grader`` with eight variants over it for the test module."""
from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pytest_sqleval.core.api import Grader


def made(folder: Path, name: str, make: Callable[[Path], None]) -> Path:
    """``folder/<name>.duckdb``, made by ``make``."""
    path = folder / f"{name}.duckdb"
    make(path)
    return path


def graded_with_variants(factory: pytest.TempPathFactory, name: str, make: Callable[[Path], None],
                         gold: str) -> Iterator[tuple[Path, Grader]]:
    """(its folder, a Grader with 8 variants chosen for ``gold``) over a database ``make``
    makes: the body of a module fixture (``yield from``)."""
    folder = factory.mktemp(name)
    path = made(folder, name, make)
    with Grader(path, dialect="duckdb", cache_dir=folder / "cache", variants=8, variant_golds=[gold]) as graded:
        yield folder, graded
