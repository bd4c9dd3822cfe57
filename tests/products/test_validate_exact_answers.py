"""``validate`` freezes exact numbers exactly: a HUGEINT or DECIMAL gold answer comes back
from ``gold_answers.json`` as the number the engine returned, so a drift of one unit (or one
cent) is reported, as the grader would see it. Format-1 files (every number a float to 12
digits) still read; a format this release does not read says to re-run validate."""
from __future__ import annotations

import hashlib
import json
import math
from decimal import Decimal
from pathlib import Path
from typing import Any, Callable

import duckdb
import pytest

from pytest_sqleval.core.grading.compare import jsonable
from pytest_sqleval.products.validate import GOLD_ANSWERS
from tests.products.test_validate import Capture
from tests.rows import scalar

HUGE = "SELECT sum(CAST(id AS HUGEINT)) + 1234567890123 AS s FROM customers"  # a 128-bit sum past 12 digits
CENTS = "SELECT sum(CAST(id AS DECIMAL(18, 2))) + 1999000 AS amount FROM customers"  # DECIMAL(38, 2)
CASES = [{"id": "huge", "question": "Huge", "gold_sql": HUGE}, {"id": "cents", "question": "Cents", "gold_sql": CENTS},
         {"id": "rows", "question": "Many rows", "gold_sql":  # past FULL_ROWS: frozen as a digest
          "SELECT i, CAST(i AS DECIMAL(18, 2)) * 0.01 + 1000000 AS d FROM range(300) t(i) ORDER BY i"}]




def suite(root: Path, db: Path) -> Path:
    root.mkdir()
    (root / "questions.jsonl").write_text("".join(json.dumps(c) + "\n" for c in CASES))
    (root / "sqleval.toml").write_text(f'[suite]\nname = "exact"\nquestions = "questions.jsonl"\n'
                                       f'database = "{db}"\ndialect = "duckdb"\n')
    return root


def engine_value(db: Path, sql: str) -> Any:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return scalar(con, sql)
    finally:
        con.close()


def edit(root: Path, case_id: str, change: Callable[[Any], Any]) -> None:
    path = root / GOLD_ANSWERS
    doc = json.loads(path.read_text())
    entry = doc["answers"][case_id]
    entry["data"] = [[change(x) for x in row] for row in entry["data"]]
    path.write_text(json.dumps(doc))


def one_more(x: Any) -> Any:
    return x + 1  # the frozen sum, one unit off (an int, or the float an older validate froze)


def one_cent_more(x: Any) -> Any:
    return str(Decimal(x) + Decimal("0.01")) if isinstance(x, str) else x + 0.01


@pytest.fixture
def frozen(tmp_path: Path, shop_db: Path) -> Path:
    root = suite(tmp_path / "exact", shop_db)
    run = Capture(threads=(1, 2))
    assert run.run(root) == 0, run.err
    return root


def test_exact_numbers_are_frozen_as_the_engine_returned_them(frozen: Path, shop_db: Path) -> None:
    doc = json.loads((frozen / GOLD_ANSWERS).read_text())
    answers = doc["answers"]
    assert doc["format"] == 2
    huge = engine_value(shop_db, HUGE)
    assert answers["huge"]["data"] == [[int(huge)]] and answers["huge"]["kinds"] == ["decimal"]  # DECIMAL(38, 0)
    cents = engine_value(shop_db, CENTS)
    assert cents.as_tuple().exponent == -2
    assert answers["cents"]["data"] == [[format(cents, "f")]] and answers["cents"]["kinds"] == ["decimal"]
    assert "digest" in answers["rows"] and answers["rows"]["kinds"] == ["integer", "decimal"]


def test_an_unchanged_database_validates_clean_and_leaves_the_file(frozen: Path) -> None:
    before = (frozen / GOLD_ANSWERS).read_bytes()
    run = Capture(threads=(1, 2))
    assert run.run(frozen) == 0, run.err
    assert "gold_answers.json: 3 frozen answers for this content hash; 0 differ" in run.out
    assert "gold_answers.json: already holds these answers; left as it is" in run.out
    assert (frozen / GOLD_ANSWERS).read_bytes() == before


@pytest.mark.parametrize("case_id, change", [("huge", one_more), ("cents", one_cent_more)])
def test_a_frozen_answer_one_unit_off_is_reported(frozen: Path, case_id: str, change: Callable[[Any], Any]) -> None:
    edit(frozen, case_id, change)
    drifted = (frozen / GOLD_ANSWERS).read_bytes()
    run = Capture(threads=(1, 2))
    assert run.run(frozen) == 1
    assert [line for line in run.err if f"{case_id}: the gold answer differs from the one frozen" in line], run.err
    assert len([line for line in run.err if line.startswith("problem: ")]) == 1, run.err
    assert (frozen / GOLD_ANSWERS).read_bytes() == drifted  # nothing is overwritten


