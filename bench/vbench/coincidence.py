"""Held-out coincidence sets, and the plugin's score on them.

``build``: for each gold of a family, single-point mutants (``vbench.mutate``, written
apart from the grader's own) and equivalent rewrites, labelled by the grader *without*
variants on the pinned instance and on ground-truth instances it never sees:

- a *coincidence* passes on the pinned instance (same rows under the suite's compare
  policy) and fails with a result mismatch on some ground-truth instance;
- a *control* is a rewrite that passes on the pinned instance and on every ground-truth one.

It writes a suite (the pinned database linked in, one case per mutant or control, the gold
as its gold), the predictions file and ``labels.jsonl``; nothing is downloaded.

``measure``: runs pytest with the plugin on that suite, with and without
``--sqleval-variants=N``, and reads ``results.jsonl``: coincidences caught (graded
``coincidental_pass``), controls that fail (false fails), first-run and warm-rerun wall
time, and the variants' size on disk against the pinned database's."""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import time
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

from vbench.mutate import Change, controls, mutants, sample

ROOT = Path(__file__).resolve().parents[2]
PINNED_TIMEOUT_S, TRUTH_TIMEOUT_S = 1.0, 10.0
SCREEN_CPU_S, SCREEN_WALL_S = 3 * PINNED_TIMEOUT_S, 120.0  # the in-process screen's bounds (CPU, then wall)
RESULT_MISMATCH = ("cardinality_mismatch", "value_mismatch", "projection_mismatch", "order_only")


# -- build ---------------------------------------------------------------------------------
def _golds(family: str, pinned: Path, queries: Path | None) -> list[dict[str, Any]]:
    """(id, db, gold) of each gold: TPC queries from the queries JSON, Spider-style from dev.json."""
    if family == "spider":
        dev = json.loads((pinned / "dev.json").read_text())
        return [{"gid": f"{d['db_id']}-{i:03d}", "db": d["db_id"], "gold": d["query"], "question": d["question"]}
                for i, d in enumerate(dev)]
    assert queries is not None
    return [{"gid": f"q{q['query_nr']:02d}", "db": None, "gold": q["query"], "question": f"{family} query {q['query_nr']}"}
            for q in json.loads(queries.read_text())["queries"]]


def _db_file(family: str, root: Path, db: str | None) -> Path:
    return root / "database" / db / f"{db}.sqlite" if family == "spider" else root


