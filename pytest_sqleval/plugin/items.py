"""Collection: a suite's questions file becomes one item per case (per backend).

Setup asks the backend for SQL and fetches the gold answer: a failure there is an
*error* of the case (a backend with no answer for the case is not a failure there: the
case fails as ``no_prediction``). The call phase grades; a wrong answer is a *failure* whose repr
speaks the benchmark's vocabulary."""
from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

import pytest
from _pytest.outcomes import Failed

from ..core.cases import BenchmarkCase, SuiteManifest
from ..core.errors import CaseError, GoldError, SqlevalError

if TYPE_CHECKING:
    from ..core.backends.base import Backend
    from ..core.records import CaseRecord
    from .session import SqlevalSession

_MARK_RE = re.compile(r"[^0-9A-Za-z_]+")


class CaseSetupError(Failed):
    """A case error, shown as one paragraph instead of a traceback (for a backend that
    raised, the paragraph is followed by the backend's own traceback: see ``backend_traceback``)."""

    def __init__(self, msg: str) -> None:
        super().__init__(msg, pytrace=False)


CaseSetupError.__module__ = "sqleval"  # the short summary reads "sqleval.CaseError: <why>"
CaseSetupError.__qualname__ = "CaseError"


class CaseFailed(Exception):
    """The SQL was graded and did not match; carries the record for the repr."""

    def __init__(self, record: CaseRecord) -> None:
        super().__init__(record.explanation)
        self.record = record


def marker_name(value: str) -> str:
    name = _MARK_RE.sub("_", value.strip()).strip("_").lower()
    return name if name and not name[0].isdigit() else f"t_{name}"


class SuiteFile(pytest.File):
    """A questions JSONL owned by a ``sqleval.toml``."""

    manifest: SuiteManifest

    @classmethod
    def from_manifest(cls, parent: pytest.Collector, path: Path, manifest: SuiteManifest) -> "SuiteFile":
        node = cls.from_parent(parent, path=path)
        node.manifest = manifest
        return node

    def collect(self) -> Iterator["CaseItem"]:
        from ..core.cases import collect_cases
        state: SqlevalSession = self.config.stash[SESSION_KEY]
        backends = state.backends
        if self.manifest.build is not None and not self.config.option.collectonly:
            # built here, once: a build that fails (or misses its pin) is one collection
            # error for the suite, not a rebuild and an error per case
            from ..core.engines.build import ensure_database
            assert self.manifest.database is not None  # a build writes the suite's database
            ensure_database(self.manifest.database, self.manifest.build)
        state.pool.check_variants(self.manifest)
        state.start_early(self.manifest, open_database=False)  # the engine process starts while cases are read
        pairs = collect_cases(self.manifest, self.path)
        if pairs:
            state.start_early(pairs[0][1])  # and opens the first database while they become items
        from ..core.backends.predictions import check_suite  # a predictions file made for another suite
        check_suite(self, backends, [case.id for case, _ in pairs], self.manifest.name)
        for case, manifest in pairs:  # Spider/BIRD: one manifest per db_id
            for backend in backends:
                name = case.id if len(backends) == 1 else f"{case.id}[{backend.label}]"
                yield CaseItem.from_parent(self, name=name, nodeid=_child_nodeid(self, name), case=case,
                                           backend=backend, manifest=manifest)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, SqlevalError):
            return str(excinfo.value)
        return super().repr_failure(excinfo)  # a collector's takes no style


def _child_nodeid(parent: pytest.Collector, name: str) -> Any:
    """The node id of ``parent``'s item ``name`` in the form pytest reads back from its cache.

    pytest 9 compares structured node ids: ``path::q06[gold]`` read from the cache (``--lf``,
    ``--ff``, ``--sw``) has the name ``q06`` and the parameter ``gold``, while a node id
    derived from the name ``q06[gold]`` has the name ``q06[gold]`` and no parameter, so the
    two never compare equal and no case is ever "last failed". Parsing the string form, as
    pytest parses what it stored, makes both the same; pytest 8 keeps the string as it is."""
    nodeid = f"{parent.nodeid}::{name}"
    parse = getattr(type(getattr(parent, "id", None)), "parse", None)  # pytest >= 9: NodeId.parse
    return parse(nodeid) if parse is not None else nodeid


