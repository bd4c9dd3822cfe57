"""The graders of one run: one per suite database (per ``db_id`` for Spider/BIRD, the
least recently used closed beyond ``MAX_OPEN_DATABASES``), one per schema for suites
without a database, and the engine process they share, started ahead of the first case."""
from __future__ import annotations

import hashlib
from collections import OrderedDict
from pathlib import Path
from typing import Any, Callable

from .cases import BenchmarkCase, Layout, SuiteManifest, get_layout
from .errors import BadInputError, SqlevalError, UsageError

MAX_OPEN_DATABASES = 4  # per-database engine processes kept open per run (least recently used closed)
VARIANT_ENGINES = ("duckdb", "sqlite")  # the engines whose databases the grader can make variants of
MAX_SCHEMA_GRADERS = 1024  # graders of a case's own CREATE TABLE context (sql-create-context)
#: what the engine process imports as it starts, before its first request comes: the grading
#: handler's (pyarrow, numpy, DuckDB: 0.2 s of its 0.3 s start-up) and the default engine's sandbox
ENGINE_WARM = tuple(f"{__package__}.{name}" for name in ("grading.compare", "grading.engine_side",
                                                          "engines.duckdb_sandbox"))


def _layout(manifest: SuiteManifest) -> Layout:
    """The suite's layout (``load_manifest`` refuses a name no layout has)."""
    layout = get_layout(manifest.layout)
    assert layout is not None
    return layout


