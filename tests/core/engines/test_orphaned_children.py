"""A child process (the engine process, the second distillation engine, the second variant
build) ends when its parent is killed: pytest SIGKILLed (a CI job cancelled, the OOM
killer) left its busy child running to the end of its work, a core and its memory taken
for minutes. Each test kills a parent with SIGKILL while its child works, and waits,
bounded, for the child to be gone."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Callable

import pytest

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads a process's state from /proc")

GONE_WITHIN_S = 60.0  # a bound on the wait, not a speed: the child watches every 0.5 s
BUSY_WITHIN_S = 120.0  # for the child's query to be running (CPU seconds seen), on a loaded machine


def _stat(pid: int) -> list[str] | None:
    """The fields of /proc/<pid>/stat after the command name, or None once it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rpartition(")")[2].split()


def _alive(pid: int) -> bool:
    fields = _stat(pid)
    return fields is not None and fields[0] not in ("Z", "X")  # a zombie has ended: only its reaping is left


def _cpu_s(pid: int) -> float:
    fields = _stat(pid)
    return 0.0 if fields is None else (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _wait(check: Callable[[], bool], bound_s: float) -> bool:
    """Whether ``check`` comes true within ``bound_s`` (polled)."""
    end = time.monotonic() + bound_s
    while time.monotonic() < end:
        if check():
            return True
        time.sleep(0.1)
    return check()


def _parent(script: str, *args: str) -> tuple[subprocess.Popen[str], int]:
    """Start ``script`` as a parent process; it prints its child's pid once the child works."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p or os.getcwd() for p in sys.path)}
    parent = subprocess.Popen([sys.executable, "-c", textwrap.dedent(script), *args], stdout=subprocess.PIPE,
                              text=True, env=env)
    assert parent.stdout is not None
    line = parent.stdout.readline().strip()
    assert line.isdigit(), f"the parent printed {line!r}, exit {parent.poll()}"
    return parent, int(line)


def _parent_of_python_child(code: str) -> tuple[subprocess.Popen[str], int]:
    """A parent that starts ``python -c code`` as ``childio.python_child`` describes it and
    prints its pid once the child has printed ``ready`` (it works)."""
    return _parent("""
        import subprocess, sys, time
        from pytest_sqleval.core.childio import python_child
        cmd, env = python_child("-c", sys.argv[1])
        child = subprocess.Popen(cmd, stdout=subprocess.PIPE, env=env)
        assert child.stdout.readline() == b"ready\\n"
        print(child.pid, flush=True)
        time.sleep(600)
    """, code)


def _kill_parent_and_wait(parent: subprocess.Popen[str], child: int) -> bool:
    try:
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=30)
        return _wait(lambda: not _alive(child), GONE_WITHIN_S)
    finally:
        if _alive(child):  # the old behaviour: not left to burn a core for minutes
            os.kill(child, signal.SIGKILL)


def test_an_engine_process_busy_in_a_query_ends_when_its_parent_is_killed(tmp_path: Path) -> None:
    """The engine process reads its request pipe only between requests: busy in a query
    (here one with a ten-minute limit) it never saw the pipe close."""
    import duckdb
    db = tmp_path / "one.duckdb"
    duckdb.connect(str(db)).execute("CREATE TABLE t AS SELECT 1 AS x").close()
    parent, child = _parent("""
        import sys, time
        from pathlib import Path
        from pytest_sqleval.core.cases import Limits
        from pytest_sqleval.core.grading.pipeline import SuiteGrader
        g = SuiteGrader(sys.argv[1], limits=Limits(timeout_s=600), cache_dir=Path(sys.argv[2]))
        g.submit("SELECT count(*) FROM range(1000000000000) r(i) WHERE i % 7 = 3", g.gold("SELECT x FROM t"))
        print(g.host.process.proc.pid, flush=True)
        time.sleep(600)
    """, str(db), str(tmp_path / "cache"))
    try:
        idle = _cpu_s(child)
        assert _wait(lambda: _cpu_s(child) > idle + 1.0, BUSY_WITHIN_S), "the engine process never ran the query"
    except BaseException:
        parent.kill()
        os.kill(child, signal.SIGKILL)
        raise
    assert _kill_parent_and_wait(parent, child), "the engine process ran on after its parent was killed"


def test_a_python_child_that_answers_on_its_pipe_ends_when_its_parent_is_killed() -> None:
    """The second variant build (``build.build_in_child``) reads no pipe at all: a child
    started as ``childio.python_child`` describes it, which opens its answer pipe with
    ``private_stdout`` as that build does first, ends once its parent is gone."""
    parent, child = _parent_of_python_child("import time; from pytest_sqleval.core.childio import private_stdout; "
                                            "out = private_stdout(); out.write(b'ready\\n'); out.flush(); time.sleep(600)")
    assert _kill_parent_and_wait(parent, child), "the child ran on after its parent was killed"


def test_a_python_child_ends_when_its_parent_is_killed_without_waiting_for_a_poll() -> None:
    """The watch waits on the parent itself (its pidfd on Linux), not on a timer: with a
    poll of an hour (before: a thread woke every 0.5 s to look), the child still ends at once."""
    if not hasattr(os, "pidfd_open"):
        pytest.skip("no pidfd here: the watch polls (macOS)")
    parent, child = _parent_of_python_child("import time; from pytest_sqleval.core.childio import end_with_parent; "
                                            "end_with_parent(poll_s=3600); print('ready', flush=True); time.sleep(600)")
    assert _kill_parent_and_wait(parent, child), "the child waited for its next poll"


GUARDED_PARENT = """
    import subprocess, sys, time
    from pytest_sqleval.core.childio import start_guard
    group = subprocess.Popen([sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                              "print('ready', flush=True); time.sleep(600)"], stdout=subprocess.PIPE,
                             start_new_session=True)
    assert group.stdout.readline() == b"ready\\n"
    guard = start_guard(group.pid)
    print(group.pid, guard.pid, flush=True)
    time.sleep(600)
"""


def test_a_guarded_process_group_ends_when_its_owner_is_killed() -> None:
    """A child that is no Python of ours (the Spark Connect server's JVM, in a session of
    its own) does not watch its parent; its guard ends its group, SIGKILL after the grace
    when it ignores SIGTERM (as this one does), and then ends itself."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p or os.getcwd() for p in sys.path)}
    parent = subprocess.Popen([sys.executable, "-c", textwrap.dedent(GUARDED_PARENT)], stdout=subprocess.PIPE,
                              text=True, env=env)
    assert parent.stdout is not None
    pids = parent.stdout.readline().split()
    assert len(pids) == 2, f"the parent printed {pids!r}, exit {parent.poll()}"
    group, guard = map(int, pids)
    try:
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=30)
        assert _wait(lambda: not _alive(group), GONE_WITHIN_S), "the guarded group ran on after its owner was killed"
        assert _wait(lambda: not _alive(guard), GONE_WITHIN_S), "the guard ran on after its work"
    finally:
        for pid in (group, guard):
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