class _Graders:
    """One grader without variants per (instance, database), opened on first use."""

    def __init__(self, family: str, work: Path, hashes: Path | None = None) -> None:
        from pytest_sqleval.core.api import Grader
        from pytest_sqleval.core.engines.base import Limits
        # a mutant the pinned instance cannot answer in PINNED_TIMEOUT_S (a join predicate
        # dropped: a cross product) is no coincidence; ground truth is bigger and runs few
        self._make = lambda path, cache, timeout: Grader(
            path, dialect="sqlite" if family == "spider" else "duckdb", cache_dir=cache,
            limits=Limits(timeout_s=timeout), **({"column_order": "any"} if family == "spider" else {}))
        self.family, self.work, self.open, self.hashes = family, work, {}, hashes
        self.pinned: Path | None = None
        self.direct: dict[str, Any] = {}
        self.gold_bags: dict[str, Any] = {}
        self.spent: Counter[str] = Counter()  # seconds by phase (screen, pinned, truth, open): the build prints them

    def verdict(self, root: Path, db: str | None, sql: str, gold: str) -> Any:
        key = (str(root), db)
        t = time.perf_counter()
        if key not in self.open:
            timeout = PINNED_TIMEOUT_S if root == self.pinned else TRUTH_TIMEOUT_S
            cache = self.work / f"g{len(self.open)}"
            if self.hashes is not None:
                # the content hash reads every row (minutes for a TPC-DS SF 0.1 file under load);
                # it is keyed by the file's identity, size and mtime, so every build and shard
                # on the same files shares it (hashes/content-hash); gold answers are keyed by
                # content hash, gold and engine version and only sound ones are stored, so the
                # grader of an instance keeps its cache there too (a gold runs once per instance)
                name = hashlib.sha256(json.dumps([str(root.resolve()), db, timeout]).encode()).hexdigest()[:16]
                cache = self.hashes / "graders" / f"{root.name}-{db or ''}-{name}"
                cache.mkdir(parents=True, exist_ok=True)
                if not (cache / "content-hash").exists():
                    (self.hashes / "content-hash").mkdir(parents=True, exist_ok=True)
                    (cache / "content-hash").symlink_to((self.hashes / "content-hash").resolve())
            self.open[key] = self._make(_db_file(self.family, root, db), cache, timeout)
            self.spent["open"] += time.perf_counter() - t
            t = time.perf_counter()
        try:
            return self.open[key].compare(sql, gold)
        finally:
            self.spent["pinned" if root == self.pinned else "truth"] += time.perf_counter() - t

    def close(self) -> None:
        for g in self.open.values():
            g.close()
        for c in self.direct.values():
            c.close()

    def maybe_same(self, root: Path, sql: str, gold: str) -> bool:
        """A quick in-process screen on a DuckDB instance: False only when the two answers
        surely differ (another row count, or another bag of rows with numbers rounded to 6
        significant digits, far coarser than the grader's tolerance), so the grader is only
        asked about the few that may coincide. A mutant that errors or runs past
        SCREEN_CPU_S of CPU time (three times the grader's own bound on the pinned instance)
        is no coincidence either. The bound is CPU time, not wall time, so a loaded machine
        labels as a quiet one does; a gold the screen cannot answer screens nothing (the
        grader decides)."""
        import duckdb
        if str(root) not in self.direct:
            self.direct[str(root)] = duckdb.connect(str(root), read_only=True)
        con = self.direct[str(root)]
        t = time.perf_counter()
        try:
            if gold not in self.gold_bags:
                try:
                    self.gold_bags[gold] = _bag(_bounded(con, gold))
                except duckdb.Error:
                    self.gold_bags[gold] = None
            want = self.gold_bags[gold]
            if want is None:
                return True
            try:
                got = _bag(_bounded(con, sql))
            except duckdb.Error:
                return False
        finally:
            self.spent["screen"] += time.perf_counter() - t
        return got == want


def _bounded(con: Any, sql: str, cpu_s: float | None = None, wall_s: float = SCREEN_WALL_S) -> list[tuple[Any, ...]]:
    """``sql``'s rows on ``con``, interrupted once the process has spent ``cpu_s`` of CPU time
    on it (the grading process waits meanwhile: its CPU is the query's) or ``wall_s`` passed."""
    import threading
    cpu_s = SCREEN_CPU_S if cpu_s is None else cpu_s
    done = threading.Event()

    def watch() -> None:
        c0, t0 = time.process_time(), time.monotonic()
        while not done.wait(0.05):
            if time.process_time() - c0 > cpu_s or time.monotonic() - t0 > wall_s:
                con.interrupt()
                return
    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        return con.execute(sql).fetchall()
    finally:
        done.set()
        watcher.join()


def _bag(rows: list[tuple[Any, ...]]) -> Counter[tuple[Any, ...]]:
    def norm(v: Any) -> Any:
        if isinstance(v, (float, Decimal)):
            return float(f"{float(v):.6g}")
        return v
    return Counter(tuple(norm(v) for v in row) for row in rows)


def select_golds(golds: list[dict[str, Any]], spec: str | None) -> list[dict[str, Any]]:
    """The golds named by ``spec`` (comma-separated ids or ``first-last`` ranges of ids, in
    the family's order, e.g. ``q01-q30,q45``), all when ``spec`` is None. A gold's mutants
    are drawn from ``seed:gid`` alone, so a subset labels each gold as the full set would."""
    if spec is None:
        return golds
    order = [g["gid"] for g in golds]
    want: set[str] = set()
    for part in (p.strip() for p in spec.split(",") if p.strip()):
        ends = [(part, part)] if part in order else [
            (part[:i], part[i + 1:]) for i, ch in enumerate(part) if ch == "-" and part[:i] in order and part[i + 1:] in order]
        if not ends:
            raise SystemExit(f"--golds: {part!r} names no gold of this family (ids look like {order[0]!r})")
        first, last = ends[0]
        want.update(order[order.index(first):order.index(last) + 1])
    return [g for g in golds if g["gid"] in want]


