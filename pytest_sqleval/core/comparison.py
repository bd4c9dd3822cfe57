"""A case's comparison contract (``ComparePolicy``): a value with no reader behind it.

Why a module of its own, below ``core/cases``: the engine process compares under it
(``grading/engine_side.py``) and must not load the case readers (``cases/__init__``
imports the manifest, layouts and readers) for a dataclass; ``cases.model`` re-exports it."""
from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any, Protocol

COLUMN_ORDERS = ("position", "any")  # ComparePolicy.column_order
COLUMN_RULES = ("exact", "superset")  # ComparePolicy.columns


class CaseFields(Protocol):
    """What ``ComparePolicy.for_case`` reads of a case (``cases.model.BenchmarkCase``)."""

    @property
    def metadata(self) -> dict[str, Any]: ...
    @property
    def order_matters(self) -> bool | None: ...
    @property
    def expected_shape(self) -> str | None: ...


@dataclass(frozen=True)
class ComparePolicy:
    """The comparison contract: the one value every comparison of a case reads.

    Made once per case (``for_case``: the suite's ``[compare]``, with its layout's column
    rule, then the case's own overrides) when a suite's cases are read, and carried by the
    case (``BenchmarkCase.policy``); the grader, ``validate``, the variants and the engine
    process all compare under it. Against a gold query it is resolved once (``for_gold``:
    ``order_matters`` decided by the gold's ORDER BY, ``sort_keys`` its key positions) and
    that resolved value is what the ``Comparator`` reads and what crosses to the engine
    process (``to_wire`` / ``from_wire``, the one conversion each way)."""

    order_matters: bool | None = None  # None = ordered iff the gold has a top-level ORDER BY
    float_rel_tol: float = 1e-6
    float_abs_tol: float = 1e-9
    allow_empty: bool = False
    #: the gold's answer may be rows of NULLs only (an aggregate over rows the query does not
    #: match): like an empty answer it passes every prediction that also matches nothing, so
    #: it is only graded as such when declared (``"expected_shape": "null"``); else on the
    #: variants where it has a value, or it is a case error
    allow_null: bool = False
    #: "position": columns by position (our default); "any": the prediction's columns may be
    #: any bijection of the gold's (Spider's convention; the spider layout's default)
    column_order: str = "position"
    #: resolved against a gold (``for_gold``): the gold output positions of its ORDER BY keys,
    #: ties on which compare as bags; None = all columns. Not a ``[compare]`` key.
    sort_keys: tuple[int, ...] | None = None
    #: "exact": the prediction returns the gold's columns, no more, no fewer (our default);
    #: "superset": it may return extra columns, the gold's are found among them by values
    #: (Spider 2.0's and defog's convention)
    columns: str = "exact"
    #: 0-based gold column positions that must be found among the prediction's columns
    #: (by values, names a tie-breaker); the other gold columns are not compared. None: all.
    #: Per case only (Spider 2.0's ``condition_cols``); implies the superset column rule.
    condition_cols: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        if self.sort_keys is not None and not isinstance(self.sort_keys, tuple):
            object.__setattr__(self, "sort_keys", tuple(self.sort_keys))
        if self.condition_cols is not None and not isinstance(self.condition_cols, tuple):
            object.__setattr__(self, "condition_cols", tuple(self.condition_cols))

    @property
    def by_values(self) -> bool:
        """Columns are matched by values (a bipartite assignment, ``compare.match_columns``),
        not by position: ``columns = "superset"`` or a ``condition_cols`` list."""
        return self.columns == "superset" or self.condition_cols is not None

    @property
    def ordered(self) -> bool:
        """Rows compare in order (only ever true once resolved, or when set explicitly)."""
        return self.order_matters is True

    def merged(self, **overrides: Any) -> "ComparePolicy":
        """This policy with each override that is not None (itself when there is none:
        most cases of a suite override nothing)."""
        given = {k: v for k, v in overrides.items() if v is not None}
        return replace(self, **given) if given else self

    def for_case(self, case: CaseFields | None) -> "ComparePolicy":
        """This (suite) policy with one case's overrides: its ``order_matters``, its
        ``"compare"`` tolerances and column rule (checked by ``parse_case``) and
        ``"expected_shape": "empty"`` as ``allow_empty`` (``"null"`` as ``allow_null``). The one builder of a case's policy:
        called when a suite's cases are read (``read_layout_cases``); later code reads
        ``case.policy``, never the case's ``"compare"`` object."""
        if case is None:
            return self
        return self.for_case_fields(case.metadata.get("compare"), case.order_matters, case.expected_shape)

    def for_case_fields(self, compare: Any, order_matters: bool | None, expected_shape: str | None) -> "ComparePolicy":
        """``for_case`` from the case's fields, for the reader that builds the case with it."""
        overrides = compare if isinstance(compare, dict) else {}
        return self.merged(**{**overrides, "order_matters": order_matters,
                              "allow_empty": True if expected_shape == "empty" else None,
                              "allow_null": True if expected_shape == "null" else None})

    def for_gold(self, order: Any) -> "ComparePolicy":
        """This policy resolved against a gold's ordering (``ordering.OrderInfo``):
        ordered as the case says, else as the gold's top-level ORDER BY; tie groups on its
        sort keys when ordered."""
        ordered = order.ordered if self.order_matters is None else self.order_matters
        keys = order.sort_keys if ordered else None
        return replace(self, order_matters=bool(ordered), sort_keys=None if keys is None else tuple(keys))

    def to_wire(self) -> dict[str, Any]:
        """As JSON for the engine process (and the gold key, which hashes it). ``order_matters``
        travels as ``ordered``, and ``column_order``, ``allow_empty`` and ``allow_null`` only when not their
        defaults, so a gold key stays what it was before the policy was one value."""
        wire: dict[str, Any] = {"ordered": self.order_matters,
                                "sort_keys": None if self.sort_keys is None else list(self.sort_keys),
                                "float_rel_tol": self.float_rel_tol, "float_abs_tol": self.float_abs_tol}
        if self.column_order != "position":
            wire["column_order"] = self.column_order
        if self.allow_empty:
            wire["allow_empty"] = True
        if self.allow_null:
            wire["allow_null"] = True
        if self.columns != "exact":
            wire["columns"] = self.columns
        if self.condition_cols is not None:
            wire["condition_cols"] = list(self.condition_cols)
        return wire

    @classmethod
    def from_wire(cls, wire: dict[str, Any]) -> "ComparePolicy":
        """The policy ``to_wire`` wrote."""
        return cls(order_matters=wire["ordered"], sort_keys=wire.get("sort_keys"),
                   float_rel_tol=wire["float_rel_tol"], float_abs_tol=wire["float_abs_tol"],
                   column_order=wire.get("column_order", "position"), allow_empty=bool(wire.get("allow_empty", False)),
                   allow_null=bool(wire.get("allow_null", False)),
                   columns=wire.get("columns", "exact"), condition_cols=wire.get("condition_cols"))


#: what a suite's ``[compare]`` and the library API's keywords may set (``sort_keys`` is
#: resolved per gold, never set); ``condition_cols`` names one case's gold columns, so a
#: manifest's ``[compare]`` refuses it (``manifest.py``)
COMPARE_SETTINGS = tuple(f.name for f in fields(ComparePolicy) if f.name != "sort_keys")
