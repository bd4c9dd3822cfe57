"""Run state: options, backends, graders, generations, results, the xdist merge,
run outputs, the error-class cache and the pass-rate gate.

Workers grade and attach each case record to its report; the controller (or the only
process, when serial) receives every report, writes one merged output, and decides the
exit status. Records travel as ``user_properties``, so serial and ``-n 2`` runs produce
the same files."""
from __future__ import annotations

import atexit
import gc
import json
import os
import sys
import time
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

import pytest

from .errors import UsageError

if TYPE_CHECKING:
    from .backends.base import Backend
    from .cases import BenchmarkCase, SuiteManifest
    from .generation import GenerationService
    from .grading.pipeline import SuiteGrader

RECORD_KEY = "sqleval"
CASE_KEY = "sqleval_case"
ERROR_CLASS_CACHE = "sqleval/error_classes"


class SqlevalSession:
    """Registered as a plugin under the name ``sqleval-session``; one per process."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        opt = config.getoption
        self.is_worker = hasattr(config, "workerinput")
        winput = getattr(config, "workerinput", {})
        self.run_id: str = winput.get("sqleval_run_id") or time.strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:6]
        self.worker_index, self.worker_count = _worker_position(winput)
        self.backend_spec: str = opt("sqleval_backend") or "gold"
        concurrency = opt("sqleval_concurrency")
        if concurrency < 1:
            raise UsageError(f"--sqleval-concurrency must be at least 1, got {concurrency}")
        # The limit is for the whole run: xdist workers share it.
        self.concurrency = max(1, concurrency // self.worker_count)
        self.generation_timeout: float = opt("sqleval_generation_timeout")
        self.use_cache = not opt("sqleval_no_cache")
        root = Path(str(config.rootpath))
        self.cache_dir = _resolve(root, opt("sqleval_cache_dir") or ".sqleval-cache")
        self.results_dir = _resolve(root, opt("sqleval_results") or "sqleval-results")
        self.min_pass_rate = _min_pass_rate(config)
        self.judge_mode, self.judge_model = _judge_settings(config)
        self._judge: Any = None
        self._backends: list[Backend] | None = None
        self._graders: dict[Path, SuiteGrader] = {}
        self._started: dict[Path, tuple[Any, Any]] = {}  # manifest -> (engine host, its describe ticket)
        self._generation: GenerationService | None = None
        self._prefetched = False
        # controller side
        self.records: dict[str, dict[str, Any]] = {}
        self.case_nodeids: set[str] = set()
        self.other_failures = 0
        self.failed_reports = 0  # test reports pytest counts as failures (session.testsfailed counts them too)
        self.summary: dict[str, Any] | None = None
        self.gate_lines: list[str] = []
        self._results_fh: Any = None  # this run's journal: every finished record, appended as it comes
        self._journal: Path | None = None
        cache = getattr(config, "cache", None)
        self.previous_classes: dict[str, str] = cache.get(ERROR_CLASS_CACHE, {}) if cache is not None else {}

    # -- backends and engines ------------------------------------------------------------
    @property
    def backends(self) -> list[Backend]:
        if self._backends is None:
            from .backends import BackendOptions, resolve_backends
            opt = self.config.getoption
            self._backends = resolve_backends(self.backend_spec, BackendOptions(
                model=opt("sqleval_model"), provider=opt("sqleval_provider"), api_base=opt("sqleval_api_base"),
                rootdir=str(self.config.rootpath)))
        return self._backends

    @property
    def judge(self) -> Any:
        if self._judge is None:
            from .grading.judge import Judge
            api_base = self.config.getoption("sqleval_judge_api_base")
            # a self-hosted endpoint may need no key, but the OpenAI client insists on one
            api_key = os.environ.get("SQLEVAL_JUDGE_API_KEY") or (
                os.environ.get("OPENAI_API_KEY", "no-key-needed") if api_base else None)
            self._judge = Judge(self.judge_model, api_base=api_base, api_key=api_key, cache_dir=self.cache_dir / "judge")
        return self._judge

    def run_metadata(self) -> dict[str, Any]:
        """What every record carries about the run that produced it."""
        from ._version import __version__
        meta: dict[str, Any] = {"run_id": self.run_id, "plugin_version": __version__, "judge_mode": self.judge_mode}
        if self.judge_mode != "off":
            from .grading.judge import JUDGE_PROMPT_VERSION
            meta.update(judge_model=self.judge_model, judge_prompt_version=JUDGE_PROMPT_VERSION)
        return meta

    def open_grader(self, manifest: SuiteManifest) -> Any:
        """The suite's grader if it is open already; never opens one."""
        return self._graders.get(manifest.path)

    def grader_for(self, manifest: SuiteManifest) -> Any:
        grader = self._graders.get(manifest.path)
        if grader is None and manifest.database is None:
            grader = self._graders[manifest.path] = _static_grader(manifest)
        if grader is None:
            from .engines.build import ensure_database
            from .grading.pipeline import SuiteGrader
            ensure_database(manifest.database, manifest.build)
            grader = SuiteGrader(manifest.database, dialect=manifest.dialect, limits=manifest.limits,
                                 policy=manifest.compare, deprecated=manifest.deprecated_tables,
                                 cache_dir=self.cache_dir, started=self._started.pop(manifest.path, None))
            self._graders[manifest.path] = grader
        return grader

    @property
    def generation(self) -> GenerationService:
        if self._generation is None:
            from .generation import GenerationService, GenerationStore
            store = GenerationStore(self.cache_dir, self.run_id, persistent=self.use_cache)
            self._generation = GenerationService(store, self.concurrency, self.generation_timeout)
        return self._generation

    def prefetch(self, items: list[pytest.Item]) -> None:
        """Submit every case of this process's session at once, so generations overlap;
        workers start at different offsets and claims keep a case from being generated twice."""
        if self._prefetched:
            return
        self._prefetched = True
        pairs = [(it.backend, it.case) for it in items if hasattr(it, "case") and hasattr(it, "backend")]
        if self.worker_count > 1 and pairs:
            k = len(pairs) * self.worker_index // self.worker_count
            pairs = pairs[k:] + pairs[:k]
        self.generation.prefetch(pairs)

    def start_engines(self, items: list[pytest.Item], most: int = 2) -> None:
        """Start the engine process of the first suites this process will grade, without
        waiting for it: its start-up (imports, opening the database, the catalog) then
        overlaps pytest's own instead of delaying the first case."""
        from .engines import is_url
        from .grading.pipeline import SuiteGrader
        for item in items:
            manifest = getattr(item, "manifest", None)
            if len(self._started) >= most:
                break
            if (manifest is None or manifest.database is None or manifest.path in self._started
                    or manifest.path in self._graders
                    or not (is_url(manifest.database) or Path(manifest.database).exists())):  # a build comes first
                continue
            self._started[manifest.path] = SuiteGrader.start_engine(manifest.database, manifest.limits, self.cache_dir)

    # -- the collected tree and the garbage collector ----------------------------------------
    def freeze_collection(self) -> None:
        """Items, cases and manifests live until the run ends: moved out of the collector's
        view, they are not traversed again by every full collection (pytest's own at exit
        included), which costs in proportion to the suite's size. They are unfrozen when the
        run ends if it is one of several in this process (see ``close``), else at exit."""
        gc.freeze()
        atexit.unregister(_unfreeze_at_exit)  # once per process, however many runs freeze
        atexit.register(_unfreeze_at_exit)

    def close(self) -> None:
        for host, _ in self._started.values():
            host.close()
        self._started.clear()
        for grader in self._graders.values():
            grader.close()
        self._graders.clear()
        if self._generation is not None:
            self._generation.close()
            if not self.is_worker:
                self._generation.store.discard_run()
        self._close_journal(remove=False)  # a run that never finished keeps its journal beside results.jsonl
        if not _process_ends_with_run(self.config):  # pytester, or pytest.main() called in a loop
            gc.unfreeze()

    # -- controller: collecting records ---------------------------------------------------
    def on_report(self, report: pytest.TestReport) -> None:
        props = dict(p for p in report.user_properties if isinstance(p, tuple) and len(p) == 2)
        if report.failed and not hasattr(report, "wasxfail"):  # as pytest's Session counts them
            self.failed_reports += 1
        record = props.get(RECORD_KEY)
        # a report xdist makes up for an item whose worker crashed carries no properties:
        # it is still a benchmark case, to be reported as lost, not as a failing test
        if CASE_KEY in props or report.nodeid.split("::", 1)[0].endswith(".jsonl"):
            self.case_nodeids.add(report.nodeid)
        elif report.failed:
            self.other_failures += 1
        if record is None or report.nodeid in self.records:
            return
        self.records[report.nodeid] = record
        if self._results_fh is None:
            self.results_dir.mkdir(parents=True, exist_ok=True)
            self._journal = self.results_dir / f".results.{self.run_id}.{os.getpid()}.partial.jsonl"
            self._results_fh = open(self._journal, "w", encoding="utf-8")
        self._results_fh.write(json.dumps(record, default=str) + "\n")
        self._results_fh.flush()  # a killed run keeps every finished case in its journal

    def _close_journal(self, remove: bool) -> None:
        if self._results_fh is not None:
            self._results_fh.close()
            self._results_fh = None
        if remove and self._journal is not None:
            self._journal.unlink(missing_ok=True)
            self._journal = None

    def lost_cases(self) -> list[str]:
        return sorted(self.case_nodeids - set(self.records))

    def finish(self, session: pytest.Session) -> None:
        if self.is_worker or not (self.records or self.case_nodeids):
            return
        from .reports.summary import summarize
        records = [self.records[k] for k in sorted(self.records)]
        expected = len(self.case_nodeids | set(self.records))
        run = {"run_id": self.run_id, "backends": [b.label for b in self.backends], "backend_spec": self.backend_spec,
               "min_pass_rate": self.min_pass_rate, "xdist_workers": _xdist_workers(self.config),
               "lost": self.lost_cases(), "generation_cache": self.use_cache}
        self.summary = summarize(records, expected=expected, run=run)
        self._apply_gate(session)
        self.summary["run"]["exit_status"] = int(session.exitstatus)
        self.results_dir.mkdir(parents=True, exist_ok=True)
        self._close_journal(remove=True)

        def write_results(tmp: Path) -> None:
            # rewritten sorted, so serial and xdist runs give identical files
            with open(tmp, "w", encoding="utf-8") as fh:
                for rec in records:
                    fh.write(json.dumps(rec, default=str, sort_keys=True) + "\n")

        summary_text = json.dumps(self.summary, indent=2, default=str) + "\n"
        with _folder_lock(self.results_dir):  # runs sharing the folder: the last to finish writes both files
            _publish(self.results_dir / "results.jsonl", write_results)
            _publish(self.results_dir / "summary.json", lambda tmp: tmp.write_text(summary_text, encoding="utf-8"))
        self._write_ablation(records)
        self._remember_error_classes(records)

    def _write_ablation(self, records: list[dict[str, Any]]) -> None:
        """When an agent configuration ran, the ablation table and plot come with the run."""
        from .backends.registry import AGENT_CONFIGS
        if not any(r["backend"] in AGENT_CONFIGS for r in records):
            return
        from .reports.ablation import write_ablation
        self.ablation_dir = Path(str(self.config.rootpath)) / "report"
        write_ablation(records, self.ablation_dir)

    def _apply_gate(self, session: pytest.Session) -> None:
        """Decide the exit status from each backend's pass rate; exit codes 2-5 stay.

        The gate turns pytest's 1 into 0 only when every failure pytest counted is a test
        report seen here: a collection error (``--continue-on-collection-errors``) keeps the 1."""
        if self.min_pass_rate is None or self.summary is None:
            return
        status = int(session.exitstatus)
        ok = True
        for name, b in self.summary["backends"].items():
            rate = b["pass_rate"] or 0.0
            good = rate >= self.min_pass_rate
            ok = ok and good
            self.gate_lines.append(f"gate {'PASSED' if good else 'FAILED'}: backend {name} pass rate "
                                   f"{rate:.3f} {'>=' if good else '<'} {self.min_pass_rate:.3f}")
        if self.lost_cases():
            ok = False
            self.gate_lines.append(f"gate FAILED: {len(self.lost_cases())} case(s) lost")
        if self.other_failures:
            ok = False
            self.gate_lines.append(f"gate FAILED: {self.other_failures} non-benchmark test(s) failed")
        errors = _collection_errors(session, self.failed_reports)
        if errors:
            ok = False
            shown = [e for e in errors if e]
            names = f": {', '.join(shown[:5])}{', ...' if len(shown) > 5 else ''}" if shown else ""
            self.gate_lines.append(f"gate FAILED: {len(errors)} collection error(s) occurred{names}; "
                                   "a pass rate over the cases that could be collected gates nothing")
        if session.shouldstop or session.shouldfail:  # -x / --maxfail: the rate covers only the cases run so far
            ok = False
            self.gate_lines.append(f"gate FAILED: the run stopped early ({session.shouldstop or session.shouldfail}); "
                                   "a pass rate over part of the cases gates nothing")
        if status in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
            session.exitstatus = pytest.ExitCode.OK if ok else pytest.ExitCode.TESTS_FAILED

    def _remember_error_classes(self, records: list[dict[str, Any]]) -> None:
        """Merged per case: cases not run keep what they had; only the controller writes."""
        cache = getattr(self.config, "cache", None)
        if cache is None:
            return
        merged = dict(cache.get(ERROR_CLASS_CACHE, {}))
        for rec in records:
            key = case_cache_key(suite_nodeid(rec["nodeid"], rec["case_id"], rec["backend"]),
                                 rec["case_id"], rec["backend"])
            if rec["status"] == "failed" and rec.get("error_class"):
                merged[key] = rec["error_class"]
            else:
                merged.pop(key, None)
        cache.set(ERROR_CLASS_CACHE, merged)

    def previous_error_class(self, suite: str, case_id: str, backend_label: str) -> str | None:
        return self.previous_classes.get(case_cache_key(suite, case_id, backend_label))


