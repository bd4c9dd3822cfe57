"""Re-verify tests/tpch/cases.json against the TPC-H database, independently of the plugin.

What it is for: cases.json holds hand-written *rewrites* of official TPC-H queries that
must grade as pass and *mutants* that must grade as fail. This script proves each claim
at the pinned scale factor by executing gold and case SQL with the running DuckDB (2.x)
on a read-only connection and comparing the results with a small checker written here,
following DESIGN.md "Comparison contract":

- columns by position, names ignored, arity must match;
- rows as a multiset; when the gold has a top-level ORDER BY the rows are compared in
  order, except that rows tied on the gold's sort keys compare as a bag within their
  tie group (sort keys per query are listed in ORDER_KEYS below, read off the 22 queries);
- numbers numerically, equal within 1e-6 relative or 1e-9 absolute; dates by ISO value;
  a string never equals a number; NULL equals NULL and nothing else.

A rewrite is good when it equals the gold under that contract (and keeps an ORDER BY
when the gold is ordered and has more than one row). A mutant is good when it runs and
differs from the gold under that contract (hence also exactly). It also checks each gold:
non-empty, not degenerate (every cell NULL), sorted as ORDER_KEYS claims, and whether
a LIMIT cuts through a tie group (a nondeterministic gold). Such golds are reported, and
are fatal only if a case uses that query.

It imports nothing from pytest_sqleval. Exit status 0 when every case holds, 1 otherwise.

    .venv/bin/python tests/tpch/verify_cases.py                    # builds/reuses the DB
    .venv/bin/python tests/tpch/verify_cases.py --db X.duckdb --queries X.queries.json
"""

from __future__ import annotations

import argparse
import datetime as dt
import decimal
import json
import math
import re
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, Sequence

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import make_tpch  # noqa: E402  (stdlib-only sibling script)

REL_TOL, ABS_TOL = 1e-6, 1e-9

# Top-level ORDER BY of each official query as (output column index, descending).
# None: no top-level ORDER BY (single-row aggregates), compared as a bag.
ORDER_KEYS: dict[int, list[tuple[int, bool]] | None] = {
    1: [(0, False), (1, False)],
    2: [(0, True), (2, False), (1, False), (3, False)],
    3: [(1, True), (2, False)],
    4: [(0, False)],
    5: [(1, True)],
    6: None,
    7: [(0, False), (1, False), (2, False)],
    8: [(0, False)],
    9: [(0, False), (1, True)],
    10: [(2, True)],
    11: [(1, True)],
    12: [(0, False)],
    13: [(1, True), (0, True)],
    14: None,
    15: [(0, False)],
    16: [(3, True), (0, False), (1, False), (2, False)],
    17: None,
    18: [(4, True), (3, False)],
    19: None,
    20: [(0, False)],
    21: [(1, True), (0, False)],
    22: [(0, False)],
}
LIMIT_RE = re.compile(r"\bLIMIT\s+(\d+)\s*;?\s*$", re.IGNORECASE)
CASE_KEYS = {"query_nr", "kind", "name", "sql", "why"}


# ----------------------------------------------------------------------------- values
def norm(v: Any) -> tuple:
    """A tagged, comparable form of one cell: numbers as float, dates as ISO text."""
    if v is None:
        return ("null",)
    if isinstance(v, bool):
        return ("bool", v)
    if isinstance(v, (int, float, decimal.Decimal)):
        return ("num", float(v))
    if isinstance(v, (dt.date, dt.datetime, dt.time)):
        return ("temporal", v.isoformat())
    if isinstance(v, str):
        return ("str", v)
    return ("other", repr(v))


def cell_eq(a: tuple, b: tuple) -> bool:
    if a[0] != b[0]:
        return False
    if a[0] == "num":
        return math.isclose(a[1], b[1], rel_tol=REL_TOL, abs_tol=ABS_TOL)
    return a == b


def row_eq(a: Sequence[tuple], b: Sequence[tuple]) -> bool:
    return len(a) == len(b) and all(cell_eq(x, y) for x, y in zip(a, b))


