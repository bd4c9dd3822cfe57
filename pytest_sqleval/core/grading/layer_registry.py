"""The grading layers: the built-ins, and those a plugin adds by ``register_layer`` or an
entry point of group ``pytest_sqleval.layers``. Each grader gets them in that order
(built-ins, registered, entry points by name); a ``pytest_sqleval_layers`` hook (a
conftest.py) then adds, removes or replaces layers in that list, in place.

A layer is an object with ``name``, ``ahead`` and ``run(candidate)`` (``layers.Layer``), or
a class of them, made anew for each grader.

    # pyproject.toml of a plugin
    [project.entry-points."pytest_sqleval.layers"]
    select_star = "mylint_sqleval:SelectStarLayer"
"""
from __future__ import annotations

import sys
from typing import Any

from ..errors import UsageError
from ..registry import Registry
from .layers import Layer, default_layers

ENTRY_POINT_GROUP = "pytest_sqleval.layers"


class LayerError(UsageError):
    """A layer plugin is broken: it lacks part of the layer surface, or its name is taken."""


def _check(obj: Any, where: str) -> None:
    missing = [] if isinstance(getattr(obj, "name", None), str) and obj.name else ["name"]
    missing += [] if isinstance(getattr(obj, "ahead", None), bool) else ["ahead"]
    missing += [] if callable(getattr(obj, "run", None)) else ["run"]
    if missing:
        raise LayerError(f"{where} is not a layer: it lacks {', '.join(missing)}. Fix: give it `name` (a string), "
                         "`ahead` (True: run before the case's execution is sent) and `run(candidate)`")


LAYERS: Registry[Any] = Registry("layer", ENTRY_POINT_GROUP, LayerError, check=_check,
                                 builtins={layer.name: type(layer) for layer in default_layers()})


def register_layer(layer: Any) -> Any:
    """Add a layer (or a layer class) to every grader after the built-ins; returns it."""
    return LAYERS.register(layer, owner=sys._getframe(1).f_globals.get("__name__", "?"))


def added_layers() -> list[Layer]:
    """The registered and entry-point layers, a class made into a new layer."""
    return [obj() if isinstance(obj, type) else obj for name, obj in LAYERS.items() if name not in LAYERS.builtins]


def grading_layers() -> list[Layer]:
    """A new grader's layers before any ``pytest_sqleval_layers`` hook: built-ins, then added ones."""
    return default_layers() + added_layers()
