"""The per-case record: a typed ``CaseRecord`` inside, one JSON object at the edges.

Field names follow seed 000 (case_id, question, gold_sql, generated_sql, parse_ok,
grounding_ok, hallucinated_tables, hallucinated_columns, pass, backend,
backend_metadata, schema, complexity, category) plus the execution grader's evidence.

The JSON object (results.jsonl, the json-report's ``metadata.sqleval``, the xdist wire, the
``pytest_sqleval_record_fields`` hook) is made by ``CaseRecord.to_json_dict`` and read by
``CaseRecord.from_json_dict``, nowhere else: a renamed field fails in a type check, not in a
user's run. A layer's evidence (``execution``, ``compare``, ``layers``, ``gold``, ``judge``)
stays the JSON mapping the layer wrote; its types live beside the layer (``core.grading``)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Mapping

#: 2: status ``undecidable``; ``tie_only``; number kinds integer/decimal/float (were integer/number);
#: failure kinds no_prediction, unfinished, undecidable_ties; error ``subject``, ``rows_over``/``cap``
#: 3: several golds per case: ``matched_gold`` (index, kind, source of the gold a pass matched),
#: ``layers.golds`` (each gold tried), ``compare.columns`` / ``column_mapping`` / ``condition_cols``
RECORD_VERSION = 3
KNOWN_VERSIONS = range(1, RECORD_VERSION + 1)  # what ``from_json_dict`` reads; a record without one is taken as current
REQUIRED_KEYS = ("backend", "status")  # what a JSON object must carry to be a case record
EVIDENCE_CHARS = 2000  # characters of one text value in a record's evidence; the cut is stated
READ_FIX = "give sqleval-results/results.jsonl as a run wrote it (one case record per line)"

#: A layer's evidence as the layer wrote it (JSON: texts, numbers, lists, mappings).
Evidence = Mapping[str, Any]


def bounded(value: Any, limit: int = EVIDENCE_CHARS) -> Any:
    """``value`` with every text in it cut to ``limit`` characters, saying so. Result values
    are already bounded where they are previewed (``grading.compare.clip``); this is the
    record's own wall, for evidence a layer or an engine message copied in whole."""
    if isinstance(value, str):
        return value if len(value) <= limit else f"{value[:limit]}… ({len(value):,} characters, truncated)"
    if isinstance(value, (dict, list, tuple)) and not _has_text_over(value, limit):
        return value  # nothing to cut: kept as it is (the record is frozen; nothing edits it)
    if isinstance(value, dict):
        return {k: bounded(v, limit) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [bounded(v, limit) for v in value]
    return value


def _has_text_over(value: Any, limit: int) -> bool:
    """Whether a text in ``value`` is longer than ``limit``: a walk that builds nothing (a
    third of the time of rebuilding), for the usual evidence that has nothing to cut. A
    subclass of a container, or a structure too large (or circular) to walk here, says yes,
    so that ``bounded`` walks it itself."""
    stack = [value]
    steps = 0
    while stack:
        item = stack.pop()
        kind = type(item)
        steps += 1
        if kind is str:
            if len(item) > limit:
                return True
        elif kind is dict:
            stack.extend(item.values())
        elif kind is list or kind is tuple:
            stack.extend(item)
        elif isinstance(item, (str, dict, list, tuple)) or steps > 1_000_000:
            return True
    return False


@dataclass(frozen=True, slots=True)
class GenerationInfo:
    """How the backend's SQL came: from the generation cache or not, how long it took, why it failed."""

    cached: bool | None = None
    elapsed_ms: float | None = None
    error: str | None = None

    def to_json_dict(self) -> dict[str, Any]:
        return {"cached": self.cached, "elapsed_ms": self.elapsed_ms, "error": self.error}

    @classmethod
    def from_json_dict(cls, data: Mapping[str, Any]) -> "GenerationInfo":
        return cls(cached=data.get("cached"), elapsed_ms=data.get("elapsed_ms"), error=data.get("error"))


@dataclass(frozen=True, slots=True)
class StructureMatch:
    """The structure layer's match against the gold SQL (flat in the JSON: ``exact_match``...);
    None where the structure layer did not run."""

    exact_match: bool | None = None
    no_values_exact_match: bool | None = None
    normalized_match: bool | None = None


@dataclass(frozen=True, slots=True)
class Usage:
    """What the backend reported spending on the case (``backend_metadata``: calls, tokens,
    cost, latency, repair rounds); None for a figure it did not report as a finite number."""

    n_llm_calls: float | None = None
    prompt_tokens: float | None = None
    completion_tokens: float | None = None
    total_tokens: float | None = None
    cost_usd: float | None = None
    latency_ms: float | None = None
    repair_rounds: float | None = None

    @classmethod
    def of(cls, metadata: Mapping[str, Any]) -> "Usage":
        return cls(**{name: finite_number(metadata.get(name)) for name in cls.__dataclass_fields__})


def finite_number(value: Any) -> float | None:
    """``value`` as a float when it is a finite int or float (not a bool), else None."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    return float(value) if ok else None


@dataclass(frozen=True, slots=True)
class CaseRecord:
    """One case graded for one backend: what the reports, the gate and results.jsonl read.
    ``passed`` is the JSON's ``pass``; ``structure_match`` its three ``*_match`` fields;
    ``extra`` the fields plugins add (``pytest_sqleval_record_fields``), flat in the JSON."""

    backend: str
    status: str  # passed | failed | undecidable | error
    record_version: int = RECORD_VERSION
    case_id: str = ""
    suite: str | None = None
    nodeid: str = ""
    question: str | None = None
    gold_sql: str | None = None
    generated_sql: str | None = None
    backend_spec: str | None = None
    backend_metadata: Mapping[str, Any] = field(default_factory=dict)
    passed: bool = False
    tie_only: bool = False
    parse_ok: bool | None = None
    grounding_ok: bool | None = None
    hallucinated_tables: tuple[Mapping[str, Any], ...] = ()  # each {"name", "line", "col"}, as grounding found it
    hallucinated_columns: tuple[Mapping[str, Any], ...] = ()
    error_class: str | None = None
    failure_kind: str | None = None
    explanation: str | None = None
    confidence: float | None = None
    severity: str | None = None
    case_error: str | None = None
    deterministic_verdict: str | None = None
    decided_by: str | None = None
    equivalence: str | None = None
    rationale: str | None = None
    ai_advisory_verdict: str | None = None
    verdict_consistency_flag: str | None = None
    judge: Evidence | None = None
    blocked_reason: str | None = None
    warnings: tuple[str, ...] = ()
    structure_match: StructureMatch = StructureMatch()
    stale_tables: tuple[str, ...] = ()
    difficulty: str | None = None
    expected_shape: str | None = None
    complexity: str | None = None
    category: str | None = None
    schema: str | None = None
    tags: tuple[str, ...] = ()
    case_metadata: Mapping[str, Any] = field(default_factory=dict)
    execution: Evidence | None = None
    compare: Evidence | None = None
    layers: Mapping[str, Any] = field(default_factory=dict)  # layer name -> its evidence
    executed_sql: str | None = None
    gold: Evidence | None = None
    generation: GenerationInfo | None = None
    database: str | None = None
    content_hash: str | None = None
    engine: str | None = None
    engine_version: str | None = None
    grading_ms: float | None = None
    run_metadata: Mapping[str, Any] = field(default_factory=dict)
    sidebyside: Evidence | None = None  # BIRD's and Spider's verdicts where ``compare`` has none
    #: the gold a pass matched: ``{"index", "kind", "source"}`` (None: a fail, or a record before version 3)
    matched_gold: Evidence | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    # -- typed views -----------------------------------------------------------------------
    def layer(self, name: str) -> Mapping[str, Any]:
        """A layer's evidence, or an empty mapping where the layer gave none (or something else)."""
        value = self.layers.get(name) if isinstance(self.layers, Mapping) else None
        return value if isinstance(value, Mapping) else {}

    @property
    def alternative_gold(self) -> bool:
        """A pass that matched a gold other than the case's first (several golds' leniency)."""
        return bool(self.passed and self.matched_gold and self.matched_gold.get("index", 0) != 0)

    @property
    def column_policy(self) -> bool:
        """A pass that needed a column policy: a predicted column beyond the gold's, or the
        gold's columns found elsewhere than in place (``columns = "superset"``, ``condition_cols``)."""
        compare = self.compare or {}
        mapping = compare.get("column_mapping")
        if not self.passed or mapping is None:
            return False
        gold_width = len(compare.get("gold_kinds") or ())
        return (list(mapping) != list(range(len(mapping))) or len(compare.get("pred_columns") or ()) != len(mapping)
                or gold_width != len(mapping))

    @property
    def gold_label(self) -> str | None:
        """Which gold the case was graded against, for a report: the gold a pass matched
        ("gold 1 (sql)", "gold 0 (result gold/q1_a.csv)"), "none (nearest: gold 0)" for a
        fail, "+ columns by values" where a column policy mattered; None for a case of one SQL
        gold compared column for column."""
        golds = self.layer("golds")
        compare = self.compare or {}
        by_values = compare.get("column_mapping") is not None
        if not golds and not by_values:
            return None
        if self.passed and self.matched_gold:
            g = self.matched_gold
            label = f"gold {g.get('index')} ({'sql' if g.get('kind') == 'sql' else 'result ' + str(g.get('source'))})"
        elif golds:
            label = f"none (nearest: gold {golds.get('compared')})"
        else:
            label = "none"
        return label + (" + columns by values" if self.column_policy else "")

    @property
    def usage(self) -> Usage:
        """The backend's calls, tokens, cost and latency for this case (typed; from ``backend_metadata``)."""
        return Usage.of(self.backend_metadata)

    # -- the edges -------------------------------------------------------------------------
    def to_json_dict(self) -> dict[str, Any]:
        """The record as results.jsonl holds it (the keys in the order a run has always written them)."""
        out = {
            "record_version": self.record_version, "case_id": self.case_id, "suite": self.suite,
            "nodeid": self.nodeid, "question": self.question, "gold_sql": self.gold_sql,
            "generated_sql": self.generated_sql, "backend": self.backend, "backend_spec": self.backend_spec,
            "backend_metadata": self.backend_metadata, "status": self.status, "pass": self.passed,
            "tie_only": self.tie_only, "parse_ok": self.parse_ok, "grounding_ok": self.grounding_ok,
            "hallucinated_tables": list(self.hallucinated_tables),
            "hallucinated_columns": list(self.hallucinated_columns),
            "error_class": self.error_class, "failure_kind": self.failure_kind, "explanation": self.explanation,
            "confidence": self.confidence, "severity": self.severity, "case_error": self.case_error,
            "deterministic_verdict": self.deterministic_verdict, "decided_by": self.decided_by,
            "equivalence": self.equivalence, "rationale": self.rationale,
            "ai_advisory_verdict": self.ai_advisory_verdict, "verdict_consistency_flag": self.verdict_consistency_flag,
            "judge": self.judge, "blocked_reason": self.blocked_reason, "warnings": list(self.warnings),
            "exact_match": self.structure_match.exact_match,
            "no_values_exact_match": self.structure_match.no_values_exact_match,
            "normalized_match": self.structure_match.normalized_match,
            "stale_tables": list(self.stale_tables), "difficulty": self.difficulty,
            "expected_shape": self.expected_shape, "complexity": self.complexity, "category": self.category,
            "schema": self.schema, "tags": list(self.tags), "case_metadata": self.case_metadata,
            "execution": self.execution, "compare": self.compare, "layers": self.layers,
            "executed_sql": self.executed_sql, "gold": self.gold,
            "generation": self.generation.to_json_dict() if self.generation is not None else None,
            "database": self.database, "content_hash": self.content_hash, "engine": self.engine,
            "engine_version": self.engine_version, "grading_ms": self.grading_ms,
            "run_metadata": self.run_metadata, "sidebyside": self.sidebyside, "matched_gold": self.matched_gold,
        }
        out.update(self.extra)
        return out

    @classmethod
    def from_json_dict(cls, data: Any, *, source: str | Path = "<record>", line: int | None = None,
                       fix: str = READ_FIX) -> "CaseRecord":
        """The record a JSON object holds. A record of a version this release does not read,
        or an object without the required keys, is a ``BadInputError`` naming ``source``
        (the file) and ``line``. Keys the record does not know are a plugin's (``extra``)."""
        from .errors import BadInputError
        if not isinstance(data, Mapping) or any(k not in data for k in REQUIRED_KEYS):
            raise BadInputError(source, "not a case record (no 'backend' or 'status')", line=line, fix=fix)
        version = data.get("record_version", RECORD_VERSION)
        if isinstance(version, bool) or not isinstance(version, int) or version not in KNOWN_VERSIONS:
            raise BadInputError(
                source, f"record version {version!r} is not one this pytest-sqleval reads "
                        f"({KNOWN_VERSIONS.start} to {RECORD_VERSION})", line=line, field="record_version",
                fix="read it with the pytest-sqleval release that wrote it (upgrade pytest-sqleval for a newer "
                    "record), or re-run the suite to write its records again")
        generation = data.get("generation")
        if generation is not None and not isinstance(generation, Mapping):
            raise BadInputError(source, "'generation' is not an object", line=line, field="generation", fix=fix)
        get = data.get
        return cls(
            record_version=version, case_id=get("case_id", ""), suite=get("suite"), nodeid=get("nodeid", ""),
            question=get("question"), gold_sql=get("gold_sql"), generated_sql=get("generated_sql"),
            backend=data["backend"], backend_spec=get("backend_spec"), backend_metadata=_mapping(get("backend_metadata")),
            status=data["status"], passed=get("pass", data["status"] == "passed"), tie_only=get("tie_only", False),
            parse_ok=get("parse_ok"), grounding_ok=get("grounding_ok"),
            hallucinated_tables=_tuple(get("hallucinated_tables")),
            hallucinated_columns=_tuple(get("hallucinated_columns")),
            error_class=get("error_class"), failure_kind=get("failure_kind"), explanation=get("explanation"),
            confidence=get("confidence"), severity=get("severity"), case_error=get("case_error"),
            deterministic_verdict=get("deterministic_verdict"), decided_by=get("decided_by"),
            equivalence=get("equivalence"), rationale=get("rationale"),
            ai_advisory_verdict=get("ai_advisory_verdict"), verdict_consistency_flag=get("verdict_consistency_flag"),
            judge=get("judge"), blocked_reason=get("blocked_reason"), warnings=_tuple(get("warnings")),
            structure_match=StructureMatch(exact_match=get("exact_match"),
                                           no_values_exact_match=get("no_values_exact_match"),
                                           normalized_match=get("normalized_match")),
            stale_tables=_tuple(get("stale_tables")), difficulty=get("difficulty"),
            expected_shape=get("expected_shape"), complexity=get("complexity"), category=get("category"),
            schema=get("schema"), tags=_tuple(get("tags")), case_metadata=_mapping(get("case_metadata")),
            execution=get("execution"), compare=get("compare"), layers=_mapping(get("layers")),
            executed_sql=get("executed_sql"), gold=get("gold"),
            generation=GenerationInfo.from_json_dict(generation) if generation is not None else None,
            database=get("database"), content_hash=get("content_hash"), engine=get("engine"),
            engine_version=get("engine_version"), grading_ms=get("grading_ms"),
            run_metadata=_mapping(get("run_metadata")), sidebyside=get("sidebyside"),
            matched_gold=get("matched_gold"),
            extra={k: v for k, v in data.items() if k not in JSON_KEYS})

    @classmethod
    def of(cls, value: "CaseRecord | Mapping[str, Any]") -> "CaseRecord":
        """``value`` as a record: a ``CaseRecord`` as it is, a JSON object read (``from_json_dict``)."""
        return value if isinstance(value, CaseRecord) else cls.from_json_dict(value)


#: The JSON keys of a record's own fields; any other key is a plugin's (``CaseRecord.extra``).
JSON_KEYS = frozenset(CaseRecord(backend="", status="").to_json_dict())


def as_records(values: Iterable["CaseRecord | Mapping[str, Any]"]) -> list[CaseRecord]:
    """Records given as ``CaseRecord``s or JSON objects (a report's public functions take both)."""
    return [CaseRecord.of(v) for v in values]


GRADED = ("passed", "failed", "undecidable")  # our verdicts; undecidable is graded, not a pass


def peer_verdicts(record: "CaseRecord | Mapping[str, Any]") -> Mapping[str, Any] | None:
    """A record's BIRD and Spider verdicts (``reports.sidebyside`` says where each comes from);
    None when the case has none (an engine error, or a suite graded without execution)."""
    r = CaseRecord.of(record)
    sbs = r.compare.get("sidebyside") if r.compare is not None else r.sidebyside
    if sbs is not None:
        return sbs
    if r.failure_kind == "no_prediction":
        return _wrong(r, {"bird": False, "spider": False, "note": "no prediction for this case: both score it wrong"})
    if r.status in GRADED and r.database:
        return _wrong(r, {"bird": False, "spider": False, "note": "the prediction ran to no result (a runtime error, a "
                                                                  "timeout, a parse error or a refusal): both score it wrong"})
    if r.status == "error" and r.failure_kind == "backend_error":
        return _wrong(r, {"bird": False, "spider": False, "note": "no prediction (the backend failed): both score it wrong"})
    return None


def is_spider2_case(record: CaseRecord) -> bool:
    """A case graded with Spider 2.0's official verdict beside ours (its layout carries the
    standard: spider2-lite's ``spider2_ignore_order``; ``grading.pipeline.spider2_standard``)."""
    return record.case_metadata.get("spider2_ignore_order") is not None


def _wrong(record: CaseRecord, verdicts: dict[str, Any]) -> dict[str, Any]:
    """The peers' verdicts on a prediction without a result: Spider 2.0's too, on its cases
    (its evaluator scores a query that fails or gives nothing as wrong)."""
    return {**verdicts, "spider2": False} if is_spider2_case(record) else verdicts


def _tuple(value: Any) -> tuple[Any, ...]:
    return tuple(value) if isinstance(value, (list, tuple)) else ()


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def build_record(*, case: Any, backend: Any, nodeid: str, suite: dict[str, Any], status: str,
                 generation: Any = None, verdict: Any = None, gold: Any = None, case_error: str | None = None,
                 case_error_kind: str | None = None, sidebyside: Mapping[str, Any] | None = None) -> CaseRecord:
    """``status`` is passed | failed | undecidable | error; an error is never a graded failure,
    and undecidable (the database cannot tell, ``verdict._tie_verdict``) is not a pass. The case's
    inputs (question, SQL texts) and the backend's metadata are kept whole; the evidence is
    bounded (see ``bounded``). ``sidebyside``: BIRD's and Spider's verdicts on a case we do
    not grade; a case with a comparison carries them in ``compare.sidebyside``, one without
    where the grader found them anyway (a result over the row cap, a query Spider's
    evaluator rewrites) in its ``official`` layer, and one whose prediction ran to no
    result otherwise is wrong under both (``peer_verdicts``)."""
    record = _record(case=case, backend=backend, nodeid=nodeid, suite=suite, status=status, generation=generation,
                     verdict=verdict, gold=gold, case_error=case_error, case_error_kind=case_error_kind)
    if sidebyside is None and record.compare is None:  # computed without a comparison of ours (layers.OfficialLayer)
        sidebyside = record.layer("official").get("sidebyside")
        if sidebyside is None:  # the record has none yet: the rules' verdicts on a prediction without a result
            sidebyside = peer_verdicts(record)
        elif "spider2" not in sidebyside and record.status in GRADED and is_spider2_case(record):
            sidebyside = _wrong(record, dict(sidebyside))  # no result of its own (a rewrite, a cap): Spider 2.0 fails it
    return replace(record, sidebyside=sidebyside, explanation=bounded(record.explanation), case_error=bounded(record.case_error),
                   rationale=bounded(record.rationale), judge=bounded(record.judge),
                   warnings=tuple(bounded(list(record.warnings))), execution=bounded(record.execution),
                   compare=bounded(record.compare), layers=bounded(record.layers), gold=bounded(record.gold))


def with_fields(record: CaseRecord, added: list[dict[str, Any] | None]) -> CaseRecord:
    """``record`` with the fields plugins add (``pytest_sqleval_record_fields``); a plugin
    may add fields, never replace the record's own."""
    extra = dict(record.extra)
    for fields in added:
        for key, value in (fields or {}).items():
            if key in JSON_KEYS or key in extra:
                from .errors import UsageError
                raise UsageError(f"a pytest_sqleval_record_fields hook returned {key!r}, a field the record "
                                 "already has; fix: give the plugin's field a name of its own (e.g. prefixed)")
            extra[key] = value
    return replace(record, extra=extra)


def _record(*, case: Any, backend: Any, nodeid: str, suite: dict[str, Any], status: str, generation: Any,
            verdict: Any, gold: Any, case_error: str | None, case_error_kind: str | None) -> CaseRecord:
    from .grading.verdict import severity
    adjudication = verdict.adjudication if verdict is not None else None
    judgement = verdict.judgement if verdict is not None else None
    grounding = verdict.grounding if verdict is not None else {}
    layers = verdict.layers if verdict is not None else {}
    structure = layers.get("structure") or {}
    failure_kind = (verdict.failure_kind if verdict is not None and status != "error" else case_error_kind)
    error_class = verdict.error_class if verdict is not None and status == "failed" else None
    return CaseRecord(
        record_version=RECORD_VERSION,
        case_id=case.id,
        suite=suite.get("name"),
        nodeid=nodeid,
        question=case.question,
        gold_sql=_gold_text(case, gold),
        generated_sql=generation.sql if generation is not None else None,
        backend=backend.label,
        backend_spec=backend.spec,
        backend_metadata={**backend.metadata, **(generation.metadata if generation is not None else {})},
        status=status,
        passed=status == "passed",
        tie_only=bool(verdict is not None and verdict.tie_only and status == "passed"),
        parse_ok=verdict.parse_ok if verdict is not None else None,
        grounding_ok=grounding.get("ok"),
        hallucinated_tables=tuple(grounding.get("hallucinated_tables", [])),
        hallucinated_columns=tuple(grounding.get("hallucinated_columns", [])),
        error_class=error_class,
        failure_kind=failure_kind if status != "passed" else None,
        explanation=case_error if status == "error" else (verdict.explanation if verdict is not None else None),
        confidence=verdict.confidence if verdict is not None else None,
        severity=severity(status, failure_kind, error_class),
        case_error=case_error,
        deterministic_verdict=adjudication.deterministic_verdict if adjudication is not None else None,
        decided_by=adjudication.decided_by if adjudication is not None else None,
        equivalence=judgement.equivalence if judgement is not None else None,
        rationale=judgement.rationale if judgement is not None else None,
        ai_advisory_verdict=adjudication.ai_advisory_verdict if adjudication is not None else None,
        verdict_consistency_flag=adjudication.verdict_consistency_flag if adjudication is not None else None,
        judge=judgement.to_dict() if judgement is not None else None,
        blocked_reason=verdict.blocked_reason if layers else None,
        warnings=tuple(adjudication.warnings) if adjudication is not None else (),
        structure_match=StructureMatch(exact_match=structure.get("exact_match"),
                                       no_values_exact_match=structure.get("no_values_exact_match"),
                                       normalized_match=structure.get("normalized_match")),
        stale_tables=tuple(verdict.stale_tables) if verdict is not None else (),
        difficulty=case.difficulty,
        expected_shape=case.expected_shape,
        complexity=case.complexity,
        category=case.category,
        schema=case.schema,
        tags=tuple(case.tags),
        case_metadata=case.metadata,
        execution=layers.get("execution"),
        compare=layers.get("compare"),
        layers={k: v for k, v in layers.items() if k not in ("execution", "compare")},
        executed_sql=verdict.executed_sql if verdict is not None else None,
        gold=gold.to_dict() if gold is not None else None,
        generation=GenerationInfo(cached=generation.cached, elapsed_ms=generation.elapsed_ms,
                                  error=generation.error) if generation is not None else None,
        database=suite.get("database"),
        content_hash=suite.get("content_hash"),
        engine=suite.get("engine"),
        engine_version=suite.get("engine_version"),
        grading_ms=verdict.duration_ms if verdict is not None else None,
        run_metadata=suite.get("run_metadata", {}),
        matched_gold=_matched_gold(case, layers, gold) if status == "passed" else None,
    )


def _gold_text(case: Any, gold: Any) -> str | None:
    """The gold SQL the case was graded with: its engine's own (``gold_sql_spark``) when
    that replaced the default, else the case's first SQL gold."""
    if gold is not None and getattr(gold, "engine", None) and getattr(gold, "kind", "sql") == "sql":
        return str(gold.source)
    return str(case.gold_sql) if case.gold_sql is not None else None


def _matched_gold(case: Any, layers: Mapping[str, Any], gold: Any = None) -> dict[str, Any] | None:
    """The gold a pass matched, named by index, kind and source (``layers.golds``), else the
    case's one gold (its engine's own, ``engine`` named, when that replaced the default)."""
    engine = getattr(gold, "engine", None)
    golds = layers.get("golds")
    if isinstance(golds, Mapping) and golds.get("matched") is not None:
        entry = next((g for g in golds.get("golds", []) if g.get("index") == golds["matched"]), None)
        if entry is not None:
            return {"index": entry["index"], "kind": entry.get("kind", "sql"), "source": entry.get("source"),
                    **({"engine": engine} if engine else {})}
    first = next(iter(case.golds_for(engine) if engine and hasattr(case, "golds_for")
                      else getattr(case, "golds", ()) or ()), None)
    return first.describe() if first is not None else None