def build(family: str, pinned: Path, truths: list[Path], queries: Path | None, seed: int, per_gold: int,
          out: Path, *, shard: tuple[int, int] = (0, 1), stop_after: float | None = None,
          controls_per_gold: int | None = None, write_only: bool = False,
          golds: str | None = None, hashes: Path | None = None) -> dict[str, Any]:
    """Label the golds of ``shard`` (i of n: every n-th gold from the i-th), appending each
    gold's labels to ``labels.partial.jsonl`` as it is done (shards may share ``out``), and
    stop starting golds after ``stop_after`` seconds; ``write_only`` writes the suite from
    the partial labels of every shard."""
    from pytest_sqleval.core.errors import GoldError
    dialect = "sqlite" if family == "spider" else "duckdb"
    partial = out / "labels.partial.jsonl"
    all_golds = select_golds(_golds(family, pinned, queries), golds)
    if write_only:
        return _finish(family, pinned, truths, queries, seed, per_gold, out, all_golds)
    if shard[1] == 1:
        shutil.rmtree(out, ignore_errors=True)  # shards share a fresh --out: the caller empties it
    out.mkdir(parents=True, exist_ok=True)
    graders = _Graders(family, out / f".label-cache-{shard[0]}", hashes)
    graders.pinned = pinned
    labelled: list[dict[str, Any]] = []
    skipped: Counter[str] = Counter()
    started = time.perf_counter()
    try:
        for g in all_golds[shard[0]::shard[1]]:
            if stop_after is not None and time.perf_counter() - started > stop_after:
                break
            rng = random.Random(f"{seed}:{g['gid']}")
            try:
                every, rewrites = _changes(g["gold"], dialect, hashes)
                drawn = sample(every, per_gold, rng)
                if controls_per_gold is not None:
                    rewrites = sample(rewrites, controls_per_gold, rng)
                if graders.verdict(pinned, g["db"], g["gold"], g["gold"]).status != "passed":
                    skipped["gold not graded on the pinned instance"] += 1
                    _append(partial, {"gid": g["gid"], "skipped": "gold not graded on the pinned instance"})
                    continue
            except GoldError:
                skipped["gold error on the pinned instance"] += 1
                _append(partial, {"gid": g["gid"], "skipped": "gold error on the pinned instance"})
                continue
            except Exception as exc:  # sqlglot cannot read it: say so, go on
                skipped[f"gold unreadable ({type(exc).__name__})"] += 1
                _append(partial, {"gid": g["gid"], "skipped": f"gold unreadable ({type(exc).__name__})"})
                continue
            mine = []
            for role, changes in (("mutant", drawn), ("control", rewrites)):
                for c in changes:
                    label = _label(graders, pinned, truths, g, c, role)
                    if label is not None:
                        mine.append({**label, "gid": g["gid"], "db": g["db"], "gold": g["gold"],
                                     "question": g["question"], "kind": c.kind, "detail": c.detail, "sql": c.sql})
            labelled += mine
            _append(partial, {"gid": g["gid"], "labels": mine})
            print(f"  {g['gid']}: {sum(x['gid'] == g['gid'] and x['role'] == 'coincidence' for x in labelled)} "
                  f"coincidences, {sum(x['gid'] == g['gid'] and x['role'] == 'control' for x in labelled)} controls "
                  f"({time.perf_counter() - started:.0f} s; so far "
                  + ", ".join(f"{k} {v:.0f} s" for k, v in sorted(graders.spent.items())) + ")", flush=True)
    finally:
        graders.close()
        shutil.rmtree(out / f".label-cache-{shard[0]}", ignore_errors=True)
    print(f"  shard {shard[0]}/{shard[1]} done in {time.perf_counter() - started:.0f} s", flush=True)
    if shard[1] > 1:
        return {"shard": shard, "labelled": len(labelled), "skipped_golds": dict(skipped)}
    return _finish(family, pinned, truths, queries, seed, per_gold, out, all_golds)