class CaseItem(pytest.Item):
    """One benchmark case graded for one backend."""

    def __init__(self, *, case: BenchmarkCase, backend: Backend, manifest: SuiteManifest, **kw: Any) -> None:
        super().__init__(**kw)
        self.case = case
        self.backend = backend
        self.manifest = manifest
        self.record: CaseRecord | None = None
        self._generation: Any = None
        self._gold: Any = None
        self._sent = False  # its execution sent ahead (``_send_ahead``): not asked for again
        self._gold_asked = False  # its golds asked ahead (``_ask_gold_ahead``): asked, analysed or stored
        self._mark_labels((case.difficulty, case.category, *case.tags))
        state: SqlevalSession = self.config.stash[SESSION_KEY]
        assert self.parent is not None  # an item is collected from its questions file
        previous = (state.sink.previous_error_class(self.parent.nodeid, case.id, backend.label)
                    if state.sink.previous_classes else None)
        if previous:
            self.extra_keyword_matches.add(previous)
        self.user_properties.append(("sqleval_case", case.id))

    def _mark_labels(self, labels: tuple[str | None, ...]) -> None:
        """A marker per label (``-m hard``, ``-k revenue``). The first item with a set of
        labels adds them with ``add_marker`` (each marker registered once per run); every
        later item with the same set gets the same keywords and markers copied, which is
        what ``add_marker`` would do again (pytest's own per-call work, an import among it,
        was a third of an item's construction: 10,000 items carry some 48,000 labels)."""
        marks: dict[Any, Any] = self.config.stash.setdefault(_MARKS_KEY, {})  # label -> marker; labels -> added
        added = marks.get(labels)
        if added is None:
            own = len(self.own_markers)
            names = []
            for label in labels:
                if label:
                    mark = marks.get(label)
                    if mark is None:
                        name = marker_name(label)
                        self.config.addinivalue_line("markers", f"{name}: benchmark label '{label}' (pytest-sqleval)")
                        mark = marks[label] = getattr(pytest.mark, name)
                    self.add_marker(mark)
                    names.append(mark.name)
            keywords = self.keywords
            marks[labels] = ([(n, keywords[n]) for n in dict.fromkeys(names)], self.own_markers[own:])
            return
        keywords = self.keywords
        for name, value in added[0]:
            keywords[name] = value
        self.own_markers.extend(added[1])

    @property
    def _state(self) -> SqlevalSession:
        return self.config.stash[SESSION_KEY]

    def _suite_info(self) -> dict[str, Any]:
        from ..core.engines import display_location  # a URL's password stays out of the records
        state = self._state
        grader = state.pool.open_grader(self.manifest)
        info: dict[str, Any] = {"name": self.manifest.name,
                "database": display_location(self.manifest.database) if self.manifest.database else None}
        if grader is not None:
            info.update(content_hash=grader.content_hash, engine=grader.engine, engine_version=grader.engine_version)
        info["run_metadata"] = state.run_metadata()
        return info

    def _finish(self, status: str, **kw: Any) -> CaseRecord:
        """The case's record; the report carries it as JSON (``user_properties``, read by the sink)."""
        from ..core.records import build_record, with_fields
        record = build_record(case=self.case, backend=self.backend, nodeid=self.nodeid, suite=self._suite_info(),
                              status=status, generation=self._generation, gold=self._gold, **kw)
        data = record.to_json_dict()
        added = self.config.hook.pytest_sqleval_record_fields(record=dict(data))  # a plugin's edits stay its own
        if any(added):
            record = with_fields(record, added)
            data = record.to_json_dict()
        self.record = record
        self.user_properties.append(("sqleval", data))
        state = self._state
        if not state.run.is_worker:  # this process keeps the results: the typed record, not read back
            state.sink.offer(self.nodeid, record, data)
        return record

    def release(self) -> None:
        """After the case's reports: its record, generation and gold answer let go. Items
        live to the end of the run; 10,000 of them holding their evidence was most of a
        controller's memory (the sink keeps its own lean copy, ``reports.sink``)."""
        self.record = self._generation = self._gold = None
        self.user_properties[:] = [p for p in self.user_properties if not (isinstance(p, tuple) and p[0] == "sqleval")]

    def setup(self) -> None:
        state = self._state
        if state.only_lists():  # --setup-plan / --setup-only: pytest shows the setup; the case is not graded
            return
        state.prefetch(self.session.items)
        try:
            grader = self._grader()
        except SqlevalError as exc:
            self._finish("error", case_error=str(exc), case_error_kind="engine_error")
            raise CaseSetupError(str(exc)) from None
        except Exception as exc:  # an engine that will not start: an error of every case, not a crash
            from ..core.engines import display_location
            msg = f"cannot open the suite's database {display_location(self.manifest.database)}: {exc}"
            self._finish("error", case_error=msg, case_error_kind="engine_error")
            raise CaseSetupError(msg) from None
        self._generation = state.generation.get(self.backend, self.case)
        if self._generation.error is not None:
            msg = f"backend {self.backend.label} failed on {self.case.id}: {self._generation.error}"
            self._finish("error", case_error=msg, case_error_kind="backend_error")
            raised = getattr(self._generation, "exception", None)  # a crash: show where, in the backend's code
            shown = backend_traceback(raised, self.config) if raised is not None else ""
            raise CaseSetupError(msg + (f"\n\n{shown}" if shown else ""))
        if self._generation.no_prediction is not None:
            return  # nothing to run: the call phase fails it as no_prediction (verdict.no_prediction)
        try:
            self._gold = grader.case_gold(self.case)  # every gold of the case (core.cases.Gold)
        except CaseError as exc:
            msg = f"{self.case.source}: {exc}"
            official = (grader.official(self._generation.sql, self.case.gold_sql, self.case)  # the peers' verdicts
                        if isinstance(exc, GoldError) and self.case.gold_sql is not None
                        and (not self.case.several_golds or "spider2_ignore_order" in self.case.metadata)
                        else None)  # (a Spider 2.0 case: its own verdict reads the CSVs, ours the first SQL gold)
            self._finish("error", case_error=msg, case_error_kind=exc.kind, sidebyside=official)
            raise CaseSetupError(msg) from None
        if self.manifest.database is None:  # nothing to execute: a judge that cannot answer is an error
            record = self._grade()
            if record.status == "error":
                raise CaseSetupError(record.case_error or "")

    def _grader(self) -> Any:
        return self._state.pool.for_case(self.manifest, self.case)

    def _grade(self) -> CaseRecord:
        """The grader's verdict (with the judge where its mode asks), rendered as the record."""
        if self.record is not None:
            return self.record
        if self._generation.no_prediction is not None:
            from ..core.grading.verdict import no_prediction
            verdict = no_prediction(self._generation.no_prediction)
            return self._finish(verdict.status, verdict=verdict)
        state = self._state
        mode = state.run.judge_mode
        hook = self.config.hook
        verdict = self._grader().grade(self._generation.sql, self._gold,
                                       classifier=lambda evidence: hook.pytest_sqleval_classify(evidence=evidence),
                                       judge=state.judge.call if mode != "off" else None, judge_mode=mode,
                                       question=self.case.question,
                                       gold_sql=self._gold.source if getattr(self._gold, "engine", None) else self.case.gold_sql)
        return self._finish(verdict.status, verdict=verdict, case_error=verdict.case_error,
                            case_error_kind=verdict.case_error_kind or ("judge_error" if verdict.case_error else None))

    def _send_ahead(self, wait: bool = True) -> None:
        """Send this case's execution to the engine now if everything it needs is ready
        without waiting: the generation finished, the gold answer stored (else its gold
        query), the grader open. Without ``wait``, not even for its gold's answer asked ahead.
        Once sent, a later call does nothing: the cases before it in its window and the case
        itself each ask, and each asking built the case's gold answer again."""
        if self._sent or self.record is not None or self.manifest.database is None:
            return
        state = self._state
        grader = state.pool.open_grader(self.manifest)
        generation = self._generation or state.generation.ready(self.backend, self.case)
        if grader is None or generation is None or generation.sql is None or grader.host is None:
            return
        gold = self._gold or grader.stored_case_gold(self.case, ask_ahead=True, wait=wait)  # else asked for now
        if gold is not None:
            grader.submit(generation.sql, gold)
            self._sent = True

    def _ask_gold_ahead(self) -> None:
        """Send this case's golds not analysed yet to the engine, up to ``GOLD_CASES_AHEAD``
        cases ahead: it analyses and runs them beside pytest, so on a first run too their answers
        are in when a case before this one sends this one's execution ahead
        (``SuiteGrader.ask_gold_ahead``)."""
        if self._sent or self._gold_asked or self.record is not None or self.manifest.database is None:
            return  # (sent: its gold is answered) each case's golds are asked once, from the first case before it
        state = self._state
        grader = state.pool.open_grader(self.manifest)
        generation = self._generation or state.generation.ready(self.backend, self.case)
        if grader is not None and (generation is None or generation.sql is not None):  # else no gold is needed
            grader.ask_gold_ahead(self.case)
            self._gold_asked = True

    def runtest(self) -> None:
        """Grade this case with the engine kept busy: of the cases of its window
        (``sqleval_ahead``, the next ``GOLD_CASES_AHEAD`` in order) the first ``CASES_AHEAD``
        have their execution sent once their gold is answered, without waiting for it, and
        every one its golds asked, so the engine works on them while this process grades this
        case and pytest reports it. Nothing sent ahead changes a case's record: each is
        graded at its own turn, from its own answers."""
        from ..core.grading.pipeline import CASES_AHEAD
        self._send_ahead()
        window = getattr(self, "sqleval_ahead", ())
        for later in window[:CASES_AHEAD]:  # in order: the engine answers requests in order, the nearest case first
            if isinstance(later, CaseItem):
                later._send_ahead(wait=False)
        for later in window:  # golds not answered yet: asked now, so each is in before its case's execution is due
            if isinstance(later, CaseItem):
                later._ask_gold_ahead()
        record = self._grade()
        nxt = getattr(self, "sqleval_next", None)
        if isinstance(nxt, CaseItem):  # (a first run) its gold is answered by now: it runs during our reports
            nxt._send_ahead()
        if record.status != "passed":
            raise CaseFailed(record)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, CaseFailed):
            from ..reports.terminal import render_failure
            return render_failure(excinfo.value.record)
        if isinstance(excinfo.value, SqlevalError):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        line = None
        if ":" in self.case.source:
            try:
                line = int(self.case.source.rsplit(":", 1)[1]) - 1
            except ValueError:
                line = None
        return self.path, line, f"{self.case.id} [{self.backend.label}]"


