"""The one owner of the verdict: pass or fail, the error class (by one precedence),
case errors, and how the judge's evidence combines with the deterministic layers'.

Everything before this module gathers evidence and decides nothing; everything after it
(items, records, reports) renders the ``Verdict`` it returns and edits nothing. A pytest
item and ``api.compare`` both end here, so they agree on the same SQL, judge or not.

Execution decides wherever it ran (the judge only annotates); without a database the
judge decides in ``decide`` mode, and exact match decides otherwise.

Time: a query that spent more than its limit (CPU time where the engine's can be read,
``engines.watchdog``; on PostgreSQL, two overruns, the second at ten times the limit)
fails as a ``timeout``, with its figures. One stopped at its wall bound before it spent
its limit (``unfinished``: only a machine loaded past ten times over does that) proves
nothing about the prediction: the case is not graded (status ``error``), never failed,
so the same predictions get the same verdicts on a quiet and a loaded machine."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping

from ..engines.base import REFUSED, ExecError  # REFUSED: the exception of a query a sandbox rule refused
from .error_classes import BUILTIN_ERROR_CLASSES, declared
from .layers import (CompareEvidence, ExecutionEvidence, GroundingEvidence, ParseEvidence, SafetyEvidence,
                     StructureEvidence, VariantMismatch, VariantsEvidence, record_form, typed)
from .modes import JUDGE_MODES as JUDGE_MODES  # defined apart: light enough for pytest's start to import

ERROR_CLASSES = tuple(c.name for c in BUILTIN_ERROR_CLASSES)  # the built-in ones; a plugin declares more
ACCEPTED = ("equivalent", "partially_equivalent")


@dataclass(frozen=True, slots=True)
class Classification:
    error_class: str | None
    failure_kind: str | None  # parse_error, unsafe_statement, timeout, runtime_error, projection_mismatch, ...
    explanation: str
    confidence: float

    def to_dict(self) -> dict[str, Any]:
        return {"error_class": self.error_class, "failure_kind": self.failure_kind,
                "explanation": self.explanation, "confidence": self.confidence}


@dataclass
class Evidence:
    """What the layers found for one candidate: the input of every decision here and of
    the ``pytest_sqleval_classify`` hook. ``layers`` holds each layer's evidence by name: a
    built-in layer's typed value (``layers.ParseEvidence`` ...), read here by attribute
    (``evidence.parse.ok``), and a plugin layer's own value, read by ``get(name)``;
    ``executed`` says whether the candidate was sent to an engine."""

    sql: str
    layers: dict[str, Any]
    stale: list[str]
    executed: bool
    joins_gold: dict[str, Any]
    tree: Any = None  # the parsed prediction, when it parsed and was not refused
    executed_sql: str | None = None
    gold_sql: str | None = None
    question: str | None = None
    engine: str | None = None  # the engine that ran it ("duckdb", "sqlite", "postgres"), to name it
    _joins: dict[str, Any] | None = field(default=None, repr=False)

    def get(self, name: str) -> dict[str, Any]:
        """A layer's evidence as the record holds it (``{}`` when the layer left none): for a
        plugin's classifier, which reads its own layer's evidence by name."""
        return record_form(self.layers.get(name)) or {}

    @property
    def parse(self) -> ParseEvidence | None:
        return typed(self.layers, "parse", ParseEvidence)

    @property
    def safety(self) -> SafetyEvidence | None:
        return typed(self.layers, "safety", SafetyEvidence)

    @property
    def grounding(self) -> GroundingEvidence | None:
        return typed(self.layers, "grounding", GroundingEvidence)

    @property
    def structure(self) -> StructureEvidence | None:
        return typed(self.layers, "structure", StructureEvidence)

    @property
    def execution(self) -> ExecutionEvidence | None:
        return typed(self.layers, "execution", ExecutionEvidence)

    @property
    def compare(self) -> CompareEvidence | None:
        return typed(self.layers, "compare", CompareEvidence)

    @property
    def variants(self) -> VariantsEvidence | None:
        return typed(self.layers, "variants", VariantsEvidence)

    def record_layers(self) -> dict[str, Any]:
        """Every layer's evidence as the record holds it (``Verdict.layers``)."""
        return {name: record_form(value) for name, value in self.layers.items()}

    @property
    def joins_pred(self) -> dict[str, Any]:
        """The prediction's tables and joins, worked out the first time a classification asks."""
        if self._joins is None:
            from .classify import join_structure
            try:
                self._joins = join_structure(self.tree)
            except Exception:  # a tree the analysis cannot walk: no join evidence
                self._joins = {"tables": [], "joins": []}
        return self._joins


