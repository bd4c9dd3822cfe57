"""The engine a grader started, read in a test that looks inside it."""
from __future__ import annotations

import subprocess

from pytest_sqleval.core.engines.host import EngineHost, EngineProcess
from pytest_sqleval.core.grading.pipeline import SuiteGrader


def host_of(g: SuiteGrader) -> EngineHost:
    """The grader's engine host; a grader that started none fails here."""
    assert g.host is not None, "the grader started no engine"
    return g.host


def engine_process_of(g: SuiteGrader) -> EngineProcess:
    """The grader's engine process; an engine served in this process fails here."""
    process = host_of(g).process
    assert isinstance(process, EngineProcess), process
    return process


def child_of(g: SuiteGrader) -> subprocess.Popen[bytes]:
    """The child running the grader's engine; none running fails here."""
    proc = engine_process_of(g).proc
    assert proc is not None, "no engine child running"
    return proc
