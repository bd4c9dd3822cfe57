"""Where the engine process's CPU goes per grade request, replayed outside pytest.

    python bench/engine_split.py [--cases 1000] [--repeat 3] [--before DIR]

On the own-cost bench's suite (``--cases`` Vantage cases, gold answers cached by a warm-up
run), one pytest run captures every ``grade`` request its engine process serves (a
``sitecustomize`` put first on the child's ``PYTHONPATH``, in the work folder: nothing in
the package changes). The captured requests are then replayed on a ``GradingHandler`` in a
process of their own, as the engine process serves them (each request unpickled, graded,
its answer pickled and written to ``/dev/null``), with thread-CPU timers around the
handler's steps: the sandbox's runs (the prediction, Spider's re-runs), the comparison,
the peers' verdicts, the preview, the structural diff, the frames, the answer. With
``--before DIR`` (a folder holding another ``pytest_sqleval``, e.g. ``git archive main
pytest_sqleval | tar -x -C DIR``) the same requests are replayed on that code too,
alternated round by round, and the two codes' answers compared (``elapsed_ms`` blanked):
the same verdicts, evidence and all, is what a change to the engine's path must keep.

The replay measures CPU, not wall, so it holds on a loaded machine better than a whole
run does; what it leaves out is the engine process's start-up and its loop around the
handler (reading requests, the ``started`` frames), which a whole run's CPU split
(``owncost_bench.py``) includes. Figures go to ``engine_split.json`` in the work folder.
"""
from __future__ import annotations

import argparse
import json
import os
import pickle
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

WORK = Path(os.environ.get("SQLEVAL_BENCH_WORK", "/tmp/sqleval-bench")) / "engine_split"

# Put first on the engine child's PYTHONPATH: wraps GradingHandler.grade, once its module is
# loaded, to append each request (with what the handler was made with) to $ENGINE_SPLIT_CAPTURE.
_HOOK = '''
import importlib.abc, importlib.util, os, pickle, sys
_NAME = "pytest_sqleval.core.grading.engine_side"

def _patch(module):
    real = module.GradingHandler.grade
    path = f"{os.environ['ENGINE_SPLIT_CAPTURE']}.{os.getpid()}.pkl"
    def grade(self, req, out):
        with open(path, "ab") as fh:
            pickle.dump((str(self.db.path), self.limits, str(self.gold_dir), req), fh)
        return real(self, req, out)
    module.GradingHandler.grade = grade

class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != _NAME:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        run = spec.loader.exec_module
        def exec_module(module):
            run(module)
            _patch(module)
        spec.loader.exec_module = exec_module
        return spec

if os.environ.get("ENGINE_SPLIT_CAPTURE"):
    sys.meta_path.insert(0, _Finder())
'''


def capture(n: int) -> Path:
    """The ``grade`` requests of one warm pytest run of the own-cost suite, in a pickle file."""
    import owncost_bench
    from _util import PYTHON, ROOT, check, run
    owncost_bench.WORK = owncost_bench.throughput_bench.WORK = WORK
    suite, preds, _, _ = owncost_bench.setup(n, 1)
    cache, results = WORK / "cache", WORK / "results"
    args = owncost_bench.suite_args(suite, preds, cache, results)
    check(run([PYTHON, "-P", "-m", "pytest", *args], cwd=ROOT)[1])  # warm-up: the gold answers stored
    hook = WORK / "hook"
    hook.mkdir(parents=True, exist_ok=True)
    (hook / "sitecustomize.py").write_text(_HOOK)
    for old in WORK.glob("capture.*.pkl"):
        old.unlink()
    args = owncost_bench.suite_args(suite, preds, cache, results)
    check(run([PYTHON, "-P", "-m", "pytest", *args], cwd=ROOT, root_first=False,
              env={"PYTHONPATH": str(hook), "ENGINE_SPLIT_CAPTURE": str(WORK / "capture")})[1])
    files = sorted(WORK.glob("capture.*.pkl"))
    if len(files) != 1:
        raise RuntimeError(f"expected one engine process's capture, found {files}")
    return files[0]


def _requests(path: Path) -> list[tuple[str, Any, str, dict[str, Any]]]:
    out = []
    with open(path, "rb") as fh:
        while True:
            try:
                out.append(pickle.load(fh))
            except EOFError:
                return out


