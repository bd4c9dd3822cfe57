"""The package's import direction, read from the source with ``ast`` (imports inside
functions count): the agent and the warehouse are products built on the grader, so the
grader never imports them; reports read records, so they import neither the agent nor the
engines."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest_sqleval

PACKAGE = Path(pytest_sqleval.__file__).resolve().parent


def import_edges(root: Path = PACKAGE) -> set[tuple[str, str]]:
    """``(importing module, imported name)`` for every import in the package under ``root``,
    relative imports resolved; ``from x import y`` yields both ``x`` and ``x.y``."""
    edges: set[tuple[str, str]] = set()
    for path in sorted(root.rglob("*.py")):
        parts = (root.name, *path.relative_to(root).with_suffix("").parts)
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        package = parts[:-1]  # the package a relative import starts from
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                edges.update((module, alias.name) for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = list(package[:len(package) - node.level + 1]) if node.level else []
                target = ".".join(base + ([node.module] if node.module else []))
                edges.add((module, target))
                edges.update((module, f"{target}.{alias.name}") for alias in node.names)
    return edges


def test_the_grader_never_imports_the_agent_or_the_warehouse() -> None:
    products = ("pytest_sqleval.agent", "pytest_sqleval.warehouse")
    allowed = (*products, "pytest_sqleval.cli")  # the products themselves, and the command line that drives them

    def within(name: str, prefixes: tuple[str, ...]) -> bool:
        return any(name == p or name.startswith(p + ".") for p in prefixes)

    edges = import_edges()
    assert any(within(src, ("pytest_sqleval.backends",)) for src, _ in edges)  # the walk sees the package
    wrong = sorted(f"{src} -> {dst}" for src, dst in edges
                   if not within(src, allowed) and within(dst, products))
    wrong += sorted(f"{src} -> {dst}" for src, dst in edges  # reports read records only
                    if within(src, ("pytest_sqleval.reports",)) and within(dst, ("pytest_sqleval.engines",)))
    assert wrong == []
