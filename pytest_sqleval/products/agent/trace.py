"""The trace a backend records (:mod:`pytest_sqleval.core.traces`), under the name the agent's
users import it by: ``from pytest_sqleval.products.agent.trace import Trace``."""
from ...core import MAX_TRACE_EVENTS as MAX_EVENTS
from ...core import MAX_TRACE_TEXT as MAX_TEXT
from ...core import TRACE_KEY, TRACE_REPORT_KEY, Trace
from ...core import clip_trace_text as clip
from ...core import render_trace as render_markdown

__all__ = ["MAX_EVENTS", "MAX_TEXT", "TRACE_KEY", "TRACE_REPORT_KEY", "Trace", "clip", "render_markdown"]
