"""The trace a backend records (:mod:`pytest_sqleval.core.traces`), under the name the agent's
users import it by: ``from pytest_sqleval.products.agent.trace import Trace``."""
from ...core.traces import MAX_EVENTS, MAX_TEXT, TRACE_KEY, TRACE_REPORT_KEY, Trace, clip, render_markdown

__all__ = ["MAX_EVENTS", "MAX_TEXT", "TRACE_KEY", "TRACE_REPORT_KEY", "Trace", "clip", "render_markdown"]
