"""The Vantage Retail Group warehouse generator and its suite.

Builds the small scale (0.1) twice per worker: once through the API on one thread and
once through the CLI on all cores. Both must give the hash pinned in MANIFEST.toml; the
rest of the file reads the first build."""
from __future__ import annotations

import datetime
import json
import re
from pathlib import Path

import duckdb
import pytest
import sqlglot
from sqlglot import exp

from pytest_sqleval.products import warehouse
from pytest_sqleval.core.cases import load_manifest, read_cases, split_of
from pytest_sqleval.products.warehouse import (DATABASE_NAME, WarehouseHashMismatch, build_warehouse, check_pin,
                                      pinned_hash, render_schema)
from pytest_sqleval.products.warehouse.spec import SCHEMAS, TABLES
from tests.rows import scalar

SCALE = 0.1
CUTOVER = datetime.date.fromisoformat(warehouse.spec.ERP_CUTOVER)
SUITE = Path(__file__).resolve().parents[3] / "cases" / "vantage"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> warehouse.BuildInfo:
    return build_warehouse(tmp_path_factory.mktemp("vrg") / DATABASE_NAME, SCALE, threads=1)


@pytest.fixture(scope="module")
def con(built: warehouse.BuildInfo):
    c = duckdb.connect(str(built.path), read_only=True)
    yield c
    c.close()


