"""A gold's literal that no pinned row holds, in a column of open vocabulary (issue 31).

TPC-DS q56 asks for items of ``i_color IN ('slate', 'blanched', 'burnished')`` through
``i_item_id IN (SELECT i_item_id FROM item WHERE ...)``, once per sales channel; at scale factor
0.01 no item is blanched or burnished, so a member swapped for another coincided on every
variant of held-out seeds 1029-1031: variants wrote only values the pinned column holds. A text
column of open vocabulary (colours, names: more than ``CODE_DOMAIN_VALUES`` distinct values, or
fewer than ``CODE_REPEATS`` rows a value) now takes the golds' literals; the IN over the item's
own table is read as the item's own filter, its new row taking a fresh ``i_item_id``; and each
member gets a new item copied from a sale passing the rest of the filters, on every variant.
A short list of codes keeps its values: ``channel IN ('store', 'web', 'phone')`` with no phone
sale must pass without ``'phone'`` (a rewrite may lean on the codes the data holds). The two
mutants fail on main 9edb05c; the equivalents pass."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_sqleval.core.api import Grader
from tests.core.variants.conftest import assert_coincidence_caught, graded_with_variants

CHANNEL = ("SELECT i_item_id, sum(amount) AS total FROM {sale}, item WHERE item_sk = i_item_sk "
           "AND i_item_id IN (SELECT i_item_id FROM item WHERE i_color IN ('slate', 'blanched', 'burnished')) "
           "AND month = 2 AND channel IN ('store', 'web', 'phone') GROUP BY i_item_id")
GOLD = (f"WITH s AS ({CHANNEL.format(sale='shop_sale')}), c AS ({CHANNEL.format(sale='mail_sale')}) "
        "SELECT i_item_id, sum(total) AS total FROM (SELECT * FROM s UNION ALL SELECT * FROM c) AS t "
        "GROUP BY i_item_id ORDER BY total, i_item_id LIMIT 100")
MAIL = GOLD.index("c AS (")
WRONG = {
    "mail_burnished_as_blanched": GOLD[:MAIL] + GOLD[MAIL:].replace("'blanched', 'burnished'",
                                                                    "'blanched', 'blanched'", 1),
    "shop_blanched_as_burnished": GOLD[:MAIL].replace("'blanched', 'burnished'", "'burnished', 'burnished'", 1)
    + GOLD[MAIL:],
}
EQUIVALENTS = {
    "held_codes_only": GOLD.replace("channel IN ('store', 'web', 'phone')", "channel IN ('store', 'web')"),
    "colours_reordered": GOLD.replace("'slate', 'blanched', 'burnished'", "'burnished', 'slate', 'blanched'"),
}
COLOURS = [f"colour{i:03d}" for i in range(130)] + ["slate"]


def make_shop(path: Path) -> None:
    """262 items (two revisions of each ``i_item_id``) of 131 colours, one pair slate; two
    sales tables of store and web sales (no phone sale), over two months."""
    import duckdb
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE item (i_item_sk INTEGER PRIMARY KEY, i_item_id VARCHAR, i_color VARCHAR)")
    con.executemany("INSERT INTO item VALUES (?, ?, ?)",
                    [(k, f"ITEM{(k - 1) // 2:04d}", COLOURS[(k - 1) // 2]) for k in range(1, 2 * len(COLOURS) + 1)])
    for sale in ("shop_sale", "mail_sale"):
        con.execute(f"CREATE TABLE {sale} (id INTEGER PRIMARY KEY, item_sk INTEGER REFERENCES item (i_item_sk), "
                    "month INTEGER, channel VARCHAR, amount DECIMAL(9, 2))")
        con.executemany(f"INSERT INTO {sale} VALUES (?, ?, ?, ?, ?)",
                        [(n, 1 + (n * 7) % (2 * len(COLOURS)), 1 + n % 2, ("store", "web")[n % 3 == 0],
                          round(3 + (n * 37) % 500 / 7, 2)) for n in range(1, 1201)])
    con.close()


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Grader]]:
    yield from graded_with_variants(tmp_path_factory, "colours", make_shop, GOLD)


@pytest.mark.parametrize("name", sorted(WRONG))
def test_a_member_no_row_holds_swapped_is_caught(shop: tuple[Path, Grader], name: str) -> None:
    assert_coincidence_caught(shop[0] / "colours.duckdb", shop[1], WRONG[name], GOLD)


@pytest.mark.parametrize("name", sorted(EQUIVALENTS))
def test_equivalents_pass_on_every_variant(shop: tuple[Path, Grader], name: str) -> None:
    verdict = shop[1].compare(EQUIVALENTS[name], GOLD)
    assert verdict.passed, (name, verdict.explanation)
