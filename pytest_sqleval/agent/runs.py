"""``runs/<config>/predictions.jsonl``: each configuration's answers, one line per question.

Written by the backend right after each generation, so an interrupted run keeps what it
generated. The file is rewritten whole under a file lock on every write (a few dozen
lines per config), so xdist workers never interleave, a question answered twice keeps
only its latest answer, and the file is always sorted by question id: the
``predictions:`` backend can grade it again as it is
(``--sqleval-backend=predictions:runs/a1/predictions.jsonl``)."""
from __future__ import annotations

import fcntl
import json
import os
import re
from pathlib import Path
from typing import Any

RUNS_ENV = "SQLEVAL_RUNS_DIR"


def runs_dir(rootdir: str | Path) -> Path:
    env = os.environ.get(RUNS_ENV)
    return Path(env) if env else Path(rootdir) / "runs"


def _natural(key: str) -> list[Any]:
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", key)]


def record_prediction(root: Path, config: str, line: dict[str, Any]) -> Path:
    """Insert or replace ``line`` (keyed by ``qid``) in ``root/<config>/predictions.jsonl``."""
    folder = root / config
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "predictions.jsonl"
    with open(folder / ".predictions.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        lines: dict[str, dict[str, Any]] = {}
        if path.exists():
            for raw in path.read_text(encoding="utf-8").splitlines():
                try:
                    obj = json.loads(raw)
                except ValueError:
                    continue  # a torn line from a killed run: dropped, the question will be written again
                if isinstance(obj, dict) and isinstance(obj.get("qid"), str):
                    lines[obj["qid"]] = obj
        lines[line["qid"]] = line
        tmp = folder / f".predictions.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            for qid in sorted(lines, key=_natural):
                fh.write(json.dumps(lines[qid], default=str) + "\n")
        os.replace(tmp, path)
    return path