@dataclass
class Adjudication:
    status: str  # passed | failed | undecidable | error
    deterministic_verdict: str  # pass | fail | undecidable | not_executed
    ai_advisory_verdict: str | None
    verdict_consistency_flag: str | None  # consistent | inconsistent | None (no usable judgement)
    decided_by: str  # execution | judge | exact_match | grounding | no_prediction
    error: str | None = None
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Verdict:
    """One graded case: the headline (``passed``, ``status``, ``error_class``) and the
    evidence of every layer that ran, as plain values (``layers``)."""

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
    status: str = "passed"  # passed | failed | undecidable | error (see ``decide``)
    adjudication: Adjudication | None = None
    judgement: Any = None
    case_error: str | None = None
    case_error_kind: str | None = None  # why a case is not graded: unfinished | judge_error | gold_error
    tie_only: bool = False  # a pass that rests only on the gold's tie group (``_tie_verdict``)
    #: each layer's evidence, typed (``layers`` is its record form, for the record and the reports)
    evidence: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def parse_ok(self) -> bool | None:
        """None where nothing was parsed (no prediction): such a case is not in the parse rate."""
        parse = typed(self.evidence or self.layers, "parse", ParseEvidence)
        return None if parse is None else bool(parse.ok)

    @property
    def grounding(self) -> dict[str, Any]:
        return self.layers.get("grounding") or {"ok": None, "hallucinated_tables": [], "hallucinated_columns": []}

    @property
    def severity(self) -> str:
        return severity(self.status, self.failure_kind, self.error_class)

    @property
    def blocked_reason(self) -> str | None:
        return blocked_reason(self.evidence or self.layers)

    @property
    def matched_gold(self) -> dict[str, Any] | None:
        """The gold a pass matched (index, kind, source), as the record's ``matched_gold``:
        of several golds the one ``layers["golds"]`` names; of one gold query, gold 0
        (its source is the caller's). None for anything but a pass."""
        if not self.passed:
            return None
        golds = self.layers.get("golds")
        if isinstance(golds, dict) and golds.get("matched") is not None:
            entry = next((g for g in golds.get("golds", []) if g.get("index") == golds["matched"]), None)
            if entry is not None:
                return {"index": entry["index"], "kind": entry.get("kind", "sql"), "source": entry.get("source")}
        return {"index": 0, "kind": "sql", "source": None}

    def to_dict(self) -> dict[str, Any]:
        return {"pass": self.passed, "status": self.status, "error_class": self.error_class,
                "failure_kind": self.failure_kind, "explanation": self.explanation, "confidence": self.confidence,
                "layers": self.layers, "generated_sql": self.generated_sql, "executed_sql": self.executed_sql,
                "stale_tables": self.stale_tables, "duration_ms": self.duration_ms}


Classifier = Callable[[Evidence], "Classification | None"]
JudgeCall = Callable[[Evidence], Any]  # -> grading.judge.JudgeResult


@dataclass(frozen=True, slots=True)
class Assessment:
    """What the deterministic layers decide before anything is classified or judged:
    whether the candidate passed, why it is not graded (``unfinished``: stopped at its wall
    bound before it spent its limit), and a match that rests on the gold's tie group."""

    passed: bool
    unfinished: str | None = None
    ties: tuple[str, Classification] | None = None


