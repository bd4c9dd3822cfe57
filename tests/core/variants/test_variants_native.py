"""A suite's own generator adds native database variants through the
``pytest_sqleval_native_variants`` hook: they join the pool, distillation may choose them,
and a coincidence only other data of the suite's own kind can show (a country the pinned
database does not hold, which no generic variant may invent) fails on them."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.sqleval_helpers import read_results
from tests.core.variants.test_variants_grading import write_suite

CASES = [{"id": "fr", "question": "How many French customers?",
          "gold_sql": "SELECT count(*) FROM customers WHERE country = 'FR'"}]
PREDICTIONS = {"fr": "SELECT count(*) FROM customers WHERE country <> 'DE'"}  # FR and DE only, here

CONFTEST = '''
import duckdb, shutil
import pytest

@pytest.hookimpl
def pytest_sqleval_native_variants(manifest, folder, seed):
    path = folder / f"shop-seed{seed + 1}.duckdb"
    if not path.is_file():
        shutil.copyfile(manifest.database, path)
        con = duckdb.connect(str(path))
        con.execute("UPDATE customers SET country = 'IT' WHERE id % 4 = 0")
        con.close()
    return [path]
'''


@pytest.fixture
def suite(pytester: pytest.Pytester) -> Path:
    return write_suite(pytester.path, CASES, PREDICTIONS, 2)


def run(pytester: pytest.Pytester) -> dict:
    pytester.runpytest("suite", "--sqleval-backend=predictions:preds.jsonl", "-p", "no:cacheprovider")
    (record,) = read_results(pytester.path)
    return record


def test_a_native_variant_catches_what_no_generic_one_may(pytester: pytest.Pytester, suite: Path) -> None:
    assert run(pytester)["status"] == "passed"  # the generic variants keep the column's two countries
    (suite / "conftest.py").write_text(CONFTEST)
    record = run(pytester)
    assert (record["status"], record["failure_kind"]) == ("failed", "coincidental_pass")
    assert record["layers"]["variants"]["mismatch"]["kind"] == "native"
    natives = list((pytester.path / ".sqleval-cache" / "variants").rglob("native/shop-seed1.duckdb"))
    assert len(natives) == 1


def test_a_file_hashed_by_its_writer_is_not_hashed_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A native variant's generator hashes what it built (``build_warehouse``); kept beside
    the file (``remember_content_hash``), the pool reads it instead of hashing again."""
    from pytest_sqleval.core.variants import build
    from tests.core.variants.test_variants_grading import make_db
    db = tmp_path / "shop.duckdb"
    make_db(db)
    digest = build.content_hash(db)
    build.remember_content_hash(db, digest)
    monkeypatch.setattr(build, "content_hash", lambda path: pytest.fail("hashed again"))
    assert build.remembered_content_hash(db) == digest
