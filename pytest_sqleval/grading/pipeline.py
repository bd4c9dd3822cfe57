"""The grading pipeline: parse -> safety -> grounding -> execute -> compare -> classify.

``SuiteGrader`` owns one suite's engine host, catalog and gold answers; ``grade`` turns
one generated SQL string into the evidence of every layer plus a verdict. Nothing here
raises for a wrong answer; a gold that cannot be trusted raises ``GoldError``."""
from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..cases import BenchmarkCase, ComparePolicy, Limits
from ..engines import is_url
from ..engines.host import EngineHost, HostCrashed, HostTimeout, describe_timeout
from ..errors import GoldError
from . import classify as classify_layer
from .budget import Budget, OverBudget
from .execute import engine_failure_record, timeout_record
from .grounding import CatalogIndex, ground
from .parse import order_info, parse_sql
from .diagnostics import diagnose
from .engine_side import HANDLER, read_stored_gold
from .safety import check_safety
from .structure import compare_structure

DEFAULT_DIALECT = "duckdb"


@dataclass
class GoldAnswer:
    key: str
    rows: int
    columns: list[str]
    types: list[str]
    cached: bool
    spec: dict[str, Any]
    tables: list[str]
    joins: dict[str, Any]
    elapsed_ms: float = 0.0
    preview: list[list[Any]] = field(default_factory=list)
    tree: Any = field(default=None, repr=False, compare=False)  # parsed gold, for the structural layer
    sql: str | None = field(default=None, repr=False, compare=False)  # as run on the engine (side-by-side rules)

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "rows": self.rows, "columns": self.columns, "types": self.types,
                "cached": self.cached, "ordered": self.spec["ordered"], "sort_keys": self.spec["sort_keys"],
                "elapsed_ms": self.elapsed_ms, "preview": self.preview}


@dataclass
class Verdict:
    """One graded case: ``passed`` plus the evidence of every layer that ran."""

    passed: bool
    error_class: str | None
    failure_kind: str | None
    explanation: str
    confidence: float
    layers: dict[str, Any]
    generated_sql: str
    executed_sql: str | None
    stale_tables: list[str]
    duration_ms: float

    @property
    def parse_ok(self) -> bool:
        return bool(self.layers["parse"]["ok"])

    @property
    def grounding(self) -> dict[str, Any]:
        return self.layers.get("grounding") or {"ok": None, "hallucinated_tables": [], "hallucinated_columns": []}

    def to_dict(self) -> dict[str, Any]:
        return {"pass": self.passed, "error_class": self.error_class, "failure_kind": self.failure_kind,
                "explanation": self.explanation, "confidence": self.confidence, "layers": self.layers,
                "generated_sql": self.generated_sql, "executed_sql": self.executed_sql,
                "stale_tables": self.stale_tables, "duration_ms": self.duration_ms}


