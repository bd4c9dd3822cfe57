"""``validate`` checks every gold of a case: each SQL gold on its own (parse, determinism),
SQL golds that disagree flagged, result files consistent with their SQL."""
from __future__ import annotations

from pathlib import Path

from tests.products.test_validate import Capture
from tests.products.test_validate_grader_contract import sqleval_suite


def test_every_sql_gold_is_checked_and_disagreeing_golds_are_flagged(tmp_path: Path, shop_db: Path) -> None:
    cases = [{"id": "alts", "question": "?", "gold_sql": ["SELECT id FROM customers WHERE id < 3",
                                                           "SELECT id, name FROM customers WHERE id < 3"]},
             {"id": "same", "question": "?", "gold_sql": ["SELECT id FROM customers WHERE id < 3",
                                                           "SELECT id FROM customers WHERE id <= 2"]}]
    root = sqleval_suite(tmp_path / "s", shop_db, cases)
    run = Capture(threads=(1,))
    assert run.run(root) == 0, run.err
    warnings = [line for line in run.out if line.startswith("warning: ")]
    assert len(warnings) == 1 and "alts gold 1: gives another answer than gold 0" in warnings[0], run.out
    assert any("several golds: 2 cases; 1 SQL gold(s) flagged" in line for line in run.out), run.out


def test_a_second_sql_gold_that_fails_is_a_problem_naming_it(tmp_path: Path, shop_db: Path) -> None:
    cases = [{"id": "bad", "question": "?", "gold_sql": ["SELECT id FROM customers", "SELECT nope FROM customers"]}]
    root = sqleval_suite(tmp_path / "s", shop_db, cases)
    run = Capture(threads=(1,))
    assert run.run(root) == 1
    assert any("bad gold 1: gold fails on the database" in line for line in run.problems), run.err


def test_a_result_file_must_hold_its_sqls_answer(tmp_path: Path, shop_db: Path) -> None:
    cases = [{"id": "ok", "question": "?", "gold_sql": "SELECT id, signup FROM customers WHERE id < 3",
              "gold_results": ["ok.csv"]},
             {"id": "off", "question": "?", "gold_sql": "SELECT id FROM customers WHERE id < 3",
              "gold_results": ["off.csv"]}]
    root = sqleval_suite(tmp_path / "s", shop_db, cases)
    (root / "ok.csv").write_text("id,signup\n2,2024-01-15\n1,2024-01-08\n")  # inferred DATE, rows in another order
    (root / "off.csv").write_text("id\n1\n3\n")
    run = Capture(threads=(1,))
    assert run.run(root) == 1
    assert len(run.problems) == 1 and "off: none of its result files (off.csv) holds the answer" in run.problems[0]
