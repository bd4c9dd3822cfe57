"""The grading pipeline as data: the ``Layer`` protocol (``base.py``) and the ordered list of
built-in layers the grader walks for every candidate, one module each.

Layers marked ``ahead`` run before the candidate's turn, up to sending its execution to
the engine, so the engine works while the case before it is still being graded. A plugin
adds, removes or replaces layers through the ``pytest_sqleval_layers`` hook (see
``plugin/hookspecs.py``); ``Layer``, ``Candidate`` and ``default_layers`` are imported from
here."""
from __future__ import annotations

from ..guard import failure_evidence, guarded
from .base import Candidate, GraderView, Layer, run_layer
from .execution import ExecutionLayer
from .grounding import GroundingLayer
from .official import OfficialLayer
from .parse import ParseLayer
from .safety import SafetyLayer
from .send import SendLayer
from .stale import StaleLayer
from .structure import StructureLayer
from .variants import VariantsLayer

__all__ = ["Candidate", "ExecutionLayer", "GraderView", "GroundingLayer", "Layer", "OfficialLayer", "ParseLayer",
           "SafetyLayer", "SendLayer", "StaleLayer", "StructureLayer", "VariantsLayer", "default_layers",
           "failure_evidence", "guarded", "run_layer"]


def default_layers() -> list[Layer]:
    """The built-in layers, in the order the grader walks them."""
    return [ParseLayer(), SafetyLayer(), SendLayer(), GroundingLayer(), StaleLayer(), StructureLayer(),
            ExecutionLayer(), OfficialLayer(), VariantsLayer()]
