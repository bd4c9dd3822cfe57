"""Comparisons of two tables' columns (TPC-DS q72: ``inv_quantity_on_hand < cs_quantity``,
``d3.d_date > d1.d_date + 5``), in a star with LEFT JOINed tables beside it.

On the pinned data here no stock level equals a sale's quantity and no sale ships exactly five
days after it was sold, so ``<`` against ``<=`` and ``>`` against ``>=`` coincide. A variant needs
a row where the two sides meet: a copy of a reaching sale with its quantity set to the stock
level it is compared with, and one moved to the ship date five days after its sold date. Before,
a LEFT JOIN left the SELECT without any clone witness, and a conjunct reading two tables was
nobody's target. The bound moved a day the other way (``+ 5`` to ``+ 6``: TPC-DS q72 on every
held-out set) needs a sale shipped six days on: a step across from where the sides meet."""
from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from pytest_sqleval.core.variants.clones import clone_witnesses
from pytest_sqleval.core.variants.constraints import observe_constraints
from tests.core.variants.conftest import assert_caught_beside_a_rewrite


def make_stock(path: Path) -> None:
    """Sales of 6 items over 60 days; stock levels even, sale quantities odd; ships 2, 8 or 10 days on."""
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE item (i_id INTEGER PRIMARY KEY, i_desc VARCHAR NOT NULL)")
    con.execute("CREATE TABLE dates (d_sk INTEGER PRIMARY KEY, d_date DATE NOT NULL UNIQUE, d_week INTEGER NOT NULL)")
    con.execute("CREATE TABLE promo (p_id INTEGER PRIMARY KEY, p_name VARCHAR NOT NULL)")
    con.execute("CREATE TABLE stock (k_item INTEGER NOT NULL REFERENCES item(i_id), k_date INTEGER NOT NULL "
                "REFERENCES dates(d_sk), k_qty INTEGER NOT NULL, PRIMARY KEY (k_item, k_date))")
    con.execute("CREATE TABLE sales (order_no INTEGER PRIMARY KEY, s_item INTEGER NOT NULL REFERENCES item(i_id), "
                "s_sold INTEGER NOT NULL REFERENCES dates(d_sk), s_ship INTEGER NOT NULL REFERENCES dates(d_sk), "
                "s_promo INTEGER, s_qty INTEGER NOT NULL)")
    con.execute("INSERT INTO item SELECT i, 'item ' || i FROM range(1, 7) t(i)")
    con.execute("INSERT INTO dates SELECT d, DATE '2020-01-01' + d::INTEGER, d // 7 FROM range(1, 80) t(d)")
    con.execute("INSERT INTO promo VALUES (1, 'spring'), (2, 'fall')")
    con.execute("INSERT INTO stock SELECT i, d, 2 * ((i * 7 + d * 3) % 10) FROM range(1, 7) t(i), range(1, 80, 7) u(d)")
    con.execute("INSERT INTO sales SELECT o, 1 + o % 6, 1 + o % 60, 1 + o % 60 + [2, 8, 10][1 + o % 3], "
                "CASE WHEN o % 4 = 0 THEN NULL ELSE 1 + o % 2 END, 1 + 2 * (o % 10) FROM range(1, 241) t(o)")
    con.close()


GOLD = ("SELECT i.i_desc, d1.d_week, count(*) AS n, count(p.p_id) AS promoted FROM sales s "
        "JOIN stock k ON s.s_item = k.k_item JOIN item i ON i.i_id = s.s_item "
        "JOIN dates d1 ON s.s_sold = d1.d_sk JOIN dates d2 ON k.k_date = d2.d_sk JOIN dates d3 ON s.s_ship = d3.d_sk "
        "LEFT JOIN promo p ON s.s_promo = p.p_id "
        "WHERE d1.d_week = d2.d_week AND k.k_qty < s.s_qty AND d3.d_date > d1.d_date + 5 "
        "GROUP BY i.i_desc, d1.d_week")
WRONG = {"qty": GOLD.replace("k.k_qty < s.s_qty", "k.k_qty <= s.s_qty"),
         "date": GOLD.replace("d3.d_date > d1.d_date + 5", "d3.d_date >= d1.d_date + 5")}
RIGHT = {"qty": GOLD.replace("k.k_qty < s.s_qty", "s.s_qty > k.k_qty"),
         "date": GOLD.replace("d3.d_date > d1.d_date + 5", "d3.d_date - 5 > d1.d_date")}