def _changes(gold: str, dialect: str, cache: Path | None) -> tuple[list[Change], list[Change]]:
    """Every mutant and rewrite of ``gold`` (``vbench.mutate``), kept in ``cache`` under a key
    of the gold, the dialect, mutate.py's source and sqlglot's version: a TPC-DS gold has
    hundreds of mutants, each copied, rendered and parsed again (seconds of CPU a gold),
    and they do not depend on the seed, so every later build reads them back."""

    import sqlglot
    if cache is None:
        return mutants(gold, dialect), controls(gold, dialect)
    source = (Path(__file__).with_name("mutate.py")).read_bytes()
    key = hashlib.sha256(b"\0".join([source, sqlglot.__version__.encode(), dialect.encode(), gold.encode()])).hexdigest()
    path = cache / "changes" / f"{key[:40]}.json"
    try:
        obj = json.loads(path.read_text())
        return [Change(**c) for c in obj["mutants"]], [Change(**c) for c in obj["controls"]]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    every, rewrites = mutants(gold, dialect), controls(gold, dialect)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_text(json.dumps({"mutants": [c.__dict__ for c in every], "controls": [c.__dict__ for c in rewrites]}))
    os.replace(tmp, path)  # shards may write the same key: each write is whole
    return every, rewrites


def _append(path: Path, obj: dict[str, Any]) -> None:
    with open(path, "a") as fh:  # one short write per gold: shards append to one file
        fh.write(json.dumps(obj) + "\n")


def _finish(family: str, pinned: Path, truths: list[Path], queries: Path | None, seed: int, per_gold: int,
            out: Path, all_golds: list[dict[str, Any]]) -> dict[str, Any]:
    """The suite, labels and ``set.json`` from the partial labels, in gold order."""
    done = {}
    for line in (out / "labels.partial.jsonl").read_text().splitlines():
        if line.strip():
            obj = json.loads(line)
            done[obj["gid"]] = obj
    order = [g["gid"] for g in all_golds]
    labelled = [x for gid in order if gid in done for x in done[gid].get("labels", [])]
    skipped = Counter(done[gid]["skipped"] for gid in order if gid in done and "skipped" in done[gid])
    shutil.rmtree(out / "suite", ignore_errors=True)
    (out / "suite").mkdir(parents=True)
    _write_suite(family, pinned, out, labelled)
    meta = {"family": family, "seed": seed, "per_gold": per_gold, "pinned": str(pinned),
            "truths": [str(t) for t in truths], "queries": str(queries) if queries else None,
            "golds": len(all_golds), "gold_ids": order, "golds_labelled": len(done),
            "golds_not_reached": [g for g in order if g not in done],
            "coincidences": sum(x["role"] == "coincidence" for x in labelled),
            "controls": sum(x["role"] == "control" for x in labelled), "skipped_golds": dict(skipped),
            "bench_commit": _commit()}
    (out / "set.json").write_text(json.dumps(meta, indent=1) + "\n")
    return meta


def _label(graders: _Graders, pinned: Path, truths: list[Path], g: dict[str, Any], c: Change,
           role: str) -> dict[str, Any] | None:
    from pytest_sqleval.core.errors import GoldError
    try:
        if graders.family != "spider" and not graders.maybe_same(pinned, c.sql, g["gold"]):
            return None
        if graders.verdict(pinned, g["db"], c.sql, g["gold"]).status != "passed":
            return None
        on_truth = [graders.verdict(t, g["db"], c.sql, g["gold"]) for t in truths]
    except GoldError:
        return None
    if role == "control":
        return {"role": "control"} if all(v.status == "passed" for v in on_truth) else None
    differs = [str(t) for t, v in zip(truths, on_truth) if v.status == "failed" and v.failure_kind in RESULT_MISMATCH]
    return {"role": "coincidence", "differs_on": differs} if differs else None


