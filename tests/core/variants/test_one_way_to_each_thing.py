"""The variants' builder does each of two things one way, shared with the rest:

- the variant writers (``boundaries``, ``nonempty``, ``outputs``) open a database only
  through ``sqlite_io.variant_connection``: one DuckDB thread for a variant being written
  (its frozen hash must not depend on the machine's cores) and text read as the sandbox
  reads it. Three copies of that rule had drifted apart once already."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

import pytest_sqleval.core.variants as variants

WRITERS = ("boundaries", "nonempty", "outputs")


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
