"""The Vantage warehouse's native database variants: the same generator with other seeds.

A generic variant keeps the constraints it can observe (keys, references, NOT NULL, value
domains); the generator keeps every rule it was written with as well (a fiscal calendar,
an exchange rate for every trading day, soft deletes, test accounts, chained copies), so
a correct query relying on one of them passes on these by construction. They are built
at a small scale (``NATIVE_SCALE``): what tells a near-miss apart is other data, not
more of it, and a small file costs little to build, keep and grade on. Registered for the
bundled suite by ``cases/vantage/conftest.py``; any suite with its own generator can do
the same (docs/explanation/variants.md)."""
from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import Any

import pytest

NATIVE_SEEDS = 2  # variants per run
NATIVE_SCALE = 0.05  # 10 MiB: the file floor of 126 tables is most of it
BUILDER = "pytest_sqleval.products.warehouse:build"


@pytest.hookimpl
def pytest_sqleval_native_variants(manifest: Any, folder: Path, seed: int) -> list[Path] | None:
    """Seeds ``100 * seed + 1`` ... of the generator, for a suite built by it, built at
    once in threads (DuckDB leaves the GIL while it runs a statement, and each build runs
    one engine thread, so its content does not depend on the other's)."""
    if manifest.build != BUILDER:
        return None
    from concurrent.futures import ThreadPoolExecutor
    paths = [folder / f"vantage-seed{100 * seed + k}-scale{NATIVE_SCALE}.duckdb" for k in range(1, NATIVE_SEEDS + 1)]
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one builder (an xdist worker); the others reuse its files
        todo = [(path, 100 * seed + k) for k, path in enumerate(paths, 1) if not path.is_file()]
        if todo:
            with ThreadPoolExecutor(len(todo)) as builders:
                list(builders.map(lambda job: _build_native(*job), todo))  # list(): a build's error raised here
    return paths


def _build_native(path: Path, seed: int) -> None:
    """One native variant, written under a temporary name and its content hash kept."""
    from ...core import VARIANT_BLOCK_SIZE, remember_content_hash
    from . import build_warehouse
    tmp = path.with_name(f".{path.name}.building")
    try:
        info = build_warehouse(tmp, NATIVE_SCALE, verify=False, seed=seed, threads=1, block_size=VARIANT_BLOCK_SIZE)
        os.replace(tmp, path)
        remember_content_hash(path, info.content_hash)  # hashed as built: not again by the pool
    finally:
        for leftover in (tmp, Path(str(tmp) + ".wal")):
            leftover.unlink(missing_ok=True)
