"""Conjuncts dropped in one UNION ALL branch, and a lower bound on a customer's income band (issue 31).

TPC-DS's channel golds sum sales of three channels, each branch joined to ``date_dim`` with
``d_moy = 11 AND d_year = 2001``, and the outer query keeps one manager's items at meal times.
Where that manager's items sold only in November 2001, ``d_year`` dropped from one branch
changes nothing on the pinned data. A witness is a sale of THAT branch's table that reaches the
output (the manager's item, a meal hour), moved to November of another year; a sale that only
reaches the branch (another manager's item) changes no answer however it is moved.

TPC-DS's ``customer`` has an id every value of which is an id of ``time_dim`` too (the
generator's encoding): a copy of a customer can take no fresh id, so no customer was ever
cloned, and a customer whose household's band fails only ``ib_lower_bound >= 40000`` (a band
below it whose upper bound still passes) was never made. A copy takes an id every referenced
column holds and ``customer`` lacks.

Equivalent rewrites pass on every variant."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from pytest_sqleval.core.api import Grader

from .conftest import assert_coincidence_caught, assert_rewrites_pass_keeping_rows, graded_with_variants

DAY = "2451000 + (DATE '{}' - DATE '2000-01-01')"


def make_channels(path: Path) -> None:
    """Managers 1-6's items (5-40) sell all through 2000 and 2001 in store and on the web;
    manager 7's items (1-4) sold only in November 2001, at breakfast and dinner."""
    con = duckdb.connect(str(path))
    day = "DATE '2000-01-01' + CAST(i AS INTEGER)"
    con.execute("CREATE TABLE date_dim (d_date_sk INTEGER NOT NULL, d_date DATE NOT NULL, d_year INTEGER NOT NULL, "
                "d_moy INTEGER NOT NULL)")
    con.execute(f"INSERT INTO date_dim SELECT 2451000 + i, {day}, year({day}), month({day}) FROM range(731) t(i)")
    con.execute("CREATE TABLE item (i_item_sk INTEGER NOT NULL, i_brand_id INTEGER NOT NULL, "
                "i_manager_id INTEGER NOT NULL)")
    con.execute("INSERT INTO item SELECT i, 100 + i % 5, CASE WHEN i <= 4 THEN 7 ELSE 1 + i % 6 END "
                "FROM range(1, 41) t(i)")
    con.execute("CREATE TABLE time_dim (t_time_sk INTEGER NOT NULL, t_hour INTEGER NOT NULL, "
                "t_meal_time VARCHAR NOT NULL)")
    con.execute("INSERT INTO time_dim SELECT i, i, CASE WHEN i IN (7, 8) THEN 'breakfast' WHEN i IN (18, 19) "
                "THEN 'dinner' ELSE 'none' END FROM range(24) t(i)")
    # as in TPC-DS, a table refers to a date, an item and a time by natural keys: their rows are facts
    # correct queries rely on (a day's year), which no variant moves
    con.execute("ALTER TABLE item ADD COLUMN i_item_id VARCHAR")
    con.execute("UPDATE item SET i_item_id = 'ITEM' || lpad(CAST(i_item_sk AS VARCHAR), 4, '0')")
    con.execute("ALTER TABLE time_dim ADD COLUMN t_time_id VARCHAR")
    con.execute("UPDATE time_dim SET t_time_id = 'TIME' || lpad(CAST(t_time_sk AS VARCHAR), 4, '0')")
    con.execute("CREATE TABLE promotion (p_promo_sk INTEGER NOT NULL, p_start_date DATE NOT NULL, "
                "p_item_id VARCHAR NOT NULL, p_time_id VARCHAR NOT NULL)")
    con.execute("INSERT INTO promotion SELECT i, DATE '2000-01-01' + CAST(17 * i AS INTEGER), "
                "'ITEM' || lpad(CAST(1 + i % 40 AS VARCHAR), 4, '0'), 'TIME' || lpad(CAST(i % 24 AS VARCHAR), 4, '0') "
                "FROM range(1, 41) t(i)")
    for table, p, number in (("store_sales", "ss", "ss_ticket_number"), ("web_sales", "ws", "ws_order_number")):
        con.execute(f"CREATE TABLE {table} ({p}_sold_date_sk INTEGER NOT NULL, {p}_item_sk INTEGER NOT NULL, "
                    f"{p}_sold_time_sk INTEGER NOT NULL, {number} INTEGER NOT NULL, "
                    f"{p}_ext_sales_price DECIMAL(7,2) NOT NULL)")
        con.execute(f"INSERT INTO {table} SELECT 2451000 + (i * 7) % 731, 5 + i % 36, i % 24, 1000 + i, "
                    f"10 + i % 90 FROM range(1500) t(i)")
        # enough of them that a variant's subset (a few per cent of the rows) keeps some
        con.execute(f"INSERT INTO {table} SELECT {DAY.format('2001-11-05')} + i % 20, 1 + i % 4, "
                    f"CASE WHEN i % 2 = 0 THEN 7 ELSE 18 END, 9000 + i, 20 + 3 * i FROM range(60) t(i)")
    con.close()


