"""Hardening, second round: routes by which a prediction was graded as something it is not.

- backend labels that collide, so one predictions file silently stands in for another;
- the library API's deprecated-table patterns (defaults when left out, ``[]`` = none);
- the PostgreSQL sandbox: functions reached by quoting, schema qualification or an
  unlisted SQL-running function, a session killed from inside, a role undone with
  ``set_config``, and a superuser connection.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest



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


def test_compare_rejects_a_deprecated_list_that_is_not_patterns(graveyard_db: Path) -> None:
    from pytest_sqleval import compare
    with pytest.raises(TypeError, match="deprecated_tables must be table-name patterns"):
        compare("SELECT 1", "SELECT 1", graveyard_db, deprecated_tables=[None])
