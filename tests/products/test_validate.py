"""``python -m pytest_sqleval validate``: the Vantage-like suite passes and freezes its
gold answers; each way a suite can be broken gives exactly one line naming the problem.

The Vantage warehouse is built once per session at scale 0.1 through the
``build-warehouse`` subcommand (shared between xdist workers under a file lock); the
broken suites run on the small shop database from the top-level conftest."""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import duckdb
import pytest

from pytest_sqleval import cli
from pytest_sqleval.products.warehouse import pinned_hash
from pytest_sqleval.products.warehouse.leakage import measure
from pytest_sqleval.products.warehouse.semantic import check_layer, load_layer
from pytest_sqleval.products.validate import GOLD_ANSWERS, validate_suite

VANTAGE = Path(__file__).resolve().parents[2] / "cases" / "vantage"
SCALE = 0.1


class Capture:
    """``out`` and ``err`` sinks for ``validate_suite``; ``defaults`` go to every run."""

    def __init__(self, **defaults: Any) -> None:
        self.out: list[str] = []
        self.err: list[str] = []
        self.defaults = defaults

    def run(self, suite: Path, **kw: Any) -> int:
        return validate_suite(suite, out=self.out.append, err=self.err.append, **{**self.defaults, **kw})

    @property
    def problems(self) -> list[str]:
        return [line for line in self.err if line.startswith("problem: ")]

    @property
    def errors(self) -> list[str]:
        return [line for line in self.err if line.startswith("error: ")]


@pytest.fixture
def vantage_suite(tmp_path: Path, vantage_01: Path) -> Path:
    """A copy of cases/vantage (questions, layer, manifest) reading the scale-0.1 warehouse."""
    suite = tmp_path / "vantage"
    suite.mkdir()
    for name in ("questions.jsonl", "semantic_layer.yaml"):
        shutil.copy(VANTAGE / name, suite / name)
    manifest = []
    for line in (VANTAGE / "sqleval.toml").read_text().splitlines():
        if line.startswith("database ="):
            line = f'database = "{vantage_01}"'
        if not line.startswith("build ="):
            manifest.append(line)
    (suite / "sqleval.toml").write_text("\n".join(manifest) + "\n")
    return suite


def write_suite(root: Path, db: Path, cases: list[dict[str, Any]], *, extra: str = "",
                layer: str | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "questions.jsonl").write_text("\n".join(json.dumps(c) for c in cases) + "\n")
    (root / "sqleval.toml").write_text(f'[suite]\nname = "{root.name}"\nquestions = "questions.jsonl"\n'
                                       f'database = "{db}"\ndialect = "duckdb"\n{extra}')
    if layer is not None:
        (root / "semantic_layer.yaml").write_text(layer)
    return root


GOOD = [
    {"id": "c1", "question": "How many customers are real, not internal test accounts?",
     "gold_sql": "SELECT count(*) FROM customers WHERE NOT is_test", "expected_shape": "scalar", "tags": ["customers"]},
    {"id": "c2", "question": "Orders per status, most common first.",
     "gold_sql": "SELECT status, count(*) AS n FROM orders GROUP BY status ORDER BY n DESC, status",
     "expected_shape": "table", "tags": ["orders"]},
    {"id": "c3", "question": "Units sold per product category across completed orders.",
     "gold_sql": "SELECT p.category, sum(l.quantity) FROM orders o JOIN order_lines l ON l.order_id = o.id "
                 "JOIN products p ON p.id = l.product_id WHERE o.status = 'complete' GROUP BY p.category",
     "expected_shape": "table", "tags": ["3_tables", "orders"]},
]

SHOP_LAYER = """\
version: 1
dialect: duckdb
snapshot_logical_date: 2025-06-30
cubes:
  - name: orders
    sql_table: orders
    description: One row per order; cancelled orders carry no revenue.
    filters:
      - sql: "status = 'complete'"
    measures:
      - { name: order_count, sql: id, type: count }
    dimensions:
      - { name: ordered_at, sql: ordered_at, type: time }
    joins:
      - { name: customers, sql: "{orders}.customer_id = {customers}.id", relationship: many_to_one }
    anti_patterns:
      - "orders_old is a frozen copy from a migration; never query it."
  - name: customers
    sql_table: customers
    description: Customer accounts; is_test marks internal accounts.
    dimensions:
      - { name: region, sql: region, type: string }
deprecated_tables:
  - { table: orders_old, use_instead: orders }
  - { table: legacy.customers_v1, use_instead: customers }
"""


