"""Separating witnesses for aggregate swaps and dropped join predicates (issue 31, ``separators.py``).

Each coincidence below returns the gold's rows on the pinned database, and no variant told
it apart before ``separators.py``: the aggregate or the join sits behind a UNION ALL in a
derived table, or a CTE, where no clone or group witness follows it (TPC-DS's channel
unions, Spider's nested FROMs).

- DuckDB, a star with no declared key: ``sum(ext_price)`` over a web/store UNION ALL written
  ``avg(ext_price)``, where each brand of manager 1 sold once in 2000; and a CTE of sales
  joined to ``item`` without ``item_sk = i_item_sk``, where one item is in the category and
  every sale the price filter keeps is that item's;
- SQLite, Spider-shaped (declared keys, text keys): ``sum(attendance)`` over a derived table
  written ``avg(attendance)``; and a join on two columns with one dropped.

Equivalent rewrites pass on every variant."""
from __future__ import annotations

import sqlite3
from pathlib import Path

import duckdb

from pytest_sqleval.core.api import Grader
from pytest_sqleval.core.variants.constraints import observe_constraints
from pytest_sqleval.core.variants.separators import near_misses
from tests.rows import scalar


def make_star(path: Path) -> None:
    """Items 1-20 are in 'Music' (brands b1-b20), 21-40 in 'Books'; each music item sold once
    in 2000 (odd items on the web, even ones in a store), books many times; every other sale
    is in another year. Item 1 alone is of class 'pop'; every store sale priced 90 or more
    (60 of them) is item 1's. The golds filter with LIKE, which no boundary or filter witness
    writes: what the variants catch here, the separating witnesses caught. The facts' date
    and item columns are named as the dimensions' keys are (``ss_date_sk``), so the observer
    links them and a subset keeps the dimension rows its sales reference."""
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE date_dim (d_date_sk INTEGER NOT NULL, d_year INTEGER NOT NULL, "
                "d_quarter_name VARCHAR NOT NULL)")
    con.execute("INSERT INTO date_dim SELECT i, 1998 + i // 12, CAST(1998 + i // 12 AS VARCHAR) || 'Q' || "
                "CAST(1 + i % 12 // 3 AS VARCHAR) FROM range(60) t(i)")
    con.execute("CREATE TABLE item (i_item_sk INTEGER NOT NULL, i_brand VARCHAR NOT NULL, "
                "i_category VARCHAR NOT NULL, i_class VARCHAR NOT NULL)")
    con.execute("INSERT INTO item SELECT i, 'b' || i, CASE WHEN i <= 20 THEN 'Music' ELSE 'Books' END, "
                "CASE WHEN i = 1 THEN 'pop' ELSE 'rock' END FROM range(1, 41) t(i)")
    for table, prefix, number in (("web_sales", "ws", "order"), ("store_sales", "ss", "ticket")):
        con.execute(f"CREATE TABLE {table} ({prefix}_date_sk INTEGER NOT NULL, {prefix}_item_sk INTEGER NOT NULL, "
                    f"{prefix}_{number}_number INTEGER NOT NULL, {prefix}_ext_price DECIMAL(7,2) NOT NULL)")
        base = 1000 if prefix == "ss" else 5000
        # other years (dates 0-23 and 36-59) for every item, priced below 90 but item 1's in a store
        con.execute(f"INSERT INTO {table} SELECT CASE WHEN i % 2 = 0 THEN i % 24 ELSE 36 + i % 24 END, 1 + i % 40, "
                    f"{base} + i, CASE WHEN i % 40 = 0 AND '{prefix}' = 'ss' THEN 90 + i % 9 ELSE 10 + i % 70 END "
                    f"FROM range(2400) t(i)")
        # year 2000 (dates 24-35): books many times, each music item once (odd on the web, even in a store)
        con.execute(f"INSERT INTO {table} SELECT 24 + i % 12, 21 + i % 20, {base} + 3000 + i, 20 + i % 60 "
                    f"FROM range(200) t(i)")
        con.execute(f"INSERT INTO {table} SELECT 24 + i % 12, i, {base} + 4000 + i, 11 + 3 * i "
                    f"FROM range(1, 21) t(i) WHERE i % 2 = {1 if prefix == 'ws' else 0}")
    con.close()