FLIPPED = GOLD.replace("d3.d_date > d1.d_date + 5", "d1.d_date + 5 < d3.d_date")
# (gold, near-miss, rewrite): the bound a day up, on either side of the comparison
STEPS = {"bound up": (GOLD, GOLD.replace("d1.d_date + 5", "d1.d_date + 6"), RIGHT["date"]),
         "bound up, sides swapped": (FLIPPED, FLIPPED.replace("d1.d_date + 5", "d1.d_date + 6"),
                                     FLIPPED.replace("d1.d_date + 5 < d3.d_date", "d3.d_date > 5 + d1.d_date"))}


@pytest.fixture(scope="module")
def stock(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("stock") / "stock.duckdb"
    make_stock(path)
    return path


def test_both_comparisons_get_a_witness_at_their_edge(stock: Path) -> None:
    c = observe_constraints(stock)
    said = [w.what for w in clone_witnesses([GOLD], "duckdb", c.tables, c.dependencies)]
    assert any("the other side of `k.k_qty < s.s_qty`" in s for s in said), said
    assert any("(where the sides of `d3.d_date > d1.d_date + 5` meet)" in s for s in said), said


@pytest.mark.parametrize("kind", ["qty", "date"])
def test_an_operator_at_a_column_comparison_is_caught(stock: Path, kind: str) -> None:
    assert_caught_beside_a_rewrite(stock, stock.parent, GOLD, WRONG[kind], RIGHT[kind])


@pytest.mark.parametrize("kind", list(STEPS))
def test_a_bound_moved_away_from_where_the_sides_meet_is_caught(stock: Path, kind: str, tmp_path: Path) -> None:
    gold, wrong, right = STEPS[kind]
    assert_caught_beside_a_rewrite(stock, tmp_path, gold, wrong, right)


def make_sites(path: Path) -> None:
    """One web site, two warehouses, a calendar; the sales without a site have no warehouse either
    (TPC-DS: ``ws_web_site_sk`` NULL on 3 sales at SF 0.01, none of them reaching q62's output)."""
    con = duckdb.connect(str(path))
    # a date column of the one site row is observed unique and cannot take a fresh value: no site is copied
    con.execute("CREATE TABLE site (site_id INTEGER PRIMARY KEY, site_name VARCHAR NOT NULL, site_open DATE NOT NULL)")
    con.execute("CREATE TABLE warehouse (w_id INTEGER PRIMARY KEY, w_name VARCHAR NOT NULL)")
    con.execute("CREATE TABLE dates (d_sk INTEGER PRIMARY KEY, d_month INTEGER NOT NULL)")
    con.execute("CREATE TABLE web_sales (order_no INTEGER PRIMARY KEY, ws_date INTEGER NOT NULL REFERENCES dates(d_sk), "
                "ws_wh INTEGER REFERENCES warehouse(w_id), ws_site INTEGER REFERENCES site(site_id), "
                "ws_qty INTEGER NOT NULL)")
    con.execute("INSERT INTO site VALUES (1, 'site_0', DATE '1997-08-16')")
    con.execute("INSERT INTO warehouse VALUES (1, 'Conventional childr'), (2, 'Important issues liv')")
    con.execute("INSERT INTO dates SELECT d, d // 30 FROM range(1, 361) t(d)")
    con.execute("INSERT INTO web_sales SELECT o, 1 + (o * 7) % 120, CASE WHEN o % 25 = 0 THEN NULL ELSE 1 + o % 2 END, "
                "CASE WHEN o % 25 = 0 THEN NULL ELSE 1 END, 1 + o % 9 FROM range(1, 301) t(o)")
    con.close()


SITES = ("SELECT w_substr, site_name, count(*), sum(ws_qty) FROM web_sales, (SELECT SUBSTRING(w_name, 1, 5) AS "
         "w_substr, * FROM warehouse) AS sq1, site, dates WHERE d_month BETWEEN 1 AND 3 AND ws_date = d_sk "
         "AND ws_wh = w_id AND ws_site = site_id GROUP BY w_substr, site_name ORDER BY 1, 2")


def test_a_join_predicate_dropped_beside_a_projecting_derived_table_is_caught(tmp_path: Path) -> None:
    """TPC-DS q62: the warehouse read through ``(SELECT ..., * FROM warehouse) sq1`` left the SELECT
    without clone witnesses, so no copy with a NULL site was written and the cross product with the
    one site coincided."""
    path = tmp_path / "sites.duckdb"
    make_sites(path)
    wrong = SITES.replace(" AND ws_site = site_id", "")
    right = SITES.replace("ws_site = site_id", "site_id = ws_site")
    assert_caught_beside_a_rewrite(path, tmp_path, SITES, wrong, right)