def assess(evidence: Evidence) -> Assessment:
    """The deterministic pass or fail of one candidate: with execution, its result matched,
    it reads nothing deprecated, and no variant of the database disagrees; without, it
    parses, is safe and grounded and reads nothing deprecated (provisional: the judge or
    exact match decides). The pipeline's first step after the layers."""
    if evidence.executed:
        stopped = unfinished(evidence.execution)
        if stopped is not None:  # a verdict either way would be the machine's load, not the prediction's
            return Assessment(False, unfinished=stopped)
    compare, variants = evidence.compare, evidence.variants
    if evidence.executed:
        passed = (compare is not None and compare.match and not evidence.stale
                  and not (variants is not None and variants.mismatch is not None))
    else:  # provisional without execution: parses, is safe and grounded, reads nothing deprecated
        parse, safety, grounding = evidence.parse, evidence.safety, evidence.grounding
        passed = (parse is not None and bool(parse.ok) and (safety is None or safety.ok is not False)
                  and (grounding is None or grounding.ok is not False) and not evidence.stale)
    structure = evidence.structure
    exact = structure is not None and bool(structure.exact_match)  # the gold's own SQL: the database need not tell
    ties = _tie_verdict(compare, variants) if compare is not None and passed and not exact else None
    return Assessment(bool(passed), ties=ties)


def classification(evidence: Evidence, assessment: Assessment, classifier: Classifier | None = None) -> Classification:
    """The pipeline's classify step: what a pass rests on, why a case is not graded, or
    the error class of a failure (``classifier``: the ``pytest_sqleval_classify`` hook in
    a pytest run, where a plugin's class wins; the built-in precedence otherwise)."""
    if assessment.unfinished is not None:
        return Classification(None, "unfinished", assessment.unfinished, 0.0)
    if not assessment.passed:
        return classified_by(classifier, evidence)
    if assessment.ties is not None:
        return assessment.ties[1]
    if not evidence.executed:
        return Classification(None, None, "parses and is grounded; equivalence is for the judge to decide", 0.0)
    compare, variants = evidence.compare, evidence.variants
    graded = variants.graded if variants is not None else 0
    unchecked = variants.error if variants is not None else None  # said, never a silent pass on the database alone
    return Classification(None, None, "result matches the gold answer"
                          + (" within float tolerance" if compare is not None and compare.within_tolerance else "")
                          + (f", on the database and on {graded} variant(s) of it" if graded else "")
                          + (f", on the database only: its check on the variants failed ({unchecked.splitlines()[0][:200]})"
                             if unchecked else ""), 1.0)


def classified_by(classifier: Classifier | None, evidence: Evidence) -> Classification:
    """The error class of a failure: the classifier's (a plugin's, in a pytest run; its class
    should be declared, ``error_classes``), else the built-in precedence."""
    found = classifier(evidence) if classifier is not None else None
    if found is not None:
        declared(getattr(found, "error_class", None))
    return found or classify_evidence(evidence)


def decide(evidence: Evidence, assessment: Assessment, classified: Classification, *, duration_ms: float = 0.0,
           judgement: Any = None, mode: str = "off", classifier: Classifier | None = None) -> Verdict:
    """The verdict of one candidate, once the pipeline has assessed, classified, diagnosed
    and judged it: the judge's part by ``adjudicate``, a failure the judge or exact match
    decided classified again, the ties' and an ambiguous gold's status."""
    evidence.layers["classify"] = classified
    if assessment.unfinished is not None:
        stopped = assessment.unfinished
        return Verdict(False, None, "unfinished", stopped, 0.0, evidence.record_layers(), evidence.sql,
                       evidence.executed_sql,
                       evidence.stale, duration_ms, status="error", case_error=stopped,
                       case_error_kind="unfinished", evidence=dict(evidence.layers))
    cls, passed, ties = classified, assessment.passed, assessment.ties
    adj = adjudicate(passed=passed, executed=evidence.executed, layers=evidence.layers, judgement=judgement, mode=mode)
    if adj.status == "failed" and cls.error_class is None:  # judged different, or not an exact match
        cls = classified_by(classifier, evidence)
        if adj.decided_by == "exact_match" and cls.failure_kind == "judged_different":
            cls = replace(cls, failure_kind="not_exact_match", explanation=cls.explanation.replace(
                "judged different", "not an exact match (no database, no judge)"))
        evidence.layers["classify"] = cls
    kind = "judge_error" if adj.error else None
    if ties is not None and ties[0] == "undecidable":
        adj.status = adj.deterministic_verdict = "undecidable"
    why = _ambiguous_gold(evidence, passed)
    if why is not None:
        adj.status, adj.error, kind = "error", why, "gold_error"
    return Verdict(adj.status == "passed", cls.error_class, cls.failure_kind, cls.explanation, cls.confidence,
                   evidence.record_layers(), evidence.sql, evidence.executed_sql, evidence.stale, duration_ms, status=adj.status,
                   adjudication=adj, judgement=judgement, case_error=adj.error, case_error_kind=kind,
                   tie_only=ties is not None and ties[0] == "tie_only", evidence=dict(evidence.layers))


