"""A dimension whose text column shares words with another table's is not frozen (issue 31, TPC-DS).

TPC-DS names stores, promotions and call centers with the syllables it names products with
(``store(s_store_name) -> item(i_product_name)`` holds on the data), and a table referenced by
a natural key is never moved. So every item was frozen: no variant held an item at a price
between 50 and 51, and ``i_current_price > 50`` written ``> 51`` passed on every variant. An
undeclared text inclusion into a table the facts reference by a number key is a shared
vocabulary, not a key: the item's other columns are free again, and the moved literal is
caught. The equivalent rewrites pass on every variant."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_sqleval.core.api import Grader
from pytest_sqleval.core.variants.constraints import observe_constraints
from tests.core.variants.conftest import graded_with_variants, made

WORDS = ["ought", "able", "pri", "ese", "anti", "cally", "ation", "eing", "bar", "n st"]


def make_shop(path: Path) -> None:
    import duckdb
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE item (i_item_sk INTEGER, i_product_name VARCHAR, i_current_price DECIMAL(7, 2), "
                "i_category VARCHAR)")
    con.execute("CREATE TABLE store (s_store_sk INTEGER, s_store_name VARCHAR)")
    con.execute("CREATE TABLE store_sales (ss_item_sk INTEGER, ss_store_sk INTEGER, ss_sales_price DECIMAL(7, 2))")
    # prices 10..95 by fives: none in (50, 51], where `> 50` and `> 51` part
    con.executemany("INSERT INTO item VALUES (?, ?, ?, ?)",
                    [(i + 1, WORDS[i % 10] + (WORDS[i // 10] if i >= 10 else ""), 10 + 5 * (i % 18),
                      ["Books", "Music", "Shoes"][i % 3]) for i in range(40)])
    con.executemany("INSERT INTO store VALUES (?, ?)", [(1, "ought"), (2, "able")])  # a product's name each
    con.executemany("INSERT INTO store_sales VALUES (?, ?, ?)",
                    [(1 + (k * 7) % 40, 1 + k % 2, 1 + (k * 13) % 90) for k in range(300)])
    con.close()


GOLD = ("SELECT s_store_name, sum(ss_sales_price) AS sales FROM store_sales, item, store "
        "WHERE ss_item_sk = i_item_sk AND ss_store_sk = s_store_sk AND i_current_price > 50 "
        "GROUP BY s_store_name ORDER BY s_store_name")
WRONG = GOLD.replace("i_current_price > 50", "i_current_price > 51")
EQUIVALENTS = {
    "sides_swapped": GOLD.replace("i_current_price > 50", "50 < i_current_price"),
    "tables_reordered": GOLD.replace("FROM store_sales, item, store", "FROM item, store, store_sales"),
}


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Grader]]:
    yield from graded_with_variants(tmp_path_factory, "shop", make_shop, GOLD)


def test_the_moved_price_coincides_on_the_pinned_database(tmp_path: Path) -> None:
    with Grader(made(tmp_path, "shop", make_shop), dialect="duckdb") as graded:
        assert graded.compare(WRONG, GOLD).passed


def test_a_shared_word_does_not_freeze_the_item(tmp_path: Path) -> None:
    c = observe_constraints(made(tmp_path, "shop", make_shop), golds=([GOLD], "duckdb"))
    assert any(d.child == "main.store" and d.parent == "main.item" for d in c.dependencies)  # the words are shared
    assert "i_current_price" in c.tables["main.item"].free


def test_the_moved_price_is_caught(shop: tuple[Path, Grader]) -> None:
    verdict = shop[1].compare(WRONG, GOLD)
    assert (verdict.passed, verdict.failure_kind) == (False, "coincidental_pass"), verdict.explanation


@pytest.mark.parametrize("name", sorted(EQUIVALENTS))
def test_equivalents_pass_on_every_variant(shop: tuple[Path, Grader], name: str) -> None:
    verdict = shop[1].compare(EQUIVALENTS[name], GOLD)
    assert verdict.passed, (name, verdict.explanation)
