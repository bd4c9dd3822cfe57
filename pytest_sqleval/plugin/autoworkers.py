"""``-n auto`` on a suite too small to gain from workers runs serially, saying so.

Starting xdist workers costs each of them an interpreter, pytest, the plugin, a whole
collection and an engine: about a second more than a serial start on 2 cores, and the
controller then handles every report on top (see BENCHMARKS.md, "Own cost per case").
A suite whose serial run is expected to take less than ``SERIAL_BELOW_S`` gains nothing
from workers, so ``-n auto`` (a request to go as fast as the machine allows, not for a
number of workers) runs it serially. The expected time is the suite's cases times their
mean duration in the last run of the suite (remembered in the sqleval cache folder); a
suite never run is taken to have ``UNKNOWN_CASE_S`` per case. An explicit ``-n N``, the
``PYTEST_XDIST_AUTO_NUM_WORKERS`` variable, or a command line naming anything besides
suites keeps xdist's own choice."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

SERIAL_BELOW_S = 5.0  # expected serial seconds below which -n auto runs serially
UNKNOWN_CASE_S = 0.005  # a case of a suite never run here: a small case (a few ms graded serially)
MEMORY_NAME = "case_seconds.json"  # in the sqleval cache folder: questions file -> cases, seconds
DECISION_KEY: pytest.StashKey[str] = pytest.StashKey()
_TEST_FILES = tuple(f"{depth}{name}" for depth in ("", "*/", "*/*/") for name in ("test_*.py", "*_test.py"))


def questions_files(args: list[str], rootpath: Path) -> list[Path] | None:
    """The questions files the command line names, or None when it names anything else
    (a test file, a node id, a folder without a suite): then xdist decides as usual."""
    from ..core.cases import find_manifest_for
    from ..core.errors import SqlevalError
    found: list[Path] = []
    for arg in args:
        if "::" in arg:
            return None
        path = Path(rootpath, arg)
        if path.is_dir() and any(True for pattern in _TEST_FILES for _ in path.glob(pattern)):
            return None  # ordinary tests too: their cost is unknown here
        candidates = ([path] if path.is_file() else
                      [p for pattern in ("*.json*", "*/*.json*", "*/*/*.json*") for p in sorted(path.glob(pattern))]
                      if path.is_dir() else [])
        owned = []
        for candidate in candidates:
            if candidate.suffix in (".json", ".jsonl") and (candidate.parent / "sqleval.toml").is_file():
                try:
                    if find_manifest_for(candidate) is not None:
                        owned.append(candidate)
                except SqlevalError:
                    return None  # a broken suite: reported by collection, wherever it runs
        if not owned:
            return None
        found += owned
    return found or None


def count_cases(path: Path) -> int:
    """The cases in a questions file, without reading them as cases: its lines (JSONL) or
    its list's length (a Spider/BIRD JSON file)."""
    try:
        if path.suffix == ".jsonl":
            with open(path, "rb") as fh:
                return sum(1 for line in fh if line.strip())
        data = json.loads(path.read_text(encoding="utf-8"))
        return len(data) if isinstance(data, list) else 1
    except (OSError, ValueError):
        return 0


def memory_path(config: pytest.Config) -> Path:
    from .runconfig import _resolve
    return _resolve(Path(str(config.rootpath)), config.getoption("sqleval_cache_dir") or ".sqleval-cache") / MEMORY_NAME


def read_memory(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def expected_seconds(files: list[Path], rootpath: Path, memory: dict[str, Any]) -> float:
    total = 0.0
    for path in files:
        cases = count_cases(path)
        known = memory.get(_key(path, rootpath))
        per_case = UNKNOWN_CASE_S
        if isinstance(known, dict) and isinstance(known.get("cases"), int) and known["cases"] > 0:
            seconds = known.get("seconds")
            if isinstance(seconds, (int, float)) and seconds >= 0:
                per_case = seconds / known["cases"]
        total += cases * per_case
    return total


def _key(path: Path, rootpath: Path) -> str:
    try:
        return path.resolve().relative_to(rootpath.resolve()).as_posix()
    except ValueError:
        return path.resolve().as_posix()


def auto_workers(config: pytest.Config) -> int | None:
    """0 (serial) when ``-n auto`` should not start workers for this run, else None."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS") or config.getoption("usepdb", False):
        return None
    rootpath = Path(str(config.rootpath))
    files = questions_files([str(a) for a in config.args], rootpath)
    if files is None:
        return None
    expected = expected_seconds(files, rootpath, read_memory(memory_path(config)))
    if expected >= SERIAL_BELOW_S:
        return None
    cases = sum(count_cases(p) for p in files)
    config.stash[DECISION_KEY] = (
        f"sqleval: -n {config.option.numprocesses}: running serially: {cases:,} cases expected to take about "
        f"{expected:.1f} s, less than starting workers gains (below {SERIAL_BELOW_S:g} s); -n 2 starts workers anyway")
    return 0


def remember(config: pytest.Config, seconds_by_file: dict[str, tuple[int, float]]) -> None:
    """The run's cases and their summed durations, per questions file's node id (the controller's, at
    the end of a run): the next ``-n auto`` run of the suite decides from them."""
    if not seconds_by_file:
        return
    path = memory_path(config)
    memory = read_memory(path)
    rootpath = Path(str(config.rootpath))
    for file_nodeid, (cases, seconds) in seconds_by_file.items():
        memory[_key(rootpath / file_nodeid, rootpath)] = {"cases": cases, "seconds": round(seconds, 4)}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(memory, sort_keys=True), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass  # a cache that cannot be written costs only the next decision's precision