def test_the_digest_of_a_large_answer_is_exact_for_exact_numbers(frozen: Path) -> None:
    """A large answer is checked by its digest: a one-cent drift in a decimal changes it; the
    same values at another scale (what another engine release may return) do not."""
    from pytest_sqleval.products.validate import _digest
    kinds = ["integer", "decimal"]
    rows = [[i, f"{1000000 + i / 100:.2f}"] for i in range(300)]
    base = _digest(rows, kinds, True)
    assert json.loads((frozen / GOLD_ANSWERS).read_text())["answers"]["rows"]["digest"] == base
    cent = [r[:] for r in rows]
    cent[7][1] = f"{Decimal(cent[7][1]) + Decimal('0.01')}"
    assert _digest(cent, kinds, True) != base
    scaled = [[i, f"{Decimal(d):.4f}"] for i, d in rows]  # 1000000.0700, the same numbers
    assert _digest(scaled, kinds, True) == base
    as_decimal = [[f"{i}.00", d] for i, d in rows]  # the integers as a DECIMAL(x, 2): the same numbers
    assert _digest(as_decimal, ["decimal", "decimal"], True) == base
    huge = [[2**70 + 1, "1.00"]]
    assert _digest(huge, kinds, True) != _digest([[2**70, "1.00"]], kinds, True)


def _as_format_1(root: Path, db: Path) -> None:
    """Rewrite the file as format 1 froze it: no format key nor kinds, numbers via ``jsonable``
    and then floats to 12 significant digits; a large answer's digest over floats to 9."""
    path = root / GOLD_ANSWERS
    doc = json.loads(path.read_text())
    del doc["format"]
    con = duckdb.connect(str(db), read_only=True)
    try:
        for cid, entry in doc["answers"].items():
            del entry["kinds"]
            sql = next(c["gold_sql"] for c in CASES if c["id"] == cid)
            rows = [list(r.values()) for r in con.sql(sql).to_arrow_table().to_pylist()]  # as validate reads them
            canon = [[jsonable(x) for x in r] for r in rows]
            canon = [[float(f"{x:.12g}") if isinstance(x, float) and math.isfinite(x) else x for x in r] for r in canon]
            if "data" in entry:
                entry["data"] = canon
            else:
                body = [[f"{x:.9g}" if isinstance(x, float) else x for x in r] for r in canon]
                entry["digest"] = hashlib.sha256(json.dumps(body, default=str).encode()).hexdigest()  # ordered
    finally:
        con.close()
    path.write_text(json.dumps(doc))


def test_a_format_1_file_is_still_read_and_rewritten_exactly(frozen: Path, shop_db: Path) -> None:
    exact = (frozen / GOLD_ANSWERS).read_bytes()
    _as_format_1(frozen, shop_db)
    assert json.loads((frozen / GOLD_ANSWERS).read_text())["answers"]["huge"]["data"][0][0] != \
        int(engine_value(shop_db, HUGE))  # what format 1 lost
    run = Capture(threads=(1, 2))
    assert run.run(frozen) == 0, run.err
    assert [line for line in run.out if "(format 1: its numbers were rounded to 12 digits" in line
            and line.endswith("; 0 differ")], run.out
    assert (frozen / GOLD_ANSWERS).read_bytes() == exact  # rewritten in format 2


def test_a_format_1_file_with_a_drifted_answer_is_still_reported(frozen: Path, shop_db: Path) -> None:
    _as_format_1(frozen, shop_db)
    edit(frozen, "cents", lambda x: x + 100)
    run = Capture(threads=(1, 2))
    assert run.run(frozen) == 1
    assert [line for line in run.err if "cents: the gold answer differs from the one frozen" in line], run.err


def test_a_format_this_release_does_not_read_says_to_rerun_validate(frozen: Path) -> None:
    path = frozen / GOLD_ANSWERS
    doc = json.loads(path.read_text())
    doc["format"] = 99
    path.write_text(json.dumps(doc))
    run = Capture(threads=(1, 2))
    assert run.run(frozen) == 2
    assert len(run.err) == 1, run.err
    line = run.err[0]
    assert line.startswith(f"error: {path}: field 'format': gold-answers format 99 is not one this pytest-sqleval reads")
    assert "re-run `python -m pytest_sqleval validate SUITE`" in line
