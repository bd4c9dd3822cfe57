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
