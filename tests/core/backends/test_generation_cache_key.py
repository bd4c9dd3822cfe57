"""A cached generation is replayed only while what produced it is unchanged: a
``module:function`` backend's module and the project modules it imports (at any depth,
inside functions too), the files it declares in ``sqleval_depends_on``, and, for the
agent's backends, the schema of the database it was prompted with."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import pytest

from tests.llm_server import Reply, ScriptedLLMServer
from tests.sqleval_helpers import INI, LEAN, SHOP_CASES, sqleval_ini  # noqa: F401  (fixtures)

BACKEND = '''
from pathlib import Path

import helpers
from pkg import sub

HERE = Path(__file__).parent


def generate(case):
    from lazyhelp import suffix  # imported only when called
    prompt = (HERE / "prompts" / "system.txt").read_text()
    with open(HERE / "calls.log", "a") as fh:
        fh.write(case.id + "\\n")
    return case.gold_sql + helpers.SUFFIX + sub.SUFFIX + suffix() + ("" if prompt else "")


generate.sqleval_depends_on = ["prompts/*.txt"]
'''
FILES = {
    "helpers.py": 'SUFFIX = ""\n',
    "pkg/__init__.py": "",
    "pkg/sub.py": "from .deep import SUFFIX\n",
    "pkg/deep.py": 'SUFFIX = ""\n',
    "lazyhelp.py": 'def suffix():\n    return ""\n',
    "prompts/system.txt": "You write SQL.\n",
    "unrelated.py": "X = 1\n",
    "notes.txt": "not read by the backend\n",
}


@pytest.fixture
def project(pytester: pytest.Pytester, make_suite: Callable[..., Path]) -> Callable[[], int]:
    """The suite, the backend and its helpers; returns a run that gives the calls made so far."""
    make_suite(SHOP_CASES[:2])
    pytester.makepyfile(mybackend=BACKEND)
    for rel, text in FILES.items():
        (pytester.path / rel).parent.mkdir(parents=True, exist_ok=True)
        (pytester.path / rel).write_text(text)

    def run() -> int:
        pytester.runpytest("--sqleval-backend=mybackend:generate").assert_outcomes(passed=2)
        log = pytester.path / "calls.log"
        return len(log.read_text().split()) if log.exists() else 0

    return run


def _edit(pytester: pytest.Pytester, rel: str) -> None:
    path = pytester.path / rel
    path.write_text(path.read_text() + "# edited\n" if rel.endswith(".py") else path.read_text() + "Be brief.\n")


@pytest.mark.parametrize("edited", ["helpers.py", "pkg/deep.py", "lazyhelp.py", "prompts/system.txt", "mybackend.py"])
def test_editing_what_the_backend_depends_on_generates_again(
        pytester: pytest.Pytester, project: Callable[[], int], edited: str) -> None:
    assert project() == 2
    assert project() == 2  # nothing edited: every case from the cache
    _edit(pytester, edited)
    assert project() == 4  # both cases asked again
    assert project() == 4  # and cached again


def test_editing_files_the_backend_does_not_depend_on_keeps_the_cache(
        pytester: pytest.Pytester, project: Callable[[], int]) -> None:
    assert project() == 2
    _edit(pytester, "unrelated.py")
    _edit(pytester, "notes.txt")
    assert project() == 2


def test_a_declared_file_that_does_not_exist_is_one_usage_error(
        pytester: pytest.Pytester, project: Callable[[], int]) -> None:
    (pytester.path / "prompts" / "system.txt").unlink()
    result = pytester.runpytest("--sqleval-backend=mybackend:generate")
    out = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR, out
    assert "Traceback" not in out and "INTERNALERROR" not in out
    assert "sqleval_depends_on names 'prompts/*.txt', which matches no file" in out
    assert not (pytester.path / "calls.log").exists()


def test_the_project_closure_leaves_out_the_stdlib_installed_packages_and_the_plugin(tmp_path: Path) -> None:
    import sys

    from pytest_sqleval.core.backends.depends import project_closure
    (tmp_path / "closure_top.py").write_text("import json, duckdb, pytest_sqleval\nimport closure_mid\n")
    (tmp_path / "closure_mid.py").write_text("def f():\n    import closure_leaf\n")
    (tmp_path / "closure_leaf.py").write_text("import os\n")
    sys.path.insert(0, str(tmp_path))
    try:
        files = project_closure("closure_top", tmp_path)
    finally:
        sys.path.remove(str(tmp_path))
    assert [p.name for p in files] == ["closure_leaf.py", "closure_mid.py", "closure_top.py"]


def test_the_agent_generates_again_when_its_database_schema_changes(
        pytester: pytest.Pytester, llm_server: ScriptedLLMServer) -> None:
    """The agent is prompted with the suite's schema: a table added to the database is a
    new prompt, never a replay of the old one."""
    import duckdb

    from tests.products.agent.test_agent import build_mini_suite
    pytester.makeini(INI)
    suite = build_mini_suite(pytester.path, layer=False)
    llm_server.respond_with(lambda req: Reply("```sql\nSELECT 1\n```"))
    args = [*LEAN, str(suite), "-p", "no:cacheprovider", "--sqleval-backend=raw_llm", "--sqleval-model=scripted",
            f"--sqleval-api-base={llm_server.api_base}"]
    cases = len((suite / "questions.jsonl").read_text().splitlines())
    pytester.runpytest_subprocess(*args, timeout=180)
    assert llm_server.calls == cases
    pytester.runpytest_subprocess(*args, timeout=180)
    assert llm_server.calls == cases  # same schema: from the cache
    con = duckdb.connect(str(suite / "mini.duckdb"))
    con.execute("CREATE TABLE main.refunds (refund_id INTEGER, amount_usd DECIMAL(12, 2))")
    con.close()
    pytester.runpytest_subprocess(*args, timeout=180)
    assert llm_server.calls == 2 * cases
    records = [json.loads(line) for line in (pytester.path / "sqleval-results" / "results.jsonl").read_text().splitlines()]
    assert not any(r["generation"]["cached"] for r in records)