def replay(path: Path, repeat: int, answers_to: Path) -> dict[str, Any]:
    """In this process (the code on ``sys.path`` first): the captured requests graded
    ``repeat`` times on fresh handlers over one sandbox; thread CPU per step, ms a request,
    the best round's; the last round's answers (``elapsed_ms`` blanked) to ``answers_to``."""
    import pytest_sqleval.core.grading.engine_side as es
    from pytest_sqleval.core.engines import open_sandbox
    from pytest_sqleval.core.engines.host import _write
    reqs = _requests(path)
    database, limits, gold_dir, _ = reqs[0]
    db = open_sandbox(database, limits)
    spent: dict[str, float] = {}

    def timed(name: str, fn: Any) -> Any:
        def step(*args: Any, **kwargs: Any) -> Any:
            t = time.thread_time()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[name] = spent.get(name, 0.0) + time.thread_time() - t
        return step
    handler = es.GradingHandler
    for method, name in (("_against", "comparison"), ("_peers_any_gold", "peers' verdicts (re-runs included)")):
        setattr(handler, method, timed(name, getattr(handler, method)))
    for function, name in (("_preview", "preview"), ("structure_on_wire", "structural diff"),
                           ("executed", "frames"), ("partial", "frames"), ("started", "frames")):
        setattr(es, function, timed(name, getattr(es, function)))
    db.run = timed("sandbox runs", db.run)  # type: ignore[method-assign]
    rounds = []
    blobs = [pickle.dumps(req, protocol=pickle.HIGHEST_PROTOCOL) for *_, req in reqs]
    with open(os.devnull, "wb") as out:
        for _ in range(repeat):
            spent.clear()
            h = handler(db, limits, gold_dir)
            answers = []
            t0 = time.thread_time()
            for blob in blobs:
                t = time.thread_time()
                req = pickle.loads(blob)
                spent["pipe: request unpickled, answer pickled and written"] = \
                    spent.get("pipe: request unpickled, answer pickled and written", 0.0) + time.thread_time() - t
                answer = h.grade(req, out)
                t = time.thread_time()
                _write(out, ("result", answer, (0.0, 0.0)))
                spent["pipe: request unpickled, answer pickled and written"] += time.thread_time() - t
                answers.append(answer)
            total = time.thread_time() - t0
            rounds.append({"total": total, **spent})
    best = min(rounds, key=lambda r: r["total"])
    with open(answers_to, "wb") as fh:
        pickle.dump(_blank(answers), fh)
    n = len(reqs)
    return {"requests": n, "rounds_total_ms": [round(1000 * r["total"] / n, 3) for r in rounds],
            "ms_per_request": {k: round(1000 * v / n, 3) for k, v in best.items()}}


def _blank(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: None if k == "elapsed_ms" else _blank(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_blank(v) for v in value]
    if hasattr(value, "equals") and hasattr(value, "num_rows"):  # an Arrow table: by content
        return ("table", value.schema.to_string(), value.to_pylist())
    return value


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3, help="replay rounds per code (best taken)")
    ap.add_argument("--before", type=Path, default=None, metavar="DIR", help="another pytest_sqleval, replayed too")
    ap.add_argument("--capture", type=Path, default=None, help="replay this capture instead of making one")
    ap.add_argument("--replay", type=Path, default=None, help=argparse.SUPPRESS)  # the child's part
    ap.add_argument("--answers", type=Path, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.replay is not None:  # run in the code's folder: its package first, not this script's checkout's
        sys.path.insert(0, os.getcwd())
        print(json.dumps(replay(args.replay, args.repeat, args.answers)))
        return
    from _util import PYTHON, ROOT, load
    WORK.mkdir(parents=True, exist_ok=True)
    cap = args.capture or capture(args.cases)
    codes = {"this checkout": ROOT, **({"before": args.before} if args.before else {})}
    figures: dict[str, list[dict[str, Any]]] = {name: [] for name in codes}
    print(f"== engine process split: {cap} ({load()})", flush=True)
    for r in range(args.repeat):  # alternated, a process per code and round
        for name, code in codes.items():
            answers = WORK / f"answers-{name.replace(' ', '-')}.pkl"
            proc = subprocess.run([PYTHON, "-P", __file__, "--replay", str(cap), "--repeat", "1",
                                   "--answers", str(answers)], cwd=code, env={**os.environ, "PYTHONPATH": str(code)},
                                  capture_output=True, text=True, timeout=900)
            if proc.returncode:
                raise RuntimeError(proc.stderr[-2000:])
            figures[name].append(json.loads(proc.stdout.strip().splitlines()[-1]))
            print(f"  round {r + 1}, {name}: {figures[name][-1]['ms_per_request']}", flush=True)
    out: dict[str, Any] = {"capture": str(cap), "load": load(), "codes": {k: str(v) for k, v in codes.items()}}
    for name, rounds in figures.items():
        steps = sorted({k for r in rounds for k in r["ms_per_request"]})
        best = {k: min(r["ms_per_request"].get(k, 0.0) for r in rounds) for k in steps}
        out[name] = {"best_ms_per_request": best, "rounds": rounds}
        print(f"{name}: best of {len(rounds)}, ms of thread CPU a request: {best}")
    if args.before:
        a = pickle.loads((WORK / "answers-this-checkout.pkl").read_bytes())
        b = pickle.loads((WORK / "answers-before.pkl").read_bytes())
        same = sum(x == y for x, y in zip(a, b))
        out["answers_equal"] = [same, len(a)]
        print(f"answers equal (elapsed_ms blanked): {same} of {len(a)}")
    (WORK / "engine_split.json").write_text(json.dumps(out, indent=1))
    print(f"figures saved to {WORK / 'engine_split.json'}")


if __name__ == "__main__":
    main()
