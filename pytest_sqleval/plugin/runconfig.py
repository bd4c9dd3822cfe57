"""The run's configuration, read once from pytest's options and ini keys: which backends,
how much concurrency, where caches, results and the ablation go, the judge and the gate."""
from __future__ import annotations

import os
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from ..core.errors import UsageError
from .gate import min_pass_rate
from .sharding import Shard, read_durations


@dataclass
class RunConfig:
    run_id: str
    is_worker: bool
    worker_index: int
    worker_count: int
    backend_spec: str
    concurrency: int  # backend calls in flight in this process (the run's limit split between workers)
    generation_timeout: float
    use_cache: bool
    cache_dir: Path
    results_dir: Path
    ablation_dir: Path
    min_pass_rate: float | None
    variants: int | None  # --sqleval-variants; None: each suite's [variants] count
    judge_mode: str
    judge_model: str | None
    xdist_workers: int
    shard: Shard | None = None  # --sqleval-shard: this machine's part of the run
    explicit_run_id: str | None = None  # --sqleval-run-id
    shard_durations: dict[str, int] = field(default_factory=dict)  # node id -> ms, balancing the shards
    engine: str | None = None  # --sqleval-engine: every suite's database graded on this engine (manifest.check_engine)
    spark_remote: str | None = None  # --sqleval-spark-remote: every suite graded on this Connect server's catalog
    #: when the run began (``time.time_ns``; an xdist worker's is its controller's): a gold answer
    #: stored after it is not ``cached`` in a record, whichever process of the run stored it
    began_ns: int = 0

    @classmethod
    def from_pytest(cls, config: pytest.Config) -> "RunConfig":
        opt = config.getoption
        winput = getattr(config, "workerinput", {})
        worker_index, worker_count = _worker_position(winput)
        concurrency = opt("sqleval_concurrency")  # numbers arrive checked (numeric.py, the options' type=)
        root = Path(str(config.rootpath))
        judge_mode, judge_model = _judge_settings(config)
        ablation = opt("sqleval_ablation_dir") or config.getini("sqleval_ablation_dir")
        for option, value in (("--sqleval-results", opt("sqleval_results")), ("--sqleval-cache-dir", opt("sqleval_cache_dir")),
                              ("--sqleval-ablation-dir", ablation)):
            if value:  # a folder the user named: checked now, before anything is generated or graded
                check_folder(option, _resolve(root, value))
        explicit_run_id = _run_id(opt("sqleval_run_id"))
        durations = opt("sqleval_shard_durations") or config.getini("sqleval_shard_durations")
        return cls(
            run_id=winput.get("sqleval_run_id") or explicit_run_id or time.strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:6],
            is_worker=hasattr(config, "workerinput"), worker_index=worker_index, worker_count=worker_count,
            backend_spec=opt("sqleval_backend") or "gold",
            concurrency=max(1, concurrency // worker_count),  # the limit is for the whole run: workers share it
            generation_timeout=opt("sqleval_generation_timeout"), use_cache=not opt("sqleval_no_cache"),
            cache_dir=_resolve(root, opt("sqleval_cache_dir") or ".sqleval-cache"),
            results_dir=_resolve(root, opt("sqleval_results") or "sqleval-results"),
            ablation_dir=_resolve(root, opt("sqleval_ablation_dir") or config.getini("sqleval_ablation_dir") or "report"),
            min_pass_rate=min_pass_rate(config), variants=opt("sqleval_variants"), judge_mode=judge_mode, judge_model=judge_model,
            xdist_workers=_xdist_workers(config), shard=opt("sqleval_shard"), explicit_run_id=explicit_run_id,
            shard_durations=read_durations(_resolve(root, durations)) if durations and opt("sqleval_shard") else {},
            engine=opt("sqleval_engine", None), spark_remote=opt("sqleval_spark_remote", None),
            began_ns=int(winput.get("sqleval_began_ns") or time.time_ns()))


def _run_id(value: str | None) -> str | None:
    """An id a file name can hold: it names the run's journal and generation folders."""
    if value is None:
        return None
    if not value.strip() or any(not (c.isalnum() or c in "-_.") for c in value) or value.startswith("."):
        raise UsageError(f"--sqleval-run-id={value!r}: expected letters, digits, '-', '_' or '.' (not first), "
                         "e.g. --sqleval-run-id=${{ github.run_id }} in GitHub Actions")
    return value


def _judge_settings(config: pytest.Config) -> tuple[str, str | None]:
    from ..core.grading.modes import JUDGE_MODES  # not the verdict module: it imports sqlglot
    mode = config.getoption("sqleval_judge") or config.getini("sqleval_judge") or "off"
    if mode not in JUDGE_MODES:
        raise UsageError(f"--sqleval-judge must be one of {', '.join(JUDGE_MODES)}, got {mode!r}")
    model = config.getoption("sqleval_judge_model") or config.getini("sqleval_judge_model") or None
    if mode != "off" and not model:
        raise UsageError(f"--sqleval-judge={mode} needs a judge model: --sqleval-judge-model=openai/gpt-4o-mini "
                         "(any litellm model string; the provider's API key comes from its usual environment "
                         "variable or SQLEVAL_JUDGE_API_KEY)")
    return mode, model



def check_folder(option: str, folder: Path) -> None:
    """That ``folder`` exists as a folder this process can write, or can be made: the
    nearest part of the path that exists must be a writable folder. Nothing is created,
    so a run that never writes there (no benchmark collected) leaves no trace."""
    problem = folder_problem(folder)
    if problem is not None:
        example = _DEFAULT_FOLDERS.get(option, "out")
        raise UsageError(f"{option}={folder}: {problem}\n  fix: point {option} at a folder you can write "
                         f"(it is created if missing), e.g. {option}={example} under the project")


_DEFAULT_FOLDERS = {"--sqleval-results": "sqleval-results", "--sqleval-cache-dir": ".sqleval-cache",
                    "--sqleval-ablation-dir": "report"}


def folder_problem(folder: Path) -> str | None:
    """Why ``folder`` cannot be used as an output folder, or None."""
    existing = folder
    while not os.path.lexists(existing) and existing != existing.parent:
        existing = existing.parent
    if existing == folder and not existing.is_dir():
        return "it exists and is not a folder"
    if not existing.is_dir():
        return f"cannot create the folder: {existing} is a file, not a folder"
    if not os.access(existing, os.W_OK | os.X_OK):
        return f"cannot create or write the folder: {existing} is not writable"
    return None


def _resolve(root: Path, value: str) -> Path:
    p = Path(value).expanduser()
    return p if p.is_absolute() else root / p


def _worker_position(winput: dict[str, Any]) -> tuple[int, int]:
    wid = winput.get("workerid", "gw0")
    try:
        index = int(str(wid).lstrip("gw"))
    except ValueError:
        index = 0
    count = int(winput.get("workercount", 1) or 1)
    return index, max(1, count)



def _xdist_workers(config: pytest.Config) -> int:
    n = getattr(config.option, "numprocesses", None)
    return int(n) if isinstance(n, int) else 0