class GraderPool:
    """Opens, keeps and closes graders. ``layers_for`` gives a new grader its layers (the
    ``pytest_sqleval_layers`` hook in a pytest run)."""

    def __init__(self, cache_dir: Path, layers_for: Callable[[SuiteManifest], list[Any] | None] = lambda m: None,
                 variants: int | None = None, began_ns: int | None = None) -> None:
        self.cache_dir = cache_dir
        self.began_ns = began_ns  # when the run began (SuiteGrader's began_ns): default, when the pool is made
        if self.began_ns is None:
            import time
            self.began_ns = time.time_ns()
        self.layers_for = layers_for
        self.variants = variants  # --sqleval-variants; None: each suite's [variants] count
        self._graders: dict[Path, Any] = {}
        self._started: dict[Path, tuple[Any, Any]] = {}  # manifest -> (engine host, its describe ticket)
        self._next: dict[Path, SuiteManifest] = {}  # suite -> the suite with a database this process grades next
        self._per_database: OrderedDict[Path, None] = OrderedDict()
        self._unbuildable: dict[Path, SqlevalError] = {}  # suite -> why its variants cannot be built
        self._golds: dict[Path, dict[Any, list[str]]] = {}  # questions file -> db_id -> gold SQL (the literals)
        self.frozen_variants = True  # take choices from a suite's variants.frozen.json (validate refreezes)
        # a suite's own generator's variants (the pytest_sqleval_native_variants hook in a pytest run)
        self.native_variants: Callable[[SuiteManifest, Path], list[Path]] = lambda manifest, folder: []
        self._engines: Any = None  # the engine process every database of this run shares (started on first use)
        self._in_process: Any = None  # the databases served in this process (engines.host.runs_in_process)

    def _engine_process(self, manifest: SuiteManifest | None = None) -> Any:
        """Where ``manifest``'s database runs: in this process when its engine enforces every
        limit itself (SQLite), else in the engine process every such database shares."""
        from .engines.host import InProcessEngine, runs_in_process
        if manifest is not None and manifest.database is not None and runs_in_process(manifest.database,
                                                                                        manifest.limits):
            if self._in_process is None:
                self._in_process = InProcessEngine()
            return self._in_process
        if self._engines is None:
            from .engines.host import EngineProcess
            self._engines = EngineProcess()
        return self._engines

    def open_grader(self, manifest: SuiteManifest) -> Any:
        """The suite's grader if it is open already; never opens one."""
        return self._graders.get(manifest.path)

    def for_case(self, manifest: SuiteManifest, case: BenchmarkCase) -> Any:
        """The grader of one case: the suite's, its database's (Spider/BIRD), or a grader
        without a database whose catalog is the case's own CREATE TABLE context
        (sql-create-context)."""
        if manifest.database is None and not _layout(manifest).requires_database:
            return self._context_grader(manifest, case)  # each case carries its own schema
        grader = self.for_suite(manifest)
        if "#" in manifest.path.name:  # one database of a Spider/BIRD suite
            self._per_database[manifest.path] = None
            self._per_database.move_to_end(manifest.path)
            while len(self._per_database) > MAX_OPEN_DATABASES:
                old, _ = self._per_database.popitem(last=False)
                stale = self._graders.pop(old, None)
                if stale is not None:
                    stale.close()
        return grader

    def for_suite(self, manifest: SuiteManifest) -> Any:
        grader = self._graders.get(manifest.path)
        if grader is not None:
            return grader
        if manifest.path in self._unbuildable:
            raise self._unbuildable[manifest.path]
        from .grading.pipeline import SuiteGrader
        if manifest.database is None:
            catalog, source = self._schema(manifest)
            grader = SuiteGrader(None, dialect=manifest.dialect, catalog=catalog, catalog_source=source,
                                 deprecated=manifest.deprecated_tables, layers=self.layers_for(manifest))
        else:
            from .engines.build import ensure_database
            ensure_database(manifest.database, manifest.build)
            grader = SuiteGrader(manifest.database, dialect=manifest.dialect, limits=manifest.limits,
                                 policy=manifest.compare, deprecated=manifest.deprecated_tables,
                                 cache_dir=self.cache_dir,
                                 started=self._started.pop(manifest.path, None) or SuiteGrader.start_engine(
                                     manifest.database, manifest.limits, self.cache_dir, self._engine_process(manifest)),
                                 layers=self.layers_for(manifest), began_ns=self.began_ns)
            try:
                grader.variant_set = self.variant_set(manifest, grader.content_hash)
            except SqlevalError:
                grader.close()
                raise
        grader.replacements = manifest.replacements
        self._graders[manifest.path] = grader
        self._start_next(manifest)
        return grader

    def variant_count(self, manifest: SuiteManifest) -> int:
        return manifest.variants.count if self.variants is None else self.variants

    def check_variants(self, manifest: SuiteManifest) -> None:
        """Variants are built for DuckDB and SQLite databases; elsewhere a clear error at collection."""
        if not self.variant_count(manifest) or manifest.database is None:
            return
        from .engines import display_location, engine_name
        engine = engine_name(manifest.database)
        if engine not in VARIANT_ENGINES:
            raise UsageError(f"{manifest.path}: database variants are not supported on this engine ({engine}, "
                             f"{display_location(manifest.database)}); fix: run without --sqleval-variants, or "
                             "set [variants] count = 0, or grade a DuckDB or SQLite copy of the database")

    def variant_set(self, manifest: SuiteManifest, content_hash: str | None = None) -> Any:
        """The suite database's variants (built once, cached by content), or None."""
        count = self.variant_count(manifest)
        if not count or manifest.database is None:
            return None
        from .cases import read_layout_cases
        from .variants.distill import FROZEN_NAME, VariantSet
        by_db = self._golds.get(manifest.questions)  # read once, not once per Spider/BIRD database
        if by_db is None:
            by_db = self._golds[manifest.questions] = {}
            split_by = _layout(manifest).split_by
            for case in read_layout_cases(manifest):
                by_db.setdefault(case.metadata.get(split_by) if split_by else None, []).extend(
                    g.source for g in case.sql_golds)  # every SQL gold: each may be the one a prediction matches
        db_id = manifest.path.name.partition("#")[2]  # one database of a Spider/BIRD suite: its own golds
        golds = by_db.get(db_id, []) if db_id else [g for gs in by_db.values() for g in gs]
        try:
            return VariantSet.build(Path(manifest.database), self.cache_dir, count, seed=manifest.variants.seed,
                                    frozen_columns=manifest.variants.frozen_columns, gold_sqls=golds,
                                    dialect=manifest.dialect, pinned_hash=content_hash,
                                    frozen=manifest.root / FROZEN_NAME if self.frozen_variants else None,
                                    native=lambda folder: self.native_variants(manifest, folder))
        except SqlevalError:
            raise
        except Exception as exc:  # a database the generator cannot read: say so, not "cannot open"
            from .engines import display_location
            fix = "run without --sqleval-variants (or set [variants] count = 0) and report the database's schema as a bug"
            import duckdb
            if type(exc).__name__ == "InternalException" and duckdb.__version__ == "2.0.0":
                fix = ("upgrade DuckDB (pip install 'duckdb>=2.0.1'): 2.0.0 fails some of the variant builder's "
                       "queries with an internal error that 2.0.1 fixed (the bundled Vantage warehouse's among "
                       "them); or run without --sqleval-variants")
            said = str(exc).splitlines()[0] if str(exc) else ""  # not DuckDB's lines of advice and backtrace
            error = SqlevalError(f"cannot build the variants of {display_location(manifest.database)}: "
                                 f"{type(exc).__name__}: {said}; fix: {fix}")
            self._unbuildable[manifest.path] = error  # every case of the suite says so; none builds again
            raise error from exc

    @staticmethod
    def _schema(manifest: SuiteManifest) -> tuple[dict[str, Any] | None, str]:
        """A suite without a database: grounding against its DDL, if it has one."""
        if manifest.schema_ddl is None:
            return None, ""
        from .grading.grounding import catalog_from_ddl
        from .textio import read_text
        source = read_text(manifest.schema_ddl)
        try:
            return catalog_from_ddl(source, manifest.dialect), source
        except ValueError as exc:
            raise BadInputError(manifest.schema_ddl, str(exc), fix="fix the CREATE TABLE statements") from None

    def _context_grader(self, manifest: SuiteManifest, case: BenchmarkCase) -> Any:
        from .grading.grounding import catalog_from_ddl
        from .grading.pipeline import SuiteGrader
        context = str(case.metadata.get("context") or "")
        key = manifest.path.with_name(f"{manifest.path.name}#ddl-{hashlib.sha256(context.encode()).hexdigest()[:16]}")
        grader = self._graders.get(key)
        if grader is None:
            try:
                catalog = catalog_from_ddl(context, manifest.dialect) if context.strip() else None
            except ValueError as exc:
                where, _, line = case.source.rpartition(":")
                raise BadInputError(where or case.source, f"the context's DDL: {exc}",
                                    line=int(line) if line.isdigit() else None, field="context",
                                    fix="fix the CREATE TABLE statements of this case") from None
            if sum(1 for k in self._graders if "#ddl-" in k.name) > MAX_SCHEMA_GRADERS:
                for k in [k for k in self._graders if "#ddl-" in k.name]:
                    self._graders.pop(k)
            grader = self._graders[key] = SuiteGrader(None, dialect=manifest.dialect, catalog=catalog,
                                                      deprecated=manifest.deprecated_tables, catalog_source=context,
                                                      layers=self.layers_for(manifest))
        return grader

    def start_engines(self, manifests: list[SuiteManifest], most: int = 2, open_databases: bool = True) -> None:
        """Start the engine process of the first suites this process will grade, without
        waiting for it: its start-up (imports, opening the database, the catalog) then
        overlaps pytest's own instead of delaying the first case. Without
        ``open_databases`` (which suites come first is not known yet) only the process."""
        if not open_databases:
            from .engines.host import runs_in_process
            if any(m.database is not None and not runs_in_process(m.database, m.limits) for m in manifests):
                self._engine_process().prestart(ENGINE_WARM)
            return
        order = list({m.path: m for m in manifests if m.database is not None}.values())
        self._next = {m.path: after for m, after in zip(order, order[1:])}
        for manifest in order:
            if len(self._started) >= most:
                break
            self._start(manifest)

    def _start(self, manifest: SuiteManifest) -> None:
        from .engines import is_url
        database = manifest.database
        if (database is None or manifest.path in self._started or manifest.path in self._graders
                or not (is_url(database) or Path(database).exists())):  # a build comes first
            return
        process = self._engine_process(manifest)
        process.prestart(ENGINE_WARM)  # the child starts (0.3 s of imports) while this process imports the grading
        from .grading.pipeline import SuiteGrader
        self._started[manifest.path] = SuiteGrader.start_engine(database, manifest.limits, self.cache_dir, process)

    def stop_engines(self) -> None:
        """End what ``start_engines`` started for a run that turns out to grade nothing
        (every case deselected): no engine process outlives the collection that started it."""
        if not self._graders:
            self.close()

    def _start_next(self, opened: SuiteManifest) -> None:
        """Ask the engine to open the database graded after ``opened`` now: it does so while
        this process grades ``opened``'s cases (about 10 ms a database, which a Spider-shaped
        run of 20 databases otherwise waits for)."""
        after = self._next.get(opened.path)
        if after is not None:
            self._start(after)

    def close(self) -> None:
        for host, _ in self._started.values():
            host.close()
        self._started.clear()
        for grader in self._graders.values():
            grader.close()
        self._graders.clear()
        self._per_database.clear()
        if self._engines is not None:
            self._engines.close()
            self._engines = None
        if self._in_process is not None:
            self._in_process.close()
            self._in_process = None
