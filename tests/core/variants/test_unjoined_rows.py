"""A dropped join predicate to a dimension of one row (issue 31, ``clones._unjoined_witnesses``).

TPC-DS at SF 0.01: ``store`` has one row, every sale the gold's filters keep joins it, and
the sales with no store (``ss_store_sk`` NULL) all fall outside the gold's other filters. So a
near-miss that drops ``ss_store_sk = s_store_sk`` pairs each kept sale with the one store,
which is the join's answer; the store row cannot be cloned (one row: every column of it is
unique) nor a sale moved to another store (there is none). A copy of a kept sale with no
store tells them apart, and keeps every key, reference and NOT NULL of the pinned data.

Equivalent rewrites pass on every variant."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from pytest_sqleval.core.api import Grader

from .conftest import assert_coincidence_caught, assert_rewrites_pass_keeping_rows, graded_with_variants


def make_shop(path: Path) -> None:
    """One store in Midway (opened on a day of the calendar: the dates are facts no variant moves);
    sales of 2000 in it, sales of 2001 with no store."""
    con = duckdb.connect(str(path))
    day = "DATE '2000-01-01' + CAST(i AS INTEGER)"
    con.execute("CREATE TABLE date_dim (d_date_sk INTEGER NOT NULL, d_date DATE NOT NULL, d_year INTEGER NOT NULL, "
                "d_moy INTEGER NOT NULL)")
    con.execute(f"INSERT INTO date_dim SELECT 2451000 + i, {day}, year({day}), month({day}) FROM range(731) t(i)")
    con.execute("CREATE TABLE store (s_store_sk INTEGER NOT NULL, s_store_id VARCHAR NOT NULL, "
                "s_rec_start_date DATE NOT NULL, s_city VARCHAR NOT NULL, s_state VARCHAR NOT NULL)")
    con.execute("INSERT INTO store VALUES (1, 'AAAAAAAABAAAAAAA', DATE '2000-03-13', 'Midway', 'TN')")
    # TPC-DS's ids share one alphabet: the store's id is also a reason's (an observed reference)
    con.execute("CREATE TABLE reason (r_reason_sk INTEGER NOT NULL, r_reason_id VARCHAR NOT NULL)")
    con.execute("INSERT INTO reason VALUES (1, 'AAAAAAAABAAAAAAA'), (2, 'AAAAAAAACAAAAAAA')")
    con.execute("CREATE TABLE item (i_item_sk INTEGER NOT NULL, i_item_id VARCHAR NOT NULL, "
                "i_color VARCHAR NOT NULL)")
    con.execute("INSERT INTO item SELECT i, 'ITEM' || lpad(CAST(i AS VARCHAR), 4, '0'), "
                "['red', 'blue', 'green'][1 + i % 3] FROM range(1, 31) t(i)")
    con.execute("CREATE TABLE store_sales (ss_sold_date_sk INTEGER NOT NULL, ss_item_sk INTEGER NOT NULL, "
                "ss_store_sk INTEGER, ss_ticket_number INTEGER NOT NULL, ss_quantity INTEGER NOT NULL, "
                "ss_list_price DECIMAL(7,2) NOT NULL)")
    # in the store: days of 2000 (May among them); with no store: days of 2001
    con.execute("INSERT INTO store_sales SELECT 2451000 + 7 * (i % 52), 1 + i % 30, 1, 1000 + i, 1 + i % 9, "
                "5 + i % 40 FROM range(240) t(i)")
    con.execute("INSERT INTO store_sales SELECT 2451000 + 366 + 6 * (i % 60), 1 + i % 30, NULL, 5000 + i, 1 + i % 7, "
                "3 + i % 50 FROM range(60) t(i)")
    con.close()


GOLD = ("SELECT i_item_id, s_state, avg(ss_quantity) AS q, sum(ss_list_price) AS lp "
        "FROM store_sales, date_dim, store, item WHERE ss_sold_date_sk = d_date_sk AND ss_item_sk = i_item_sk "
        "AND ss_store_sk = s_store_sk AND s_city = 'Midway' AND d_year = 2000 AND d_moy = 5 AND i_color = 'green' "
        "GROUP BY i_item_id, s_state ORDER BY i_item_id, s_state")
DROPPED = GOLD.replace(" AND ss_store_sk = s_store_sk", "")
EQUIVALENTS = [
    GOLD.replace("AND ss_store_sk = s_store_sk", "AND s_store_sk = ss_store_sk"),
    ("SELECT i_item_id, s_state, avg(ss_quantity) AS q, sum(ss_list_price) AS lp FROM store_sales "
     "JOIN date_dim ON ss_sold_date_sk = d_date_sk JOIN item ON ss_item_sk = i_item_sk "
     "JOIN store ON ss_store_sk = s_store_sk WHERE s_city = 'Midway' AND d_year = 2000 AND d_moy = 5 "
     "AND i_color = 'green' GROUP BY i_item_id, s_state ORDER BY i_item_id, s_state"),
]


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Grader]]:
    yield from graded_with_variants(tmp_path_factory, "shop", make_shop, GOLD)


def test_a_dropped_join_to_a_one_row_dimension_is_caught(graded: tuple[Path, Grader]) -> None:
    folder, grader = graded
    assert_coincidence_caught(folder / "shop.duckdb", grader, DROPPED, GOLD)


def test_equivalent_joins_pass_and_the_variants_keep_the_references(graded: tuple[Path, Grader]) -> None:
    folder, grader = graded
    assert_rewrites_pass_keeping_rows(folder, grader, GOLD, EQUIVALENTS,
                                      references=(("store_sales", "ss_store_sk", "store", "s_store_sk"),),
                                      numbers=(("store_sales", "ss_ticket_number"),))
