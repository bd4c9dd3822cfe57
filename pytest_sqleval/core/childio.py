"""The pipe a child process answers its parent on (the engine host, the second variant
build process), kept apart from file descriptor 1, and the child's life bound to its parent's.

An engine's C code writes to descriptor 1 whatever Python's ``sys.stdout`` says: DuckDB
draws its progress bar there (``"\\r  4% ▕█..."``) once a query runs past two seconds,
even when descriptor 1 is not a terminal. On a pipe the parent unpickles, one bar is a
corrupt answer ("invalid load key, '\\x0d'"), so a child answers on a private copy of the
pipe and points descriptor 1 at stderr, where stray output is harmless.

A child whose parent is killed (SIGKILL: no ``finally`` of the parent's runs) has no one to
answer. The engine host sees its request pipe close only between requests, and the second
variant build never reads one: each ran on to the end of its work (minutes on a warehouse).
So every such child ends itself once its parent is gone (``end_with_parent``), and a child
that is no Python of ours (the Spark Connect server's JVM) has a guard that ends its process
group then (``guard_group``)."""
from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import threading
import time
from typing import BinaryIO, Callable

#: the parent's process id, set by ``python_child`` for the child it describes
PARENT_ENV = "SQLEVAL_PARENT_PID"
PARENT_POLL_S = 0.5  # how often a child looks whether its parent is still there, where it cannot wait for it
ORPHAN_EXIT = 75  # the exit status of a child that ended because its parent was gone


def await_exit(pid: int, still_there: Callable[[], bool], poll_s: float = PARENT_POLL_S) -> None:
    """Return once process ``pid`` has ended. On Linux a blocking wait on its pidfd
    (``os.pidfd_open``: readable when the process ends), no polling; ``still_there`` is
    asked once the pidfd is open, so a pid already gone (and perhaps taken again) is never
    waited on. Elsewhere (macOS) ``still_there`` is polled every ``poll_s``."""
    pidfd = None
    if hasattr(os, "pidfd_open"):
        try:
            pidfd = os.pidfd_open(pid)
        except OSError:  # gone already (ProcessLookupError), or a kernel without pidfds
            pidfd = None
    try:
        if pidfd is not None:
            if still_there():
                select.select([pidfd], [], [])  # blocks until the process ends; no timeout needed
            return
        while still_there():
            time.sleep(poll_s)
    finally:
        if pidfd is not None:
            os.close(pidfd)


def end_with_parent(poll_s: float = PARENT_POLL_S) -> None:
    """End this process (``os._exit``) once its parent is gone: a daemon thread waits on
    the parent (``await_exit``: its pidfd on Linux, at once; elsewhere it compares
    ``os.getppid()`` with the parent's id every ``poll_s``, which changes when the parent
    dies and the child is adopted). The parent is ``PARENT_ENV``, else the parent now. A
    thread and not Linux's ``PR_SET_PDEATHSIG``: that signal fires when the parent's
    *thread* that started the child ends, which would tie an engine's life to whichever
    thread first needed it. The engines' drivers let go of the interpreter lock while a
    query runs, so the thread runs beside one."""
    try:
        parent = int(os.environ.pop(PARENT_ENV, "") or os.getppid())
    except ValueError:
        parent = os.getppid()

    def watch() -> None:
        await_exit(parent, lambda: os.getppid() == parent, poll_s)
        os._exit(ORPHAN_EXIT)  # nothing to flush: whatever it answers, no one reads

    threading.Thread(target=watch, name="sqleval-parent-watch", daemon=True).start()


GUARD_GRACE_S = 10.0  # from SIGTERM to SIGKILL for a guarded group whose parent is gone


def guard_group(pgid: int, grace_s: float = GUARD_GRACE_S) -> None:
    """The guard's own body (``start_guard``): wait until the parent is gone, then SIGTERM
    the group ``pgid``, and SIGKILL it if its leader has not ended within ``grace_s``."""
    parent = int(os.environ.pop(PARENT_ENV, "") or os.getppid())
    await_exit(parent, lambda: os.getppid() == parent)
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        return
    ended = threading.Event()

    def leader_ends() -> None:
        await_exit(pgid, lambda: process_exists(pgid))
        ended.set()

    threading.Thread(target=leader_ends, daemon=True).start()
    ended.wait(grace_s)
    try:
        os.killpg(pgid, signal.SIGKILL)  # what is left of the group (a leader that ignored SIGTERM)
    except ProcessLookupError:
        pass


def process_exists(pid: int) -> bool:
    """Whether ``pid`` names a process (a zombie too); one we may not signal exists."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def start_guard(pgid: int) -> subprocess.Popen[bytes]:
    """A guard for a process group this process started that is no Python of ours (the
    Spark Connect server's JVM, in a session of its own): a small Python child that ends
    the group once this process is gone (SIGKILLed: no ``finally`` runs). The owner kills
    the guard before it stops the group itself (``stop_guard``), so the guard never signals
    a group id that may have been given out again. In a session of its own, so a Ctrl-C
    at the terminal reaches the owner (which stops the group) and not the guard."""
    cmd, env = python_child("-c", f"from pytest_sqleval.core.childio import guard_group; guard_group({int(pgid)})")
    return subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            start_new_session=True)


def stop_guard(guard: subprocess.Popen[bytes] | None) -> None:
    """The guard gone (SIGKILL, reaped, bounded): its group is the owner's to stop."""
    if guard is None or guard.poll() is not None:
        return
    guard.kill()
    try:
        guard.wait(10.0)
    except subprocess.TimeoutExpired:  # cannot happen after SIGKILL but on a stuck kernel; never waits longer
        pass


def private_stdout() -> BinaryIO:
    """The process's stdout pipe as a private file for the answers; from now on descriptor 1
    (and ``sys.stdout``) go to stderr. A child answering its parent on it also ends when
    the parent is gone (``end_with_parent``)."""
    end_with_parent()
    sys.stdout.flush()
    answers = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(answers, "wb")


def python_child(*args: str) -> tuple[list[str], dict[str, str]]:
    """The command and environment of a Python child that imports exactly the modules this
    process imports. ``python -m`` and ``python -c`` put the working directory first on the
    child's path, so a checkout of another version there (a user's clone, an older copy)
    would serve the child's half of a run from other code than the parent's: ``-P`` drops
    that entry and ``PYTHONPATH`` carries this process's path, the working directory made
    absolute where the parent had it as ``''``. ``PARENT_ENV`` names this process, which the
    child watches (``end_with_parent``)."""
    path = [p or os.getcwd() for p in sys.path]
    return [sys.executable, "-P", *args], {**os.environ, "PYTHONPATH": os.pathsep.join(path),
                                           PARENT_ENV: str(os.getpid())}
