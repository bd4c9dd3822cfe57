"""The run, composed: its configuration (``runconfig``), the graders (``pool``), the
generations (``generation``), the results sink (``reports.sink``) and the gate (``gate``).
One per process, stashed on the pytest config; each part owns its own state."""
from __future__ import annotations

import atexit
import contextlib
import gc
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .gate import RunFacts, apply_gate, run_facts
from ..core.pool import GraderPool
from ..reports.sink import ResultsSink
from .runconfig import RunConfig

if TYPE_CHECKING:
    from ..core.backends.base import Backend
    from ..core.generation import GenerationService
    from ..reports.progress import LiveProgress


class SqlevalSession:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.run = RunConfig.from_pytest(config)
        self.pool = GraderPool(self.run.cache_dir, layers_for=self._layers_for, variants=self.run.variants,
                               began_ns=self.run.began_ns)
        self.pool.native_variants = self._native_variants
        self.sink = ResultsSink(self.run.results_dir, self.run.run_id, getattr(config, "cache", None))
        self.summary: dict[str, Any] | None = None
        self.gate_lines: list[str] = []
        self.ablation_written = False
        self._judge: Any = None
        self._backends: list[Backend] | None = None
        self._generation: GenerationService | None = None
        self._progress: LiveProgress | None = None
        self._prefetched = False
        self._grades_early: bool | None = None  # grades_what_it_collects, asked once
        self._only_lists: bool | None = None  # only_lists, asked once
        self.shard_plan: dict[str, Any] | None = None  # this shard's plan (ShardPlan.to_json_dict), when sharded

    def _layers_for(self, manifest: Any) -> list[Any]:
        """A new grader's layers: the built-ins and whatever plugins add (``pytest_sqleval_layers``)."""
        layers: list[Any] = []
        self.config.hook.pytest_sqleval_layers(layers=layers, manifest=manifest)
        return layers

    def _native_variants(self, manifest: Any, folder: Path) -> list[Path]:
        """A suite generator's own variants (``pytest_sqleval_native_variants``), in hook order."""
        from .suite_hooks import ask_native_variants
        return ask_native_variants(self.config.hook, manifest, folder)

    # -- what the items ask for -----------------------------------------------------------
    @property
    def backends(self) -> list[Backend]:
        if self._backends is None:
            from ..core.backends import BackendOptions, resolve_backends
            opt = self.config.getoption
            self._backends = resolve_backends(self.run.backend_spec, BackendOptions(
                model=opt("sqleval_model"), provider=opt("sqleval_provider"), api_base=opt("sqleval_api_base"),
                rootdir=str(self.config.rootpath)))
        return self._backends

    @property
    def judge(self) -> Any:
        if self._judge is None:
            from ..core.grading.judge import Judge
            model = self.run.judge_model
            assert model is not None  # RunConfig refuses a judge mode without a model
            self._judge = Judge.configured(model, api_base=self.config.getoption("sqleval_judge_api_base"),
                                           cache_dir=self.run.cache_dir / "judge")
        return self._judge

    def run_metadata(self) -> dict[str, Any]:
        """What every record carries about the run that produced it."""
        from .._version import __version__
        meta: dict[str, Any] = {"run_id": self.run.run_id, "plugin_version": __version__,
                                "judge_mode": self.run.judge_mode}
        if self.run.judge_mode != "off":
            from ..core.grading.judge import JUDGE_PROMPT_VERSION
            meta.update(judge_model=self.run.judge_model, judge_prompt_version=JUDGE_PROMPT_VERSION)
        return meta

    @property
    def generation(self) -> GenerationService:
        if self._generation is None:
            from ..core.generation import GenerationService, GenerationStore
            shard = self.run.shard  # shards of one run may share a machine and a cache: each its own claims
            store_id = self.run.run_id if shard is None else f"{self.run.run_id}-shard{shard.index}of{shard.count}"
            store = GenerationStore(self.run.cache_dir, store_id, persistent=self.run.use_cache)
            self._generation = GenerationService(store, self.run.concurrency, self.run.generation_timeout)
            if self.progress is not None and not self.run.is_worker:
                self._generation.waiting = self.progress.tick_while_waiting
        return self._generation

    @property
    def generation_started(self) -> bool:
        return self._generation is not None

    @property
    def progress(self) -> LiveProgress | None:
        """Live progress of the generations, drawn by the process that shows pytest's output
        (serial: this one; xdist: the controller, from the counts workers send)."""
        if self._progress is None and not self.run.is_worker:
            reporter = self.config.pluginmanager.get_plugin("terminalreporter")
            if reporter is not None:
                from ..reports.progress import LiveProgress
                capman = self.config.pluginmanager.get_plugin("capturemanager")
                self._progress = LiveProgress(reporter, self._progress_counts,
                                              capman.global_and_fixture_disabled if capman is not None else
                                              contextlib.nullcontext, settles=not self.run.xdist_workers)
        return self._progress

    def _progress_counts(self) -> dict[str, Any]:
        from ..reports.progress import combine
        if self.run.xdist_workers:
            return combine(self._progress.parts.values() if self._progress is not None else ())
        return combine([self._generation.progress()] if self._generation is not None else ())

    def on_report(self, report: pytest.TestReport) -> None:
        """The controller's part of a finished report: the record to the sink, a worker's
        generation counts to the progress."""
        self.sink.on_report(report)
        progress = self.progress
        if progress is not None:
            if self.run.xdist_workers:  # only workers' reports carry their counts
                from ..reports.progress import PROGRESS_KEY
                for prop in report.user_properties:
                    if (isinstance(prop, tuple) and len(prop) == 2 and prop[0] == PROGRESS_KEY
                            and isinstance(prop[1], dict)):
                        progress.parts[prop[1].get("worker")] = prop[1]  # each worker's latest counts
            progress.tick()

    def prefetch(self, items: list[pytest.Item]) -> None:
        """Submit every case of this process's session at once, so generations overlap;
        workers start at different offsets and claims keep a case from being generated twice."""
        if self._prefetched:
            return
        self._prefetched = True
        pairs = [(it.backend, it.case) for it in items if hasattr(it, "case") and hasattr(it, "backend")]
        if self.run.worker_count > 1 and pairs:
            k = len(pairs) * self.run.worker_index // self.run.worker_count
            pairs = pairs[k:] + pairs[:k]
        self.generation.prefetch(pairs)

    def shard_items(self, items: list[pytest.Item]) -> tuple[list[pytest.Item], list[pytest.Item]]:
        """This shard's items and the others', by the plan every shard computes alike (``sharding``)."""
        from .sharding import make_plan, units_of
        assert self.run.shard is not None
        plan = make_plan(self.run.shard, units_of(items, self.config.rootpath, self.run.shard_durations),
                         self.run.explicit_run_id)
        mine = set(plan.nodeids)
        cases = sorted(i.nodeid for i in items if i.nodeid in mine and hasattr(i, "case"))
        self.shard_plan = {**plan.to_json_dict(), "case_nodeids": cases}  # each must end graded or lost
        return [i for i in items if i.nodeid in mine], [i for i in items if i.nodeid not in mine]

    def check_output_folders(self, items: list[pytest.Item]) -> None:
        """The default results and cache folders, once benchmark cases are to run (a folder
        named by an option was checked when the run was configured): a run that cannot
        write its results stops before grading anything."""
        from .runconfig import check_folder
        if self.run.is_worker or not any(hasattr(it, "case") for it in items):
            return
        check_folder("--sqleval-results", self.run.results_dir)
        check_folder("--sqleval-cache-dir", self.run.cache_dir)

    def start_engines(self, items: list[pytest.Item]) -> None:
        """Start the engine process while pytest finishes starting. An xdist worker has
        collected every case but will grade only the databases the controller sends it,
        so it opens none ahead: it only starts the process. A run left with no case to
        grade (every one deselected) ends the process its collection started (``start_early``)."""
        manifests = [m for m in (getattr(it, "manifest", None) for it in items) if m is not None]
        if not manifests:
            self.pool.stop_engines()
            return
        self.pool.start_engines(manifests, open_databases=not self.run.is_worker)

    def start_early(self, manifest: Any, open_database: bool = True) -> None:
        """As collection sees a suite: start the engine process (its start-up, 0.3 s of the
        interpreter, DuckDB's and pyarrow's imports, then overlaps the rest of collection
        instead of the first case waiting for it) and open the first database collected.
        Only in a run known, before its collection ends, to grade what it collects
        (``grades_what_it_collects``); any other run starts it when collection ends."""
        if self._grades_early is None:
            self._grades_early = self.grades_what_it_collects()
        if self._grades_early:  # an xdist worker grades the databases it is sent: it opens none ahead
            self.pool.start_engines([manifest], most=1, open_databases=open_database and not self.run.is_worker)

    def grades_what_it_collects(self) -> bool:
        """No option of the run lists, plans or deselects cases, and this process grades them:
        a serial run or an xdist worker, not the controller (it grades nothing). Selection by
        node id needs no check: what it collects is what runs."""
        opt, run = self.config.option, self.run
        controller = run.xdist_workers > 0 and not run.is_worker
        return not (self.only_lists() or controller or run.shard is not None
                    or any(getattr(opt, name, None) for name in ("keyword", "markexpr", "deselect", "lf", "stepwise")))

    def only_lists(self) -> bool:
        """The run lists cases, fixtures or setups (``--collect-only``, ``--fixtures``,
        ``--setup-plan``, ...): it runs no case, so it needs no engine process."""
        if self._only_lists is None:  # asked by every case's setup: the options do not change during a run
            listing = ("collectonly", "showfixtures", "show_fixtures_per_test", "setuponly", "setupplan")
            self._only_lists = any(getattr(self.config.option, name, None) for name in listing)
        return self._only_lists

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
        self.pool.close()
        if self._generation is not None:
            self._generation.close()
            if not self.run.is_worker:
                self._generation.store.discard_run()
        self.sink.close_journal(remove=False)  # a run that never finished keeps its journal beside results.jsonl
        if not _process_ends_with_run(self.config):  # pytester, or pytest.main() called in a loop
            gc.unfreeze()

    # -- the controller: the run's outputs and exit status --------------------------------------
    def finish(self, session: pytest.Session) -> None:
        if self.run.is_worker:
            if self.shard_plan is not None:  # the controller collects nothing: it learns the plan from a worker
                self.config.workeroutput["sqleval_shard_plan"] = self.shard_plan  # type: ignore[attr-defined]
            return
        if self.only_lists():  # it graded nothing: the last run's results stay as they were
            return
        sink = self.sink
        facts = RunFacts()
        if sink.records or sink.case_nodeids:
            facts = self._finish_results(session)
        if self.run.shard is not None:
            self._finish_shard(session, facts)

    def _finish_results(self, session: pytest.Session) -> RunFacts:
        sink = self.sink
        from ..reports.summary import summarize
        records = sink.sorted_records()
        run = {"run_id": self.run.run_id, "backends": [b.label for b in self.backends],
               "backend_spec": self.run.backend_spec, "min_pass_rate": self.run.min_pass_rate,
               "xdist_workers": self.run.xdist_workers, "lost": sink.lost_cases(),
               "generation_cache": self.run.use_cache}
        if self.run.shard is not None:
            run["shard"] = str(self.run.shard)
        self.summary = summarize(records, expected=sink.expected(), run=run)
        facts = run_facts(session, sink.lost_cases(), sink.other_failures, sink.failed_reports)
        self.gate_lines = apply_gate(session, self.run.min_pass_rate, self.summary, facts)
        self.summary["run"]["exit_status"] = int(session.exitstatus)
        sink.publish(records, self.summary)
        from ..reports.ablation import has_ablation, write_ablation
        if has_ablation(records):  # agent configurations ran: the table and plot come with the run
            variants = [] if self.run.variants is None else [f"--sqleval-variants={self.run.variants}"]
            sections = report_sections(self.backends)
            write_ablation(records, self.run.ablation_dir, rootdir=self.config.rootpath, grading_args=variants,
                           sections=sections)
            self.ablation_written = True
        sink.remember_error_classes(records)
        from .autoworkers import remember
        remember(self.config, sink.cases_and_seconds())  # what the next -n auto decides from
        return facts

    def _finish_shard(self, session: pytest.Session, facts: RunFacts) -> None:
        """``shard.json`` beside the results, last: what ``merge`` checks. A shard the plan
        left empty is a success (pytest would say "no tests ran", exit 5)."""
        from .._version import __version__
        from ..reports.shards import write_shard_manifest
        if self.shard_plan is None or self.config.option.collectonly:
            return  # nothing ran (--collect-only, a usage error, every worker crashed): merge reports it missing
        if int(session.exitstatus) == pytest.ExitCode.NO_TESTS_COLLECTED and self.shard_plan["cases_total"]:
            session.exitstatus = pytest.ExitCode.OK
        write_shard_manifest(self.run.results_dir, {
            **self.shard_plan, "plugin_version": __version__, "record_run_id": self.run.run_id,
            "records": len(self.sink.records), "min_pass_rate": self.run.min_pass_rate,
            "lost": list(facts.lost), "other_failures": facts.other_failures,
            "collection_errors": list(facts.collection_errors), "stopped": facts.stopped,
            "exit_status": int(session.exitstatus)})


REPORT_SECTIONS_GROUP = "pytest_sqleval.report_sections"


def report_sections(backends: list[Any]) -> list[Any]:
    """The parts products add to the ablation report: those the run's backends bring, then
    every installed one (entry-point group ``pytest_sqleval.report_sections``), each once."""
    from ..core import UsageError
    from ..core.registry import load_group

    def name_of(obj: Any, where: str) -> str:
        if not (callable(getattr(obj, "markdown", None)) and callable(getattr(obj, "json", None))):
            raise UsageError(f"{where} is not a report section (it needs markdown(rows) and json(rows)). "
                             "Fix: point the entry point at an AblationSection")
        return where
    installed = load_group(REPORT_SECTIONS_GROUP, "report section", UsageError, name_of, set())
    return list(dict.fromkeys([s for b in backends for s in b.report_sections] + installed))


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
