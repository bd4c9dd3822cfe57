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

import duckdb
import pytest

from pytest_sqleval.core.api import Grader

from .conftest import assert_coincidence_caught, assert_rewrites_pass_keeping_rows, graded_with_variants


def make_households(path: Path) -> None:
    """Three of 600 customers (the first three ids) live in Hillcrest, in households of bands 6, 7 and 8; every customer's
    demographics have store returns; every customer id is a ``time_dim`` id too (TPC-DS's encoding)."""
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE income_band (ib_income_band_sk INTEGER NOT NULL, ib_lower_bound INTEGER NOT NULL, "
                "ib_upper_bound INTEGER NOT NULL)")
    con.execute("INSERT INTO income_band SELECT i, CASE WHEN i = 1 THEN 0 ELSE (i - 1) * 10000 + 1 END, i * 10000 "
                "FROM range(1, 21) t(i)")
    con.execute("CREATE TABLE household_demographics (hd_demo_sk INTEGER NOT NULL, hd_income_band_sk INTEGER NOT NULL)")
    con.execute("INSERT INTO household_demographics SELECT i, 1 + (i - 1) % 20 FROM range(1, 201) t(i)")
    con.execute("CREATE TABLE customer_address (ca_address_sk INTEGER NOT NULL, ca_address_id VARCHAR NOT NULL, "
                "ca_city VARCHAR NOT NULL)")
    con.execute("INSERT INTO customer_address SELECT i, 'AAAAAAAA' || lpad(CAST(i AS VARCHAR), 4, '0'), CASE "
                "WHEN i = 4 THEN 'Hillcrest' WHEN i % 3 = 0 THEN 'Oakland' ELSE 'Marion' END FROM range(1, 41) t(i)")
    con.execute("CREATE TABLE customer_demographics (cd_demo_sk INTEGER NOT NULL, cd_gender VARCHAR NOT NULL)")
    con.execute("INSERT INTO customer_demographics SELECT i, CASE WHEN i % 2 = 0 THEN 'F' ELSE 'M' END "
                "FROM range(1, 101) t(i)")
    con.execute("CREATE TABLE time_dim (t_time_sk INTEGER NOT NULL, t_time_id VARCHAR NOT NULL, t_hour INTEGER NOT NULL)")
    con.execute("INSERT INTO time_dim SELECT i, 'AAAAAAAA' || lpad(CAST(i AS VARCHAR), 4, '0'), i % 24 "
                "FROM range(1, 5001) t(i)")
    con.execute("CREATE TABLE customer (c_customer_sk INTEGER NOT NULL, c_customer_id VARCHAR NOT NULL, "
                "c_current_cdemo_sk INTEGER NOT NULL, c_current_hdemo_sk INTEGER NOT NULL, "
                "c_current_addr_sk INTEGER NOT NULL, c_last_name VARCHAR NOT NULL)")
    # customers 1, 2 and 3 live at address 4 (Hillcrest), in households 6, 7 and 8: their ids sort first
    con.execute("INSERT INTO customer SELECT i, 'AAAAAAAA' || lpad(CAST(7 * i AS VARCHAR), 4, '0'), 1 + i % 50, "
                "CASE WHEN i <= 3 THEN 5 + i ELSE 1 + i % 200 END, "
                "CASE WHEN i <= 3 THEN 4 WHEN 1 + i % 40 = 4 THEN 5 ELSE 1 + i % 40 END, "
                "'Name' || CAST(i AS VARCHAR) FROM range(1, 601) t(i)")
    con.execute("CREATE TABLE store_returns (sr_cdemo_sk INTEGER NOT NULL, sr_ticket_number INTEGER NOT NULL, "
                "sr_return_amt DECIMAL(7,2) NOT NULL)")
    con.execute("INSERT INTO store_returns SELECT 1 + i % 50, 100 + i, 5 + i % 40 FROM range(120) t(i)")
    con.close()


HOUSEHOLDS = ("SELECT c_customer_id AS customer_id, c_last_name FROM customer, customer_address, "
              "customer_demographics, household_demographics, income_band, store_returns "
              "WHERE ca_city = 'Hillcrest' AND c_current_addr_sk = ca_address_sk AND ib_lower_bound >= 40000 "
              "AND ib_upper_bound <= 40000 + 50000 AND ib_income_band_sk = hd_income_band_sk "
              "AND cd_demo_sk = c_current_cdemo_sk AND hd_demo_sk = c_current_hdemo_sk AND sr_cdemo_sk = cd_demo_sk "
              "ORDER BY c_customer_id LIMIT 100")
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
