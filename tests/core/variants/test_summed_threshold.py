"""A factor of a per-state average moved, the compared column a group's sum (issue 31, ``thresholds._summed``).

TPC-DS q81 sums each customer's returns per state in a CTE and keeps the customers whose sum
exceeds ``avg(ctr_total_return) * 1.2`` of their state, read from the same CTE. The factor moved
to 1.3 (or 1.1) coincides wherever no customer's sum lies between the two thresholds, and on the
pinned data none does (missed on three seeds). Nothing before moved a sum: the threshold writer
set a base column compared with the subquery, and here the compared column is a CTE's aggregate.
The witness: one row of a group reaching the outer SELECT moved by the gap between the group's
sum and the middle of the two thresholds, asked again after each move (the group is in the
average it is compared with), every value kept within the column's domain (a measure may pass
its greatest value; never below zero where the pinned column holds no negative value).

Here the same shape on a small DuckDB star: customers of two states, each with returns summing
to 100 or to 200, none between 1.2 and 1.3 times their state's average."""
from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from tests.core.variants.conftest import assert_caught_beside_a_rewrite


def make_returns(path: Path) -> None:
    """Customers 1-40, odd ones in GA and even ones in TX; each has two returns summing to 100
    (5-34 and 66-95: a column of many values), and four of each state a third (100): sums 100
    and 200, against a state average of 120."""
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE customer (c_customer_sk INTEGER PRIMARY KEY, c_name VARCHAR NOT NULL, "
                "c_state VARCHAR NOT NULL)")
    con.execute("INSERT INTO customer SELECT i, 'customer' || lpad(CAST(i AS VARCHAR), 2, '0'), "
                "CASE WHEN i % 2 = 1 THEN 'GA' ELSE 'TX' END FROM range(1, 41) t(i)")
    con.execute("CREATE TABLE returns (r_number INTEGER NOT NULL, r_customer_sk INTEGER NOT NULL REFERENCES customer, "
                "r_amount DECIMAL(7,2) NOT NULL)")
    con.execute("INSERT INTO returns SELECT 2 * i, i, 5 + i % 30 FROM range(1, 41) t(i)")
    con.execute("INSERT INTO returns SELECT 2 * i + 1, i, 95 - i % 30 FROM range(1, 41) t(i)")
    con.execute("INSERT INTO returns SELECT 1000 + i, i, 100 FROM range(1, 41) t(i) WHERE i % 10 IN (1, 2)")
    con.close()


GOLD = ("WITH ctr AS (SELECT r_customer_sk AS ctr_customer_sk, c_state AS ctr_state, sum(r_amount) AS ctr_total "
        "FROM returns, customer WHERE r_customer_sk = c_customer_sk GROUP BY r_customer_sk, c_state) "
        "SELECT c_name, ctr_total FROM ctr AS ctr1, customer WHERE ctr1.ctr_total > "
        "(SELECT avg(ctr_total) * 1.2 FROM ctr AS ctr2 WHERE ctr1.ctr_state = ctr2.ctr_state) "
        "AND ctr1.ctr_customer_sk = c_customer_sk AND c_state = 'GA' ORDER BY c_name")


@pytest.mark.parametrize("factor", ["1.3", "1.1"])
def test_a_moved_factor_of_an_average_of_sums_is_caught(tmp_path: Path, factor: str) -> None:
    path = tmp_path / "returns.duckdb"
    make_returns(path)
    right = GOLD.replace("AND ctr1.ctr_customer_sk = c_customer_sk AND c_state = 'GA'",
                         "AND c_state = 'GA' AND c_customer_sk = ctr1.ctr_customer_sk")
    caught = assert_caught_beside_a_rewrite(path, tmp_path, GOLD, GOLD.replace("* 1.2", f"* {factor}"), right)
    assert "so that the group's sum lies between the subquery's value" in caught.explanation, caught.explanation
    for variant in sorted((tmp_path / "cache").rglob("variant-*.duckdb")):
        con = duckdb.connect(str(variant), read_only=True)
        # the column's domain: a measure may pass its greatest value, never go below zero where it holds none
        assert con.execute("SELECT count(*) FROM returns WHERE r_amount < 0").fetchone() == (0,)
        con.close()
