"""Shared fixtures for the plugin's own tests (tests/) and the grader's adversarial suite
(grader_tests/): a small shop database built deterministically, and a suite writer."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

# In-process pytester runs drop every module a run imported first. Native extensions that
# refuse a second import in one process (DuckDB's nanobind enums abort; numpy raises) must
# therefore be imported here, before any inner run.
import duckdb  # noqa: E402,F401
import pyarrow  # noqa: E402,F401

import numpy  # noqa: E402,F401

# The same for ``importlib_metadata`` (imported by litellm): it adds a finder to
# ``sys.meta_path`` that outlives its dropped module, and every later inner run then finds
# no pytest11 entry points, so the plugin's options are "unrecognized".
try:
    import importlib_metadata  # noqa: E402,F401
except ImportError:  # pragma: no cover - only present with litellm
    pass

SHOP_SQL = """
CREATE SCHEMA legacy;
CREATE TABLE customers (id INTEGER PRIMARY KEY, name VARCHAR, region VARCHAR, signup DATE, is_test BOOLEAN);
INSERT INTO customers SELECT i, 'customer ' || i, ['north','south','east','west'][1 + i % 4],
    DATE '2024-01-01' + CAST((i * 7) % 365 AS INTEGER), i % 13 = 0 FROM range(1, 41) t(i);
CREATE TABLE products (id INTEGER PRIMARY KEY, name VARCHAR, category VARCHAR, price DECIMAL(10,2));
INSERT INTO products SELECT i, 'product ' || i, ['toys','books','garden'][1 + i % 3], 5 + (i * 37) % 90 FROM range(1, 16) t(i);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER, ordered_at TIMESTAMP, status VARCHAR, discount DOUBLE);
INSERT INTO orders SELECT i, 1 + (i * 17) % 40, TIMESTAMP '2025-01-01 08:00:00' + INTERVAL (i * 13) HOUR,
    CASE WHEN i % 11 = 0 THEN 'cancelled' ELSE 'complete' END, CASE WHEN i % 5 = 0 THEN 0.1 ELSE NULL END FROM range(1, 201) t(i);
CREATE TABLE order_lines (order_id INTEGER, line_no INTEGER, product_id INTEGER, quantity INTEGER, unit_price DECIMAL(10,2));
INSERT INTO order_lines SELECT o.id, l, 1 + (o.id * 7 + l * 3) % 15, 1 + (o.id + l) % 4, p.price
    FROM orders o, range(1, 4) r(l), products p WHERE l <= 1 + o.id % 3 AND p.id = 1 + (o.id * 7 + l * 3) % 15;
CREATE TABLE orders_old AS SELECT * FROM orders WHERE id <= 120;
CREATE TABLE legacy.customers_v1 AS SELECT id, name, region FROM customers;
CREATE VIEW order_totals AS SELECT order_id, sum(quantity * unit_price) AS total FROM order_lines GROUP BY order_id;
"""


def build_shop(path: Path) -> Path:
    import duckdb
    con = duckdb.connect(str(path))
    for stmt in duckdb.extract_statements(SHOP_SQL):
        con.execute(stmt)
    con.execute("CHECKPOINT")
    con.close()
    return path


@pytest.fixture(scope="session")
def shop_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A read-only-by-contract DuckDB file: customers, products, orders, order_lines,
    a stale ``orders_old`` and ``legacy.customers_v1``. Do not write to it."""
    return build_shop(tmp_path_factory.mktemp("shop") / "shop.duckdb")


@pytest.fixture
def make_suite(pytester: pytest.Pytester, shop_db: Path) -> Callable[..., Path]:
    """Write a suite into the pytester directory: ``make_suite(cases, name="shop", **suite_keys)``.

    ``cases`` is a list of dicts (one JSONL line each) or a raw string. The database is
    a copy of ``shop_db`` unless ``database=`` is given."""

    def make(cases: list[dict[str, Any]] | str, *, folder: str = "suite", manifest_extra: str = "",
             database: Path | None = None) -> Path:
        root = pytester.path / folder
        root.mkdir(parents=True, exist_ok=True)
        db = root / "shop.duckdb"
        if database is None:
            db.write_bytes(shop_db.read_bytes())
        else:
            db = database
        lines = cases if isinstance(cases, str) else "\n".join(json.dumps(c) for c in cases) + "\n"
        (root / "questions.jsonl").write_text(lines)
        (root / "sqleval.toml").write_text(
            f'[suite]\nname = "{folder}"\nquestions = "questions.jsonl"\ndatabase = "{db}"\n'
            f'dialect = "duckdb"\n{manifest_extra}')
        return root

    return make
