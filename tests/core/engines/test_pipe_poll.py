"""The engine's answers are taken as soon as they are written (issue 35): a frame cut by a
timeout is kept whole for the next read, an answer already in the pipe is read without
waiting (``poll``), a request held ahead goes out with it, and the next case's gold
answered by the engine lets that case's prediction go ahead at once: the engine process
works while the grading process does, instead of the two taking turns."""
from __future__ import annotations

import os
import pickle
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from pytest_sqleval.core.cases import BenchmarkCase, Limits
from pytest_sqleval.core.engines.host import _HDR, PIPE_MARGIN, _Frames, _pipe_cost
from pytest_sqleval.core.grading.pipeline import SuiteGrader
from tests.hosts import child_of, host_of

from .test_held_ahead import COUNT, SQLS, paused

BOUND_S = 60.0  # how long a test waits for the engine process at most


def test_a_frame_cut_by_a_timeout_is_kept_whole_for_the_next_read() -> None:
    r, w = os.pipe()
    try:
        frames = _Frames(SimpleNamespace(stdout=SimpleNamespace(fileno=lambda: r)))
        blob = pickle.dumps(("result", {"rows": "x" * 1000}))
        frame = _HDR.pack(len(blob)) + blob
        os.write(w, frame[:500])
        with pytest.raises(TimeoutError):
            frames.next(time.monotonic() + 0.05)
        os.write(w, frame[500:] + frame)  # the rest of it and a second frame, read in one go
        assert frames.next(time.monotonic() + BOUND_S) == ("result", {"rows": "x" * 1000})
        assert frames.next(0.0) == ("result", {"rows": "x" * 1000})  # read already: no wait at all
        with pytest.raises(TimeoutError):
            frames.next(0.0)
        os.close(w)
        w = -1
        with pytest.raises(EOFError):
            frames.next(time.monotonic() + BOUND_S)
    finally:
        os.close(r)
        if w >= 0:
            os.close(w)


def test_an_answer_already_written_is_taken_without_waiting(shop_db: Path, tmp_path: Path) -> None:
    g = SuiteGrader(shop_db, limits=Limits(timeout_s=5), cache_dir=tmp_path)
    try:
        gold = g.gold(COUNT)
        setattr(child_of(g), "pipe_bytes", PIPE_MARGIN + 2 * _pipe_cost(4000))  # a pipe that holds two requests
        with paused(g):
            for sql in SQLS:
                g.submit(sql, gold)
        tickets = [c.ticket for c in g._ahead.values()]
        assert [t.sent for t in tickets] == [True, True, False]  # two answers unread fill it: the third is held
        bound = time.monotonic() + BOUND_S
        while not tickets[0].done and time.monotonic() < bound:
            host_of(g).poll()  # never waits: takes what the engine has written
            time.sleep(0.01)
        assert tickets[0].done and tickets[0].value["compare"]["match"]
        assert tickets[2].sent  # room made by the answer taken: the held request went out then
        verdicts = [g.grade(sql, gold) for sql in SQLS]
        assert [v.passed for v in verdicts] == [True, False, True]
        assert host_of(g).restarts == 0
    finally:
        g.close()


def test_a_next_case_whose_gold_is_answered_goes_ahead_without_a_wait(tmp_path: Path) -> None:
    """The case before asks for the next case's gold without waiting (``wait=False``): once
    the engine has answered it, that answer is taken there and then, so the next prediction
    is sent while this one is graded, not after (before: None until a read of the pipe)."""
    from tests.core.grading.test_gold_analysis import pets_db
    db = pets_db(tmp_path / "pets.sqlite")
    g = SuiteGrader(db, dialect="sqlite", cache_dir=tmp_path / "cache")
    try:
        case = BenchmarkCase(id="q1", question="?", gold_sql="SELECT name FROM owner ORDER BY name")
        g.ask_gold_ahead(case)
        ahead = None
        bound = time.monotonic() + BOUND_S
        while ahead is None and time.monotonic() < bound:
            ahead = g.stored_case_gold(case, ask_ahead=True, wait=False)
            time.sleep(0.01)
        assert ahead is not None and not ahead.cached and g.gold_executions == 0
        g.submit("SELECT name FROM owner ORDER BY name", ahead)
        own = g.case_gold(case)
        assert own.key == ahead.key and g.gold_executions == 1
        assert g.grade("SELECT name FROM owner ORDER BY name", own).passed
    finally:
        g.close()


def test_a_request_costs_two_messages_not_three(shop_db: Path, tmp_path: Path, frame_kinds: list[str]) -> None:
    """Each answer carries the engine's clock and CPU time, from which the parent times the
    next request: the engine no longer tells each request's start (before: started,
    executed, answer). Its time limit still holds from there (``test_killed_queries``)."""
    kinds = frame_kinds
    g = SuiteGrader(shop_db, limits=Limits(timeout_s=5), cache_dir=tmp_path)
    try:
        gold = g.gold(COUNT)
        assert kinds[0] == "started"  # a fresh engine process's first request: its start is told
        kinds.clear()
        assert g.grade("SELECT count(*) FROM orders", gold).status == "failed"
        assert kinds == ["executed", "result"]
    finally:
        g.close()