def _declared_only(classifier: Classifier) -> Callable[[Evidence], Classification]:
    """``classifier``, whose classes must be declared (``error_classes``): an undeclared one
    is an error naming the fix, never a new class by a typo."""
    def classify_(evidence: Evidence) -> Classification:
        cls = classifier(evidence)
        declared(getattr(cls, "error_class", None))
        return cls  # type: ignore[return-value]
    return classify_


# -- ties: what a database whose rows tie cannot tell ----------------------------------------
def _tie_verdict(compare: CompareEvidence, variants: VariantsEvidence | None) -> tuple[str, Classification] | None:
    """A match whose gold's LIMIT cuts through a tie group (``compare.tie_group``): None when
    the prediction returned the gold's own rows and some row ranks outside the group;
    ``undecidable`` when every row the gold ranks is in the group (all airlines tie at 100
    flights: any k of them is the answer, so a query that never counts the flights passes
    as easily), unless a variant of the database where the gold's answer is deterministic
    confirmed the match; ``tie_only`` when the prediction's rows are not the gold's own and
    matched only thanks to the group. A LIMIT without ORDER BY (``unordered``) is never
    undecidable: any k rows of its result are the contract's answer. Not asked for a
    prediction that is the gold's own SQL (the structural diff's exact match)."""
    tg = compare.tie_group or {}
    if not tg:
        return None
    k, group, n = tg.get("limit"), tg.get("group_rows"), tg.get("candidates")
    confirmed = int(variants.graded or 0) if variants is not None else 0
    where = (f"{tg.get('why')}; the prediction gives the answer of another of its {tg.get('choices')} valid "
             "choices of them" if tg.get("nested") else
             f"its LIMIT {k} keeps {k} of the {n} rows of the whole result, which has no ORDER BY" if tg.get("unordered")
             else f"its ORDER BY ... LIMIT {k} cuts through {group} rows tied on its keys, of the {n} rows it ranks")
    if tg.get("all_tied") and not tg.get("unordered") and not confirmed:
        what = (f"{tg.get('why')}, and all {n} rows that subquery ranks tie, so each of its {tg.get('choices')} "
                "choices of them is valid" if tg.get("nested") else
                f"{where}, so every one of them ties and any {k} are a valid answer")
        return "undecidable", Classification(
            None, "undecidable_ties",
            f"undecidable on this database: {what}; a query that does not compute the ranking matches as easily. "
            "Make the top unique in the data (or grade with --sqleval-variants, whose variants may break the tie)",
            0.0)
    if not tg.get("tie_only"):
        return None
    own = "" if tg.get("nested") else "; the prediction returns other tied rows than the gold's own"
    checked = (f"; confirmed on {confirmed} variant(s) of the database where the gold's answer is deterministic"
               if confirmed else "")
    return "tie_only", Classification(
        None, None, f"result matches the gold answer only through its tie group: {where}{own}{checked}",
        1.0 if confirmed else 0.5)


def _ambiguous_gold(evidence: Evidence, passed: bool) -> str | None:
    """Why a mismatch is not graded: the gold's LIMIT below its top level cuts through tied
    rows on this database (``compare.gold_ambiguous``), so another valid choice of them may
    give the prediction's rows. A wrong number or kind of columns stays a fail (no choice
    of rows changes it), and so does every failure before the comparison."""
    compare = evidence.compare
    if passed or not evidence.executed or compare is None or not compare.gold_ambiguous or compare.match \
            or evidence.stale:
        return None
    if compare.reason not in ("row_count", "values", "order_only"):
        return None
    return (f"gold query is ambiguous: {compare.gold_ambiguous}, so its answer depends on tie order and the "
            "prediction's different rows may be another valid answer; not graded. Fix: add a tiebreaker column to "
            "that ORDER BY (or an ORDER BY)")


