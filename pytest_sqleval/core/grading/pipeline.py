"""The grader: walks the ordered layers (``layers/``, one module per layer) over one candidate and hands the
evidence to ``verdict.py``, which decides. One grader per database (or per schema,
without one: then nothing is executed and the verdict is the judge's or exact match's).

``SuiteGrader`` owns one suite's engine host, catalog and gold answers. Nothing here
raises for a wrong answer; a gold that cannot be trusted raises ``GoldError``."""
from __future__ import annotations

import hashlib
import json
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

from ..cases import BenchmarkCase, ComparePolicy, Limits
from ..engines import is_url
from ..engines import host as _host  # its pipe trace (SQLEVAL_IPC_TRACE)
from ..engines.host import (EngineHost, EngineProcess, HostCrashed, HostOpError, HostTimeout, InProcessEngine,
                            describe_timeout)
from ..errors import GoldError
from .budget import Budget
from .diagnostics import diagnose
from .engine_side import HANDLER, read_stored_gold
from .grounding import CatalogIndex
from .gold_analysis import FOLDER as ANALYSIS_FOLDER
from .gold_analysis import GoldAnalyses, GoldAnalysis, gold_request
from .gold_answer import GoldAnswer
from .guard import guarded
from .layer_registry import grading_layers
from .layers import Candidate, Layer, run_layer
from .parse import engine_sql, parse_sql
from .safety import check_safety
from .verdict import Classification, Evidence, Verdict, assess, classification, decide, judge_eligible

__all__ = ["GoldAnswer", "SuiteGrader", "Verdict", "case_contract", "case_policy", "layer_budget"]

DEFAULT_DIALECT = "duckdb"
GOLDS_AHEAD = 32  # gold requests sent ahead and not yet read: room for the next case's every gold
#: the cases after the one graded whose executions go to the engine ahead of their turn once
#: their golds are answered (``CaseItem.runtest``, ``submit``): the engine has work queued while
#: pytest reports a case
CASES_AHEAD = 3
#: the cases after the one graded whose golds go to the engine ahead (``ask_gold_ahead``): on a
#: first run, where the engine's share (analysing and running each gold) is the larger, it is
#: never idle waiting for pytest, and a gold is answered before its case's execution is due
GOLD_CASES_AHEAD = 6


def case_policy(policy: ComparePolicy, case: BenchmarkCase | None) -> ComparePolicy:
    """A case's comparison contract: the one it carries (``case.policy``, made when its suite
    was read), else, for a case read without a suite (or none), the suite ``policy`` made
    for it by the same builder (``ComparePolicy.for_case``)."""
    return case.policy if case is not None and case.policy is not None else policy.for_case(case)


def spider2_standard(case: BenchmarkCase) -> dict[str, Any] | None:
    """Spider 2.0's official standard for a case whose layout carries it (spider2-lite:
    ``metadata["spider2_condition_cols"]``, one list per gold CSV, and ``spider2_ignore_order``),
    as the engine process reads it: the gold CSVs (path, the case's gold index) with their
    condition_cols; None for any other case, or one without gold CSVs (Spider 2.0 compares
    with CSVs alone)."""
    cols, ignore = case.metadata.get("spider2_condition_cols"), case.metadata.get("spider2_ignore_order")
    csvs = [g for g in case.golds if not g.is_sql and g.path is not None]
    if not isinstance(cols, list) or ignore is None or not csvs:
        return None
    return {"golds": [{"path": str(g.path), "index": g.index} for g in csvs],
            "condition_cols": [list(c) for c in cols] if len(cols) == len(csvs) else None,
            "ignore_order": bool(ignore)}


def case_contract(policy: ComparePolicy, case: BenchmarkCase | None, order: Any) -> ComparePolicy:
    """The policy one case's results are compared under: its ``case_policy`` resolved against
    its gold's ordering (``ordering.OrderInfo``, ``ComparePolicy.for_gold``). The grader's gold
    request and ``validate`` both call it, so they never compare a case under two contracts."""
    return case_policy(policy, case).for_gold(order)


