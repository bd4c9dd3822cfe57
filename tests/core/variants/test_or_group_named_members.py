"""An IN member inside one AND-group of an OR (issue 31).

TPC-DS q63 keeps the items of ``(i_category IN (...) AND i_class IN (...) AND i_brand IN
('scholaramalgamalg #14', ...)) OR (i_category IN ('Women', 'Music', 'Men') AND ... AND i_brand
IN ('amalgimporto #1', ...))``; at scale factor 0.01 no item is of brand ``'amalgimporto #1'``
and the one of ``'edu packscholar #1'`` has no sale in the year, so either swapped for another
literal coincided (seeds 1032 and 1033). A moved witness needs a row holding the member; the
named member witness took only a plain IN conjunct. Now each member of such a list gets a new
item holding it, copied from one passing the rest of the filters and its group's other terms,
on every variant. The first mutant fails on main 64c4c76 (the second is caught there by a subset); the equivalents pass."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_sqleval.core.api import Grader
from tests.core.variants.conftest import assert_coincidence_caught, graded_with_variants

GOLD = ("SELECT i_manager_id, sum(price) AS total, count(*) AS sold FROM sale, item WHERE item_sk = i_item_sk "
        "AND month BETWEEN 1 AND 6 "
        "AND ((i_category IN ('Books', 'Music') AND i_class IN ('class03', 'class11') "
        "AND i_brand IN ('brand011', 'brand080', 'nobrand #1')) "
        "OR (i_category IN ('Women', 'Men') AND i_class IN ('class07', 'class19') "
        "AND i_brand IN ('brand042', 'brand088', 'nobrand #2'))) "
        "GROUP BY i_manager_id ORDER BY i_manager_id")
WRONG = {
    "first_group_member_swapped": GOLD.replace("'nobrand #1'", "'Books'"),
    "second_group_member_swapped": GOLD.replace("'nobrand #2'", "'Women'"),
}
EQUIVALENTS = {
    "groups_swapped": GOLD.replace(
        "i_category IN ('Books', 'Music') AND i_class IN ('class03', 'class11')",
        "i_class IN ('class11', 'class03') AND i_category IN ('Music', 'Books')"),
    "members_reordered": GOLD.replace("'brand011', 'brand080', 'nobrand #1'", "'nobrand #1', 'brand080', 'brand011'"),
}
CATEGORIES = ("Books", "Music", "Women", "Men", "Home")


def make_shop(path: Path) -> None:
    """200 items of 150 brands (no ``nobrand``) in five categories and 23 classes under 20
    managers (a handful of items in each AND-group's category and class), and 900 sales over
    twelve months."""
    import duckdb
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE item (i_item_sk INTEGER PRIMARY KEY, i_brand VARCHAR, i_category VARCHAR, "
                "i_class VARCHAR, i_manager_id INTEGER)")
    con.executemany("INSERT INTO item VALUES (?, ?, ?, ?, ?)",
                    [(k, f"brand{k % 150:03d}", CATEGORIES[k % 5], f"class{k % 23:02d}", 1 + k % 20)
                     for k in range(1, 201)])
    con.execute("CREATE TABLE sale (id INTEGER PRIMARY KEY, item_sk INTEGER REFERENCES item (i_item_sk), "
                "month INTEGER, price DECIMAL(9, 2))")
    con.executemany("INSERT INTO sale VALUES (?, ?, ?, ?)",
                    [(n, 1 + (n * 7) % 200, 1 + n % 12, round(3 + (n * 37) % 500 / 7, 2)) for n in range(1, 901)])
    con.close()


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Grader]]:
    yield from graded_with_variants(tmp_path_factory, "brands", make_shop, GOLD)


@pytest.mark.parametrize("name", sorted(WRONG))
def test_a_member_of_an_or_group_swapped_is_caught(shop: tuple[Path, Grader], name: str) -> None:
    assert_coincidence_caught(shop[0] / "brands.duckdb", shop[1], WRONG[name], GOLD)


@pytest.mark.parametrize("name", sorted(EQUIVALENTS))
def test_equivalents_pass_on_every_variant(shop: tuple[Path, Grader], name: str) -> None:
    verdict = shop[1].compare(EQUIVALENTS[name], GOLD)
    assert verdict.passed, (name, verdict.explanation)
