"""LLM-bound runs and the cache: N cases against the loopback model server
(``tests/llm_server.py``) answering after L seconds, at most C calls in flight.

    python bench/llm_bench.py [--cases 500] [--latency 0.2] [--concurrency 32] [--repeat 3]

Two clients. ``bench/lean_backend.py:generate`` (one raw HTTP POST per case) costs well
under a millisecond of CPU per call, so its figure is the plugin's scheduling. The
built-in ``raw_llm`` backend (litellm, ``--sqleval-model=openai/bench`` with
``--sqleval-api-base`` on the server) is what users run; its figure shows what litellm's
per-call CPU does to the same phase. litellm is also measured on its own, outside pytest:
CPU per call, and the wall time of 10*C calls with nothing else in the process.

The generation phase is timed on the server, from the first request received to the last
answer sent (median of ``repeat`` runs, each from an empty generation cache); its
baseline is N*L/C, the time C perfectly packed calls take. Runs: serial, then the serial
run again on its own cache (no model call, no gold query), then ``-n 2`` (the workers
share C and never ask for one case twice); the same for ``raw_llm``. Gold answers are
warmed first by a gold-backend run.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import resource
import shutil
import sys
import time
import types
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _util import BENCH, PYTHON, Report, check, fresh, load, median, pytest_cmd, read_records, run, vantage_database, variants, write_suite  # noqa: E402
from tests.llm_server import RecordedRequest, Reply, ScriptedLLMServer  # noqa: E402

SECTION = "llm"
WORK = Path("/tmp/sqleval-bench/llm")
LITELLM_ENV = {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "SQLEVAL_RUNS_DIR": str(WORK / "runs")}


def responder(cases: list[dict[str, Any]], latency: float) -> Any:
    """Each case's gold SQL, after ``latency`` seconds. The lean client names its case in
    ``metadata``; ``raw_llm``'s prompt ends with "Question: ..." (``agent/prompts.py``)."""
    by_id = {c["id"]: c["gold_sql"] for c in cases}
    by_question = {c["question"]: c["gold_sql"] for c in cases}

    def reply(req: RecordedRequest) -> Reply:
        case = ((req.body or {}).get("metadata") or {}).get("case")
        if case is not None:
            return Reply(content=by_id.get(case, "SELECT 1"), delay=latency)
        question = req.prompt_text.rpartition("Question: ")[2].split("\n\n", 1)[0]
        return Reply(content=f"```sql\n{by_question.get(question, 'SELECT 1')}\n```", delay=latency)

    return reply