def no_prediction(reason: str) -> Verdict:
    """The verdict of a case the backend has no answer for (``errors.NoPrediction``): a
    failure, never a case error. A benchmark scores a missing answer as a wrong one (Spider's
    and BIRD's evaluators count it 0), so it counts against pass rate *and* execution
    accuracy, like any wrong answer; an error would take it out of execution accuracy and
    flatter an incomplete predictions file. Its class is ``other`` (it is none of the SQL
    mistakes the classes name), its failure kind ``no_prediction``; no layer ran."""
    cls = Classification("other", "no_prediction", reason, 1.0)
    adj = Adjudication("failed", "fail", None, None, "no_prediction")
    return Verdict(False, cls.error_class, cls.failure_kind, cls.explanation, cls.confidence,
                   {"classify": cls.to_dict()}, "", None, [], 0.0, status="failed", adjudication=adj)


def unfinished(execution: ExecutionEvidence | None) -> str | None:
    """Why an execution stopped at its wall bound before it spent its time limit, or None."""
    err = execution.error if execution is not None else None
    return f"not graded: {err.message}" if err is not None and err.category == "unfinished" else None


# -- the error class: one precedence -------------------------------------------------------
def classify_evidence(evidence: Evidence) -> Classification:
    """The built-in error class of a failed candidate (see ``classify``)."""
    parse = evidence.parse
    assert parse is not None, "a candidate is classified after the parse layer ran"
    return classify(parse=parse, safety=evidence.safety, grounding=evidence.grounding,
                    execution=evidence.execution, compare=evidence.compare, stale=evidence.stale,
                    joins_pred=evidence.joins_pred, joins_gold=evidence.joins_gold, structure=evidence.structure,
                    executed=evidence.executed, variants=evidence.variants, engine=evidence.engine)


def classify(*, parse: ParseEvidence | dict[str, Any], safety: SafetyEvidence | dict[str, Any] | None,
             grounding: GroundingEvidence | dict[str, Any] | None,
             execution: ExecutionEvidence | dict[str, Any] | None, compare: CompareEvidence | dict[str, Any] | None,
             stale: list[str], joins_pred: dict[str, Any], joins_gold: dict[str, Any],
             structure: StructureEvidence | dict[str, Any] | None = None, executed: bool = True,
             variants: VariantsEvidence | dict[str, Any] | None = None, engine: str | None = None) -> Classification:
    """The error class of a failed case, by precedence: a parse error, an unsafe
    statement (refused by the safety layer or by a rule of the engine's sandbox), a
    function the engine does not have (a dialect error), hallucinated_column, stale_table,
    an execution error, then what the result comparison says (or, without execution,
    what the structural diff says: ``judged_different``). Grounding's missing names make
    an execution error a hallucinated_column only where the engine's error can be one:
    a refusal, a missing function or a timeout is its own cause, whatever grounding saw.
    A result that matched on the pinned database but not on a variant of it is classified
    from the comparison on that variant, with the failure kind ``coincidental_pass``.
    Each layer's evidence is its typed value, or its record form (converted here)."""
    layers = {"parse": parse, "safety": safety, "grounding": grounding, "execution": execution, "compare": compare,
              "structure": structure, "variants": variants}
    return _classify(typed(layers, "parse", ParseEvidence) or ParseEvidence(False),
                     typed(layers, "safety", SafetyEvidence), typed(layers, "grounding", GroundingEvidence),
                     typed(layers, "execution", ExecutionEvidence), typed(layers, "compare", CompareEvidence),
                     stale, joins_pred, joins_gold, typed(layers, "structure", StructureEvidence), executed,
                     typed(layers, "variants", VariantsEvidence), engine)


