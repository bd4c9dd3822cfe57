"""A suite's variants depend on which golds it has, not on how many questions share one
or in what order they come (issue 31). The golds went to the builder as a list, one per
question: a TPC-DS set with five questions a gold spent each variant's budget of LIMIT
growths (``outputs.MAX_VARIANT_COUNTS``) on repeats and never grew q80/q86/q89, which the
same golds with three questions each grew, so their ``LIMIT 100 -> 99`` near-misses were
caught in one set and missed in the other."""
from __future__ import annotations

from pathlib import Path

import pytest

from pytest_sqleval.core.variants.boundaries import BoundaryRows
from pytest_sqleval.core.variants.build import build_variants
from tests.core.variants.test_limit_output_paths import BRANDS, TICKETS, make_shop


def _built(pinned: Path, out: Path, golds: list[str]) -> tuple[str, list[str], list[object]]:
    rows = BoundaryRows(pinned, golds, "duckdb", 0)
    try:
        variants = build_variants(pinned, out, count=2, rows=rows)
    finally:
        rows.close()
    return rows.digest, [v.content_hash for v in variants], [v.params.get("output_growth") for v in variants]


def test_repeated_and_reordered_golds_build_the_same_variants(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With a budget of counts that the repeats alone would spend, the repeated, reordered
    golds build the very variants the golds once each build, growths included."""
    from pytest_sqleval.core.variants import outputs
    monkeypatch.setattr(outputs, "MAX_VARIANT_COUNTS", 6)
    pinned = tmp_path / "shop.duckdb"
    make_shop(pinned)
    once = _built(pinned, tmp_path / "once", [TICKETS, BRANDS])
    repeated = _built(pinned, tmp_path / "repeated", [BRANDS, TICKETS, BRANDS, BRANDS, TICKETS, BRANDS])
    assert repeated == once
    assert any(once[2]), "no LIMIT gold was grown: the test shows nothing"
