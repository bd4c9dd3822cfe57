"""The built-in layers and error classes, offered the way a plugin offers its own: as
implementations of ``hookspecs.py``, registered under the name ``sqleval-builtins``."""
from __future__ import annotations

from typing import Any

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_sqleval_layers(layers: list[Any], manifest: Any) -> None:
    from ..core.grading.layers import default_layers
    layers[:0] = default_layers()


@pytest.hookimpl(trylast=True)
def pytest_sqleval_classify(evidence: Any) -> Any:
    from ..core.grading.verdict import classify_evidence
    return classify_evidence(evidence)