# -- the Vantage suite ---------------------------------------------------------------------------
def test_vantage_like_suite_passes_prints_counts_and_freezes(vantage_suite: Path) -> None:
    cap = Capture()
    assert cap.run(vantage_suite) == 0, cap.err
    text = "\n".join(cap.out)
    assert ("constraints: cases 60 (=60) ok; 3_tables 14 (>=10) ok; trap_metric 15 (>=8) ok; "
            "contested_definition 9 (>=5) ok; deprecated_trap 15 (>=5) ok") in text
    assert "splits: main 50, held_out 10 (held out)" in text  # the held-out golds are checked and frozen too
    assert "60 golds rerun on threads=2; threads=4; a copy with rows in shuffled order" in text
    assert "60 identical, 0 differ" in text
    assert "every table and column it names exists" in text
    assert "layer leakage: max question 3-gram containment" in text
    frozen = json.loads((vantage_suite / GOLD_ANSWERS).read_text())
    assert frozen["content_hash"] == pinned_hash(SCALE)
    assert len(frozen["answers"]) == 60 and all("data" in a for a in frozen["answers"].values())
    assert (vantage_suite / GOLD_ANSWERS).stat().st_size < 64 * 1024  # small enough to commit
    assert cap.err == []

    # A rerun with the same answers leaves the file as it is (no churn of its engine line).
    before = (vantage_suite / GOLD_ANSWERS).read_bytes()
    same = Capture()
    assert same.run(vantage_suite, threads=(1,)) == 0
    assert f"{GOLD_ANSWERS}: already holds these answers; left as it is" in same.out
    assert (vantage_suite / GOLD_ANSWERS).read_bytes() == before

    # A rerun compares with the frozen answers, whichever engine release froze them (an answer
    # must not depend on the engine's rounding): a drifted one is a problem, nothing is overwritten.
    path = vantage_suite / GOLD_ANSWERS
    frozen["answers"]["q01"]["data"] = [[1]]
    frozen["engine_version"] = "1.9.9"
    path.write_text(json.dumps(frozen))
    again = Capture()
    assert again.run(vantage_suite, threads=(1,)) == 1
    assert (f"{GOLD_ANSWERS}: 60 frozen answers for this content hash (frozen under duckdb 1.9.9, checked under "
            f"{duckdb.__version__}); 1 differ") in again.out
    assert len(again.problems) == 1 and "q01: the gold answer differs from the one frozen" in again.problems[0]
    assert json.loads(path.read_text())["answers"]["q01"]["data"] == [[1]]


def test_shipped_layer_is_clean_against_the_warehouse(vantage_01: Path) -> None:
    from pytest_sqleval.core.cases import DEFAULT_DEPRECATED
    from pytest_sqleval.core.engines.duckdb_sandbox import DuckDBSandbox
    layer = load_layer(VANTAGE / "semantic_layer.yaml")
    db = DuckDBSandbox(vantage_01)
    try:
        assert check_layer(layer, db.catalog(), DEFAULT_DEPRECATED + ("legacy.*",)) == []
    finally:
        db.close()
    names = {c.name for c in layer.cubes}
    assert {"revenue", "orders", "web_sessions", "returns", "customers"} <= names
    assert len(layer.deprecated_tables) == 23


# -- broken suites: one line per problem ------------------------------------------------------------
def test_clean_shop_suite_passes(tmp_path: Path, shop_db: Path) -> None:
    suite = write_suite(tmp_path / "shop", shop_db, GOOD, layer=SHOP_LAYER,
                        extra="[constraints]\ncases = 3\n[constraints.min_tagged]\n3_tables = 1\n")
    cap = Capture()
    assert cap.run(suite) == 0, cap.err
    assert "constraints: cases 3 (=3) ok; 3_tables 1 (>=1) ok" in cap.out
    assert (suite / GOLD_ANSWERS).is_file()


