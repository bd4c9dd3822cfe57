"""Every witness query of a gold is SQL (issue 31). A witness that does not bind is never
written, silently: on TPC-DS, every witness of q44, q51 and q67 and 30 of the 31 of each of
q33, q56 and q60 failed to bind, and four of q32's. The shapes, each on a small shop:

- channels met in ``SELECT * FROM ss UNION ALL SELECT * FROM ws`` (q33/q56/q60): the row
  id carried up to the output was added beside the ``*`` of the branch already carrying
  it, so that branch had one column more than the others;
- a rank over a derived table (q44/q51/q67): ``rank() OVER`` or ``sum(x) OVER`` read as an
  aggregate, so the carried row id was taken as a ``min`` beside ungrouped columns;
- a correlated subquery beside a second copy of its outer table (q32's new ``item`` row):
  the subquery's bare ``i_item_sk`` named both copies;
- a SELECT below the top reading one of the gold's CTEs (q14: 21 of 62): asked alone, without
  the WITH."""
from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

from pytest_sqleval.core.variants.clones import CloneWriter, _salt_of, clone_witnesses
from pytest_sqleval.core.variants.constraints import observe_constraints
from tests.core.variants.test_limit_output_paths import make_shop

CHANNELS = """
WITH ss AS (SELECT i_item_id, sum(ss_sales_price) AS total FROM store_sales, date_dim, item
            WHERE ss_item_sk = i_item_sk AND ss_sold_date_sk = d_date_sk AND d_moy = 2 GROUP BY i_item_id),
     ws AS (SELECT i_item_id, sum(ws_sales_price) AS total FROM web_sales, date_dim, item
            WHERE ws_item_sk = i_item_sk AND ws_sold_date_sk = d_date_sk AND d_moy = 2 GROUP BY i_item_id)
SELECT i_item_id, sum(total) AS total FROM (SELECT * FROM ss UNION ALL SELECT * FROM ws) AS channels
GROUP BY i_item_id ORDER BY total, i_item_id LIMIT 100
"""
RANKED = """
SELECT * FROM (SELECT i_item_id, total, rank() OVER (ORDER BY total DESC) AS rk
               FROM (SELECT i_item_id, sum(ss_sales_price) AS total FROM store_sales, date_dim, item
                     WHERE ss_item_sk = i_item_sk AND ss_sold_date_sk = d_date_sk AND d_moy = 2
                     GROUP BY i_item_id) AS totals) AS ranked
WHERE rk <= 5 ORDER BY rk, i_item_id LIMIT 100
"""
CORRELATED = """
SELECT sum(ss_sales_price) AS dear FROM store_sales, item, date_dim
WHERE i_category = 'Books' AND i_item_sk = ss_item_sk AND d_date_sk = ss_sold_date_sk AND d_moy <= 6
  AND ss_sales_price > (SELECT 1.1 * avg(ss_sales_price) FROM store_sales, date_dim
                        WHERE ss_item_sk = i_item_sk AND d_date_sk = ss_sold_date_sk AND d_moy <= 6)
"""


# a star beside a table's own rows (q62's warehouse): its row id is no column of ``*``, so it is carried
STARRED = """
SELECT i_brand, count(*) AS sold FROM store_sales, (SELECT substr(i_brand, 1, 5) AS short, * FROM item) AS sq1, date_dim
WHERE ss_item_sk = i_item_sk AND ss_sold_date_sk = d_date_sk AND d_moy = 2 GROUP BY i_brand ORDER BY i_brand LIMIT 100
"""

# a SELECT below the top reading the gold's CTE in a subquery (q14's ``IN (SELECT ss_item_sk FROM cross_items)``):
# asked alone, it named a table that does not exist
CTE_READ = """
WITH books AS (SELECT i_item_sk AS sk FROM item WHERE i_category = 'Books')
SELECT * FROM (SELECT i_brand, sum(ws_sales_price) AS sales FROM web_sales, item, date_dim
               WHERE ws_item_sk IN (SELECT sk FROM books) AND ws_item_sk = i_item_sk AND ws_sold_date_sk = d_date_sk
                 AND d_moy = 2 GROUP BY i_brand) AS brands
ORDER BY sales, i_brand LIMIT 100
"""


@pytest.mark.parametrize("gold, moved", [(CHANNELS, "d_moy"), (RANKED, "d_moy"), (CORRELATED, "i_category"),
                                         (STARRED, "d_moy"), (CTE_READ, "d_moy")],
                         ids=["channels under a star", "a rank over a derived table", "correlated beside a copy",
                              "a star over a table", "a CTE read in a subquery"])
def test_every_witness_binds_and_one_moving_a_filter_is_written(tmp_path: Path, gold: str, moved: str) -> None:
    pinned = tmp_path / "shop.duckdb"
    make_shop(pinned)
    c = observe_constraints(pinned, golds=([gold], "duckdb"))
    witnesses = clone_witnesses([gold], "duckdb", c.tables, list(c.dependencies))
    assert len(witnesses) > 2
    variant = tmp_path / "variant.duckdb"
    shutil.copy(pinned, variant)
    con = duckdb.connect(str(variant))
    try:
        for w in witnesses:
            con.execute(w.rows_sql, [_salt_of(0)]).fetchall()  # binds: no error
        writer = CloneWriter(con, "duckdb", c.tables, list(c.dependencies),
                             lambda sql, params: con.execute(sql, params).fetchall())
        filtered = [w for w in witnesses if moved in w.what and "fails only" in w.what]
        assert filtered and any(writer.write(w) for w in filtered)
    finally:
        con.close()
