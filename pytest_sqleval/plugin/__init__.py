"""pytest hook wiring only: options, ini keys, collection, configure, summary, gate.

Everything else lives in modules this file imports lazily, so a pytest run that never
touches a benchmark pays almost nothing for the plugin."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from . import hookspecs
    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    from ..core import numeric  # every number is checked by its parser, on the command line and in ini
    group = parser.getgroup("sqleval", "text-to-SQL benchmark grading (pytest-sqleval)")
    group.addoption("--sqleval-backend", default=None, metavar="SPECS",
                    help="comma list of backends: gold (default), predictions:PATH, module:function, "
                         "or an entry point in 'pytest_sqleval.backends'")
    group.addoption("--sqleval-model", default=None, help="model for built-in LLM backends (ignored by module:function)")
    group.addoption("--sqleval-provider", default=None, help="provider for built-in LLM backends")
    group.addoption("--sqleval-api-base", default=None, help="API base URL for built-in LLM backends")
    group.addoption("--sqleval-concurrency", type=numeric.CONCURRENCY, default=8, metavar="N",
                    help="most backend calls in flight across the run (default 8; split between xdist workers)")
    group.addoption("--sqleval-generation-timeout", type=numeric.SECONDS, default=300.0, metavar="S",
                    help="seconds before a backend call counts as a backend_error (default 300)")
    group.addoption("--sqleval-no-cache", action="store_true", default=False,
                    help="ignore cached generations from earlier runs (this run's are still shared by workers)")
    group.addoption("--sqleval-cache-dir", default=None, metavar="DIR",
                    help="where generations and gold answers are cached (default .sqleval-cache under rootdir)")
    group.addoption("--sqleval-results", default=None, metavar="DIR",
                    help="where results.jsonl and summary.json are written (default sqleval-results under rootdir)")
    group.addoption("--sqleval-ablation-dir", default=None, metavar="DIR",
                    help="where the ablation table and plot are written when agent configurations ran "
                         "(default report under rootdir)")
    group.addoption("--sqleval-variants", type=numeric.VARIANT_COUNT, default=None, metavar="N",
                    help="grade each case also on up to N generated variants of its database, so a result that "
                         "matches by coincidence fails (default: the suite's [variants] count, else 0)")
    group.addoption("--sqleval-engine", default=None, choices=("spark",),
                    help="grade every suite's DuckDB file (or Parquet folder) on this engine instead: spark "
                         "(a local Spark, settings in each manifest's [spark]; needs pytest-sqleval[spark] and Java)")
    group.addoption("--sqleval-spark-remote", default=None, type=_spark_remote, metavar="sc://HOST:PORT",
                    help="grade every suite against the tables of this Spark Connect server "
                         "(sc://host:port/;token=...): nothing is loaded; needs pytest-sqleval[spark]")
    group.addoption("--sqleval-min-pass-rate", type=numeric.PASS_RATE, default=None, metavar="X",
                    help="gate: exit 0 only if every backend's pass rate (errors count as not passed) is >= X")
    group.addoption("--sqleval-judge", default=None, choices=("off", "advisory", "decide"),
                    help="LLM judge: off (default); advisory (execution decides, the judge annotates); "
                         "decide (suites without a database are decided by the judge)")
    group.addoption("--sqleval-judge-model", default=None, metavar="MODEL",
                    help="litellm model string for the judge, e.g. openai/gpt-4o-mini")
    group.addoption("--sqleval-judge-api-base", default=None, metavar="URL", help="API base URL for the judge")
    from .sharding import parse_shard
    group.addoption("--sqleval-shard", type=parse_shard, default=None, metavar="K/N",
                    help="run only shard K of N (K from 1): every machine computes the same plan, each test runs "
                         "in exactly one shard; merge the shards with `python -m pytest_sqleval merge`")
    group.addoption("--sqleval-run-id", default=None, metavar="ID",
                    help="the run's id, shared by its shards (default: $GITHUB_RUN_ID when sharding, else one per run)")
    group.addoption("--sqleval-shard-durations", default=None, metavar="FILE",
                    help="durations.json (written by merge) whose per-case seconds balance the shards; "
                         "the same file on every machine")
    parser.addini("sqleval_min_pass_rate", "default for --sqleval-min-pass-rate", default=None)
    parser.addini("sqleval_ablation_dir", "default for --sqleval-ablation-dir", default=None)
    parser.addini("sqleval_judge", "default for --sqleval-judge", default=None)
    parser.addini("sqleval_judge_model", "default for --sqleval-judge-model", default=None)
    parser.addini("sqleval_shard_durations", "default for --sqleval-shard-durations", default=None)


def _spark_remote(value: str) -> str:
    """``--sqleval-spark-remote``: an ``sc://`` location, else a usage error saying how to write one."""
    import argparse
    if not value.lower().startswith("sc://"):
        raise argparse.ArgumentTypeError(f"{value!r} is not a Spark Connect location: write sc://host:port/;token=...")
    return value