def _is_plumbing(path: Any) -> bool:
    """A frame of ours or of the standard library (asyncio, threads) on the way to a backend."""
    import sysconfig
    try:
        where = Path(str(path)).resolve()
    except (OSError, ValueError):
        return False
    if where.is_relative_to(Path(__file__).resolve().parents[1]):  # the pytest_sqleval package
        return True
    stdlib = Path(sysconfig.get_paths()["stdlib"]).resolve()
    return where.is_relative_to(stdlib) and "site-packages" not in where.parts


def backend_traceback(exc: BaseException, config: pytest.Config) -> str:
    """The traceback of an exception a backend raised, from the first frame of the backend's
    own code on (the plumbing that called it is left out), in the style ``--tb`` asks for:
    ``short`` by default (``auto``), ``long`` with every frame's source, nothing for ``no``."""
    style = config.getoption("tbstyle", "auto")
    if style == "no":
        return ""
    info = pytest.ExceptionInfo.from_exception(exc)
    entries = list(info.traceback)
    first = next((i for i, entry in enumerate(entries) if not _is_plumbing(entry.path)), None)
    if first is None:
        return ""
    info.traceback = info.traceback[first:]
    style = {"auto": "short", "line": "short"}.get(style, style)
    return str(info.getrepr(style=style, funcargs=False, showlocals=bool(config.getoption("showlocals", False)),
                            truncate_locals=True, chain=True))


SESSION_KEY: pytest.StashKey["SqlevalSession"] = pytest.StashKey()
_MARKS_KEY: pytest.StashKey[dict[Any, Any]] = pytest.StashKey()