def _coarse(row: Sequence[tuple]) -> tuple:
    """Sort key that puts tolerance-equal rows next to each other (6 significant digits)."""
    out = []
    for c in row:
        if c[0] == "num":
            out.append(("num", float(f"{c[1]:.6g}")))
        else:
            out.append((c[0], str(c[1:])))
    return tuple(out)


def bag_eq(a: list, b: list) -> bool:
    if len(a) != len(b):
        return False
    if Counter(map(tuple, a)) == Counter(map(tuple, b)):  # fast path: exact
        return True
    pool = sorted(b, key=_coarse)
    used = [False] * len(pool)
    for row in sorted(a, key=_coarse):
        for i, cand in enumerate(pool):
            if not used[i] and row_eq(row, cand):
                used[i] = True
                break
        else:
            return False
    return True


def tie_groups(rows: list, keys: list[tuple[int, bool]]) -> list[int]:
    """Sizes of runs of consecutive gold rows equal on the sort keys."""
    sizes: list[int] = []
    prev = object()
    for r in rows:
        k = tuple(r[i] for i, _ in keys)
        if sizes and k == prev:
            sizes[-1] += 1
        else:
            sizes.append(1)
        prev = k
    return sizes


def compare(gold: list, pred: list, keys: list[tuple[int, bool]] | None) -> tuple[bool, str]:
    """(equal, reason) under the comparison contract; gold/pred are lists of normalised rows."""
    if gold and pred and len(gold[0]) != len(pred[0]):
        return False, f"arity {len(gold[0])}->{len(pred[0])}"
    if len(gold) != len(pred):
        return False, f"rows {len(gold)}->{len(pred)}"
    if not bag_eq(gold, pred):
        return False, "values"
    if keys:
        start = 0
        for size in tie_groups(gold, keys):
            if not bag_eq(gold[start:start + size], pred[start:start + size]):
                return False, "order"
            start += size
    if gold == pred:
        return True, "equal:exact"
    if keys and all(row_eq(a, b) for a, b in zip(gold, pred)):
        return True, "equal:tolerance"
    if keys:
        return True, "equal:tie-order"
    same_bag = Counter(map(tuple, gold)) == Counter(map(tuple, pred))
    return True, "equal:row-order" if same_bag else "equal:tolerance"


def sorted_by(rows: list, keys: list[tuple[int, bool]]) -> bool:
    for a, b in zip(rows, rows[1:]):
        for i, desc in keys:
            x, y = a[i][1:], b[i][1:]
            if x == y:
                continue
            if (x > y) != desc:
                return False
            break
    return True


def self_test() -> None:
    """The checker's own contract points, so a bug here cannot bless a bad case."""
    n = lambda *vs: tuple(norm(v) for v in vs)  # noqa: E731
    k = [(0, False)]
    assert compare([n(1, 2.0)], [n(1.0, decimal.Decimal("2.00"))], None)[0]          # 1 = 1.0 = 1.00
    assert compare([n(1, 1e6)], [n(1, 1e6 + 0.5)], None)[0]                          # within 1e-6 rel
    assert not compare([n(1, 1e6)], [n(1, 1e6 + 2)], None)[0]                        # beyond it
    assert compare([n(1, 0.0)], [n(1, 1e-10)], None)[0]                              # 1e-9 abs
    assert not compare([n(None)], [n(0)], None)[0] and not compare([n(None)], [n("")], None)[0]
    assert compare([n(None)], [n(None)], None)[0]                                    # NULL = NULL
    assert not compare([n("1")], [n(1)], None)[0]                                    # str != number
    assert compare([n(dt.date(1995, 1, 2))], [n(dt.date(1995, 1, 2))], None)[0]
    assert not compare([n(1, "a")], [n(1, "a", 3)], None)[0]                         # arity
    assert not compare([n(1), n(1)], [n(1)], None)[0]                                # multiset count
    assert compare([n(1, "a"), n(2, "b")], [n(2, "b"), n(1, "a")], None)[0]          # unordered bag
    assert not compare([n(1, "a"), n(2, "b")], [n(2, "b"), n(1, "a")], k)[0]         # ordered
    assert compare([n(1, "a"), n(1, "b"), n(2, "c")], [n(1, "b"), n(1, "a"), n(2, "c")], k)[0]  # tie group
    assert not compare([n(1, "a"), n(2, "b"), n(2, "c")], [n(2, "b"), n(1, "a"), n(2, "c")], k)[0]


