"""A damaged gold cache entry (a file deleted, truncated, rewritten or without its checksum)
is recomputed, never blamed on the prediction."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import pytest

from tests.sqleval_helpers import sqleval_ini  # noqa: F401


# -- a damaged gold cache entry --------------------------------------------------
GOLD = "SELECT region, count(*) AS n FROM customers GROUP BY region"


def _other_numbers(arrow: Path) -> None:
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.feather as feather
    table = feather.read_table(str(arrow))
    doubled = pa.table({name: (pc.multiply(col, 2) if pa.types.is_integer(col.type) else col)
                        for name, col in zip(table.column_names, table.columns)})
    feather.write_feather(doubled, str(arrow), compression="uncompressed")


DAMAGE: dict[str, Callable[[Path, Path], None]] = {
    "arrow deleted": lambda arrow, meta: arrow.unlink(),
    "arrow rewritten with other numbers": lambda arrow, meta: _other_numbers(arrow),
    "arrow truncated": lambda arrow, meta: arrow.write_bytes(arrow.read_bytes()[:40]),
    "json deleted": lambda arrow, meta: meta.unlink(),
    "json truncated": lambda arrow, meta: meta.write_text(meta.read_text()[:25]),
    "json not an object": lambda arrow, meta: meta.write_text("[1, 2]"),
    "json without a checksum": lambda arrow, meta: meta.write_text(json.dumps(
        {k: v for k, v in json.loads(meta.read_text()).items() if k != "arrow_sha256"})),
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_gold_cache_entry_is_recomputed_not_blamed_on_the_prediction(
        shop_db: Path, tmp_path: Path, damage: str) -> None:
    from pytest_sqleval.core.grading.pipeline import SuiteGrader
    g = SuiteGrader(shop_db, cache_dir=tmp_path)
    try:
        gold = g.gold(GOLD)
        assert g.gold_executions == 1
    finally:
        g.close()
    arrow, meta = tmp_path / "gold" / f"{gold.key}.arrow", tmp_path / "gold" / f"{gold.key}.json"
    DAMAGE[damage](arrow, meta)
    g = SuiteGrader(shop_db, cache_dir=tmp_path)  # a later run: a fresh engine process
    try:
        gold = g.gold(GOLD)
        verdict = g.grade(GOLD, gold)
        assert verdict.passed, (verdict.failure_kind, verdict.explanation)
        assert g.gold_executions == 1  # discarded and computed again
        assert "arrow_sha256" in json.loads(meta.read_text())  # and stored whole again
        assert g.grade("SELECT region, count(*) + 1 FROM customers GROUP BY region", gold).error_class == "wrong_metric"
    finally:
        g.close()

