"""The grading pipeline as data: the ``Layer`` protocol (``base.py``) and the ordered list of
built-in layers the grader walks for every candidate, one module each.

Layers marked ``ahead`` run before the candidate's turn, up to sending its execution to
the engine, so the engine works while the case before it is still being graded. A plugin
adds, removes or replaces layers through the ``pytest_sqleval_layers`` hook (see
``plugin/hookspecs.py``); ``Layer``, ``Candidate`` and ``default_layers`` are imported from
here."""
from __future__ import annotations

from ..guard import failure_evidence, guarded
from .base import Candidate, GraderView, Layer, LayerFailure, record_form, run_layer, typed
from .execution import CompareEvidence, ExecutionEvidence, ExecutionLayer
from .grounding import GroundingEvidence, GroundingLayer
from .official import OfficialEvidence, OfficialLayer
from .parse import ParseEvidence, ParseLayer
from .safety import SafetyEvidence, SafetyLayer
from .send import SendLayer
from .stale import StaleLayer
from .structure import StructureEvidence, StructureLayer
from .variants import VariantMismatch, VariantsEvidence, VariantsLayer

__all__ = ["Candidate", "CompareEvidence", "ExecutionEvidence", "ExecutionLayer", "GraderView", "GroundingEvidence",
           "GroundingLayer", "Layer", "LayerFailure", "OfficialEvidence", "OfficialLayer", "ParseEvidence",
           "ParseLayer", "SafetyEvidence", "SafetyLayer", "SendLayer", "StaleLayer", "StructureEvidence",
           "StructureLayer", "VariantMismatch", "VariantsEvidence", "VariantsLayer", "default_layers",
           "failure_evidence", "guarded", "record_form", "run_layer", "typed"]


def default_layers() -> list[Layer]:
    """The built-in layers, in the order the grader walks them."""
    return [ParseLayer(), SafetyLayer(), SendLayer(), GroundingLayer(), StaleLayer(), StructureLayer(),
            ExecutionLayer(), OfficialLayer(), VariantsLayer()]