class SuiteGrader:
    """Grades SQL against one database; one per suite per process."""

    def __init__(self, database: Path, *, dialect: str = DEFAULT_DIALECT, limits: Limits = Limits(),
                 policy: ComparePolicy = ComparePolicy(), deprecated: tuple[str, ...] = (),
                 cache_dir: Path, started: tuple[EngineHost, Any] | None = None) -> None:
        self.database = database if is_url(database) else Path(database)  # Path() would fold a URL's "//"
        self.dialect = dialect
        self.limits = limits
        self.policy = policy
        self.deprecated = deprecated
        self.gold_dir = Path(cache_dir) / "gold"
        self.host, ticket = started or self.start_engine(self.database, limits, cache_dir)
        info = self.host.result(ticket)
        self.content_hash: str = info["content_hash"]
        self.engine: str = info["engine"]
        self.engine_version: str = info["engine_version"]
        self.engine_dialect: str = info["dialect"]  # gold and predictions are transpiled to it
        self.catalog: dict[str, Any] = info["catalog"]
        self.index = CatalogIndex(self.catalog)
        self.gold_executions = 0
        self._gold_parses: dict[str, Any] = {}  # gold SQL -> its parse and what follows from it (never mutated)
        self._ahead: dict[tuple[str, str], _Prepared] = {}  # (SQL, gold key) -> sent ahead of its turn (see submit)
        self._stored: dict[str, dict[str, Any]] = {}  # gold key -> its stored description, read once

    @staticmethod
    def start_engine(database: str | Path, limits: Limits, cache_dir: Path) -> tuple[EngineHost, Any]:
        """An engine process and its ``describe`` request, sent without waiting: a grader
        made later with ``started=`` reads the answer (session.start_engines)."""
        host = EngineHost(database, limits, cache_dir, handler=HANDLER, handler_args=(str(Path(cache_dir) / "gold"),))
        return host, host.submit("describe", {}, exec_timeout=describe_timeout(limits))

    def close(self) -> None:
        self.host.close()

    def _to_engine(self, tree: Any, sql: str) -> str:
        if self.dialect == self.engine_dialect or tree is None:
            return sql
        return tree.sql(dialect=self.engine_dialect)

    def policy_for(self, case: BenchmarkCase | None) -> ComparePolicy:
        return self.policy.for_case(case)

    def gold(self, gold_sql: str, case: BenchmarkCase | None = None) -> GoldAnswer:
        """The gold answer, computed once per (content hash, gold SQL, engine version)."""
        static, request, policy = self._gold_request(gold_sql, case)
        meta = self._cached_gold(request["key"])
        if meta is None:
            try:
                meta = self.host.call("gold", request)
            except HostCrashed as exc:
                raise GoldError(f"gold query did not finish: {exc}") from None
            if not meta.get("cached"):
                self.gold_executions += 1
        return self._gold_answer(static, request, policy, meta)

    def stored_gold(self, gold_sql: str, case: BenchmarkCase | None = None) -> GoldAnswer | None:
        """The gold answer if it is stored already, else None: never runs a query, never raises."""
        try:
            static, request, policy = self._gold_request(gold_sql, case)
            meta = self._cached_gold(request["key"])
            return None if meta is None else self._gold_answer(static, request, policy, meta)
        except GoldError:
            return None

    def _gold_request(self, gold_sql: str, case: BenchmarkCase | None) -> tuple[tuple[Any, ...], dict[str, Any], ComparePolicy]:
        static = self._gold_parses.get(gold_sql)  # cases sharing a gold SQL share its parse
        if static is None:
            parsed = parse_sql(gold_sql, self.dialect)
            if not parsed.ok:
                err = parsed.error or {}
                raise GoldError(f"gold SQL does not parse: {err.get('message')} (line {err.get('line')}, col {err.get('col')})")
            safety = check_safety(parsed.expression, parsed.statements)
            if not safety.ok:
                raise GoldError(f"gold SQL is refused by the safety layer: {safety.detail}")
            try:
                static = (parsed, order_info(parsed.expression, self.engine_dialect),
                          self._to_engine(parsed.expression, gold_sql), classify_layer.table_names(parsed.expression),
                          classify_layer.join_structure(parsed.expression))
            except RecursionError:  # a case error, counted as such: the gold cannot be analysed
                raise GoldError("gold SQL is nested too deeply for the grader to analyse") from None
            if len(self._gold_parses) >= 256:
                self._gold_parses.pop(next(iter(self._gold_parses)))
            self._gold_parses[gold_sql] = static
        _, order, sql, _, _ = static
        policy = self.policy_for(case)
        ordered = order.ordered if policy.order_matters is None else policy.order_matters
        spec = {"ordered": ordered, "sort_keys": order.sort_keys if ordered else None,
                "float_rel_tol": policy.float_rel_tol, "float_abs_tol": policy.float_abs_tol}
        augmented = order.augmented_sql if ordered else None
        request = {"sql": sql, "exec_sql": augmented, "spec": spec, "limit": order.limit,
                   "key_positions": order.key_positions if ordered else None,
                   "n_appended": order.n_appended if augmented else 0,
                   "probe_sql": order.probe_sql if ordered else None}
        request["key"] = hashlib.sha256(json.dumps([self.content_hash, self.engine, self.engine_version,
                                                    self.limits.max_rows, request], sort_keys=True).encode()
                                        ).hexdigest()[:40]
        return static, request, policy

    def _gold_answer(self, static: tuple[Any, ...], request: dict[str, Any], policy: ComparePolicy,
                     meta: dict[str, Any]) -> GoldAnswer:
        parsed, _, sql, gold_tables, gold_joins = static
        if meta.get("error"):
            err = meta["error"]["error"]
            raise GoldError(f"gold query fails on the database ({err['category']}): {err['message'].splitlines()[0]}")
        if meta.get("problem"):
            raise GoldError(f"gold query is {meta['problem']}" if meta["problem"].startswith("nondet")
                            else f"gold query is ambiguous: {meta['problem']}")
        if meta["rows"] == 0 and not policy.allow_empty:
            raise GoldError("gold query returns no rows; an empty gold cannot tell a right answer from a wrong one. "
                            "If the empty answer is intended, set \"expected_shape\": \"empty\" on the case")
        return GoldAnswer(key=request["key"], rows=meta["rows"], columns=meta["columns"], types=meta["types"],
                          cached=bool(meta.get("cached")), spec=request["spec"], tables=list(gold_tables),
                          joins=gold_joins, elapsed_ms=meta.get("elapsed_ms", 0.0),
                          preview=meta.get("preview", []), tree=parsed.expression, sql=sql)

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

    def submit(self, sql: str, gold: GoldAnswer) -> None:
        """Start grading ``sql`` now, ahead of its turn: its execution runs in the engine
        process while this process finishes the case before it, so the engine never waits
        for pytest. ``grade`` picks it up; a request that could stall the pipe waits for it."""
        key = (sql, gold.key)
        if key not in self._ahead:
            while len(self._ahead) >= 4:  # never picked up (a setup error, -x): forget the oldest
                self._ahead.pop(next(iter(self._ahead)))
            self._ahead[key] = self._prepare(sql, gold, ahead=True)

    def _prepare(self, sql: str, gold: GoldAnswer, ahead: bool = False) -> "_Prepared":
        """The layers before execution; if they allow it, the execution is sent, and the
        evidence that does not decide it (grounding, deprecated tables) is gathered while
        the engine runs it. Every layer runs under the case's budget (``layer_budget``)."""
        prep = _Prepared(parse_sql(sql, self.dialect), budget=Budget(layer_budget(self.limits)))
        parsed = prep.parsed
        prep.layers["parse"] = parsed.to_dict()
        if not parsed.ok:
            return prep
        prep.safety = safety_layer(parsed)
        prep.layers["safety"] = prep.safety
        if not prep.safety["ok"]:
            return prep
        try:
            prep.executed_sql = self._to_engine(parsed.expression, sql)
        except RecursionError:  # the engine's own parser says whether it can run the original
            prep.executed_sql = sql
            prep.layers["parse"]["layer_error"] = "recursion: not transpiled, executed as written"
        prep.sent_at = time.perf_counter()
        prep.ticket = self.host.submit("grade", {"sql": prep.executed_sql, "gold_key": gold.key, "spec": gold.spec,
                                                 "gold_sql": gold.sql}, ahead=ahead)
        prep.grounding = grounding_layer(parsed.expression, self.index, prep.budget)
        prep.stale = stale_tables(parsed.expression, gold, self.deprecated)
        prep.budget.pause()
        return prep

    def grade(self, sql: str, gold: GoldAnswer) -> Verdict:
        """Run every layer on one candidate; never raises for a wrong answer."""
        start = time.perf_counter()
        prep = self._ahead.pop((sql, gold.key), None) or self._prepare(sql, gold)
        parsed = prep.parsed
        budget = prep.budget
        budget.resume()
        layers = {k: prep.layers[k] for k in ("parse", "safety") if k in prep.layers}
        if parsed.ok and parsed.expression is not None and gold.tree is not None:
            # while the engine process executes
            layers["structure"] = structure_layer(parsed.expression, gold.tree, self.dialect, budget)
        execution = compare = None
        if prep.ticket is not None:
            layers["grounding"] = prep.grounding
            budget.pause()  # execution has its own limits, enforced in the engine process
            try:
                answer = self.host.result(prep.ticket)
                execution, compare = answer["execution"], answer["compare"]
                if answer.get("pred_preview") is not None:
                    execution["preview"] = answer["pred_preview"]
            except HostTimeout as exc:
                execution = timeout_record(str(exc), round((time.perf_counter() - prep.sent_at) * 1000, 3))
            except HostCrashed as exc:  # the engine failed on this query, or died: not a timeout
                execution = engine_failure_record(str(exc), round((time.perf_counter() - prep.sent_at) * 1000, 3))
            budget.resume()
            layers["execution"] = execution
            layers["compare"] = compare
        stale = prep.stale
        # A deprecated table fails the case even when its numbers coincide with the live one's.
        passed = bool(compare and compare["match"]) and not stale
        if passed:
            cls = classify_layer.Classification(None, None, "result matches the gold answer"
                                                + (" within float tolerance" if compare.get("within_tolerance") else ""), 1.0)
        else:
            joins_pred = guarded(lambda: classify_layer.join_structure(
                parsed.expression if prep.safety and prep.safety["ok"] else None), fallback={"tables": [], "joins": []})
            cls = classify_layer.classify(parse=layers["parse"], safety=prep.safety, grounding=prep.grounding,
                                          execution=execution, compare=compare, stale=stale,
                                          joins_pred=joins_pred, joins_gold=gold.joins)
        layers["classify"] = cls.to_dict()
        if not passed:
            layers["diagnostics"] = diagnostics_layer(compare, layers.get("structure"), layers["classify"], budget)
        budget.pause()
        return Verdict(passed, cls.error_class, cls.failure_kind, cls.explanation, cls.confidence, layers, sql,
                       prep.executed_sql, stale, round((time.perf_counter() - start) * 1000, 3))


