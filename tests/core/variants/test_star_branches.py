"""Witnesses of a gold whose channels meet in ``SELECT * FROM ss UNION ALL SELECT * FROM
ws`` (TPC-DS q33, q56, q60) are SQL (issue 31). The row id a witness carries up to the
output was added beside the ``*`` of the branch that already carried it, so that branch
had one column more than the others: 30 of the 31 witnesses of each of those golds failed
to bind, and none of them was ever written."""
from __future__ import annotations

import shutil
from pathlib import Path

import duckdb

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


def test_every_witness_of_channels_met_under_a_star_is_sql_and_one_moves_a_month(tmp_path: Path) -> None:
    pinned = tmp_path / "shop.duckdb"
    make_shop(pinned)
    c = observe_constraints(pinned, golds=([CHANNELS], "duckdb"))
    witnesses = clone_witnesses([CHANNELS], "duckdb", c.tables, list(c.dependencies))
    assert len(witnesses) > 4
    variant = tmp_path / "variant.duckdb"
    shutil.copy(pinned, variant)
    con = duckdb.connect(str(variant))
    try:
        for w in witnesses:
            con.execute(w.rows_sql, [_salt_of(0)]).fetchall()  # binds: no error
        writer = CloneWriter(con, "duckdb", c.tables, list(c.dependencies),
                             lambda sql, params: con.execute(sql, params).fetchall())
        moved = [w for w in witnesses if "d_moy" in w.what and "fails only" in w.what]
        assert moved and any(writer.write(w) for w in moved)
    finally:
        con.close()
