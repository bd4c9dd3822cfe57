"""A dropped bound on a customer's income band, under ``ORDER BY c_customer_id LIMIT 100`` (issue 31).

TPC-DS's income bands are twenty fixed rows reached through ``customer -> household_demographics
-> income_band``; no edit of a band keeps the domain, so the witness is a customer that passes
every other filter, its household re-pointed at one whose band fails only the dropped bound.
On TPC-DS two things kept it out of the answer: a city's three or four customers are rarely in a
variant's subset (no customer to re-point: now a moved witness copies in a pinned reaching path
where none reaches its SELECT), and the LIMIT witness's new customers took the smallest free ids,
so the re-pointed customer, written after them, sorted past the LIMIT (now a LIMIT lift takes
the greatest). Here the band bound that ``ib_upper_bound BETWEEN 40000 AND 90000`` moves (band 4,
just under ``ib_lower_bound >= 40000``) was missed.

Equivalent rewrites pass on every variant."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_sqleval.core.api import Grader

from .conftest import assert_coincidence_caught, assert_rewrites_pass_keeping_rows, graded_with_variants
from .test_branch_conjuncts import CUSTOMERS, make_customers


def make_households(path: Path) -> None:
    """Three of 600 customers (the first three ids) live in Hillcrest, in households of bands 6, 7
    and 8; every customer's demographics have store returns; every customer id is a ``time_dim`` id
    too (TPC-DS's encoding)."""
    make_customers(path, few=True)


HOUSEHOLDS = CUSTOMERS + " LIMIT 100"
HOUSEHOLD_COINCIDENCES = [HOUSEHOLDS.replace(" AND ib_upper_bound <= 40000 + 50000", ""),
                          HOUSEHOLDS.replace(" AND ib_lower_bound >= 40000", ""),
                          HOUSEHOLDS.replace("ib_lower_bound >= 40000 AND ib_upper_bound <= 40000 + 50000",
                                             "ib_upper_bound BETWEEN 40000 AND 40000 + 50000")]
HOUSEHOLD_EQUIVALENTS = [
    HOUSEHOLDS.replace("ib_upper_bound <= 40000 + 50000", "ib_upper_bound <= 90000"),
    HOUSEHOLDS.replace("ib_lower_bound >= 40000", "ib_lower_bound > 39999"),
]


@pytest.fixture(scope="module")
def households(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Grader]]:
    yield from graded_with_variants(tmp_path_factory, "households", make_households, HOUSEHOLDS)


@pytest.mark.parametrize("wrong", HOUSEHOLD_COINCIDENCES, ids=["upper-dropped", "lower-dropped", "between-upper"])
def test_a_dropped_income_band_bound_is_caught_under_a_limit(households: tuple[Path, Grader], wrong: str) -> None:
    folder, grader = households
    assert_coincidence_caught(folder / "households.duckdb", grader, wrong, HOUSEHOLDS)


def test_household_rewrites_pass_and_customers_keep_their_references(households: tuple[Path, Grader]) -> None:
    folder, grader = households
    assert_rewrites_pass_keeping_rows(folder, grader, HOUSEHOLDS, HOUSEHOLD_EQUIVALENTS,
                                      references=(("customer", "c_current_hdemo_sk", "household_demographics",
                                                   "hd_demo_sk"),
                                                  ("customer", "c_customer_id", "time_dim", "t_time_id")),
                                      numbers=(("customer", "c_customer_id"), ("customer", "c_customer_sk")))
