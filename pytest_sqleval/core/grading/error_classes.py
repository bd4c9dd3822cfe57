"""The error classes a failed case can get: the built-in five, and those a plugin declares.

A class is decided by one precedence (``verdict.classify``); a plugin's
``pytest_sqleval_classify`` hook answers first. A class the hook gives must be declared
here, by ``register_error_class`` (a conftest.py or plugin module) or an entry point of
group ``pytest_sqleval.error_classes``, so that every class a record can carry has a
description for reports and docs, and a misspelt class is an error rather than a new
column of the summary.

    # pyproject.toml of a plugin
    [project.entry-points."pytest_sqleval.error_classes"]
    select_star = "mylint_sqleval:SELECT_STAR"   # ErrorClass("select_star", "projects * ...")
"""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from typing import Any

from ..errors import UsageError
from ..registry import Registry

ENTRY_POINT_GROUP = "pytest_sqleval.error_classes"


class ErrorClassError(UsageError):
    """An error class is not declared, or its declaration is broken. The message names the fix."""


@dataclass(frozen=True)
class ErrorClass:
    """One error class: the name a record's ``error_class`` holds, and what it means."""

    name: str
    description: str


#: in the order the summary lists them
BUILTIN_ERROR_CLASSES: tuple[ErrorClass, ...] = (
    ErrorClass("hallucinated_column", "the engine's binder rejects a missing column or table "
                                      "(grounding lists each with line/col)"),
    ErrorClass("stale_table", "the prediction reads a deprecated table that the gold does not"),
    ErrorClass("wrong_metric", "same row grain as the gold, wrong values, no added or dropped joins"),
    ErrorClass("wrong_join", "row count or values off, and the join structure differs"),
    ErrorClass("other", "everything else, with a finer failure_kind (parse_error, unsafe_statement, timeout, "
                        "runtime_error:<category>, projection_mismatch, ...)"),
)
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


def _check(obj: Any, where: str) -> None:
    if not isinstance(obj, ErrorClass):
        raise ErrorClassError(f"{where} is not an error class (got {type(obj).__name__}). Fix: make it a "
                              "pytest_sqleval.core.grading.error_classes.ErrorClass(name, description)")
    if not isinstance(obj.name, str) or not _NAME.match(obj.name):
        raise ErrorClassError(f"{where} has the name {obj.name!r}. Fix: name it in snake_case "
                              "(lower case letters, digits and underscores), as `-k` selects it")


ERROR_CLASS_REGISTRY: Registry[ErrorClass] = Registry("error class", ENTRY_POINT_GROUP, ErrorClassError, check=_check,
                                               builtins={c.name: c for c in BUILTIN_ERROR_CLASSES})


def register_error_class(error_class: ErrorClass) -> ErrorClass:
    """Declare a class a ``pytest_sqleval_classify`` hook may give; returns it."""
    return ERROR_CLASS_REGISTRY.register(error_class, owner=sys._getframe(1).f_globals.get("__name__", "?"))


def error_classes() -> list[ErrorClass]:
    """Every declared class: the built-ins, then registered ones, then entry points by name."""
    return ERROR_CLASS_REGISTRY.all()


class UndeclaredErrorClassWarning(UserWarning):
    """A classify hook gave a class nobody declared: a typo, or a plugin from before 0.2."""


_warned: set[str] = set()


def declared(name: str | None, source: str = "a pytest_sqleval_classify hook") -> None:
    """Nothing when ``name`` is None (no class) or declared; otherwise a warning naming the
    fix, once per class. The class is kept as given: classes were free-form before 0.2, and
    a plugin written then must keep grading the same (it becomes an error in 0.3)."""
    if name is None or name in ERROR_CLASS_REGISTRY or name in _warned:
        return
    _warned.add(name)
    import warnings
    warnings.warn(
        f"{source} gave the error class {name!r}, which is not declared (declared: "
        f"{', '.join(ERROR_CLASS_REGISTRY.names())}). Fix: register it, e.g. in conftest.py: "
        f"register_error_class(ErrorClass({name!r}, 'what it means')) from pytest_sqleval.core.grading.error_classes, "
        f"or declare an entry point in group {ENTRY_POINT_GROUP}", UndeclaredErrorClassWarning, stacklevel=2)
