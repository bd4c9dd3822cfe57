"""A group split in two (issue 31).

TPC-DS q81 totals a year's catalog returns by customer and by the returning address's state
(a CTE read twice: once for the totals, once for each state's average), keeps the totals above
1.2 times their state's average and orders by the customer's columns, then by the total. At
scale factor 0.01 no customer returned from two states, so every output row is one customer
and the total as the last sort key, reversed or dropped, coincided on held-out seeds 1030-1033.
A copy of a reaching return (through the CTE's first reader) moved to an address of another
state some group holds, its amount at the column's greatest, puts the customer in two groups
of different totals. The reversed total fails on main 64c4c76; the equivalents pass."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_sqleval.core.api import Grader
from tests.core.variants.conftest import assert_coincidence_caught, graded_with_variants

GOLD = ("WITH ctr AS (SELECT r_customer_sk AS cust, a_state AS st, sum(r_amount) AS total "
        "FROM returns, address, days WHERE r_addr_sk = a_addr_sk AND r_day_sk = d_day_sk AND d_year = 2000 "
        "GROUP BY r_customer_sk, a_state) "
        "SELECT c_id, c_name, total FROM ctr AS c1, customer "
        "WHERE c1.total > (SELECT avg(total) * 1.2 FROM ctr AS c2 WHERE c1.st = c2.st) AND c1.cust = c_customer_sk "
        "AND c_vip = 'Y' ORDER BY c_id, c_name, total LIMIT 100")
WRONG = {"total_reversed": GOLD.replace("ORDER BY c_id, c_name, total", "ORDER BY c_id, c_name, total DESC")}
EQUIVALENTS = {
    "joined_on": GOLD.replace("FROM ctr AS c1, customer WHERE", "FROM ctr AS c1 JOIN customer ON c1.cust = c_customer_sk "
                              "WHERE").replace(" AND c1.cust = c_customer_sk", ""),
    "average_inlined": GOLD.replace("avg(total) * 1.2", "sum(total) * 1.2 / count(*)"),
}
STATES = ("TN", "GA", "OH", "KY", "TX")


def make_shop(path: Path) -> None:
    """60 customers (one in three a VIP), each returning only from addresses of its own state:
    300 returns over two years; 40 addresses, 8 a state."""
    import duckdb
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE address (a_addr_sk INTEGER PRIMARY KEY, a_state VARCHAR)")
    con.executemany("INSERT INTO address VALUES (?, ?)", [(k, STATES[k % 5]) for k in range(1, 41)])
    con.execute("CREATE TABLE days (d_day_sk INTEGER PRIMARY KEY, d_year INTEGER)")
    con.executemany("INSERT INTO days VALUES (?, ?)", [(k, 2000 + k % 2) for k in range(1, 61)])
    con.execute("CREATE TABLE customer (c_customer_sk INTEGER PRIMARY KEY, c_id VARCHAR, c_name VARCHAR, "
                "c_vip VARCHAR)")
    con.executemany("INSERT INTO customer VALUES (?, ?, ?, ?)",
                    [(k, f"C{k * 37 % 100:04d}", f"name{k % 23}", "Y" if k % 3 == 0 else "N") for k in range(1, 61)])
    con.execute("CREATE TABLE returns (r_id INTEGER PRIMARY KEY, r_customer_sk INTEGER REFERENCES customer, "
                "r_addr_sk INTEGER REFERENCES address, r_day_sk INTEGER REFERENCES days, r_amount DECIMAL(9, 2))")
    con.executemany("INSERT INTO returns VALUES (?, ?, ?, ?, ?)",
                    [(n, 1 + n % 60, 1 + (n % 60) % 5 + 5 * (n % 8), 1 + n * 7 % 60, round(5 + (n * 53) % 101 * 3, 2))
                     for n in range(1, 301)])
    con.close()


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Grader]]:
    yield from graded_with_variants(tmp_path_factory, "returns", make_shop, GOLD)


@pytest.mark.parametrize("name", sorted(WRONG))
def test_a_later_key_of_a_split_group_is_caught(shop: tuple[Path, Grader], name: str) -> None:
    assert_coincidence_caught(shop[0] / "returns.duckdb", shop[1], WRONG[name], GOLD)


@pytest.mark.parametrize("name", sorted(EQUIVALENTS))
def test_equivalents_pass_on_every_variant(shop: tuple[Path, Grader], name: str) -> None:
    verdict = shop[1].compare(EQUIVALENTS[name], GOLD)
    assert verdict.passed, (name, verdict.explanation)


def test_a_split_group_goes_to_the_value_most_rows_hold(tmp_path: Path) -> None:
    """The moved copy's total must clear 1.2 times its new state's average: beside a state's one
    other group it may not (a subset of TPC-DS keeps a few groups a state; seed 1034 lost q81's
    reversed total on the set of 69 golds that way), so the state most reaching rows hold comes first."""
    import duckdb

    from pytest_sqleval.core.variants.clones import _salt_of, clone_witnesses
    from pytest_sqleval.core.variants.constraints import observe_constraints
    path = tmp_path / "few.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE address (a_addr_sk INTEGER PRIMARY KEY, a_state VARCHAR)")
    con.executemany("INSERT INTO address VALUES (?, ?)", [(k, "BCD"[(k - 1) % 3]) for k in range(1, 10)])
    con.execute("CREATE TABLE days (d_day_sk INTEGER PRIMARY KEY, d_year INTEGER)")
    con.executemany("INSERT INTO days VALUES (?, ?)", [(k, 2000) for k in range(1, 11)])
    con.execute("CREATE TABLE customer (c_customer_sk INTEGER PRIMARY KEY, c_id VARCHAR, c_name VARCHAR, "
                "c_vip VARCHAR)")
    con.executemany("INSERT INTO customer VALUES (?, ?, ?, ?)", [(k, f"C{k:03d}", f"n{k}", "Y") for k in range(1, 32)])
    con.execute("CREATE TABLE returns (r_id INTEGER PRIMARY KEY, r_customer_sk INTEGER REFERENCES customer, "
                "r_addr_sk INTEGER REFERENCES address, r_day_sk INTEGER REFERENCES days, r_amount DECIMAL(9, 2))")
    # one customer returns from state B, ten from C, twenty from D, twice each; B's addresses have the
    # least keys (the order a tie falls back on)
    homes = [1] + [2] * 10 + [3] * 20
    con.executemany("INSERT INTO returns VALUES (?, ?, ?, ?, ?)",
                    [(n, 1 + n % 31, homes[n % 31] + 3 * (n % 2), 1 + n % 10, 10 + n * 7 % 50) for n in range(1, 63)])
    con.close()
    c = observe_constraints(path, golds=([GOLD], "duckdb"))
    (split,) = [w for w in clone_witnesses([GOLD], "duckdb", c.tables, c.dependencies) if "two groups" in w.what]
    con = duckdb.connect(str(path), read_only=True)
    chosen = {con.execute(split.rows_sql, [_salt_of(turn)]).fetchall()[0][-1] for turn in range(12)}
    con.close()
    assert chosen and "B" not in chosen, chosen
