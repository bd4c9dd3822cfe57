"""Unit and property tests of ``variants.mutants``: the near-misses of a gold query that
distillation uses to choose database variants. Exact mutants for each kind (sqlglot's
duckdb rendering), changes known to be result-neutral left out, and over every Vantage
gold and the TPC-H queries of tests/tpch/cases.json: each mutant parses, differs from the
gold, is unique; the list is deterministic, within the limit, and spread round-robin
across kinds. Odd input never raises."""
from __future__ import annotations

import json
import sqlite3
from collections import Counter
from pathlib import Path

import pytest
import sqlglot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_sqleval.core.variants.mutants import MUTATION_KINDS, Mutant, mutants

ROOT = Path(__file__).resolve().parents[3]
VANTAGE = [json.loads(line)["gold_sql"]
           for line in (ROOT / "cases/vantage/questions.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
# the 22 official queries need the built database; cases.json embeds a rewrite (or, failing
# one, a near-miss) of 21 of them: every rewrite and the first case of each query number stand in
_TPCH_CASES = json.loads((ROOT / "tests/tpch/cases.json").read_text(encoding="utf-8"))
TPCH = list(dict.fromkeys([c["sql"] for c in _TPCH_CASES if c["kind"] == "rewrite"]
                          + [next(c["sql"] for c in _TPCH_CASES if c["query_nr"] == n)
                             for n in sorted({c["query_nr"] for c in _TPCH_CASES})]))


def sqls(gold: str, kind: str, dialect: str = "duckdb") -> list[str]:
    return [m.sql for m in mutants(gold, dialect, limit=1000) if m.kind == kind]


@pytest.mark.parametrize(("gold", "kind", "expected"), [
    pytest.param("SELECT a FROM t WHERE b >= 100", "literal",
                 ["SELECT a FROM t WHERE b >= 101", "SELECT a FROM t WHERE b >= 99"], id="integer"),
    pytest.param("SELECT a FROM t WHERE p < 0.05", "literal",
                 ["SELECT a FROM t WHERE p < 0.0505", "SELECT a FROM t WHERE p < 0.0495"], id="decimal"),
    pytest.param("SELECT a FROM t WHERE p < 100.00", "literal",
                 ["SELECT a FROM t WHERE p < 101.00", "SELECT a FROM t WHERE p < 99.00"], id="decimal-scale-kept"),
    pytest.param("SELECT a FROM t WHERE d >= DATE '2024-02-28'", "literal",
                 ["SELECT a FROM t WHERE d >= CAST('2024-02-29' AS DATE)",
                  "SELECT a FROM t WHERE d >= CAST('2024-02-27' AS DATE)"], id="date"),
    pytest.param("SELECT a FROM t WHERE s = 'x' AND u IN ('y')", "literal",
                 ["SELECT a FROM t WHERE s = 'y' AND u IN ('y')", "SELECT a FROM t WHERE s = 'x' AND u IN ('x')"],
                 id="string-from-the-same-query"),
    pytest.param("SELECT a FROM t WHERE s = 'x'", "literal", [], id="lone-string-skipped"),
    pytest.param("SELECT a FROM t ORDER BY 1 LIMIT 5", "literal", [], id="positions-and-limits-are-not-literals"),
    pytest.param("SELECT a FROM t WHERE b >= 100", "comparison", ["SELECT a FROM t WHERE b > 100"], id="gte"),
    pytest.param("SELECT a FROM t WHERE b = 1 OR c <> 2", "comparison",
                 ["SELECT a FROM t WHERE b <> 1 OR c <> 2", "SELECT a FROM t WHERE b = 1 OR c = 2"], id="eq-neq"),
    pytest.param("SELECT a FROM t WHERE b >= 100", "drop_predicate", ["SELECT a FROM t"], id="single-where"),
    pytest.param("SELECT a FROM t WHERE b > 1 AND (c = 2 OR d = 3)", "drop_predicate",
                 ["SELECT a FROM t WHERE (c = 2 OR d = 3)", "SELECT a FROM t WHERE b > 1"], id="conjuncts"),
    pytest.param("SELECT a, COUNT(*) FROM t GROUP BY a HAVING COUNT(*) > 2", "drop_predicate",
                 ["SELECT a, COUNT(*) FROM t GROUP BY a"], id="having"),
    pytest.param("SELECT a FROM t JOIN u ON t.id = u.id AND u.k = 1", "drop_join_condition",
                 ["SELECT a FROM t JOIN u ON u.k = 1", "SELECT a FROM t JOIN u ON t.id = u.id"], id="on"),
    pytest.param("SELECT a FROM t JOIN u ON t.id = u.id", "drop_join_condition", [], id="only-condition-kept"),
    pytest.param("SELECT a FROM t JOIN u USING (x, y)", "drop_join_condition",
                 ["SELECT a FROM t JOIN u USING (y)", "SELECT a FROM t JOIN u USING (x)"], id="using"),
    pytest.param("SELECT a FROM t JOIN u ON t.id = u.id LEFT OUTER JOIN v ON v.id = u.id", "join_type",
                 ["SELECT a FROM t LEFT JOIN u ON t.id = u.id LEFT OUTER JOIN v ON v.id = u.id",
                  "SELECT a FROM t JOIN u ON t.id = u.id JOIN v ON v.id = u.id"], id="inner-left"),
    pytest.param("SELECT a FROM t, u CROSS JOIN v", "join_type", [], id="no-condition-no-outer-form"),
    pytest.param("SELECT SUM(x), COUNT(y), MIN(z), COUNT(*) FROM t", "aggregate",
                 ["SELECT AVG(x), COUNT(y), MIN(z), COUNT(*) FROM t",
                  "SELECT SUM(x), COUNT(DISTINCT y), MIN(z), COUNT(*) FROM t",
                  "SELECT SUM(x), COUNT(y), MAX(z), COUNT(*) FROM t"], id="aggregates"),
    pytest.param("SELECT a, b FROM t", "distinct", ["SELECT DISTINCT a, b FROM t"], id="add-distinct"),
    pytest.param("SELECT DISTINCT a FROM t", "distinct", ["SELECT a FROM t"], id="remove-distinct"),
    pytest.param("SELECT a FROM t WHERE a IN (SELECT b FROM u)", "distinct", ["SELECT DISTINCT a FROM t WHERE a IN (SELECT b FROM u)"],
                 id="not-in-an-in-subquery"),
    pytest.param("SELECT COUNT(*) FROM t", "distinct", [], id="not-on-one-row"),
    pytest.param("SELECT a, COUNT(*) FROM t GROUP BY a", "distinct", [], id="not-on-unique-groups"),
    pytest.param("SELECT a FROM t ORDER BY b", "distinct", [], id="not-when-ordered-by-a-hidden-column"),
    pytest.param("SELECT a FROM t ORDER BY a DESC LIMIT 3", "order_by",
                 ["SELECT a FROM t ORDER BY a ASC LIMIT 3", "SELECT a FROM t LIMIT 3"], id="flip-and-drop"),
    pytest.param("SELECT a FROM (SELECT a FROM t ORDER BY a) AS s", "order_by", [], id="not-in-an-unlimited-subquery"),
    pytest.param("SELECT a FROM t ORDER BY a DESC LIMIT 3", "limit",
                 ["SELECT a FROM t ORDER BY a DESC LIMIT 4", "SELECT a FROM t ORDER BY a DESC LIMIT 2"], id="limit"),
    pytest.param("SELECT a FROM t ORDER BY a LIMIT 1", "limit", ["SELECT a FROM t ORDER BY a LIMIT 2"], id="limit-1"),
    pytest.param("SELECT a, b FROM t", "column_swap", ["SELECT b, a FROM t"], id="swap"),
    pytest.param("SELECT d, COUNT(*) FROM t GROUP BY 1 ORDER BY 1", "column_swap",
                 ["SELECT COUNT(*), d FROM t GROUP BY 2 ORDER BY 2"], id="positions-follow"),
    pytest.param("WITH c AS (SELECT SUM(x) AS s, AVG(x) AS m FROM t) SELECT s FROM c", "column_swap",
                 ["WITH c AS (SELECT AVG(x) AS s, SUM(x) AS m FROM t) SELECT s FROM c"], id="inner-names-kept"),
])
def test_exact_mutants(gold: str, kind: str, expected: list[str]) -> None:
    assert sqls(gold, kind) == expected


def test_mutations_reach_ctes_subqueries_set_operations_and_having() -> None:
    gold = ("WITH c AS (SELECT a FROM t WHERE b > 1) SELECT a FROM c WHERE a IN (SELECT x FROM u WHERE y < 7) "
            "UNION ALL SELECT a FROM v GROUP BY a HAVING COUNT(*) >= 3")
    got = {m.sql for m in mutants(gold, "duckdb", limit=1000)}
    for fragment in ["b > 2", "y < 8", "COUNT(*) >= 4", "b >= 1", "y <= 7", "COUNT(*) > 3"]:
        assert any(fragment in sql for sql in got), fragment


def test_detail_says_what_changed() -> None:
    by_kind: dict[str, Mutant] = {}
    for m in mutants("SELECT o.id FROM orders AS o WHERE o.amount >= 100", "duckdb"):
        by_kind.setdefault(m.kind, m)
    assert by_kind["comparison"].detail == "'>=' -> '>' in WHERE o.amount >= 100"
    assert by_kind["literal"].detail == "100 -> 101 in WHERE o.amount >= 100"


@pytest.mark.parametrize("gold", ["", "   ", "SELEC 1", "SELECT 1; SELECT 2", "SELECT * FROM t WHERE (",
                                  "SELECT " + "(" * 3000 + "1" + ")" * 3000])
def test_odd_gold_gives_nothing(gold: str) -> None:
    assert mutants(gold, "duckdb") == []


def test_limit_and_dialect_arguments() -> None:
    assert mutants("SELECT a FROM t WHERE b = 1", "duckdb", limit=0) == []
    assert len(mutants("SELECT a FROM t WHERE b = 1", "duckdb", limit=1)) == 1
    with pytest.raises(ValueError):
        mutants("SELECT 1", "no-such-dialect")


def test_sqlite_spider_style_query_runs_on_sqlite() -> None:
    gold = ("SELECT T1.name, count(*) FROM singer AS T1 JOIN singer_in_concert AS T2 ON T1.singer_id = T2.singer_id "
            "WHERE T2.year > 2014 AND T1.country = 'France' GROUP BY T1.name HAVING count(*) >= 2 "
            "ORDER BY T1.name DESC LIMIT 3")
    got = mutants(gold, "sqlite")
    assert {"literal", "comparison", "drop_predicate", "join_type", "order_by", "limit", "column_swap"} <= {
        m.kind for m in got}
    con = sqlite3.connect(":memory:")
    con.executescript("CREATE TABLE singer (singer_id INTEGER, name TEXT, country TEXT);"
                      "CREATE TABLE singer_in_concert (singer_id INTEGER, concert_id INTEGER, year INTEGER);")
    for m in got:
        sqlglot.parse_one(m.sql, read="sqlite")
        con.execute(m.sql).fetchall()  # every mutant is SQL SQLite runs


def check_invariants(gold: str, dialect: str = "duckdb") -> list[Mutant]:
    full = mutants(gold, dialect)
    assert len(full) <= 40
    rendered = sqlglot.parse_one(gold, read=dialect).sql(dialect=dialect)
    assert all(m.sql != rendered for m in full)
    assert len({m.sql for m in full}) == len(full)
    assert all(m.kind in MUTATION_KINDS and m.detail for m in full)
    for m in full:
        sqlglot.parse_one(m.sql, read=dialect)
    # deterministic, and a smaller limit is a prefix of the same round-robin
    short = mutants(gold, dialect, limit=10)
    assert short == full[:10]
    # round-robin: no kind holds more than one above a kind that still had mutants to give
    have, gave = Counter(m.kind for m in short), Counter(m.kind for m in full)
    for kind in have:
        for other in MUTATION_KINDS:
            if gave[other] > have[other]:
                assert have[kind] <= have[other] + 1, (kind, other, have)
    return full


@pytest.mark.parametrize("gold", VANTAGE, ids=[f"vantage-{i + 1:02d}" for i in range(len(VANTAGE))])
def test_every_vantage_gold(gold: str) -> None:
    got = check_invariants(gold)
    assert got and mutants(gold, "duckdb") == got


def test_every_tpch_query() -> None:
    assert len(TPCH) >= 30  # 21 query numbers are covered by cases.json
    kinds: Counter[str] = Counter()
    for gold in TPCH:
        kinds.update(m.kind for m in check_invariants(gold))
    assert set(kinds) == set(MUTATION_KINDS)


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=120))
def test_arbitrary_text_never_raises(text: str) -> None:
    assert isinstance(mutants(text, "duckdb"), list)