def _publish(path: Path, write: Callable[[Path], Any]) -> None:
    """Replace ``path`` whole: ``write`` fills a temporary file in the same folder, which
    then takes the name in one ``os.replace``. A reader, or another run sharing the folder,
    sees the old file or the new one, never a mix; when two runs publish, the last wins."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


@contextmanager
def _folder_lock(folder: Path) -> Iterator[None]:
    """Held while a run publishes its final results.jsonl and summary.json, so both files
    come from the same run (the last to finish). Where there is no ``fcntl`` it locks nothing."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    with open(folder / ".sqleval.lock", "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _collection_errors(session: pytest.Session, failed_reports: int) -> list[str]:
    """The collection errors of a run that went on past them (``--continue-on-collection-errors``).

    pytest counts every failed collection report and every failed test report in
    ``session.testsfailed`` (xdist forwards its workers' to the controller's); whatever no
    test report explains is a collection error. The names come from the terminal
    reporter when there is one; without it each error is an empty name."""
    count = max(0, int(getattr(session, "testsfailed", 0)) - failed_reports)
    if not count:
        return []
    names: list[str] = []
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    for rep in (getattr(reporter, "stats", {}) or {}).get("error", []):
        if isinstance(rep, pytest.CollectReport) and rep.failed and rep.nodeid not in names:
            names.append(rep.nodeid or "<rootdir>")
    return (names + [""] * count)[:count]


