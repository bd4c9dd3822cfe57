"""Generated SQL is hostile input: it is refused or contained, the database never changes,
a runaway query times out and the run goes on, and importing the plugin stays cheap."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest

from pytest_sqleval.core.engines.duckdb_sandbox import DuckDBSandbox
from tests.sqleval_helpers import by_case, read_results, read_summary, sqleval_ini  # noqa: F401  (autouse fixture)

COUNT = "SELECT count(*) FROM customers"


def hostile(root: Path) -> dict[str, str]:
    return {
        "copy": f"COPY customers TO '{root / 'leak.csv'}'",
        "read_csv": "SELECT * FROM read_csv('/etc/passwd')",
        "file_as_table": "SELECT * FROM '/etc/passwd'",
        "attach": f"ATTACH '{root / 'other.duckdb'}' AS other",
        "install": "INSTALL httpfs",
        "load": "LOAD httpfs",
        "set": "SET threads = 64",
        "pragma": "PRAGMA enable_external_access",
        "multiple": f"{COUNT}; DROP TABLE customers",
        "shadow": "CREATE TEMP VIEW customers AS SELECT 1 AS id",
        "after_shadow": COUNT,  # the same engine process, right after: must see the real table
        "drop": "DROP TABLE customers",
        "insert": "INSERT INTO customers VALUES (999, 'x', 'north', DATE '2024-01-01', false)",
        "cte_delete": "WITH x AS (SELECT 1) DELETE FROM customers",
        "read_duckdb": f"SELECT count(*) FROM read_duckdb('{root / 'suite' / 'shop.duckdb'}', table_name => 'customers')",
        "runaway": "SELECT count(*) FROM range(10000000000000)",
        "after_runaway": COUNT,
    }


def test_hostile_predictions_fail_safely_and_leave_the_database_unchanged(
        pytester: pytest.Pytester, make_suite: Callable[..., Path], write_predictions: Callable[..., Path]) -> None:
    sqls = hostile(pytester.path)
    suite = make_suite([{"id": cid, "question": f"hostile: {cid}", "gold_sql": COUNT} for cid in sqls],
                       manifest_extra="[limits]\ntimeout_s = 1\n")
    db = suite / "shop.duckdb"
    before_bytes = db.read_bytes()
    sandbox = DuckDBSandbox(db)
    before = sandbox.content_hash()
    sandbox.close()
    write_predictions(sqls, name="hostile.jsonl")

    result = pytester.runpytest("--sqleval-backend=predictions:hostile.jsonl")
    result.assert_outcomes(passed=2, failed=len(sqls) - 2)
    records = by_case(read_results(pytester.path))
    for cid in sqls:
        rec = records[cid]
        if cid.startswith("after_"):
            assert rec["status"] == "passed", rec["explanation"]
            continue
        assert rec["status"] == "failed", cid
        category = ((rec.get("execution") or {}).get("error") or {}).get("category")
        if cid == "runaway":  # interrupted at its limit (measured in CPU time), and the next case ran
            assert rec["failure_kind"] == "timeout"
            assert rec["execution"]["error"]["exception"] == "InterruptException", rec["execution"]
            assert "over the limit of 1 s" in rec["execution"]["error"]["message"]
        else:
            assert rec["failure_kind"] == "unsafe_statement" or category == "permission_error", (cid, rec["failure_kind"])
    assert records["read_duckdb"]["failure_kind"] == "runtime_error:permission_error"  # refused by the engine itself

    assert read_summary(pytester.path)["suites"]["suite"]["content_hash"] == before
    sandbox = DuckDBSandbox(db)
    assert sandbox.content_hash() == before
    sandbox.close()
    assert db.read_bytes() == before_bytes
    assert not (pytester.path / "leak.csv").exists() and not (pytester.path / "other.duckdb").exists()


def test_importing_the_plugin_loads_no_heavy_dependency() -> None:
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", "import pytest_sqleval.plugin"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    imported = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    assert "pytest_sqleval.plugin" in imported
    for heavy in ("litellm", "duckdb", "sqlglot", "pyarrow"):
        assert not {m for m in imported if m == heavy or m.startswith(heavy + ".")}, f"{heavy} imported by the plugin"
