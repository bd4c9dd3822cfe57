"""A request asked ahead that could not be sent at once (two answers unread: a third could
stall the pipe) is sent as soon as an answer is read, not when its own answer is asked for:
the engine process executes the next case while pytest finishes the case before (issue 35)."""
from __future__ import annotations

from pathlib import Path

from pytest_sqleval.core.cases import Limits
from pytest_sqleval.core.grading.pipeline import SuiteGrader

COUNT = "SELECT count(*) FROM customers"
SQLS = (COUNT, "SELECT count(*) FROM orders", "SELECT count(*) + 0 FROM customers")


def test_a_request_held_ahead_is_sent_once_an_answer_is_read(shop_db: Path, tmp_path: Path) -> None:
    g = SuiteGrader(shop_db, limits=Limits(timeout_s=5), cache_dir=tmp_path)
    try:
        gold = g.gold(COUNT)
        for sql in SQLS:
            g.submit(sql, gold)
        tickets = [c.ticket for c in g._ahead.values()]
        assert [t.sent for t in tickets] == [True, True, False]  # two answers unread: the third is held
        first = g.grade(SQLS[0], gold)  # reads the first answer only
        assert tickets[2].sent and not tickets[1].done  # the held one went with that read, not at its turn
        verdicts = [first, g.grade(SQLS[1], gold), g.grade(SQLS[2], gold)]
        assert [v.passed for v in verdicts] == [True, False, True]
        assert [v.executed_sql for v in verdicts] == list(SQLS)
        assert g.host.restarts == 0
    finally:
        g.close()


def test_a_closed_database_drops_its_held_requests(shop_db: Path, tmp_path: Path) -> None:
    from pytest_sqleval.core.engines.host import EngineProcess
    process = EngineProcess()
    g = SuiteGrader(shop_db, limits=Limits(timeout_s=5), cache_dir=tmp_path,
                    started=SuiteGrader.start_engine(shop_db, Limits(timeout_s=5), tmp_path, process))
    try:
        gold = g.gold(COUNT)
        for sql in SQLS:
            g.submit(sql, gold)
        assert len(process.held) == 1
        g.host.close()  # shared: the child lets the database go, and nothing of it is sent after
        assert not process.held
    finally:
        process.close()
