"""The shards of one run, merged: ``python -m pytest_sqleval merge DIR... --out DIR``.

Each shard's results folder holds ``shard.json`` (written last, by the shard's pytest run):
which shard it is, the run it belongs to, digests of the whole run's cases and of the plan,
the plugin version, and what the gate needs (lost cases, other failures, collection
errors). Merging refuses, with one error naming what differs, shards of different runs,
plugin versions, shard counts, case sets, plans or database contents, a shard given twice
and a missing one: a merged run is the whole run or nothing, never a silently smaller one."""
from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from ..core import CaseRecord, UsageError
from .files import publish_file

SHARD_FILE = "shard.json"
SHARD_VERSION = 1
DURATIONS_FILE = "durations.json"

#: The fields every shard of a run shares, in the order they are compared, with how the error names them.
_SHARED = (
    ("plugin_version", "plugin version", "run every shard with the same pytest-sqleval (pin it in the lock file)"),
    ("run_id", "run id", "merge the shards of one run (one --sqleval-run-id, or one CI run)"),
    ("count", "shard count N", "run every shard with the same N in --sqleval-shard=K/N"),
    ("suites", "suites", "run every shard on the same suites (the same paths on the command line)"),
    ("cases_digest", "set of cases",
     "run every shard on the same questions, backends and -k/-m selection (the same commit)"),
    ("plan_digest", "shard plan", "give every shard the same --sqleval-shard-durations file (commit it)"),
)


#: What every shard.json holds, and its type.
_FIELDS: dict[str, type] = {"index": int, "count": int, "run_id": str, "cases_total": int, "cases_digest": str,
                            "plan_digest": str, "suites": dict, "nodeids": list, "records": int,
                            "record_run_id": str, "plugin_version": str, "lost": list, "other_failures": int,
                            "collection_errors": list, "case_nodeids": list}


class ShardMergeError(UsageError):
    """Shards that do not make one whole run."""


def write_shard_manifest(results_dir: Path, data: Mapping[str, Any]) -> Path:
    path = results_dir / SHARD_FILE
    results_dir.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"shard_version": SHARD_VERSION, **data}, indent=1, sort_keys=True) + "\n"
    publish_file(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))
    return path


@dataclass(frozen=True)
class ShardResult:
    """One shard's folder: its ``shard.json`` and its records."""

    folder: Path
    manifest: Mapping[str, Any]
    records: tuple[CaseRecord, ...]

    @property
    def label(self) -> str:
        return f"{self.manifest.get('index')}/{self.manifest.get('count')} ({self.folder})"


@dataclass(frozen=True)
class MergedRun:
    """The whole run, from its shards: the records (each once, run id the run's), and the facts the gate reads."""

    run_id: str
    shard_count: int
    records: tuple[CaseRecord, ...]
    lost: tuple[str, ...]
    other_failures: int
    collection_errors: tuple[str, ...]
    stopped: str | None
    shards: tuple[ShardResult, ...]

    @property
    def expected(self) -> int:
        return len(self.records) + len(self.lost)


def read_shard(folder: Path) -> ShardResult:
    from .table import read_records
    folder = Path(folder)
    path = folder / SHARD_FILE
    if not path.is_file():
        why = "no such folder" if not folder.is_dir() else f"no {SHARD_FILE} in it"
        raise ShardMergeError(f"{folder}: {why}: not the results of a sharded run (or the shard never finished). "
                              f"Fix: give the --sqleval-results folder of each `pytest --sqleval-shard=K/N` run")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ShardMergeError(f"{path}: not JSON ({exc}). Fix: rerun that shard") from None
    if not isinstance(manifest, dict) or manifest.get("shard_version") != SHARD_VERSION:
        raise ShardMergeError(f"{path}: not a shard manifest of version {SHARD_VERSION}. "
                              "Fix: rerun that shard with this pytest-sqleval")
    wrong = [key for key, kind in _FIELDS.items() if not isinstance(manifest.get(key), kind)
             or (kind is int and isinstance(manifest.get(key), bool))]
    if wrong or not 1 <= manifest["index"] <= manifest["count"]:
        raise ShardMergeError(f"{path}: field(s) {', '.join(wrong) or 'index'} missing or wrong: not what a shard "
                              "wrote. Fix: rerun that shard")
    records: tuple[CaseRecord, ...] = ()
    if manifest.get("records"):
        _, found = read_records(folder)
        records = tuple(found)
    mine = set(manifest.get("nodeids", ()))
    stray = [r for r in records if r.run_metadata.get("run_id") != manifest.get("record_run_id") or r.nodeid not in mine]
    if stray or len(records) != manifest.get("records"):
        raise ShardMergeError(f"{folder}: results.jsonl does not hold this shard's {manifest.get('records')} records "
                              f"(shard.json's run {manifest.get('record_run_id')}); another run wrote over it. "
                              "Fix: give each shard its own --sqleval-results folder and rerun this one")
    ungraded = set(manifest["case_nodeids"]) - {r.nodeid for r in records} - set(manifest["lost"])
    if ungraded:
        raise ShardMergeError(f"{folder}: shard {manifest['index']}/{manifest['count']} graded {len(records)} of its "
                              f"{len(manifest['case_nodeids'])} cases (first not graded: {min(ungraded)}); the run was "
                              "interrupted or stopped early (-x). Fix: rerun that shard")
    return ShardResult(folder, manifest, records)