@dataclass
class _Prepared:
    """A candidate's layers up to execution, and the engine's ticket once it was sent."""

    parsed: Any
    budget: Budget
    layers: dict[str, Any] = field(default_factory=dict)
    safety: dict[str, Any] | None = None
    grounding: dict[str, Any] | None = None
    stale: list[str] = field(default_factory=list)
    executed_sql: str | None = None
    ticket: Any = None
    sent_at: float = 0.0


class StaticGrader:
    """Grades without a database (judge-only suites): parse, safety, grounding against the
    suite's DDL, structure. Nothing is executed; the verdict is the judge's to give."""

    engine = "none"
    engine_version = None

    def __init__(self, *, dialect: str, catalog: dict[str, Any] | None, deprecated: tuple[str, ...] = (),
                 catalog_source: str = "") -> None:
        self.dialect = dialect
        self.deprecated = deprecated
        self.catalog = catalog
        self.index = CatalogIndex(catalog) if catalog is not None else None
        self.content_hash = hashlib.sha256(catalog_source.encode()).hexdigest() if catalog_source else None

    def close(self) -> None:
        pass

    def gold(self, gold_sql: str, case: BenchmarkCase | None = None) -> GoldAnswer:
        parsed = parse_sql(gold_sql, self.dialect)
        if not parsed.ok or parsed.expression is None:
            err = parsed.error or {}
            raise GoldError(f"gold SQL does not parse: {err.get('message')} (line {err.get('line')}, col {err.get('col')})")
        return GoldAnswer(key="", rows=0, columns=[], types=[], cached=True, spec={"ordered": False, "sort_keys": None},
                          tables=classify_layer.table_names(parsed.expression),
                          joins=classify_layer.join_structure(parsed.expression), tree=parsed.expression)

    def grade(self, sql: str, gold: GoldAnswer) -> Verdict:
        """Evidence only: ``passed`` is provisional (parse and grounding) until a judge decides."""
        start = time.perf_counter()
        budget = Budget(layer_budget(Limits()))
        parsed = parse_sql(sql, self.dialect)
        layers: dict[str, Any] = {"parse": parsed.to_dict()}
        stale: list[str] = []
        ok = parsed.ok
        if parsed.ok:
            layers["safety"] = safety_layer(parsed)
            ok = layers["safety"]["ok"]
            if parsed.expression is not None and gold.tree is not None:
                layers["structure"] = structure_layer(parsed.expression, gold.tree, self.dialect, budget)
            if ok and self.index is not None:
                layers["grounding"] = grounding_layer(parsed.expression, self.index, budget)
                ok = layers["grounding"]["ok"] is not False
            stale = stale_tables(parsed.expression, gold, self.deprecated)
        cls = static_classification(layers, stale, gold) if not ok or stale else classify_layer.Classification(
            None, None, "parses and is grounded; equivalence is for the judge to decide", 0.0)
        layers["classify"] = cls.to_dict()
        return Verdict(ok and not stale, cls.error_class, cls.failure_kind, cls.explanation, cls.confidence, layers,
                       sql, None, stale, round((time.perf_counter() - start) * 1000, 3))


