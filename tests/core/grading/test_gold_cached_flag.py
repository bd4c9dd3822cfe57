"""A record's ``gold.cached`` says whether the gold's answer was in the gold store when the
run began: a function of the starting store alone. With golds asked ahead, which case's
request stores a shared gold first depends on timing (and with shards, on the shard), so
"read from the store by this request" made two runs from one store give different records."""
from __future__ import annotations

from pathlib import Path

import pytest

from pytest_sqleval.core.cases import BenchmarkCase
from pytest_sqleval.core.grading.pipeline import SuiteGrader

from .test_gold_analysis import pets_db

SHARED = "SELECT name FROM owner ORDER BY name"
OTHER = "SELECT count(*) FROM pet WHERE age > 3"


def cases() -> list[BenchmarkCase]:
    """Three cases; the first and the third share one gold."""
    return [BenchmarkCase(id=f"q{i}", question="?", gold_sql=g) for i, g in enumerate((SHARED, OTHER, SHARED))]


def cached_flags(grader: SuiteGrader, ahead: bool) -> list[bool]:
    """Each case's ``cached``, the cases set up in order as the plugin's items do (with
    ``ahead``, the next case's golds asked ahead while this one is graded)."""
    order = cases()
    if ahead:
        grader.stored_case_gold(order[0], ask_ahead=True)
    out = []
    for i, case in enumerate(order):
        if ahead and i + 1 < len(order):
            grader.stored_case_gold(order[i + 1], ask_ahead=True)
        out.append(grader.case_gold(case).cached)
    return out


@pytest.mark.parametrize("ahead", [False, True], ids=["at-setup", "asked-ahead"])
def test_cached_is_whether_the_store_held_the_gold_when_the_run_began(tmp_path: Path, ahead: bool) -> None:
    db = pets_db(tmp_path / "pets.sqlite")
    first = SuiteGrader(db, dialect="sqlite", cache_dir=tmp_path / "cache")
    try:
        assert cached_flags(first, ahead) == [False, False, False]  # the third's gold: stored by the first, in this run
        assert first.gold_executions == 2  # the shared gold ran once
    finally:
        first.close()
    rerun = SuiteGrader(db, dialect="sqlite", cache_dir=tmp_path / "cache")
    try:
        assert cached_flags(rerun, ahead) == [True, True, True]
        assert rerun.gold_executions == 0
    finally:
        rerun.close()


def test_the_engine_process_says_stored_in_this_run_too(tmp_path: Path) -> None:
    """A gold request that reaches the engine process after an earlier one stored its answer
    (requests sent ahead, another grader's) reads the store there: still not ``cached``."""
    db = pets_db(tmp_path / "pets.sqlite")
    g = SuiteGrader(db, dialect="sqlite", cache_dir=tmp_path / "cache")
    try:
        assert g.host is not None
        _, request, _ = g._gold_request(SHARED, None)
        first, second = g.host.call("gold", request), g.host.call("gold", request)
        assert (first["cached"], first.get("ran"), second["cached"], second.get("ran")) == (False, True, False, None)
    finally:
        g.close()
    again = SuiteGrader(db, dialect="sqlite", cache_dir=tmp_path / "cache")
    try:
        assert again.host is not None
        assert again.host.call("gold", request)["cached"] is True
    finally:
        again.close()


def test_a_gold_another_process_of_the_run_stored_is_not_cached(tmp_path: Path) -> None:
    """Two graders of one run on one store (xdist workers, their controller's start time):
    what one stored after the run began is not ``cached`` for the other; for the next run it is."""
    import time
    db = pets_db(tmp_path / "pets.sqlite")
    began = time.time_ns()
    one = SuiteGrader(db, dialect="sqlite", cache_dir=tmp_path / "cache", began_ns=began)
    try:
        assert not one.gold(SHARED).cached
    finally:
        one.close()
    other = SuiteGrader(db, dialect="sqlite", cache_dir=tmp_path / "cache", began_ns=began)
    try:
        assert not other.gold(SHARED).cached and other.gold_executions == 0  # read from the store, stored in this run
    finally:
        other.close()
    later = SuiteGrader(db, dialect="sqlite", cache_dir=tmp_path / "cache")
    try:
        assert later.gold(SHARED).cached
    finally:
        later.close()
