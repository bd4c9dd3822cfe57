"""The plugin's own work per case, beyond grading: what a serial run does not need, it does
not do. Each test counts calls or looks at what is registered (no clock: speed is measured
in bench/owncost_bench.py)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.sqleval_helpers import sqleval_ini  # noqa: F401  (autouse fixture)

#: Records, at the end of the session, which plugins implement the report hooks.
HOOKS_CONFTEST = """
import pathlib

def pytest_sessionfinish(session):
    hook = session.config.hook
    names = {name: sorted(i.plugin_name for i in getattr(hook, name).get_hookimpls())
             for name in ("pytest_runtest_makereport", "pytest_report_to_serializable")}
    pathlib.Path(OUT).write_text(repr(names))
"""


def test_a_serial_run_wraps_no_report_it_leaves_as_it_is(pytester: pytest.Pytester, shop_suite: Path) -> None:
    """The worker's report wrappers (its generation counts, its packed records) are a call
    on every report, three a case; a serial run registers neither."""
    out = pytester.path / "hooks.txt"
    pytester.makeconftest(f"OUT = {str(out)!r}\n" + HOOKS_CONFTEST)
    result = pytester.runpytest("suite", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=6)
    names = eval(out.read_text())  # noqa: S307 - our own repr of a dict of lists of names
    assert not [n for impls in names.values() for n in impls if n.startswith("sqleval")], names


def test_progress_stops_counting_once_every_generation_is_done(pytester: pytest.Pytester, shop_suite: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A serial run whose generations are all done before progress was ever shown (gold,
    predictions, a warm cache) will never show it: the controller stops taking counts,
    which it otherwise did on every report (three a case)."""
    from pytest_sqleval.reports import progress
    calls = []
    combine = progress.combine
    monkeypatch.setattr(progress, "combine", lambda parts: calls.append(1) or combine(parts))
    result = pytester.runpytest("suite", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=6)
    assert 1 <= len(calls) <= 2, len(calls)  # the first case's reports: before it, no generation was submitted


def test_a_settled_progress_still_draws_and_counts_a_run_still_generating() -> None:
    """Settling is for a run that never showed progress: one with generations outstanding
    past ``SHOW_AFTER_S`` draws it, and its last tick still ends it."""
    counts = {"total": 2, "done": 0, "in_flight": 2, "tokens": 0, "cost_usd": 0.0, "failed": 0}
    lines: list[str] = []

    class Writer:
        width_of_current_line = 0

        def line(self) -> None:
            lines.append("")

    class Reporter:
        isatty = False
        _tw = Writer()

        def write_line(self, text: str) -> None:
            lines.append(text)

    from pytest_sqleval.reports import progress
    live = progress.LiveProgress(Reporter(), lambda: dict(counts), settles=True)
    live.started -= progress.SHOW_AFTER_S  # past the grace period
    live.tick()
    counts.update(done=2, in_flight=0)
    live.tick()
    assert lines == ["sqleval: generation 0/2 · 2 in flight · 0 tokens · $0.0000 · 0 failed",
                     "sqleval: generation 2/2 · 0 in flight · 0 tokens · $0.0000 · 0 failed"]


MARKS_CONFTEST = """
import pathlib

def pytest_collection_finish(session):
    pathlib.Path(OUT).write_text(repr([(item.name, [m.name for m in item.iter_markers()],
                                        sorted(k for k in ("easy", "hard", "orders", "revenue", "t_3_tables")
                                               if k in item.keywords))
                                       for item in session.items]))
"""


def test_items_with_the_same_labels_share_their_markers(pytester: pytest.Pytester, make_suite: Any,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Each item carries a marker per label (``-m``, ``-k``, ``item.keywords``), and pytest's
    ``add_marker`` runs once per label set, not once per label of every item."""
    from tests.sqleval_helpers import gen_cases
    cases = gen_cases(8, difficulty="easy", category="orders", tags=["revenue", "3 tables"])
    cases[5].update(difficulty="hard")
    make_suite(cases)
    out = pytester.path / "marks.txt"
    pytester.makeconftest(f"OUT = {str(out)!r}\n" + MARKS_CONFTEST)
    calls = []
    add_marker = pytest.Item.add_marker
    monkeypatch.setattr(pytest.Item, "add_marker", lambda self, *a, **k: calls.append(1) or add_marker(self, *a, **k))
    result = pytester.runpytest("suite", "-p", "no:cacheprovider", "-m", "revenue and not hard", "--collect-only")
    result.assert_outcomes()
    assert "7/8 tests collected (1 deselected)" in result.stdout.str()
    seen = eval(out.read_text())  # noqa: S307 - our own repr
    assert seen == [(f"q{i:02d}", ["easy", "orders", "revenue", "t_3_tables"], ["easy", "orders", "revenue", "t_3_tables"])
                    for i in range(1, 9) if i != 6]
    assert len(calls) == 8  # two label sets of four: not 32


def test_a_case_is_sent_ahead_once(pytester: pytest.Pytester, shop_suite: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The two cases before a case and the case itself each ask to send its execution
    ahead; on a rerun (gold answers stored) the first asking sends it and the later ones do
    nothing. Before, each asking built the case's gold answer again and offered it to
    ``submit``, which dropped it: three gold answers a case for one."""
    from pytest_sqleval.core.grading.pipeline import SuiteGrader
    pytester.runpytest("suite", "-p", "no:cacheprovider").assert_outcomes(passed=6)  # gold answers stored
    submitted: list[str] = []
    answers: list[str] = []
    submit, gold_answer = SuiteGrader.submit, SuiteGrader._gold_answer

    def counting_submit(self: SuiteGrader, sql: str, gold: Any) -> None:
        submitted.append(sql)
        submit(self, sql, gold)

    def counting_answer(self: SuiteGrader, static: Any, request: Any, *a: Any) -> Any:
        answers.append(request["key"])
        return gold_answer(self, static, request, *a)
    monkeypatch.setattr(SuiteGrader, "submit", counting_submit)
    monkeypatch.setattr(SuiteGrader, "_gold_answer", counting_answer)
    result = pytester.runpytest("suite", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=6)
    assert len(submitted) == len(set(submitted)) == 6, submitted
    # at most one to send it ahead (none for the first case, set up before anything asked) and one at its setup
    assert 11 <= len(answers) <= 12, answers
