"""The parts a product adds to a run's ablation report reach it even when no backend of that
product ran: a run that replays the agent's predictions (``predictions:runs/a2/...``) has no
agent backend to bring the Vantage course's checkpoints, and still gets them, through the
installed entry points of ``pytest_sqleval.report_sections``."""
from __future__ import annotations

from types import SimpleNamespace

from pytest_sqleval.plugin.session import report_sections
from pytest_sqleval.products.warehouse.course import COURSE_SECTIONS, SEMANTIC_LAYER_CHECKPOINTS
from pytest_sqleval.reports.ablation import ablation_rows
from tests.reports.test_ablation import rec


def test_an_installed_section_reaches_a_run_without_the_products_backends() -> None:
    assert report_sections([]) == [SEMANTIC_LAYER_CHECKPOINTS]


def test_a_section_a_backend_brings_and_an_entry_point_names_is_written_once() -> None:
    agent = SimpleNamespace(report_sections=COURSE_SECTIONS)
    assert report_sections([agent, agent]) == [SEMANTIC_LAYER_CHECKPOINTS]


def test_the_course_section_writes_nothing_on_a_run_it_does_not_apply_to() -> None:
    rows = ablation_rows([rec("gold", "q1", "passed", calls=None)])
    assert SEMANTIC_LAYER_CHECKPOINTS.markdown(rows) == []
    assert SEMANTIC_LAYER_CHECKPOINTS.json(rows) == {"layer_baseline": None, "ingredients": []}
