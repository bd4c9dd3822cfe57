"""A child process answers its parent on a pipe that nothing else writes to: DuckDB draws
its progress bar on descriptor 1 even when that is a pipe, and one bar in a pickled answer
made a whole variant build fail ("invalid load key, '\\x0d'") at random, by query speed."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

duckdb = pytest.importorskip("duckdb")

CHILD = textwrap.dedent("""
    import sys
    import duckdb
    {protect}
    con = duckdb.connect(config={{"threads": 1}})
    con.execute("SET enable_progress_bar = true")
    con.execute("SET enable_progress_bar_print = true")
    con.execute("SET progress_bar_time = 0")
    con.execute("SELECT count(*) FROM range(30000000) t(i) WHERE i % 7 = 3").fetchall()
    print("a stray print")
    out.write(b"ANSWER")
    out.flush()
""")


def _run(protect: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-c", CHILD.format(protect=protect)], capture_output=True, timeout=120)


def test_the_answer_pipe_holds_the_answer_alone_while_duckdb_draws_its_progress_bar() -> None:
    done = _run("from pytest_sqleval.core.childio import private_stdout\nout = private_stdout()")
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    assert done.stdout == b"ANSWER"
    assert b"a stray print" in done.stderr
    assert b"\r" in done.stderr and b"%" in done.stderr  # the bar was drawn, on stderr