CHANNELS = ("SELECT i_brand_id, t_hour, sum(ext_price) AS ext_price FROM item, "
            "(SELECT ws_ext_sales_price AS ext_price, ws_item_sk AS sold_item_sk, ws_sold_time_sk AS time_sk "
            "FROM web_sales, date_dim WHERE d_date_sk = ws_sold_date_sk AND d_moy = 11 AND d_year = 2001 "
            "UNION ALL SELECT ss_ext_sales_price AS ext_price, ss_item_sk AS sold_item_sk, ss_sold_time_sk AS time_sk "
            "FROM store_sales, date_dim WHERE d_date_sk = ss_sold_date_sk AND d_moy = 11 AND d_year = 2001) tmp, "
            "time_dim WHERE sold_item_sk = i_item_sk AND i_manager_id = 7 AND time_sk = t_time_sk "
            "AND t_meal_time IN ('breakfast', 'dinner') GROUP BY i_brand_id, t_hour ORDER BY ext_price DESC, 1, 2")
CHANNEL_COINCIDENCES = [
    CHANNELS.replace("d_moy = 11 AND d_year = 2001 UNION ALL", "d_moy = 11 UNION ALL"),  # the web branch's year
    CHANNELS.replace("d_moy = 11 AND d_year = 2001) tmp", "d_moy = 11) tmp"),  # the store branch's
]
CHANNEL_EQUIVALENTS = [
    CHANNELS.replace("t_meal_time IN ('breakfast', 'dinner')", "(t_meal_time = 'dinner' OR t_meal_time = 'breakfast')"),
    CHANNELS.replace("d_year = 2001", "d_year BETWEEN 2001 AND 2001"),
]


def make_customers(path: Path, few: bool = False) -> None:
    """Customers in Hillcrest (every fourth address) live in households of bands 5-20 only;
    every customer's demographics have store returns; every customer id is a ``time_dim`` id too.
    ``few``: three of 600 customers (the first three ids) live in Hillcrest (address 4), in
    households of bands 6, 7 and 8, and no store shares an id with a customer."""
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE income_band (ib_income_band_sk INTEGER NOT NULL, ib_lower_bound INTEGER NOT NULL, "
                "ib_upper_bound INTEGER NOT NULL)")
    con.execute("INSERT INTO income_band SELECT i, CASE WHEN i = 1 THEN 0 ELSE (i - 1) * 10000 + 1 END, i * 10000 "
                "FROM range(1, 21) t(i)")
    con.execute("CREATE TABLE household_demographics (hd_demo_sk INTEGER NOT NULL, hd_income_band_sk INTEGER NOT NULL)")
    con.execute("INSERT INTO household_demographics SELECT i, 1 + (i - 1) % 20 FROM range(1, 201) t(i)")
    con.execute("CREATE TABLE customer_address (ca_address_sk INTEGER NOT NULL, ca_address_id VARCHAR NOT NULL, "
                "ca_city VARCHAR NOT NULL)")
    cities = ("CASE WHEN i = 4 THEN 'Hillcrest' WHEN i % 3 = 0 THEN 'Oakland' ELSE 'Marion' END" if few else
              "CASE i % 4 WHEN 0 THEN 'Hillcrest' WHEN 1 THEN 'Oakland' WHEN 2 THEN 'Shiloh' ELSE 'Marion' END")
    con.execute(f"INSERT INTO customer_address SELECT i, 'AAAAAAAA' || lpad(CAST(i AS VARCHAR), 4, '0'), {cities} "
                "FROM range(1, 41) t(i)")
    if not few:
        # as in TPC-DS, a store's id is an id of a customer and of an address too: both tables hold facts
        # (referenced by a natural key) that no variant moves; a customer copy needs an id time_dim holds
        con.execute("CREATE TABLE store (s_store_sk INTEGER NOT NULL, s_store_id VARCHAR NOT NULL)")
        con.execute("INSERT INTO store VALUES (1, 'AAAAAAAA0007')")
    con.execute("CREATE TABLE customer_demographics (cd_demo_sk INTEGER NOT NULL, cd_gender VARCHAR NOT NULL)")
    con.execute("INSERT INTO customer_demographics SELECT i, CASE WHEN i % 2 = 0 THEN 'F' ELSE 'M' END "
                "FROM range(1, 101) t(i)")
    con.execute("CREATE TABLE time_dim (t_time_sk INTEGER NOT NULL, t_time_id VARCHAR NOT NULL, t_hour INTEGER NOT NULL)")
    con.execute("INSERT INTO time_dim SELECT i, 'AAAAAAAA' || lpad(CAST(i AS VARCHAR), 4, '0'), i % 24 "
                "FROM range(1, 5001) t(i)")
    con.execute("CREATE TABLE customer (c_customer_sk INTEGER NOT NULL, c_customer_id VARCHAR NOT NULL, "
                "c_current_cdemo_sk INTEGER NOT NULL, c_current_hdemo_sk INTEGER NOT NULL, "
                "c_current_addr_sk INTEGER NOT NULL, c_last_name VARCHAR NOT NULL)")
    # few: customers 1, 2 and 3 live at address 4, in households 6, 7 and 8, and their ids sort first;
    # else Hillcrest's addresses are 4, 8, ..., 40 and customer i lives at 1 + i % 40
    households, addresses = (("CASE WHEN i <= 3 THEN 5 + i ELSE 1 + i % 200 END",
                              "CASE WHEN i <= 3 THEN 4 WHEN 1 + i % 40 = 4 THEN 5 ELSE 1 + i % 40 END") if few else
                             ("CASE WHEN (1 + i % 40) % 4 = 0 THEN 5 + i % 16 ELSE 1 + i % 200 END", "1 + i % 40"))
    con.execute(f"INSERT INTO customer SELECT i, 'AAAAAAAA' || lpad(CAST(7 * i AS VARCHAR), 4, '0'), 1 + i % 50, "
                f"{households}, {addresses}, 'Name' || CAST(i AS VARCHAR) FROM range(1, 601) t(i)")
    con.execute("CREATE TABLE store_returns (sr_cdemo_sk INTEGER NOT NULL, sr_ticket_number INTEGER NOT NULL, "
                "sr_return_amt DECIMAL(7,2) NOT NULL)")
    con.execute("INSERT INTO store_returns SELECT 1 + i % 50, 100 + i, 5 + i % 40 FROM range(120) t(i)")
    con.close()


