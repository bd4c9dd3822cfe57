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
So every such child ends itself once its parent is gone (``end_with_parent``)."""
from __future__ import annotations

import os
import sys
import threading
import time
from typing import BinaryIO

#: the parent's process id, set by ``python_child`` for the child it describes
PARENT_ENV = "SQLEVAL_PARENT_PID"
PARENT_POLL_S = 0.5  # how often a child looks whether its parent is still there
ORPHAN_EXIT = 75  # the exit status of a child that ended because its parent was gone


def end_with_parent(poll_s: float = PARENT_POLL_S) -> None:
    """End this process (``os._exit``, within about ``poll_s``) once its parent is gone: a
    daemon thread compares ``os.getppid()`` with the parent's id (``PARENT_ENV``, else the
    parent now), which changes when the parent dies and the child is adopted (by init or a
    subreaper), on Linux and macOS alike. A thread and not Linux's ``PR_SET_PDEATHSIG``: that
    signal fires when the parent's *thread* that started the child ends, which would tie an
    engine's life to whichever thread first needed it. The engines' drivers let go of the
    interpreter lock while a query runs, so the thread runs beside one."""
    try:
        parent = int(os.environ.pop(PARENT_ENV, "") or os.getppid())
    except ValueError:
        parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(poll_s)
        os._exit(ORPHAN_EXIT)  # nothing to flush: whatever it answers, no one reads

    threading.Thread(target=watch, name="sqleval-parent-watch", daemon=True).start()


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