def _static_grader(manifest: SuiteManifest) -> Any:
    """A grader for a suite without a database: grounding against its DDL, if it has one."""
    from .errors import BadInputError
    from .grading.grounding import catalog_from_ddl
    from .grading.pipeline import StaticGrader
    catalog, source = None, ""
    if manifest.schema_ddl is not None:
        from .cases import read_text
        source = read_text(manifest.schema_ddl)
        try:
            catalog = catalog_from_ddl(source, manifest.dialect)
        except ValueError as exc:
            raise BadInputError(manifest.schema_ddl, str(exc), fix="fix the CREATE TABLE statements") from None
    return StaticGrader(dialect=manifest.dialect, catalog=catalog, deprecated=manifest.deprecated_tables,
                        catalog_source=source)


def _judge_settings(config: pytest.Config) -> tuple[str, str | None]:
    from .grading.adjudicate import JUDGE_MODES
    mode = config.getoption("sqleval_judge") or config.getini("sqleval_judge") or "off"
    if mode not in JUDGE_MODES:
        raise UsageError(f"--sqleval-judge must be one of {', '.join(JUDGE_MODES)}, got {mode!r}")
    model = config.getoption("sqleval_judge_model") or config.getini("sqleval_judge_model") or None
    if mode != "off" and not model:
        raise UsageError(f"--sqleval-judge={mode} needs a judge model: --sqleval-judge-model=openai/gpt-4o-mini "
                         "(any litellm model string; the provider's API key comes from its usual environment "
                         "variable or SQLEVAL_JUDGE_API_KEY)")
    return mode, model


