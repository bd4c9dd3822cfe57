"""The library API's deprecated-table patterns: the defaults when left out, ``[]`` for none, a
suite's database judged as that suite does, and a list that is not patterns refused."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.sqleval_helpers import sqleval_ini  # noqa: F401  (fixture)


# -- the library API's deprecated tables ---------------------------------------------------
@pytest.fixture(scope="module")
def graveyard_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``orders`` and its frozen copies: ``orders_old``, ``orders_v1``, ``orders_bak``, ``legacy.orders``."""
    import duckdb
    path = tmp_path_factory.mktemp("graveyard") / "graveyard.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE orders AS SELECT range AS id FROM range(10)")
    for name in ("orders_old", "orders_v1", "orders_bak"):
        con.execute(f"CREATE TABLE {name} AS SELECT * FROM orders")
    con.execute("CREATE SCHEMA legacy")
    con.execute("CREATE TABLE legacy.orders AS SELECT * FROM orders")
    con.close()
    return path


_UNSET = object()


@pytest.mark.parametrize(("deprecated", "table", "stale"), [
    (_UNSET, "orders_old", True),
    (_UNSET, "orders_v1", True),
    (_UNSET, "orders_bak", True),
    (_UNSET, "legacy.orders", False),  # legacy.* is a suite's own pattern, not a default
    (None, "orders_old", True),
    ([], "orders_old", False),
    ((), "orders_bak", False),
    (["legacy.*"], "legacy.orders", True),
    (["legacy.*"], "orders_old", False),
    ("legacy.*", "legacy.orders", True),  # one string is one pattern
    ("legacy.*", "orders_old", False),
    (("*_old", "legacy.*"), "legacy.orders", True),
    (("*_old", "legacy.*"), "orders_v1", False),
], ids=lambda v: "unset" if v is _UNSET else repr(v))
def test_compare_applies_the_default_deprecated_patterns_unless_told_otherwise(
        graveyard_db: Path, deprecated: Any, table: str, stale: bool) -> None:
    from pytest_sqleval import compare
    kwargs = {} if deprecated is _UNSET else {"deprecated_tables": deprecated}
    v = compare(f"SELECT count(*) FROM {table}", "SELECT count(*) FROM orders", graveyard_db, **kwargs)
    assert v.layers["compare"]["match"] is True  # the numbers agree: only the table decides
    if stale:
        assert not v.passed and v.error_class == "stale_table" and v.stale_tables == [table], v.explanation
    else:
        assert v.passed and v.stale_tables == [], v.explanation


def test_compare_on_a_suites_database_judges_as_that_suite_does(graveyard_db: Path) -> None:
    """The issue's case: a read of ``legacy.*`` on a suite that lists it is stale outside
    pytest too; an explicit list still wins, and a manifest naming another file is ignored."""
    from pytest_sqleval import compare
    manifest = graveyard_db.parent / "sqleval.toml"
    (graveyard_db.parent / "questions.jsonl").write_text('{"id": "q1", "question": "?", "gold_sql": "SELECT 1"}\n')
    manifest.write_text(f'[suite]\nname = "g"\nquestions = "questions.jsonl"\ndatabase = "{graveyard_db.name}"\n'
                        'deprecated_tables = ["legacy.*"]\n')
    read_legacy = ("SELECT count(*) FROM legacy.orders", "SELECT count(*) FROM orders")
    v = compare(*read_legacy, graveyard_db)
    assert not v.passed and v.error_class == "stale_table" and v.stale_tables == ["legacy.orders"]
    assert compare("SELECT count(*) FROM orders_old", read_legacy[1], graveyard_db).error_class == "stale_table"
    assert compare(*read_legacy, graveyard_db, deprecated_tables=[]).passed
    manifest.write_text(manifest.read_text().replace(graveyard_db.name, "another.duckdb"))
    assert compare(*read_legacy, graveyard_db).passed  # not this suite's database: the defaults


def test_compare_rejects_a_deprecated_list_that_is_not_patterns(graveyard_db: Path) -> None:
    from pytest_sqleval import compare
    with pytest.raises(TypeError, match="deprecated_tables must be table-name patterns"):
        compare("SELECT 1", "SELECT 1", graveyard_db, deprecated_tables=[None])