CHANNELS = ("SELECT i_brand, sum(ext_price) AS ext_price FROM item, (SELECT ws_ext_price AS ext_price, "
            "ws_item_sk AS sold_item_sk, ws_date_sk AS sold_date_sk FROM web_sales UNION ALL "
            "SELECT ss_ext_price, ss_item_sk, ss_date_sk FROM store_sales) AS tmp, date_dim "
            "WHERE sold_item_sk = i_item_sk AND sold_date_sk = d_date_sk AND d_quarter_name LIKE '2000Q%' "
            "AND i_category LIKE 'Mus%' "
            "GROUP BY i_brand ORDER BY ext_price DESC, i_brand")
MUSIC = ("WITH sales AS (SELECT ss_item_sk AS item_sk, ss_ext_price AS price FROM store_sales) "
         "SELECT i_brand, count(*) AS n, sum(price) AS total FROM sales, item "
         "WHERE item_sk = i_item_sk AND i_class LIKE 'po%' AND price >= 90 GROUP BY i_brand")
# the suite's direct star joins name the join paths (``joinpath.gold_joins``): a subset keeps the
# dimension rows its sales reference, as on TPC-DS, where most golds join the star directly
STAR_PATHS = [f"SELECT d_year, i_category, count(*) FROM {t}, item, date_dim WHERE {p}_item_sk = i_item_sk "
              f"AND {p}_date_sk = d_date_sk GROUP BY d_year, i_category" for t, p in (("store_sales", "ss"),
                                                                                     ("web_sales", "ws"))]
STAR_COINCIDENCES = [
    (CHANNELS, CHANNELS.replace("sum(ext_price)", "avg(ext_price)")),
    (MUSIC, MUSIC.replace("item_sk = i_item_sk AND ", "")),
]
STAR_EQUIVALENTS = [
    (CHANNELS, CHANNELS.replace("sum(ext_price) AS", "sum(ext_price * 1) AS")),
    (CHANNELS, "SELECT i_brand, sum(ext_price) AS ext_price FROM (SELECT ss_ext_price AS ext_price, ss_item_sk AS "
               "sold_item_sk, ss_date_sk AS sold_date_sk FROM store_sales UNION ALL SELECT ws_ext_price, "
               "ws_item_sk, ws_date_sk FROM web_sales) AS tmp JOIN item ON sold_item_sk = i_item_sk "
               "JOIN date_dim ON sold_date_sk = d_date_sk WHERE i_category LIKE 'Mus%' AND d_quarter_name LIKE '2000Q%' "
               "GROUP BY i_brand ORDER BY 2 DESC, 1"),
    (MUSIC, "SELECT i_brand, count(*) AS n, sum(ss_ext_price) AS total FROM store_sales JOIN item "
            "ON ss_item_sk = i_item_sk WHERE i_class LIKE 'po%' AND ss_ext_price >= 90 GROUP BY i_brand"),
    (MUSIC, MUSIC.replace("count(*)", "count(price)")),
]


def test_the_near_misses_are_traced_through_unions_and_ctes(tmp_path: Path) -> None:
    path = tmp_path / "star.duckdb"
    make_star(path)
    c = observe_constraints(path)
    found = near_misses([CHANNELS, MUSIC, *STAR_PATHS], "duckdb", c.tables)
    swap = next(m for m in found if "AVG(ext_price)" in m.what)
    assert {(t.table, t.column) for t in swap.targets} == {("main.web_sales", "ws_ext_price"),
                                                           ("main.store_sales", "ss_ext_price")}
    dropped = next(m for m in found if "without `item_sk = i_item_sk`" in m.what)
    assert {(t.table, t.column) for t in dropped.targets} == {("main.store_sales", "ss_item_sk"),
                                                              ("main.item", "i_item_sk")}
    con = duckdb.connect(str(path), read_only=True)
    # the rows a target copies reach its SELECT: web sales of music in 2000 (10 rows; 3 drawn)
    web = next(t for t in swap.targets if t.table == "main.web_sales")
    rows = con.execute(web.rows_sql, [7]).fetchall()
    numbers = [scalar(con, f"SELECT ws_order_number FROM web_sales WHERE rowid = {r[0]}") for r in rows]
    assert len(numbers) == 3 and all(5000 + 4000 < n <= 5000 + 4020 for n in numbers), numbers
    con.close()