CUSTOMERS = ("SELECT c_customer_id AS customer_id, c_last_name FROM customer, customer_address, "
             "customer_demographics, household_demographics, income_band, store_returns "
             "WHERE ca_city = 'Hillcrest' AND c_current_addr_sk = ca_address_sk AND ib_lower_bound >= 40000 "
             "AND ib_upper_bound <= 40000 + 50000 AND ib_income_band_sk = hd_income_band_sk "
             "AND cd_demo_sk = c_current_cdemo_sk AND hd_demo_sk = c_current_hdemo_sk AND sr_cdemo_sk = cd_demo_sk "
             "ORDER BY c_customer_id")
CUSTOMER_COINCIDENCES = [CUSTOMERS.replace(" AND ib_lower_bound >= 40000", "")]
CUSTOMER_EQUIVALENTS = [
    CUSTOMERS.replace("ib_upper_bound <= 40000 + 50000", "ib_upper_bound <= 90000"),
    CUSTOMERS.replace("ib_lower_bound >= 40000", "ib_lower_bound > 39999"),
]


@pytest.fixture(scope="module")
def channels(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Grader]]:
    yield from graded_with_variants(tmp_path_factory, "channels", make_channels, CHANNELS)


@pytest.fixture(scope="module")
def customers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Grader]]:
    yield from graded_with_variants(tmp_path_factory, "customers", make_customers, CUSTOMERS)


@pytest.mark.parametrize("wrong", CHANNEL_COINCIDENCES, ids=["web-year-dropped", "store-year-dropped"])
def test_a_conjunct_dropped_in_one_union_branch_is_caught(channels: tuple[Path, Grader], wrong: str) -> None:
    folder, grader = channels
    assert_coincidence_caught(folder / "channels.duckdb", grader, wrong, CHANNELS)


def test_channel_rewrites_pass_and_the_variants_keep_dates_and_tickets(channels: tuple[Path, Grader]) -> None:
    folder, grader = channels
    assert_rewrites_pass_keeping_rows(folder, grader, CHANNELS, CHANNEL_EQUIVALENTS,
                                      references=(("store_sales", "ss_sold_date_sk", "date_dim", "d_date_sk"),
                                                  ("web_sales", "ws_item_sk", "item", "i_item_sk")),
                                      numbers=(("store_sales", "ss_ticket_number"), ("web_sales", "ws_order_number")))


def test_a_dropped_income_band_lower_bound_is_caught(customers: tuple[Path, Grader]) -> None:
    folder, grader = customers
    assert_coincidence_caught(folder / "customers.duckdb", grader, CUSTOMER_COINCIDENCES[0], CUSTOMERS)


def test_customer_rewrites_pass_and_copies_keep_ids_unique_and_encoded(customers: tuple[Path, Grader]) -> None:
    folder, grader = customers
    assert_rewrites_pass_keeping_rows(folder, grader, CUSTOMERS, CUSTOMER_EQUIVALENTS,
                                      references=(("customer", "c_current_hdemo_sk", "household_demographics",
                                                   "hd_demo_sk"),
                                                  ("customer", "c_customer_id", "time_dim", "t_time_id")),
                                      numbers=(("customer", "c_customer_id"), ("customer", "c_customer_sk")))