@pytest.mark.spark
def test_the_spark_connect_servers_jvm_ends_when_its_owner_is_killed(tmp_path: Path) -> None:
    """The Spark Connect server is a JVM that spark-submit starts in a session of its own:
    with its owner SIGKILLed (a cancelled CI job), it served on, a gigabyte and a port held,
    until someone killed it by hand. Its guard now ends it."""
    from tests.core.engines.conftest import spark_missing
    missing = spark_missing()
    if missing:
        pytest.skip(missing)
    parent, jvm = _parent("""
        import time
        from pytest_sqleval.core.engines.spark_connect import LocalConnectServer
        server = LocalConnectServer(master="local[1]", memory="512m").start()
        print(server.pid, flush=True)
        time.sleep(600)
    """)
    try:
        assert _alive(jvm)
    except BaseException:
        parent.kill()
        raise
    try:
        assert _kill_parent_and_wait(parent, jvm), "the Spark Connect server ran on after its owner was killed"
    finally:
        try:
            os.killpg(jvm, signal.SIGKILL)  # anything left in its group
        except ProcessLookupError:
            pass


@pytest.mark.spark
def test_a_spark_connect_owner_killed_before_the_guard_is_up_leaves_no_jvm() -> None:
    """The owner SIGKILLed after it started the server's JVM and before its guard was up
    left the JVM with no one to end it (the guard started just after the JVM). Now the JVM
    waits behind a gate that opens only once the guard is up: the owner here is killed at
    that very moment (in place of starting the guard), and nothing it started runs on."""
    from tests.core.engines.conftest import spark_missing
    missing = spark_missing()
    if missing:
        pytest.skip(missing)
    parent, group = _parent("""
        import os, signal
        from pytest_sqleval.core.engines import spark_connect
        def killed_instead(pgid):  # the owner's SIGKILL in the window before its guard is up
            print(pgid, flush=True)
            os.kill(os.getpid(), signal.SIGKILL)
        spark_connect.start_guard = killed_instead
        spark_connect.LocalConnectServer(master="local[1]", memory="512m").start()
    """)
    try:
        parent.wait(timeout=30)
        assert _wait(lambda: not _alive(group), GONE_WITHIN_S), "the JVM ran on, unguarded, after its owner was killed"
    finally:
        try:
            os.killpg(group, signal.SIGKILL)  # anything left in its group
        except ProcessLookupError:
            pass