def _classify(parse: ParseEvidence, safety: SafetyEvidence | None, grounding: GroundingEvidence | None,
              execution: ExecutionEvidence | None, compare: CompareEvidence | None, stale: list[str],
              joins_pred: dict[str, Any], joins_gold: dict[str, Any], structure: StructureEvidence | None,
              executed: bool, variants: VariantsEvidence | None, engine: str | None) -> Classification:
    if not parse.ok:
        err = parse.error or {}
        return Classification("other", "parse_error",
                              f"does not parse: {err.get('message')} (line {err.get('line')}, col {err.get('col')})", 0.95)
    if safety is not None and not safety.ok:
        return Classification("other", "unsafe_statement", f"refused as unsafe ({safety.reason}): {safety.detail}", 0.95)
    exec_err = execution.error if execution is not None else None
    if exec_err and exec_err.exception == REFUSED:
        return Classification("other", "unsafe_statement", refusal_text(exec_err, engine), 0.95)
    if exec_err and exec_err.category == "missing_function":
        return Classification("other", "runtime_error:missing_function", missing_function_text(exec_err, engine), 0.95)
    halluc = grounding.hallucinated if grounding is not None else []
    named = ", ".join(f"{h['name']} (line {h.get('line')}, col {h.get('col')})" for h in halluc)
    if exec_err and (exec_err.category in ("missing_column", "missing_table")
                     or (halluc and exec_err.category in NAME_ERRORS)):
        return Classification("hallucinated_column", f"runtime_error:{exec_err.category}",
                              f"references what does not exist: {named or exec_err.message.splitlines()[0]}", 0.95)
    if not executed and halluc:
        return Classification("hallucinated_column", "grounding", f"not in the schema: {named}", 0.9)
    if stale:
        return Classification("stale_table", "deprecated_table", f"reads deprecated table {', '.join(stale)}", 0.9)
    over_cap = execution.over_cap if execution is not None else None
    if exec_err and over_cap:  # more rows than the cap, the gold at most that many: its size decides
        return _over_cap(over_cap, joins_pred, joins_gold)
    if exec_err:
        kind = "timeout" if exec_err.category == "timeout" else f"runtime_error:{exec_err.category}"
        return Classification("other", kind, f"{exec_err.category}: {exec_err.message.splitlines()[0]}", 0.9)
    if not executed:
        return _judged_different(structure)
    if compare is None:
        return Classification("other", "not_compared", "the result could not be compared", 0.3)
    mismatch = variants.mismatch if variants is not None else None
    if compare.match and mismatch is not None:
        return _coincidence(mismatch, joins_pred, joins_gold)
    return _result_differs(compare, joins_pred, joins_gold)


#: runtime error categories a missing name can cause: where grounding found one, the error is about it
NAME_ERRORS = ("missing_column", "missing_table", "unknown_error")
ENGINE_NAMES = {"duckdb": "DuckDB", "sqlite": "SQLite", "postgres": "PostgreSQL"}


def engine_display(engine: str | None) -> str:
    """How a person names the engine: DuckDB, SQLite, PostgreSQL (a plugin's engine by its own name)."""
    return ENGINE_NAMES.get(str(engine), engine or "the engine")


def missing_function_text(error: ExecError, engine: str | None) -> str:
    """The one sentence every report gives for a function the engine does not have."""
    name = error.subject or "a function"
    return f"calls {name}, which {engine_display(engine)} does not have: a dialect error, not a missing column"


def refusal_text(error: ExecError, engine: str | None) -> str:
    """A sandbox rule's refusal, naming the rule (the engine's message after its ``refused (rule): ``)."""
    rule = error.subject or "sandbox rule"
    detail = error.message.split("): ", 1)[-1] if error.message.startswith("refused (") else error.message
    return f"refused by the {engine_display(engine)} sandbox ({rule}): {detail.splitlines()[0]}"


def _coincidence(mismatch: VariantMismatch, joins_pred: dict[str, Any], joins_gold: dict[str, Any]) -> Classification:
    where = f"variant {mismatch.variant} ({mismatch.kind})"
    if mismatch.witnesses:
        where += " (which holds rows the database lacks: " + "; ".join(mismatch.witnesses[:3]) + ")"
    err = mismatch.execution.error if mismatch.execution is not None else None
    if mismatch.compare is None:
        what = f"{err.category}: {err.message.splitlines()[0]}" if err else "no result"
        return Classification("other", "coincidental_pass",
                              f"matches on the database, but not on {where} of it: {what}", 0.8)
    cls = _result_differs(mismatch.compare, joins_pred, joins_gold)
    return Classification(cls.error_class, "coincidental_pass",
                          f"matches on the database by coincidence; on {where} of it: {cls.explanation}", cls.confidence)