def merge_shards(folders: Sequence[Path]) -> MergedRun:
    """The whole run from every one of its shards, or a ``ShardMergeError`` naming what is wrong."""
    if not folders:
        raise ShardMergeError("no shard folders given. Fix: python -m pytest_sqleval merge DIR... --out DIR")
    shards = [read_shard(Path(f)) for f in folders]
    first = shards[0]
    for key, name, fix in _SHARED:
        values = {json.dumps(s.manifest.get(key), sort_keys=True) for s in shards}
        if len(values) > 1:
            shown = "; ".join(f"{s.folder}: {_shown(s.manifest.get(key))}" for s in shards)
            raise ShardMergeError(f"the shards are not of one run: their {name} differs ({shown}). Fix: {fix}")
    count = int(first.manifest["count"])
    by_index: dict[int, ShardResult] = {}
    for s in shards:
        index = int(s.manifest["index"])
        if index in by_index:
            raise ShardMergeError(f"shard {index}/{count} given twice: {by_index[index].folder} and {s.folder}. "
                                  "Fix: give each shard's folder once")
        by_index[index] = s
    missing = [i for i in range(1, count + 1) if i not in by_index]
    if missing:
        absent = int(first.manifest["cases_total"]) - sum(len(s.manifest["nodeids"]) for s in shards)
        raise ShardMergeError(f"missing shard(s) {', '.join(f'{i}/{count}' for i in missing)} of run "
                              f"{first.manifest['run_id']}: {absent} of its {first.manifest['cases_total']} tests "
                              "would be left out. Fix: give every shard's folder (wait for every job to finish)")
    covered = sorted(n for s in shards for n in s.manifest["nodeids"])
    if hashlib.sha256("".join(n + "\n" for n in covered).encode("utf-8")).hexdigest() != first.manifest["cases_digest"]:
        raise ShardMergeError("the shards' tests are not the run's tests (a shard.json was edited or mixed). "
                              "Fix: rerun the shards")
    _check_databases(shards)
    run_id = str(first.manifest["run_id"])
    records = sorted((dataclasses.replace(r, run_metadata={**r.run_metadata, "run_id": run_id})
                      for s in shards for r in s.records), key=lambda r: r.nodeid)
    stopped = [str(s.manifest["stopped"]) for s in shards if s.manifest.get("stopped")]
    return MergedRun(run_id=run_id, shard_count=count, records=tuple(records),
                     lost=tuple(sorted(n for s in shards for n in s.manifest.get("lost", ()))),
                     other_failures=sum(int(s.manifest.get("other_failures", 0)) for s in shards),
                     collection_errors=tuple(e for s in shards for e in s.manifest.get("collection_errors", ())),
                     stopped="; ".join(stopped) or None, shards=tuple(sorted(shards, key=lambda s: s.manifest["index"])))


def _check_databases(shards: Iterable[ShardResult]) -> None:
    """Every suite's database had the same content on every machine (its content hash)."""
    seen: dict[str, dict[str, Path]] = {}
    for s in shards:
        for r in s.records:
            if r.suite and r.content_hash:
                seen.setdefault(r.suite, {}).setdefault(r.content_hash, s.folder)
    for suite, hashes in sorted(seen.items()):
        if len(hashes) > 1:
            shown = "; ".join(f"{folder}: {h}" for h, folder in hashes.items())
            raise ShardMergeError(f"the shards are not of one run: suite {suite}'s database content hash differs "
                                  f"({shown}). Fix: build or fetch the same database snapshot on every machine")


def _shown(value: Any) -> str:
    text = json.dumps(value, sort_keys=True) if not isinstance(value, str) else value
    return text if len(text) <= 80 else text[:77] + "..."


def durations(records: Iterable[CaseRecord]) -> dict[str, float]:
    """Node id -> seconds a case took (grading, and its generation when not cached): the
    ``--sqleval-shard-durations`` file the next runs balance their shards by."""
    out = {}
    for r in records:
        ms = (r.grading_ms or 0.0) + ((r.generation.elapsed_ms or 0.0) if r.generation and not r.generation.cached else 0.0)
        out[r.nodeid] = round(ms / 1000, 3)
    return dict(sorted(out.items()))


def write_merged(run: MergedRun, summary: dict[str, Any], out: Path) -> dict[str, Path]:
    """results.jsonl, summary.json, report.html and durations.json of the merged run, in ``out``."""
    from .html import REPORT_NAME, write_report
    out.mkdir(parents=True, exist_ok=True)

    def write_results(tmp: Path) -> None:
        with open(tmp, "w", encoding="utf-8") as fh:
            for rec in run.records:
                fh.write(json.dumps(rec.to_json_dict(), default=str, sort_keys=True) + "\n")

    summary_text = json.dumps(summary, indent=2, default=str) + "\n"
    durations_text = json.dumps(durations(run.records), indent=0) + "\n"
    paths = {"results": out / "results.jsonl", "summary": out / "summary.json", "durations": out / DURATIONS_FILE}
    publish_file(paths["results"], write_results)
    publish_file(paths["summary"], lambda tmp: tmp.write_text(summary_text, encoding="utf-8"))
    publish_file(paths["durations"], lambda tmp: tmp.write_text(durations_text, encoding="utf-8"))
    paths["report"] = write_report(list(run.records), summary, out / REPORT_NAME)
    return paths
