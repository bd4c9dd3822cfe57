"""The structural and diagnostic layers, driven by clause-level fixture files.

Each ``tests/fixtures/structure/*.sql`` holds a gold, a prediction and, in its header,
the clauses expected to differ and the exact / no-values exact match outcomes."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import sqlglot

from pytest_sqleval.core.grading.diagnostics import diagnose
from pytest_sqleval.core.grading.structure import CLAUSE_WEIGHTS, compare_structure

FIXTURES = sorted((Path(__file__).parents[2] / "fixtures" / "structure").glob("*.sql"))


def load_fixture(path: Path) -> dict[str, Any]:
    header: dict[str, str] = {}
    sections: dict[str, list[str]] = {"gold": [], "predicted": []}
    current = None
    for line in path.read_text().splitlines():
        m = re.match(r"--\s*(\w+):\s*(.*)$", line)
        if m and m.group(1) in sections and not m.group(2):
            current = m.group(1)
        elif m and current is None:
            header[m.group(1)] = m.group(2).strip()
        elif current:
            sections[current].append(line)
    differing = [] if header["differing"] == "none" else [c.strip() for c in header["differing"].split(",")]
    return {"differing": differing, "exact": header["exact_match"] == "true",
            "no_values": header["no_values_exact_match"] == "true",
            "gold": "\n".join(sections["gold"]), "predicted": "\n".join(sections["predicted"])}


def test_there_are_fixtures() -> None:
    assert len(FIXTURES) >= 12


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_clause_diff_matches_the_fixture(path: Path) -> None:
    fx = load_fixture(path)
    result = compare_structure(sqlglot.parse_one(fx["predicted"], read="duckdb"),
                               sqlglot.parse_one(fx["gold"], read="duckdb"), "duckdb")
    assert sorted(result.differing_clauses) == sorted(fx["differing"])
    assert result.exact_match is fx["exact"]
    assert result.no_values_exact_match is fx["no_values"]
    assert (result.distance == 0) is (not fx["differing"])
    assert 0 <= result.distance <= 1


def test_clause_weights_sum_to_one() -> None:
    assert sum(CLAUSE_WEIGHTS.values()) == pytest.approx(1.0)


def test_distance_grows_with_the_number_of_differing_clauses() -> None:
    gold = sqlglot.parse_one("SELECT region, count(*) FROM customers WHERE NOT is_test GROUP BY region")
    one = sqlglot.parse_one("SELECT region, count(*) FROM customers GROUP BY region")
    two = sqlglot.parse_one("SELECT name, count(*) FROM customers GROUP BY name")
    assert compare_structure(one, gold, "duckdb").distance < compare_structure(two, gold, "duckdb").distance


def test_the_grader_reports_structure_and_diagnoses_a_fan_out(shop_db: Path) -> None:
    from pytest_sqleval.core.api import Grader
    with Grader(shop_db) as g:
        v = g.compare("SELECT o.id FROM orders o JOIN order_lines ol ON ol.order_id = o.id",
                      "SELECT o.id FROM orders o")
        assert v.error_class == "wrong_join"
        diag = v.layers["diagnostics"]
        assert diag["cardinality_explosion"] and diag["most_likely"] == "join"
        assert "joins" in v.layers["structure"]["differing_clauses"]
        assert "an extra join to order_lines" in v.explanation
        ordered = g.compare("SELECT id FROM orders ORDER BY id", "SELECT id FROM orders ORDER BY id DESC")
        assert ordered.layers["diagnostics"]["ordering_only"]
        assert ordered.failure_kind == "order_only"


def test_diagnostics_flag_ambiguity_and_map_columns() -> None:
    compare = {"match": False, "reason": "values", "gold_rows": 4, "pred_rows": 4, "row_precision": 0.9, "row_recall": 1.0,
               "gold_columns": ["region", "n"], "pred_columns": ["region", "cnt"], "gold_kinds": ["string", "integer"],
               "pred_kinds": ["string", "integer"], "column_matches": [True, False], "order_only": False}
    structure = {"clauses": {
        "select": {"match": False, "gold": ["count(*)"], "predicted": ["sum(x)"], "missing": ["count(*)"], "extra": ["sum(x)"]},
        "where": {"match": False, "gold": ["a = 1"], "predicted": [], "missing": ["a = 1"], "extra": []}}}
    d = diagnose(compare=compare, structure=structure, classification={"confidence": 0.8})
    assert d["column_map"][1] == {"position": 2, "gold_column": "n", "predicted_column": "cnt", "gold_kind": "integer",
                                  "predicted_kind": "integer", "match": False}
    assert d["scores"]["aggregate"] >= 0.5 and d["scores"]["filter"] >= 0.5
    assert d["ambiguous"] and d["confidence"] < 0.8


# The diff rewrites the trees in place (equalities ordered, literals replaced) and puts them
# back: the prediction's tree is shared by the layers and the gold's by its analysis.
_REWRITTEN = ("SELECT a.x, 3 FROM t AS a JOIN u AS b ON b.id = a.id "
              "WHERE 'k' = a.name AND a.y IN (1, 2, 3) AND 5 < a.z ORDER BY 1 LIMIT 10")


def _shape(tree: sqlglot.exp.Expr) -> list[tuple[str, int, str | None, int | None, int]]:
    """Every node with its parent, key and index: what an in-place rewrite could leave changed."""
    return [(type(n).__name__, id(n), n.arg_key, n.index, id(n.parent)) for n in tree.walk()]


def test_the_diff_leaves_both_trees_as_they_were() -> None:
    pred = sqlglot.parse_one(_REWRITTEN, read="sqlite")
    gold = sqlglot.parse_one(_REWRITTEN.replace("'k' = a.name", "a.name = 'j'"), read="sqlite")
    before = (pred.sql(), _shape(pred), gold.sql(), _shape(gold))
    from pytest_sqleval.core.grading.structure import gold_side
    result = compare_structure(pred, gold_side(gold, "sqlite"), "sqlite")
    assert result.no_values_exact_match and not result.exact_match  # the literals were stripped and ordered
    assert (pred.sql(), _shape(pred), gold.sql(), _shape(gold)) == before


def test_a_diff_stopped_by_the_budget_leaves_the_tree_as_it_was() -> None:
    from pytest_sqleval.core.grading.budget import Budget, OverBudget
    pred = sqlglot.parse_one(_REWRITTEN, read="sqlite")
    gold = sqlglot.parse_one("SELECT 1", read="sqlite")
    before = (pred.sql(), _shape(pred))
    ticks = 0

    class Spent(Budget):
        def tick(self) -> None:  # runs out in the middle of the literals' replacement
            nonlocal ticks
            ticks += 1
            if ticks > 12:
                raise OverBudget("spent")
    with pytest.raises(OverBudget):
        compare_structure(pred, gold, "sqlite", Spent(60))
    assert ticks > 12 and (pred.sql(), _shape(pred)) == before


def test_the_diff_copies_no_tree(monkeypatch: pytest.MonkeyPatch) -> None:
    """A copy of the prediction's tree cost more than the rest of the diff (issue 35)."""
    pred = sqlglot.parse_one(_REWRITTEN, read="sqlite")
    gold = sqlglot.parse_one(_REWRITTEN, read="sqlite")
    copies = []
    owner = next(c for c in type(pred).__mro__ if "copy" in c.__dict__)  # sqlglot's Expression
    real = owner.copy
    monkeypatch.setattr(owner, "copy", lambda self: copies.append(self) or real(self))
    assert compare_structure(pred, gold, "sqlite").normalized_match
    assert copies == []