def case_cache_key(suite: str, case_id: str, backend_label: str) -> str:
    """The error-class cache's key: suite (its questions file's node id), case id, backend label.

    It never depends on how this run names the item (``q06`` with one backend, ``q06[gold]``
    with several), so a class remembered for a case and backend applies whatever backend
    list the next run names."""
    return f"{suite}::{case_id}|{backend_label}"


def suite_nodeid(nodeid: str, case_id: str, backend_label: str) -> str:
    """The questions file's node id, from a case's: the node id without the item's name,
    which is ``q06`` (one backend) or ``q06[gold]`` (several)."""
    for name in (f"{case_id}[{backend_label}]", case_id):
        if nodeid.endswith(f"::{name}"):
            return nodeid[:-len(name) - 2]
    return nodeid.rsplit("::", 1)[0]


#: Extensions that count their live objects when the interpreter exits and print each one
#: still alive: DuckDB 2.0.0's bindings (nanobind) print "nanobind: leaked ..." lines.
_LEAK_CHECKED_AT_EXIT = ("duckdb", "_duckdb")


def _unfreeze_at_exit() -> None:
    """Frozen objects are never freed, not even at exit, and they include every object that
    existed at the freeze: the ``duckdb`` module's types, functions and type constants among
    them, which its bindings then report as leaked. Unfrozen here, after pytest's own
    collections, the interpreter frees them as it shuts down. Where no such extension is
    loaded (``--collect-only`` never imports DuckDB) the tree stays frozen: freeing it
    would cost about 14 ms per 1,000 cases and change nothing anyone sees."""
    if any(name in sys.modules for name in _LEAK_CHECKED_AT_EXIT):
        gc.unfreeze()


