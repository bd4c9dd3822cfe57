"""The variants' builder does each of two things one way, shared with the rest:

- the variant writers (``boundaries``, ``nonempty``, ``outputs``), the builder (``build``)
  and the observer of constraints (``constraints``) open a database only
  through ``sqlite_io.variant_connection``: one DuckDB thread for a variant being written
  (its frozen hash must not depend on the machine's cores) and text read as the sandbox
  reads it. Three copies of that rule had drifted apart once already;
- a grown LIMIT gold's tie probe is the grader's own (``core.ordering.order_info``, below
  both: variants may not import grading), so the builder and the grader never disagree on
  whether a LIMIT cuts through a tie."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest
import sqlglot

import pytest_sqleval.core.variants as variants

WRITERS = ("boundaries", "nonempty", "outputs", "build", "constraints")


def _connects(module: str) -> list[str]:
    """Each call in ``module`` that opens a database itself (a driver's ``connect``, or a
    ``connect``/``_connect`` of its own), with its line."""
    tree = ast.parse((Path(variants.__file__).parent / f"{module}.py").read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in ("connect", "_connect"):
                found.append(f"{module}.py:{node.lineno}: {ast.unparse(node.func)}(...)")
        elif isinstance(node, ast.FunctionDef) and node.name.endswith("connect"):
            found.append(f"{module}.py:{node.lineno}: def {node.name}")
    return found


@pytest.mark.parametrize("module", WRITERS)
def test_a_variant_writer_opens_databases_only_through_variant_connection(module: str) -> None:
    assert _connects(module) == []


@pytest.mark.parametrize(("sql", "dialect"), [
    ("SELECT a, b FROM t ORDER BY b DESC, 1 LIMIT 5", "duckdb"),
    ("SELECT a AS x, sum(b) FROM t GROUP BY a ORDER BY sum(b) DESC, x LIMIT 3", "duckdb"),
    # a key that is no output column: appended, its position counted from the end (the builder's
    # copy named it sqleval_k0 and counted from the start)
    ("SELECT a FROM t ORDER BY b LIMIT 5", "duckdb"),
    ("SELECT a, sum(b) FROM t GROUP BY a ORDER BY max(c), a LIMIT 5", "sqlite"),
    ("SELECT DISTINCT a FROM t ORDER BY b LIMIT 2", "sqlite"),
    ("SELECT a FROM t UNION SELECT b FROM u ORDER BY 1 LIMIT 4", "sqlite"),
    ("SELECT * FROM t ORDER BY 2 LIMIT 10", "sqlite"),
])
def test_the_builders_tie_probe_is_the_graders(sql: str, dialect: str) -> None:
    from pytest_sqleval.core.ordering import order_info
    from pytest_sqleval.core.variants.outputs import _probe
    tree = sqlglot.parse_one(sql, read=dialect)
    info = order_info(tree, dialect, nested=False)
    expected = ((info.probe_sql, tuple(info.key_positions))
                if info.probe_sql is not None and info.key_positions is not None else (None, None))
    assert _probe(tree, dialect) == expected


@pytest.mark.parametrize("sql", [
    "SELECT i_brand, count(*) AS n FROM item GROUP BY i_brand ORDER BY sum(i_price) DESC LIMIT 8",
    "SELECT * FROM (SELECT a, sum(b) AS s FROM t GROUP BY a) AS x ORDER BY a NULLS FIRST LIMIT 100",
])
def test_the_builder_still_probes_no_gold_whose_keys_go_beside_a_star(sql: str) -> None:
    """The builder's copy gave no probe where a key had to be appended to a select list with
    a ``*`` in it; the grader's gives one (8 TPC-DS golds). Kept, so that the variants built,
    and their frozen hashes, stay what they were: only the code moved."""
    from pytest_sqleval.core.ordering import order_info
    from pytest_sqleval.core.variants.outputs import _probe
    tree = sqlglot.parse_one(sql, read="duckdb")
    assert order_info(tree, "duckdb", nested=False).probe_sql is not None
    assert _probe(tree, "duckdb") == (None, None)
