"""The pipe a child process answers its parent on (the engine host, the second variant
build process), kept apart from file descriptor 1.

An engine's C code writes to descriptor 1 whatever Python's ``sys.stdout`` says: DuckDB
draws its progress bar there (``"\\r  4% ▕█..."``) once a query runs past two seconds,
even when descriptor 1 is not a terminal. On a pipe the parent unpickles, one bar is a
corrupt answer ("invalid load key, '\\x0d'"), so a child answers on a private copy of the
pipe and points descriptor 1 at stderr, where stray output is harmless."""
from __future__ import annotations

import os
import sys
from typing import BinaryIO


def private_stdout() -> BinaryIO:
    """The process's stdout pipe as a private file for the answers; from now on descriptor 1
    (and ``sys.stdout``) go to stderr."""
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
    absolute where the parent had it as ``''``."""
    path = [p or os.getcwd() for p in sys.path]
    return [sys.executable, "-P", *args], {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
