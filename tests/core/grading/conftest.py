"""Fixtures shared by the grading tests."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest


@pytest.fixture(scope="module")
def shop_grader(shop_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from pytest_sqleval.core.api import Grader
    with Grader(shop_db, cache_dir=tmp_path_factory.mktemp("cache")) as grader:
        yield grader
