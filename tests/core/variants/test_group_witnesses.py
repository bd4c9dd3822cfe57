"""Group witnesses and values past the pinned range (issue 31, Variants 2).

Each coincidence below returns the gold's rows on the pinned database and coincided on
every variant before ``groups.py`` and the open range of ``boundaries.Domain``:

- ``HAVING count(*) >= 10`` moved to ``>= 11`` over a fact table with no key a clone can
  take fresh (lines keyed by their order and line number, as TPC-H's lineitem loaded from
  Parquet): no customer has exactly 10 lines; copies with a fresh line number bring one
  there;
- ``max(qty)`` written ``min(qty)`` where every order's lines share one quantity: a copy
  with the column's least value joins a group;
- ``count(discount)`` written ``count(*)`` where no row reaching the output has a NULL
  discount (the pinned column holds NULLs elsewhere): a copy with a NULL discount;
- ``ts < '2024-01-01 00:00:00'`` dropped where every pinned timestamp (ISO text on SQLite)
  lies before it: a row on the bound, a timestamp after the pinned data's last;
- ``amount < 1000.00`` dropped where every pinned amount lies below 600 (a measure: many
  distinct values): a row at the bound, past the pinned maximum;
- ``ORDER BY o.total DESC, o.day`` written ``ORDER BY o.day`` in a grouped gold where totals
  fall as days rise: an output row's day moved before the previous row's.

Equivalent rewrites pass on every variant, and no copy duplicates a line's identity."""
from __future__ import annotations

import sqlite3
from pathlib import Path

import duckdb

from pytest_sqleval.core.api import Grader
from pytest_sqleval.core.variants.constraints import observe_constraints
from pytest_sqleval.core.variants.groups import Identity, group_witnesses, row_identity
from tests.core.variants.conftest import assert_caught_beside_a_rewrite
from tests.rows import scalar

# lines per order, per customer: 4, 6, 8, 12, 14 and 16 lines; no customer has 9, 10 or 11
ORDERS = {1: [2, 2], 2: [2, 4], 3: [4, 4], 4: [4, 4, 4], 5: [7, 7], 6: [4, 4, 4, 4]}


def make_lines(path: Path) -> None:
    """Orders and their lines, no key declared (loaded as a file would be); a line's
    quantity is its order's, its discount NULL only in orders 1-3 (which the discount gold leaves out)."""
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE orders (o_orderkey INTEGER NOT NULL, o_custkey INTEGER NOT NULL)")
    con.execute("CREATE TABLE lineitem (l_orderkey INTEGER NOT NULL, l_linenumber INTEGER NOT NULL, "
                "l_qty DECIMAL(15,2) NOT NULL, l_discount DECIMAL(15,2))")
    key = 0
    for cust, sizes in ORDERS.items():
        for size in sizes:
            key += 1
            con.execute("INSERT INTO orders VALUES (?, ?)", [key, cust])
            qty = 1 + key % 5
            for line in range(1, size + 1):
                discount = None if key <= 3 else 0.01 * ((key + line) % 7)
                con.execute("INSERT INTO lineitem VALUES (?, ?, ?, ?)", [key, line, qty, discount])
    con.close()


BIG_CUSTOMERS = ("SELECT o.o_custkey, count(*) FROM orders o JOIN lineitem l ON l.l_orderkey = o.o_orderkey "
                 "GROUP BY o.o_custkey HAVING count(*) >= 10")
TOP_QTY = "SELECT l_orderkey, max(l_qty) FROM lineitem GROUP BY l_orderkey"
DISCOUNTED = "SELECT l_orderkey, count(l_discount) FROM lineitem WHERE l_orderkey > 3 GROUP BY l_orderkey"
GOLDS = [BIG_CUSTOMERS, TOP_QTY, DISCOUNTED]
COINCIDENCES = [
    (BIG_CUSTOMERS, BIG_CUSTOMERS.replace(">= 10", ">= 11")),
    (BIG_CUSTOMERS, BIG_CUSTOMERS.replace(">= 10", "> 10")),
    (TOP_QTY, TOP_QTY.replace("max(", "min(")),
    (DISCOUNTED, DISCOUNTED.replace("count(l_discount)", "count(*)")),
]
EQUIVALENTS = [
    (BIG_CUSTOMERS, BIG_CUSTOMERS.replace("count(*) >= 10", "NOT count(l.l_linenumber) < 10")),
    (BIG_CUSTOMERS, BIG_CUSTOMERS.replace("count(*) >= 10", "count(*) > 9")),
    (TOP_QTY, "SELECT l_orderkey, max(l_qty) FROM lineitem GROUP BY 1"),
    (DISCOUNTED, DISCOUNTED.replace("count(l_discount)", "sum(CASE WHEN l_discount IS NULL THEN 0 ELSE 1 END)")),
]


