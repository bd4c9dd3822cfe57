"""Shared pieces of the grader's adversarial suite: the ``traps`` database, whose data is
built so that near-misses coincide with the gold, and a verdict formatter for messages."""
from __future__ import annotations

from pathlib import Path

import duckdb

from pytest_sqleval.core.api import Verdict

# Every row here exists to make one near-miss look right. Comments say which.
TRAPS_SQL = """
-- sum(gross) = sum(net) = 18 over the whole table, but not per team (a: 15 vs 12, b: 3 vs 6)
CREATE TABLE sales (team VARCHAR, gross INTEGER, net INTEGER);
INSERT INTO sales VALUES ('a', 10, 7), ('a', 5, 5), ('b', 3, 6);
-- team c has only NULL bonuses (max is NULL, not 0); nicknames mix NULL and ''
CREATE TABLE staff (id INTEGER, team VARCHAR, bonus DOUBLE, nickname VARCHAR);
INSERT INTO staff VALUES (1, 'a', 100.0, 'ace'), (2, 'a', NULL, NULL), (3, 'b', 50.0, ''),
                         (4, 'c', NULL, 'cee'), (5, 'c', NULL, NULL);
-- floats for the tolerance boundaries (0.0 exercises the absolute one)
CREATE TABLE measures (id INTEGER, v DOUBLE);
INSERT INTO measures VALUES (1, 1.0), (2, 1000.0), (3, 0.0), (4, 123456.789), (5, -42.5), (6, 0.001);
-- non-finite doubles
CREATE TABLE ratios (id INTEGER, r DOUBLE);
INSERT INTO ratios VALUES (1, 'infinity'), (2, 'nan'), (3, 2.5), (4, '-infinity');
-- timestamps at midnight: a date and a timestamp print the same day
CREATE TABLE events (id INTEGER, happened_at TIMESTAMP);
INSERT INTO events VALUES (1, '2025-03-01 00:00:00'), (2, '2025-03-01 00:00:00'), (3, '2025-03-02 00:00:00');
-- three-way tie on 90; 'zed' is stored first so a query without a tiebreaker picks it,
-- while the gold's tiebreaker (name) picks 'bob'
CREATE TABLE scores (name VARCHAR, team VARCHAR, score INTEGER);
INSERT INTO scores VALUES ('zed', 'a', 90), ('amy', 'b', 95), ('bob', 'a', 90), ('cat', 'b', 80),
                          ('dan', 'a', 90), ('eve', 'b', 70);
-- exact numbers whose totals are large: sum(cents) = 1999000 (a HUGEINT in DuckDB), one row
-- left out (id 1, one cent) is off by one, 5e-7 relative: inside a float tolerance
CREATE TABLE ledger (id INTEGER, cents BIGINT, amount DECIMAL(12, 2));
INSERT INTO ledger SELECT i, i, CAST(i AS DECIMAL(12, 2)) * 100000 + 0.01 FROM range(2000) t(i);
-- 2**53 and 1: their sum is the first integer a double cannot hold
CREATE TABLE big (id INTEGER, v BIGINT);
INSERT INTO big VALUES (1, 9007199254740992), (2, 1);
"""


def build_traps(path: Path) -> Path:
    con = duckdb.connect(str(path))
    try:
        for stmt in duckdb.extract_statements(TRAPS_SQL):
            con.execute(stmt)
        con.execute("CHECKPOINT")
    finally:
        con.close()
    return path



def describe(v: Verdict) -> str:
    """A one-line account of a verdict for assertion messages."""
    cmp = v.layers.get("compare") or {}
    return (f"passed={v.passed} class={v.error_class} kind={v.failure_kind} reason={cmp.get('reason')} "
            f"| {v.explanation}")