def _write_suite(family: str, pinned: Path, out: Path, labelled: list[dict[str, Any]]) -> None:
    suite = out / "suite"
    labels = []
    if family == "spider":
        (suite / "database").symlink_to((pinned / "database").resolve())
        shutil.copy(pinned / "tables.json", suite / "tables.json")
        dev = [{"db_id": x["db"], "question": f"{x['question']} [{i}]", "query": x["gold"]} for i, x in enumerate(labelled)]
        (suite / "dev.json").write_text(json.dumps(dev, indent=1) + "\n")
        (suite / "sqleval.toml").write_text('[suite]\nname = "vbench_spider"\nlayout = "spider"\ntables = "tables.json"\n')
        (out / "predictions.sql").write_text("".join(x["sql"] + "\n" for x in labelled))
        ids = [str(i) for i in range(len(labelled))]
    else:
        (suite / pinned.name).symlink_to(pinned.resolve())
        ids = [f"{x['gid']}-{i:05d}" for i, x in enumerate(labelled)]
        with open(suite / "questions.jsonl", "w") as fh:
            for cid, x in zip(ids, labelled):
                fh.write(json.dumps({"id": cid, "question": x["question"], "gold_sql": x["gold"]}) + "\n")
        (suite / "sqleval.toml").write_text(f'[suite]\nname = "vbench_{family}"\nquestions = "questions.jsonl"\n'
                                            f'database = "{pinned.name}"\ndialect = "duckdb"\n')
        with open(out / "predictions.jsonl", "w") as fh:
            for cid, x in zip(ids, labelled):
                fh.write(json.dumps({"id": cid, "sql": x["sql"]}) + "\n")
    for cid, x in zip(ids, labelled):
        labels.append({"id": cid, **{k: v for k, v in x.items() if k not in ("gold", "question")}})
    (out / "labels.jsonl").write_text("".join(json.dumps(x) + "\n" for x in labels))


def _commit(*paths: str, root: Path = ROOT) -> str:
    """The checkout's HEAD, or the last commit that touched ``paths`` (the generator: the package)."""
    try:
        return subprocess.run(["git", "-C", str(root), "log", "-1", "--format=%h", "HEAD", "--", *paths],
                              capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _generator_id(package: Path) -> str:
    """The generator's commit, or, for a package that is no git checkout (a ``git archive`` of a
    frozen commit), ``tree-`` and a digest of its sources: two such packages measured on one set
    keep two result files, not one named "unknown"."""
    commit = _commit("pytest_sqleval", root=package)
    if commit != "unknown":
        return commit
    digest = hashlib.sha256()
    for f in sorted((package / "pytest_sqleval").rglob("*.py")):
        digest.update(f.relative_to(package).as_posix().encode() + b"\0" + f.read_bytes())
    return "tree-" + digest.hexdigest()[:10]


def _dirty(root: Path = ROOT) -> bool:
    """Whether the package differs from its commit (then the generator is not the commit named)."""
    proc = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--", "pytest_sqleval"],
                          capture_output=True, text=True)
    return bool(proc.stdout.strip())


# -- measure -------------------------------------------------------------------------------
def _env(package: Path) -> dict[str, str]:
    """The environment of a measured run: ``package``'s pytest_sqleval first on the path."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_XDIST_AUTO_NUM_WORKERS")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(package), env.get("PYTHONPATH")) if p)
    return env


def _measured_package(package: Path, cwd: Path) -> Path:
    """Where the measured runs (started in ``cwd``) import pytest_sqleval from; refuses a path
    that is not ``package``'s."""
    got = subprocess.run([sys.executable, "-c", "import pytest_sqleval; print(pytest_sqleval.__file__)"],
                         env=_env(package), cwd=str(cwd), capture_output=True, text=True, timeout=120).stdout.strip()
    if not got or not Path(got).resolve().is_relative_to(package.resolve()):
        raise SystemExit(f"--package {package}: the measured run would import pytest_sqleval from {got or 'nowhere'}")
    return Path(got).parent