def test_a_keyless_fact_table_gets_a_row_identity(tmp_path: Path) -> None:
    path = tmp_path / "lines.duckdb"
    make_lines(path)
    c = observe_constraints(path)
    lines = c.tables["main.lineitem"]
    assert not lines.primary_key and not lines.observed_unique and not lines.duplicate_rows
    con = duckdb.connect(str(path), read_only=True)
    assert row_identity(con, "duckdb", lines, c.dependencies) == Identity("l_orderkey", "l_linenumber", True, 7)
    con.close()
    kinds = {w.kind for w in group_witnesses(GOLDS, "duckdb", c.tables, c.dependencies)}
    assert {"count", "copy", "spread", "null"} <= kinds


def test_group_witnesses_catch_what_no_pinned_row_shows(tmp_path: Path) -> None:
    path = tmp_path / "lines.duckdb"
    make_lines(path)
    with Grader(path, cache_dir=tmp_path / "plain") as plain:
        for gold, wrong in COINCIDENCES + EQUIVALENTS:
            assert plain.compare(wrong, gold).passed, wrong
    with Grader(path, cache_dir=tmp_path / "cache", variants=4, variant_golds=GOLDS) as graded:
        verdicts = [(wrong, graded.compare(wrong, gold)) for gold, wrong in COINCIDENCES]
        rights = [(right, graded.compare(right, gold)) for gold, right in EQUIVALENTS]
    for wrong, v in verdicts:
        assert (v.passed, v.failure_kind) == (False, "coincidental_pass"), (wrong, v.explanation)
    for right, v in rights:
        assert v.passed, (right, v.explanation)
    for variant in sorted((tmp_path / "cache").rglob("variant-*.duckdb")):
        con = duckdb.connect(str(variant), read_only=True)
        assert scalar(con, "SELECT count(*) FROM (SELECT 1 FROM lineitem GROUP BY l_orderkey, l_linenumber "
                           "HAVING count(*) > 1)") == 0  # no line duplicated
        assert scalar(con, "SELECT max(l_linenumber) FROM lineitem") <= 7  # a code domain kept
        assert scalar(con, "SELECT count(*) FROM lineitem WHERE l_orderkey NOT IN "
                           "(SELECT o_orderkey FROM orders)") == 0
        con.close()


def make_events(path: Path) -> None:
    """SQLite, timestamps as ISO text, all in 2023, two events at each (no key: a free column)."""
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE event (id INTEGER PRIMARY KEY, ts TEXT NOT NULL, kind TEXT NOT NULL)")
    con.executemany("INSERT INTO event VALUES (?, datetime('2023-01-01 08:00:00', ?), ?)",
                    [(i, f"+{(i // 2) * 7} hours", "ab"[i % 2]) for i in range(300)])
    con.commit()
    con.close()


EVENTS = "SELECT kind, count(*) FROM event WHERE ts < '2024-01-01 00:00:00' GROUP BY kind"


def test_an_upper_time_bound_past_the_last_pinned_timestamp_is_caught(tmp_path: Path) -> None:
    path = tmp_path / "events.sqlite"
    make_events(path)
    wrong = EVENTS.replace(" WHERE ts < '2024-01-01 00:00:00'", "")
    right = EVENTS.replace("ts < '2024-01-01 00:00:00'", "NOT ts >= '2024-01-01 00:00:00'")
    assert_caught_beside_a_rewrite(path, tmp_path, EVENTS, wrong, right)


def make_payments(path: Path) -> None:
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE payment (id INTEGER PRIMARY KEY, amount DECIMAL(9,2) NOT NULL, size INTEGER NOT NULL)")
    con.execute("INSERT INTO payment SELECT i, 10 + (i // 2 * 37) % 590 + (i // 2 % 100) / 100.0, 1 + i % 50 "
                "FROM range(400) t(i)")  # two payments of each amount: no key, a free column
    con.close()


PAYMENTS = "SELECT count(*), sum(amount) FROM payment WHERE amount < 1000.00 AND size BETWEEN 1 AND 10"


