"""LIMIT golds of shapes the clone witnesses' own LIMIT rule does not reach (issue 31): a
UNION ALL of two channels grouped again outside (TPC-DS q33/q56/q60's shape), grouped by a
brand (a name: never given a fresh value), and a derived table of tickets joined to a
dimension (q46/q68's shape). On the pinned data each returns fewer rows than its LIMIT, so
LIMIT n - 1, n and n + 1 agree there; ``outputs.py`` adds new output rows through the
gold's join path on some variants (a sale moved to another existing Books item of a brand
no sale reaches; a copy of a sale with a fresh ticket), where they differ. A correct
rewrite passes on every variant."""
from __future__ import annotations

import datetime as dt
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import duckdb
import pytest

from pytest_sqleval.core.api import Grader
from pytest_sqleval.core.variants.constraints import observe_constraints
from tests.rows import scalar

BRANDS = ("SELECT i_brand, sum(total) AS total FROM ("
          "SELECT i_brand, sum(ss_sales_price) AS total FROM store_sales, item, date_dim WHERE ss_item_sk = i_item_sk "
          "AND ss_sold_date_sk = d_date_sk AND d_year = 2000 AND i_category = 'Books' GROUP BY i_brand "
          "UNION ALL "
          "SELECT i_brand, sum(ws_sales_price) AS total FROM web_sales, item, date_dim WHERE ws_item_sk = i_item_sk "
          "AND ws_sold_date_sk = d_date_sk AND d_year = 2000 AND i_category = 'Books' GROUP BY i_brand) AS channels "
          "GROUP BY i_brand ORDER BY total DESC, i_brand LIMIT 8")
TICKETS = ("SELECT dn.ss_ticket_number, dn.amt, i_category FROM (SELECT ss_ticket_number, ss_item_sk, "
           "sum(ss_sales_price) AS amt FROM store_sales, date_dim WHERE ss_sold_date_sk = d_date_sk AND d_moy = 3 "
           "AND d_year = 2000 GROUP BY ss_ticket_number, ss_item_sk) AS dn, item WHERE dn.ss_item_sk = i_item_sk "
           "ORDER BY dn.amt DESC, dn.ss_ticket_number, i_category LIMIT 50")
SHOPPERS = ("SELECT cd_gender, cd_marital_status, count(*) AS cnt FROM customer AS c, customer_demographics "
            "WHERE cd_demo_sk = c.c_current_cdemo_sk AND EXISTS (SELECT * FROM store_sales, date_dim "
            "WHERE c.c_customer_sk = ss_customer_sk AND ss_sold_date_sk = d_date_sk AND d_moy = 3) "
            "GROUP BY cd_gender, cd_marital_status ORDER BY cd_gender, cd_marital_status LIMIT 6")
GOLDS = [BRANDS, TICKETS, SHOPPERS]
COINCIDENCES = [(g.replace(f"LIMIT {n}", f"LIMIT {m}"), g) for g, n in ((BRANDS, 8), (TICKETS, 50), (SHOPPERS, 6))
                for m in (n - 1, n + 1)]
EQUIVALENTS = [
    # the channels the other way round, joined with JOIN ... ON
    (BRANDS.replace("FROM store_sales, item, date_dim WHERE ss_item_sk = i_item_sk AND ss_sold_date_sk = d_date_sk",
                    "FROM store_sales JOIN item ON i_item_sk = ss_item_sk JOIN date_dim ON d_date_sk = ss_sold_date_sk")
     .replace("ORDER BY total DESC, i_brand", "ORDER BY 2 DESC, 1"), BRANDS),
    (TICKETS.replace("d_moy = 3 AND d_year = 2000", "d_year = 2000 AND d_moy BETWEEN 3 AND 3"), TICKETS),
    (SHOPPERS.replace("AND EXISTS (SELECT * FROM", "AND c.c_customer_sk IN (SELECT ss_customer_sk FROM")
     .replace("WHERE c.c_customer_sk = ss_customer_sk AND ss_sold_date_sk", "WHERE ss_sold_date_sk"), SHOPPERS),
]


