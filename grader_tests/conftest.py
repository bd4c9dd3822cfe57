"""Fixtures for the grader's adversarial suite: graders over the shared shop database
(``shop_db`` from the top-level conftest) and over the purpose-built ``traps`` database."""
from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import os

import pytest

from grader_tests.helpers import build_traps
from pytest_sqleval.core.api import Grader


@pytest.fixture(scope="session")
def traps_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_traps(tmp_path_factory.mktemp("traps") / "traps.duckdb")


GRADER_SPECS: dict[str, tuple[str, dict[str, Any]]] = {
    "shop": ("shop", {}),
    "shop_allow_empty": ("shop", {"allow_empty": True}),
    "traps": ("traps", {}),
}


@pytest.fixture(scope="session")
def grader_for(shop_db: Path, traps_db: Path) -> Iterator[Callable[[str], Grader]]:
    """``grader_for("shop" | "shop_allow_empty" | "traps")``: one Grader per key and
    process (xdist workers each get their own), created on first use, closed at the end.
    ``SQLEVAL_GRADER_TEST_VARIANTS=N`` grades on N database variants too: every
    equivalent must still pass (CI runs the equivalents that way)."""
    variants = int(os.environ.get("SQLEVAL_GRADER_TEST_VARIANTS") or 0)
    dbs = {"shop": shop_db, "traps": traps_db}
    made: dict[str, Grader] = {}

    def get(key: str) -> Grader:
        if key not in made:
            db, contract = GRADER_SPECS[key]
            made[key] = Grader(dbs[db], variants=variants, **contract)
        return made[key]

    yield get
    for grader in made.values():
        grader.close()
