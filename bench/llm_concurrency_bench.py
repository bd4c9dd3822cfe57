"""Generation concurrency with a real LLM backend: N cases, a loopback model that answers
after L seconds, at most C calls in flight. The generation phase should take about N·L/C,
serially and under ``-n 2`` (xdist workers share the limit and never ask for a case twice).

    python bench/llm_concurrency_bench.py [--cases 40] [--latency 0.5] [--concurrency 8]

The phase is timed from the model server's side (first request received to last answer
sent), so pytest's and litellm's start-up do not count. Not a timed test: a benchmark."""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no price-list fetch at import

from tests.llm_server import Reply, ScriptedLLMServer  # noqa: E402
from tests.test_agent import build_mini_suite  # noqa: E402


def run(n: int, latency: float, concurrency: int, workers: int) -> tuple[float, int, int]:
    with tempfile.TemporaryDirectory(prefix="sqleval-bench-") as tmp, ScriptedLLMServer() as server:
        suite = build_mini_suite(Path(tmp))
        (suite / "questions.jsonl").write_text("".join(json.dumps({
            "id": f"b{i:03d}", "question": f"How many real customers have an id up to {i}?",
            "gold_sql": f"SELECT count(*) FROM sales.customers WHERE NOT is_test AND customer_id <= {i}",
            "expected_shape": "scalar"}) + "\n" for i in range(1, n + 1)))
        server.respond_with(lambda req: Reply("```sql\nSELECT count(*) FROM sales.customers\n```", delay=latency))
        cmd = [sys.executable, "-m", "pytest", str(suite), "-q", "-p", "no:cacheprovider", "-p", "no:hypothesispytest",
               "--rootdir", tmp, "--sqleval-backend=a3-sc", "--sqleval-model=bench", f"--sqleval-api-base={server.api_base}",
               f"--sqleval-concurrency={concurrency}", "--sqleval-no-cache"]
        if workers:
            cmd += ["-n", str(workers)]
        env = dict(os.environ, SQLEVAL_LLM_TIMEOUT=str(max(30.0, latency * 4)), PYTHONPATH=str(ROOT))
        subprocess.run(cmd, cwd=tmp, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        stamps = sorted(r.received_at for r in server.chat_requests)
        if not stamps:
            raise SystemExit("no model call reached the server; run the command by hand to see why:\n" + " ".join(cmd))
        cases = len({json.loads(r.raw)["messages"][1]["content"] for r in server.chat_requests})
        return stamps[-1] + latency - stamps[0], len(stamps), cases


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=40)
    ap.add_argument("--latency", type=float, default=0.5)
    ap.add_argument("--concurrency", type=int, default=8)
    args = ap.parse_args()
    ideal = args.cases * args.latency / args.concurrency
    print(f"N={args.cases} cases, L={args.latency:g} s, C={args.concurrency}: N·L/C = {ideal:.2f} s")
    for workers in (0, 2):
        took, calls, distinct = run(args.cases, args.latency, args.concurrency, workers)
        label = "serial " if not workers else f"-n {workers}   "
        print(f"  {label} generation phase {took:6.2f} s  ({took / ideal:4.2f}× ideal)  "
              f"{calls} calls for {distinct} distinct cases")


if __name__ == "__main__":
    main()