class SuiteGrader:
    """Grades SQL against one database, or without one against a schema (``database=None``,
    ``catalog``: the suite's DDL, or none). One per suite (per database) per process."""

    def __init__(self, database: str | Path | None = None, *, dialect: str = DEFAULT_DIALECT,
                 limits: Limits = Limits(), policy: ComparePolicy = ComparePolicy(),
                 deprecated: tuple[str, ...] = (), cache_dir: Path | None = None,
                 started: tuple[EngineHost, Any] | None = None, catalog: dict[str, Any] | None = None,
                 catalog_source: str = "", layers: list[Layer] | None = None, variant_set: Any = None,
                 began_ns: int | None = None) -> None:
        self.dialect = dialect
        #: when the run began (``time.time_ns``): a gold answer stored after it is not ``cached``
        #: (``_gold_answer``), whichever process of the run (an xdist worker, this one) stored it
        self.began_ns = time.time_ns() if began_ns is None else began_ns
        self.limits = limits
        self.policy = policy
        self.deprecated = deprecated
        self.layers: list[Layer] = list(grading_layers() if layers is None else layers)
        self.variant_set = variant_set  # variants.distill.VariantSet: the suite database's variants, if any
        self.replacements: dict[str, str] = {}  # deprecated table -> its live one, for the failure text
        self.gold_executions = 0
        self.host: EngineHost | None = None
        if database is None:  # nothing to execute: grounding against the schema, if there is one
            self.database = None
            self.content_hash: str | None = hashlib.sha256(catalog_source.encode()).hexdigest() if catalog_source else None
            self.engine, self.engine_version, self.engine_dialect = "none", None, dialect
            self.catalog = catalog
        else:
            if cache_dir is None:
                raise ValueError("a grader with a database needs a cache_dir for its gold answers")
            self.database = database if is_url(database) else Path(database)  # Path() would fold a URL's "//"
            self.gold_dir = Path(cache_dir) / "gold"
            self.host, ticket = started or self.start_engine(self.database, limits, cache_dir)
            info = self.host.result(ticket)
            self.content_hash = info["content_hash"]
            self.engine = info["engine"]
            self.engine_version = info["engine_version"]
            self.engine_dialect = info["dialect"]  # gold and predictions are transpiled to it
            self.catalog = info["catalog"]
        self.index = CatalogIndex(self.catalog) if self.catalog is not None else None
        # gold SQL -> what follows from it alone, stored with the gold answers (a rerun parses no gold)
        self.analyses = GoldAnalyses(self.gold_dir.parent / ANALYSIS_FOLDER if self.host is not None else None,
                                     self.dialect, self.engine_dialect, refuse_unsafe=self.host is not None)
        self._ahead: dict[int, Candidate] = {}  # sent ahead of their turn, in order (see submit)
        self._sent_ahead = 0  # how many were: each one's place in ``_ahead``
        self._golds_ahead: dict[str, Any] = {}  # gold key -> its request's ticket, sent ahead (see stored_gold)
        self._analysed_ahead: dict[tuple[str, str | None], Any] = {}  # (gold SQL, dialect) -> ticket (_ask_analysed)
        self._answered: dict[str, dict[str, Any]] = {}  # gold key -> the engine's answer to it, asked ahead
        self._analysed_failures: dict[tuple[str, str | None], str] = {}  # asked ahead, did not finish: why
        self._stored: dict[str, dict[str, Any]] = {}  # gold key -> its stored description, read once
        # gold keys whose answers this run stores (asked of the engine, or a result file stored here):
        # read back from the store, they are still not ``cached`` (``_gold_answer``)
        self._stored_now: set[str] = set()
        self._requests: dict[tuple[str, str | None], tuple[BenchmarkCase | None, tuple[GoldAnalysis, dict[str, Any], ComparePolicy]]] = {}  # (gold SQL, dialect) -> (case, _gold_request's answer), the last few

    @staticmethod
    def start_engine(database: str | Path, limits: Limits, cache_dir: Path,
                     process: EngineProcess | InProcessEngine | None = None) -> tuple[EngineHost, Any]:
        """The database's engine host and its ``describe`` request, sent without waiting: a
        grader made later with ``started=`` reads the answer (``pool.GraderPool.start_engines``).
        In ``process`` (shared by the databases of a run) or in a process of its own."""
        host = EngineHost(database, limits, cache_dir, handler=HANDLER, handler_args=(str(Path(cache_dir) / "gold"),),
                          process=process)
        return host, host.submit("describe", {}, exec_timeout=describe_timeout(limits))

    def close(self) -> None:
        if self.variant_set is not None:  # its second distillation process, if it started one
            self.variant_set.close()
        if self.host is not None:
            self.host.close()

    def to_engine(self, tree: Any, sql: str) -> str:
        return engine_sql(tree, sql, self.dialect, self.engine_dialect)

    def policy_for(self, case: BenchmarkCase | None) -> ComparePolicy:
        return case_policy(self.policy, case)

    def gold(self, gold_sql: str, case: BenchmarkCase | None = None, *, dialect: str | None = None) -> GoldAnswer:
        """The gold answer, computed once per (content hash, gold SQL, engine, engine version):
        an engine's answer is never another's. Without a database, only its parse: the tables
        and joins it reads, its tree. ``dialect``: the gold's own (a per-engine gold's is the
        engine's), default the suite's."""
        if self.host is None:
            return self._parsed_gold(gold_sql, dialect)
        self._adopt_analysed(gold_sql, dialect)  # analysed and run in the engine process, if asked ahead
        failed = self._analysed_failures.pop((gold_sql, dialect), None)
        if failed is not None:
            raise GoldError(f"gold query did not finish: {failed}")
        static, request, policy = self._gold_request(gold_sql, case, dialect)
        ticket = self._golds_ahead.pop(request["key"], None)  # asked ahead: its answer says if it ran now
        meta = self._answered.pop(request["key"], None)  # the engine built this very request: its answer
        if meta is not None:
            self.gold_executions += bool(meta.get("ran"))
        elif ticket is None:
            meta = self._cached_gold(request["key"])
        if meta is None:
            try:
                meta = self.host.result(ticket) if ticket is not None else self.host.call("gold", request)
            except HostCrashed as exc:
                raise GoldError(f"gold query did not finish: {exc}") from None
            self.gold_executions += bool(meta.get("ran"))
        if not meta.get("cached"):
            self._stored_now.add(request["key"])
        answer = self._gold_answer(static, request, policy, meta)
        if answer.empty:  # graded on the variants where it has a value; known at setup, so an error is an error
            try:
                chosen = self.variant_set.for_gold(answer.key, request, answer.sql, self.engine_dialect, self.host,
                                                   answer.elapsed_ms)
            except Exception as exc:  # the case's error, recorded (not a lost case)
                why = str(exc) if isinstance(exc, HostCrashed) else f"{type(exc).__name__}: {exc}"
                raise GoldError(f"the gold is empty on the database, and its variants could not be chosen: {why}") \
                    from None
            if not chosen.graded_with_value():
                raise GoldError(_uninformative(answer.rows, answer.null_only, len(self.variant_set.pool)))
        return answer

    def case_gold(self, case: BenchmarkCase) -> GoldAnswer:
        """Every gold of a case, each computed (or read from the gold store) once: the first
        as the answer the layers read, the others as its ``alternatives``. A case of one SQL
        gold gets exactly ``gold(case.gold_sql, case)``. Any gold that cannot be trusted is the
        case's ``GoldError`` (several golds must all be sound; ``validate`` says which). A case
        with golds of its own for this grader's engine (``gold_sql_spark``) is graded with
        those instead (``BenchmarkCase.golds_for``), read in the engine's dialect."""
        if _host.TRACING:  # the pipe's timeline (engines.host, SQLEVAL_IPC_TRACE): when this process set cases up
            began = time.monotonic()
            try:
                return self._case_gold(case)
            finally:
                _host.trace_event("setup", began, time.monotonic())
        return self._case_gold(case)

    def _case_gold(self, case: BenchmarkCase) -> GoldAnswer:
        golds = case.golds_for(self.engine)
        golds = golds if self.host is not None else tuple(g for g in golds if g.is_sql)  # a file gold needs a database
        if not golds:
            raise GoldError("the case's golds are result files, and a result needs a database to run the prediction")
        answers = []
        for g in golds:
            try:
                answer = (self.gold(g.source, case, dialect=self.engine_dialect if g.engine else None) if g.is_sql
                          else self.result_gold(g, case))
            except GoldError as exc:
                if len(golds) == 1:
                    raise
                raise GoldError(f"gold {g.index} ({g.kind}{'' if g.is_sql else ' ' + g.source}): {exc}") from None
            answers.append(answer)
        return self._with_alternatives(case, golds, answers)

    def _with_alternatives(self, case: BenchmarkCase, golds: Any, answers: list[GoldAnswer]) -> GoldAnswer:
        """A case's gold answers as one: the first, named by index, kind and source, carrying
        the others as its ``alternatives`` and the case's Spider 2.0 standard."""
        named = [replace(a, index=g.index, kind=g.kind, source=g.source, engine=g.engine) for g, a in zip(golds, answers)]
        named[0].alternatives = named[1:]
        named[0].spider2 = spider2_standard(case) if self.host is not None else None
        return named[0]

    def stored_case_gold(self, case: BenchmarkCase, *, ask_ahead: bool = False,
                         wait: bool = True) -> GoldAnswer | None:
        """``case_gold`` if every gold of the case is stored already, else None: never waits
        on the engine (but, with ``wait``, for a gold an earlier case asked ahead), never
        raises. With ``ask_ahead`` each SQL gold not stored yet is sent
        to the engine now (``stored_gold``), every one of them, so on a first run a case of
        several golds has them all executed while the case before it is graded; its setup
        (``case_gold``) then reads each answer once, and a rerun executes none."""
        if self.host is None:
            return None
        golds = case.golds_for(self.engine)  # its engine's own golds (gold_sql_spark) when it has them
        if len(golds) == 1 and golds[0].is_sql:
            return self.stored_gold(golds[0].source, case, ask_ahead=ask_ahead,
                                    dialect=self.engine_dialect if golds[0].engine else None, wait=wait)
        answers: list[GoldAnswer | None] = []
        for g in golds:
            if g.is_sql:
                answers.append(self.stored_gold(g.source, case, ask_ahead=ask_ahead,
                                                dialect=self.engine_dialect if g.engine else None, wait=wait))
            else:
                try:  # a result file is read here, never by the engine: stored on first use
                    answers.append(self.result_gold(g, case))
                except GoldError:
                    answers.append(None)
        if any(a is None or a.empty for a in answers):  # an empty gold's variants are chosen at setup
            return None
        return self._with_alternatives(case, golds, [a for a in answers if a is not None])

    def ask_gold_ahead(self, case: BenchmarkCase) -> None:
        """Send each SQL gold of a case that is not analysed yet to the engine process, to be
        analysed, run and stored there (``_ask_analysed``), up to ``GOLD_CASES_AHEAD`` cases
        ahead of its turn: when a case before it asks ahead (``stored_case_gold``), its answer
        is in, so its prediction is sent ahead on a first run too. Never waits, never raises."""
        if self.host is None:
            return
        for g in case.golds_for(self.engine):
            dialect = self.engine_dialect if g.engine else None
            if g.is_sql and (g.source, dialect) not in self._analysed_ahead and \
                    self.analyses.known(g.source, dialect) is None:
                self._ask_analysed(g.source, case, dialect)

    def result_gold(self, gold: Any, case: BenchmarkCase | None = None) -> GoldAnswer:
        """A result-file gold (``cases.Gold`` of kind "result") as a gold answer: the file read
        typed (``cases.result_files``) and stored in the gold store under a key of its bytes,
        its declared types and the case's policy, so the engine process compares with it as
        with any gold. No SQL: no tree, tables or analysis; rows in order only when the case
        says ``order_matters``."""
        from types import SimpleNamespace

        from ..cases.result_files import ResultFileError, read_result_file
        from .compare import preview_rows
        from .engine_side import _store
        policy = case_policy(self.policy, case).for_gold(SimpleNamespace(ordered=False, sort_keys=None))
        if gold.condition_cols is not None:  # the file's own (Spider 2.0: one list per CSV); () every column of it
            policy = replace(policy, condition_cols=gold.condition_cols or None, columns="superset")
        path = Path(gold.path)
        try:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError as exc:
            raise GoldError(f"result file {path} cannot be read ({exc})") from None
        key = hashlib.sha256(json.dumps(["result", digest, [list(t) for t in gold.types], policy.to_wire()],
                                        sort_keys=True, default=str).encode()).hexdigest()[:40]
        meta = self._cached_gold(key)
        if meta is None:
            try:
                table = read_result_file(path, gold.types)
            except ResultFileError as exc:
                raise GoldError(f"{exc}; fix: {exc.fix}") from None
            meta = {"rows": table.num_rows, "columns": table.column_names, "types": [str(t) for t in table.schema.types],
                    "elapsed_ms": 0.0, "problem": None, "preview": preview_rows(table, 5), "kind": "result"}
            _store(self.gold_dir, key, table, meta)
            self._stored_now.add(key)
        cached = self._stored_before_run(key)
        self._check_condition_cols(policy, meta["columns"])
        empty = meta["rows"] == 0 and not policy.allow_empty
        if empty:
            raise GoldError("the result file has no rows; an empty gold cannot tell a right answer from a wrong one. "
                            "If the empty answer is intended, set \"expected_shape\": \"empty\" on the case")
        return GoldAnswer(key=key, rows=meta["rows"], columns=meta["columns"], types=meta["types"],
                          cached=cached, policy=policy, tables=[], joins={},
                          preview=meta.get("preview", []), kind="result", source=gold.source)

    @staticmethod
    def _check_condition_cols(policy: ComparePolicy, columns: list[str]) -> None:
        lacking = [i for i in policy.condition_cols or () if i >= len(columns)]
        if lacking:
            raise GoldError(f"condition_cols names gold column(s) {lacking}, but the gold has {len(columns)} "
                            f"column(s) ({', '.join(columns)}); fix: name 0-based positions below {len(columns)}")

    def stored_gold(self, gold_sql: str, case: BenchmarkCase | None = None, *,
                    ask_ahead: bool = False, dialect: str | None = None, wait: bool = True) -> GoldAnswer | None:
        """The gold answer if it is stored already, else None: never raises, and waits only
        for the answer to a gold an earlier case asked ahead (``ask_gold_ahead``), which the
        engine answers before anything sent since; without ``wait``, not even for that one
        (the case before grades first, and asks again after: ``CaseItem.runtest``). With
        ``ask_ahead`` a gold not stored yet
        is sent to the engine now (with its analysis, when it is not analysed yet), so on a
        first run it executes while this process grades the case before; ``gold`` reads it."""
        if self.host is None:
            return None
        ticket = self._analysed_ahead.get((gold_sql, dialect))
        if ticket is not None and ticket.sent and not ticket.done and not wait:
            self.host.poll()  # answered already, though not read yet: taken now, without waiting
            if not ticket.done:
                return None  # its analysis is on its way: not waited for now
        if ticket is not None and ticket.sent:  # sent ahead by an earlier case, before this one's own work
            self._adopt_analysed(gold_sql, dialect)
        if (gold_sql, dialect) in self._analysed_failures:
            return None
        if ask_ahead and self.analyses.known(gold_sql, dialect) is None:  # analysed beside its execution
            self._ask_analysed(gold_sql, case, dialect)
            return None
        try:
            static, request, policy = self._gold_request(gold_sql, case, dialect)
            meta = self._answered.get(request["key"]) or self._cached_gold(request["key"])
            if meta is not None:
                return self._gold_answer(static, request, policy, meta)
        except GoldError:
            return None
        key = request["key"]
        if ask_ahead and key not in self._golds_ahead:
            while len(self._golds_ahead) >= GOLDS_AHEAD:  # never asked for (a setup error, -x): forget the oldest
                self._golds_ahead.pop(next(iter(self._golds_ahead)))
            self._golds_ahead[key] = self.host.submit("gold", request, ahead=True)
            self._stored_now.add(key)  # not stored now, so not when the run began, whenever it is read back
        return None

    def _gold_request(self, gold_sql: str, case: BenchmarkCase | None,
                      dialect: str | None = None) -> tuple[GoldAnalysis, dict[str, Any], ComparePolicy]:
        """The gold's analysis, its request to the engine (keyed by a hash of everything the
        answer depends on) and its policy. A case asks twice (ahead, then at its setup): the
        last few are kept, keyed by the gold SQL and its dialect and the case object itself."""
        memo = self._requests.get((gold_sql, dialect))
        if memo is not None and memo[0] is case:
            return memo[1]
        made = self._make_gold_request(gold_sql, case, dialect)
        if len(self._requests) >= GOLDS_AHEAD:  # as many as may be asked ahead (several golds a case)
            self._requests.pop(next(iter(self._requests)))
        self._requests[(gold_sql, dialect)] = (case, made)
        return made

    def _make_gold_request(self, gold_sql: str, case: BenchmarkCase | None, dialect: str | None = None,
                           ) -> tuple[GoldAnalysis, dict[str, Any], ComparePolicy]:
        static = self.analyses.get(gold_sql, dialect)  # cases sharing a gold SQL share its analysis
        policy = case_contract(self.policy, case, static.order)
        return static, gold_request(static, policy, self._identity()), policy

    def _identity(self) -> list[Any]:
        """What a gold answer depends on besides its request: the database and its engine."""
        return [self.content_hash, self.engine, self.engine_version, self.limits.max_rows]

    def _ask_analysed(self, gold_sql: str, case: BenchmarkCase | None, dialect: str | None) -> None:
        """Send a gold not analysed yet to the engine process, which analyses it (parse, its
        ordering, its side of the structural diff), stores the analysis, builds the same
        request as ``_make_gold_request`` and runs it: on a first run the grading process
        then parses no gold, it reads the analysis with the answer (``_adopt_analysed``)."""
        assert self.host is not None
        memo = (gold_sql, dialect)
        if memo in self._analysed_ahead:
            return
        while len(self._analysed_ahead) >= GOLDS_AHEAD:  # never asked for (a setup error, -x): forget the oldest
            self._analysed_ahead.pop(next(iter(self._analysed_ahead)))
        self._analysed_ahead[memo] = self.host.submit("analysed_gold", {
            "gold_sql": gold_sql, "dialect": dialect or self.dialect, "engine_dialect": self.engine_dialect,
            "folder": str(self.gold_dir.parent / ANALYSIS_FOLDER), "case_spec": case_policy(self.policy, case).to_wire(),
            "identity": self._identity()}, ahead=True)

    def _adopt_analysed(self, gold_sql: str, dialect: str | None) -> None:
        """Read the answer to a gold sent ahead by ``_ask_analysed``, if there is one: its
        analysis kept (``GoldAnalyses.adopt``) and its gold answer's description kept under
        the key of the request the engine built (``_answered``; ``gold`` and ``stored_gold``
        use it for the request of that key only). An analysis the engine could not make (a
        gold that does not parse, a handler that failed) is made here as ever, with its own
        error; a gold that did not finish is remembered as such, not run again."""
        ticket = self._analysed_ahead.pop((gold_sql, dialect), None)
        if ticket is None:
            return
        assert self.host is not None
        try:
            answer = self.host.result(ticket)
        except HostOpError:
            return
        except HostCrashed as exc:
            self._analysed_failures[(gold_sql, dialect)] = str(exc)
            return
        if "analysis" not in answer:
            return
        self.analyses.adopt(gold_sql, dialect, GoldAnalysis.from_json(answer["analysis"]))
        while len(self._answered) >= GOLDS_AHEAD:
            self._answered.pop(next(iter(self._answered)))
        self._answered[answer["key"]] = answer["meta"]
        if not answer["meta"].get("cached"):
            self._stored_now.add(answer["key"])

    def _gold_answer(self, static: GoldAnalysis, request: dict[str, Any], policy: ComparePolicy,
                     meta: dict[str, Any]) -> GoldAnswer:
        if meta.get("error"):
            err = meta["error"]["error"]
            raise GoldError(f"gold query fails on the database ({err['category']}): {err['message'].splitlines()[0]}")
        if meta.get("problem"):
            raise GoldError(f"gold query is {meta['problem']}" if meta["problem"].startswith("nondet")
                            else f"gold query is ambiguous: {meta['problem']}")
        self._check_condition_cols(policy, meta["columns"])
        nulls = _null_only(meta) and not policy.allow_null
        empty = (meta["rows"] == 0 and not policy.allow_empty) or nulls
        if empty and self.variant_set is None:
            raise GoldError(_uninformative(meta["rows"], nulls))
        cached = bool(meta.get("cached")) and self._stored_before_run(request["key"])
        return GoldAnswer(key=request["key"], rows=meta["rows"], columns=meta["columns"], types=meta["types"],
                          cached=cached, policy=policy, tables=list(static.tables),
                          joins=static.joins, elapsed_ms=meta.get("elapsed_ms", 0.0),
                          preview=meta.get("preview", []), tree=static.tree, sql=static.engine_sql, request=request,
                          empty=empty, null_only=nulls, ties=meta.get("ties"), ambiguous=meta.get("ambiguous"),
                          analysis=static)

    def _stored_before_run(self, key: str) -> bool:
        """Whether a stored gold answer was in the store when the run began: a record's
        ``cached``, the same in two runs from the same store whichever case's request (sent
        ahead, in timing order), worker or shard stored it first. Not one this process stored
        or asked the engine to store, nor one whose ``.json`` another process of the run
        (an xdist worker) wrote after ``began_ns`` (its modification time)."""
        if key in self._stored_now:
            return False
        try:
            return (self.gold_dir / f"{key}.json").stat().st_mtime_ns < self.began_ns
        except OSError:
            return False

    def _cached_gold(self, key: str) -> dict[str, Any] | None:
        """A stored gold answer's description, read here without asking the engine process
        (it is only ever written for a gold that was run twice and found sound, and never
        changes, so it is read once: the case graded ahead and its own setup both ask).
        A damaged entry (a part missing, bad JSON, a checksum that does not match) reads as
        not stored: the engine process computes the gold again and rewrites it."""
        meta = self._stored.get(key)
        if meta is None:
            stored = read_stored_gold(self.gold_dir, key)
            if stored is None:
                return None
            meta = {"cached": True, **stored}
            if len(self._stored) >= 1024:
                self._stored.pop(next(iter(self._stored)))
            self._stored[key] = meta
        return meta

    def _parsed_gold(self, gold_sql: str, dialect: str | None = None) -> GoldAnswer:
        static = self.analyses.get(gold_sql, dialect)
        return GoldAnswer(key="", rows=0, columns=[], types=[], cached=True,
                          policy=ComparePolicy(order_matters=False),
                          tables=list(static.tables), joins=static.joins, tree=static.tree, analysis=static)

    def official(self, sql: str, gold_sql: str, case: BenchmarkCase | None = None) -> dict[str, Any] | None:
        """BIRD's and Spider's verdicts on a case we do not grade, because its gold cannot be
        trusted (``GoldError``): evidence for the side-by-side summary (``reports.sidebyside``),
        never a verdict of ours. The prediction runs only if it parses and is safe, and under
        the case's limits; ``ungraded`` says why we give no verdict (``empty_gold`` or
        ``gold_problem``). None without a database."""
        if self.host is None:
            return None
        try:
            _, request, _ = self._gold_request(gold_sql, case)
            gold = {"gold_key": request["key"], "gold_sql": request["sql"]}
        except GoldError:
            gold = {"gold_key": None, "gold_sql": gold_sql}
        standard = spider2_standard(case) if case is not None else None
        if standard is not None:  # Spider 2.0's verdict reads the gold CSVs, whatever our gold query's problem
            gold["spider2"] = standard
        stored = self._cached_gold(gold["gold_key"]) if gold["gold_key"] else None
        why = "empty_gold" if stored is not None and stored.get("rows") == 0 else "gold_problem"
        parsed = parse_sql(sql, self.dialect)
        rewritten = None  # as written it cannot run: Spider's evaluator may still run its rewrite
        if not parsed.ok or not check_safety(parsed.expression, parsed.statements).ok:
            from .spider_text import official_prediction, official_rewrites
            parsed = parse_sql(official_prediction(sql), self.dialect) if official_rewrites(sql) else parsed
            if not parsed.ok or not check_safety(parsed.expression, parsed.statements).ok:
                return {"bird": False, "spider": False, "ungraded": why, **({"spider2": False} if standard else {}),
                        "note": "the prediction does not parse or is refused: both rules score it wrong"}
            sql = rewritten = official_prediction(sql)
        try:
            answer = self.host.call("official", {"sql": self.to_engine(parsed.expression, sql), **gold})
        except (HostCrashed, HostTimeout) as exc:
            answer = {"sidebyside": None, "execution": {"error": {"category": "timeout", "message": str(exc)}}}
        out = answer.get("sidebyside")
        if out is None:  # the prediction failed or overran the case's limits: both rules score it wrong
            error = ((answer.get("execution") or {}).get("error") or {}).get("category", "unknown")
            out = {"bird": False, "spider": False, "note": f"the prediction did not run to a result ({error})",
                   **({"spider2": False} if standard else {})}
        if rewritten is not None:  # BIRD and Spider 2.0 run the prediction as written, which cannot run
            out = {**out, "bird": False, "bird_reason": None, **({"spider2": False} if standard else {})}
        return {**out, "ungraded": "empty_gold" if answer.get("gold_rows") == 0 else why}

    def submit(self, sql: str, gold: GoldAnswer) -> None:
        """Start grading ``sql`` now, ahead of its turn: its execution runs in the engine
        process while this process finishes the case before it, so the engine never waits
        for pytest. ``grade`` picks it up; a request that could stall the pipe waits for it.
        Each call is one case's (``CaseItem._send_ahead`` sends a case once): two cases of the
        same SQL and gold (Spider's paraphrased questions: a fifth of its dev set) each get
        their own, where one was kept before and the second case's execution waited for its turn."""
        if self.host is not None:
            while len(self._ahead) > CASES_AHEAD:  # never picked up (a setup error, -x): forget the oldest
                self._ahead.pop(next(iter(self._ahead)))
            self._sent_ahead += 1
            self._ahead[self._sent_ahead] = self._walk_ahead(sql, gold, ahead=True)

    def _taken_ahead(self, sql: str, gold: GoldAnswer) -> Candidate | None:
        """The oldest candidate sent ahead for ``sql`` against ``gold``'s answer, taken out."""
        for n, c in self._ahead.items():
            if c.sql == sql and c.gold.key == gold.key:
                return self._ahead.pop(n)
        return None

    def _walk_ahead(self, sql: str, gold: GoldAnswer, ahead: bool = False) -> Candidate:
        """The layers that run before the candidate's turn, up to sending its execution;
        the evidence that does not decide it (grounding, deprecated tables) is gathered
        while the engine runs it. Every layer runs under the case's budget (``layer_budget``)."""
        c = Candidate(sql, gold, self, Budget(layer_budget(self.limits)), ahead=ahead)
        for layer in self.layers:
            if layer.ahead:
                run_layer(layer, c)
        c.budget.pause()
        return c

    def grade(self, sql: str, gold: GoldAnswer, *, classifier: Callable[[Evidence], Classification | None] | None = None,
              judge: Callable[[Evidence], Any] | None = None, judge_mode: str = "off",
              question: str | None = None, gold_sql: str | None = None) -> Verdict:
        """Walk every layer over one candidate, then the steps after them: ``verdict.assess``
        (pass or fail), ``verdict.classification`` (the error class), the diagnosis of a
        failure, the judge (when one is given and its mode is not ``off``), and
        ``verdict.decide``, which makes the ``Verdict``; never raises for a wrong answer."""
        start = time.perf_counter()
        c = self._taken_ahead(sql, gold) or self._walk_ahead(sql, gold)
        c.budget.resume()
        for layer in self.layers:
            if not layer.ahead:
                run_layer(layer, c)
        gold, gold_sql = self._against_compared_gold(c, gold, gold_sql)
        evidence = Evidence(sql=sql, layers=c.layers, stale=c.stale, executed="execution" in c.layers,
                            joins_gold=gold.joins, tree=c.tree, executed_sql=c.executed_sql,
                            gold_sql=gold_sql, question=question, engine=self.engine)
        # the steps after the layers, in order: assess, classify, diagnose (a failure), judge, decide
        assessment = assess(evidence)
        classified = classification(evidence, assessment, classifier)
        judgement = None
        if assessment.unfinished is None:
            evidence.layers["classify"] = classified  # the judge's prompt and the diagnostics read it
            if not assessment.passed and self.host is not None:
                evidence.layers["diagnostics"] = self._diagnose(evidence, classified, c.budget)
            if judge is not None and judge_mode != "off" and judge_eligible(evidence.layers):
                judgement = judge(evidence)
        verdict = decide(evidence, assessment, classified, judgement=judgement, mode=judge_mode, classifier=classifier)
        c.budget.pause()
        if _host.TRACING:  # the pipe's timeline (engines.host, SQLEVAL_IPC_TRACE): when this process graded
            _host.trace_event("grade", time.monotonic() - (time.perf_counter() - start), time.monotonic())
        return replace(verdict, duration_ms=round((time.perf_counter() - start) * 1000, 3))

    def _against_compared_gold(self, c: Candidate, gold: GoldAnswer, gold_sql: str | None
                               ) -> tuple[GoldAnswer, str | None]:
        """A case of several golds is diagnosed and classified against the gold its record
        shows (the one matched, else the nearest): the structure and stale layers run again
        against that gold when it is another SQL gold; a result-file gold has no SQL, so no
        structural evidence. Returns that gold and its SQL."""
        golds = c.layers.get("golds")
        if golds is None or golds.compared == gold.index:
            if gold.kind != "sql":
                c.layers.pop("structure", None)
                return gold, None
            return gold, gold_sql
        compared = gold.by_index(golds.compared)
        if compared.kind != "sql":
            c.layers.pop("structure", None)
            return compared, None
        c.gold = compared
        for layer in self.layers:
            if layer.name in ("structure", "stale"):
                c.stale = [] if layer.name == "stale" else c.stale
                run_layer(layer, c)
        return compared, compared.source

    def _diagnose(self, evidence: Evidence, classified: Classification, budget: Budget) -> dict[str, Any]:
        """The pipeline's diagnose step: why a failure failed, for its failure text (under the
        case's budget; a diagnosis that cannot be made leaves evidence, never a lost case)."""
        def run() -> dict[str, Any]:
            budget.check()
            return diagnose(compare=evidence.compare, structure=evidence.structure,
                            classification=classified, layers=evidence.layers, stale=evidence.stale,
                            gold_sql=evidence.gold_sql, sql=evidence.sql, replacements=self.replacements,
                            engine=evidence.engine, tree=evidence.tree)
        diagnosis: dict[str, Any] = guarded(run, fallback={})
        return diagnosis


