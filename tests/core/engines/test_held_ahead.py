"""A request asked ahead that could not be sent at once (the requests whose answers are
unread fill the pipe's buffer: one more could stall it) is sent as soon as an answer is
read, not when its own answer is asked for: the engine process executes the next case while
pytest finishes the case before (issue 35). Requests go ahead by bytes, not by count: a
pipe that holds them all takes them all at once."""
from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path
from typing import Iterator

from pytest_sqleval.core.cases import Limits
from pytest_sqleval.core.engines.host import PIPE_MARGIN, _pipe_cost
from pytest_sqleval.core.grading.pipeline import SuiteGrader
from tests.hosts import child_of, engine_process_of, host_of

COUNT = "SELECT count(*) FROM customers"
SQLS = (COUNT, "SELECT count(*) FROM orders", "SELECT count(*) + 0 FROM customers")


def narrow(g: SuiteGrader, requests: int) -> None:
    """Make the grader's engine pipe hold ``requests`` of this file's requests (each under
    4 kB: two pages of the pipe's buffer at most), as a pipe the system would not widen."""
    setattr(child_of(g), "pipe_bytes", PIPE_MARGIN + requests * _pipe_cost(4000))  # as host.py's _widen sets it


@contextlib.contextmanager
def paused(g: SuiteGrader) -> Iterator[None]:
    """The engine process stopped (SIGSTOP) meanwhile: it answers nothing, so what is held
    is held whatever the machine's speed (an answer written already would make room)."""
    pid = child_of(g).pid
    os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(pid, signal.SIGCONT)


def test_a_wide_pipe_takes_every_request_asked_ahead_at_once(shop_db: Path, tmp_path: Path) -> None:
    """Before: at most two requests in flight, whatever their size; the third waited in this
    process until an answer was read, and the engine idled if this process was busy."""
    g = SuiteGrader(shop_db, limits=Limits(timeout_s=5), cache_dir=tmp_path)
    try:
        gold = g.gold(COUNT)
        for sql in SQLS:
            g.submit(sql, gold)
        tickets = [c.ticket for c in g._ahead.values()]
        assert engine_process_of(g).capacity >= 16 * _pipe_cost(4000)
        assert [t.sent for t in tickets] == [True, True, True]
        assert [g.grade(sql, gold).passed for sql in SQLS] == [True, False, True]
        assert host_of(g).restarts == 0
    finally:
        g.close()


def test_a_request_held_ahead_is_sent_once_an_answer_is_read(shop_db: Path, tmp_path: Path) -> None:
    g = SuiteGrader(shop_db, limits=Limits(timeout_s=5), cache_dir=tmp_path)
    try:
        gold = g.gold(COUNT)
        narrow(g, 2)
        with paused(g):
            for sql in SQLS:
                g.submit(sql, gold)
        tickets = [c.ticket for c in g._ahead.values()]
        assert all(len(t.blob) < 4000 for t in tickets)
        assert [t.sent for t in tickets] == [True, True, False]  # two answers unread fill it: the third is held
        first = g.grade(SQLS[0], gold)  # reads the first answer only
        assert tickets[2].sent and not tickets[1].done  # the held one went with that read, not at its turn
        verdicts = [first, g.grade(SQLS[1], gold), g.grade(SQLS[2], gold)]
        assert [v.passed for v in verdicts] == [True, False, True]
        assert [v.executed_sql for v in verdicts] == list(SQLS)
        assert host_of(g).restarts == 0
    finally:
        g.close()


def test_a_closed_database_drops_its_held_requests(shop_db: Path, tmp_path: Path) -> None:
    from pytest_sqleval.core.engines.host import EngineProcess
    process = EngineProcess()
    g = SuiteGrader(shop_db, limits=Limits(timeout_s=5), cache_dir=tmp_path,
                    started=SuiteGrader.start_engine(shop_db, Limits(timeout_s=5), tmp_path, process))
    try:
        gold = g.gold(COUNT)
        narrow(g, 2)
        with paused(g):
            for sql in SQLS:
                g.submit(sql, gold)
        assert len(process.held) == 1
        host_of(g).close()  # shared: the child lets the database go, and nothing of it is sent after
        assert not process.held
    finally:
        process.close()
