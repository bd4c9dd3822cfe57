"""Live progress of generation: done/total, calls in flight, tokens, cost and failures, as
plain lines in a log, in place on a terminal (erased before pytest writes), the same totals
under ``-n 2`` as serially, and never inside a case's captured output."""
from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Callable

import pytest

from pytest_sqleval.reports import progress
from tests.sqleval_helpers import LEAN, gen_cases, sqleval_ini  # noqa: F401

BACKEND = '''
import asyncio
from pytest_sqleval.core.backends.base import GenerationResult

async def generate(case):
    await asyncio.sleep(0.25)
    if case.id == "q03":
        raise RuntimeError("the model fell over")
    return GenerationResult(case.gold_sql, {"prompt_tokens": 90, "completion_tokens": 10, "cost_usd": 0.001})
'''
FINAL = "generation 12/12 · 0 in flight · 1,100 tokens · $0.0110 · 1 failed"


@pytest.fixture
def slow_suite(pytester: pytest.Pytester, make_suite: Callable[..., Path]) -> str:
    make_suite(gen_cases(12))
    pytester.makepyfile(slowbackend=BACKEND)
    return "--sqleval-backend=slowbackend:generate"


#: the last case's generation is held until that case's own setup (``HOLD_CONFTEST``), so
#: every case before it is reported while a generation is outstanding, however loaded the
#: machine: before, a slow engine start let all twelve finish before the first report, and
#: a run whose generations are all done before progress is first looked at shows none
HELD_BACKEND = BACKEND.replace("    await asyncio.sleep(0.25)\n", """    await asyncio.sleep(0.25)
    if case.id == "q12":
        for _ in range(1200):  # bounded: a minute at most
            if RELEASE.is_set():
                break
            await asyncio.sleep(0.05)
""").replace("import asyncio\n", "import asyncio\nimport threading\nRELEASE = threading.Event()\n")
HOLD_CONFTEST = """
import heldbackend

def pytest_runtest_setup(item):
    if item.name.startswith("q12"):
        heldbackend.RELEASE.set()
"""


def test_a_log_gets_plain_lines_and_the_summary_the_totals(pytester: pytest.Pytester, make_suite: Callable[..., Path],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "SHOW_AFTER_S", 0.0)
    make_suite(gen_cases(12))
    pytester.makepyfile(heldbackend=HELD_BACKEND)
    pytester.makeconftest(HOLD_CONFTEST)
    result = pytester.runpytest("suite", "--sqleval-backend=heldbackend:generate", "--sqleval-concurrency=2",
                                "-p", "no:cacheprovider")
    result.assert_outcomes(passed=11, errors=1)
    lines = result.stdout.lines
    live = [line for line in lines if line.startswith("sqleval: generation ")]
    assert len(live) >= 2, live  # at least one while outstanding, and the last
    for line in live[:-1]:
        assert re.fullmatch(r"sqleval: generation (\d+)/12 · [0-2] in flight · [\d,]+ tokens · \$\d\.\d{4} · [01] failed",
                            line), live
    done = [int(line.split()[2].split("/")[0]) for line in live]
    assert done == sorted(done) and done[0] < 12, live  # in order, the first while generations were outstanding
    assert live[-1] == f"sqleval: {FINAL}"  # the last one, once every generation is done
    assert FINAL in lines  # and the run's summary
    assert not any("generation" in line for line in _captured_sections(lines))  # never a case's captured output
    assert "\x1b" not in result.stdout.str()  # no terminal codes in a log


def test_the_totals_are_the_same_under_xdist(pytester: pytest.Pytester, slow_suite: str) -> None:
    result = pytester.runpytest_subprocess(*LEAN, "suite", slow_suite, "-n", "2", "-p", "no:cacheprovider", timeout=120)
    result.assert_outcomes(passed=11, errors=1)
    assert FINAL in result.stdout.lines  # every call counted once across the two workers


def test_a_run_with_no_model_calls_shows_no_progress(pytester: pytest.Pytester, make_suite: Callable[..., Path]) -> None:
    make_suite(gen_cases(3))
    result = pytester.runpytest("suite", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)
    assert "generation" not in result.stdout.str()


def test_on_a_terminal_the_status_is_drawn_after_pytests_text_and_erased_before_it_writes() -> None:
    class Writer:
        fullwidth, width_of_current_line = 120, 30

        def __init__(self) -> None:
            self._file = io.StringIO()

    class Reporter:
        isatty = True

        def __init__(self) -> None:
            self._tw = Writer()

    counts = {"total": 10, "called": 4, "cached": 1, "in_flight": 3, "tokens": 5000, "cost_usd": 0.02, "failed": 0}
    reporter = Reporter()
    live = progress.LiveProgress(reporter, lambda: progress.combine([counts]))
    live.active = True
    live.tick()
    text = "  generation 5/10 · 3 in flight · 5,000 tokens · $0.0200 · 0 failed"
    assert reporter._tw._file.getvalue() == f"\x1b[K{text}\x1b[{len(text)}D"  # the cursor goes back to pytest's place
    live.clear()
    assert reporter._tw._file.getvalue().endswith("\x1b[K")  # erased: pytest's line is as it left it
    reporter._tw.width_of_current_line = 110  # no room left on this line: nothing is drawn
    live.tick()
    assert reporter._tw._file.getvalue().endswith("D\x1b[K")


def _captured_sections(lines: list[str]) -> list[str]:
    out, inside = [], False
    for line in lines:
        if line.startswith("-") and "Captured" in line:
            inside = True
        elif line.startswith(("_", "=")):
            inside = False
        elif inside:
            out.append(line)
    return out


