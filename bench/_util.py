"""Shared pieces of the bench scripts: timing, figures with their baselines, suites on
disk, pytest in a subprocess, and the machine the figures were taken on.

Every figure is a median over repeats and is printed next to a baseline measured in the
same run, as ``ratio = figure / baseline``. Figures go to ``bench/results/latest.json``
so ``run_all.py`` can print one table."""
from __future__ import annotations

import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
RESULTS = BENCH / "results"
CACHE = BENCH / ".cache"  # warehouses built for the bench, kept between runs (gitignored)
PYTHON = sys.executable
VANTAGE = ROOT / "cases" / "vantage"


@dataclass
class Figure:
    """One measured figure: a median, its baseline and what it is held to."""

    section: str
    name: str
    value: float | None
    unit: str
    baseline: float | None = None
    baseline_name: str | None = None
    target: str | None = None
    met: bool | None = None
    note: str | None = None
    samples: list[float] = field(default_factory=list)
    bench: str | None = None  # which bench measured it (run_all.py --only re-measures by bench)

    @property
    def ratio(self) -> float | None:
        if self.value is None or not self.baseline:
            return None
        return self.value / self.baseline


class Report:
    """Collects figures, prints each as it comes, and saves them all."""

    def __init__(self) -> None:
        self.figures: list[Figure] = []
        self.extra: dict[str, Any] = {}
        self.started = time.time()

    def add(self, section: str, name: str, value: float | None, unit: str, *, baseline: float | None = None,
            baseline_name: str | None = None, target: str | None = None, met: bool | None = None,
            note: str | None = None, samples: list[float] | None = None) -> Figure:
        fig = Figure(section, name, value, unit, baseline, baseline_name, target, met, note, list(samples or []))
        self.figures.append(fig)
        print("  " + line_of(fig), flush=True)
        return fig

    def save(self, path: Path | None = None) -> Path:
        path = path or RESULTS / "latest.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        data = {"machine": machine(), "elapsed_s": round(time.time() - self.started, 1), "extra": self.extra,
                "figures": [dict(asdict(f), ratio=f.ratio) for f in self.figures]}
        path.write_text(json.dumps(data, indent=1, default=str) + "\n")
        return path


def fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "n/a"
    if unit == "s":
        return f"{value:.3f} s" if value < 10 else f"{value:.1f} s"
    if unit == "ms":
        return f"{value:.1f} ms"
    if unit == "MiB":
        return f"{value:.0f} MiB"
    if unit == "x":
        return f"{value:.2f}x"
    return f"{value:g} {unit}".strip()


def line_of(f: Figure) -> str:
    s = f"[{f.section}] {f.name}: {fmt(f.value, f.unit)}"
    if f.baseline is not None:
        s += f" | baseline {f.baseline_name or ''} {fmt(f.baseline, f.unit)}"
        if f.ratio is not None:
            s += f" | ratio {f.ratio:.2f}"
    if f.target:
        s += f" | target {f.target}: {'MET' if f.met else 'MISSED' if f.met is False else '-'}"
    if f.note:
        s += f" | {f.note}"
    return s


def median(xs: list[float]) -> float:
    return statistics.median(xs)


def timed(fn: Callable[[], Any], repeat: int = 3, warmup: int = 0, inner: int = 1) -> tuple[float, list[float], Any]:
    """Median wall time of ``fn`` over ``repeat`` runs (after ``warmup`` untimed ones); with
    ``inner``, each run calls ``fn`` that many times and counts the mean (for calls too
    short for the clock)."""
    out = None
    for _ in range(warmup):
        out = fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(inner):
            out = fn()
        times.append((time.perf_counter() - t) / inner)
    return median(times), times, out


def machine() -> dict[str, Any]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem = round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    import duckdb
    import pyarrow
    import pytest
    return {"cpu": cpu, "cores": os.cpu_count(), "mem_gib": mem, "python": platform.python_version(),
            "os": platform.platform(), "duckdb": duckdb.__version__, "pyarrow": pyarrow.__version__,
            "pytest": pytest.__version__, "loadavg": os.getloadavg()}


def load() -> str:
    a, b, c = os.getloadavg()
    return f"load {a:.1f}/{b:.1f}/{c:.1f}"


# -- suites on disk -----------------------------------------------------------------------
def vantage_questions() -> list[dict[str, Any]]:
    """The 50 Vantage questions the benches cycle (the held-out q51-q60 have no naive prediction)."""
    rows = [json.loads(line) for line in (VANTAGE / "questions.jsonl").read_text().splitlines() if line.strip()]
    return [q for q in rows if q.get("split") != "held_out"]


def vantage_naive() -> dict[str, str]:
    out = {}
    for line in (VANTAGE / "predictions" / "naive.jsonl").read_text().splitlines():
        if line.strip():
            obj = json.loads(line)
            out[obj["id"]] = obj["sql"]
    return out