# ----------------------------------------------------------------------------- running
def run(con: Any, sql: str) -> tuple[list | None, str | None, float]:
    started = time.monotonic()
    cur = con.cursor()
    try:
        raw = cur.execute(sql).fetchall()
    except Exception as exc:  # any engine error is a finding, not a crash
        return None, f"{type(exc).__name__}: {str(exc).splitlines()[0]}", time.monotonic() - started
    finally:
        cur.close()
    return [tuple(norm(v) for v in r) for r in raw], None, time.monotonic() - started


def check_golds(con: Any, queries: dict[int, str]) -> tuple[dict[int, list], dict[int, str], list[str]]:
    golds: dict[int, list] = {}
    notes: dict[int, str] = {}
    problems: list[str] = []
    print(f"{'gold':<6} {'rows':>5} {'tie groups>1':>12}  note")
    for nr in sorted(queries):
        sql = queries[nr]
        rows, err, _ = run(con, sql)
        keys = ORDER_KEYS[nr]
        note = ""
        if err or rows is None:
            problems.append(f"Q{nr} gold fails: {err}")
            print(f"Q{nr:<5} {'ERR':>5}  {err}")
            continue
        golds[nr] = rows
        if not rows:
            problems.append(f"Q{nr} gold is empty at this scale factor")
        elif all(c == ("null",) for r in rows for c in r):
            note = "DEGENERATE: every cell is NULL at this scale factor"
            notes[nr] = note
        ties = 0
        if keys:
            if not sorted_by(rows, keys):
                problems.append(f"Q{nr} gold is not sorted as ORDER_KEYS says")
            ties = sum(1 for s in tie_groups(rows, keys) if s > 1)
        m = LIMIT_RE.search(sql.strip())
        if m:
            limit = int(m.group(1))
            full, err2, _ = run(con, sql.strip()[: m.start()])
            if full is None:
                problems.append(f"Q{nr} gold without LIMIT fails: {err2}")
            elif len(full) > limit and keys:
                last = tuple(full[limit - 1][i] for i, _ in keys)
                nxt = tuple(full[limit][i] for i, _ in keys)
                if last == nxt:
                    note = f"NONDETERMINISTIC: LIMIT {limit} cuts a tie group"
                    notes[nr] = note
                else:
                    note = f"LIMIT {limit} of {len(full)}: cut is clean"
            else:
                note = f"LIMIT {limit} >= {len(full if full else [])} rows: no cut"
            if nr in notes:
                note = notes[nr]
        if keys and ties:
            note = (note + "; " if note else "") + "order ties inside result (bag within group)"
        print(f"Q{nr:<5} {len(rows):>5} {ties:>12}  {note}")
    return golds, notes, problems


