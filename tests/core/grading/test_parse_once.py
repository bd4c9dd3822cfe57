"""A prediction is parsed once in the grading process and its tree's node list is made once
(issue 35, gradecost): the parse, safety, grounding and stale layers share one
``ParseResult``, and the node list the safety layer reads is the one grounding and the
stale layer read (each made it again before: three walks of every prediction's tree).
A failure's diagnosis reads the prediction's names from that tree too. The verdicts and evidence are the same (the bench's 1000-case A/B compares every record)."""
from __future__ import annotations

from pathlib import Path

import pytest
import sqlglot

from pytest_sqleval.core.cases import Limits
from pytest_sqleval.core.grading import parse as parse_mod
from pytest_sqleval.core.grading.pipeline import SuiteGrader

GOLD = "SELECT id, name FROM products WHERE id <= 3"
PREDS = ["SELECT id, name FROM products WHERE id < 4",
         "SELECT p.id, p.name FROM products AS p WHERE p.id <= 2",
         "SELECT id, nam FROM products WHERE id <= 3"]  # a column the catalog does not have


def test_each_prediction_is_parsed_once_and_walked_once(shop_db: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    parses: list[str] = []
    walks: list[str] = []
    real_parse, real_one, real_nodes = sqlglot.parse, sqlglot.parse_one, parse_mod.tree_nodes

    def counting_parse(sql: str, *a: object, **k: object) -> object:
        parses.append(sql)
        return real_parse(sql, *a, **k)  # type: ignore[arg-type]

    def counting_one(sql: str, *a: object, **k: object) -> object:
        parses.append(sql)
        return real_one(sql, *a, **k)  # type: ignore[arg-type]

    def counting_nodes(tree: sqlglot.exp.Expr) -> object:
        walks.append(tree.sql())
        return real_nodes(tree)
    # a deprecated pattern, so the stale layer looks through every prediction's tables
    g = SuiteGrader(shop_db, limits=Limits(timeout_s=5), cache_dir=tmp_path, deprecated=("legacy_*",))
    try:
        gold = g.gold(GOLD)
        monkeypatch.setattr(sqlglot, "parse", counting_parse)
        monkeypatch.setattr(sqlglot, "parse_one", counting_one)
        for module in ("parse", "safety", "grounding", "classify"):
            monkeypatch.setattr(f"pytest_sqleval.core.grading.{module}.tree_nodes", counting_nodes, raising=False)
        verdicts = [g.grade(p, gold) for p in PREDS]
    finally:
        g.close()
    assert [v.passed for v in verdicts] == [True, False, False]
    assert verdicts[2].layers["grounding"]["hallucinated_columns"][0]["name"] == "nam"
    # the missing column's advice: the prediction's names read from the tree the parse layer made
    # (the diagnosis parsed it again before)
    assert verdicts[2].layers["diagnostics"]["advice"] == ["nam does not exist; the nearest existing column by name: name"]
    assert sorted(p for p in parses if p != GOLD) == sorted(PREDS)  # one parse of each prediction, none again
    assert len(walks) == len(PREDS)  # one node list each, read by safety, grounding and stale