def _judged_different(structure: StructureEvidence | None) -> Classification:
    differing = set(structure.differing_clauses if structure is not None else [])
    if {"joins", "from"} & differing:
        return Classification("wrong_join", "judged_different", "judged different; joins differ from the gold", 0.6)
    if {"select", "group_by", "having"} & differing:
        return Classification("wrong_metric", "judged_different", "judged different; measures differ from the gold", 0.5)
    return Classification("other", "judged_different", "judged different from the gold", 0.5)


def _result_differs(compare: CompareEvidence, joins_pred: dict[str, Any], joins_gold: dict[str, Any]) -> Classification:
    reason = compare.reason
    g, p = compare.gold_rows, compare.pred_rows
    if reason == "arity_mismatch":
        found = compare.gold_columns_found_at or {}
        extra = f"; the gold columns appear at positions {sorted(int(v) + 1 for v in found.values())}" if found else ""
        return Classification("other", "projection_mismatch",
                              f"{len(compare.pred_columns)} columns where the gold has {len(compare.gold_columns)}{extra}", 0.85)
    if reason == "type_mismatch":
        diffs = [f"column {i + 1}: {a} vs gold {b}" for i, (a, b) in
                 enumerate(zip(compare.pred_kinds, compare.gold_kinds)) if a != b]
        return Classification("other", "projection_mismatch", "value types differ: " + "; ".join(diffs[:3]), 0.8)
    if reason == "order_only":
        return Classification("other", "order_only", "right rows in the wrong order", 0.9)
    from .classify import join_diff  # sqlglot: loaded when a result differs, not when a run starts
    differs, strong = join_diff(joins_pred, joins_gold)
    grain_kept = any(compare.column_matches or [])
    same_grain = g == p and (grain_kept or g <= 1)
    metric = Classification("wrong_metric", "value_mismatch",
                            f"same {g} rows and grain, different values in column(s) {_bad_columns(compare)}",
                            0.8 if grain_kept else 0.65)
    if same_grain and not strong:
        return metric
    if differs:
        ratio = f"row count {p} vs gold {g} ({p / g:.3g}x)" if g and g != p else f"values differ on {g} rows"
        return Classification("wrong_join", "cardinality_mismatch" if g != p else "value_mismatch",
                              f"{ratio} and {differs}", 0.8 if strong else 0.6)
    if same_grain:
        return metric
    kind = "cardinality_mismatch" if g != p else "value_mismatch"
    return Classification("other", kind, f"row count {p} vs gold {g}; row overlap F1 {compare.row_f1:.2f}", 0.5)


def _over_cap(over: dict[str, Any], joins_pred: dict[str, Any], joins_gold: dict[str, Any]) -> Classification:
    """A result stopped at a cap with more rows read than the gold has (past the row cap,
    or before the byte cap): a cardinality mismatch known from its size,
    classified as ``_result_differs`` classifies one."""
    from .classify import join_diff
    differs, strong = join_diff(joins_pred, joins_gold)
    cap = "the cap" if over.get("by") == "max_rows" else "where reading stopped at the byte cap"
    size = f"returned more than {over['cap']} rows ({cap}); the gold returns {over['gold_rows']}"
    if differs:
        return Classification("wrong_join", "cardinality_mismatch", f"{size}, and {differs}", 0.8 if strong else 0.6)
    return Classification("other", "cardinality_mismatch", size, 0.5)


def _bad_columns(compare: CompareEvidence) -> str:
    bad = [str(i + 1) for i, ok in enumerate(compare.column_matches or []) if not ok]
    return ", ".join(bad) or "?"


# -- the judge's part -----------------------------------------------------------------------
def judge_eligible(layers: Mapping[str, Any]) -> bool:
    """The judge runs only where it can change or annotate something: never on SQL that
    does not parse, is refused, or names what does not exist. ``layers``: each layer's
    evidence, typed or in its record form."""
    parse, safety = typed(layers, "parse", ParseEvidence), typed(layers, "safety", SafetyEvidence)
    if parse is None or not parse.ok or safety is None or not safety.ok:
        return False
    grounding = typed(layers, "grounding", GroundingEvidence)
    return grounding is None or grounding.ok is not False