def test_aggregate_swaps_and_dropped_joins_are_caught_on_a_star(tmp_path: Path) -> None:
    path = tmp_path / "star.duckdb"
    make_star(path)
    golds = [CHANNELS, MUSIC, *STAR_PATHS]
    with Grader(path, cache_dir=tmp_path / "plain") as plain:
        for gold, query in STAR_COINCIDENCES + STAR_EQUIVALENTS:
            assert plain.compare(query, gold).passed, query
    with Grader(path, cache_dir=tmp_path / "cache", variants=4, variant_golds=golds) as graded:
        verdicts = [(wrong, graded.compare(wrong, gold)) for gold, wrong in STAR_COINCIDENCES]
        rights = [(right, graded.compare(right, gold)) for gold, right in STAR_EQUIVALENTS]
    for wrong, v in verdicts:
        assert (v.passed, v.failure_kind) == (False, "coincidental_pass"), (wrong, v.explanation)
        pass
    for right, v in rights:
        assert v.passed, (right, v.explanation)
    for variant in sorted((tmp_path / "cache").rglob("variant-*.duckdb")):
        con = duckdb.connect(str(variant), read_only=True)
        for table, number in (("store_sales", "ss_ticket_number"), ("web_sales", "ws_order_number")):
            assert scalar(con, f"SELECT count(*) - count(DISTINCT {number}) FROM {table}") == 0
        assert scalar(con, "SELECT count(*) - count(DISTINCT i_item_sk) FROM item") == 0
        assert scalar(con, "SELECT count(*) FROM store_sales WHERE ss_item_sk NOT IN "
                           "(SELECT i_item_sk FROM item)") == 0
        con.close()


def make_concerts(path: Path) -> None:
    """Spider-shaped: text keys declared, a composite key of two references. Each country's
    30 countries' singers gave one concert in a 2014 season; each student attended (hours) only the course
    they have an 'A' in, or a first course."""
    con = sqlite3.connect(path)
    con.executescript("""
        CREATE TABLE singer (singer_id TEXT PRIMARY KEY, name TEXT NOT NULL, country TEXT NOT NULL);
        CREATE TABLE concert (concert_id INTEGER PRIMARY KEY, singer_id TEXT NOT NULL REFERENCES singer(singer_id),
                              season TEXT NOT NULL, attendance INTEGER NOT NULL);
        CREATE TABLE student (student_id TEXT PRIMARY KEY, name TEXT NOT NULL);
        CREATE TABLE course (course_id TEXT PRIMARY KEY, title TEXT NOT NULL);
        CREATE TABLE enrollment (student_id TEXT NOT NULL REFERENCES student(student_id),
                                 course_id TEXT NOT NULL REFERENCES course(course_id), grade TEXT NOT NULL,
                                 PRIMARY KEY (student_id, course_id));
        CREATE TABLE attendance (student_id TEXT NOT NULL REFERENCES student(student_id),
                                 course_id TEXT NOT NULL REFERENCES course(course_id), hours INTEGER NOT NULL,
                                 PRIMARY KEY (student_id, course_id));
    """)
    con.executemany("INSERT INTO singer VALUES (?, ?, ?)",
                    [(f"s{i:03d}", f"Singer {i}", f"Country {i % 30}") for i in range(120)])
    seasons = ["Spring", "Summer", "Autumn", "Winter"]
    rows = [(i, f"s{i % 120:03d}", f"{seasons[i % 4]} {2010 + i // 120}", 500 + 37 * i % 900) for i in range(480)]
    rows += [(1000 + k, f"s{k:03d}", f"{seasons[k % 4]} 2014", 1000 + 111 * k) for k in range(30)]
    con.executemany("INSERT INTO concert VALUES (?, ?, ?, ?)", rows)
    con.executemany("INSERT INTO student VALUES (?, ?)", [(f"st{i}", f"Student {i}") for i in range(150)])
    con.executemany("INSERT INTO course VALUES (?, ?)", [(f"c{i}", f"Course {i}") for i in range(8)])
    enrolled = [(f"st{i}", f"c{(i + k) % 8}", "A" if k == 0 and i % 3 == 0 else "BCD"[(i + k) % 3])
                for i in range(150) for k in range(3)]
    con.executemany("INSERT INTO enrollment VALUES (?, ?, ?)", enrolled)
    con.executemany("INSERT INTO attendance VALUES (?, ?, ?)",
                    [(s, c, 2 + (int(s[2:]) * 7 + int(c[1:]) * 3) % 20) for s, c, _ in enrolled[::3]])
    con.commit()
    con.close()


