"""A dimension of one row (issue 31).

TPC-DS at scale factor 0.01 has one store, one web page and one call centre. With one row
every column is unique, and every column holding one value was taken for a reference into
every other table of one row (the store's id "into" the call centre's id, its city into the
call centre's city): each such column was a key a copy must renumber and a reference it must
keep at once, so no variant could copy the store, and q77's ``ORDER BY channel, id`` reversed
on ``id`` coincided on every variant of held-out seeds 1030-1033 (one id a channel). A table
of one row now refers to another, and is referred to, only where the names say so (or a gold
joins the two); its keys are the columns referred to. The reversed and dropped keys fail on
main 64c4c76; the equivalents pass."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_sqleval.core.api import Grader
from pytest_sqleval.core.variants.constraints import observe_constraints
from tests.core.variants.conftest import assert_coincidence_caught, graded_with_variants, made

GOLD = ("SELECT s_store_sk AS id, sum(ss_price) AS sales, count(*) AS sold FROM store_sales, date_dim, store "
        "WHERE ss_date_sk = d_date_sk AND d_year = 2000 AND ss_store_sk = s_store_sk "
        "GROUP BY s_store_sk ORDER BY id")
WRONG = {
    "id_reversed": GOLD.replace("ORDER BY id", "ORDER BY id DESC"),
    "ordered_by_sales": GOLD.replace("ORDER BY id", "ORDER BY sales"),
}
EQUIVALENTS = {
    "joined_on": GOLD.replace("FROM store_sales, date_dim, store WHERE ss_date_sk = d_date_sk AND d_year = 2000 "
                              "AND ss_store_sk = s_store_sk",
                              "FROM store_sales JOIN date_dim ON ss_date_sk = d_date_sk JOIN store "
                              "ON ss_store_sk = s_store_sk WHERE d_year = 2000"),
    "grouped_by_fact": GOLD.replace("SELECT s_store_sk AS id", "SELECT ss_store_sk AS id")
    .replace("GROUP BY s_store_sk", "GROUP BY ss_store_sk"),
}


def make_shop(path: Path) -> None:
    """One store and one call centre that share an id text and a city (as TPC-DS's do), a
    calendar of two years and 300 sales of the one store; no declared key."""
    import duckdb
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE store (s_store_sk INTEGER, s_store_id VARCHAR, s_city VARCHAR, s_floor INTEGER)")
    con.execute("INSERT INTO store VALUES (1, 'AAAAAAAABAAAAAAA', 'Midway', 5250)")
    con.execute("CREATE TABLE call_center (cc_call_center_sk INTEGER, cc_call_center_id VARCHAR, cc_city VARCHAR)")
    con.execute("INSERT INTO call_center VALUES (1, 'AAAAAAAABAAAAAAA', 'Midway')")
    con.execute("CREATE TABLE date_dim (d_date_sk INTEGER, d_year INTEGER, d_moy INTEGER)")
    con.executemany("INSERT INTO date_dim VALUES (?, ?, ?)",
                    [(k, 2000 + (k - 1) // 12, 1 + (k - 1) % 12) for k in range(1, 25)])
    con.execute("CREATE TABLE store_sales (ss_ticket_number INTEGER, ss_date_sk INTEGER, ss_store_sk INTEGER, "
                "ss_price DECIMAL(9, 2))")
    con.executemany("INSERT INTO store_sales VALUES (?, ?, ?, ?)",
                    [(n, 1 + n % 24, 1, round(2 + (n * 37) % 400 / 7, 2)) for n in range(1, 301)])
    con.close()


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Grader]]:
    yield from graded_with_variants(tmp_path_factory, "lone_store", make_shop, GOLD)


def test_the_lone_rows_refer_only_where_the_names_do(tmp_path: Path) -> None:
    found = observe_constraints(made(tmp_path, "lone_store", make_shop), golds=([GOLD], "duckdb"))
    links = {(d.child.rsplit(".", 1)[-1], d.child_columns, d.parent.rsplit(".", 1)[-1], d.parent_columns)
             for d in found.dependencies if d.origin == "observed"}
    assert ("store_sales", ("ss_store_sk",), "store", ("s_store_sk",)) in links
    assert not [link for link in links if {link[0], link[2]} == {"store", "call_center"}], links
    store = next(t for name, t in found.tables.items() if name.endswith("store"))
    assert store.observed_unique == ["s_store_sk"]


@pytest.mark.parametrize("name", sorted(WRONG))
def test_an_order_of_the_lone_store_is_caught(shop: tuple[Path, Grader], name: str) -> None:
    assert_coincidence_caught(shop[0] / "lone_store.duckdb", shop[1], WRONG[name], GOLD)


@pytest.mark.parametrize("name", sorted(EQUIVALENTS))
def test_equivalents_pass_on_every_variant(shop: tuple[Path, Grader], name: str) -> None:
    verdict = shop[1].compare(EQUIVALENTS[name], GOLD)
    assert verdict.passed, (name, verdict.explanation)