def case_of(req: RecordedRequest) -> str:
    return ((req.body or {}).get("metadata") or {}).get("case") or req.prompt_text.rpartition("Question: ")[2]


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_bench(report: Report, n: int, latency: float, concurrency: int, repeat: int = 3) -> None:
    print(f"== LLM-bound: {n} cases, L={latency:g} s, C={concurrency}, {repeat} runs each ({load()})", flush=True)
    database = vantage_database(1)
    cases = variants(n)
    suite = write_suite(fresh(WORK / "suite"), cases, database, name="llm-bench")
    cache, results = WORK / "cache", WORK / "results"
    fresh(cache)
    fresh(WORK / "runs")  # raw_llm's predictions.jsonl
    common = [str(suite), f"--sqleval-cache-dir={cache}", f"--sqleval-results={results}", "-q", "-p", "no:cacheprovider",
              "-p", "no:randomly", "--tb=no", "-rN", "--no-header", f"--sqleval-concurrency={concurrency}"]
    _, proc = run(pytest_cmd(*common, "--sqleval-backend=gold"), cwd=suite)  # warm the gold answers
    check(proc)
    ideal = n * latency / concurrency

    with ScriptedLLMServer() as server:
        # The test server listens with socketserver's default backlog of 5: beyond ~16
        # simultaneous connects, SYNs are dropped and retried a second later, which would
        # measure the server, not the plugin. A deeper accept queue removes that.
        server._httpd.socket.listen(1024)
        server.respond_with(responder(cases, latency))
        lean = ["--sqleval-backend=lean_backend:generate"], {"SQLEVAL_BENCH_API_BASE": server.api_base,
                                                             "PYTHONPATH": str(BENCH)}
        raw = ["--sqleval-backend=raw_llm", "--sqleval-model=openai/bench",
               f"--sqleval-api-base={server.api_base}"], LITELLM_ENV

        def generation(backend: tuple[list[str], dict[str, str]], label: str, *extra: str,
                       target: bool = True) -> float:
            """``repeat`` runs from an empty generation cache; returns the median whole-run wall."""
            args, env = backend
            spans, walls, cpus, twice, calls = [], [], [], 0, 0
            for _ in range(repeat):
                shutil.rmtree(cache / "generations", ignore_errors=True)
                before, cpu = len(server.chat_requests), children_cpu()
                wall, proc = run(pytest_cmd(*common, *args, *extra), cwd=suite, env=env)
                check(proc)
                walls.append(wall)
                cpus.append(children_cpu() - cpu)
                reqs = server.chat_requests[before:]
                if not reqs:
                    raise RuntimeError(f"{label}: no model call reached the server:\n{proc.stdout[-2000:]}")
                stamps = sorted(r.received_at for r in reqs)
                spans.append(stamps[-1] + latency - stamps[0])
                calls += len(reqs)
                twice += len(reqs) - len({case_of(r) for r in reqs})
            span = median(spans)
            report.add(SECTION, f"{label}: generation phase (server side)", span, "s", baseline=ideal,
                       baseline_name="N*L/C", target="<= 1.3x N*L/C" if target else None,
                       met=span <= 1.3 * ideal if target else None, samples=spans,
                       note=f"whole pytest run {median(walls):.1f} s, pytest CPU {median(cpus):.1f} s (medians)")
            report.add(SECTION, f"{label}: cases generated twice", float(twice), "", target="0", met=twice == 0,
                       note=f"model calls {calls} for {n} cases in {repeat} runs")
            return median(walls)

        serial_wall = generation(lean, "serial")
        before = len(server.chat_requests)
        cached_wall, proc = run(pytest_cmd(*common, *lean[0]), cwd=suite, env=lean[1])  # the last run again, on its cache
        check(proc)
        recs = read_records(results)
        calls = len(server.chat_requests) - before
        gold_runs = sum(1 for r in recs if r.get("gold") and not r["gold"].get("cached"))
        gens = sum(1 for r in recs if r.get("generation") and not r["generation"].get("cached"))
        report.add("caching", f"second run, {n} cases: model calls", float(calls), "", target="0", met=calls == 0,
                   note=f"generations not from cache: {gens}")
        report.add("caching", f"second run, {n} cases: gold queries executed", float(gold_runs), "", target="0",
                   met=gold_runs == 0, note="from each record's gold.cached")
        report.add(SECTION, "serial: whole pytest run", serial_wall, "s", baseline=cached_wall,
                   baseline_name="the same run on its cache", note="what generating adds to grading's wall time")
        generation(lean, "-n 2", "-n", "2")

        alone = litellm_alone(server.api_base, concurrency)
        report.add(SECTION, "raw_llm: litellm CPU per call (outside pytest)", alone["cpu_ms"]["litellm"], "ms",
                   baseline=1000 * 1.3 * latency / concurrency, baseline_name="1.3*L/C",
                   note="the baseline is the most CPU one event-loop thread may spend per call and still finish "
                        f"within 1.3x N*L/C, with nothing else in the process; the lean client: "
                        f"{alone['cpu_ms']['lean']:.2f} ms")
        report.add(SECTION, f"raw_llm: litellm alone (outside pytest), {alone['calls']} calls", alone["wall_s"]["litellm"],
                   "s", baseline=alone["calls"] * latency / concurrency, baseline_name="N*L/C",
                   note=f"the best litellm does here, with no grading beside it; the lean client: "
                        f"{alone['wall_s']['lean']:.2f} s")
        generation(raw, "raw_llm (litellm) serial", target=False)
        generation(raw, "raw_llm (litellm) -n 2", "-n", "2", target=False)


def litellm_alone(api_base: str, concurrency: int) -> dict[str, Any]:
    """litellm (through ``pytest_sqleval.core.llm.complete``) and the lean client with no pytest
    around them: CPU milliseconds per call and wall seconds for ``10 * concurrency`` calls
    at ``concurrency`` in flight, in a process of their own."""
    env = dict(LITELLM_ENV, SQLEVAL_BENCH_API_BASE=api_base, PYTHONPATH=str(BENCH))
    _, proc = run([PYTHON, __file__, "--alone", api_base, f"--concurrency={concurrency}"], cwd=BENCH, env=env)
    check(proc, (0,))
    return json.loads(proc.stdout.strip().splitlines()[-1])


def measure_alone(api_base: str, concurrency: int, calls: int) -> dict[str, Any]:
    import lean_backend
    from pytest_sqleval.core.llm import complete

    async def batch(kind: str, n: int) -> None:
        sem = asyncio.Semaphore(concurrency)

        async def one(i: int) -> None:
            async with sem:
                if kind == "lean":
                    await lean_backend.generate(types.SimpleNamespace(id=f"alone{i}", question=f"q{i}"))
                else:
                    await complete([{"role": "user", "content": f"Question: q{i}"}], model="openai/bench",
                                   api_base=api_base, api_key="no-key-needed")
        await asyncio.gather(*(one(i) for i in range(n)))

    async def measure() -> dict[str, Any]:
        out: dict[str, Any] = {"calls": calls, "cpu_ms": {}, "wall_s": {}}
        for kind in ("lean", "litellm"):
            await batch(kind, 2 * concurrency)  # imports, connection pools
            cpu, wall = time.process_time(), time.perf_counter()
            await batch(kind, calls)
            out["wall_s"][kind] = round(time.perf_counter() - wall, 3)
            out["cpu_ms"][kind] = round(1000 * (time.process_time() - cpu) / calls, 2)
        return out

    return asyncio.run(measure())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=500)
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--alone", metavar="API_BASE", help=argparse.SUPPRESS)  # the bench's own subprocess
    args = ap.parse_args()
    if args.alone:
        print(json.dumps(measure_alone(args.alone, args.concurrency, 10 * args.concurrency)))
        return
    report = Report()
    run_bench(report, args.cases, args.latency, args.concurrency, args.repeat)
    report.save(Path(__file__).resolve().parent / "results" / "llm.json")


if __name__ == "__main__":
    main()
