"""The pass-rate gate: the run's exit status from each backend's pass rate, refusing to
pass a run whose rate covers only part of its cases (lost cases, collection errors, a
stop with -x), whose passes were asked to be checked on database variants and were not,
or that broke non-benchmark tests. Exit codes 2-5 stay what pytest says."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest



@dataclass(frozen=True)
class RunFacts:
    """What, besides the pass rates, decides whether a run's rate gates anything: the same
    facts for a pytest run and for shards merged (``python -m pytest_sqleval merge``)."""

    lost: tuple[str, ...] = ()
    other_failures: int = 0
    collection_errors: tuple[str, ...] = ()  # their node ids, "" where unknown
    stopped: str | None = None  # why a run stopped early (-x, --maxfail)


def gate_verdict(min_pass_rate: float, summary: dict[str, Any], facts: RunFacts) -> tuple[bool, list[str]]:
    """Whether every backend's pass rate is at least ``min_pass_rate`` over the whole run,
    and the lines that say why."""
    lines: list[str] = []
    ok = True
    for name, b in summary["backends"].items():
        rate = b["pass_rate"] or 0.0
        good = rate >= min_pass_rate
        ok = ok and good
        lines.append(f"gate {'PASSED' if good else 'FAILED'}: backend {name} pass rate "
                     f"{rate:.3f} {'>=' if good else '<'} {min_pass_rate:.3f}")
        unchecked = b.get("variant_unchecked_cases")
        if unchecked:  # the rate counts passes the variants were asked to check and could not
            ok = False
            lines.append(f"gate FAILED: backend {name}: {unchecked} matching case(s) pass on the database alone, "
                         f"their check on the variants failed ({b.get('variant_check_error', 'no error kept')}); "
                         "a pass rate that counts them as checked gates nothing")
    if facts.lost:
        ok = False
        lines.append(f"gate FAILED: {len(facts.lost)} case(s) lost")
    if facts.other_failures:
        ok = False
        lines.append(f"gate FAILED: {facts.other_failures} non-benchmark test(s) failed")
    errors = facts.collection_errors
    if errors:
        ok = False
        shown = [e for e in errors if e]
        names = f": {', '.join(shown[:5])}{', ...' if len(shown) > 5 else ''}" if shown else ""
        lines.append(f"gate FAILED: {len(errors)} collection error(s) occurred{names}; "
                     "a pass rate over the cases that could be collected gates nothing")
    if facts.stopped:  # -x / --maxfail: the rate covers only the cases run so far
        ok = False
        lines.append(f"gate FAILED: the run stopped early ({facts.stopped}); "
                     "a pass rate over part of the cases gates nothing")
    return ok, lines


def run_facts(session: pytest.Session, lost: list[str], other_failures: int, failed_reports: int) -> RunFacts:
    stopped = session.shouldstop or session.shouldfail
    return RunFacts(lost=tuple(lost), other_failures=other_failures,
                    collection_errors=tuple(_collection_errors(session, failed_reports)),
                    stopped=str(stopped) if stopped else None)


def apply_gate(session: pytest.Session, min_pass_rate: float | None, summary: dict[str, Any] | None,
               facts: RunFacts) -> list[str]:
    """Set ``session.exitstatus`` and return the lines that say why.

    The gate turns pytest's 1 into 0 only when every failure pytest counted is a test
    report seen here: a collection error (``--continue-on-collection-errors``) keeps the 1."""
    if min_pass_rate is None or summary is None:
        return []
    ok, lines = gate_verdict(min_pass_rate, summary, facts)
    if int(session.exitstatus) in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
        session.exitstatus = pytest.ExitCode.OK if ok else pytest.ExitCode.TESTS_FAILED
    return lines


def _collection_errors(session: pytest.Session, failed_reports: int) -> list[str]:
    """The collection errors of a run that went on past them (``--continue-on-collection-errors``).

    pytest counts every failed collection report and every failed test report in
    ``session.testsfailed`` (xdist forwards its workers' to the controller's); whatever no
    test report explains is a collection error. The names come from the terminal
    reporter when there is one; without it each error is an empty name."""
    count = max(0, int(getattr(session, "testsfailed", 0)) - failed_reports)
    if not count:
        return []
    names: list[str] = []
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    for rep in (getattr(reporter, "stats", {}) or {}).get("error", []):
        if isinstance(rep, pytest.CollectReport) and rep.failed and rep.nodeid not in names:
            names.append(rep.nodeid or "<rootdir>")
    return (names + [""] * count)[:count]


def min_pass_rate(config: pytest.Config) -> float | None:
    """The option (checked by its argparse type), else the ini key through the same parser."""
    from ..core.numeric import PASS_RATE, ini_number
    value: float | None = config.getoption("sqleval_min_pass_rate")
    if value is None:
        value = ini_number(PASS_RATE, config.getini("sqleval_min_pass_rate"), "sqleval_min_pass_rate",
                           "--sqleval-min-pass-rate")
    return value
