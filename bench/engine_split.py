"""Where the engine process's CPU goes per grade request, replayed outside pytest.

    python bench/engine_split.py [--cases 1000] [--repeat 3] [--before DIR] [--beside]
    python bench/engine_split.py [--cases 1000] --in-place

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
run does; what it leaves out is the engine process's start-up, its loop around the
handler, and that in a real run the grading process is busy beside it: on this 2-core
machine a busy neighbour makes the same requests cost about a quarter more CPU
(``--beside``: each round replayed alone, then beside a busy Python process; session 48,
"engcpu"), which DuckDB alone, timed with nothing beside it, does not pay. ``--in-place``
times the real engine process instead, in one warm run (thread-CPU timers around its
steps, GC, every thread's CPU, user and system time, page faults, start-up), beside
DuckDB alone's CPU on the same SQL. Figures go to ``engine_split.json`` (``engine_inplace.json``)
in the work folder.
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

# Both hooks' import hook: once the grading handler's module is loaded, ``_patch`` it.
_FINDER = '''
_NAME = "pytest_sqleval.core.grading.engine_side"

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
'''

# Put first on the engine child's PYTHONPATH: wraps GradingHandler.grade, once its module is
# loaded, to append each request (with what the handler was made with) to $ENGINE_SPLIT_CAPTURE.
_HOOK = '''
import importlib.abc, importlib.util, os, pickle, sys

def _patch(module):
    real = module.GradingHandler.grade
    path = f"{os.environ['ENGINE_SPLIT_CAPTURE']}.{os.getpid()}.pkl"
    def grade(self, req, out):
        with open(path, "ab") as fh:
            pickle.dump((str(self.db.path), self.limits, str(self.gold_dir), req), fh)
        return real(self, req, out)
    module.GradingHandler.grade = grade

''' + _FINDER + '''
if os.environ.get("ENGINE_SPLIT_CAPTURE"):
    sys.meta_path.insert(0, _Finder())
'''

# Put first on the engine child's PYTHONPATH by ``in_place``: thread-CPU timers around the
# handler's steps and the host's frames, GC's pauses, and at exit every thread's CPU, the
# process's user and system time and page faults, to $ENGINE_SPLIT_TIMES.<pid>.json.
_TIMERS = '''
import atexit, gc, importlib.abc, importlib.util, json, os, resource, sys, time
S = {"steps": {}, "in_peers": False}

def _add(name, spent):
    got = S["steps"].setdefault(name, [0.0, 0])
    got[0] += spent
    got[1] += 1

def _timed(name, fn):
    def step(*args, **kwargs):
        t = time.thread_time()
        try:
            return fn(*args, **kwargs)
        finally:
            _add(name() if callable(name) else name, time.thread_time() - t)
    return step

def _usage():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return {"cpu": time.process_time(), "user": r.ru_utime, "sys": r.ru_stime, "minflt": r.ru_minflt,
            "wall": time.monotonic()}

def _patch(module):
    S["handler_imported"] = _usage()
    host = sys.modules["pytest_sqleval.core.engines.host"]
    real_serve = host._Server.serve
    def serve(self, op, payload, out):
        S.setdefault("first_request", _usage())
        return real_serve(self, op, payload, out)
    host._Server.serve = _timed(lambda: "serve", serve)
    host._write = _timed("frames written (pipe)", host._write)
    from pytest_sqleval.core.engines import duckdb_sandbox
    duckdb_sandbox.DuckDBSandbox.run = _timed(
        lambda: "sandbox runs: peers' re-runs" if S["in_peers"] else "sandbox runs: predictions",
        duckdb_sandbox.DuckDBSandbox.run)
    handler = module.GradingHandler
    real_peers = handler._peers_any_gold
    def peers(*args, **kwargs):
        S["in_peers"] = True
        try:
            return real_peers(*args, **kwargs)
        finally:
            S["in_peers"] = False
    handler._peers_any_gold = _timed("peers' verdicts (re-runs included)", peers)
    handler._against = _timed("comparison", handler._against)
    handler._gold_table = _timed("gold table and meta", handler._gold_table)
    handler._stored_meta = _timed("gold table and meta", handler._stored_meta)
    for name, label in (("_preview", "preview"), ("structure_on_wire", "structural diff")):
        setattr(module, name, _timed(label, getattr(module, name)))

''' + _FINDER + '''
def _gc(phase, info):
    if phase == "start":
        S["gc_from"] = time.thread_time()
    elif "gc_from" in S:
        _add("gc", time.thread_time() - S.pop("gc_from"))

def _dump():
    S["exit"] = _usage()
    threads = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            stat = open(f"/proc/self/task/{tid}/stat").read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        threads[tid] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    S["threads_s"] = sorted(threads.values(), reverse=True)
    S["ctxt"] = [line.split()[1] for line in open("/proc/self/status") if "ctxt_switches" in line]
    S.pop("in_peers")
    with open(f"{os.environ['ENGINE_SPLIT_TIMES']}.{os.getpid()}.json", "w") as fh:
        json.dump(S, fh)

if os.environ.get("ENGINE_SPLIT_TIMES") and "pytest_sqleval.core.engines.host" in sys.orig_argv:
    sys.meta_path.insert(0, _Finder())
    gc.callbacks.append(_gc)
    atexit.register(_dump)
'''


def _suite_run(n: int, name: str, hook: str, env: dict[str, str]) -> tuple[Path, list[str]]:
    """One warm pytest run of the own-cost suite with ``hook`` as the ``sitecustomize`` of
    its processes (first on ``PYTHONPATH``; it acts in the engine process alone), after a
    warm-up run that stores the gold answers; the database and the predictions' SQL."""
    import owncost_bench
    from _util import PYTHON, ROOT, check, run
    owncost_bench.WORK = owncost_bench.throughput_bench.WORK = WORK
    suite, preds, database, sqls = owncost_bench.setup(n, 1)
    cache, results = WORK / "cache", WORK / "results"
    args = owncost_bench.suite_args(suite, preds, cache, results)
    check(run([PYTHON, "-P", "-m", "pytest", *args], cwd=ROOT)[1])  # warm-up: the gold answers stored
    folder = WORK / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(hook)
    check(run([PYTHON, "-P", "-m", "pytest", *args], cwd=ROOT, root_first=False,
              env={"PYTHONPATH": str(folder), **env})[1])
    return database, sqls


