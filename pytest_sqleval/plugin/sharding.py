"""``--sqleval-shard=K/N``: this machine runs the K-th of N shards of the run.

Every machine computes the same plan from the same inputs and keeps its own part, so each
test runs in exactly one shard. The plan depends only on what every machine shares: the
selected items' node ids, the database each case reads (as a path under the rootdir), N,
and, if one is given, a durations file committed with the suite. Never on hash seeds,
collection order, the clock, or pytest's cache (which differs from machine to machine: a
plan read from it would make two machines disagree, losing some cases and running others
twice). Costs are whole milliseconds, so the sums and comparisons are exact.

Cases of one database stay together (its engine is opened and its gold answers read once
per machine) unless the database holds more than a shard's share of the work; then it is
cut into consecutive runs of cases, never between a case's backends (they share its gold
answer). The pieces go, largest first, to the least loaded
shard (LPT). ``ShardPlan`` records what ``python -m pytest_sqleval merge`` checks: the
run's identity, the digest of the whole run's node ids and of the plan itself."""
from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

#: The cost of a case with no recorded duration, and of opening a database on a machine.
DEFAULT_CASE_MS = 1000
OPEN_DATABASE_MS = 1000
#: The CI variable that names a workflow run, the same in every job of a matrix and across
#: re-runs of failed jobs (``GITHUB_RUN_ATTEMPT`` is not: a re-run shard would not merge).
CI_RUN_ID_VARIABLES = ("GITHUB_RUN_ID",)


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` of ``count``, both from 1, as the user writes it (``2/4``)."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str) -> Shard:
    """The ``type=`` of ``--sqleval-shard``: ``K/N`` with 1 <= K <= N; else argparse's usage error."""
    raw = str(text).strip()
    index_text, sep, count_text = raw.partition("/")
    try:
        index, count = int(index_text), int(count_text)
    except ValueError:
        index = count = 0
    if not sep or count < 1 or not 1 <= index <= count:
        raise argparse.ArgumentTypeError(
            f"expected K/N, this machine's shard K of N shards, with 1 <= K <= N (e.g. 2/4), got {text!r}")
    return Shard(index, count)


@dataclass(frozen=True)
class Unit:
    """One test to place: its node id, the group it would rather share a shard with (its
    database; a plain test's file), and its expected cost in milliseconds."""

    key: str
    group: str
    cost_ms: int


def plan_shards(units: Iterable[Unit], count: int) -> dict[str, int]:
    """Node id -> shard index (0-based) for every unit, the same whatever order they come in."""
    by_group: dict[str, dict[str, list[Unit]]] = {}
    for unit in sorted(units, key=lambda u: u.key):  # a case's backends stay together: one gold answer
        by_group.setdefault(unit.group, {}).setdefault(_bundle(unit.key), []).append(unit)
    total = sum(OPEN_DATABASE_MS + _cost(u for b in g.values() for u in b) for g in by_group.values())
    share = max(1, math.ceil(total / count))
    pieces: list[tuple[int, str, list[Unit]]] = []
    for name in sorted(by_group):
        bundles = [by_group[name][k] for k in sorted(by_group[name])]
        cost = OPEN_DATABASE_MS + _cost(u for b in bundles for u in b)
        for run in _cut(bundles, min(len(bundles), math.ceil(cost / share))):
            piece = [u for b in run for u in b]
            pieces.append((OPEN_DATABASE_MS + _cost(piece), piece[0].key, piece))
    loads = [0] * count
    plan: dict[str, int] = {}
    for cost, _, piece in sorted(pieces, key=lambda p: (-p[0], p[1])):
        target = min(range(count), key=lambda i: (loads[i], i))
        loads[target] += cost
        plan.update((u.key, target) for u in piece)
    return plan


def _bundle(key: str) -> str:
    """A case's node id without its backend (``q06[gold]`` -> ``q06``): the atom a cut never splits."""
    return key.rpartition("[")[0] if key.endswith("]") and "[" in key else key


def _cost(units: Iterable[Unit]) -> int:
    return sum(u.cost_ms for u in units)


def _cut(bundles: list[list[Unit]], parts: int) -> list[list[list[Unit]]]:
    """``bundles`` in ``parts`` consecutive runs of about equal cost (each bundle goes where
    its cost's midpoint falls), none empty."""
    if parts <= 1:
        return [bundles]
    total = sum(_cost(b) for b in bundles) or 1
    runs: list[list[list[Unit]]] = [[] for _ in range(parts)]
    before = 0
    for bundle in bundles:
        cost = _cost(bundle)
        runs[min(parts - 1, (2 * before + cost) * parts // (2 * total))].append(bundle)
        before += cost
    return [run for run in runs if run]


def read_durations(path: Path) -> dict[str, int]:
    """A durations file (``durations.json`` as ``merge`` writes it: node id -> seconds) as
    whole milliseconds; a bad file is a usage error that names it."""
    from ..core.errors import UsageError
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"--sqleval-shard-durations={path}: cannot read it as JSON ({exc}). Fix: give the "
                         "durations.json that `python -m pytest_sqleval merge` wrote, or drop the option") from None
    if not isinstance(data, dict) or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0
                                             and math.isfinite(v) for v in data.values()):
        raise UsageError(f"--sqleval-shard-durations={path}: expected a JSON object of node id -> seconds "
                         "(non-negative numbers). Fix: give the durations.json that merge wrote")
    return {str(k): round(float(v) * 1000) for k, v in data.items()}


def units_of(items: Sequence[Any], rootpath: Path, durations: Mapping[str, int]) -> list[Unit]:
    """The items as units: a case's group is its database (a path relative to the rootdir,
    or its URL), any other test's its file; a cost from ``durations``, else their median,
    else ``DEFAULT_CASE_MS``."""
    known = sorted(durations[i.nodeid] for i in items if i.nodeid in durations)
    fallback = known[len(known) // 2] if known else DEFAULT_CASE_MS
    units = []
    for item in items:
        manifest = getattr(item, "manifest", None)
        database = getattr(manifest, "database", None)
        group = _where(database, rootpath) if database is not None else item.nodeid.split("::", 1)[0]
        units.append(Unit(item.nodeid, group, durations.get(item.nodeid, fallback)))
    return units


def _where(database: Any, rootpath: Path) -> str:
    if isinstance(database, Path):
        try:
            return "db:" + database.resolve().relative_to(rootpath.resolve()).as_posix()
        except ValueError:
            return "db:" + database.name  # outside the project: the same file name on every machine
    return "db:" + str(database)


@dataclass(frozen=True)
class ShardPlan:
    """What a shard knows of the whole run: which shard it is, the run it belongs to, and
    digests that every shard of that run shares."""

    shard: Shard
    run_id: str
    run_id_source: str  # "--sqleval-run-id", "GITHUB_RUN_ID" or "derived"
    cases_total: int
    cases_digest: str  # sha256 of the whole run's sorted node ids
    plan_digest: str  # sha256 of every node id with its shard
    suites: Mapping[str, int]  # questions file (or test file) -> its items in the whole run
    nodeids: tuple[str, ...]  # this shard's

    def to_json_dict(self) -> dict[str, Any]:
        return {"shard": str(self.shard), "index": self.shard.index, "count": self.shard.count,
                "run_id": self.run_id, "run_id_source": self.run_id_source, "cases_total": self.cases_total,
                "cases_digest": self.cases_digest, "plan_digest": self.plan_digest, "suites": dict(self.suites),
                "nodeids": list(self.nodeids)}


def make_plan(shard: Shard, units: list[Unit], explicit_run_id: str | None) -> ShardPlan:
    plan = plan_shards(units, shard.count)
    keys = sorted(plan)
    cases_digest = _digest(keys)
    plan_digest = _digest(f"{k}\t{plan[k]}" for k in keys)
    run_id, source = explicit_run_id, "--sqleval-run-id"
    if not run_id:
        ci = next(((v, os.environ[v]) for v in CI_RUN_ID_VARIABLES if os.environ.get(v)), None)
        run_id, source = (ci[1], ci[0]) if ci else (f"plan-{plan_digest[:12]}", "derived")
    suites: dict[str, int] = {}
    for k in keys:
        suite = k.split("::", 1)[0]
        suites[suite] = suites.get(suite, 0) + 1
    return ShardPlan(shard=shard, run_id=run_id, run_id_source=source, cases_total=len(keys),
                     cases_digest=cases_digest, plan_digest=plan_digest, suites=suites,
                     nodeids=tuple(k for k in keys if plan[k] == shard.index - 1))


def _digest(lines: Iterable[str]) -> str:
    """sha256 of the lines, each ended by a newline."""
    return hashlib.sha256("".join(f"{line}\n" for line in lines).encode("utf-8")).hexdigest()
