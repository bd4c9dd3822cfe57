"""LLM-bound runs and the cache: N cases against the loopback model server
(``tests/llm_server.py``) answering after L seconds, at most C calls in flight.

    python bench/llm_bench.py [--cases 500] [--latency 0.2] [--concurrency 32]

The backend is ``bench/lean_backend.py:generate`` (one raw HTTP POST per case), so the
figure is the plugin's scheduling. The generation phase is timed on the server, from
the first request received to the last answer sent; its baseline is N*L/C, the time C
perfectly packed calls take. Runs: serial, then ``-n 2`` (the workers share C and never
ask for one case twice), then the serial run again on its own cache (no model call, no
gold query). Gold answers are warmed first by a gold-backend run.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _util import BENCH, ROOT, Report, check, fresh, load, pytest_cmd, read_records, run, vantage_database, variants, write_suite  # noqa: E402
from tests.llm_server import Reply, ScriptedLLMServer  # noqa: E402

SECTION = "llm"
WORK = Path("/tmp/sqleval-bench/llm")


def run_bench(report: Report, n: int, latency: float, concurrency: int) -> None:
    print(f"== LLM-bound: {n} cases, L={latency:g} s, C={concurrency} ({load()})", flush=True)
    database = vantage_database(1)
    cases = variants(n)
    suite = write_suite(fresh(WORK / "suite"), cases, database, name="llm-bench")
    sql_by_id = {c["id"]: c["gold_sql"] for c in cases}
    cache, results = WORK / "cache", WORK / "results"
    fresh(cache)
    common = [str(suite), f"--sqleval-cache-dir={cache}", f"--sqleval-results={results}", "-q", "-p", "no:cacheprovider",
              "-p", "no:randomly", "--tb=no", "-rN", "--no-header"]
    _, proc = run(pytest_cmd(*common, "--sqleval-backend=gold"), cwd=suite)  # warm the gold answers
    check(proc)
    ideal = n * latency / concurrency

    with ScriptedLLMServer() as server:
        # The test server listens with socketserver's default backlog of 5: beyond ~16
        # simultaneous connects, SYNs are dropped and retried a second later, which would
        # measure the server, not the plugin. A deeper accept queue removes that.
        server._httpd.socket.listen(1024)
        server.respond_with(lambda req: Reply(content=sql_by_id[(req.body or {})["metadata"]["case"]], delay=latency))
        env = {"SQLEVAL_BENCH_API_BASE": server.api_base, "PYTHONPATH": str(BENCH)}
        llm = [*common, "--sqleval-backend=lean_backend:generate", f"--sqleval-concurrency={concurrency}"]

        def phase(extra: list[str], label: str, target: bool = True) -> list[dict]:
            before = len(server.chat_requests)
            wall, proc = run(pytest_cmd(*llm, *extra), cwd=suite, env=env)
            check(proc)
            reqs = server.chat_requests[before:]
            ids = [(r.body or {}).get("metadata", {}).get("case") for r in reqs]
            recs = read_records(results)
            if reqs:
                stamps = sorted(r.received_at for r in reqs)
                span = stamps[-1] + latency - stamps[0]
                report.add(SECTION, f"{label}: generation phase (server side)", span, "s", baseline=ideal,
                           baseline_name="N*L/C", target="<= 1.3x N*L/C" if target else None,
                           met=span <= 1.3 * ideal if target else None,
                           note=f"{len(reqs)} calls, {len(set(ids))} distinct cases; whole pytest run {wall:.1f} s")
                twice = len(ids) - len(set(ids))
                report.add(SECTION, f"{label}: cases generated twice", float(twice), "", target="0", met=twice == 0,
                           note=f"model calls {len(reqs)} for {n} cases")
            return recs

        shutil.rmtree(cache / "generations", ignore_errors=True)
        phase([], "serial")
        before = len(server.chat_requests)
        _, proc = run(pytest_cmd(*llm), cwd=suite, env=env)  # the same run again, on its cache
        check(proc)
        recs = read_records(results)
        calls = len(server.chat_requests) - before
        gold_runs = sum(1 for r in recs if r.get("gold") and not r["gold"].get("cached"))
        gens = sum(1 for r in recs if r.get("generation") and not r["generation"].get("cached"))
        report.add("caching", f"second run, {n} cases: model calls", float(calls), "", target="0", met=calls == 0,
                   note=f"generations not from cache: {gens}")
        report.add("caching", f"second run, {n} cases: gold queries executed", float(gold_runs), "", target="0",
                   met=gold_runs == 0, note="from each record's gold.cached")
        shutil.rmtree(cache / "generations", ignore_errors=True)
        phase(["-n", "2"], "-n 2")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=500)
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--concurrency", type=int, default=32)
    args = ap.parse_args()
    report = Report()
    run_bench(report, args.cases, args.latency, args.concurrency)
    report.save(Path(__file__).resolve().parent / "results" / "llm.json")


if __name__ == "__main__":
    main()