_PRED = st.tuples(st.sampled_from(["a", "b", "t.c"]), st.sampled_from(["=", "<>", "<", "<=", ">", ">="]),
                  st.one_of(st.integers(-5, 500).map(str), st.sampled_from(["'x'", "'y'", "0.25", "DATE '2024-01-31'"]))
                  ).map(" ".join)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(preds=st.lists(_PRED, min_size=0, max_size=4), join=st.sampled_from(["", " JOIN u ON u.id = t.id",
                                                                              " LEFT JOIN u ON u.id = t.id AND u.k = 1"]),
       agg=st.sampled_from(["a, b", "a, SUM(b)", "DISTINCT a", "COUNT(DISTINCT a), MAX(b)"]),
       tail=st.sampled_from(["", " ORDER BY 1", " ORDER BY 1 DESC LIMIT 5"]),
       dialect=st.sampled_from(["duckdb", "sqlite", "postgres"]))
def test_generated_queries_keep_the_invariants(preds: list[str], join: str, agg: str, tail: str, dialect: str) -> None:
    where = f" WHERE {' AND '.join(preds)}" if preds else ""
    group = " GROUP BY a" if "SUM" in agg else ""
    check_invariants(f"SELECT {agg} FROM t{join}{where}{group}{tail}", dialect)
