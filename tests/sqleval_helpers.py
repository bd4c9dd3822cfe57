"""Helpers for the plugin's integration tests: a labelled shop suite whose naive
predictions hit every error class, a backend that records its calls, and readers for
what a run leaves behind.

The fixtures here are registered for every test by ``tests/conftest.py``, except the
autouse ``sqleval_ini``, which a module opts into by importing it; ``shop_db`` and
``make_suite`` come from the top-level conftest."""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, Callable

import pytest

# In-process ``runpytest`` drops every module a run imported once the run ends, so the next
# run imports (and, with PYTHONDONTWRITEBYTECODE, compiles) them again. Importing the heavy
# ones here, in the outer process, keeps them: inner runs then cost a fraction of a second.
import pytest_sqleval.core.backends.registry  # noqa: E402,F401
import pytest_sqleval.core.engines.build  # noqa: E402,F401
import pytest_sqleval.core.generation  # noqa: E402,F401
import pytest_sqleval.core.grading.pipeline  # noqa: E402,F401
import pytest_sqleval.plugin.items  # noqa: E402,F401
import pytest_sqleval.core.records  # noqa: E402,F401
import pytest_sqleval.reports.summary  # noqa: E402,F401
import pytest_sqleval.reports.terminal  # noqa: E402,F401
import pytest_sqleval.plugin.session  # noqa: E402,F401
# A test that patches a module by its package's attribute (``from pytest_sqleval.reports import
# progress``) must patch the one the plugin imports: a module first imported inside an in-process
# run is dropped from ``sys.modules`` but stays its package's attribute, and the next run imports
# another copy. Imported here, it is one module for the whole worker.
import pytest_sqleval.reports.progress  # noqa: E402,F401

try:  # psycopg's C extension keeps the error classes of its first import: a pytester run that
    # imported psycopg and dropped it would leave later sandboxes catching other classes
    import psycopg  # noqa: E402,F401
except ImportError:  # pragma: no cover
    pass

try:  # hypothesis's pytest plugin imports this at every terminal summary
    import hypothesis.internal.observability  # noqa: E402,F401
except ImportError:  # pragma: no cover
    pass

#: Six cases over the shop database, labelled so that markers and slices have something to bite on.
SHOP_CASES: list[dict[str, Any]] = [
    {"id": "q01", "question": "How many real (non-test) customers are there?",
     "gold_sql": "SELECT count(*) FROM customers WHERE NOT is_test",
     "difficulty": "easy", "category": "customers", "complexity": "single_table", "tags": ["test_accounts"]},
    {"id": "q02", "question": "How many completed orders are there?",
     "gold_sql": "SELECT count(*) FROM orders WHERE status = 'complete'",
     "difficulty": "easy", "category": "orders", "complexity": "single_table", "tags": ["stale_trap"]},
    {"id": "q03", "question": "How many customers per region?",
     "gold_sql": "SELECT region, count(*) AS n FROM customers GROUP BY region",
     "difficulty": "medium", "category": "customers", "complexity": "aggregate", "tags": ["3 tables"]},
    {"id": "q04", "question": "How many orders per status?",
     "gold_sql": "SELECT status, count(*) AS n FROM orders GROUP BY status",
     "difficulty": "medium", "category": "orders", "complexity": "aggregate", "tags": ["revenue"]},
    {"id": "q05", "question": "How many orders per status (counting orders, not lines)?",
     "gold_sql": "SELECT status, count(*) AS n FROM orders GROUP BY status ORDER BY status",
     "difficulty": "hard", "category": "orders", "complexity": "join", "tags": ["revenue", "joins"]},
    {"id": "q06", "question": "The three most expensive products with their prices.",
     "gold_sql": "SELECT name, price FROM products ORDER BY price DESC, id LIMIT 3",
     "difficulty": "hard", "category": "products", "complexity": "top_k", "tags": []},
]

#: A backend that gets q01 right and each other case wrong in one error class.
NAIVE_SQL: dict[str, str] = {
    "q01": "SELECT count(*) FROM customers WHERE is_test = false",
    "q02": "SELECT count(*) FROM orders_old WHERE status = 'complete'",
    "q03": "SELECT region, count(*) FROM customers\nWHERE is_deleted = false GROUP BY region",
    "q04": "SELECT status, count(DISTINCT customer_id) FROM orders GROUP BY status",
    "q05": "SELECT o.status, count(*) FROM orders o JOIN order_lines ol ON ol.order_id = o.id GROUP BY o.status ORDER BY 1",
    "q06": "SELECT name FROM products ORDER BY price DESC LIMIT 3",
}
NAIVE_CLASSES: dict[str, str | None] = {
    "q01": None, "q02": "stale_table", "q03": "hallucinated_column", "q04": "wrong_metric",
    "q05": "wrong_join", "q06": "other",
}

#: For ``runpytest_subprocess``: hypothesis's plugin costs each fresh process (the run and
#: every xdist worker) about a second of imports, and these runs have no use for it.
LEAN = ("-p", "no:hypothesispytest")

INI = ("[pytest]\npythonpath = .\nasyncio_default_fixture_loop_scope = function\n"
       "filterwarnings = ignore::pytest.PytestAssertRewriteWarning\n")


