"""Witness rows: the assignments a gold's filters give (each bound, one unit past it, each
IN member), which conjuncts stay filters, and, end to end, that a wrong bound in a filter
whose support is one row is caught while a rewrite relying on the column's domain passes."""
from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from pytest_sqleval.core.api import Grader
from pytest_sqleval.core.variants.witnesses import witness_groups
from tests.rows import scalar

COLUMNS = {"main.part": {"id", "size", "brand", "made"}, "main.item": {"id", "part_id", "qty", "mode"}}
KEYS = {("main.part", "id"), ("main.item", "id"), ("main.item", "part_id")}


def groups(sql: str) -> list:
    return witness_groups([sql], "duckdb", COLUMNS, lambda t, c: (t, c) not in KEYS)


def values(group, column: str) -> list[str]:
    return list(dict.fromkeys(v for _, a in group.witnesses for _, c, v in a if c == column))


@pytest.mark.parametrize("where, column, expected", [
    ("size BETWEEN 1 AND 5", "size", ["1", "0", "5", "6"]),
    ("size <= 20 + 10", "size", ["30", "31"]),
    ("size > 3", "size", ["4", "3"]),
    ("size < 3", "size", ["2", "3"]),
    ("made >= DATE '1994-01-01' + INTERVAL '1' YEAR", "made", ["1995-01-01", "1994-12-31"]),
    ("brand IN ('b1', 'b2')", "brand", ["b1", "b2"]),
    ("size = 2.50", "size", ["2.50"]),
])
def test_each_bound_gives_a_value_on_it_and_one_past_it(where: str, column: str, expected: list[str]) -> None:
    (group,) = groups(f"SELECT count(*) FROM part WHERE {where}")
    assert values(group, column) == expected
    assert all("WHERE" not in sql for sql, _ in group.witnesses)  # the one conjunct is written, none is a filter


def test_the_base_assignment_passes_every_conjunct_and_each_other_moves_one_column() -> None:
    (group,) = groups("SELECT sum(qty) FROM item JOIN part p ON p.id = item.part_id "
                      "WHERE p.size BETWEEN 1 AND 5 AND qty >= 10 AND mode = 'AIR'")
    base = dict(((pos, c), v) for pos, c, v in group.witnesses[0][1])
    assert base == {(0, "mode"): "AIR", (0, "qty"): "10", (1, "size"): "1"}
    for _, assignment in group.witnesses[1:]:
        assert sum(dict(((p, c), v) for p, c, v in assignment)[k] != base[k] for k in base) == 1
    assert group.tables == ("main.item", "main.part")
    assert all("p.id = item.part_id" in sql for sql, _ in group.witnesses)  # the join stays


@pytest.mark.parametrize("where, kept", [
    ("id = 5 AND size = 2", "id = 5"),  # a key is never written
    ("upper(brand) = 'B1' AND size = 2", "UPPER(brand) = 'B1'"),  # nor a function of a column
    ("brand > 'm' AND size = 2", "brand > 'm'"),  # nor an ordered comparison of text
])
def test_a_conjunct_that_cannot_be_written_stays_a_filter(where: str, kept: str) -> None:
    (group,) = groups(f"SELECT count(*) FROM part WHERE {where}")
    assert group.witnesses[0][0].endswith(f"WHERE {kept}")
    assert values(group, "size") == ["2"]


def test_each_disjunct_is_its_own_group_and_a_contradiction_none() -> None:
    assert len(groups("SELECT 1 FROM part WHERE (size = 1 AND brand = 'a') OR (size = 3 AND brand = 'b')")) == 2
    assert groups("SELECT 1 FROM part WHERE size > 5 AND size < 3") == []


