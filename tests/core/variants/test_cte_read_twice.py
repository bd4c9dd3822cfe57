"""A day's ``sum -> avg`` behind a CTE read twice, with a LIMIT (issue 31, ``separators._complete``).

TPC-DS q59 sums each day's sales per store and week in a CTE ``wss``, reads it twice (this
year's weeks and next year's), divides one by the other and keeps 100 rows (two weeks of the
first store on SF 0.01). Its ``sum -> avg`` swap of one day coincides wherever each group holds
one sale that day, and on the pinned data it does. A variant tells them apart only where a group
the output shows holds that day in *both* years and more sales of it in one: a subset rarely
keeps the day in both years of a shown group (q59's seed-1022 variants: three of its seven days
on one variant, none on the others), and one copied row cannot make both (missed on seeds 1021
and 1022 beside the other golds). The witness: the fact rows of the first output row through each
read of the CTE, copied with their date moved to that week's Friday (a date of the variant, else
the pinned one, else a copy of the row's own date so named), two through the first read and one
through the other.

Here the same shape on a small DuckDB star: a sale a day per store and week, Friday only in the
first week of each year."""
from __future__ import annotations

from pathlib import Path

import duckdb

from pytest_sqleval.core.api import Grader

DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri")


def make_weekly(path: Path) -> None:
    """Weeks 1-8 (this year 1-4, next year 5-8), five days each; stores 1-12 ('s01'..); a sale
    per store and day (two on Mondays), Friday only in weeks 1 and 5."""
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE date_dim (d_date_sk INTEGER PRIMARY KEY, d_week_seq INTEGER NOT NULL, "
                "d_day_name VARCHAR NOT NULL)")
    days = ", ".join(f"'{d}'" for d in DAYS)
    con.execute(f"INSERT INTO date_dim SELECT i, 1 + i // 5, ([{days}])[1 + i % 5] FROM range(40) t(i)")
    con.execute("CREATE TABLE store (s_store_sk INTEGER PRIMARY KEY, s_store_name VARCHAR NOT NULL)")
    con.execute("INSERT INTO store SELECT i, 's' || lpad(CAST(i AS VARCHAR), 2, '0') FROM range(1, 13) t(i)")
    con.execute("CREATE TABLE store_sales (ss_ticket INTEGER PRIMARY KEY, ss_sold_date_sk INTEGER NOT NULL "
                "REFERENCES date_dim, ss_store_sk INTEGER NOT NULL REFERENCES store, ss_price DECIMAL(7,2) NOT NULL)")
    con.execute("INSERT INTO store_sales SELECT row_number() OVER (ORDER BY s, d), d, s, 5 + (s * 7 + d * 3) % 40 "
                "FROM range(40) a(d), range(1, 13) b(s) WHERE d % 5 < 4 OR d // 5 IN (0, 4)")
    # a second sale on Mondays: a store sells more than once a day (no key of day and store)
    con.execute("INSERT INTO store_sales SELECT 1000 + row_number() OVER (ORDER BY s, d), d, s, 7 + (s + d) % 30 "
                "FROM range(0, 40, 5) a(d), range(1, 13) b(s)")
    con.close()


def _day(day: str, fn: str = "sum") -> str:
    return f"{fn}(CASE WHEN d_day_name = '{day}' THEN ss_price ELSE NULL END) AS {day.lower()}"


WEEKLY = ("WITH wss AS (SELECT d_week_seq, ss_store_sk, " + ", ".join(_day(d) for d in DAYS) + " FROM store_sales, "
          "date_dim WHERE d_date_sk = ss_sold_date_sk GROUP BY d_week_seq, ss_store_sk) "
          "SELECT y.s_store_name, y.d_week_seq, " + ", ".join(f"y.{d.lower()} / x.{d.lower()} AS {d.lower()}_ratio"
                                                               for d in DAYS) +
          " FROM (SELECT s_store_name, s_store_sk, wss.* FROM wss, store WHERE ss_store_sk = s_store_sk "
          "AND d_week_seq BETWEEN 1 AND 4) AS y, (SELECT s_store_sk, wss.* FROM wss, store "
          "WHERE ss_store_sk = s_store_sk AND d_week_seq BETWEEN 5 AND 8) AS x "
          "WHERE y.s_store_sk = x.s_store_sk AND y.d_week_seq = x.d_week_seq - 4 "
          "ORDER BY y.s_store_name, y.d_week_seq LIMIT 3")
WRONG = WEEKLY.replace(_day("Fri"), _day("Fri", "avg"))


def test_a_swap_of_one_day_in_a_limited_output_is_caught(tmp_path: Path) -> None:
    path = tmp_path / "weekly.duckdb"
    make_weekly(path)
    with Grader(path, cache_dir=tmp_path / "plain") as plain:
        assert plain.compare(WRONG, WEEKLY).passed
    with Grader(path, cache_dir=tmp_path / "cache", variants=4, variant_golds=[WEEKLY]) as graded:
        wrong = graded.compare(WRONG, WEEKLY)
        right = graded.compare(WEEKLY.replace("d_date_sk = ss_sold_date_sk", "ss_sold_date_sk = d_date_sk"), WEEKLY)
    assert (wrong.passed, wrong.failure_kind) == (False, "coincidental_pass"), wrong.explanation
    assert right.passed, right.explanation
    assert "through the first read of its CTE" in wrong.explanation, wrong.explanation
    for variant in sorted((tmp_path / "cache").rglob("variant-*.duckdb")):
        con = duckdb.connect(str(variant), read_only=True)
        assert con.execute("SELECT count(*) FROM store_sales WHERE ss_sold_date_sk NOT IN "
                           "(SELECT d_date_sk FROM date_dim)").fetchone() == (0,)
        assert con.execute("SELECT count(*) - count(DISTINCT d_date_sk) FROM date_dim").fetchone() == (0,)
        con.close()