def layer_budget(limits: Limits) -> float:
    """Seconds the grading layers of one case may spend in this process: the case's
    execution limit. Structure runs while the engine executes, so a case still ends
    within its limit plus the engine's grace, whatever the SQL's size."""
    return float(limits.timeout_s)


_NO_GROUNDING: dict[str, Any] = {"ok": None, "hallucinated_tables": [], "hallucinated_columns": [], "tables": [],
                                 "note": None}


def guarded(layer: Any, fallback: Any) -> Any:
    """Run one layer; a layer that cannot cope leaves evidence instead of losing the case.

    ``OverBudget`` gives ``skipped: over budget``; a ``RecursionError`` (a 3,000-term AND
    chain, a 1,200-branch UNION) ``layer_error: recursion``; any other exception its type.
    A dict ``fallback`` is the layer's record with that evidence added; another fallback
    (a list) stands in for the layer's value."""
    try:
        return layer()
    except OverBudget as exc:
        evidence = {"skipped": "over budget", "detail": str(exc)}
    except RecursionError:
        evidence = {"layer_error": "recursion", "detail": "the SQL is nested too deeply for this layer"}
    except Exception as exc:  # a layer's bug must not lose the case either
        evidence = {"layer_error": type(exc).__name__, "detail": str(exc)[:500]}
    return {**fallback, **evidence} if isinstance(fallback, dict) else fallback


