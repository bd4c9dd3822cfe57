"""Witness queries that do not bind, per gold: every clone witness's ``rows_sql`` of each
gold run once on the pinned database (the package first on PYTHONPATH). A witness whose
query fails is never written, and nothing says so: this counts them.

    PYTHONPATH=<package root> .venv/bin/python bench/witness_sql_bench.py DB QUERIES_JSON [q01 q02 ...]

``QUERIES_JSON``: ``bench/vbench/tpc_data.py``'s ``<db>.queries.json`` (``query_nr``, ``query``).
Prints one line per gold with a failing witness and a total line."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import duckdb

import pytest_sqleval
from pytest_sqleval.core.variants.clones import _salt_of, clone_witnesses
from pytest_sqleval.core.variants.constraints import observe_constraints


def main(argv: list[str]) -> None:
    db, queries, wanted = Path(argv[0]), Path(argv[1]), set(argv[2:])
    print("package", pytest_sqleval.__file__, file=sys.stderr)
    golds = {f"q{q['query_nr']:02}": q["query"] for q in json.loads(queries.read_text())["queries"]}
    con = duckdb.connect(str(db), read_only=True)
    total = failed = 0
    failing: list[str] = []
    for name, gold in sorted(golds.items()):
        if wanted and name not in wanted:
            continue
        c = observe_constraints(db, golds=([gold], "duckdb"))
        errors: dict[str, int] = {}
        witnesses = clone_witnesses([gold], "duckdb", c.tables, list(c.dependencies))
        for w in witnesses:
            try:
                con.execute(w.rows_sql, [_salt_of(0)]).fetchall()
            except duckdb.Error as exc:
                first = str(exc).splitlines()[0][:100]
                errors[first] = errors.get(first, 0) + 1
        total += len(witnesses)
        failed += sum(errors.values())
        if errors:
            failing.append(name)
            print(f"{name}: {sum(errors.values())} of {len(witnesses)} do not bind: {errors}")
    print(f"total: {failed} of {total} witness queries do not bind, in {len(failing)} golds ({' '.join(failing)})")


if __name__ == "__main__":
    main(sys.argv[1:])