def test_a_bound_past_a_measures_maximum_is_caught_and_a_code_domain_kept(tmp_path: Path) -> None:
    path = tmp_path / "payments.duckdb"
    make_payments(path)
    wrong = PAYMENTS.replace("amount < 1000.00 AND ", "")
    rights = [PAYMENTS.replace("amount < 1000.00", "NOT amount >= 1000.00"),
              PAYMENTS.replace("size BETWEEN 1 AND 10", "size <= 10")]  # sizes start at 1: a code domain
    with Grader(path, cache_dir=tmp_path / "plain") as plain:
        assert plain.compare(wrong, PAYMENTS).passed
    with Grader(path, cache_dir=tmp_path / "cache", variants=4, variant_golds=[PAYMENTS]) as graded:
        verdict = graded.compare(wrong, PAYMENTS)
        kept = [graded.compare(r, PAYMENTS) for r in rights]
    assert (verdict.passed, verdict.failure_kind) == (False, "coincidental_pass"), verdict.explanation
    for v in kept:
        assert v.passed, v.explanation


def make_orders(path: Path) -> None:
    """Six orders whose totals fall as their days rise: ordered by total or by day alike; two
    more, small and last, repeat a total and a day (so neither is a key: both are free); four
    lines each."""
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, total DECIMAL(9,2) NOT NULL, day DATE NOT NULL)")
    con.execute("INSERT INTO orders SELECT i, 1000 - 100 * i + i / 7.0, DATE '2020-01-01' + CAST(10 * i AS INTEGER) "
                "FROM range(1, 7) t(i)")
    con.execute("INSERT INTO orders VALUES (7, 1.00, DATE '2020-03-01'), (8, 1.00, DATE '2020-03-01')")
    con.execute("CREATE TABLE line (order_id INTEGER NOT NULL, n INTEGER NOT NULL, qty INTEGER NOT NULL)")
    con.execute("INSERT INTO line SELECT 1 + i % 8, i // 8, 1 + i % 3 FROM range(32) t(i)")
    con.close()


BIGGEST = ("SELECT o.id, o.total, o.day, count(*) FROM orders o JOIN line l ON l.order_id = o.id "
           "GROUP BY o.id, o.total, o.day ORDER BY o.total DESC, o.day LIMIT 3")


def test_a_dropped_first_sort_key_the_second_orders_alike_is_caught(tmp_path: Path) -> None:
    """Grouped, as TPC-H q18 (no clone orders a grouped gold's rows): an output row's day is
    moved before the previous row's."""
    path = tmp_path / "orders.duckdb"
    make_orders(path)
    wrong = BIGGEST.replace("ORDER BY o.total DESC, o.day", "ORDER BY o.day")
    right = BIGGEST.replace("ORDER BY o.total DESC, o.day", "ORDER BY 2 DESC, 3")
    assert_caught_beside_a_rewrite(path, tmp_path, BIGGEST, wrong, right)


def test_a_pushed_group_and_the_rows_it_joins_are_held(tmp_path: Path) -> None:
    """A group brought to a HAVING bound keeps it only if no later write changes one of its rows
    or a row it joins: a boundary value written over most of a small variant's lines moved
    TPC-H q18's order pushed to a sum of exactly 300 (issue 31), and the push was lost. So the
    writer holds them: the boundary writes pass over every held row."""
    import shutil
    from pytest_sqleval.core.variants.groups import GroupWriter
    path = tmp_path / "lines.duckdb"
    make_lines(path)
    c = observe_constraints(path)
    pushes = [w for w in group_witnesses([BIG_CUSTOMERS], "duckdb", c.tables, c.dependencies) if w.kind == "count"]
    variant = tmp_path / "variant.duckdb"
    shutil.copy(path, variant)
    con = duckdb.connect(str(variant))
    identity = row_identity(con, "duckdb", c.tables["main.lineitem"], c.dependencies)
    writer = GroupWriter(con, "duckdb", c.tables, None, lambda sql, params: con.execute(sql, params).fetchall(),
                         lambda table: identity, lambda table, column, value: True)
    assert writer.write(pushes[0])  # a customer of 8 lines brought to 11
    (customer, lines), = con.execute("SELECT o_custkey, count(*) FROM orders JOIN lineitem ON l_orderkey = o_orderkey "
                                     "GROUP BY o_custkey HAVING count(*) = 11").fetchall()
    group_lines = {r[0] for r in con.execute("SELECT l.rowid FROM lineitem l JOIN orders o ON l_orderkey = o_orderkey "
                                             "WHERE o_custkey = ?", [customer]).fetchall()}
    group_orders = {r[0] for r in con.execute("SELECT rowid FROM orders WHERE o_custkey = ?", [customer]).fetchall()}
    con.close()
    assert lines == 11 and len(group_lines) == 11
    assert group_lines <= writer.rows["main.lineitem"]  # the copies and the lines they joined
    assert group_orders <= writer.rows["main.orders"]  # and the orders on the gold's path