def make_shop(path: Path) -> None:
    """2000 by day; 60 items, 20 of them Books of ten brands (two items a brand), of which
    only items 1-3 sell (three brands reach the gold, which takes 8); 300 store sales (three
    lines a ticket) and 150 web sales, all in January-August, several a day; 30 customers, all of three of the ten demographic
    profiles (gender and marital status), each with store sales."""
    days = [dt.date(2000, 1, 1) + dt.timedelta(days=n) for n in range(366)]
    dates = [(2451545 + n, d.isoformat(), d.year, d.month) for n, d in enumerate(days)]
    items = [(i, f"AAAAAAAA{i:04d}", f"brand #{i % 10}" if i <= 20 else f"other #{i % 7}",
              "Books" if i <= 20 else ("Music", "Home", "Sports")[i % 3]) for i in range(1, 61)]
    sold = [1, 2, 3] + list(range(21, 61))
    store = [(2451545 + (t * 37) % 240, sold[(t * 7) % len(sold)], 1 + t // 3, 1 + t % 9, f"{1 + (t % 13) * 1.25:.2f}",
              1 + (t // 3) % 30) for t in range(300)]
    profiles = [(k, ("M", "F")[k % 2], ("S", "M", "D", "W", "U")[(k // 2) % 5]) for k in range(1, 11)]
    customers = [(c, f"CUST{c:04d}", 1 + c % 3) for c in range(1, 31)]
    web = [(2451545 + (t * 53) % 100, sold[(t * 11) % len(sold)], 5000 + t, 1 + t % 5, f"{2 + (t % 17) * 0.75:.2f}")
           for t in range(150)]
    if path.suffix == ".duckdb":
        con: duckdb.DuckDBPyConnection | sqlite3.Connection = duckdb.connect(str(path))
        types = ("INTEGER", "DATE", "VARCHAR", "DECIMAL(7,2)")
    else:
        con = sqlite3.connect(path)
        types = ("INTEGER", "TEXT", "TEXT", "REAL")
    i, d, v, m = types
    con.execute(f"CREATE TABLE date_dim (d_date_sk {i}, d_date {d}, d_year {i}, d_moy {i})")
    con.execute(f"CREATE TABLE item (i_item_sk {i}, i_item_id {v}, i_brand {v}, i_category {v})")
    con.execute(f"CREATE TABLE store_sales (ss_sold_date_sk {i}, ss_item_sk {i}, ss_ticket_number {i}, "
                f"ss_quantity {i}, ss_sales_price {m}, ss_customer_sk {i})")
    con.execute(f"CREATE TABLE customer (c_customer_sk {i}, c_customer_id {v}, c_current_cdemo_sk {i})")
    con.execute(f"CREATE TABLE customer_demographics (cd_demo_sk {i}, cd_gender {v}, cd_marital_status {v})")
    con.execute(f"CREATE TABLE web_sales (ws_sold_date_sk {i}, ws_item_sk {i}, ws_order_number {i}, "
                f"ws_quantity {i}, ws_sales_price {m})")
    con.executemany("INSERT INTO date_dim VALUES (?, ?, ?, ?)", dates)
    con.executemany("INSERT INTO item VALUES (?, ?, ?, ?)", items)
    con.executemany("INSERT INTO store_sales VALUES (?, ?, ?, ?, ?, ?)", store)
    con.executemany("INSERT INTO customer VALUES (?, ?, ?)", customers)
    con.executemany("INSERT INTO customer_demographics VALUES (?, ?, ?)", profiles)
    con.executemany("INSERT INTO web_sales VALUES (?, ?, ?, ?, ?)", web)
    if isinstance(con, sqlite3.Connection):
        con.commit()
    con.close()


def _connect(path: Path, read_only: bool = True) -> Any:
    return duckdb.connect(str(path), read_only=read_only) if path.suffix == ".duckdb" else sqlite3.connect(path)


def _rows(path: Path, sql: str) -> int:
    con = _connect(path)
    try:
        return int(scalar(con, f"SELECT count(*) FROM ({sql.rsplit(' ORDER BY ', 1)[0]}) AS g"))
    finally:
        con.close()


@pytest.fixture(scope="module", params=["duckdb", "sqlite"])
def shop(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    root = tmp_path_factory.mktemp(f"shop-{request.param}")
    path = root / f"shop.{request.param}"
    make_shop(path)
    return path, root / "cache", request.param


def test_the_golds_return_fewer_rows_than_their_limit_on_the_pinned_data(shop: tuple[Path, Path, str]) -> None:
    path, _, _ = shop
    assert _rows(path, BRANDS) == 3
    assert 0 < _rows(path, TICKETS) < 50
    assert _rows(path, SHOPPERS) == 3


@pytest.mark.parametrize("wrong,gold", COINCIDENCES,
                         ids=["brands-7", "brands-9", "tickets-49", "tickets-51", "shoppers-5", "shoppers-7"])
def test_a_limit_moved_by_one_is_caught_on_a_variant(shop: tuple[Path, Path, str], wrong: str, gold: str) -> None:
    path, cache, dialect = shop
    with Grader(path, dialect=dialect, cache_dir=cache / "plain") as plain:
        assert plain.compare(wrong, gold).passed  # fewer rows than the LIMIT: n - 1, n and n + 1 agree
    with Grader(path, dialect=dialect, cache_dir=cache, variants=4, variant_golds=GOLDS) as graded:
        verdict = graded.compare(wrong, gold)
    assert (verdict.passed, verdict.failure_kind) == (False, "coincidental_pass"), verdict.explanation
    assert "new output rows" in verdict.explanation and "past its LIMIT" in verdict.explanation


@pytest.mark.parametrize("right,gold", EQUIVALENTS, ids=["brands", "tickets", "shoppers"])
def test_a_correct_rewrite_passes_on_every_variant(shop: tuple[Path, Path, str], right: str, gold: str) -> None:
    path, cache, dialect = shop
    with Grader(path, dialect=dialect, cache_dir=cache, variants=4, variant_golds=GOLDS) as graded:
        verdict = graded.compare(right, gold)
    assert verdict.passed, verdict.explanation


def test_the_grown_variant_keeps_every_reference_and_no_duplicate_sale(shop: tuple[Path, Path, str],
                                                                        tmp_path: Path) -> None:
    """On a copy of the pinned data, the growth lifts each gold past its LIMIT with rows
    that reference existing items and dates, duplicate no sale, give no item a new brand or
    category value, and cut no tie at the LIMIT."""
    from pytest_sqleval.core.variants.outputs import OutputWriter, output_growths
    path, _, dialect = shop
    variant = tmp_path / path.name
    shutil.copy(path, variant)
    c = observe_constraints(path, golds=(GOLDS, dialect))
    growths = output_growths(GOLDS, dialect, dialect, c.tables, c.dependencies)
    assert len(growths) == 3
    con = _connect(variant, read_only=False)
    writer = OutputWriter(con, dialect, c, path, 0)
    try:
        for g in growths:
            assert writer.grow(g)
            assert scalar(con, g.count_sql) > g.limit
        if dialect == "sqlite":
            con.commit()
    finally:
        writer.close()
        con.close()
    con = _connect(variant)
    try:
        for fact, key in (("store_sales", "ss_item_sk"), ("web_sales", "ws_item_sk")):
            date = key.replace("item_sk", "sold_date_sk")
            dangling = con.execute(f"SELECT count(*) FROM {fact} WHERE {key} NOT IN (SELECT i_item_sk FROM item) "
                                   f"OR {date} NOT IN (SELECT d_date_sk FROM date_dim)").fetchone()
            assert dangling[0] == 0
            duplicates = con.execute(f"SELECT count(*) - (SELECT count(*) FROM (SELECT DISTINCT * FROM {fact}) AS d) "
                                     f"FROM {fact}").fetchone()
            assert duplicates[0] == 0
        brands = con.execute("SELECT count(DISTINCT i_brand), count(DISTINCT i_category) FROM item").fetchone()
        assert tuple(brands) == (17, 4)  # only values the pinned data holds
        keys = con.execute("SELECT count(*) - count(DISTINCT c_customer_sk), count(*) FROM customer").fetchone()
        assert keys[0] == 0 and keys[1] > 30  # new customers, each with a key of its own
        orphans = con.execute("SELECT count(*) FROM customer WHERE c_current_cdemo_sk NOT IN "
                              "(SELECT cd_demo_sk FROM customer_demographics) OR c_customer_sk NOT IN "
                              "(SELECT ss_customer_sk FROM store_sales)").fetchone()
        assert orphans[0] == 0  # each new customer has sales of its own (copied onto it)
    finally:
        con.close()
    said = [s for sentences in writer.written.sentences.values() for s in sentences]
    assert any("moved to another item row: a new group" in s and "past its LIMIT 8" in s for s in said), said
    assert any("with a fresh key" in s and "past its LIMIT 50" in s for s in said), said
    assert any("moved to another customer_demographics row" in s and "past its LIMIT 6" in s for s in said), said