PYCACHE = Path(tempfile.gettempdir()) / f"pytest-sqleval-tests-pycache-{os.getuid()}"


@pytest.fixture(autouse=True)
def sqleval_ini(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every pytester dir gets an ini; import this fixture into a module to make it autouse there.

    Each inner run starts an engine process (and subprocess runs start pytest and xdist
    workers) that would compile every module from source under PYTHONDONTWRITEBYTECODE;
    a bytecode cache outside the repository makes those start-ups three times faster."""
    pytester.makeini(INI)
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "")
    monkeypatch.setenv("PYTHONPYCACHEPREFIX", str(PYCACHE))


@pytest.fixture
def shop_suite(make_suite: Callable[..., Path]) -> Path:
    """The six labelled cases as ``suite/``."""
    return make_suite(SHOP_CASES)


@pytest.fixture
def write_predictions(pytester: pytest.Pytester) -> Callable[..., Path]:
    """``write_predictions({"q01": "SELECT ..."}, name="naive.jsonl", key="id")`` -> the path."""

    def write(sqls: dict[str, str], name: str = "naive.jsonl", key: str = "id", **extra: Any) -> Path:
        path = pytester.path / name
        path.write_text("".join(json.dumps({key: cid, "sql": sql, **extra}) + "\n" for cid, sql in sqls.items()))
        return path

    return write


def gen_cases(n: int, **labels: Any) -> list[dict[str, Any]]:
    """``n`` distinct, cheap cases: q01 counts one customer, q02 two, ..."""
    return [{"id": f"q{i:02d}", "question": f"How many customers have an id up to {i}?",
             "gold_sql": f"SELECT count(*) FROM customers WHERE id <= {i}", **labels} for i in range(1, n + 1)]


#: A backend module that logs every call (``calls.log``: one case id per line) and the
#: number of calls in flight when each started (``inflight.log``). It answers with the
#: gold SQL, sleeping ``SQLEVAL_TEST_SLEEP`` seconds; ``SQLEVAL_TEST_WRONG`` names cases it
#: answers wrongly, ``SQLEVAL_TEST_INTERRUPT`` the case on which it raises KeyboardInterrupt,
#: and cases from ``SQLEVAL_TEST_HOLD_FROM`` on wait for a file ``go`` that never comes.
RECORDING_BACKEND = '''
import asyncio, os
from pathlib import Path

HERE = Path(__file__).parent
_in_flight = 0


def _log(name, text):
    with open(HERE / name, "a") as fh:
        fh.write(text + "\\n")


async def generate(case):
    global _in_flight
    _in_flight += 1
    _log("inflight.log", str(_in_flight))
    _log("calls.log", case.id)
    try:
        await asyncio.sleep(float(os.environ.get("SQLEVAL_TEST_SLEEP", "0")))
        hold = os.environ.get("SQLEVAL_TEST_HOLD_FROM")
        while hold and case.id >= hold and not (HERE / "go").exists():
            await asyncio.sleep(0.02)
        if case.id == os.environ.get("SQLEVAL_TEST_INTERRUPT"):
            raise KeyboardInterrupt
        if case.id in os.environ.get("SQLEVAL_TEST_WRONG", "").split(","):
            return f"SELECT -1 AS wrong_{case.id}"
        return case.gold_sql
    finally:
        _in_flight -= 1
'''


@pytest.fixture
def recording_backend(pytester: pytest.Pytester) -> Callable[[], list[str]]:
    """Writes ``recbackend.py`` (spec ``recbackend:generate``); returns a reader of ``calls.log``."""
    pytester.makepyfile(recbackend=RECORDING_BACKEND)

    def calls() -> list[str]:
        log = pytester.path / "calls.log"
        return log.read_text().split() if log.exists() else []

    return calls


def read_results(root: Path) -> list[dict[str, Any]]:
    path = root / "sqleval-results" / "results.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def read_summary(root: Path) -> dict[str, Any]:
    return json.loads((root / "sqleval-results" / "summary.json").read_text())


def by_case(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["case_id"]: r for r in records}


@pytest.fixture(scope="session")
def vantage_01(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The warehouse at scale 0.1, built once for all xdist workers of a run and checked
    against its pin. The folder is named by the pin: it sits beside pytest's numbered
    temporary folders, so serial runs share it, and a build from an older generator
    (another pin) must never be read as this one."""
    import fcntl

    from pytest_sqleval import cli
    from pytest_sqleval.products.warehouse import DATABASE_NAME, pinned_hash
    pinned = pinned_hash(0.1)
    assert pinned is not None, "no content hash pinned for scale 0.1 (MANIFEST.toml)"
    root = tmp_path_factory.getbasetemp().parent / f"vantage-0.1-{pinned[:16]}"
    root.mkdir(exist_ok=True)
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (root / "done").exists():
            assert cli.main(["build-warehouse", "--scale", "0.1", "--out", str(root)]) == 0
            (root / "done").touch()
    return root / DATABASE_NAME


def sandbox_hash(sandbox: Callable[[Any], Any], where: Any) -> str:
    """The content hash a sandbox (DuckDBSandbox, SQLiteSandbox, PostgresSandbox) computes for
    a database file or URL, the sandbox closed afterwards."""
    box = sandbox(where)
    try:
        return box.content_hash()
    finally:
        box.close()
