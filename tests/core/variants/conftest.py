"""What the variants' witness tests share: a database made by a test's own maker, and a
``Grader`` with eight variants over it for the test module."""
from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_sqleval.core.api import Grader


def made(folder: Path, name: str, make: Callable[[Path], None]) -> Path:
    """``folder/<name>.duckdb``, made by ``make``."""
    path = folder / f"{name}.duckdb"
    make(path)
    return path


def graded_with_variants(factory: pytest.TempPathFactory, name: str, make: Callable[[Path], None],
                         gold: str) -> Iterator[tuple[Path, Grader]]:
    """(its folder, a Grader with 8 variants chosen for ``gold``) over a database ``make``
    makes: the body of a module fixture (``yield from``)."""
    folder = factory.mktemp(name)
    path = made(folder, name, make)
    with Grader(path, dialect="duckdb", cache_dir=folder / "cache", variants=8, variant_golds=[gold]) as graded:
        yield folder, graded


def output_rows(path: Path, sql: str) -> int:
    """How many rows ``sql`` returns on the pinned ``path``, its ORDER BY and LIMIT cut off."""
    import duckdb

    from tests.rows import scalar
    con = duckdb.connect(str(path), read_only=True)
    try:
        return int(scalar(con, f"SELECT count(*) FROM ({sql.rsplit(' ORDER BY ', 1)[0]}) AS g"))
    finally:
        con.close()


def assert_limit_move_caught(path: Path, cache: Path, wrong: str, gold: str, golds: list[str]) -> None:
    """``wrong`` (the gold's LIMIT moved by one) passes on the pinned data, whose output is
    shorter than the LIMIT, and is a coincidental pass on a variant grown past it."""
    with Grader(path, dialect="duckdb", cache_dir=cache / "plain") as plain:
        assert plain.compare(wrong, gold).passed  # fewer rows than the LIMIT: n - 1, n and n + 1 agree
    with Grader(path, dialect="duckdb", cache_dir=cache, variants=4, variant_golds=golds) as graded:
        verdict = graded.compare(wrong, gold)
    assert (verdict.passed, verdict.failure_kind) == (False, "coincidental_pass"), verdict.explanation
    assert "new output rows" in verdict.explanation and "past its LIMIT" in verdict.explanation


def assert_caught_beside_a_rewrite(path: Path, folder: Path, gold: str, wrong: str, right: str) -> Any:
    """``wrong`` passes on the pinned ``path``; on four variants chosen for ``gold`` it is a
    coincidental pass and the correct rewrite ``right`` passes. The verdict on ``wrong``."""
    with Grader(path, cache_dir=folder / "plain") as plain:
        assert plain.compare(wrong, gold).passed, wrong  # the coincidence on the pinned database
    with Grader(path, cache_dir=folder / "cache", variants=4, variant_golds=[gold]) as graded:
        verdict = graded.compare(wrong, gold)
        kept = graded.compare(right, gold)
    assert (verdict.passed, verdict.failure_kind) == (False, "coincidental_pass"), verdict.explanation
    assert kept.passed, kept.explanation
    return verdict


def assert_grown_past_limit(con: Any, constraints: Any, pinned: Path, gold: str, rows_before: int,
                            limit: int) -> None:
    """``gold``'s one LIMIT growth takes the variant ``con`` holds from ``rows_before`` output
    rows (its LIMIT left off) past ``limit``; ``con`` is closed."""
    from pytest_sqleval.core.variants.outputs import OutputWriter, output_growths
    from tests.rows import scalar
    growths = output_growths([gold], "duckdb", "duckdb", constraints.tables, constraints.dependencies)
    assert len(growths) == 1
    assert scalar(con, growths[0].count_sql) == rows_before
    writer = OutputWriter(con, "duckdb", constraints, pinned, 0)
    try:
        assert writer.grow(growths[0]), writer.written.tally
        assert scalar(con, growths[0].count_sql) > limit
    finally:
        writer.close()
        con.close()