# ------------------------------------------------------------------ determinism and the pin
def test_rebuild_through_the_cli_gives_the_pinned_hash(built, tmp_path: Path, capsys) -> None:
    assert pinned_hash(SCALE) is not None, "scale 0.1 must be pinned in MANIFEST.toml"
    assert warehouse.main(["build", "--scale", str(SCALE), "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    manifest = (tmp_path / "MANIFEST.toml").read_text()
    assert built.content_hash == pinned_hash(SCALE)
    assert f'content_hash = "{built.content_hash}"' in manifest
    assert "matches the pin" in out
    assert {p.name for p in tmp_path.iterdir()} >= {DATABASE_NAME, "schema.sql", "schema_instructor.sql", "MANIFEST.toml"}


def test_default_scale_is_pinned_too() -> None:
    assert re.fullmatch(r"[0-9a-f]{64}", pinned_hash(1.0) or "")


@pytest.mark.parametrize("threads", [1, 16])
def test_the_default_scale_builds_to_its_pin(tmp_path: Path, threads: int) -> None:
    """Scale 1 is what the Quickstart builds; CI runs this file under two DuckDB releases.

    A build uses every core by default, so the pin must not depend on the thread count: a
    row_number() over keys with ties gave finance.gl_entries other ids from 8 threads up."""
    info = build_warehouse(tmp_path / DATABASE_NAME, 1.0, threads=threads)
    assert info.content_hash == pinned_hash(1.0) and info.pinned == info.content_hash


def test_every_pinned_scale_records_the_duckdb_releases_it_was_verified_with() -> None:
    import tomllib
    pins = tomllib.loads(warehouse.PIN_FILE.read_text())
    assert {"2.0.0", "2.0.1"} <= set(pins["verified_duckdb"])
    for scale, entry in pins["scale"].items():
        assert len(entry["objects"]) == 127, scale  # 126 tables and the rest of the catalog


def test_a_hash_mismatch_names_what_differs_and_what_a_user_can_do(built, monkeypatch, tmp_path: Path) -> None:
    import tomllib
    pins = tomllib.loads(warehouse.PIN_FILE.read_text())
    entry = pins["scale"]["0.1"]
    entry["content_hash"] = "0" * 64
    entry["objects"]["finance.gl_entries"] = "0" * 16
    entry["objects"]["hr.payroll"] = "0" * 16
    pins["verified_duckdb"] = ["1.9.9"]
    fake = tmp_path / "MANIFEST.toml"
    fake.write_text(_toml(pins))
    monkeypatch.setattr(warehouse, "PIN_FILE", fake)
    with pytest.raises(WarehouseHashMismatch) as info:
        check_pin(built.path, SCALE, built.content_hash, objects=built.objects, counts=(built.tables, built.rows))
    text = str(info.value)
    assert "0" * 64 in text and built.content_hash in text
    assert f"engine: DuckDB {duckdb.__version__}; the pins were verified with DuckDB 1.9.9" in text
    assert "differs: finance.gl_entries, hr.payroll" in text
    assert f"built 126 tables, {built.rows} rows; pinned 126 tables, {built.rows} rows" in text
    assert "fix: install a verified DuckDB, e.g. pip install 'duckdb==1.9.9'" in text
    assert check_pin(tmp_path / "x.duckdb", 7.0, "f" * 64) is None  # unpinned scale: nothing to check


def _toml(data: dict) -> str:
    lines = [f"verified_duckdb = {json.dumps(data['verified_duckdb'])}"]
    for key, entry in data["scale"].items():
        lines += [f'[scale."{key}"]', f'content_hash = "{entry["content_hash"]}"', f"tables = {entry['tables']}",
                  f"rows = {entry['rows']}", f'[scale."{key}".objects]']
        lines += [f"{json.dumps(k)} = {json.dumps(v)}" for k, v in entry["objects"].items()]
    return "\n".join(lines) + "\n"


BROKEN_BUILDER = """
from pathlib import Path
from pytest_sqleval.core.errors import SqlevalError

def build(path):
    calls = Path(__file__).with_name("calls.txt")
    calls.write_text(calls.read_text() + "x" if calls.exists() else "x")
    Path(path).write_bytes(b"half a database")
    Path(str(path) + ".wal").write_bytes(b"and its log")
    raise SqlevalError(f"{path}: the warehouse does not match its pin (differs: finance.gl_entries)")
"""


def test_a_build_that_fails_is_one_collection_error_and_leaves_nothing(pytester: pytest.Pytester) -> None:
    from tests.sqleval_helpers import INI
    pytester.makeini(INI)
    pytester.makepyfile(broken_builder=BROKEN_BUILDER)
    suite = pytester.mkdir("suite")
    (suite / "questions.jsonl").write_text("".join(
        json.dumps({"id": f"q{i}", "question": "?", "gold_sql": "SELECT 1"}) + "\n" for i in range(20)))
    (suite / "sqleval.toml").write_text('[suite]\nname = "w"\nquestions = "questions.jsonl"\n'
                                        'database = "w.duckdb"\nbuild = "broken_builder:build"\n')
    result = pytester.runpytest("suite", "-p", "no:cacheprovider")
    out = result.stdout.str()
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.assert_outcomes(errors=1)
    assert "does not match its pin (differs: finance.gl_entries)" in out and "Traceback" not in out
    assert (pytester.path / "calls.txt").read_text() == "x"  # built once, not once per case
    assert sorted(p.name for p in suite.iterdir()) == ["questions.jsonl", "sqleval.toml"]


# ------------------------------------------------------------------ catalog
def test_126_tables_across_the_schemas_and_the_graveyard(con) -> None:
    rows = con.execute("SELECT schema_name, table_name FROM duckdb_tables() WHERE NOT internal").fetchall()
    assert len(rows) == 126 == len(TABLES)
    assert {s for s, _ in rows} == set(SCHEMAS)
    names = [t for _, t in rows]
    for suffix in ("_old", "_v1", "_bak"):
        assert any(n.endswith(suffix) for n in names), suffix
    assert sum(s == "legacy" for s, _ in rows) >= 10
    assert scalar(con, "SELECT count(*) FROM duckdb_views() WHERE NOT internal") == 0
    empty = [f"{s}.{t}" for s, t in rows if scalar(con, f"SELECT count(*) FROM {s}.{t}") == 0]
    assert not empty


def test_schema_files_match_the_catalog(built) -> None:
    student = render_schema(built.path)
    instructor = render_schema(built.path, instructor=True)
    assert (SUITE / "schema.sql").read_text() == student
    assert (SUITE / "schema_instructor.sql").read_text() == instructor
    assert "TRAP" not in student
    assert instructor.count("-- TRAP:") >= 60
    stripped = re.sub(r"  -- TRAP:.*", "", re.sub(r"(?m)^-- TRAP:.*\n", "", instructor))
    assert stripped.split("CREATE SCHEMA", 1)[1] == student.split("CREATE SCHEMA", 1)[1]
    # the student DDL recreates exactly the catalog: names, types, nullability and comments
    fresh = duckdb.connect()
    for stmt in duckdb.extract_statements(student):
        fresh.execute(stmt)
    query = ("SELECT schema_name, table_name, column_name, data_type, is_nullable, comment FROM duckdb_columns() "
             "WHERE NOT internal AND database_name = current_database() ORDER BY ALL")
    built_con = duckdb.connect(str(built.path), read_only=True)
    try:
        assert fresh.execute(query).fetchall() == built_con.execute(query).fetchall()
    finally:
        built_con.close()


# ------------------------------------------------------------------ traps
def test_v1_revenue_coincides_before_the_cutover_and_diverges_after(con) -> None:
    def total(table: str, cond: str) -> object:
        return scalar(con, f"SELECT sum(amount_usd) FROM finance.{table} WHERE posting_status = 'posted' AND {cond}")
    before, after = "recognized_date <= DATE '2024-06-30'", "recognized_date > DATE '2024-06-30'"
    assert total("revenue_recognized", before) == total("revenue_recognized_v1", before)
    live, v1 = total("revenue_recognized", after), total("revenue_recognized_v1", after)
    assert v1 and live and v1 < live  # the zombie job still loads, so v1 looks alive
    assert scalar(con, "SELECT max(recognized_date) FROM finance.revenue_recognized_v1") > CUTOVER


def test_frozen_tables_stop_at_the_cutover_and_match_before(con) -> None:
    assert str(scalar(con, "SELECT max(order_date) FROM orders.orders_old")) == "2024-06-30"
    assert scalar(con, "SELECT count(*) FROM orders.orders WHERE order_date <= DATE '2024-06-30'") == \
        scalar(con, "SELECT count(*) FROM orders.orders_old")
    assert scalar(con, "SELECT max(requested_date) FROM returns.returns_old") <= CUTOVER
    # fx backup: identical before the provider change, different after
    diff = "SELECT count(*) FROM finance.fx_rates a JOIN finance.fx_rates_bak b USING (rate_date, currency_code) " \
           "WHERE a.usd_per_unit <> b.usd_per_unit AND a.rate_date {} DATE '2025-01-01'"
    assert scalar(con, diff.format("<")) == 0 and scalar(con, diff.format(">=")) > 0


def test_redundant_revenue_metrics_disagree(con) -> None:
    window = "BETWEEN DATE '2025-01-01' AND DATE '2025-06-30'"
    canonical = scalar(con, f"SELECT sum(amount_usd) FROM finance.revenue_recognized WHERE posting_status = 'posted' AND recognized_date {window}")
    unfiltered = scalar(con, f"SELECT sum(amount_usd) FROM finance.revenue_recognized WHERE recognized_date {window}")
    billed = scalar(con, f"SELECT sum(amount_usd) FROM sales.rev_billed WHERE billed_date {window}")
    booked = scalar(con, f"SELECT sum(gross_amount_usd) FROM sales.bookings_gross WHERE booking_date {window}")
    assert len({canonical, unfiltered, billed, booked}) == 4
    assert scalar(con, "SELECT count(*) FROM sales.rev_billed WHERE line_type IN ('tax', 'shipping')") > 0
    assert scalar(con, "SELECT count(*) FROM finance.revenue_recognized WHERE posting_status = 'reversed'") > 0


def test_dirty_rows_are_there(con) -> None:
    assert scalar(con, "SELECT count(*) FROM orders.orders o JOIN sales.customers c USING (customer_id) WHERE c.is_test") > 0
    assert scalar(con, "SELECT count(*) FROM orders.orders WHERE deleted_at IS NOT NULL") > 0
    assert scalar(con, "SELECT count(*) FROM sales.customers WHERE deleted_at IS NOT NULL AND email IS NULL") > 0
    assert scalar(con, "SELECT min(order_date) FROM orders.orders WHERE status = 'void'") > CUTOVER
    assert scalar(con, "SELECT count(*) FROM orders.orders WHERE status = 'cancelled'") > 0
    assert scalar(con, "SELECT count(*) - count(DISTINCT event_uuid) FROM web.events") > 0
    assert scalar(con, "SELECT count(*) FROM web.sessions WHERE is_bot") > 0
    # UTC vs store-local time
    assert scalar(con, "SELECT count(*) FROM orders.orders WHERE CAST(ordered_at AS DATE) <> order_date") > 0
    # a stale flag: terminated after the cutover but still "active"
    assert scalar(con, "SELECT count(*) FROM hr.employees WHERE is_active AND termination_date IS NOT NULL") > 0


def test_currencies_and_the_fx_table(con) -> None:
    assert {r[0] for r in con.execute("SELECT DISTINCT currency_code FROM orders.orders").fetchall()} == {"USD", "CAD", "GBP", "EUR"}
    assert scalar(con, "SELECT count(*) FROM finance.fx_rates WHERE isodow(rate_date) >= 6 OR currency_code = 'USD'") == 0
    assert scalar(con, "SELECT comment FROM duckdb_columns() WHERE table_name = 'fx_rates' AND column_name = 'usd_per_unit'") \
        == "units of this currency per 1 USD"  # the stale comment; the values are USD per unit
    assert 1.1 < float(scalar(con, "SELECT avg(usd_per_unit) FROM finance.fx_rates WHERE currency_code = 'GBP'")) < 1.5


@pytest.mark.parametrize("table, key", [("sales.dim_customer", "customer_id"), ("sales.product_price_history", "product_id"),
                                        ("hr.employee_history", "employee_id")])
def test_scd2_dimensions_have_one_current_version_and_no_gaps(con, table: str, key: str) -> None:
    assert scalar(con, f"SELECT count(*) FROM (SELECT {key} FROM {table} GROUP BY {key} HAVING count(*) FILTER (WHERE is_current) <> 1)") == 0
    assert scalar(con, f"SELECT count(*) FROM {table} WHERE NOT is_current") > 0
    gaps = (f"SELECT count(*) FROM (SELECT valid_to, lead(valid_from) OVER (PARTITION BY {key} ORDER BY valid_from) AS nxt "
            f"FROM {table}) WHERE nxt IS NOT NULL AND nxt <> valid_to")
    assert scalar(con, gaps) == 0


# ------------------------------------------------------------------ the suite
@pytest.fixture(scope="module")
def cases():
    manifest = load_manifest(SUITE / "sqleval.toml")
    assert manifest.build == "pytest_sqleval.products.warehouse:build"
    assert isinstance(manifest.database, Path) and manifest.database.name == DATABASE_NAME
    assert "legacy.*" in manifest.deprecated_tables
    return read_cases(manifest.questions, manifest.name)


def _tables(sql: str) -> set[str]:
    tree = sqlglot.parse_one(sql, read="duckdb")
    ctes = {c.alias_or_name for c in tree.find_all(exp.CTE)}
    return {f"{t.db}.{t.name}" for t in tree.find_all(exp.Table) if t.db or t.name not in ctes}


def test_sixty_questions_meet_the_distribution_constraints(cases) -> None:
    """The Lab's 50 plus 10 held out on the same schema (q51-q60), one id each."""
    assert len(cases) == 60
    assert len({c.id for c in cases}) == 60
    assert [c.id for c in cases if c.metadata.get("split") == "held_out"] == [f"q{i}" for i in range(51, 61)]
    tagged = lambda tag: [c.id for c in cases if tag in c.tags]  # noqa: E731
    assert sum(len(_tables(c.gold_sql)) >= 3 for c in cases) >= 10
    assert set(tagged("3_tables")) == {c.id for c in cases if len(_tables(c.gold_sql)) >= 3}
    assert len(tagged("trap_metric")) >= 8
    assert len(tagged("contested_definition")) >= 5
    assert len(tagged("deprecated_trap")) >= 5
    assert all(c.expected_shape in ("scalar", "table") and c.difficulty and c.category for c in cases)


def test_golds_are_deterministic_by_construction(cases) -> None:
    for c in cases:
        tree = sqlglot.parse_one(c.gold_sql, read="duckdb")
        assert not any(f.name.lower() in ("now", "random", "current_date", "today", "current_timestamp")
                       for f in tree.find_all(exp.Func) if isinstance(f, exp.Anonymous)) and \
            not list(tree.find_all(exp.CurrentDate, exp.CurrentTimestamp, exp.Rand)), c.id
        if tree.args.get("limit") is not None:
            assert tree.args.get("order") is not None, f"{c.id}: LIMIT without ORDER BY"
        assert not any(_tables(c.gold_sql) & {f"{t.schema}.{t.name}" for t in TABLES if warehouse.spec.deprecated(t)}), c.id


def test_golds_are_nonempty_on_the_small_build(con, cases) -> None:
    for c in cases:  # their speed is bench/'s (variants_cost_bench, throughput), not a wall-clock assert
        rows = con.execute(c.gold_sql).fetchall()
        assert rows, c.id
        assert len(rows) == 1 or c.expected_shape == "table", c.id


def test_naive_predictions_cover_every_main_question_and_the_graveyard(cases) -> None:
    """Hand-written predictions exist for the main 50 only: nobody writes answers to held-out questions."""
    preds = [json.loads(line) for line in (SUITE / "predictions" / "naive.jsonl").read_text().splitlines() if line.strip()]
    assert sorted(p["id"] for p in preds) == sorted(c.id for c in cases if split_of(c) == "main")
    graveyard = {f"{t.schema}.{t.name}" for t in TABLES if warehouse.spec.deprecated(t)}
    assert sum(bool(_tables(p["sql"]) & graveyard) for p in preds) >= 5


def test_a_native_variant_is_kept_with_the_hash_its_build_computed(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The native variants' hook keeps the content hash ``build_warehouse`` computed beside
    each file, so the variant pool reads it instead of hashing the file a second time."""
    from types import SimpleNamespace

    from pytest_sqleval.core.variants import build
    from pytest_sqleval.products.warehouse import native
    monkeypatch.setattr(native, "NATIVE_SEEDS", 1)
    monkeypatch.setattr(native, "NATIVE_SCALE", 0.01)
    (path,) = native.pytest_sqleval_native_variants(SimpleNamespace(build=native.BUILDER), tmp_path, 0)
    kept = path.with_name(path.name + ".content-hash")
    assert kept.read_text() == build.content_hash(path)
    monkeypatch.setattr(build, "content_hash", lambda p: pytest.fail("hashed again"))
    assert build.remembered_content_hash(path) == kept.read_text()


def test_the_shipped_variant_choices_are_frozen_for_this_generator_and_every_gold() -> None:
    """``cases/vantage/variants.frozen.json`` (``validate --variants 8``) makes a user's first
    run with ``--sqleval-variants=8`` build the variants and distil nothing, and its choices
    the same on every machine. Frozen for another generator, it would be left alone and every
    first run would distil again: a change that bumps a generator version refreezes it."""
    from pytest_sqleval.core.variants.boundaries import BOUNDARY_VERSION
    from pytest_sqleval.core.variants.build import GENERATOR_VERSION
    from pytest_sqleval.core.variants.distill import DISTILL_VERSION, _digest, _golds_digest
    from pytest_sqleval.products.warehouse.native import NATIVE_SEEDS
    suite = Path(__file__).resolve().parents[3] / "cases" / "vantage"
    record = json.loads((suite / "variants.frozen.json").read_text(encoding="utf-8"))
    fix = "fix: python -m pytest_sqleval validate cases/vantage --variants 8, and commit the file"
    assert record["settings"] == {"database_content_hash": pinned_hash(warehouse.DEFAULT_SCALE), "seed": 0, "count": 8,
                                  "frozen_columns": [],
                                  "generator": [GENERATOR_VERSION, BOUNDARY_VERSION, DISTILL_VERSION]}, fix
    assert [v["kind"] for v in record["variants"]].count("native") == NATIVE_SEEDS, fix  # the conftest's, as a run's
    golds = [g.source for c in read_cases(suite / "questions.jsonl") for g in c.sql_golds]
    assert set(record["choices"]) == {_digest(g) for g in golds}, fix
    assert record["golds"] == _golds_digest(golds), fix  # a run refuses a record frozen for other golds