def capture(n: int) -> Path:
    """The ``grade`` requests of one warm pytest run of the own-cost suite, in a pickle file."""
    for old in WORK.glob("capture.*.pkl"):
        old.unlink()
    _suite_run(n, "hook", _HOOK, {"ENGINE_SPLIT_CAPTURE": str(WORK / "capture")})
    files = sorted(WORK.glob("capture.*.pkl"))
    if len(files) != 1:
        raise RuntimeError(f"expected one engine process's capture, found {files}")
    return files[0]


def in_place(n: int) -> dict[str, Any]:
    """The real engine process's CPU, timed in place (``_TIMERS``) in one warm run, beside
    DuckDB alone's (``throughput_bench.duckdb_alone``, in this process) on the same SQL
    right after: what the replay leaves out (start-up, the loop, other threads, the kernel,
    and the queries run beside a busy grading process) shows here."""
    import throughput_bench
    for old in WORK.glob("inplace.*.json"):
        old.unlink()
    database, sqls = _suite_run(n, "timers", _TIMERS, {"ENGINE_SPLIT_TIMES": str(WORK / "inplace")})
    files = sorted(WORK.glob("inplace.*.json"))
    if len(files) != 1:
        raise RuntimeError(f"expected one engine process's timings, found {files}")
    got = json.loads(files[0].read_text())
    cpu0 = time.process_time()
    throughput_bench.duckdb_alone(database, sqls)
    got["duckdb_alone_s"] = time.process_time() - cpu0
    return got


