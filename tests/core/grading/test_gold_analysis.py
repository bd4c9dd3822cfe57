"""No layer work repeated between runs: what follows from a gold SQL alone (its order, the
SQL the engine runs, its tables and joins, its side of the structural diff) is stored
with the gold answers, so a rerun parses no gold; the stored analysis is keyed by all its
inputs, so a changed gold, dialect or grader misses it, and the verdicts stay the same."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import sqlglot

from pytest_sqleval.core.grading import gold_analysis
from pytest_sqleval.core.grading.gold_analysis import GoldAnalyses
from pytest_sqleval.core.grading.parse import parse_sql
from pytest_sqleval.core.grading.pipeline import SuiteGrader
from pytest_sqleval.core.grading.structure import compare_structure, gold_side

GOLD = "SELECT T2.name, count(*) FROM pet AS T1 JOIN owner AS T2 ON T1.owner_id = T2.id WHERE T1.age > 2 " \
       "GROUP BY T2.id ORDER BY count(*) DESC, T2.name LIMIT 2"
PREDICTIONS = [
    GOLD,  # the gold itself: the structural shortcut
    "SELECT o.name, count(p.id) FROM owner o JOIN pet p ON o.id = p.owner_id WHERE p.age > 2 GROUP BY o.id "
    "ORDER BY count(*) DESC, o.name LIMIT 2",
    "SELECT T2.name, count(*) FROM pet AS T1 JOIN owner AS T2 ON T2.id = T1.owner_id WHERE T1.age > 2 "
    "GROUP BY T2.id ORDER BY count(*) DESC, T2.name LIMIT 2",  # the gold with one equality turned round
    "SELECT T2.name, count(*) FROM pet AS T1 JOIN owner AS T2 ON T1.owner_id = T2.id WHERE T1.age > 5 "
    "GROUP BY T2.id ORDER BY count(*) DESC, T2.name LIMIT 2",  # another value
    "SELECT name FROM owner",
    "SELECT nme FROM owner",
]


def pets_db(path: Path, extra: int = 0) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE owner (id INTEGER PRIMARY KEY, name TEXT)")
    con.execute("CREATE TABLE pet (id INTEGER PRIMARY KEY, owner_id INTEGER, age INTEGER)")
    con.executemany("INSERT INTO owner VALUES (?, ?)", [(i, f"owner {i}") for i in range(1, 5 + extra)])
    con.executemany("INSERT INTO pet VALUES (?, ?, ?)", [(i, 1 + i % (4 + extra), i % 7) for i in range(1, 30)])
    con.commit()
    con.close()
    return path


def gold_parses(monkeypatch: pytest.MonkeyPatch, gold: str) -> list[str]:
    """Every parse of ``gold`` from here on (``parse_sql`` parses through ``sqlglot.parse``)."""
    seen: list[str] = []
    real = sqlglot.parse

    def counting(sql: str, *args: Any, **kw: Any) -> Any:
        if sql == gold:
            seen.append(sql)
        return real(sql, *args, **kw)
    monkeypatch.setattr(sqlglot, "parse", counting)
    return seen


def verdicts(grader: SuiteGrader, gold_sql: str, predictions: list[str]) -> list[dict[str, Any]]:
    gold = grader.gold(gold_sql)
    out = []
    for sql in predictions:
        v = grader.grade(sql, gold)
        out.append({"status": v.status, "error_class": v.error_class, "failure_kind": v.failure_kind,
                    "structure": v.layers.get("structure"), "compare": v.layers.get("compare")})
    return out


def test_a_rerun_parses_no_gold_and_grades_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db, cache = pets_db(tmp_path / "pets.sqlite"), tmp_path / "cache"
    first = SuiteGrader(db, dialect="sqlite", cache_dir=cache)
    try:
        before = verdicts(first, GOLD, PREDICTIONS[1:])  # no prediction is the gold's text: only golds are counted
    finally:
        first.close()
    assert (cache / gold_analysis.FOLDER).is_dir()
    parses = gold_parses(monkeypatch, GOLD)
    rerun = SuiteGrader(db, dialect="sqlite", cache_dir=cache)
    try:
        after = verdicts(rerun, GOLD, PREDICTIONS[1:])
        assert rerun.gold_executions == 0
    finally:
        rerun.close()
    assert parses == []  # neither the gold answer nor its analysis needed the gold parsed
    assert after == before
    assert [v["status"] for v in after] == ["passed", "passed", "failed", "failed", "failed"]


def test_a_changed_gold_dialect_or_grader_misses_the_stored_analysis(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "analysis"
    stored = GoldAnalyses(folder, "sqlite", "sqlite").get(GOLD)
    parses = gold_parses(monkeypatch, GOLD)
    assert GoldAnalyses(folder, "sqlite", "sqlite").get(GOLD) == stored and parses == []  # read back, equal
    GoldAnalyses(folder, "sqlite", "duckdb").get(GOLD)  # another engine: another SQL to run, another entry
    assert len(parses) == 1
    changed = GOLD.replace("LIMIT 2", "LIMIT 3")
    assert GoldAnalyses(folder, "sqlite", "sqlite").get(changed).order.limit == 3  # another gold: its own
    monkeypatch.setattr(gold_analysis, "_version", "another grader")  # a new sqlglot or grader code
    assert GoldAnalyses(folder, "sqlite", "sqlite").get(GOLD) == stored and len(parses) == 2
    monkeypatch.setattr(gold_analysis, "_version", None)
    for entry in folder.glob("*.json"):  # damaged entries read as missing and are written again
        entry.write_text(entry.read_text()[:40])
    assert GoldAnalyses(folder, "sqlite", "sqlite").get(GOLD) == stored and len(parses) == 3
    entry = max(folder.glob("*.json"), key=lambda p: p.stat().st_size)  # the one rewritten whole
    data = json.loads(entry.read_text())  # an entry claiming another gold's key is not read
    assert data["gold_sql"] == GOLD
    entry.write_text(json.dumps({**data, "gold_sql": changed}))
    assert GoldAnalyses(folder, "sqlite", "sqlite").get(GOLD) == stored and len(parses) == 4


def test_a_changed_database_recomputes_the_gold_answer_not_a_stale_one(tmp_path: Path) -> None:
    db, cache = pets_db(tmp_path / "pets.sqlite"), tmp_path / "cache"
    count = "SELECT count(*) FROM owner"
    g = SuiteGrader(db, dialect="sqlite", cache_dir=cache)
    try:
        assert g.grade("SELECT count(id) FROM owner", g.gold(count)).passed
    finally:
        g.close()
    db.unlink()
    pets_db(db, extra=3)  # same path and gold SQL, other content: 7 owners, not 4
    g = SuiteGrader(db, dialect="sqlite", cache_dir=cache)
    try:
        gold = g.gold(count)
        assert g.gold_executions == 1 and gold.preview == [[7]]
        assert g.grade("SELECT count(id) FROM owner", gold).passed
        assert not g.grade("SELECT 4", gold).passed
    finally:
        g.close()


@pytest.mark.parametrize("pred", PREDICTIONS)
def test_the_stored_gold_side_gives_the_structural_evidence_of_the_gold_tree(pred: str) -> None:
    """The gold's side read back from its stored form, and the shortcut for a prediction
    written as the gold, give the evidence the diff of the two trees gives."""
    gold_tree, tree = parse_sql(GOLD, "sqlite").expression, parse_sql(pred, "sqlite").expression
    assert gold_tree is not None and tree is not None
    side = gold_side(gold_tree, "sqlite", GOLD)
    stored = type(side).from_json(json.loads(json.dumps(side.to_json())))
    direct = compare_structure(tree, gold_tree, "sqlite").to_dict()
    assert compare_structure(tree, stored, "sqlite", pred_sql=pred).to_dict() == direct
    assert compare_structure(tree, stored, "sqlite").to_dict() == direct


def test_a_case_asking_ahead_then_at_its_setup_builds_its_gold_request_once(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The request (its policy, its key: a hash of JSON) is the same both times a case asks
    for its gold; it was built twice (issue 35). Another case with the same gold SQL gets
    its own, from its own policy."""
    from pytest_sqleval.core.cases import BenchmarkCase
    db = pets_db(tmp_path / "pets.sqlite")
    g = SuiteGrader(db, dialect="sqlite", cache_dir=tmp_path / "cache")
    gets = []
    real = g.analyses.get
    monkeypatch.setattr(g.analyses, "get", lambda sql, dialect=None: gets.append(sql) or real(sql, dialect))
    sql = "SELECT name FROM owner ORDER BY name"
    try:
        case = BenchmarkCase(id="q1", question="owners", gold_sql=sql)
        assert g.stored_gold(sql, case, ask_ahead=True) is None  # not stored yet: sent ahead
        first = g.gold(sql, case)
        assert len(gets) == 1 and first.policy.ordered
        other = BenchmarkCase(id="q2", question="owners, any order", gold_sql=sql, order_matters=False)
        second = g.gold(sql, other)
        assert len(gets) == 2 and not second.policy.ordered and second.key != first.key
    finally:
        g.close()


def test_the_analysis_version_covers_the_modules_below_grading_that_make_it() -> None:
    """A gold's ordering (``core.ordering``) and its SQLite strings made strings
    (``core.sqlite_quoting``) are part of its stored analysis: a change to either module
    must miss the stored analyses, as a change to ``parse.py`` does."""
    from pytest_sqleval.core import ordering, sqlite_quoting
    covered = {(Path(gold_analysis.__file__).parent / name).resolve() for name in gold_analysis._MODULES}
    assert {Path(ordering.__file__).resolve(), Path(sqlite_quoting.__file__).resolve()} <= covered
