"""The built-in layers and error classes, offered the way a plugin offers its own: as
implementations of ``hookspecs.py``, registered under the name ``sqleval-builtins``."""
from __future__ import annotations

from typing import Any

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_sqleval_layers(layers: list[Any], manifest: Any) -> None:
    from ..core.grading.layer_registry import grading_layers
    layers[:0] = grading_layers()  # the built-ins, then those registered or declared as entry points


@pytest.hookimpl(trylast=True)
def pytest_sqleval_classify(evidence: Any) -> Any:
    from ..core.grading.verdict import classify_evidence
    return classify_evidence(evidence)