def test_empty_gold(tmp_path: Path, shop_db: Path) -> None:
    cases = GOOD + [{"id": "e1", "question": "Orders from the future?", "gold_sql": "SELECT id FROM orders WHERE id < 0"}]
    suite = write_suite(tmp_path / "shop", shop_db, cases)
    cap = Capture()
    assert cap.run(suite) == 1
    assert len(cap.problems) == 1, cap.problems
    assert "questions.jsonl:4: e1: gold returns no rows" in cap.problems[0]
    assert not (suite / GOLD_ANSWERS).exists()
    assert cap.out[-1].startswith("validate: 1 problem in ") and cap.out[-1].endswith("gold answers not frozen")


def test_declared_empty_answer_is_fine_and_null_scalar_is_not(tmp_path: Path, shop_db: Path) -> None:
    cases = GOOD + [
        {"id": "e1", "question": "Orders with a negative id?", "gold_sql": "SELECT id FROM orders WHERE id < 0",
         "expected_shape": "empty"},
        {"id": "e2", "question": "Revenue of negative orders?", "gold_sql": "SELECT sum(id) FROM orders WHERE id < 0"},
    ]
    cap = Capture()
    assert cap.run(write_suite(tmp_path / "shop", shop_db, cases)) == 1
    assert len(cap.problems) == 1 and "e2: gold returns only NULLs" in cap.problems[0]


def test_nondeterministic_gold_found_on_the_shuffled_copy(tmp_path: Path, shop_db: Path) -> None:
    cases = GOOD + [{"id": "n1", "question": "All customer names in one string.",
                     "gold_sql": "SELECT string_agg(name, ',') FROM customers"}]
    cap = Capture()
    assert cap.run(write_suite(tmp_path / "shop", shop_db, cases)) == 1
    assert len(cap.problems) == 1, cap.problems
    assert "n1: nondeterministic gold: its answer on a copy with rows in shuffled order" in cap.problems[0]


@pytest.mark.parametrize(("sql", "expected"), [
    ("SELECT id FROM orders LIMIT 3", "LIMIT without ORDER BY"),
    ("SELECT count(*) FROM orders WHERE ordered_at < now()", "gold calls NOW(), which drifts"),
    ("SELECT customer_id, count(*) AS n FROM orders GROUP BY 1 ORDER BY n DESC LIMIT 1", "cuts through rows tied"),
    ("SELECT count(*) FROM orders WHERE customer_id IN (SELECT customer_id FROM orders GROUP BY 1 ORDER BY count(*) "
     "DESC LIMIT 1)", "a LIMIT 1 inside a subquery cuts through rows tied on its ORDER BY keys"),
    ("WITH top AS (SELECT customer_id FROM orders LIMIT 2) SELECT count(*) FROM orders JOIN top USING (customer_id)",
     "a LIMIT 2 without ORDER BY inside a subquery"),
], ids=["limit-without-order-by", "drifting-function", "limit-through-ties", "subquery-limit-through-ties",
        "cte-limit-without-order-by"])
def test_gold_that_is_unstable_by_construction(tmp_path: Path, shop_db: Path, sql: str, expected: str) -> None:
    cases = GOOD + [{"id": "u1", "question": "Unstable.", "gold_sql": sql}]
    cap = Capture()
    assert cap.run(write_suite(tmp_path / "shop", shop_db, cases), threads=(1,)) == 1
    assert any(expected in p and "u1" in p for p in cap.problems), cap.problems


def test_constraint_not_met(tmp_path: Path, shop_db: Path) -> None:
    cases = GOOD + [{"id": "c4", "question": "Customers per region.", "tags": ["3_tables"],
                     "gold_sql": "SELECT region, count(*) FROM customers GROUP BY region"}]
    extra = "[constraints]\ncases = 4\n[constraints.min_tagged]\norders = 3\n"
    cap = Capture()
    assert cap.run(write_suite(tmp_path / "shop", shop_db, cases, extra=extra)) == 1
    assert cap.problems == [
        "problem: constraint not met: 2 cases are tagged 'orders', the manifest asks for at least 3",
        f"problem: {tmp_path / 'shop' / 'questions.jsonl'}:4: c4: tagged '3_tables' but its gold reads 1 table (customers)",
    ]
    assert "constraints: cases 4 (=4) ok; orders 2 (>=3) NOT MET" in cap.out


