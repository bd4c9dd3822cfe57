"""A pinned path copied into a variant through a parent row the variant holds with other values.

TPC-DS at SF 0.01 has one store; another gold's literal (``s_city IN ('Fairview', 'Midway')``)
takes its city on every variant, and the subsets keep no sale joined to its return. q50 (returns
by store, LIMIT 100) then had no reaching row on any variant, and the pinned path that would
give it one could not be copied in: its store row's key was "another row's here". Graded with
q50 alone the subset happened to keep a reaching pair; with the set's 69 golds, none of q50's
witnesses was written. The path now stands on the variant's row with that key, where the gold
still gets its new output row there."""
from __future__ import annotations

import shutil
from pathlib import Path

import duckdb

from pytest_sqleval.core.variants.clones import CloneWriter, clone_witnesses
from pytest_sqleval.core.variants.constraints import observe_constraints
from tests.rows import scalar

GOLD = ("SELECT s_name, s_company_id, count(*) AS n FROM sales, store, dates WHERE s_store = s_id AND s_date = d_sk "
        "AND d_year = 2000 GROUP BY s_name, s_company_id ORDER BY s_name, s_company_id LIMIT 5")


def make_shop(path: Path) -> None:
    """One store, a calendar of two years, sales over both."""
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE store (s_id INTEGER PRIMARY KEY, s_name VARCHAR NOT NULL, s_company_id INTEGER NOT NULL, "
                "s_city VARCHAR NOT NULL)")
    con.execute("CREATE TABLE dates (d_sk INTEGER PRIMARY KEY, d_year INTEGER NOT NULL)")
    con.execute("CREATE TABLE sales (t INTEGER PRIMARY KEY, s_store INTEGER NOT NULL REFERENCES store(s_id), "
                "s_date INTEGER NOT NULL REFERENCES dates(d_sk), amt INTEGER NOT NULL)")
    con.execute("INSERT INTO store VALUES (1, 'ought', 1, 'Midway')")
    con.execute("INSERT INTO dates SELECT d, 1999 + d // 100 FROM range(0, 200) t(d)")
    con.execute("INSERT INTO sales SELECT t, 1, (t * 7) % 200, t % 13 FROM range(1, 301) t(t)")
    con.close()


def test_a_path_is_copied_in_through_a_parent_row_another_witness_changed(tmp_path: Path) -> None:
    pinned, variant = tmp_path / "pinned.duckdb", tmp_path / "variant.duckdb"
    make_shop(pinned)
    shutil.copy(pinned, variant)
    con = duckdb.connect(str(variant))
    con.execute("DELETE FROM sales WHERE s_date >= 100")  # the subset keeps no reaching sale
    con.execute("UPDATE store SET s_city = 'Fairview'")  # another gold's literal, written over the one store
    c = observe_constraints(pinned, golds=([GOLD], "duckdb"))
    (lift,) = [w for w in clone_witnesses([GOLD], "duckdb", c.tables, c.dependencies) if w.limit]
    source = duckdb.connect(str(pinned), read_only=True)
    writer = CloneWriter(con, "duckdb", c.tables, list(c.dependencies), lambda sql, p: con.execute(sql, p).fetchall(),
                         pinned=lambda sql, p: source.execute(sql, p).fetchall())
    assert scalar(con, f"SELECT count(*) FROM ({GOLD})") == 0
    assert writer.write(lift, 0), lift.what
    assert scalar(con, f"SELECT count(*) FROM ({GOLD})") >= 1
    assert con.execute("SELECT s_city FROM store WHERE s_id = 1").fetchall() == [("Fairview",)]  # the path stands on it
