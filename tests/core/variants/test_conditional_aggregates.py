"""Separating witnesses for swaps of conditional aggregates (issue 31, ``separators._conditional_near_misses``).

TPC-DS q66 sums each month's sales per warehouse in two channel branches (``sum(CASE WHEN
d_moy = 12 THEN price ELSE 0 END)``) and sums the branches again outside. On SF 0.01 the
catalog branch has no December sale of 2001: its December aggregate is a constant 0, and
``avg`` for its ``sum`` coincided on every variant: the outer SELECT's aggregates took every
slot of the separating near-misses, and no copy of a sale moved its date into December.

Here, the same shape on a small DuckDB star: catalog sales of 2001 in January to November
only (December in other years), web sales in every month. The swap is caught by a copy of a
reaching catalog sale whose date reference is moved to a date of December 2001; equivalent
rewrites pass on every variant."""
from __future__ import annotations

from pathlib import Path

import duckdb

from pytest_sqleval.core.api import Grader
from pytest_sqleval.core.variants.constraints import observe_constraints
from pytest_sqleval.core.variants.separators import near_misses
from tests.rows import scalar

MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")


def make_monthly(path: Path) -> None:
    """Dates: four a month, 2000-2002 (sk 0-143). Warehouses 1-2. Web sales in every month of
    2001 (on the first two dates of each); catalog sales of 2001 in months 1-11 only, and in
    December of 2000 and 2002."""
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE date_dim (d_date_sk INTEGER NOT NULL, d_year INTEGER NOT NULL, d_moy INTEGER NOT NULL)")
    con.execute("INSERT INTO date_dim SELECT i, 2000 + i // 48, 1 + i % 48 // 4 FROM range(144) t(i)")
    con.execute("CREATE TABLE warehouse (w_warehouse_sk INTEGER NOT NULL, w_warehouse_name VARCHAR NOT NULL)")
    con.execute("INSERT INTO warehouse VALUES (1, 'North'), (2, 'South')")
    for table, p, months in (("web_sales", "ws", 12), ("catalog_sales", "cs", 11)):
        con.execute(f"CREATE TABLE {table} ({p}_date_sk INTEGER NOT NULL, {p}_warehouse_sk INTEGER NOT NULL, "
                    f"{p}_order_number INTEGER NOT NULL, {p}_price DECIMAL(7,2) NOT NULL)")
        base = 1000 if p == "ws" else 5000
        # 2001 (sk 48-95): months 1..months, on the first two dates of each, three sales a month per warehouse
        con.execute(f"INSERT INTO {table} SELECT 48 + 4 * (i % {months}) + i // {months} % 2, 1 + i % 2, "
                    f"{base} + i, 10 + i % 37 FROM range({6 * months}) t(i)")
        # December of 2000 and 2002 (sk 44, 45, 140, 141)
        con.execute(f"INSERT INTO {table} SELECT CASE i % 4 WHEN 0 THEN 44 WHEN 1 THEN 45 WHEN 2 THEN 140 "
                    f"ELSE 141 END, 1 + i % 2, {base} + 500 + i, 20 + i FROM range(8) t(i)")
    con.close()


def _branch(p: str, table: str) -> str:
    sums = ", ".join(f"sum(CASE WHEN d_moy = {i + 1} THEN {p}_price ELSE 0 END) AS {m}" for i, m in enumerate(MONTHS))
    return (f"SELECT w_warehouse_name, {sums} FROM {table}, warehouse, date_dim WHERE {p}_warehouse_sk = "
            f"w_warehouse_sk AND {p}_date_sk = d_date_sk AND d_year = 2001 GROUP BY w_warehouse_name")


MONTHLY = (f"SELECT w_warehouse_name, {', '.join(f'sum({m}) AS {m}' for m in MONTHS)} FROM ("
           f"{_branch('ws', 'web_sales')} UNION ALL {_branch('cs', 'catalog_sales')}) AS x "
           f"GROUP BY w_warehouse_name ORDER BY w_warehouse_name")
DEC = "sum(CASE WHEN d_moy = 12 THEN cs_price ELSE 0 END) AS dec"
WRONG = MONTHLY.replace(DEC, "avg(CASE WHEN d_moy = 12 THEN cs_price ELSE 0 END) AS dec")
RIGHTS = [
    MONTHLY.replace("cs_date_sk = d_date_sk AND d_year = 2001", "d_year = 2001 AND d_date_sk = cs_date_sk"),
    MONTHLY.replace(DEC, "sum(CASE WHEN 12 = d_moy THEN cs_price ELSE 0 END) AS dec"),
]


def test_a_conditional_swap_is_made_past_the_outer_aggregates(tmp_path: Path) -> None:
    path = tmp_path / "monthly.duckdb"
    make_monthly(path)
    found = near_misses([MONTHLY], "duckdb", observe_constraints(path).tables)
    dec = [m for m in found if m.unmet and "d_moy = 12 THEN cs_price" in m.what]
    assert len(dec) == 1 and "AVG(CASE WHEN d_moy = 12 THEN cs_price ELSE 0 END)" in dec[0].sql, found
    (target,) = dec[0].targets
    assert (target.table, target.column) == ("main.catalog_sales", "cs_date_sk")
    con = duckdb.connect(str(path), read_only=True)
    assert con.execute(dec[0].unmet).fetchall() == []  # no catalog sale of December 2001 here
    moved = con.execute(target.edits[0].split("|", 2)[2]).fetchall()
    assert scalar(con, f"SELECT d_year * 100 + d_moy FROM date_dim WHERE d_date_sk = {moved[0][0]}") == 200112  # the first date of December 2001
    con.close()


def test_a_conditional_swap_is_caught(tmp_path: Path) -> None:
    path = tmp_path / "monthly.duckdb"
    make_monthly(path)
    with Grader(path, cache_dir=tmp_path / "plain") as plain:
        for query in [WRONG, *RIGHTS]:
            assert plain.compare(query, MONTHLY).passed, query
    with Grader(path, cache_dir=tmp_path / "cache", variants=4, variant_golds=[MONTHLY]) as graded:
        wrong = graded.compare(WRONG, MONTHLY)
        rights = [(right, graded.compare(right, MONTHLY)) for right in RIGHTS]
    assert (wrong.passed, wrong.failure_kind) == (False, "coincidental_pass"), wrong.explanation
    for right, v in rights:
        assert v.passed, (right, v.explanation)
    for variant in sorted((tmp_path / "cache").rglob("variant-*.duckdb")):
        con = duckdb.connect(str(variant), read_only=True)
        assert scalar(con, "SELECT count(*) - count(DISTINCT cs_order_number) FROM catalog_sales") == 0
        assert scalar(con, "SELECT count(*) FROM catalog_sales WHERE cs_date_sk NOT IN "
                           "(SELECT d_date_sk FROM date_dim)") == 0
        con.close()