def _pytest(suite: Path, predictions: Path, cache: Path, results: Path, variants: int,
            package: Path = ROOT, cpu: dict[str, float] | None = None) -> float:
    cmd = [sys.executable, "-m", "pytest", str(suite), f"--sqleval-backend=predictions:{predictions}",
           f"--sqleval-cache-dir={cache}", f"--sqleval-results={results}", f"--sqleval-variants={variants}",
           "-q", "-p", "no:cacheprovider", "--tb=no", "-rN", "--no-header"]
    import resource
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run(cmd, cwd=str(suite.parent), env=_env(package), capture_output=True, text=True, timeout=7200)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if cpu is not None:  # user+sys of pytest and its engine children, beside the wall time
        cpu[results.name] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode not in (0, 1):
        sys.stderr.write(proc.stdout[-4000:] + "\n" + proc.stderr[-4000:] + "\n")
        raise SystemExit(f"pytest exited {proc.returncode}: {' '.join(cmd)}")
    return wall


def _records(results: Path) -> dict[str, dict[str, Any]]:
    return {r["case_id"]: r for r in (json.loads(line) for line in (results / "results.jsonl").read_text().splitlines()
                                       if line.strip())}


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink()) if path.exists() else 0


def measure(set_dir: Path, variants: int, show_missed: bool, work: Path | None,
            catch_only: bool = False, package: Path = ROOT, seen_sets: list[Path] | None = None) -> dict[str, Any]:
    """``package``: the checkout whose pytest_sqleval is measured (a worktree of the generator
    commit); the bench code is this one's either way."""
    _measured_package(package, set_dir)
    load_before = os.getloadavg()
    cpu: dict[str, float] = {}
    meta = json.loads((set_dir / "set.json").read_text())
    labels = [json.loads(line) for line in (set_dir / "labels.jsonl").read_text().splitlines() if line.strip()]
    suite = set_dir / "suite"
    predictions = set_dir / ("predictions.sql" if meta["family"] == "spider" else "predictions.jsonl")
    work = work or Path(f"/tmp/vbench-measure-{meta['family']}-{os.getpid()}")
    shutil.rmtree(work, ignore_errors=True)
    cache = work / "cache"
    cost: dict[str, float] = {}
    if catch_only:  # one run, variants built on an empty cache: the catch rate, first run and size
        cost["first_with_s"] = _pytest(suite, predictions, cache, work / f"r{variants}", variants, package, cpu)
    else:
        cost["cold_without_s"] = _pytest(suite, predictions, cache, work / "r0", 0, package)  # gold answers cached
        cost["first_with_s"] = _pytest(suite, predictions, cache, work / f"r{variants}", variants, package, cpu)
        cost["warm_without_s"] = _pytest(suite, predictions, cache, work / "r0", 0, package)
        cost["warm_with_s"] = _pytest(suite, predictions, cache, work / f"r{variants}", variants, package)
        cost["warm_ratio"] = cost["warm_with_s"] / cost["warm_without_s"]
    pinned = Path(meta["pinned"])
    pinned_bytes = _size(pinned / "database") if meta["family"] == "spider" else pinned.stat().st_size
    variant_bytes = _size(cache / "variants")
    cost.update(variants_mib=variant_bytes / 2**20, pinned_mib=pinned_bytes / 2**20,
                size_ratio=variant_bytes / max(1, pinned_bytes))
    graded = _records(work / f"r{variants}")
    plain = graded if catch_only else _records(work / "r0")
    out: dict[str, Any] = {"family": meta["family"], "set_seed": meta["seed"], "variants": variants,
                           "generator_commit": _generator_id(package), "package": str(package),
                           "bench_commit": _commit(), "dirty": _dirty(package), "load": os.getloadavg(),
                           "load_before": load_before, "cost": cost}
    if f"r{variants}" in cpu:
        cost["first_with_cpu_s"] = cpu[f"r{variants}"]
    coinc = [x for x in labels if x["role"] == "coincidence"]
    ctrl = [x for x in labels if x["role"] == "control"]
    caught = [x for x in coinc if graded[x["id"]].get("failure_kind") == "coincidental_pass"]
    false_fails = [x for x in ctrl if graded[x["id"]]["status"] != "passed"]
    not_passing_plain = [x for x in labels if plain[x["id"]]["status"] != "passed"]
    by_kind: dict[str, list[int]] = {}
    for x in coinc:
        k = by_kind.setdefault(x["kind"], [0, 0])
        k[0] += x in caught
        k[1] += 1
    out.update(coincidences=len(coinc), caught=len(caught), controls=len(ctrl), false_fails=len(false_fails),
               by_kind=by_kind, not_passing_without_variants=len(not_passing_plain),
               false_fail_ids=[f"{x['id']} {x['kind']}" for x in false_fails])
    if seen_sets:  # the coincidences the generator's author never saw in a tuning set (same gold, same SQL)
        seen = {(x["gid"], x["sql"]) for d in seen_sets for x in
                (json.loads(line) for line in (d / "labels.jsonl").read_text().splitlines() if line.strip())}
        fresh = [x for x in coinc if (x["gid"], x["sql"]) not in seen]
        fresh_caught = [x for x in fresh if x in caught]
        tuned = {g for g, _ in seen} | {g for d in seen_sets
                                        for g in json.loads((d / "set.json").read_text()).get("gold_ids", [])}
        fresh_golds = [x for x in fresh if x["gid"] not in tuned]
        out["unseen"] = {"tuning_sets": [str(d) for d in seen_sets], "coincidences": len(fresh),
                         "caught": len(fresh_caught), "on_golds_never_tuned": len(fresh_golds),
                         "caught_on_golds_never_tuned": sum(x in caught for x in fresh_golds)}
    unchecked = [x for x in labels if ((graded[x["id"]].get("layers") or {}).get("variants") or {}).get("error")]
    out["unchecked"] = [{"id": x["id"], "error": graded[x["id"]]["layers"]["variants"]["error"][:200]} for x in unchecked]
    missed = [x for x in coinc if x not in caught]
    out["missed"] = [{"id": x["id"], "gid": x["gid"], "kind": x["kind"], "detail": x["detail"],
                      "status": graded[x["id"]]["status"], "failure_kind": graded[x["id"]].get("failure_kind")}
                     for x in missed]
    print(f"[{meta['family']}] set seed {meta['seed']} (built by bench {meta['bench_commit']}), generator "
          f"{out['generator_commit']}{' (modified)' if out['dirty'] else ''} from {package}, --sqleval-variants="
          f"{variants}, load {load_before[0]:.1f} before, {out['load'][0]:.1f} after")
    print(f"  coincidences caught: {len(caught)}/{len(coinc)} = {len(caught) / max(1, len(coinc)):.1%}  ("
          + ", ".join(f"{k} {a}/{b}" for k, (a, b) in sorted(by_kind.items())) + ")")
    print(f"  false fails: {len(false_fails)}/{len(ctrl)} controls {out['false_fail_ids'][:10]}")
    if unchecked:  # a failed check passes on the database alone: a miss that is the grader's, not the variants'
        print(f"  NOT CHECKED on the variants (the check failed): {len(unchecked)} labelled case(s), first: "
              f"{out['unchecked'][0]['id']}: {out['unchecked'][0]['error']}")
    if "unseen" in out:
        u = out["unseen"]
        print(f"  never in the tuning set(s): caught {u['caught']}/{u['coincidences']}; on golds never tuned on: "
              f"{u['caught_on_golds_never_tuned']}/{u['on_golds_never_tuned']}")
    if not_passing_plain and not catch_only:  # (with --catch-only there is no run without variants)
        print(f"  note: {len(not_passing_plain)} labelled case(s) do not pass without variants in the pytest run")
    warm = ("warm rerun not measured (--catch-only)" if catch_only else
            f"warm rerun {cost['warm_with_s']:.1f} s vs {cost['warm_without_s']:.1f} s without ({cost['warm_ratio']:.2f}x)")
    print(f"  cost: first run with variants {cost['first_with_s']:.1f} s wall, "
          f"{cost.get('first_with_cpu_s', float('nan')):.1f} s CPU (user+sys); {warm}; variants on disk "
          f"{cost['variants_mib']:.1f} MiB vs pinned {cost['pinned_mib']:.1f} MiB ({cost['size_ratio']:.2f}x)")
    if show_missed:
        by: dict[str, list[dict[str, Any]]] = {}
        for m in out["missed"]:
            by.setdefault(m["kind"], []).append(m)
        for kind, ms in sorted(by.items()):
            print(f"  missed {kind} ({len(ms)}):")
            for m in ms:
                print(f"    {m['gid']} {m['detail'][:100]}  [{m['status']}/{m['failure_kind']}]")
    (set_dir / f"result-{out['generator_commit']}-v{variants}.json").write_text(json.dumps(out, indent=1) + "\n")
    shutil.rmtree(work, ignore_errors=True)
    return out


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(prog="variants_bench.py")
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="build a held-out coincidence set from a family's two instances")
    b.add_argument("--family", choices=("tpch", "tpcds", "spider"), required=True)
    b.add_argument("--pinned", type=Path, required=True,
                   help="the pinned instance: a DuckDB file (tpch/tpcds) or a Spider-layout folder (spider)")
    b.add_argument("--truth", type=Path, action="append", required=True,
                   help="a ground-truth instance (repeatable), the same schema, never shown to the grader")
    b.add_argument("--queries", type=Path, help="the golds of tpch/tpcds (<db>.queries.json)")
    b.add_argument("--seed", type=int, required=True, help="which mutants are drawn: a fresh seed, a fresh set")
    b.add_argument("--per-gold", type=int, default=40, help="mutants drawn per gold (default 40)")
    b.add_argument("--out", type=Path, required=True)
    b.add_argument("--shard", default="0/1", help="i/n: label every n-th gold from the i-th (run shards in "
                   "parallel on one --out, then once more with --write-only)")
    b.add_argument("--stop-after", type=float, help="start no gold after this many seconds (set.json lists the rest)")
    b.add_argument("--controls-per-gold", type=int, help="at most this many rewrites per gold (default: one per kind)")
    b.add_argument("--write-only", action="store_true", help="write the suite from the shards' partial labels")
    b.add_argument("--build-cache", type=Path, help="where the instances' content hashes and each gold's mutants "
                   "are kept between builds and shards (default: .vbench-cache beside the pinned instance)")
    b.add_argument("--golds", help="label only these golds: ids or first-last ranges, comma-separated "
                   "(e.g. q01-q30); pass the same to --write-only")
    m = sub.add_parser("measure", help="grade a built set with the plugin, with and without variants")
    m.add_argument("--set", type=Path, required=True)
    m.add_argument("--variants", type=int, default=8)
    m.add_argument("--show-missed", action="store_true", help="list the coincidences missed, by kind")
    m.add_argument("--work", type=Path, help="scratch folder for the cache and results (default under /tmp)")
    m.add_argument("--package", type=Path, default=ROOT,
                   help="the checkout whose pytest_sqleval is measured, e.g. a worktree of the generator commit "
                        "(default: this one)")
    m.add_argument("--tuning-set", type=Path, action="append", default=[],
                   help="a set the generator was tuned on (repeatable): also report the catch rate over the "
                        "coincidences not in it, and over golds it never had")
    m.add_argument("--catch-only", action="store_true",
                   help="one run with variants on an empty cache: catch rate, first run and size, no warm rerun")
    args = ap.parse_args(argv)
    if args.cmd == "build":
        if args.family != "spider" and args.queries is None:
            ap.error("--queries is required for tpch and tpcds")
        i, n = (int(x) for x in args.shard.split("/"))
        meta = build(args.family, args.pinned.resolve(), [t.resolve() for t in args.truth], args.queries,
                     args.seed, args.per_gold, args.out.resolve(), shard=(i, n), stop_after=args.stop_after,
                     controls_per_gold=args.controls_per_gold, write_only=args.write_only,
                     golds=args.golds, hashes=(args.build_cache or args.pinned.resolve().parent / ".vbench-cache"))
        print(json.dumps(meta, indent=1))
    else:
        measure(args.set.resolve(), args.variants, args.show_missed, args.work, args.catch_only, args.package.resolve(),
                [t.resolve() for t in args.tuning_set])
