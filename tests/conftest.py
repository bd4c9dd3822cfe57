"""Fixtures every folder of the plugin's tests uses, registered once here: a shop suite,
predictions and recording backends written into the pytester directory, the Vantage
warehouse at scale 0.1 (built once per session), and a scripted loopback LLM server.

They are defined next to the helpers they go with (``sqleval_helpers.py``,
``llm_server.py``). ``sqleval_ini`` is not here: it is autouse, so a module opts in by
importing it. ``shop_db`` and ``make_suite`` come from the top-level conftest, which
grader_tests/ shares."""
from __future__ import annotations

from tests.llm_server import llm_server  # noqa: F401
from tests.sqleval_helpers import recording_backend, shop_suite, vantage_01, write_predictions  # noqa: F401

#: benchmark folders in their projects' own formats (tests/fixtures/suites/spider2_lite, .../defog):
#: data the tests read and copy, not suites of this repository's own run (three levels down, so
#: ``pytest tests -n 2`` is not taken for a run that names a suite: ``scheduling.names_a_suite``)
collect_ignore = ["fixtures"]
