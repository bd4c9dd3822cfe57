"""``runs/<config>/predictions.jsonl``: each configuration's answers, one line per question
(each question's trace goes beside it, ``runs/<config>/traces/<qid>.md``: :mod:`pytest_sqleval.core.traces`).

Written by the backend right after each generation, so an interrupted run keeps what it
generated. The file is rewritten whole under a file lock on every write, so xdist workers
never interleave, a question answered twice keeps only its latest answer, and the file is
always sorted by question id: the ``predictions:`` backend can grade it again as it is
(``--sqleval-backend=predictions:runs/a1/predictions.jsonl``). Each process keeps the
lines it last wrote and reads the file again only when another process has replaced it
since: parsing it on every write made a run of N questions cost O(N²) on the generation
loop (about 50 ms a question at 500)."""
from __future__ import annotations

import fcntl
import json
import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from ...core import RUNS_ENV, runs_dir

__all__ = ["RUNS_ENV", "record_prediction", "runs_dir"]
_written: dict[Path, tuple[tuple[int, ...] | None, dict[str, str]]] = {}  # path -> (its stat as we left it, qid -> line)


@lru_cache(maxsize=None)
def _natural(key: str) -> tuple[Any, ...]:
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", key))


def _signature(path: Path) -> tuple[int, ...] | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def _read(path: Path) -> dict[str, str]:
    lines: dict[str, str] = {}
    if path.exists():
        for raw in path.read_text(encoding="utf-8").splitlines():
            try:
                obj = json.loads(raw)
            except ValueError:
                continue  # a torn line from a killed run: dropped, the question will be written again
            if isinstance(obj, dict) and isinstance(obj.get("qid"), str):
                lines[obj["qid"]] = raw
    return lines


def record_prediction(root: Path, config: str, line: dict[str, Any]) -> Path:
    """Insert or replace ``line`` (keyed by ``qid``) in ``root/<config>/predictions.jsonl``."""
    folder = root / config
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "predictions.jsonl"
    with open(folder / ".predictions.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        signature, lines = _written.get(path, (None, {}))
        if signature is None or signature != _signature(path):
            lines = _read(path)
        lines[line["qid"]] = json.dumps(line, default=str)
        tmp = folder / f".predictions.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write("".join(lines[qid] + "\n" for qid in sorted(lines, key=_natural)))
        os.replace(tmp, path)
        _written[path] = (_signature(path), lines)
    return path