def test_bad_constraint_value_is_bad_input(tmp_path: Path, shop_db: Path) -> None:
    suite = write_suite(tmp_path / "shop", shop_db, GOOD, extra="[constraints]\ncases = \"many\"\n")
    cap = Capture()
    assert cap.run(suite) == 2
    assert cap.errors == [f"error: {suite / 'sqleval.toml'}:7: field 'constraints.cases': expected a whole number of "
                          f"cases, got 'many' (fix: write cases = 50)"]


def test_leaky_layer(tmp_path: Path, shop_db: Path) -> None:
    leaky = SHOP_LAYER.replace('      - "orders_old is a frozen copy from a migration; never query it."',
                               '      - "orders_old is a frozen copy from a migration; never query it."\n'
                               '      - "Units sold per product category across completed orders: sum order line '
                               'quantities by category."')
    cap = Capture()
    assert cap.run(write_suite(tmp_path / "shop", shop_db, GOOD, layer=leaky)) == 1
    assert len(cap.problems) == 1, cap.problems
    assert "semantic_layer.yaml: leaks question c3:" in cap.problems[0]
    assert "threshold 0.25" in cap.problems[0]


def test_bad_yaml_names_file_and_line(tmp_path: Path, shop_db: Path) -> None:
    broken = SHOP_LAYER.replace("    sql_table: customers\n", "    sql_table: customers\n   description: [oops\n")
    line = broken.splitlines().index("   description: [oops") + 1
    suite = write_suite(tmp_path / "shop", shop_db, GOOD, layer=broken)
    cap = Capture()
    assert cap.run(suite) == 2
    assert len(cap.errors) == 1 and cap.problems == []
    assert cap.errors[0].startswith(f"error: {suite / 'semantic_layer.yaml'}:{line}: not valid YAML")
    assert "(fix: check the indentation" in cap.errors[0]


def test_layer_naming_a_missing_column_names_the_cube(tmp_path: Path, shop_db: Path) -> None:
    wrong = SHOP_LAYER.replace("{ name: region, sql: region, type: string }",
                               "{ name: region, sql: sales_region, type: string }")
    cap = Capture()
    assert cap.run(write_suite(tmp_path / "shop", shop_db, GOOD, layer=wrong)) == 1
    assert len(cap.problems) == 1, cap.problems
    assert "cube 'customers': dimension 'region': column sales_region does not exist in customers" in cap.problems[0]


def test_cli_exit_codes(tmp_path: Path, shop_db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = write_suite(tmp_path / "shop", shop_db, GOOD)
    assert cli.main(["validate", str(suite), "--no-freeze", "--threads", "1,2"]) == 0
    assert not (suite / GOLD_ANSWERS).exists()
    assert cli.main(["validate", str(tmp_path / "nowhere")]) == 2
    assert "no suite manifest here" in capsys.readouterr().err
    assert cli.main(["validate", str(suite), "--threads", "0"]) == 2


# -- the layer loader and the leakage measure, without a database -------------------------------------
@pytest.mark.parametrize(("mutate", "expected"), [
    (lambda s: s.replace("version: 1", "version: 2"), ":1: field 'version': unsupported version 2"),
    (lambda s: s.replace("type: count", "type: tally"), "measure 'order_count' has unknown type 'tally'"),
    (lambda s: s.replace("    sql_table: customers\n", "    sql_table: customers\n    sql_table: other\n"),
     "duplicate key 'sql_table'"),
    (lambda s: s.replace("anti_patterns:", "anti_pattern:"), "unknown key 'anti_pattern' in cube 'orders' (did you mean 'anti_patterns'?)"),
])
def test_layer_shape_errors_name_the_line(tmp_path: Path, mutate: Any, expected: str) -> None:
    from pytest_sqleval.core.errors import BadInputError
    path = tmp_path / "semantic_layer.yaml"
    path.write_text(mutate(SHOP_LAYER))
    with pytest.raises(BadInputError) as info:
        load_layer(path)
    assert expected in str(info.value)
    assert info.value.line is not None and info.value.fix


def test_leakage_ignores_the_schemas_own_words() -> None:
    questions = [("q1", "What was revenue in the fiscal year that starts on February 1 and ends on January 31?")]
    layer = [("cube calendar", "The fiscal year starts on February 1 and ends on January 31.")]
    assert measure(layer, questions).score > 0.25
    schema = ["The fiscal year starts on February 1 and ends on January 31."]
    assert measure(layer, questions, background=schema).score == 0.0
