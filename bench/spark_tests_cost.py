"""What a test run costs, the JVMs it starts included: wall, CPU of the command and every
process under it, the machine's 1-minute load, and how many JVMs, Spark Connect servers
and Spark mirrors the run made (issue 33, item 1: where the Spark tests' time goes).

    PYTHONPATH=$PWD python bench/spark_tests_cost.py --basetemp /tmp/stc -- \\
        python -m pytest -m spark tests -p no:cacheprovider -q --durations=40

CPU is counted two ways, both printed: ``waited``, the user+sys time of the command and
the children it and they waited for (``wait4``'s rusage: exact, but a JVM no one reaps is
missing), and ``sampled``, the sum over every process seen under the command of its last
user+sys time read from ``/proc`` every 0.2 s (every process, but the last 0.2 s of each and
processes shorter than that are missing). A JVM is a process under the command whose name
is ``java`` (spark-submit's launcher JVM, which only builds the command, counted apart); a Connect server one whose command line runs ``SparkConnectServer``; a mirror
is an index (``tables.v2.json``) written under ``--basetemp``.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> tuple[int, float, str] | None:
    """(parent pid, user+sys seconds, name) of a live process, from /proc."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    name = raw[raw.index("(") + 1:raw.rindex(")")]
    rest = raw[raw.rindex(")") + 2:].split()
    return int(rest[1]), (int(rest[11]) + int(rest[12])) / TICK, name


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _load1() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--basetemp", required=True, help="passed to pytest as --basetemp; mirrors are counted under it")
    ap.add_argument("--out", help="write the figures as JSON here too")
    ap.add_argument("command", nargs=argparse.REMAINDER, help="-- then the pytest command")
    args = ap.parse_args()
    command = [c for c in args.command if c != "--"] if args.command[:1] == ["--"] else args.command
    command = command + [f"--basetemp={args.basetemp}"]
    load_start, t0 = _load1(), time.monotonic()
    proc = subprocess.Popen(command)
    seen: dict[int, tuple[float, str]] = {}  # pid -> (last CPU seconds, name)
    jvms: set[int] = set()
    launchers: set[int] = set()  # spark-submit's launcher JVMs (one per start, a second or so each)
    servers: set[int] = set()
    loads = [load_start]
    status = None
    next_load = time.monotonic() + 5
    while status is None:
        tree = {proc.pid}
        procs = {}
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                st = _stat(int(entry))
                if st is not None:
                    procs[int(entry)] = st
        grew = True
        while grew:  # every descendant of the command
            grew = False
            for pid, (ppid, _, _) in procs.items():
                if ppid in tree and pid not in tree:
                    tree.add(pid)
                    grew = True
        for pid in tree:
            if pid in procs:
                _, cpu, name = procs[pid]
                seen[pid] = (cpu, name)
                if name == "java" and pid not in jvms | launchers:
                    cmd = _cmdline(pid)
                    if "org.apache.spark.launcher.Main" in cmd:  # spark-submit's own short JVM: it builds the command
                        launchers.add(pid)
                        continue
                    jvms.add(pid)
                    if "SparkConnectServer" in cmd:
                        servers.add(pid)
        if time.monotonic() >= next_load:
            loads.append(_load1())
            next_load += 5
        try:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid == 0:
                status = None
                time.sleep(0.2)
        except ChildProcessError:
            break
    wall = time.monotonic() - t0
    load_end = _load1()
    waited = usage.ru_utime + usage.ru_stime
    ours = os.times()  # the reaped descendants' time also lands in our own children's total
    figures = {
        "command": " ".join(command), "exit": os.waitstatus_to_exitcode(status) if status is not None else None,
        "wall_s": round(wall, 1), "cpu_waited_s": round(max(waited, ours.children_user + ours.children_system), 1),
        "cpu_sampled_s": round(sum(c for c, _ in seen.values()), 1),
        "load1_start": load_start, "load1_end": load_end, "load1_mean": round(sum(loads) / len(loads), 1),
        "jvm_starts": len(jvms), "connect_server_starts": len(servers), "launcher_jvms": len(launchers),
        "jvm_cpu_sampled_s": round(sum(seen[p][0] for p in jvms if p in seen), 1),
        "mirrors_built": sum(1 for _ in Path(args.basetemp).rglob("tables.v2.json")),
    }
    print(json.dumps(figures, indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