def write_suite(folder: Path, cases: list[dict[str, Any]], database: Path | None, *,
                name: str = "bench", extra_toml: str = "") -> Path:
    """A suite folder: ``sqleval.toml`` + ``questions.jsonl``; the database is linked in."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["[suite]", f'name = "{name}"', 'questions = "questions.jsonl"', 'dialect = "duckdb"']
    if database is not None:
        link = folder / database.name
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(database)
        lines.append(f'database = "{database.name}"')
    (folder / "sqleval.toml").write_text("\n".join(lines) + "\n" + extra_toml)
    with open(folder / "questions.jsonl", "w") as fh:
        for c in cases:
            fh.write(json.dumps(c) + "\n")
    return folder


def write_predictions(path: Path, preds: dict[str, str]) -> Path:
    with open(path, "w") as fh:
        for cid, sql in preds.items():
            fh.write(json.dumps({"id": cid, "sql": sql}) + "\n")
    return path


def variants(n: int, *, distinct_gold: bool = False) -> list[dict[str, Any]]:
    """``n`` cases cycled from the 50 Vantage questions (``q07_v003``). With
    ``distinct_gold`` each variant's gold SQL differs in text (a trailing comment), so
    each has its own cached gold answer; otherwise variants share the question's."""
    base = vantage_questions()
    out = []
    for i in range(n):
        q = dict(base[i % len(base)])
        v = i // len(base)
        q["id"] = f"{q['id']}_v{v:03d}"
        q["question"] = f"{q['question']} (variant {v})"
        if distinct_gold:
            q["gold_sql"] = f"{q['gold_sql']} -- v{v}"
        out.append(q)
    return out


# -- running pytest -----------------------------------------------------------------------
def pytest_cmd(*args: str) -> list[str]:
    return [PYTHON, "-m", "pytest", *args]


# one bench process's time limit; ``SQLEVAL_BENCH_TIMEOUT_S`` raises it on a loaded machine, where a
# Vantage first run with 8 variants passed 900 s of wall time at load 17-35 (sessions 49, 50)
RUN_TIMEOUT_S = float(os.environ.get("SQLEVAL_BENCH_TIMEOUT_S", "900"))


def run(cmd: list[str], *, cwd: Path, env: dict[str, str] | None = None, timeout: float | None = None,
        root_first: bool = True) -> tuple[float, subprocess.CompletedProcess[str]]:
    full_env = dict(os.environ)
    full_env.pop("PYTEST_ADDOPTS", None)
    full_env.pop("PYTEST_XDIST_AUTO_NUM_WORKERS", None)
    full_env.pop("PYTHONDONTWRITEBYTECODE", None)  # as users run it: bytecode (and pytest's rewritten modules) cached
    if env:
        full_env.update(env)
    # the checkout this bench lives in, not whichever copy of the plugin is installed
    # (``root_first=False``: the ``PYTHONPATH`` given in ``env`` comes first)
    first = (str(ROOT), full_env.get("PYTHONPATH")) if root_first else (full_env.get("PYTHONPATH"), str(ROOT))
    full_env["PYTHONPATH"] = os.pathsep.join(p for p in first if p)
    t = time.perf_counter()
    proc = subprocess.run(cmd, cwd=str(cwd), env=full_env, capture_output=True, text=True,
                          timeout=RUN_TIMEOUT_S if timeout is None else timeout)
    return time.perf_counter() - t, proc


def check(proc: subprocess.CompletedProcess[str], ok: tuple[int, ...] = (0, 1)) -> None:
    if proc.returncode not in ok:
        sys.stderr.write(proc.stdout[-4000:] + "\n" + proc.stderr[-4000:] + "\n")
        raise RuntimeError(f"command failed with exit code {proc.returncode}: {' '.join(proc.args)}")


def read_records(results_dir: Path) -> list[dict[str, Any]]:
    path = results_dir / "results.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def fresh(path: Path) -> Path:
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path


def fit_line(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """Least squares ``y = a + b x``: returns (a, b)."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else 0.0
    return my - b * mx, b


def vantage_database(scale: int = 1) -> Path:
    """The Vantage warehouse: scale 1 is the suite's own snapshot (built on first use);
    larger scales are built once into ``bench/.cache``."""
    if scale == 1:
        db = VANTAGE / "vrg_snapshot_2025-11-30.duckdb"
        if not db.exists():
            from pytest_sqleval.core.cases import load_manifest
            from pytest_sqleval.core.engines.build import ensure_database
            ensure_database(db, load_manifest(VANTAGE / "sqleval.toml").build)
        return db
    out = CACHE / f"vantage-scale{scale}"
    dbs = sorted(out.glob("*.duckdb")) if out.exists() else []
    if not dbs:
        print(f"  building the Vantage warehouse at scale {scale} into {out} (once) ...", flush=True)
        fresh(out)
        _, proc = run([PYTHON, "-m", "pytest_sqleval.products.warehouse", "build", "--scale", str(scale), "--out", str(out)], cwd=ROOT,
                      timeout=1800)
        check(proc, (0,))
        dbs = sorted(out.glob("*.duckdb"))
    return dbs[0]
