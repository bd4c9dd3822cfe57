"""The grading pipeline as data: a ``Layer`` protocol and the ordered list of built-in
layers the grader walks for every candidate.

A layer reads the candidate (its SQL, its parse, the gold answer, the grader's catalog
and engine) and adds its evidence to ``candidate.layers`` under its name; it decides
nothing (``verdict.py`` does). Layers marked ``ahead`` run before the candidate's turn,
up to sending its execution to the engine, so the engine works while the case before
it is still being graded. A plugin adds, removes or replaces layers through the
``pytest_sqleval_layers`` hook (see ``hookspecs.py``)."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ..engines.host import HostCrashed, HostTimeout
from . import classify as classify_layer
from .budget import Budget, OverBudget
from .execute import engine_failure_record, timeout_record
from .grounding import ground
from .parse import parse_sql
from .safety import check_safety
from .structure import compare_structure

if TYPE_CHECKING:  # pragma: no cover
    from .pipeline import GoldAnswer, SuiteGrader


@dataclass
class Candidate:
    """One predicted query on its way through the layers."""

    sql: str
    gold: "GoldAnswer"
    grader: "SuiteGrader"
    budget: Budget
    layers: dict[str, Any] = field(default_factory=dict)
    parsed: Any = None
    stopped: bool = False  # parse or safety refused it: the layers that need a sound query skip it
    stale: list[str] = field(default_factory=list)
    executed_sql: str | None = None
    ticket: Any = None
    sent_at: float = 0.0
    ahead: bool = False  # graded ahead of its turn: the engine may queue it behind the case before
    variants_answer: Any = None  # the variants' results when the engine ran them with the execution

    @property
    def same_sql_as_gold(self) -> bool:
        """Sent as the gold's own query: on any database it returns the gold's answer."""
        return self.executed_sql is not None and self.executed_sql == self.gold.request.get("sql")

    @property
    def tree(self) -> Any:
        """The parsed query, for layers that need a sound one (None once it was refused)."""
        return None if self.stopped or self.parsed is None else self.parsed.expression


@runtime_checkable
class Layer(Protocol):
    """One grading layer. ``run`` adds evidence to ``candidate.layers[name]`` (or leaves
    nothing when it does not apply); an exception in it is kept as that layer's
    ``layer_error`` evidence, never a lost case."""

    name: str
    ahead: bool

    def run(self, candidate: Candidate) -> None: ...


class ParseLayer:
    name, ahead = "parse", True

    def run(self, c: Candidate) -> None:
        c.parsed = parse_sql(c.sql, c.grader.dialect)
        c.layers["parse"] = c.parsed.to_dict()
        c.stopped = not c.parsed.ok


class SafetyLayer:
    """A crash in the safety check refuses the query: it fails closed."""

    name, ahead = "safety", True

    def run(self, c: Candidate) -> None:
        if c.stopped:
            return
        parsed = c.parsed
        c.layers["safety"] = guarded(lambda: check_safety(parsed.expression, parsed.statements).to_dict(),
                                     fallback={"ok": False, "reason": "layer_error"})
        c.stopped = not c.layers["safety"]["ok"]


class SendLayer:
    """Sends the candidate, in the engine's dialect, to the engine process; its result is
    collected by ``ExecutionLayer``. Nothing to send without a database."""

    name, ahead = "send", True

    def run(self, c: Candidate) -> None:
        grader = c.grader
        if c.stopped or grader.host is None:
            return
        try:
            c.executed_sql = grader.to_engine(c.parsed.expression, c.sql)
        except RecursionError:  # the engine's own parser says whether it can run the original
            c.executed_sql = c.sql
            c.layers["parse"]["layer_error"] = "recursion: not transpiled, executed as written"
        c.sent_at = time.perf_counter()
        gold = c.gold
        payload = {"sql": c.executed_sql, "gold_key": gold.key, "spec": gold.policy.to_wire(), "gold_sql": gold.sql}
        chosen = grader.variant_set.known(gold.key, gold.sql) if grader.variant_set is not None else None
        if chosen is not None and not c.same_sql_as_gold:
            # The engine runs a match on the variants in the same request, while this
            # process goes on with the case: the wait for them overlaps pytest's work.
            payload["variants"] = {"gold": gold.request, "variants": chosen.variants}
        c.ticket = grader.host.submit("grade", payload, ahead=c.ahead)


class GroundingLayer:
    name, ahead = "grounding", True

    def run(self, c: Candidate) -> None:
        if c.stopped or c.grader.index is None:
            return
        tree, index, budget = c.tree, c.grader.index, c.budget
        c.layers["grounding"] = guarded(lambda: ground(tree, index, budget).to_dict(), fallback=_NO_GROUNDING)


class StaleLayer:
    """Deprecated tables the prediction reads and the gold does not (a deprecated table
    the gold reads too is not stale, however either side qualifies it)."""

    name, ahead = "stale", True

    def run(self, c: Candidate) -> None:
        if c.stopped:
            return
        gold_tables = {t.removeprefix("main.") for t in c.gold.tables}
        tree, deprecated = c.tree, c.grader.deprecated
        if tree is None or not classify_layer.may_read_deprecated(tree, deprecated):
            c.stale = []
            return
        c.stale = guarded(lambda: [t for t in classify_layer.deprecated_refs(classify_layer.table_names(tree), deprecated)
                                   if t.removeprefix("main.") not in gold_tables], fallback=[])


class StructureLayer:
    """The structural diff, unless the case's budget is spent (it is explanation only);
    it runs while the engine executes the candidate."""

    name, ahead = "structure", False

    def run(self, c: Candidate) -> None:
        analysis = c.gold.analysis  # the gold's side, analysed once per gold (gold_analysis.py)
        gold = analysis.structure if analysis is not None else c.gold.tree
        failed = analysis.structure_error if analysis is not None else None  # the gold's side could not be made
        if c.parsed is None or not c.parsed.ok or c.parsed.expression is None or (gold is None and failed is None):
            return
        pred, sql, dialect, budget = c.parsed.expression, c.sql, c.grader.dialect, c.budget

        def run() -> dict[str, Any]:
            budget.check()
            if failed is not None:
                return {**_NO_STRUCTURE, **failed}
            return compare_structure(pred, gold, dialect, budget, pred_sql=sql).to_dict()
        c.layers["structure"] = guarded(run, fallback=_NO_STRUCTURE)


class ExecutionLayer:
    """The engine's answer to the candidate sent by ``SendLayer``: the execution record and
    the result comparison (made in the engine process, next to the gold answer)."""

    name, ahead = "execution", False

    def run(self, c: Candidate) -> None:
        if c.ticket is None:
            return
        c.budget.pause()  # execution has its own limits, enforced in the engine process
        compare = None
        try:
            answer = c.grader.host.result(c.ticket)
            execution, compare = answer["execution"], answer["compare"]
            c.variants_answer = answer.get("variants")
            if answer.get("pred_preview") is not None:
                execution["preview"] = answer["pred_preview"]
            if answer.get("over_cap") is not None:  # more rows than the cap, against a gold of at most that many
                execution["over_cap"] = answer["over_cap"]
            if answer.get("sidebyside") is not None:  # no result of ours: the peers' verdicts stand alone
                c.layers["official"] = {"sidebyside": answer["sidebyside"]}
        except HostTimeout as exc:
            execution = timeout_record(str(exc), round((time.perf_counter() - c.sent_at) * 1000, 3), exc.over_limit)
        except HostCrashed as exc:  # the engine failed on this query, or died: not a timeout
            execution = engine_failure_record(str(exc), round((time.perf_counter() - c.sent_at) * 1000, 3))
        c.budget.resume()
        c.layers["execution"] = execution
        c.layers["compare"] = compare


class OfficialLayer:
    """What Spider's official evaluator does to the prediction before it runs it (every
    ``value`` placeholder replaced by ``1``, spaced operators joined: ``peers.official_rewrites``),
    for the failure text; and, when that rewrite is all that stood between the prediction
    and a result (it does not parse or is refused as written, and the rewritten query
    parses and is safe), Spider's verdict on the rewritten query, from the engine
    (evidence only: our verdict grades the prediction as written)."""

    name, ahead = "official", False

    def run(self, c: Candidate) -> None:
        from .peers import official_prediction, official_rewrites
        rewrites = official_rewrites(c.sql)
        if not rewrites:
            return
        entry = c.layers.setdefault("official", {})
        entry["rewrites"] = rewrites
        grader = c.grader
        if c.ticket is not None or grader.host is None or not c.gold.key:
            return  # it ran as written: the engine gave Spider's verdict on the rewritten query beside ours
        rewritten = official_prediction(c.sql)
        parsed = parse_sql(rewritten, grader.dialect)
        if not parsed.ok or not check_safety(parsed.expression, parsed.statements).ok:
            entry["sidebyside"] = {"bird": False, "spider": False, "ours_compare": False, "note": (
                "the prediction does not parse or is refused, as written and as Spider's evaluator rewrites it: "
                "both rules score it wrong")}
            return
        c.budget.pause()  # an execution, under the engine's limits
        try:
            answer = grader.host.call("official", {"sql": grader.to_engine(parsed.expression, rewritten),
                                                   "gold_key": c.gold.key, "gold_sql": c.gold.sql})
        except (HostCrashed, HostTimeout) as exc:
            answer = {"execution": {"error": {"category": "timeout", "message": str(exc)}}}
        finally:
            c.budget.resume()
        sbs = answer.get("sidebyside")
        if sbs is None:
            error = ((answer.get("execution") or {}).get("error") or {}).get("category", "unknown")
            sbs = {"spider": False, "note": f"the query Spider's evaluator runs did not run to a result ({error})"}
        spider = sbs.get("spider")
        entry["sidebyside"] = {**sbs, "ours_compare": False, "bird": False, "bird_reason": None,
                               "spider_reason": rewrites[0]["rewrite"] if spider else None,
                               "spider_rewrites": [r["rewrite"] for r in rewrites]}


class VariantsLayer:
    """A candidate that matched on the pinned database, run on its case's variants of the
    database (``variants/``): where a variant's gold answer differs from the candidate's,
    the match on the pinned database was a coincidence. Only when the suite has variants."""

    name, ahead = "variants", False

    def run(self, c: Candidate) -> None:
        grader, compare = c.grader, c.layers.get("compare")
        if grader.variant_set is None or c.ticket is None or not (compare and compare.get("match")):
            return
        c.budget.pause()  # executions, under the engine's limits
        try:
            chosen = grader.variant_set.for_gold(c.gold.key, c.gold.request, c.gold.sql, grader.engine_dialect,
                                                 grader.host, c.gold.elapsed_ms)
            if c.same_sql_as_gold:
                # The gold's own query: every chosen variant holds a trustworthy gold answer
                # (distillation chooses no other), which is what this same query returns there.
                answer = {"results": [{"variant": v["index"], "match": True} for v in chosen.variants]}
            else:
                answer = c.variants_answer or grader.host.call(
                    "variants", {"sql": c.executed_sql, "gold": c.gold.request, "variants": chosen.variants})
        except (HostCrashed, HostTimeout) as exc:
            answer = {"error": str(exc)}
        finally:
            c.budget.resume()
        if "error" in answer:  # no evidence either way: the pinned verdict stands
            c.layers["variants"] = {"error": answer["error"][:500]}
            return
        results = answer["results"]
        graded = [r for r in results if r.get("match") is not None]
        c.layers["variants"] = {
            "chosen": len(chosen.variants), "graded": len(graded),
            "mismatch": next((r for r in results if r.get("match") is False), None),
            "evidence": chosen.evidence(), **({"same_sql_as_gold": True} if c.same_sql_as_gold else {})}


def default_layers() -> list[Layer]:
    """The built-in layers, in the order the grader walks them."""
    return [ParseLayer(), SafetyLayer(), SendLayer(), GroundingLayer(), StaleLayer(), StructureLayer(),
            ExecutionLayer(), OfficialLayer(), VariantsLayer()]


def run_layer(layer: Layer, c: Candidate) -> None:
    """Run one layer; a layer that cannot cope leaves evidence instead of losing the case."""
    try:
        layer.run(c)
    except Exception as exc:
        c.layers[layer.name] = {**c.layers.get(layer.name, {}), **_failure(exc)}


_NO_STRUCTURE: dict[str, Any] = {"normalized_match": None, "exact_match": None, "no_values_exact_match": None,
                                 "distance": None, "differing_clauses": [], "clauses": {}}
_NO_GROUNDING: dict[str, Any] = {"ok": None, "hallucinated_tables": [], "hallucinated_columns": [], "tables": [],
                                 "note": None}


def guarded(layer: Any, fallback: Any) -> Any:
    """Run one layer's work; a failure leaves evidence instead of losing the case.

    ``OverBudget`` gives ``skipped: over budget``; a ``RecursionError`` (a 3,000-term AND
    chain, a 1,200-branch UNION) ``layer_error: recursion``; any other exception its type.
    A dict ``fallback`` is the layer's record with that evidence added; another fallback
    (a list) stands in for the layer's value."""
    try:
        return layer()
    except Exception as exc:
        evidence = _failure(exc)
    return {**fallback, **evidence} if isinstance(fallback, dict) else fallback


def _failure(exc: BaseException) -> dict[str, Any]:
    if isinstance(exc, OverBudget):
        return {"skipped": "over budget", "detail": str(exc)}
    if isinstance(exc, RecursionError):
        return {"layer_error": "recursion", "detail": "the SQL is nested too deeply for this layer"}
    return {"layer_error": type(exc).__name__, "detail": str(exc)[:500]}
