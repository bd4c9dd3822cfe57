"""The trace a backend records (:mod:`pytest_sqleval.traces`), under the name the agent's
users import it by: ``from pytest_sqleval.agent.trace import Trace``."""
from ..traces import MAX_EVENTS, MAX_TEXT, TRACE_KEY, TRACE_REPORT_KEY, Trace, clip, render_markdown

__all__ = ["MAX_EVENTS", "MAX_TEXT", "TRACE_KEY", "TRACE_REPORT_KEY", "Trace", "clip", "render_markdown"]