def _null_only(meta: dict[str, Any]) -> bool:
    """The stored gold answer is rows of NULLs only (``engine_side.null_only``); an answer
    stored before that was recorded is judged by its preview when the preview is all of it."""
    if "null_only" in meta:
        return bool(meta["null_only"])
    preview = meta.get("preview") or []
    return 0 < meta["rows"] <= len(preview) and all(v is None for row in preview for v in row) and bool(preview[0])


def _uninformative(rows: int, nulls: bool, variants: int | None = None) -> str:
    """Why an empty or all-NULL gold is a case error, and the declaration that accepts it."""
    where = "on the database" if variants is None else f"on the database nor on any of its {variants} variant(s)"
    if nulls:
        return (f"gold query returns only NULLs ({rows} row(s), every value NULL: an aggregate over rows the query "
                f"does not match?) {where}; such an answer cannot tell a right answer from a wrong one (every query "
                "that matches nothing gives it too). Fix the gold (its filters match no row of this database), or, "
                "if NULL is the intended answer, set \"expected_shape\": \"null\" on the case")
    return (f"gold query returns no rows {where}; an empty gold cannot tell a right answer from a wrong one. "
            "If the empty answer is intended, set \"expected_shape\": \"empty\" on the case")


def layer_budget(limits: Limits) -> float:
    """Seconds the grading layers of one case may spend in this process: the case's
    execution limit. Structure runs while the engine executes, so a case still ends
    within its limit plus the engine's grace, whatever the SQL's size."""
    return float(limits.timeout_s)