def _process_ends_with_run(config: pytest.Config) -> bool:
    """A ``pytest`` command or an xdist worker: what it froze need never be collected before exit."""
    argv0 = sys.argv[0] if sys.argv else ""
    return (hasattr(config, "workerinput") or Path(argv0).name in ("pytest", "py.test")
            or argv0.endswith(os.path.join("pytest", "__main__.py")))


def _resolve(root: Path, value: str) -> Path:
    p = Path(value).expanduser()
    return p if p.is_absolute() else root / p


def _worker_position(winput: dict[str, Any]) -> tuple[int, int]:
    wid = winput.get("workerid", "gw0")
    try:
        index = int(str(wid).lstrip("gw"))
    except ValueError:
        index = 0
    count = int(winput.get("workercount", 1) or 1)
    return index, max(1, count)


def _xdist_workers(config: pytest.Config) -> int:
    n = getattr(config.option, "numprocesses", None)
    return int(n) if isinstance(n, int) else 0


def _min_pass_rate(config: pytest.Config) -> float | None:
    raw = config.getoption("sqleval_min_pass_rate")
    source = "--sqleval-min-pass-rate"
    if raw is None:
        raw = config.getini("sqleval_min_pass_rate") or None
        source = "ini option sqleval_min_pass_rate"
    if raw is None:
        return None
    try:
        value = float(raw)
    except ValueError:
        raise UsageError(f"{source} must be a number between 0 and 1, got {raw!r}") from None
    if not 0.0 <= value <= 1.0:
        raise UsageError(f"{source} must be between 0 and 1 (a fraction, not a percentage), got {raw!r}")
    return value