def check_cases(con: Any, cases: list[dict], queries: dict[int, str], golds: dict[int, list],
                unusable: dict[int, str], verbose: bool) -> list[str]:
    problems: list[str] = []
    names = Counter(c.get("name") for c in cases)
    print()
    print(f"{'#':>3} {'Q':>3} {'kind':<8} {'name':<40} {'rows':>5} {'verdict':<16} {'ms':>6}  ok")
    for idx, case in enumerate(cases, 1):
        bad: list[str] = []
        if set(case) != CASE_KEYS:
            bad.append(f"keys {sorted(case)} != {sorted(CASE_KEYS)}")
        nr, kind, name, sql = case.get("query_nr"), case.get("kind"), case.get("name"), case.get("sql", "")
        if names[name] > 1:
            bad.append("duplicate name")
        if kind not in ("rewrite", "mutant"):
            bad.append(f"bad kind {kind!r}")
        if nr not in golds:
            bad.append(f"no gold for query_nr {nr!r}")
        if not re.match(r"^\s*(SELECT|WITH)\b", sql, re.IGNORECASE):
            bad.append("not a SELECT/WITH statement")
        if sql.strip().rstrip(";").count(";"):
            bad.append("more than one statement")
        if nr in queries and " ".join(sql.split()).rstrip(";") == " ".join(queries[nr].split()).rstrip(";"):
            bad.append("identical to gold")
        if nr in unusable:
            bad.append(f"gold Q{nr} is unusable ({unusable[nr]})")
        rows, err, secs = run(con, sql)
        verdict = "-"
        if err:
            verdict = "ERROR"
            bad.append(err)
        elif nr in golds and rows is not None:
            keys = ORDER_KEYS[nr]
            equal, reason = compare(golds[nr], rows, keys)
            verdict = reason
            if kind == "rewrite":
                if not equal:
                    bad.append(f"rewrite differs from gold: {reason}")
                if keys and len(golds[nr]) > 1 and not re.search(r"\bORDER\s+BY\b", sql, re.IGNORECASE):
                    bad.append("gold is ordered but the rewrite has no ORDER BY")
            elif kind == "mutant":
                exact_same = [tuple(r) for r in rows] == [tuple(r) for r in golds[nr]]
                if equal or exact_same:
                    bad.append("mutant does not change the result")
        ok = "ok" if not bad else "BAD"
        n = len(rows) if rows is not None else "-"
        print(f"{idx:>3} {nr!s:>3} {kind!s:<8} {str(name)[:40]:<40} {n!s:>5} {verdict:<16} {secs * 1000:>6.0f}  {ok}")
        for b in bad:
            print(f"      !! {b}")
            problems.append(f"case {idx} ({name}): {b}")
        if verbose and bad:
            print("      " + sql.replace("\n", "\n      "))
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=Path, default=HERE / "cases.json")
    ap.add_argument("--db", type=Path, default=None, help="database (default: build/reuse via make_tpch)")
    ap.add_argument("--queries", type=Path, default=None, help="queries JSON written by make_tpch")
    ap.add_argument("--sf", type=float, default=0.01)
    ap.add_argument("--cache-dir", type=Path, default=make_tpch.DEFAULT_CACHE)
    ap.add_argument("-v", "--verbose", action="store_true", help="print the SQL of bad cases")
    args = ap.parse_args(argv)

    import duckdb  # the grader's DuckDB (2.x in the project venv)

    self_test()

    if args.db is None:
        cache = args.cache_dir.resolve()
        args.db = cache / f"tpch-sf{args.sf:g}.duckdb"
        args.queries = args.queries or args.db.with_name(args.db.name.removesuffix(".duckdb") + ".queries.json")
        make_tpch.build(args.sf, args.db, args.queries, cache)
    if args.queries is None:
        args.queries = args.db.with_name(args.db.name.removesuffix(".duckdb") + ".queries.json")
    meta = json.loads(args.queries.read_text(encoding="utf-8"))
    queries = {int(q["query_nr"]): q["query"] for q in meta["queries"]}
    cases = json.loads(args.cases.read_text(encoding="utf-8"))

    print(f"database {args.db} (sf={meta.get('scale_factor')}, {meta.get('generator')}) "
          f"read by duckdb {duckdb.__version__}")
    con = duckdb.connect(str(args.db), read_only=True)
    try:
        golds, unusable, problems = check_golds(con, queries)
        problems += check_cases(con, cases, queries, golds, unusable, args.verbose)
    finally:
        con.close()

    kinds = Counter(c.get("kind") for c in cases)
    qs = sorted({c.get("query_nr") for c in cases if isinstance(c.get("query_nr"), int)})
    print()
    print(f"{len(cases)} cases: {kinds['rewrite']} rewrites, {kinds['mutant']} mutants, "
          f"over {len(qs)} queries {qs}")
    if unusable:
        print("unusable golds (no case may use them): "
              + "; ".join(f"Q{k}: {v}" for k, v in sorted(unusable.items())))
    if not cases:
        problems.append(f"{args.cases} holds no case")
    if problems:
        print(f"{len(problems)} problem(s):")
        for p in problems:
            print("  - " + p)
        return 1
    print("all cases verified")
    return 0


if __name__ == "__main__":
    sys.exit(main())
