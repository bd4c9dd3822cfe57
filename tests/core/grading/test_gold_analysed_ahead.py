"""A gold sent ahead of its case is analysed in the engine process (issue 35): on a first
run the grading process, pytest's critical path, parses no gold; the engine process,
which runs beside it, parses, analyses and stores it with the gold's execution. The
verdicts are the ones a grader that analyses its golds itself gives."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_sqleval.core.cases import BenchmarkCase
from pytest_sqleval.core.errors import GoldError
from pytest_sqleval.core.grading import gold_analysis
from pytest_sqleval.core.grading.gold_analysis import analyse
from pytest_sqleval.core.grading.pipeline import SuiteGrader
from tests.hosts import host_of

from .test_gold_analysis import GOLD, PREDICTIONS, pets_db

GOLDS = [GOLD, "SELECT name FROM owner ORDER BY name", "SELECT count(*) FROM pet WHERE age > 3",
         "SELECT DISTINCT owner_id FROM pet"]


def local_analyses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every gold analysed in this (the grading) process from here on."""
    seen: list[str] = []

    def counting(sql: str, *args: Any, **kw: Any) -> Any:
        seen.append(sql)
        return analyse(sql, *args, **kw)
    monkeypatch.setattr(gold_analysis, "analyse", counting)
    return seen


def graded(grader: SuiteGrader, ahead: bool) -> list[dict[str, Any]]:
    """Each case graded as the plugin's items do: the next case's gold asked ahead while
    this one is graded (``ahead``), or each gold asked for at its setup only."""
    cases = [BenchmarkCase(id=f"q{i}", question="?", gold_sql=g) for i, g in enumerate(GOLDS)]
    if ahead:
        assert grader.stored_case_gold(cases[0], ask_ahead=True) is None  # not stored: sent ahead
    out = []
    for i, case in enumerate(cases):
        gold = grader.case_gold(case)
        if ahead and i + 1 < len(cases):
            assert grader.stored_case_gold(cases[i + 1], ask_ahead=True) is None
        for sql in PREDICTIONS:
            v = grader.grade(sql, gold, gold_sql=case.gold_sql)
            out.append({"status": v.status, "error_class": v.error_class, "failure_kind": v.failure_kind,
                        "layers": {k: v.layers[k] for k in ("structure", "compare", "grounding") if k in v.layers}})
    return out


def test_a_gold_asked_ahead_is_analysed_in_the_engine_process_and_grades_the_same(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = pets_db(tmp_path / "pets.sqlite")
    here = SuiteGrader(db, dialect="sqlite", cache_dir=tmp_path / "here")
    try:
        expected = graded(here, ahead=False)  # every gold analysed in this process
    finally:
        here.close()
    seen = local_analyses(monkeypatch)
    moved = SuiteGrader(db, dialect="sqlite", cache_dir=tmp_path / "moved")
    try:
        got = graded(moved, ahead=True)
        assert moved.gold_executions == len(GOLDS)
    finally:
        moved.close()
    assert seen == []  # no gold analysed here: the engine process did it
    assert got == expected
    stored = sorted((tmp_path / "moved" / gold_analysis.FOLDER).glob("*.json"))
    assert len(stored) == len(GOLDS)  # stored where the grader reads them: a rerun analyses nothing
    # the request the engine process built is the grader's own: one stored answer per gold, none twice
    assert len(list((tmp_path / "moved" / "gold").glob("*.json"))) == len(GOLDS)
    assert sorted(p.name for p in (tmp_path / "here" / "gold").glob("*.json")) == \
        sorted(p.name for p in (tmp_path / "moved" / "gold").glob("*.json"))


def test_the_engine_process_answers_a_gold_with_its_analysis(tmp_path: Path) -> None:
    db = pets_db(tmp_path / "pets.sqlite")
    g = SuiteGrader(db, dialect="sqlite", cache_dir=tmp_path / "cache")
    try:
        case = BenchmarkCase(id="q1", question="?", gold_sql=GOLD)
        g._ask_analysed(GOLD, case, None)
        answer = host_of(g).result(g._analysed_ahead[(GOLD, None)])
        _, request, _ = g._make_gold_request(GOLD, case)
    finally:
        g.close()
    assert answer["analysis"] == analyse(GOLD, "sqlite", "sqlite").to_json()
    assert answer["key"] == request["key"]
    assert answer["meta"]["rows"] == 2 and not answer["meta"]["cached"]


def test_a_gold_that_cannot_be_analysed_ahead_is_the_same_case_error(tmp_path: Path) -> None:
    db = pets_db(tmp_path / "pets.sqlite")
    bad = "SELECT name FROM owner WHERE"
    messages = []
    for ahead in (False, True):
        g = SuiteGrader(db, dialect="sqlite", cache_dir=tmp_path / f"cache{ahead}")
        try:
            case = BenchmarkCase(id="q1", question="?", gold_sql=bad)
            if ahead:
                assert g.stored_case_gold(case, ask_ahead=True) is None
            with pytest.raises(GoldError) as err:
                g.case_gold(case)
            messages.append(str(err.value))
            assert g.grade("SELECT name FROM owner", g.case_gold(BenchmarkCase(id="q2", question="?",
                                                                               gold_sql="SELECT name FROM owner"))).passed
        finally:
            g.close()
    assert messages[0] == messages[1] and "does not parse" in messages[0]


def test_a_gold_asked_two_cases_ahead_is_answered_when_the_case_before_asks(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """What lets a first run send each prediction ahead, as a rerun does: the gold asked two
    cases ahead (``ask_gold_ahead``) is answered when the case before asks for it ahead
    (``stored_case_gold``), not only at its own setup."""
    db = pets_db(tmp_path / "pets.sqlite")
    g = SuiteGrader(db, dialect="sqlite", cache_dir=tmp_path / "cache")
    try:
        cases = [BenchmarkCase(id=f"q{i}", question="?", gold_sql=sql) for i, sql in enumerate(GOLDS[:2])]
        g.ask_gold_ahead(cases[1])
        g.ask_gold_ahead(cases[1])  # asked once, however often
        seen = local_analyses(monkeypatch)
        ahead = g.stored_case_gold(cases[1], ask_ahead=True)
        assert ahead is not None and not ahead.cached and seen == []
        own = g.case_gold(cases[1])
        assert own.key == ahead.key and own.rows == ahead.rows and g.gold_executions == 1
        assert g.grade("SELECT name FROM owner ORDER BY name", own).passed
    finally:
        g.close()


def test_a_gold_on_its_way_is_not_waited_for_without_wait(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The case before asks for the next case's gold first without waiting (its own grading
    goes first, while the engine analyses and runs that gold), then again, waiting, once it
    is graded: the next prediction is then sent and runs while pytest reports this case."""
    db = pets_db(tmp_path / "pets.sqlite")
    g = SuiteGrader(db, dialect="sqlite", cache_dir=tmp_path / "cache")
    try:
        case = BenchmarkCase(id="q1", question="?", gold_sql=GOLDS[1])
        g.ask_gold_ahead(case)
        ticket = g._analysed_ahead[(GOLDS[1], None)]
        assert ticket.sent and not ticket.done
        seen = local_analyses(monkeypatch)
        assert g.stored_case_gold(case, ask_ahead=True, wait=False) is None
        assert not ticket.done and seen == []  # neither read nor analysed here
        ahead = g.stored_case_gold(case, ask_ahead=True)
        assert ahead is not None and ticket.done and seen == []
        assert g.grade("SELECT name FROM owner ORDER BY name", g.case_gold(case)).passed
    finally:
        g.close()