def make_db(path: Path) -> None:
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE part (id INTEGER PRIMARY KEY, size INTEGER NOT NULL, brand VARCHAR NOT NULL)")
    con.execute("CREATE TABLE item (id INTEGER PRIMARY KEY, part_id INTEGER NOT NULL REFERENCES part(id), "
                "qty INTEGER NOT NULL, mode VARCHAR NOT NULL)")
    con.execute("INSERT INTO part SELECT i, 1 + i % 50, 'b' || (i % 25) FROM range(1, 201) t(i)")
    con.execute("INSERT INTO item SELECT i, 1 + i % 200, 1 + i % 50, CASE i % 4 WHEN 0 THEN 'AIR' WHEN 1 THEN 'RAIL' "
                "WHEN 2 THEN 'SHIP' ELSE 'MAIL' END FROM range(1, 2001) t(i)")
    # the filter below keeps exactly one item, with size 3 and qty 7: no row sits on a bound
    con.execute("UPDATE item SET mode = 'FOB' WHERE mode = 'AIR'")
    con.execute("UPDATE item SET mode = 'AIR', qty = 7 WHERE id = 1000")
    con.execute("UPDATE part SET brand = 'b7', size = 3 WHERE id = (SELECT part_id FROM item WHERE id = 1000)")
    con.execute("UPDATE part SET brand = 'b8' WHERE brand = 'b7' AND id <> (SELECT part_id FROM item WHERE id = 1000)")
    con.close()


GOLD = ("SELECT sum(i.qty) FROM item i JOIN part p ON p.id = i.part_id "
        "WHERE p.brand = 'b7' AND p.size BETWEEN 1 AND 5 AND i.qty >= 5 AND i.qty <= 10 AND i.mode = 'AIR'")


@pytest.mark.parametrize("wrong", [
    GOLD.replace("BETWEEN 1 AND 5", "BETWEEN 1 AND 4"),
    GOLD.replace("i.qty >= 5", "i.qty >= 6"),
    GOLD.replace("i.qty <= 10", "i.qty < 10"),
])
def test_a_wrong_bound_with_a_support_of_one_row_is_caught(tmp_path: Path, wrong: str) -> None:
    make_db(tmp_path / "shop.duckdb")
    with Grader(tmp_path / "shop.duckdb", cache_dir=tmp_path / "cache") as plain:
        assert plain.compare(wrong, GOLD).passed  # the coincidence on the pinned database
    with Grader(tmp_path / "shop.duckdb", cache_dir=tmp_path / "cache", variants=4, variant_golds=[GOLD]) as graded:
        verdict = graded.compare(wrong, GOLD)
        assert (verdict.passed, verdict.failure_kind) == (False, "coincidental_pass")
        # sizes start at 1 on the pinned data, and no variant writes a size below it
        assert graded.compare(GOLD.replace("p.size BETWEEN 1 AND 5", "p.size <= 5"), GOLD).passed
    built = list((tmp_path / "cache").rglob("rows-*/variant-*.duckdb"))  # the variants with the golds' rows
    assert len(built) == 4
    for variant in built:
        con = duckdb.connect(str(variant), read_only=True)
        assert scalar(con, "SELECT min(size) >= 1 AND max(size) <= 50 FROM part")
        assert scalar(con, "SELECT count(*) FROM item WHERE mode NOT IN ('AIR', 'RAIL', 'SHIP', 'MAIL', 'FOB')"
                           ) == 0
        con.close()


def test_a_filter_that_reads_a_written_column_reads_the_value_written() -> None:
    (group,) = groups("SELECT count(*) FROM item WHERE qty >= 5 AND qty < part_id AND mode = 'AIR'")
    assert values(group, "qty") == ["5", "4"]
    assert [sql.rsplit("WHERE ", 1)[1] for sql, _ in group.witnesses] == ["5 < part_id", "4 < part_id"]