def judge_evidence(layers: Mapping[str, Any]) -> dict[str, Any]:
    """What the deterministic layers found, compact enough for a prompt (a dict: it goes
    into the prompt as JSON)."""
    ex = typed(layers, "execution", ExecutionEvidence)
    cmp = typed(layers, "compare", CompareEvidence)
    struct = typed(layers, "structure", StructureEvidence)
    cls = layers.get("classify")
    return {
        "executed": layers.get("execution") is not None,
        "execution_error": ex.error.category if ex is not None and ex.error is not None else None,
        "result_match": cmp.match if cmp else None, "compare_reason": cmp.reason if cmp else None,
        "gold_rows": cmp.gold_rows if cmp else None, "predicted_rows": cmp.pred_rows if cmp else None,
        "row_f1": cmp.row_f1 if cmp else None,
        "differing_clauses": struct.differing_clauses if struct else None,
        "exact_match": struct.exact_match if struct else None,
        "deterministic_class": cls.error_class if isinstance(cls, Classification) else (cls or {}).get("error_class"),
    }


def adjudicate(*, passed: bool, executed: bool, layers: Mapping[str, Any], judgement: Any | None,
               mode: str) -> Adjudication:
    ai = judgement.equivalence if judgement is not None else None
    warnings = []
    if judgement is not None and judgement.error:
        warnings.append(f"judge skipped: {judgement.error}")
    if judgement is not None and getattr(judgement, "note", None):
        warnings.append(f"judge: {judgement.note}")
    grounding = typed(layers, "grounding", GroundingEvidence)
    ex = typed(layers, "execution", ExecutionEvidence)
    if executed and ex is not None and ex.ok and grounding is not None and grounding.ok is False:
        names = ", ".join(h["name"] for h in grounding.hallucinated)
        warnings.append(f"grounding flagged {names} but the engine accepted the query")
    if executed:
        det = "pass" if passed else "fail"
        flag = None
        if ai in ACCEPTED or ai == "different":
            flag = "consistent" if (ai in ACCEPTED) == passed else "inconsistent"
        return Adjudication("passed" if passed else "failed", det, ai, flag, "execution", None, warnings)
    if mode == "decide":
        if not passed:  # parse, safety, grounding or a deprecated table already failed it
            return Adjudication("failed", "not_executed", ai, None, "grounding", None, warnings)
        if ai is None or ai == "skipped":
            why = judgement.error if judgement is not None else "no judgement"
            return Adjudication("error", "not_executed", ai, None, "judge", f"the judge gave no verdict: {why}", warnings)
        return Adjudication("passed" if ai in ACCEPTED else "failed", "not_executed", ai, None, "judge", None, warnings)
    structure = typed(layers, "structure", StructureEvidence)
    ok = passed and structure is not None and bool(structure.exact_match)
    return Adjudication("passed" if ok else "failed", "not_executed", ai, None, "exact_match", None, warnings)


# -- how a verdict reads ----------------------------------------------------------------------
def severity(status: str, failure_kind: str | None, error_class: str | None) -> str:
    if status == "error":
        return "error"
    if status == "passed":
        return "none"
    if status == "undecidable":
        return "low"
    if failure_kind in ("unsafe_statement", "timeout"):
        return "critical"
    if error_class in ("hallucinated_column", "stale_table"):
        return "high"
    if failure_kind == "order_only":
        return "low"
    return "medium"


def blocked_reason(layers: Mapping[str, Any]) -> str | None:
    """The layer that stopped the pipeline before a result comparison, if any (``layers``:
    each layer's evidence, typed or in its record form, as ``Verdict.layers`` holds it)."""
    parse = typed(layers, "parse", ParseEvidence)
    if parse is None:  # no layer ran: there was no prediction to grade
        return "no_prediction"
    if not parse.ok:
        return "parse"
    safety = typed(layers, "safety", SafetyEvidence)
    if safety is not None and not safety.ok:
        return f"safety:{safety.reason}"
    ex = typed(layers, "execution", ExecutionEvidence)
    err = ex.error if ex is not None else None
    if err and err.exception == REFUSED:  # a rule of the engine's sandbox, as the safety layer's are named
        return f"sandbox:{err.subject}"
    if err:
        return f"execution:{err.category}"
    return None