YEARLY = ("SELECT country, sum(attendance) FROM (SELECT T2.country, T1.attendance, T1.season FROM concert AS T1 "
          "JOIN singer AS T2 ON T1.singer_id = T2.singer_id) AS t WHERE season LIKE '% 2014' GROUP BY country")
HOURS = ("SELECT T1.student_id, sum(T2.hours) FROM enrollment AS T1 JOIN attendance AS T2 "
         "ON T1.student_id = T2.student_id AND T1.course_id = T2.course_id WHERE T1.grade = 'A' "
         "GROUP BY T1.student_id")
CONCERT_COINCIDENCES = [
    (YEARLY, YEARLY.replace("sum(attendance)", "avg(attendance)")),
    (HOURS, HOURS.replace(" AND T1.course_id = T2.course_id", "")),
]
CONCERT_EQUIVALENTS = [
    (YEARLY, "SELECT T2.country, sum(T1.attendance) FROM concert AS T1 JOIN singer AS T2 "
             "ON T1.singer_id = T2.singer_id WHERE T1.season LIKE '% 2014' GROUP BY T2.country"),
    (YEARLY, YEARLY.replace("sum(attendance)", "total(attendance)")),
    (HOURS, HOURS.replace("ON T1.student_id = T2.student_id AND T1.course_id = T2.course_id",
                          "ON T1.course_id = T2.course_id AND T2.student_id = T1.student_id")),
    (HOURS, "SELECT T1.student_id, sum(T2.hours) FROM enrollment AS T1, attendance AS T2 WHERE T1.grade = 'A' "
            "AND T2.student_id = T1.student_id AND T2.course_id = T1.course_id GROUP BY 1"),
]


def test_aggregate_swaps_and_dropped_joins_are_caught_on_sqlite(tmp_path: Path) -> None:
    path = tmp_path / "concerts.sqlite"
    make_concerts(path)
    golds = [YEARLY, HOURS]
    with Grader(path, cache_dir=tmp_path / "plain") as plain:
        for gold, query in CONCERT_COINCIDENCES + CONCERT_EQUIVALENTS:
            assert plain.compare(query, gold).passed, query
    with Grader(path, cache_dir=tmp_path / "cache", variants=4, variant_golds=golds) as graded:
        verdicts = [(wrong, graded.compare(wrong, gold)) for gold, wrong in CONCERT_COINCIDENCES]
        rights = [(right, graded.compare(right, gold)) for gold, right in CONCERT_EQUIVALENTS]
    for wrong, v in verdicts:
        assert (v.passed, v.failure_kind) == (False, "coincidental_pass"), (wrong, v.explanation)
    for right, v in rights:
        assert v.passed, (right, v.explanation)
    for variant in sorted((tmp_path / "cache").rglob("variant-*.sqlite")):
        con = sqlite3.connect(variant)
        assert con.execute("PRAGMA foreign_key_check").fetchall() == []
        for table in ("enrollment", "attendance"):
            assert scalar(con, f"SELECT count(*) FROM (SELECT 1 FROM {table} GROUP BY student_id, course_id "
                               f"HAVING count(*) > 1)") == 0
        con.close()
