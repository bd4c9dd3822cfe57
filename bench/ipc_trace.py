"""Where the grading process and its engine process wait for each other: a timeline of one
run read from the opt-in pipe trace (``SQLEVAL_IPC_TRACE``, ``core/engines/host.py``).

    SQLEVAL_IPC_TRACE=/tmp/t/run python -m pytest SUITE ...   # writes /tmp/t/run.grading.<pid>.jsonl, .engine.<pid>.jsonl
    python bench/ipc_trace.py /tmp/t/run

Both processes stamp events with the machine's monotonic clock, so their timelines line up.
The grading process: each request sent (``send``), each answer read (``answer``: sent at,
read at, seconds blocked on the pipe for it, whether it was taken without waiting), each
``grade`` and each case's ``setup``. The engine process: each request served (``serve``:
idle from, received at, answered at, its CPU time then). Printed: the engine's busy and idle time,
its idle time split by what the grading process was doing meanwhile (grading a case,
setting one up, neither: pytest's own work and the reports), and the grading process's
blocked time split by the request it waited for.
"""
from __future__ import annotations

import glob
import json
import sys
from collections import defaultdict
from typing import Any


def load(prefix: str, role: str) -> list[list[Any]]:
    events: list[list[Any]] = []
    for path in sorted(glob.glob(f"{prefix}.{role}.*.jsonl")):
        with open(path, encoding="utf-8") as fh:
            events += [json.loads(line) for line in fh]
    return events


def overlap(a: float, b: float, spans: list[tuple[float, float]]) -> float:
    return sum(max(0.0, min(b, y) - max(a, x)) for x, y in spans)


def main(prefix: str) -> None:
    grading, engine = load(prefix, "grading"), load(prefix, "engine")
    grades = [(e[1], e[2]) for e in grading if e[0] == "grade"]
    setups = [(e[1], e[2]) for e in grading if e[0] == "setup"]
    answers = [e for e in grading if e[0] == "answer"]
    received = [e for e in engine if e[0] == "serve"]
    busy = [(r[3], r[4]) for r in received]
    start, end = busy[0][0], busy[-1][1]
    busy_s = sum(b - a for a, b in busy)
    gaps = [(prev[1], nxt[0], op[1]) for prev, nxt, op in zip(busy, busy[1:], received[1:])]
    idle = defaultdict(float)
    idle_by_op: dict[str, float] = defaultdict(float)
    for a, b, op in gaps:
        in_grade, in_setup = overlap(a, b, grades), overlap(a, b, setups)
        idle["grading a case"] += in_grade
        idle["setting a case up"] += in_setup
        idle["neither (pytest, reports, next case's start)"] += max(0.0, (b - a) - in_grade - in_setup)
        idle_by_op[op] += b - a
    waited: dict[str, list[float]] = defaultdict(list)
    for e in answers:
        waited[e[1]].append(e[4])
    polled = sum(1 for e in answers if e[5])
    print(f"window {end - start:.2f} s (engine's first request to its last answer); {len(busy)} requests")
    print(f"engine busy {busy_s:.2f} s, idle {sum(b - a for a, b, _ in gaps):.2f} s in {len(gaps)} gaps "
          f"({sum(1 for a, b, _ in gaps if b - a > 0.002)} over 2 ms)")
    for what, s in idle.items():
        print(f"  engine idle while the grading process was {what}: {s:.2f} s")
    for op, s in sorted(idle_by_op.items(), key=lambda kv: -kv[1]):
        print(f"  engine idle until a {op} request came: {s:.2f} s")
    total_wait = sum(sum(v) for v in waited.values())
    print(f"grading process blocked on the pipe {total_wait:.2f} s; in grade() {sum(b - a for a, b in grades):.2f} s "
          f"over {len(grades)} cases, in setup {sum(b - a for a, b in setups):.2f} s; "
          f"{polled} of {len(answers)} answers taken without waiting")
    for op, v in sorted(waited.items(), key=lambda kv: -sum(kv[1])):
        print(f"  waiting for {op}: {sum(v):.2f} s over {len(v)} answers ({sum(1 for x in v if x > 0.002)} over 2 ms)")
    both = (end - start) - sum(b - a for a, b, _ in gaps) - total_wait
    print(f"both processes working at once: about {both:.2f} s of the window")


if __name__ == "__main__":
    main(sys.argv[1])
