"""What every layer shares: the ``Candidate`` the layers walk over, the ``Layer`` protocol a
plugin implements (``pytest_sqleval_layers``), and ``run_layer``, which turns a layer's
exception into its evidence.

A layer reads the candidate (its SQL, its parse, the gold answer, the grader's catalog
and engine) and adds its evidence under its name; it decides nothing (``verdict.py``
does, and the pipeline classifies, diagnoses and judges after it)."""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, Protocol, TypeVar, runtime_checkable

from ..budget import Budget
from ..guard import failure_evidence, guarded

if TYPE_CHECKING:  # pragma: no cover
    from ..gold_answer import GoldAnswer
    from ..grounding import CatalogIndex
    from ..parse import ParseResult

__all__ = ["Candidate", "GraderView", "Layer", "LayerFailure", "RecordView", "failure_evidence", "failure_fields", "guarded",
           "record_form", "run_layer", "typed"]


class GraderView(Protocol):
    """What a layer may read of its grader (``pipeline.SuiteGrader``)."""

    dialect: str
    engine_dialect: str
    host: Any  # engines.host.EngineHost, or None without a database
    index: "CatalogIndex | None"
    deprecated: tuple[str, ...]
    variant_set: Any

    def to_engine(self, tree: Any, sql: str) -> str: ...


@dataclass
class Candidate:
    """One predicted query on its way through the layers."""

    sql: str
    gold: "GoldAnswer"
    grader: GraderView
    budget: Budget
    layers: dict[str, Any] = field(default_factory=dict)
    parsed: "ParseResult | None" = None
    stopped: bool = False  # parse or safety refused it: the layers that need a sound query skip it
    stale: list[str] = field(default_factory=list)
    executed_sql: str | None = None
    ticket: Any = None
    sent_at: float = 0.0
    ahead: bool = False  # graded ahead of its turn: the engine may queue it behind the case before
    variants_answer: Any = None  # the variants' results when the engine ran them with the execution
    structure_sent: Any = None  # the gold whose structural diff the engine makes with the execution (SendLayer)

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


class RecordView:
    """Reading a built-in layer's evidence by key, as a plugin did while evidence was a dict
    (``candidate.layers["parse"]["ok"]``): it still answers, from the record form, with a
    ``DeprecationWarning``, for one release; read the attribute (``.ok``) instead."""

    __slots__ = ()

    def _record(self, key: str) -> dict[str, Any]:
        warnings.warn(f"{type(self).__name__} is typed evidence: read .{key} instead of [{key!r}] or .get({key!r}) "
                      "(evidence by key goes in the next release)", DeprecationWarning, stacklevel=3)
        return self.to_dict()  # type: ignore[attr-defined, no-any-return]

    def __getitem__(self, key: str) -> Any:
        return self._record(key)[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self._record(key).get(key, default)


@dataclass(frozen=True, slots=True)
class LayerFailure:
    """The evidence of a layer that raised: what it had left before (its record form) and
    why it stopped (``skipped``, or ``layer_error`` and ``detail``)."""

    failure: dict[str, Any]
    before: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {**self.before, **self.failure}


def record_form(value: Any) -> Any:
    """A layer's evidence as the record holds it: a built-in layer's typed value by its
    ``to_dict``, a plugin layer's own value (a dict) as it is. The one conversion."""
    to_dict = getattr(value, "to_dict", None)
    return to_dict() if callable(to_dict) and not isinstance(value, dict) else value


def failure_fields(evidence: Any) -> dict[str, Any]:
    """The ``skipped`` / ``layer_error`` / ``detail`` fields an evidence value has set."""
    return {k: getattr(evidence, k) for k in ("skipped", "layer_error", "detail") if getattr(evidence, k) is not None}


def run_layer(layer: Layer, c: Candidate) -> None:
    """Run one layer; a layer that cannot cope leaves evidence instead of losing the case."""
    try:
        layer.run(c)
    except Exception as exc:
        before = record_form(c.layers.get(layer.name)) or {}
        c.layers[layer.name] = LayerFailure(failure_evidence(exc), dict(before))


E = TypeVar("E")


def typed(layers: Mapping[str, Any], name: str, kind: type[E]) -> E | None:
    """A built-in layer's evidence, typed: its value, or (a plugin's replacement of the
    layer, a record read back) its record form converted by ``from_record``, where a key
    the type does not have is a ``TypeError``. None where the layer left nothing usable
    (it did not run, or raised: ``layers.LayerFailure``)."""
    value = layers.get(name)
    if isinstance(value, kind):
        return value
    if isinstance(value, dict) and value:
        return kind.from_record(value)  # type: ignore[attr-defined, no-any-return]
    return None