def assert_passes_on_variants(path: Path, cache: Path, right: str, gold: str, golds: list[str]) -> None:
    """A correct rewrite of ``gold`` passes on every one of four variants."""
    with Grader(path, dialect="duckdb", cache_dir=cache, variants=4, variant_golds=golds) as graded:
        verdict = graded.compare(right, gold)
    assert verdict.passed, verdict.explanation


def assert_caught_on_variants(path: Path, folder: Path, golds: list[str], coincidences: list[tuple[str, str]],
                              equivalents: list[tuple[str, str]],
                              references: tuple[tuple[str, str, str], ...]) -> None:
    """Every (gold, wrong) of ``coincidences`` and (gold, right) of ``equivalents`` passes on
    the pinned ``path``; on four variants each wrong one is a coincidental pass and each right
    one passes; every variant keeps ``store_sales``' tickets unique and its ``references``
    (fact column, table, key) whole."""
    import duckdb
    with Grader(path, cache_dir=folder / "plain") as plain:
        for gold, query in coincidences + equivalents:
            assert plain.compare(query, gold).passed, query
    with Grader(path, cache_dir=folder / "cache", variants=4, variant_golds=golds) as graded:
        verdicts = [(wrong, graded.compare(wrong, gold)) for gold, wrong in coincidences]
        rights = [(right, graded.compare(right, gold)) for gold, right in equivalents]
    missed = [wrong for wrong, v in verdicts if (v.passed, v.failure_kind) != (False, "coincidental_pass")]
    assert not missed, missed
    for right, v in rights:
        assert v.passed, (right, v.explanation)
    for variant in sorted((folder / "cache").rglob("variant-*.duckdb")):
        con = duckdb.connect(str(variant), read_only=True)
        assert con.execute("SELECT count(*) - count(DISTINCT ss_ticket_number) FROM store_sales").fetchone()[0] == 0
        for fk, table, key in references:
            assert con.execute(f"SELECT count(*) FROM store_sales WHERE {fk} NOT IN (SELECT {key} FROM {table})"
                               ).fetchone()[0] == 0
        con.close()


def assert_coincidence_caught(pinned: Path, graded: Grader, wrong: str, gold: str) -> None:
    """``wrong`` passes on the ``pinned`` database that ``graded`` reads, and is a
    coincidental pass with its variants."""
    with Grader(pinned, dialect="duckdb", cache_dir=pinned.parent / "plain") as plain:
        assert plain.compare(wrong, gold).passed, wrong  # a coincidence on the pinned data
    verdict = graded.compare(wrong, gold)
    assert (verdict.passed, verdict.failure_kind) == (False, "coincidental_pass"), (wrong, verdict.explanation)


def assert_rewrites_pass_keeping_rows(folder: Path, graded: Grader, gold: str, equivalents: list[str],
                                      references: tuple[tuple[str, str, str, str], ...],
                                      numbers: tuple[tuple[str, str], ...]) -> None:
    """Every rewrite in ``equivalents`` passes with ``graded``'s variants, and every variant
    keeps its ``references`` (table, column, parent table, parent column) whole and its
    ``numbers`` (table, ticket or order number) unique: the witnesses broke no constraint."""
    import duckdb
    for right in equivalents:
        verdict = graded.compare(right, gold)
        assert verdict.passed, (right, verdict.explanation)
    variants = sorted((folder / "cache").rglob("variant-*.duckdb"))
    assert variants
    for variant in variants:
        con = duckdb.connect(str(variant), read_only=True)
        try:
            for table, column, parent, key in references:
                assert con.execute(f"SELECT count(*) FROM {table} WHERE {column} NOT IN (SELECT {key} FROM {parent})"
                                   ).fetchone() == (0,), (variant.name, table, column)
            for table, number in numbers:
                assert con.execute(f"SELECT count(*) - count(DISTINCT {number}) FROM {table}").fetchone() == (0,)
        finally:
            con.close()
