"""Checks on a predictions file against the suite it grades.

A predictions file is keyed by case id. A file made for another suite (or another
revision of this one) would otherwise be graded without a word: every case a
``no_prediction`` failure, or, where ids happen to coincide, a verdict on an answer to another
question. So at collection each suite compares its case ids with the file's ids: a file
whose ids mostly miss the suite gets one warning with the counts and a few example ids,
and a file none of whose ids is a case of the suite is an error naming both.

A case the file has no line for fails as ``no_prediction`` (``grading.verdict.no_prediction``):
a missing answer is a wrong answer, as the official evaluators count it."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

from ..errors import UsageError

EXAMPLES = 3  # ids quoted in a message


class PredictionsCoverageWarning(UserWarning):
    """A predictions file whose ids mostly do not match the suite it grades."""


def _examples(ids: Iterable[str]) -> str:
    ids = list(ids)
    more = f", … ({len(ids) - EXAMPLES} more)" if len(ids) > EXAMPLES else ""
    return ", ".join(ids[:EXAMPLES]) + more


def coverage_problem(file_ids: Iterable[str], case_ids: Iterable[str], *, where: str,
                     suite: str) -> tuple[str, str] | None:
    """``("error" | "warning", message)`` when the file's ids do not fit the suite's cases,
    else None. An error when no id matches; a warning when fewer than half of them do."""
    file_ids, case_ids = list(file_ids), list(case_ids)
    cases = set(case_ids)
    matched = [i for i in file_ids if i in cases]
    if not file_ids or not case_ids or 2 * len(matched) >= len(file_ids):
        return None
    known = set(file_ids)
    foreign = [i for i in file_ids if i not in cases]
    missing = [c for c in case_ids if c not in known]
    if not matched:
        return "error", (f"none of the {len(file_ids)} ids in the predictions file {where} is a case of suite "
                         f"'{suite}' (the file has {_examples(foreign)}; the suite has {_examples(case_ids)}). "
                         f"Fix: give the predictions file made for this suite, or run the suite it was made for")
    return "warning", (f"only {len(matched)} of the {len(file_ids)} ids in the predictions file {where} match a "
                       f"case of suite '{suite}' (not in the suite: {_examples(foreign)}); {len(missing)} of its "
                       f"{len(case_ids)} cases have no prediction"
                       + (f" ({_examples(missing)}) and fail as no_prediction" if missing else "")
                       + ". Was the file made for another suite?")


def check_suite(node: Any, backends: Iterable[Any], case_ids: list[str], suite: str) -> None:
    """At a suite's collection: warn once per predictions file that mostly misses the suite
    (a pytest warning on the suite's file), and raise ``UsageError`` for one that misses it
    entirely. Backends that are not predictions files are left alone."""
    seen: set[str] = set()
    for backend in backends:
        predictions = getattr(backend, "predictions", None)
        if predictions is None or not str(getattr(backend, "spec", "")).startswith("predictions:"):
            continue
        where = backend.spec.split(":", 1)[1]
        key = str(Path(where).resolve()) if where else backend.spec
        if key in seen:
            continue
        seen.add(key)
        problem = coverage_problem(list(predictions), case_ids, where=where, suite=suite)
        if problem is None:
            continue
        kind, message = problem
        if kind == "error":
            raise UsageError(message)
        node.warn(PredictionsCoverageWarning(message))