def test_a_comparison_with_a_scalar_subquery_is_a_threshold_measured_on_the_variant() -> None:
    (group,) = groups("SELECT count(*) FROM part WHERE brand = 'b1' AND size > (SELECT avg(size) FROM part)")
    sizes = [v for _, a in group.witnesses for _, c, v in a if c == "size"]
    assert [(v.sql, v.to) for v in dict.fromkeys(sizes)] == [("SELECT AVG(size) FROM part", "above"),
                                                            ("SELECT AVG(size) FROM part", "at_or_below")]
    # a column bounded by a constant as well keeps the subquery as a filter, read with the value
    # written; the subquery itself still reads the column
    (group,) = groups("SELECT count(*) FROM part WHERE size > 2 AND size > (SELECT avg(size) FROM part)")
    assert values(group, "size") == ["3", "2"]
    assert [sql.rsplit("WHERE ", 1)[1] for sql, _ in group.witnesses] == ["3 > (SELECT AVG(size) FROM part)",
                                                                         "2 > (SELECT AVG(size) FROM part)"]


@pytest.mark.parametrize("measured, to, ctype, expected", [
    ("550", "above", "DECIMAL(10,2)", "550.01"), ("546.6666", "at_or_below", "DECIMAL(10,2)", "546.66"),
    ("550", "below", "DECIMAL(10,2)", "549.99"), ("546.6666", "above", "DECIMAL(10,2)", "546.67"),
    ("546.6666", "at", "DECIMAL(10,2)", None), ("550", "at", "DECIMAL(10,2)", "550.00"),
    ("546.6666", "above", "INTEGER", "547"), ("546.6666", "at_or_above", "BIGINT", "547"),
    ("546.6666", "below", "INTEGER", "546"), ("2.5", "above", "DOUBLE", "2.5000000025"),
    ("2.5", "above", "VARCHAR", None),
])
def test_a_threshold_lies_one_unit_of_the_column_past_the_measured_value(measured, to, ctype, expected) -> None:
    from decimal import Decimal

    from pytest_sqleval.core.variants.boundaries import on_grid
    assert on_grid(Decimal(measured), to, ctype) == on_grid(float(measured), to, ctype) == expected
    assert on_grid(None, to, ctype) is None


THRESHOLD_GOLD = "SELECT count(*) FROM account WHERE balance > (SELECT avg(balance) FROM account WHERE region IN ('n', 's'))"


@pytest.mark.parametrize("wrong", [
    THRESHOLD_GOLD.replace("('n', 's')", "('n', 's', 'e')"),  # the average moves 550 -> 546.67: no balance between
    THRESHOLD_GOLD.replace(" WHERE region IN ('n', 's')", ""),  # 550 -> 560: none between either
])
def test_a_wrong_subquery_whose_threshold_moves_between_the_rows_is_caught(tmp_path: Path, wrong: str) -> None:
    con = duckdb.connect(str(tmp_path / "bank.duckdb"))
    con.execute("CREATE TABLE account (id INTEGER PRIMARY KEY, region VARCHAR NOT NULL, balance DECIMAL(10,2) NOT NULL)")
    con.execute("INSERT INTO account SELECT i, ['n', 's', 'e', 'w'][1 + i % 4], "
                "100 * (1 + (i * 7) % 10) + CASE WHEN i % 4 = 2 THEN 40 ELSE 0 END FROM range(1, 401) t(i)")
    con.close()
    with Grader(tmp_path / "bank.duckdb", cache_dir=tmp_path / "cache") as plain:
        assert plain.compare(wrong, THRESHOLD_GOLD).passed  # the coincidence on the pinned database
    # a caller's own read-only connection to the pinned file stays open while the variants are
    # built: the builder must not open that file with another configuration (DuckDB refuses it)
    mine = duckdb.connect(str(tmp_path / "bank.duckdb"), read_only=True)
    with mine, Grader(tmp_path / "bank.duckdb", cache_dir=tmp_path / "cache", variants=2,
                      variant_golds=[THRESHOLD_GOLD]) as graded:
        verdict = graded.compare(wrong, THRESHOLD_GOLD)
        assert (verdict.passed, verdict.failure_kind) == (False, "coincidental_pass")
        assert graded.compare(THRESHOLD_GOLD.replace("region IN ('n', 's')", "(region = 's' OR region = 'n')"),
                              THRESHOLD_GOLD).passed
