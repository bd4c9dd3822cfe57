"""The exception hierarchy: what a user can get wrong, what a database can refuse,
and what makes a case an *error* rather than a graded failure."""
from __future__ import annotations

from pathlib import Path


class SqlevalError(Exception):
    """Base class; its message is shown to the user as is, without a traceback."""


class BadInputError(SqlevalError):
    """A file the user wrote is wrong. The message names file, line, field and fix."""

    def __init__(self, path: str | Path, problem: str, *, line: int | None = None,
                 field: str | None = None, fix: str | None = None) -> None:
        self.path, self.line, self.field, self.problem, self.fix = str(path), line, field, problem, fix
        where = self.path if line is None else f"{self.path}:{line}"
        what = f"field '{field}': {problem}" if field else problem
        msg = f"{where}: {what}"
        if fix:
            msg += f"\n  fix: {fix}"
        super().__init__(msg)


class UsageError(SqlevalError):
    """A command-line option or ini value is wrong."""


class CaseError(SqlevalError):
    """The case could not be graded, through no fault of the SQL under test.

    Reported as a pytest *error*, never as a failed grade."""

    kind = "case_error"


class GoldError(CaseError):
    """The gold query errors, is nondeterministic, or returns nothing undeclared."""

    kind = "gold_error"


class BackendError(CaseError):
    """The backend crashed, timed out or returned no SQL."""

    kind = "backend_error"


class NoPrediction(SqlevalError):
    """The backend has no answer for this case (a predictions file without a line for it).

    Not a case error: a benchmark scores a missing answer as a wrong one (Spider's and
    BIRD's evaluators count it 0), so the case *fails*, failure kind ``no_prediction``
    (``grading.verdict.no_prediction``), and counts in execution accuracy too."""