def _busy(seconds: float) -> None:
    """Python work like the grading process's (objects pickled, copied, sorted), for
    ``seconds``: what runs on the other core while the engine process serves a run."""
    end = time.monotonic() + seconds
    rows = [{"a": i, "b": str(i) * 10, "c": [i] * 20} for i in range(20000)]
    while time.monotonic() < end:
        sorted(pickle.loads(pickle.dumps(rows)), key=lambda d: d["b"])


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


def report_in_place(got: dict[str, Any], n: int) -> None:
    """The in-place timings as ms of CPU a request, beside DuckDB alone's per query."""
    ms = lambda seconds: round(1000 * seconds / n, 3)  # noqa: E731
    start, first, end = got["handler_imported"], got["first_request"], got["exit"]
    print(f"engine process: {ms(end['cpu'])} ms a request in all (user {ms(end['user'])}, system {ms(end['sys'])}); "
          f"DuckDB alone {ms(got['duckdb_alone_s'])}")
    print(f"  start-up (to the first request): {ms(first['cpu'])} (the handler imported at {ms(start['cpu'])}; "
          f"{first['wall'] - start['wall']:.3f} s of wall from then to the first request)")
    print(f"  serving: {ms(end['cpu'] - first['cpu'])} (system {ms(end['sys'] - first['sys'])}, "
          f"page faults {end['minflt'] - first['minflt']}); threads' CPU, s: {got['threads_s'][:4]}; "
          f"context switches (voluntary, not): {got['ctxt']}")
    for name, (spent, calls) in sorted(got["steps"].items(), key=lambda kv: -kv[1][0]):
        print(f"    {name:42s} {ms(spent):7.3f}  ({calls} calls)")
    (WORK / "engine_inplace.json").write_text(json.dumps(got, indent=1))


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
    ap.add_argument("--in-place", action="store_true", help="time the real engine process in one run, then stop")
    ap.add_argument("--beside", action="store_true",
                    help="each round replayed twice: alone, then with a busy Python process beside it")
    ap.add_argument("--busy", type=float, default=None, help=argparse.SUPPRESS)  # the busy process's part
    ap.add_argument("--replay", type=Path, default=None, help=argparse.SUPPRESS)  # the child's part
    ap.add_argument("--answers", type=Path, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.busy is not None:
        _busy(args.busy)
        return
    if args.replay is not None:  # run in the code's folder: its package first, not this script's checkout's
        sys.path.insert(0, os.getcwd())
        print(json.dumps(replay(args.replay, args.repeat, args.answers)))
        return
    from _util import PYTHON, ROOT, load
    WORK.mkdir(parents=True, exist_ok=True)
    if args.in_place:
        report_in_place(in_place(args.cases), args.cases)
        return
    cap = args.capture or capture(args.cases)
    codes = {"this checkout": ROOT, **({"before": args.before} if args.before else {})}
    if args.beside:
        codes.update({f"{name}, beside a busy process": code for name, code in list(codes.items())})
    figures: dict[str, list[dict[str, Any]]] = {name: [] for name in codes}
    print(f"== engine process split: {cap} ({load()})", flush=True)
    for r in range(args.repeat):  # alternated, a process per code and round
        for name, code in codes.items():
            answers = WORK / f"answers-{name.replace(' ', '-').replace(',', '')}.pkl"
            busy = subprocess.Popen([PYTHON, "-P", __file__, "--busy", "600"]) if "busy" in name else None
            proc = subprocess.run([PYTHON, "-P", __file__, "--replay", str(cap), "--repeat", "1",
                                   "--answers", str(answers)], cwd=code, env={**os.environ, "PYTHONPATH": str(code)},
                                  capture_output=True, text=True, timeout=900)
            if busy is not None:
                busy.kill()
                busy.wait()
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