def pytest_configure(config: pytest.Config) -> None:
    from . import builtin_hooks
    from ..core.errors import SqlevalError
    from .items import SESSION_KEY
    from .session import SqlevalSession
    try:
        state = SqlevalSession(config)
    except SqlevalError as exc:
        raise pytest.UsageError(str(exc)) from None
    config.stash[SESSION_KEY] = state
    if not config.pluginmanager.is_registered(builtin_hooks):
        config.pluginmanager.register(builtin_hooks, "sqleval-builtins")
    config.pluginmanager.register(_Hooks(state), "sqleval-session")
    if state.run.is_worker:  # a serial run or a controller never calls them: three calls a case saved
        config.pluginmanager.register(_WorkerHooks(state), "sqleval-worker")


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto`` on suites too small to gain from workers: 0, run serially (``autoworkers``)."""
    from .autoworkers import auto_workers
    return auto_workers(config)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> Any:
    if file_path.name == "sqleval.toml":
        return _unreachable_manifest_error(file_path, parent)
    if file_path.suffix not in (".jsonl", ".json", ".csv") or not (file_path.parent / "sqleval.toml").is_file():
        return None
    from ..core.cases import find_manifest_for
    from ..core.errors import SqlevalError
    from .items import SESSION_KEY, SuiteFile
    state = parent.config.stash.get(SESSION_KEY, None)
    try:  # the run's --sqleval-engine, from its own configuration (never a module global)
        manifest = (find_manifest_for(file_path, state.run.engine, state.run.spark_remote) if state is not None
                    else find_manifest_for(file_path))
    except SqlevalError as exc:
        return _BrokenSuite.from_parent(parent, path=file_path, error=exc)
    if manifest is None:
        return None
    return SuiteFile.from_manifest(parent, file_path, manifest)


def _unreachable_manifest_error(path: Path, parent: pytest.Collector) -> Any:
    """A broken manifest is reported through its questions file; when no file next to it
    would report it (the questions file is missing, misnamed, or the key is misspelt), it
    is reported here, so that a typo is one clear error rather than a silent "no tests ran"."""
    from ..core.cases import find_manifest_for, load_manifest
    from ..core.errors import SqlevalError
    try:
        load_manifest(path)
        return None
    except SqlevalError as exc:
        error = exc
    for sibling in path.parent.iterdir():
        if sibling.suffix in (".jsonl", ".json", ".csv"):
            try:
                find_manifest_for(sibling)
            except SqlevalError:
                return None  # that file reports it
    return _BrokenSuite.from_parent(parent, path=path, error=error)


class _BrokenSuite(pytest.File):
    """A suite whose manifest is wrong: one collection error, no traceback."""

    def __init__(self, *, error: Exception, **kw: Any) -> None:
        super().__init__(**kw)
        self.error = error

    def collect(self) -> Any:
        raise self.error

    def repr_failure(self, excinfo: Any, style: Any = None) -> Any:
        return str(excinfo.value)


class _Hooks:
    """Hooks bound to the run state."""

    def __init__(self, state: Any) -> None:
        self.state = state
        self._positions: dict[int, int] | None = None  # id(item) -> its place in session.items (_window)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:  # xdist controller -> worker
        node.workerinput["sqleval_run_id"] = self.state.run.run_id
        node.workerinput["sqleval_began_ns"] = self.state.run.began_ns

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        """``-n N`` (``--dist load``) over a suite: cases scheduled by database (``scheduling.py``)."""
        if config.getvalue("dist") != "load":
            return None
        from .scheduling import DatabaseScheduling, names_a_suite
        return DatabaseScheduling(config, log) if names_a_suite(config.args, config.rootpath) else None

    @pytest.hookimpl(trylast=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        from .autoworkers import DECISION_KEY
        decision = session.config.stash.get(DECISION_KEY, None)  # -n auto ran serially: one line says why
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if decision and reporter is not None:
            reporter.write_line(decision)

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection(self, session: pytest.Session) -> None:
        """Resolve an explicit --sqleval-backend before collecting: a bad one is a usage error."""
        from ..core.errors import SqlevalError
        if session.config.getoption("sqleval_backend") is None:
            return
        try:
            self.state.backends
        except SqlevalError as exc:
            raise pytest.UsageError(str(exc)) from None

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        """--sqleval-shard: keep this shard's items, after -k/-m have selected (``sharding.py``)."""
        if self.state.run.shard is None:
            return
        keep, drop = self.state.shard_items(items)
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = keep

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:  # an xdist worker's plan, for shard.json
        plan = getattr(node, "workeroutput", {}).get("sqleval_shard_plan")
        if plan is not None and self.state.shard_plan is None:
            self.state.shard_plan = plan

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.state.freeze_collection()
        if not self.state.only_lists():
            from ..core.errors import SqlevalError
            try:
                self.state.check_output_folders(session.items)
            except SqlevalError as exc:
                raise pytest.UsageError(str(exc)) from None
            self.state.start_engines(session.items)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> Any:
        item.sqleval_next = nextitem  # type: ignore[attr-defined]  # the case graded ahead (CaseItem.runtest)
        item.sqleval_ahead = self._window(item, nextitem)  # type: ignore[attr-defined]  # its window of cases ahead
        yield
        release = getattr(item, "release", None)  # its reports are logged: the record is the sink's now
        if release is not None:
            release()

    def _window(self, item: pytest.Item, nextitem: pytest.Item | None) -> tuple[pytest.Item, ...]:
        """The items after ``item`` in the session's order whose golds and predictions are
        sent to the engine ahead of their turn (``CaseItem.runtest``): ``nextitem`` and the
        ones after it, ``GOLD_CASES_AHEAD`` in all, when ``nextitem`` follows ``item`` there
        (serially always; under xdist when the two are scheduled together)."""
        if not hasattr(item, "case"):  # not a benchmark's case: a run without one never imports the grader
            return ()
        from ..core.grading.pipeline import GOLD_CASES_AHEAD
        items = item.session.items
        positions = self._positions
        if positions is None or len(positions) != len(items):
            positions = self._positions = {id(it): i for i, it in enumerate(items)}
        i = positions.get(id(item))
        if nextitem is None or i is None or i + 1 >= len(items) or items[i + 1] is not nextitem:
            return ()
        return tuple(items[i + 1:i + 1 + GOLD_CASES_AHEAD])

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logstart(self) -> None:
        self._clear_progress()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> Any:
        self._clear_progress()  # before pytest writes the report's letter; redrawn after it
        yield
        if not self.state.run.is_worker:
            self.state.on_report(report)

    @pytest.hookimpl(tryfirst=True)
    def pytest_report_from_serializable(self, data: Any) -> None:
        if isinstance(data, dict) and data.get("user_properties"):
            from .xdist_wire import unpack_records
            unpack_records(data)

    def _clear_progress(self) -> None:
        if not self.state.run.is_worker and self.state.progress is not None:
            self.state.progress.clear()

    @pytest.hookimpl(optionalhook=True)
    def pytest_json_runtest_metadata(self, item: pytest.Item, call: pytest.CallInfo[Any]) -> Any:
        record = getattr(item, "record", None)
        return {"sqleval": record.to_json_dict()} if record is not None else None

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> Any:
        self.state.finish(session)  # before pytest-json-report writes, so both see the gated exit code
        yield

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        self._clear_progress()
        summary = self.state.summary
        if summary is None:
            return
        from ..reports.terminal import summary_lines
        terminalreporter.section("sqleval summary")
        for line in summary_lines(summary):
            terminalreporter.write_line(line)
        for lines in self.state.config.hook.pytest_sqleval_summary_lines(summary=summary):
            for line in lines or ():
                terminalreporter.write_line(str(line))
        results = self.state.run.results_dir
        terminalreporter.write_line(f"results: {results / 'results.jsonl'}  summary: {results / 'summary.json'}  "
                                    f"report: {results / 'report.html'}")
        if self.state.ablation_written:
            terminalreporter.write_line(f"ablation: {self.state.run.ablation_dir / 'ablation.md'} (table and plot)")
        progress = self.state.progress.final_line() if self.state.progress is not None else None
        if progress:
            terminalreporter.write_line(progress)
        for line in self.state.gate_lines:
            terminalreporter.write_line(line, red="FAILED" in line, green="PASSED" in line)

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self.state.close()


class _WorkerHooks:
    """What only an xdist worker does with its reports: its generation counts on each case's
    last report, its records packed for the wire. Registered on workers only: a hook wrapper
    is a call on every report, three a case."""

    def __init__(self, state: Any) -> None:
        self.state = state

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[Any]) -> Any:
        report = (yield).get_result()
        if call.when == "teardown" and self.state.generation_started:
            from ..reports.progress import PROGRESS_KEY  # a worker's counts, for the controller's progress
            report.user_properties.append((PROGRESS_KEY, {"worker": self.state.run.worker_index,
                                                          **self.state.generation.progress()}))

    @pytest.hookimpl(hookwrapper=True)
    def pytest_report_to_serializable(self, report: Any) -> Any:
        data = (yield).get_result()
        if isinstance(data, dict):  # its record goes as one JSON string (xdist_wire)
            from .xdist_wire import pack_records
            pack_records(data)