def safety_layer(parsed: Any) -> dict[str, Any]:
    """The safety check; a crash in it refuses the query (it fails closed)."""
    return guarded(lambda: check_safety(parsed.expression, parsed.statements).to_dict(),
                   fallback={"ok": False, "reason": "layer_error"})


def grounding_layer(tree: Any, index: CatalogIndex, budget: Budget) -> dict[str, Any]:
    return guarded(lambda: ground(tree, index, budget).to_dict(), fallback=_NO_GROUNDING)


def stale_tables(tree: Any, gold: GoldAnswer, deprecated: tuple[str, ...]) -> list[str]:
    """Deprecated tables the prediction reads and the gold does not (a deprecated table
    the gold reads too is not stale, however either side qualifies it)."""
    gold_tables = {t.removeprefix("main.") for t in gold.tables}
    return guarded(lambda: [t for t in classify_layer.deprecated_refs(classify_layer.table_names(tree), deprecated)
                            if t.removeprefix("main.") not in gold_tables], fallback=[])


def structure_layer(pred: Any, gold: Any, dialect: str, budget: Budget) -> dict[str, Any]:
    """The structural diff, unless the case's budget is spent (it is explanation only)."""
    def run() -> dict[str, Any]:
        budget.check()
        return compare_structure(pred, gold, dialect, budget).to_dict()
    return guarded(run, fallback={"normalized_match": None, "exact_match": None, "no_values_exact_match": None,
                                  "distance": None, "differing_clauses": [], "clauses": {}})


def diagnostics_layer(compare: dict[str, Any] | None, structure: dict[str, Any] | None,
                      classification: dict[str, Any], budget: Budget) -> dict[str, Any]:
    def run() -> dict[str, Any]:
        budget.check()
        return diagnose(compare=compare, structure=structure, classification=classification)
    return guarded(run, fallback={})


def static_classification(layers: dict[str, Any], stale: list[str], gold: GoldAnswer) -> "classify_layer.Classification":
    """The error class of a case graded without execution: from grounding, deprecated
    tables and the structural diff."""
    grounding = layers.get("grounding") or {}
    halluc = grounding.get("hallucinated_tables", []) + grounding.get("hallucinated_columns", [])
    if not layers["parse"]["ok"] or not (layers.get("safety") or {}).get("ok", True):
        return classify_layer.classify(parse=layers["parse"], safety=layers.get("safety"), grounding=None,
                                       execution=None, compare=None, stale=[], joins_pred={"tables": [], "joins": []},
                                       joins_gold=gold.joins)
    if halluc:
        names = ", ".join(f"{h['name']} (line {h.get('line')}, col {h.get('col')})" for h in halluc)
        return classify_layer.Classification("hallucinated_column", "grounding", f"not in the schema: {names}", 0.9)
    if stale:
        return classify_layer.Classification("stale_table", "deprecated_table", f"reads deprecated table {', '.join(stale)}", 0.9)
    differing = (layers.get("structure") or {}).get("differing_clauses", [])
    if {"joins", "from"} & set(differing):
        return classify_layer.Classification("wrong_join", "judged_different", "judged different; joins differ from the gold", 0.6)
    if {"select", "group_by", "having"} & set(differing):
        return classify_layer.Classification("wrong_metric", "judged_different", "judged different; measures differ from the gold", 0.5)
    return classify_layer.Classification("other", "judged_different", "judged different from the gold", 0.5)
