"""Smoke test of the coincidence bench's own mutant builder (bench/vbench/mutate.py): every
mutant kind it promises appears and changes the query's answer on some data, every control
keeps it, and it stays independent of the grader's generator it is used to score."""
from __future__ import annotations

import ast
import sys
from pathlib import Path

import duckdb
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from vbench.mutate import controls, mutants  # noqa: E402

GOLD = ("WITH big AS (SELECT o_cust, sum(o_total) AS total FROM orders WHERE o_total BETWEEN 10 AND 500 "
        "GROUP BY o_cust HAVING count(*) >= 2) "
        "SELECT c.c_name, b.total FROM customer AS c, big AS b WHERE c.c_id = b.o_cust AND c.c_nation IN ('FR', 'DE') "
        "AND c.c_since > DATE '2020-01-01' ORDER BY b.total DESC LIMIT 8")


@pytest.fixture(scope="module")
def con() -> duckdb.DuckDBPyConnection:
    c = duckdb.connect()
    c.execute("CREATE TABLE customer (c_id INT, c_name TEXT, c_nation TEXT, c_since DATE)")
    c.execute("CREATE TABLE orders (o_id INT, o_cust INT, o_total INT)")
    c.execute("INSERT INTO customer SELECT i, 'n' || i, ['FR', 'DE', 'US'][1 + i % 3], DATE '2019-12-01' + (i * 7)::INT "
              "FROM range(60) t(i)")
    c.execute("INSERT INTO orders SELECT i, (i * 13) % 97, (i * 37) % 600 FROM range(150) t(i)")
    return c


def _rows(con: duckdb.DuckDBPyConnection, sql: str) -> list[tuple[object, ...]]:
    return con.execute(sql).fetchall()


def test_every_mutant_kind_is_built_and_changes_the_answer(con: duckdb.DuckDBPyConnection) -> None:
    built = mutants(GOLD, "duckdb")
    assert {m.kind for m in built} == {"literal", "conjunct", "join_predicate", "operator", "aggregate", "order",
                                       "having", "limit"}
    gold = _rows(con, GOLD)
    changed = {m.kind for m in built if _rows(con, m.sql) != gold}  # each kind: some mutant is a near-miss here
    assert changed == {m.kind for m in built}
    assert len({m.sql for m in built}) == len(built)


def test_controls_keep_the_answer(con: duckdb.DuckDBPyConnection) -> None:
    rewrites = controls(GOLD, "duckdb")
    assert {"conjunct_order", "between", "in_or", "alias", "comparison_sides", "cte_inline"} <= {c.kind for c in rewrites}
    gold = _rows(con, GOLD)
    for c in rewrites:
        assert c.sql != GOLD
        assert _rows(con, c.sql) == gold, c.kind


def test_builder_never_imports_the_graders_generator() -> None:
    tree = ast.parse((ROOT / "bench" / "vbench" / "mutate.py").read_text())
    imported = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert not [m for m in imported if m.startswith("pytest_sqleval")]
