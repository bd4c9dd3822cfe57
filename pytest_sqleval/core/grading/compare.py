"""Result comparison under the comparison contract, vectorised with numpy over Arrow.

Columns by position (names ignored, arity must match); rows as a multiset, or in order
with tie groups on the gold's sort keys compared as bags; numbers numerically, two exact
ones (integers, decimals) exactly and within a relative/absolute tolerance where a side is
a float; a string never equals a number, a date never equals a timestamp; NULL equals
NULL and nothing else, NaN only NaN.

How: both results become one stack of canonical columns, the gold's rows then the
prediction's (``_Stack``). Identical rows are brought together by sorting on a 64-bit
row hash, and every such grouping is then checked value by value, so a hash collision
costs time, never a wrong verdict. Within tolerance, rows are first paired inside
"cells" (numbers whose bit patterns agree above a tolerance-sized shift, which makes
them close), then what is left by sorting both sides alike, and up to ``MATCH_ROWS``
rows a side by an exact bipartite matching. Every pairing found is checked pair by pair,
so a tolerant "equal" is always shown by a pairing; up to ``MATCH_ROWS`` rows a side
"not equal" means no pairing exists, beyond that that none of the pairings tried holds.

No SQL runs on the way, as a DuckDB round trip per step cost milliseconds where a whole
comparison of a few rows now costs well under one. A private DuckDB only casts the rare
column types numpy cannot hold (lists, structs, intervals...) to text, as before.
"""
from __future__ import annotations

import collections
import datetime as _dt
import decimal
import functools
import itertools
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.types as pat

from ..comparison import ComparePolicy

PREVIEW_ROWS = 5
PREVIEW_CHARS = 200  # characters of one text value in a report; the rest is cut, and the cut said
PREVIEW_ITEMS = 20  # items of one list value in a report
GID_COLUMN = "__sqleval_gid"  # a stored gold's tie-group ids, appended as its last column
HASH_ROWS = 4096  # rows of both sides above which identical rows are grouped by hash, not by sorting values
CELL_ROWS = 2048  # rows a side from which tolerance first pairs rows within cells
MATCH_ROWS = 128  # rows a side up to which tolerance falls back to an exact bipartite matching
LOCATE_ROWS = 200_000  # arity mismatch: gold columns are looked for in the prediction up to this size
COARSE_SHIFT = 39  # bits of a double dropped to sort on about four significant digits

_SEED = np.uint64(0x243F6A8885A308D3)
_K1 = np.uint64(0x9E3779B97F4A7C15)
_K2 = np.uint64(0xBF58476D1CE4E5B9)
_K3 = np.uint64(0x94D049BB133111EB)


def CompareSpec(ordered: bool = False, sort_keys: Iterable[int] | None = None, float_rel_tol: float = 1e-6,
                float_abs_tol: float = 1e-9, column_order: str = "position") -> ComparePolicy:
    """A resolved ``ComparePolicy`` spelled as the comparator reads it: ``ordered`` (rows in
    order), ``sort_keys`` (gold positions of the ORDER BY keys; None = all columns), the
    tolerances and the column rule. A shorthand for tests and callers of ``Comparator``
    alone; a case's policy is made by ``ComparePolicy.for_case`` and ``for_gold``."""
    return ComparePolicy(order_matters=bool(ordered), sort_keys=None if sort_keys is None else tuple(sort_keys),
                         float_rel_tol=float_rel_tol, float_abs_tol=float_abs_tol, column_order=column_order)


MAX_COLUMN_PERMUTATIONS = 5040  # column bijections tried under column_order = "any" (7 interchangeable columns)
EVIDENCE_BIJECTION_ROWS = 100_000  # by position, whether a bijection would match is looked for up to this size


@dataclass
class CompareResult:
    """Everything the comparison learned; ``match`` is the verdict."""

    match: bool
    reason: str  # equal | arity_mismatch | type_mismatch | row_count | values | order_only
    gold_rows: int
    pred_rows: int
    gold_columns: list[str]
    pred_columns: list[str]
    gold_kinds: list[str]
    pred_kinds: list[str]
    ordered: bool = False
    order_only: bool = False
    within_tolerance: bool = False  # equal only thanks to float tolerance
    row_precision: float = 0.0
    row_recall: float = 0.0
    row_f1: float = 0.0
    cell_overlap: float = 0.0
    column_matches: list[bool] = field(default_factory=list)  # per gold column: same multiset in pred
    gold_columns_found_at: dict[int, int] = field(default_factory=dict)  # gold pos -> pred pos (arity mismatch)
    cardinality_delta: int = 0
    cardinality_ratio: float | None = None
    schema_match: bool = False
    missing_rows: list[list[Any]] = field(default_factory=list)  # in gold, not in prediction
    extra_rows: list[list[Any]] = field(default_factory=list)  # in prediction, not in gold
    first_diff: dict[str, Any] | None = None  # ordered: first differing position
    tie_group: dict[str, Any] | None = None  # a LIMIT that cuts a tie group: how it was graded (compare_topk)
    column_order: str = "position"  # the contract's column rule this verdict was made under
    column_permutation: list[int] | None = None  # "any": gold position -> predicted column that matched
    other_column_order: dict[str, Any] | None = None  # the other column rule's verdict, when it differs
    columns: str = "exact"  # the column rule: "exact", or "superset" (columns matched by values)
    #: by values (``columns = "superset"`` or ``condition_cols``): per gold column compared
    #: (``condition_cols``, else all), the predicted column it was matched with (None: none found)
    column_mapping: list[int | None] | None = None
    condition_cols: list[int] | None = None  # the gold columns compared, when the case names them

    def to_dict(self) -> dict[str, Any]:
        """Its fields as plain data. Each field's container is copied, not deep-copied
        (``asdict`` deep-copied every row: 3 % of a Spider case's CPU time): the
        result owns its values and is not used after this."""
        own = self.__dict__
        d = {name: own[name] for name in _RESULT_FIELDS}
        for name, value in d.items():
            if isinstance(value, list):
                d[name] = list(value)
            elif isinstance(value, dict):
                d[name] = dict(value)
        d["gold_columns_found_at"] = {str(k): v for k, v in self.gold_columns_found_at.items()}
        return d


_RESULT_FIELDS = tuple(f.name for f in fields(CompareResult))  # in order: read once, not per result


NUMBERS = ("integer", "decimal", "float")  # compare with each other by value: integers and decimals exactly


def kind_of(t: pa.DataType) -> str:
    """The comparison class of an Arrow type: values of different kinds never compare equal,
    but for numbers (``NUMBERS``), whose kind says whether they are exact."""
    if pat.is_null(t):
        return "null"
    if pat.is_boolean(t):
        return "boolean"
    if pat.is_integer(t):
        return "integer"
    if pat.is_decimal(t):
        return "decimal"
    if pat.is_floating(t):
        return "float"
    if pat.is_string(t) or pat.is_large_string(t) or (hasattr(pat, "is_string_view") and pat.is_string_view(t)):
        return "string"
    if pat.is_date(t):
        return "date"
    if pat.is_timestamp(t):
        return "timestamptz" if t.tz else "timestamp"
    if pat.is_time(t):
        return "time"
    return str(t)


def _compatible(a: str, b: str) -> bool:
    return a == b or "null" in (a, b) or (a in NUMBERS and b in NUMBERS)


def jsonable(v: Any) -> Any:
    """A value as it appears in reports: ISO-8601 for temporals, numbers stay numbers."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, decimal.Decimal):  # a double where it shows the same number, else exact
        if not v.is_finite():
            return str(v)
        integral = v == v.to_integral_value()
        exponent = v.as_tuple().exponent
        assert isinstance(exponent, int)  # finite (above): not 'n', 'N' or 'F'
        if (integral or -exponent < 16) and decimal.Decimal(repr(float(v))) == v:
            return float(v)
        return int(v) if integral else str(v)
    if isinstance(v, (_dt.datetime, _dt.date, _dt.time)):
        return v.isoformat()
    if isinstance(v, bytes):
        return v.hex()
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): jsonable(x) for k, x in v.items()}
    return str(v)


def python_values(col: pa.ChunkedArray | pa.Array) -> list[Any]:
    """A column's values as the Python objects a DB-API driver returns, for previews,
    records and the side-by-side rules. A temporal Python cannot hold becomes text:
    DuckDB's ``'infinity'`` and ``'-infinity'`` dates and timestamps (the largest and
    smallest value of their storage) as ``'infinity'`` / ``'-infinity'``, so infinity
    equals infinity and never a finite date; any other (a year past 9999) as Arrow writes it."""
    try:
        values: list[Any] = col.to_pylist()
        return values
    except (OverflowError, ValueError, pa.ArrowInvalid):
        pass
    out: list[Any] = []
    for scalar in col:
        try:
            out.append(scalar.as_py())
        except (OverflowError, ValueError, pa.ArrowInvalid):
            out.append(_beyond_python(scalar))
    return out


READ_KEPT = 4  # small results whose Python values are kept (table_values): a request's prediction and gold
_read: collections.OrderedDict[int, tuple[pa.Table, list[list[Any]], bool]] = collections.OrderedDict()


def table_values(table: pa.Table) -> tuple[list[list[Any]], bool]:
    """A result's columns as ``python_values`` gives them, and whether every value came as
    Python holds it (no temporal beyond Python made text). Why kept: one request reads its
    prediction's values three times (the comparison, the preview, the peers' rules) and
    its gold's (the same table object, request after request) once more. A result of at
    most ``SMALL_ROWS`` rows is read once and kept by identity among the last
    ``READ_KEPT`` read; readers must not change the lists."""
    if table.num_rows > SMALL_ROWS:
        return _read_columns(table)
    got = _read.get(id(table))
    if got is not None and got[0] is table:
        _read.move_to_end(id(table))
        return got[1], got[2]
    cols, exact = _read_columns(table)
    _read[id(table)] = (table, cols, exact)
    if len(_read) > READ_KEPT:
        _read.popitem(last=False)
    return cols, exact


def _read_columns(table: pa.Table) -> tuple[list[list[Any]], bool]:
    cols, exact = [], True
    for col in table.columns:
        try:
            cols.append(col.to_pylist())
        except (OverflowError, ValueError, pa.ArrowInvalid):
            cols.append(python_values(col))
            exact = False
    return cols, exact


def _beyond_python(scalar: pa.Scalar) -> str:
    t = scalar.type
    one = pa.array([scalar], type=t)
    if pat.is_date32(t) or pat.is_date64(t) or pat.is_timestamp(t):
        storage = one.view(pa.int32() if pat.is_date32(t) else pa.int64())[0].as_py()
        if abs(storage) == (2**31 - 1 if pat.is_date32(t) else 2**63 - 1):
            return "infinity" if storage > 0 else "-infinity"
    try:
        return str(pc.cast(one, pa.string())[0].as_py())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return f"<{t} beyond Python's range>"


def preview_rows(table: pa.Table, n: int = PREVIEW_ROWS) -> list[list[Any]]:
    """The first ``n`` rows of a result as they appear in reports (see ``jsonable``), each
    value bounded (see ``clip``)."""
    if table.num_rows <= n:  # the whole result: its values as the comparison read them
        return _report_rows(table, table_values(table)[0])
    return _report_rows(table.slice(0, n))


def clip(v: Any) -> Any:
    """A report value bounded in size: text past ``PREVIEW_CHARS`` characters is cut and says
    so (``'xxx… (10,485,760 characters, truncated)'``), a list past ``PREVIEW_ITEMS`` items
    likewise. Every value copied into a record, a preview or a failure text goes through it,
    so a result of huge values costs a bounded report."""
    if isinstance(v, str):
        if len(v) <= PREVIEW_CHARS:
            return v
        return f"{v[:PREVIEW_CHARS]}… ({len(v):,} characters, truncated)"
    if isinstance(v, list):
        head = [clip(x) for x in v[:PREVIEW_ITEMS]]
        return head + [f"… ({len(v):,} items, truncated)"] if len(v) > PREVIEW_ITEMS else head
    if isinstance(v, dict):
        items = list(v.items())
        out = {k: clip(x) for k, x in items[:PREVIEW_ITEMS]}
        if len(items) > PREVIEW_ITEMS:
            out["…"] = f"{len(items):,} keys, truncated"
        return out
    return v


def _report_rows(rows: pa.Table, read: list[list[Any]] | None = None) -> list[list[Any]]:
    """Rows for a report, bounded: long text and binary values are cut in Arrow before they
    become Python objects (five 10 MB strings never cost 50 MB of copies), then ``clip``.
    ``read``: the rows' columns as ``python_values``, when read already."""
    if not rows.num_columns:
        return [[] for _ in range(rows.num_rows)]
    cols = []
    for i, (t, col) in enumerate(zip(rows.schema.types, rows.columns)):
        text = _bounded(t)
        if text is not None and len(col) and \
                col.nbytes > (PREVIEW_CHARS if text else PREVIEW_CHARS // 2):  # else no value can be over the limit
            lengths = (pc.utf8_length(col) if text else pc.binary_length(col)).to_pylist()
            limit = PREVIEW_CHARS if text else PREVIEW_CHARS // 2  # binary shows as hex, two characters a byte
            head = pc.utf8_slice_codeunits(col, 0, limit) if text else pc.binary_slice(col, 0, limit)
            heads = [jsonable(x) for x in python_values(head)]
            cols.append([x if n is None or n <= limit else
                         f"{x}… ({n:,} {'characters' if text else 'bytes'}, truncated)"
                         for x, n in zip(heads, lengths)])
        else:
            cols.append([clip(jsonable(x)) for x in (python_values(col) if read is None else read[i])])
    return [list(r) for r in zip(*cols)]


@functools.lru_cache(maxsize=512)
def _bounded(t: pa.DataType) -> bool | None:
    """Whether a report cuts values of type ``t`` in Arrow: True for text, False for binary, None: no."""
    if pat.is_string(t) or pat.is_large_string(t):
        return True
    return False if pat.is_binary(t) or pat.is_large_binary(t) else None


class Comparator:
    """Compares results under the contract. Owns a private in-memory DuckDB (no external
    access, opened on first use) that only casts column types numpy cannot hold to text."""

    def __init__(self, threads: int = 2) -> None:
        self.threads = threads

    @cached_property
    def con(self) -> duckdb.DuckDBPyConnection:
        return duckdb.connect(":memory:", config={"enable_external_access": False, "threads": self.threads,
                                                  "autoload_known_extensions": False})

    def _cast(self, col: pa.ChunkedArray, sql_type: str) -> pa.ChunkedArray:
        """``col`` cast by DuckDB, for the types Arrow cannot cast (the old canonical forms)."""
        self.con.register("__col", pa.table({"c": col}))
        try:
            return self.con.sql(f"SELECT CAST(c AS {sql_type}) FROM __col").to_arrow_table().column(0)
        finally:
            self.con.unregister("__col")

    def tie_groups(self, table: pa.Table, key_positions: list[int]) -> pa.Array:
        """Group id per row, from 1: consecutive rows with equal sort keys share one."""
        keys = table.select(key_positions)
        kinds = [kind_of(f.type) for f in keys.schema]
        st = _Stack.build(keys, keys.slice(0, 0), kinds, kinds, self._cast)
        return _int64_array(_breaks(st, np.arange(st.ng)).cumsum())

    def compare(self, gold: pa.Table, pred: pa.Table, spec: ComparePolicy) -> CompareResult:
        """The verdict under ``spec``'s column rule, with the other rule's verdict recorded
        when it differs: by position, whether a bijection of the columns would have matched;
        under ``any``, that the match needed one (``column_permutation``). Columns matched by
        values (``spec.by_values``): ``by_values``. A gold read from a file with inferred
        types first reads the prediction's text columns as those types (``coerce_to_file_gold``)."""
        pred = coerce_to_file_gold(gold, pred, self._cast)
        if spec.by_values:
            return small_by_values(gold, pred, spec) or self.by_values(
                gold, pred, spec, self._small_first)
        return self._each_column_order(gold, pred, spec, self._small_first)

    def _small_first(self, gold: pa.Table, pred: pa.Table, spec: ComparePolicy) -> CompareResult:
        """``_compare``'s result, found on Python values when the results are small (``small_compare``)."""
        return small_compare(gold, pred, spec) or self._compare(gold, pred, spec)

    def by_values(self, gold: pa.Table, pred: pa.Table, spec: ComparePolicy,
                  compare: Callable[[pa.Table, pa.Table, ComparePolicy], CompareResult]) -> CompareResult:
        """Columns matched by values (``columns = "superset"``, ``condition_cols``): each gold
        column compared (the ``condition_cols``, else all) is given a distinct predicted
        column by a bipartite assignment over column signatures (``match_columns``), and the
        chosen mapping is then checked by ``compare`` by position, so the verdict is the
        ordinary contract's on those columns. Polynomial: no permutation is ever tried. When
        that check fails and some gold column had several candidates, the candidates are
        narrowed by the joint values of the columns already settled and assigned once more."""
        gid_at = gold.num_columns - 1 if gold.num_columns and gold.column_names[-1] == GID_COLUMN else None
        width = gid_at if gid_at is not None else gold.num_columns
        wanted = list(spec.condition_cols) if spec.condition_cols is not None else list(range(width))
        wanted = [i for i in wanted if i < width]  # a named column the gold lacks: refused at collection / gold time
        plain = gold.select(wanted)
        keys = None if spec.sort_keys is None else tuple(wanted.index(k) for k in spec.sort_keys if k in wanted)
        positional = replace(spec, columns="exact", condition_cols=None, column_order="position",
                             sort_keys=keys or None if spec.sort_keys is not None else None)
        side = gold.select(wanted + ([gid_at] if gid_at is not None else []))
        names = {n.casefold(): j for j, n in reversed(list(enumerate(pred.column_names)))}
        guess = [names.get(n.casefold()) for n in plain.column_names]  # the gold's names, checked first: what
        if None not in guess and len(set(guess)) == len(guess):        # most predictions return, at one comparison
            res = compare(side, pred.select(guess), positional)
            if res.match:
                return _by_values_result(res, spec, guess, pred)
        mapping, candidates = match_columns(plain, pred, spec, self._cast, positions=wanted)
        found = [j for j in mapping if j is not None]
        if len(found) < len(wanted):
            # the rest by name, else position: checked exactly like any mapping (a top-k through a
            # tie group may hold other values than the gold's own k rows); else the evidence of a mismatch
            filled = _fill_by_name(plain, pred, mapping)
            res = compare(side, pred.select(filled) if filled is not None else pred, positional)
            if filled is not None and res.match:
                mapping = list(filled)
            else:
                res.match = False
                res.reason = "arity_mismatch" if filled is None or res.reason == "equal" else res.reason
                res.column_matches = [j is not None for j in mapping]
                res.gold_columns_found_at = {i: j for i, j in enumerate(mapping) if j is not None}
        else:
            res = compare(side, pred.select(found), positional)
            if not res.match and any(len(c) > 1 for c in candidates):
                again = refine_columns(plain, pred, mapping, candidates, positional, self._compare)
                if again is not None and again != mapping:
                    retry = compare(side, pred.select(again), positional)
                    if retry.match:
                        res, mapping = retry, list(again)
        return _by_values_result(res, spec, mapping, pred)

    def _each_column_order(self, gold: pa.Table, pred: pa.Table, spec: ComparePolicy,
                           compare: Callable[[pa.Table, pa.Table, ComparePolicy], CompareResult],
                           prune: bool = True) -> CompareResult:
        """``compare(gold, pred, spec)`` by position, then (when that fails) under each
        bijection of the columns that can hold: the first that matches decides under
        ``any``, and is recorded as the other rule's verdict under ``position``."""
        res = compare(gold, pred, spec)
        res.column_order = spec.column_order
        if res.match or res.reason == "arity_mismatch" or (
                spec.column_order == "position" and gold.num_rows > EVIDENCE_BIJECTION_ROWS):
            return res  # evidence only, by position: not worth more than the comparison itself
        for perm in self._bijections(gold, pred, spec, prune, res.column_matches):
            alt = compare(gold, pred.select(perm), spec)
            if not alt.match:
                continue
            if spec.column_order == "position":
                res.other_column_order = {"column_order": "any", "match": True, "column_permutation": perm}
                return res
            alt.column_order, alt.column_permutation = "any", perm
            alt.pred_columns = [pred.column_names[j] for j in perm]
            alt.other_column_order = {"column_order": "position", "match": False, "reason": res.reason}
            return alt
        return res

    def _bijections(self, gold: pa.Table, pred: pa.Table, spec: ComparePolicy, prune: bool = True,
                    in_place: list[bool] | None = None) -> list[list[int]]:
        """The column bijections other than the identity under which the results may be
        equal: each gold column paired with a predicted one of a compatible kind, holding
        the same values as a multiset (within tolerance) when ``prune`` (not for a top-k
        through ties, whose columns need not be the gold's own). Empty past
        ``MAX_COLUMN_PERMUTATIONS`` candidates (then only the identity is tried), or as soon
        as a column has no partner: the columns that do not match in place
        (``in_place``, the comparison's ``column_matches``) are paired first, so a value
        that is simply wrong costs one column's search."""
        plain = gold.drop_columns([GID_COLUMN]) if GID_COLUMN in gold.column_names else gold
        n = plain.num_columns
        if n < 2 or pred.num_columns != n or plain.num_rows != pred.num_rows:
            return []
        gk = [kind_of(f.type) for f in plain.schema]
        pk = [kind_of(f.type) for f in pred.schema]
        rows = plain.num_rows
        gold_rows, pred_rows = np.arange(rows), np.arange(rows, 2 * rows)

        def same_values(i: int, j: int) -> bool:
            small = small_same_bag(plain.column(i), pred.column(j), spec) if rows <= SMALL_ROWS else None
            if small is not None:
                return small
            return (plain.column(i).null_count == pred.column(j).null_count and _encode(
                plain.column(i), pred.column(j), gk[i], pk[j], self._cast).same_bag(gold_rows, pred_rows, spec))
        cand: list[list[int]] = [[] for _ in range(n)]
        first = sorted(range(n), key=lambda i: bool(in_place[i]) if in_place and i < len(in_place) else True)
        for i in first:
            cand[i] = [j for j in range(n) if _compatible(gk[i], pk[j]) and (not prune or same_values(i, j))]
            if not cand[i]:
                return []
        if math.prod(len(c) for c in cand) > MAX_COLUMN_PERMUTATIONS:
            return []
        return [list(p) for p in itertools.product(*cand) if len(set(p)) == n and list(p) != list(range(n))]

    def _compare(self, gold: pa.Table, pred: pa.Table, spec: ComparePolicy) -> CompareResult:
        gid = None
        if gold.num_columns and gold.column_names[-1] == GID_COLUMN:  # tie groups stored with the gold
            gid = numpy_numbers(pc.cast(gold.column(gold.num_columns - 1), pa.int64()))
            gold = gold.drop_columns([GID_COLUMN])
        gk = [kind_of(f.type) for f in gold.schema]
        pk = [kind_of(f.type) for f in pred.schema]
        res = CompareResult(match=False, reason="equal", gold_rows=gold.num_rows, pred_rows=pred.num_rows,
                            gold_columns=gold.column_names, pred_columns=pred.column_names,
                            gold_kinds=gk, pred_kinds=pk, ordered=spec.ordered,
                            cardinality_delta=pred.num_rows - gold.num_rows,
                            cardinality_ratio=(pred.num_rows / gold.num_rows) if gold.num_rows else None)
        res.schema_match = len(gk) == len(pk) and all(_compatible(a, b) for a, b in zip(gk, pk))
        if gold.schema.types == pred.schema.types and _renamed(gold).equals(_renamed(pred)):
            # identical, row for row: equal under every mode
            res.match = True
            res.row_precision = res.row_recall = res.row_f1 = res.cell_overlap = 1.0
            res.column_matches = [True] * len(gk)
            return res
        if not res.schema_match:
            if len(gk) != len(pk):
                res.reason = "arity_mismatch"
                res.gold_columns_found_at = self._locate_columns(gold, pred, gk, pk)
                res.column_matches = [i in res.gold_columns_found_at for i in range(len(gk))]
            else:
                res.reason = "type_mismatch"
                res.column_matches = [False] * len(gk)
            _overlap(res, None)
            res.missing_rows = _rows_at(gold, np.arange(min(PREVIEW_ROWS, gold.num_rows)))
            res.extra_rows = _rows_at(pred, np.arange(min(PREVIEW_ROWS, pred.num_rows)))
            return res

        st = _Stack.build(gold, pred, gk, pk, self._cast)
        same_n = st.ng == st.npred
        bag_equal = st.bag_equal()
        if not bag_equal and same_n and st.tolerant:
            bag_equal = res.within_tolerance = _tolerant(st, spec)
        if not bag_equal:
            missing, extra = st.diff
            res.column_matches = st.column_matches(spec)
            _overlap(res, (len(missing), len(extra)))
            res.reason = "row_count" if not same_n else "values"
            res.missing_rows = _rows_at(gold, np.sort(missing)[:PREVIEW_ROWS])
            res.extra_rows = _rows_at(pred, np.sort(extra)[:PREVIEW_ROWS] - st.ng)
            return res
        res.column_matches = [True] * len(gk)
        _overlap(res, (0, 0))
        if spec.ordered:
            bad = _first_out_of_order(st, spec, gid)
            if bad is not None:
                res.reason, res.order_only = "order_only", True
                res.first_diff = {"position": bad, "gold": _rows_at(gold, [bad])[0],
                                  "predicted": _rows_at(pred, [bad])[0] if bad < pred.num_rows else None}
                return res
        res.match, res.reason = True, "equal"
        return res

    def compare_topk(self, gold: pa.Table, group: pa.Table, before: int, pred: pa.Table,
                     spec: ComparePolicy, *, candidates: int | None = None, unordered: bool = False) -> CompareResult:
        """A gold whose ``ORDER BY ... LIMIT k`` cuts through a tie group, where any valid
        top-k is correct: the prediction must hold the gold's ``before`` rows ahead of the
        tie group, plus ``k - before`` rows of the whole tie group ``group`` (every row tied
        with the gold's last one, from the gold run without its LIMIT), in an order the
        gold's ORDER BY allows. The rows it took from the group are chosen to match it
        (exactly, else within tolerance by a matching), and the comparison is then the
        ordinary one against the gold made of those rows; when no choice fits, the
        evidence is the comparison with the gold's own k rows.

        ``tie_group`` records the evidence: ``tie_only`` when the prediction matched only
        through the group (its rows are not the gold's own k), ``candidates`` (the rows the
        gold without its LIMIT ranks) and ``all_tied`` when the group is every one of them, so
        the database cannot tell a right top-k from any other k rows. ``unordered``: a LIMIT
        without ORDER BY, whose group is the whole result."""
        info: dict[str, Any] = {"limit": gold.num_rows, "before": before, "group_rows": group.num_rows,
                                "from_group": gold.num_rows - before, "candidates": candidates,
                                "all_tied": candidates is not None and before == 0 and group.num_rows == candidates}
        if unordered:
            info["unordered"] = True
        if spec.by_values:  # the gold's columns found among the prediction's, the tie group cut alike
            width = gold.num_columns - (1 if gold.column_names[-1] == GID_COLUMN else 0)
            wanted = [i for i in (spec.condition_cols or range(width)) if i < width]
            part = group.select(wanted)
            return self.by_values(gold, pred, spec, lambda g, p, sp: self._topk(g, part, before, p, sp, info))
        return self._each_column_order(gold, pred, spec, lambda g, p, sp: self._topk(g, group, before, p, sp, info),
                                       prune=False)

    def _topk(self, gold: pa.Table, group: pa.Table, before: int, pred: pa.Table, spec: ComparePolicy,
              info: dict[str, Any]) -> CompareResult:
        k = gold.num_rows
        strict = self._compare(gold, pred, spec)
        strict.tie_group = {**info, "tie_only": False}
        if strict.match or not strict.schema_match or pred.num_rows != k or GID_COLUMN not in gold.column_names:
            return strict
        gid = gold.column(GID_COLUMN)
        plain = gold.drop_columns([GID_COLUMN])
        try:
            full = pa.concat_tables([plain.slice(0, before), _renamed(group).rename_columns(plain.column_names)],
                                    promote_options="permissive")
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
            return strict
        fk = [kind_of(f.type) for f in full.schema]
        pk = [kind_of(f.type) for f in pred.schema]
        if not all(_compatible(a, b) for a, b in zip(fk, pk)):
            return strict
        st = _Stack.build(full, pred, fk, pk, self._cast)
        missing, extra = st.diff
        if (missing < before).any():
            return strict  # a row ahead of the tie group is missing (or another took its place)
        chosen = np.setdiff1d(np.arange(before, st.ng), missing)
        if len(extra):
            spare = np.sort(missing)
            owner = _matching(st, np.sort(extra), spare, spec) if st.tolerant and len(extra) <= MATCH_ROWS else None
            if owner is None:
                return strict  # a row from outside the tie group
            chosen = np.concatenate((chosen, spare[owner]))
        rows = np.concatenate((np.arange(before), np.sort(chosen)))
        expected = full.take(_int64_array(rows)).rename_columns(plain.column_names)
        tie_gid = gid.slice(before, 1).to_pylist()[0] if before < k else None
        gids = pa.array(gid.slice(0, before).to_pylist() + [tie_gid] * (k - before), gid.type)
        result = self._compare(expected.append_column(GID_COLUMN, gids), pred, spec)
        result.tie_group = {**info, "chosen": True, "tie_only": result.match}
        return result

    def _locate_columns(self, gold: pa.Table, pred: pa.Table, gk: list[str], pk: list[str]) -> dict[int, int]:
        """With an arity mismatch, which gold columns appear (as a multiset) in the prediction."""
        found: dict[int, int] = {}
        n = gold.num_rows
        if n != pred.num_rows or n > LOCATE_ROWS:
            return found
        for i, a in enumerate(gk):
            for j, b in enumerate(pk):
                if j in found.values() or not _compatible(a, b):
                    continue
                one = _encode(gold.column(i), pred.column(j), a, b, self._cast)
                if one.same_bag(np.arange(n), np.arange(n, 2 * n), None):
                    found[i] = j
                    break
        return found


# -- columns by values --------------------------------------------------------------------------
def _signature(col: pa.ChunkedArray, kind: str, rows: int) -> tuple[str, int, Any, Any]:
    """What a column's values are as a multiset, cheap to compare: its class (``null`` for a
    column of NULLs only; ``number`` for every number kind), its NULL count, its sorted
    non-NULL values (Python values: ints and Decimals compare exactly, strings, dates and
    timestamps by value) and, for a number column holding a float, those values as doubles
    (compared within tolerance)."""
    nulls = col.null_count
    if kind == "null" or nulls == rows:
        return ("null", rows, None, None)
    values = [v for v in python_values(col) if v is not None]
    try:
        ordered = tuple(sorted(values))
    except TypeError:  # values Python cannot order (nested, mixed): by their text
        ordered = tuple(sorted(repr(v) for v in values))
    if kind in NUMBERS:  # a float column's values as doubles, for a comparison within tolerance
        floats = (np.sort(np.array([float(v) for v in values], dtype=np.float64)) if kind == "float"
                  and len(values) > SMALL_ROWS else () if kind == "float" else None)
        return ("number", nulls, ordered, floats)
    return (kind, nulls, ordered, None)


def _same_values(g: tuple[str, int, Any, Any], p: tuple[str, int, Any, Any], spec: ComparePolicy) -> bool:
    if g[0] != p[0] or g[1] != p[1]:
        return False
    if g[0] == "null" or g[2] == p[2]:  # Python's equality is the contract's within one class (1 == 1.0)
        return True
    if (g[3] is None and p[3] is None) or len(g[2]) != len(p[2]):  # both exact, or not as many values
        return False
    # in one dimension a pairing within tolerance exists iff the sorted values pair in order
    rel, tol = spec.float_rel_tol, spec.float_abs_tol
    if len(g[2]) <= SMALL_ROWS:
        return all(a == b or (a != a and b != b) or abs(a - b) <= tol + rel * max(abs(a), abs(b))
                   for a, b in zip(sorted(map(float, g[2])), sorted(map(float, p[2]))))
    a = g[3] if g[3] is not None else np.array([float(v) for v in g[2]], dtype=np.float64)
    b = p[3] if p[3] is not None else np.array([float(v) for v in p[2]], dtype=np.float64)
    return bool(np.all((a == b) | np.isclose(a, b, rtol=rel, atol=tol) | (np.isnan(a) & np.isnan(b))))


def match_columns(gold: pa.Table, pred: pa.Table, spec: ComparePolicy, cast: Any = None,
                  positions: list[int] | None = None) -> tuple[list[int | None], list[list[int]]]:
    """For each gold column, a distinct predicted column holding the same values as a
    multiset (within tolerance where a float is involved): a maximum bipartite matching
    (augmenting paths, O(columns^3) at worst) over the candidate pairs each column's
    signature allows (``_signature``: class, NULL count, sorted values). Names break ties:
    a gold column tries the predicted column of its own name first (case-insensitive), then
    the one at its position (``positions``: each column's place in the whole gold, when
    ``gold`` holds some of its columns), then the rest in order. Returns the mapping (None:
    no partner) and each gold column's candidates."""
    rows = gold.num_rows
    if pred.num_rows != rows:
        return [None] * gold.num_columns, [[] for _ in range(gold.num_columns)]
    gsig = [_signature(c, kind_of(f.type), rows) for c, f in zip(gold.columns, gold.schema)]
    psig = [_signature(c, kind_of(f.type), rows) for c, f in zip(pred.columns, pred.schema)]
    pnames = [n.casefold() for n in pred.column_names]
    candidates: list[list[int]] = []
    for i, (name, sig) in enumerate(zip(gold.column_names, gsig)):
        same = [j for j, other in enumerate(psig) if _same_values(sig, other, spec)]
        at = positions[i] if positions is not None else i
        same.sort(key=lambda j: (pnames[j] != name.casefold(), j != at, j))
        candidates.append(same)
    return _assign(candidates, pred.num_columns), candidates


def _assign(candidates: list[list[int]], n_pred: int) -> list[int | None]:
    """A maximum matching of gold columns to predicted ones (Kuhn's augmenting paths), each
    gold column trying its candidates in their order of preference."""
    owner: list[int | None] = [None] * n_pred

    def augment(i: int, seen: list[bool]) -> bool:
        for j in candidates[i]:
            if seen[j]:
                continue
            seen[j] = True
            current = owner[j]
            if current is None or augment(current, seen):
                owner[j] = i
                return True
        return False
    for start in range(len(candidates)):
        augment(start, [False] * n_pred)
    mapping: list[int | None] = [None] * len(candidates)
    for j, gold_col in enumerate(owner):
        if gold_col is not None:
            mapping[gold_col] = j
    return mapping


def _codes_of(col: pa.ChunkedArray) -> np.ndarray:
    """Each row's value as its rank among the column's distinct values (NULL: 0, values from
    1): two columns holding the same multiset give each value the same code, so rows can be
    compared across the two results without comparing the values again."""
    values = python_values(col)
    present = [v for v in values if v is not None]
    try:
        distinct = sorted(set(present))
    except TypeError:
        distinct = sorted(set(map(repr, present)))
        values = [None if v is None else repr(v) for v in values]
    rank = {v: k + 1 for k, v in enumerate(distinct)}
    return np.array([0 if v is None else rank[v] for v in values], dtype=np.uint64)


MAX_NARROWINGS = 512  # settling steps refine_columns may take for one comparison


def refine_columns(gold: pa.Table, pred: pa.Table, mapping: list[int | None], candidates: list[list[int]],
                   spec: ComparePolicy, compare: Callable[[pa.Table, pa.Table, ComparePolicy], CompareResult]
                   ) -> list[int | None] | None:
    """When the mapping the signatures chose fails the exact check because some gold columns
    had several candidates (columns holding the same multiset of values): keep a candidate
    only if, beside the settled columns (the anchors), it holds the gold's rows as a
    multiset, as far as the value codes (``_codes_of``) tell; settle what that leaves with
    one candidate, and repeat. Without an anchor, each candidate of the most constrained
    column is tried as one. Each check sorts one column of row codes: O(columns^3 x rows) at
    worst, never a permutation. A code collision can only keep a wrong candidate, never
    drop the right one, and ``compare`` checks the mapping found. None: nothing better."""
    bag = replace(spec, order_matters=False, sort_keys=None)
    gcodes = [_codes_of(c) for c in gold.columns]
    wanted = sorted({j for c in candidates for j in c})
    pmatrix = np.zeros((pred.num_columns, gold.num_rows), dtype=np.uint64)  # one row of codes per column
    for j in wanted:
        pmatrix[j] = _codes_of(pred.column(j))

    def row_keys(codes: list[np.ndarray]) -> np.ndarray:
        h = np.full(gold.num_rows, _SEED, dtype=np.uint64)
        with np.errstate(over="ignore"):
            for c in codes:
                h = (h ^ c) * _K1
                h ^= h >> np.uint64(31)
        return h

    def narrow(anchors: dict[int, int]) -> list[list[int]] | None:
        options = [list(c) for c in candidates]
        while True:
            used = set(anchors.values())  # a settled predicted column is no other gold column's partner
            options = [[anchors[i]] if i in anchors else [j for j in c if j not in used] for i, c in enumerate(options)]
            if not all(options):
                return None
            ga, pa_ = row_keys([gcodes[i] for i in anchors]), row_keys([pmatrix[j] for j in anchors.values()])
            with np.errstate(over="ignore"):
                for i, c in enumerate(options):
                    if i in anchors or len(c) <= 1:
                        continue
                    want = np.sort((ga ^ gcodes[i]) * _K2)
                    got = np.sort((pa_ ^ pmatrix[c]) * _K2, axis=1)  # every candidate at once
                    options[i] = [j for j, same in zip(c, (got == want).all(axis=1)) if same]
                    if not options[i]:
                        return None  # a gold column left without a partner: not this way
            fresh = {i: c[0] for i, c in enumerate(options) if len(c) == 1 and i not in anchors}
            if not fresh:
                return options
            anchors = {**anchors, **fresh}

    def checked(options: list[list[int]]) -> list[int | None] | None:
        again = _assign(options, pred.num_columns)
        if any(j is None for j in again) or again == mapping:
            return None
        return again if compare(gold, pred.select([j for j in again if j is not None]), bag).match else None

    informative = [len(np.unique(c)) > 1 for c in gcodes]  # a constant column pairs alike with any look-alike
    budget = [MAX_NARROWINGS]

    def open_columns(options: list[list[int]]) -> list[int]:
        return [i for i, c in enumerate(options) if len(c) > 1 and informative[i]]

    def complete(options: list[list[int]] | None) -> list[int | None] | None:
        """Settle the open columns one at a time, each with its first option that leaves
        every column a partner (greedy: no backtracking below the first level)."""
        while options is not None and open_columns(options) and budget[0] > 0:
            current = options  # a name the key function can close over, never None
            pivot = min(open_columns(current), key=lambda i: len(current[i]))
            anchors = {i: c[0] for i, c in enumerate(options) if len(c) == 1}
            for j in options[pivot]:
                budget[0] -= 1
                trial = narrow({**anchors, pivot: j})
                if trial is not None:
                    options = trial
                    break
            else:
                return None
        return checked(options) if options is not None else None

    settled = {i: c[0] for i, c in enumerate(candidates) if len(c) == 1}
    options = narrow(settled)
    if options is None or not open_columns(options):
        return checked(options) if options is not None else None
    # the first open column's options are each tried in turn (one level of backtracking), the
    # rest settled greedily: at most columns^2 narrowings, never a permutation
    pivot = min(open_columns(options), key=lambda i: len(options[i]))
    for j in options[pivot]:
        found = complete(narrow({**settled, pivot: j}))
        if found is not None:
            return found
    return None


def _by_values_result(res: CompareResult, spec: ComparePolicy, mapping: list[int | None] | list[int],
                      pred: pa.Table) -> CompareResult:
    res.columns = spec.columns
    res.column_mapping = list(mapping)
    res.condition_cols = list(spec.condition_cols) if spec.condition_cols is not None else None
    res.pred_columns = list(pred.column_names)
    return res


def _fill_by_name(gold: pa.Table, pred: pa.Table, mapping: list[int | None]) -> list[int] | None:
    """A full mapping for the evidence of a mismatch: the columns found by values, the others
    by name, else by position among the predicted columns left; None if too few are left."""
    used = {j for j in mapping if j is not None}
    free = [j for j in range(pred.num_columns) if j not in used]
    names = [n.casefold() for n in pred.column_names]
    out: list[int] = []
    for i, j in enumerate(mapping):
        if j is None:
            if not free:
                return None
            by_name = [k for k in free if names[k] == gold.column_names[i].casefold()]
            j = by_name[0] if by_name else (i if i in free else free[0])
            free.remove(j)
        out.append(j)
    return out


def coerce_to_file_gold(gold: pa.Table, pred: pa.Table, cast: Any) -> pa.Table:
    """A prediction read against a gold from a result file whose types were inferred
    (``cases.result_files``): a predicted text column is read as the inferred type of a
    gold column when every value converts (a CSV cannot tell a DATE from its text, nor
    SQLite a date from a string), the column paired by position first, else the first
    inferred kind it converts to. Anything else is left as it is."""
    from ..cases.result_files import inferred_columns
    inferred = inferred_columns(gold)
    if not inferred:
        return pred
    gold_kinds = {i: kind_of(gold.schema.field(i).type) for i in inferred}
    wanted = {i: gold.schema.field(i).type for i in inferred if gold_kinds[i] not in ("string", "null")}
    if not wanted:
        return pred
    columns = list(pred.columns)
    changed = False
    for j, field_ in enumerate(pred.schema):
        if kind_of(field_.type) != "string":
            continue
        if j < gold.num_columns and j not in wanted and kind_of(gold.schema.field(j).type) == "string":
            continue  # paired with a text column of the gold: text it stays
        order = ([j] if j in wanted else []) + [i for i in wanted if i != j]
        for i in order:
            try:
                converted = pc.cast(pred.column(j), wanted[i])
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
                continue
            if converted.null_count == pred.column(j).null_count:
                columns[j], changed = converted, True
                break
    return pa.table(columns, names=pred.column_names) if changed else pred


# -- the canonical stack -----------------------------------------------------------------------
SMALL_ROWS = 20  # rows a side up to which a match is first looked for among Python values (small_match): a
#                 miss then costs the general path about 0.07 ms more at 5 rows (0.15 ms at 50, hence 20)
_SMALL_TYPES = (pat.is_null, pat.is_boolean, pat.is_integer, pat.is_floating, pat.is_string, pat.is_large_string,
                pat.is_date32)
_SMALL_MATCH_TYPES = (*_SMALL_TYPES, pat.is_decimal)  # small_match's: decimals too, Python's Decimal is exact


def small_match(gold: pa.Table, pred: pa.Table, spec: ComparePolicy) -> CompareResult | None:
    """The result of a match of two small results, found without the general path's
    fixed costs (a few hundred microseconds of Arrow and numpy set-up per comparison);
    None whenever it is not shown here, and the general path decides. Shown only where
    Python's equality of the values implies the contract's: one kind per column on both
    sides (integers with numbers), of the types listed above and decimals (no temporals
    other than dates, nested values), the same rows as a multiset (in the same order when
    ordered). Python's ``1 == 1.0`` is the contract's too, and so is ``Decimal('1.50') ==
    Decimal('1.5')`` and ``Decimal('2.00') == 2`` (decimals and integers: exact, as ``_exact``); a decimal
    beside a float is left to the general path, whose double of a long decimal may be a
    tolerance away (its evidence says so). A NaN, never equal to itself here, falls to the
    general path; the kinds keep a string from a number."""
    return _small(gold, pred, spec, mismatches=False)


def small_compare(gold: pa.Table, pred: pa.Table, spec: ComparePolicy) -> CompareResult | None:
    """``Comparator._compare``'s result on two small results (at most ``SMALL_ROWS`` rows a
    side): ``small_match``'s match, or a mismatch of values or row count found on the same
    Python values, evidence and all (``_small_mismatch``); None: the general path decides."""
    return _small(gold, pred, spec, mismatches=True)


def _small(gold: pa.Table, pred: pa.Table, spec: ComparePolicy, mismatches: bool) -> CompareResult | None:
    n, rows, other, whole = gold.num_columns, gold.num_rows, pred.num_rows, gold
    if not n or max(rows, other) > SMALL_ROWS or (rows != other and not mismatches):
        return None
    if gold.column_names[-1] == GID_COLUMN:  # tie groups stored with the gold: only the order check reads them
        gold, n = gold.drop_columns([GID_COLUMN]), n - 1
    if not n or pred.num_columns != n:
        return None
    gk, pk = _small_kinds(gold.schema.types, _SMALL_MATCH_TYPES), _small_kinds(pred.schema.types, _SMALL_MATCH_TYPES)
    if gk is None or pk is None:
        return None
    as_they_come = all(_python_equal(a, b) for a, b in zip(gk, pk))
    if not as_they_come and not (mismatches and all(_compatible(a, b) for a, b in zip(gk, pk))):
        return None  # a decimal beside a float: only its double (``_small_canonical``) is the contract's
    (cols_g, exact_g), (cols_p, exact_p) = table_values(whole), table_values(pred)
    if not (exact_g and exact_p):  # a value Python cannot hold (DuckDB's infinite dates)
        return None
    cols_g = cols_g[:n]  # not the tie groups
    if as_they_come:
        rows_g, rows_p = list(zip(*cols_g)), list(zip(*cols_p))
        if rows_g == rows_p or (not spec.ordered and rows == other
                                and collections.Counter(rows_g) == collections.Counter(rows_p)):
            # equal hashes are not trusted: a Counter compares its keys with ==
            return _small_equal(gold, pred, spec, gk, pk)
    return _small_mismatch(gold, pred, spec, gk, pk, cols_g, cols_p) if mismatches else None


def _small_equal(gold: pa.Table, pred: pa.Table, spec: ComparePolicy, gk: list[str], pk: list[str],
                 within_tolerance: bool = False) -> CompareResult:
    """The general path's match of two results of ``gold.num_rows`` rows each."""
    rows = gold.num_rows
    return CompareResult(match=True, reason="equal", gold_rows=rows, pred_rows=rows, gold_columns=gold.column_names,
                         pred_columns=pred.column_names, gold_kinds=gk, pred_kinds=pk, ordered=spec.ordered,
                         within_tolerance=within_tolerance, row_precision=1.0, row_recall=1.0, row_f1=1.0,
                         cell_overlap=1.0, column_matches=[True] * len(gk), cardinality_delta=0,
                         cardinality_ratio=1.0 if rows else None, schema_match=True, column_order=spec.column_order)


def small_same_bag(g: pa.ChunkedArray, p: pa.ChunkedArray, spec: ComparePolicy) -> bool | None:
    """Whether two small columns of compatible kinds hold the same values as multisets, on
    Python values: exactly (a ``Counter``, where Python's equality is the contract's), or
    with a float on either side, as ``_Col.same_bag`` decides it, the same NULL count and
    the sorted doubles within tolerance (``_small_close``); None for other types, and
    ``_encode`` decides."""
    a, b = _small_kind(g.type, _SMALL_MATCH_TYPES), _small_kind(p.type, _SMALL_MATCH_TYPES)
    if a is None or b is None or not _compatible(a, b):
        return None
    try:
        if _common_kind(a, b) != "float":
            return collections.Counter(g.to_pylist()) == collections.Counter(p.to_pylist())
        x, y = _small_doubles(g), _small_doubles(p)
    except (OverflowError, ValueError, pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    return x is not None and y is not None and _small_bag_close(x, y, spec)


def _small_mismatch(gold: pa.Table, pred: pa.Table, spec: ComparePolicy, gk: list[str], pk: list[str],
                    cols_g: list[list[Any]], cols_p: list[list[Any]]) -> CompareResult | None:
    """The general path's comparison of rows that are not the same multiset as they come,
    from Python values (``_small_canonical``: each column as ``_encode`` compares it). Its
    exact multiset difference (within each group of equal rows, the first rows of one side
    pair with the other side's, the rest are left over, in row order); with a float column
    and as many rows a side, ``_tolerant``'s verdict (``_small_tolerant``); then a match
    within tolerance, or the mismatch: each column's ``column_matches`` (``_small_columns``),
    the overlap and the evidence rows. None where no reported text may be long enough for
    a report to cut it in Arrow (``_report_rows``), for a cast the small path does not make,
    and for rows equal (exactly or within tolerance) in another order when ordered: the
    general path's order check decides."""
    floats = [_common_kind(a, b) == "float" for a, b in zip(gk, pk)]
    can_g, can_p = _small_canonical(gold, cols_g, floats), _small_canonical(pred, cols_p, floats)
    if can_g is None or can_p is None:
        return None
    rows_g, rows_p = list(zip(*can_g)), list(zip(*can_p))
    count_g, count_p = collections.Counter(rows_g), collections.Counter(rows_p)
    if count_g == count_p:  # the same rows once NaN is NaN and every number a double where a float is
        return _small_equal(gold, pred, spec, gk, pk) if rows_g == rows_p or not spec.ordered else None

    def left_over(side: list[tuple[Any, ...]], other: collections.Counter[tuple[Any, ...]]) -> list[int]:
        seen: collections.Counter[tuple[Any, ...]] = collections.Counter()
        out = []
        for i, row in enumerate(side):
            seen[row] += 1
            if seen[row] > other[row]:
                out.append(i)
        return out
    missing, extra = left_over(rows_g, count_p), left_over(rows_p, count_g)
    ng, npred = len(rows_g), len(rows_p)
    matches = None
    if any(floats) and ng == npred:
        within, matches = _small_tolerant(can_g, can_p, floats, rows_g, rows_p, missing, extra, spec)
        if within:
            return None if spec.ordered else _small_equal(gold, pred, spec, gk, pk, within_tolerance=True)
    shown_g = [[c[i] for c in cols_g] for i in missing[:PREVIEW_ROWS]]
    shown_p = [[c[i] for c in cols_p] for i in extra[:PREVIEW_ROWS]]
    if any(isinstance(v, str) and len(v) > PREVIEW_CHARS for row in shown_g + shown_p for v in row):
        return None
    res = CompareResult(match=False, reason="values" if ng == npred else "row_count", gold_rows=ng, pred_rows=npred,
                        gold_columns=gold.column_names, pred_columns=pred.column_names, gold_kinds=gk, pred_kinds=pk,
                        ordered=spec.ordered, cardinality_delta=npred - ng,
                        cardinality_ratio=(npred / ng) if ng else None, schema_match=True,
                        column_matches=matches or _small_columns(can_g, can_p, floats, missing, extra, spec),
                        missing_rows=[[clip(jsonable(v)) for v in row] for row in shown_g],
                        extra_rows=[[clip(jsonable(v)) for v in row] for row in shown_p])
    _overlap(res, (len(missing), len(extra)))
    return res


_NAN = math.nan  # every NaN of a small float column, as one object: containers compare an object as equal to itself


def _small_canonical(table: pa.Table, cols: list[list[Any]], floats: list[bool]) -> list[list[Any]] | None:
    """A small result's columns as ``_encode`` compares them: where a float is on either side
    (``floats``), doubles (``_small_doubles``), every NaN the one ``_NAN`` (so NaN equals NaN,
    and -0.0 already equals 0.0); the rest as they come. None: a cast the small path leaves to DuckDB."""
    out = []
    for col, values, inexact in zip(table.columns, cols, floats):
        if inexact:
            doubles = values if pat.is_float64(col.type) or pat.is_null(col.type) else _small_doubles(col)
            if doubles is None:
                return None
            values = [_NAN if v != v else v for v in doubles]
        out.append(values)
    return out


def _small_doubles(col: pa.ChunkedArray) -> list[Any] | None:
    """A small column of numbers as the doubles ``_encode`` compares (Arrow's unchecked cast,
    the same call), None for NULL; None when Arrow cannot cast it (``_encode`` asks DuckDB)."""
    try:
        doubles = col if pat.is_float64(col.type) or pat.is_null(col.type) else pc.cast(col, pa.float64(), safe=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    values: list[Any] = doubles.to_pylist()
    return values


def _small_close(xs: list[Any], ys: list[Any], spec: ComparePolicy, grid: bool = False) -> np.ndarray:
    """``_Col.close`` on two lists of doubles (None: NULL), pair by pair, or (``grid``) every
    value of ``xs`` against every value of ``ys``: NULL only with NULL, else ``within_tolerance``."""
    x = np.array([0.0 if v is None else v for v in xs], np.float64)
    y = np.array([0.0 if v is None else v for v in ys], np.float64)
    nx, ny = np.array([v is None for v in xs], bool), np.array([v is None for v in ys], bool)
    if grid:
        x, nx, y, ny = x[:, None], nx[:, None], y[None, :], ny[None, :]
    close: np.ndarray = within_tolerance(x, y, spec) & (nx == ny)
    return close


def _small_bag_close(xs: list[Any], ys: list[Any], spec: ComparePolicy) -> bool:
    """``_Col.same_bag`` within tolerance on two lists of doubles: as many values and NULLs,
    and the values sorted alike (NaN last) paired in order within tolerance."""
    x = [v for v in xs if v is not None]
    y = [v for v in ys if v is not None]
    return len(xs) == len(ys) and len(x) == len(y) and bool(within_tolerance(
        np.sort(np.array(x, np.float64)), np.sort(np.array(y, np.float64)), spec).all())


def _small_order(row: tuple[Any, ...]) -> tuple[Any, ...]:
    """A row's sort key as ``_Col.sort_keys`` orders it, column by column: NULL last, NaN after any number."""
    return tuple((v is None, v != v, 0 if v is None or v != v else v) for v in row)


def _small_tolerant(can_g: list[list[Any]], can_p: list[list[Any]], floats: list[bool], rows_g: list[tuple[Any, ...]],
                    rows_p: list[tuple[Any, ...]], missing: list[int], extra: list[int],
                    spec: ComparePolicy) -> tuple[bool, list[bool] | None]:
    """``_tolerant`` on small results (fewer rows than ``MATCH_ROWS``), in its order: the
    rows left over by the exact difference sorted alike and paired in order (``_pairs``);
    else each column's ``column_matches``; if every column pairs up on its own, an exact
    matching of all the rows within tolerance (``_assignment``). Returns the verdict and the
    column matches when they were needed."""
    a = sorted((rows_g[i] for i in missing), key=_small_order)
    b = sorted((rows_p[i] for i in extra), key=_small_order)
    if all(_small_close([r[c] for r in a], [r[c] for r in b], spec).all() if inexact
           else all(x[c] == y[c] for x, y in zip(a, b)) for c, inexact in enumerate(floats)):
        return True, None
    matches = _small_columns(can_g, can_p, floats, missing, extra, spec)
    if not all(matches):
        return False, matches
    close = np.ones((len(rows_g), len(rows_p)), bool)
    for g, p, inexact in zip(can_g, can_p, floats):
        if inexact:
            close &= _small_close(g, p, spec, grid=True)
        else:  # one code per distinct value (Python's ==, as the Counters above)
            codes: dict[Any, int] = {}
            cg = np.array([codes.setdefault(v, len(codes)) for v in g], np.int64)
            cp = np.array([codes.setdefault(v, len(codes)) for v in p], np.int64)
            close &= cg[:, None] == cp[None, :]
    return _assignment(close) is not None, matches


def _small_columns(can_g: list[list[Any]], can_p: list[list[Any]], floats: list[bool], missing: list[int],
                   extra: list[int], spec: ComparePolicy) -> list[bool]:
    """``_Stack.column_matches`` on small results: per column, the rows left over by the
    exact difference hold the same values on both sides, or (a float column) the whole
    columns are the same multiset within tolerance (``_small_bag_close``: as many rows a side)."""
    return [collections.Counter(g[i] for i in missing) == collections.Counter(p[i] for i in extra)
            or (inexact and _small_bag_close(g, p, spec)) for g, p, inexact in zip(can_g, can_p, floats)]


@functools.lru_cache(maxsize=512)
def _small_kind(t: pa.DataType, tests: tuple[Callable[[pa.DataType], bool], ...] = _SMALL_TYPES) -> str | None:
    """``kind_of(t)`` for the types a small path reads as Python values (``tests``), else None."""
    return kind_of(t) if any(test(t) for test in tests) else None


def _small_kinds(types: list[pa.DataType],
                 tests: tuple[Callable[[pa.DataType], bool], ...] = _SMALL_TYPES) -> list[str] | None:
    """Each type's ``_small_kind``; None if one has none."""
    kinds = [_small_kind(t, tests) for t in types]
    return None if None in kinds else [k for k in kinds if k is not None]


def _python_equal(a: str, b: str) -> bool:
    """Whether Python's ``==`` between values of small kinds ``a`` and ``b`` shows the
    contract's equality, evidence and all: one kind, numbers but a decimal beside a float,
    or a NULL-only column beside any kind (only NULLs equal it, and Python agrees)."""
    return a == b or "null" in (a, b) or (a in NUMBERS and b in NUMBERS and {a, b} != {"decimal", "float"})


def small_by_values(gold: pa.Table, pred: pa.Table, spec: ComparePolicy) -> CompareResult | None:
    """``Comparator.by_values``'s match of two small results (``columns = "superset"`` or
    ``condition_cols``), shown in plain Python, without the general path's Arrow set-up:
    each column read as Python values at most once, the gold's names tried first, else each
    compared gold column given a predicted column by the same bipartite assignment
    (``_assign``) over the same preferences (name, then position, then order) among the
    columns holding exactly its values as a multiset, and the chosen mapping checked on
    whole rows. None whenever that does not show a match (a value within tolerance but not
    equal, a NaN, a type not in ``_SMALL_TYPES``, tie groups, more than ``SMALL_ROWS``
    rows, no rows, a predicted column of another type when the names do not settle it):
    ``by_values`` then decides, so a verdict never depends on the path."""
    rows = gold.num_rows
    if not 0 < rows <= SMALL_ROWS or pred.num_rows != rows:  # no rows: every column looks alike, the general path
        return None
    gold_schema, pred_schema = gold.schema, pred.schema  # names and types read once (each read costs)
    gold_names = gold_schema.names
    width = len(gold_names)
    if not width or gold_names[-1] == GID_COLUMN:  # tie groups: the general path reads them
        return None
    wanted = list(spec.condition_cols) if spec.condition_cols is not None else list(range(width))
    if not wanted or any(i >= width for i in wanted):
        return None
    gtypes, ptypes = gold_schema.types, pred_schema.types
    gk = _small_kinds([gtypes[i] for i in wanted])
    pk = [_small_kind(t) for t in ptypes]
    if gk is None:
        return None
    pred_names = pred_schema.names
    gnames = [gold_names[i] for i in wanted]
    pfold = [n.casefold() for n in pred_names]
    pcache: dict[int, list[Any]] = {}
    try:
        gvals = [gold.column(i).to_pylist() for i in wanted]

        def pvals(j: int) -> list[Any]:
            got = pcache.get(j)
            if got is None:
                got = pcache[j] = pred.column(j).to_pylist()
            return got

        def holds(mapping: list[int]) -> bool:
            for a, j in zip(gk, mapping):
                b = pk[j]
                if b is None or not _python_equal(a, b):
                    return False
            g = list(zip(*gvals))
            p = list(zip(*(pvals(j) for j in mapping)))
            return g == p or (not spec.ordered and collections.Counter(g) == collections.Counter(p))

        first_of = {n: j for j, n in reversed(list(enumerate(pfold)))}
        guess = [first_of.get(n.casefold()) for n in gnames]
        if None not in guess and len(set(guess)) == len(guess) and holds(guess):  # type: ignore[arg-type]
            mapping: list[int] = guess  # type: ignore[assignment]
        elif None in pk:  # a column of another type may hold the same values: the general path weighs it
            return None
        else:
            def signature(values: list[Any], kind: str) -> tuple[Any, ...] | None:
                present = [v for v in values if v is not None]
                if not present:
                    return ("null", len(values))
                try:
                    return ("number" if kind in NUMBERS else kind, len(values) - len(present), tuple(sorted(present)))
                except TypeError:
                    return None
            psig = [signature(pvals(j), k) for j, k in enumerate(pk) if k is not None]
            candidates: list[list[int]] = []
            for i, (name, values, kind) in enumerate(zip(gnames, gvals, gk)):
                sig = signature(values, kind)
                if sig is None:
                    return None
                same = [j for j, other in enumerate(psig) if other == sig]
                folded, at = name.casefold(), wanted[i]
                same.sort(key=lambda j: (pfold[j] != folded, j != at, j))
                candidates.append(same)
            assigned = _assign(candidates, len(pk))
            if None in assigned or not holds(assigned):  # type: ignore[arg-type]
                return None
            mapping = assigned  # type: ignore[assignment]
    except (OverflowError, ValueError, pa.ArrowInvalid):  # a value Python cannot hold: the general path
        return None
    n = len(wanted)
    res = CompareResult(match=True, reason="equal", gold_rows=rows, pred_rows=rows, gold_columns=gnames,
                        pred_columns=list(pred_names), gold_kinds=gk, pred_kinds=[str(pk[j]) for j in mapping],
                        ordered=spec.ordered, row_precision=1.0, row_recall=1.0, row_f1=1.0, cell_overlap=1.0,
                        column_matches=[True] * n, cardinality_delta=0, cardinality_ratio=1.0 if rows else None,
                        schema_match=True, columns=spec.columns, column_mapping=list(mapping),
                        condition_cols=list(spec.condition_cols) if spec.condition_cols is not None else None)
    return res


def within_tolerance(x: np.ndarray, y: np.ndarray, spec: ComparePolicy, nan: bool = True) -> np.ndarray:
    """The contract's equality of doubles, element by element (broadcast): identical (-0.0
    is 0.0), both NaN (unless ``nan`` says neither side holds one), or finite and at most
    max(abs_tol, rel_tol * max(|x|, |y|)) apart; an infinity equals only itself. The one
    definition both paths use (``_Col.close``, the small path's ``_small_close``)."""
    with np.errstate(invalid="ignore", over="ignore"):
        d = np.abs(x - y)  # not finite when either is not (or when they are that far apart)
        c: np.ndarray = (x == y) | (np.isfinite(d) & (d <= np.maximum(spec.float_abs_tol,
                                                          spec.float_rel_tol * np.maximum(np.abs(x), np.abs(y)))))
    if nan:
        c |= np.isnan(x) & np.isnan(y)
    return c


class _Col:
    """One output column of both results, canonical. ``key`` identifies and orders the
    values: doubles as they are (``tol``: compared within tolerance; -0.0 is 0.0, NaN is
    NaN), everything else as the narrowest unsigned integers that keep order and identity
    (small arrays keep the random reads of grouping in cache). Under a NULL the key is a
    filler; ``null`` marks the NULLs (None: there are none)."""

    __slots__ = ("key", "null", "tol", "nan", "width")

    def __init__(self, key: np.ndarray, null: np.ndarray | None, tol: bool) -> None:
        self.null, self.tol = null, tol
        self.key, width = (key, 64) if tol else _narrow(key)
        self.nan = bool(tol and np.isnan(key).any())
        self.width = width + (null is not None)  # bits that tell its values apart, the NULL flag included

    def eq(self, i: np.ndarray | slice, j: np.ndarray) -> np.ndarray:
        """Whether the values at rows ``i`` and ``j`` are identical (NULL is NULL)."""
        return self._eq(self.key[i], self.key[j], *((self.null[i], self.null[j]) if self.null is not None else ()))

    def eq_next(self, order: np.ndarray) -> np.ndarray:
        """Whether each row of ``order`` is identical to the next (one read of each row)."""
        x = np.take(self.key, order)
        if self.null is None:
            return self._eq(x[:-1], x[1:])
        n = np.take(self.null, order)
        return self._eq(x[:-1], x[1:], n[:-1], n[1:])

    def _eq(self, x: np.ndarray, y: np.ndarray, nx: np.ndarray | None = None, ny: np.ndarray | None = None) -> np.ndarray:
        e: np.ndarray = x == y
        if self.nan:
            e |= np.isnan(x) & np.isnan(y)
        if nx is not None:
            e &= nx == ny
        return e

    def close(self, i: np.ndarray, j: np.ndarray, spec: ComparePolicy) -> np.ndarray:
        """Equal within tolerance, never NULL: NULL only with NULL, NaN only with NaN, an
        infinity only with itself, finite numbers within max(abs_tol, rel_tol * max(|x|, |y|))."""
        if not self.tol:
            return self.eq(i, j)
        c = self._close(self.key[i], self.key[j], spec)
        if self.null is not None:
            c &= self.null[i] == self.null[j]
        return c

    def _close(self, x: np.ndarray, y: np.ndarray, spec: ComparePolicy) -> np.ndarray:
        return within_tolerance(x, y, spec, self.nan)

    def same_bag(self, a: np.ndarray, b: np.ndarray, spec: ComparePolicy | None) -> bool:
        """Whether rows ``a`` and rows ``b`` hold the same values, as multisets: exactly, or
        (with ``spec``) within tolerance. Both sorted and compared in order, which for one
        column finds a pairing whenever one exists."""
        if len(a) != len(b):
            return False
        x, y = self.key[a], self.key[b]
        if self.null is not None:
            na, nb = self.null[a], self.null[b]
            if na.sum() != nb.sum():
                return False
            x, y = x[~na], y[~nb]
        x, y = np.sort(x), np.sort(y)
        return bool((self._close(x, y, spec) if spec is not None and self.tol else self._eq(x, y)).all())

    def mix_into(self, h: np.ndarray) -> None:
        """``h = h * K + value`` per row, in place, alike for identical values (a NULL adds
        a second step, as its key may equal a value's)."""
        h *= _K1
        h += self.bits().view(np.uint64) if self.tol else self.key
        if self.null is not None:
            h *= _K1
            h += self.null

    def bits(self) -> np.ndarray:
        """A double column's bit patterns as int64, alike for identical values: -0.0 as
        0.0, every NaN as one."""
        x = self.key + 0.0
        if self.nan:
            x[np.isnan(x)] = np.nan
        return x.view(np.int64)

    def sort_keys(self, rows: np.ndarray, coarse: bool = False) -> list[np.ndarray]:
        """Sort keys, most significant first: NULLs last, NaN after +inf."""
        keys = [] if self.null is None else [self.null[rows]]
        x = self.key[rows]
        keys.append(_ordinal(x) >> COARSE_SHIFT if coarse and self.tol else x)
        return keys


class _Stack:
    """Both results as canonical columns: rows ``0..ng-1`` are the gold's, ``ng..n-1`` the
    prediction's. Row sets are arrays of these row numbers."""

    def __init__(self, cols: list[_Col], ng: int, n: int) -> None:
        self.cols, self.ng, self.n = cols, ng, n
        self.npred = n - ng
        self.tolerant = any(c.tol for c in cols)
        self._matches: list[bool] | None = None
        self._hash: np.ndarray | None = None  # kept from _paired() for the diff

    @classmethod
    def build(cls, gold: pa.Table, pred: pa.Table, gk: list[str], pk: list[str], cast: Any) -> _Stack:
        cols = [_encode(gold.column(i), pred.column(i), a, b, cast) for i, (a, b) in enumerate(zip(gk, pk))]
        return cls(cols, gold.num_rows, gold.num_rows + pred.num_rows)

    def select(self, positions: list[int]) -> _Stack:
        return _Stack([self.cols[i] for i in positions], self.ng, self.n)

    def eq(self, i: np.ndarray | slice, j: np.ndarray) -> np.ndarray:
        out = np.ones(np.shape(j) if isinstance(i, slice) else np.broadcast(i, j).shape, bool)
        for c in self.cols:
            out &= c.eq(i, j)
        return out

    def eq_next(self, order: np.ndarray) -> np.ndarray:
        out = np.ones(max(len(order) - 1, 0), bool)
        for c in self.cols:
            out &= c.eq_next(order)
        return out

    def close(self, i: np.ndarray, j: np.ndarray, spec: ComparePolicy) -> np.ndarray:
        out = np.ones(np.broadcast(i, j).shape, bool)
        for c in self.cols:
            out &= c.close(i, j, spec)
        return out

    def hash(self) -> np.ndarray:
        """A 64-bit hash per row: identical rows hash alike. A polynomial in the values,
        then a finaliser (splitmix64's) so that its top bits, sorted on, depend on all."""
        h = np.full(self.n, _SEED, np.uint64)
        for c in self.cols:
            c.mix_into(h)
        h ^= h >> np.uint64(30)
        h *= _K2
        h ^= h >> np.uint64(27)
        h *= _K3
        h ^= h >> np.uint64(31)
        return h

    def sort_keys(self, rows: np.ndarray, coarse: bool = False) -> list[np.ndarray]:
        """Keys for ``np.lexsort`` (least significant first) that order rows column by
        column; ``coarse``: numbers first on about four significant digits, then exactly."""
        keys = [k for c in self.cols for k in c.sort_keys(rows, coarse)]
        if coarse:
            keys += [k for c in self.cols for k in c.sort_keys(rows)]
        return keys[::-1] or [np.zeros(len(rows), np.int8)]

    def bag_equal(self) -> bool:
        """Whether the two sides are the same multiset of rows, exactly: shown by one sorted
        word per row when the columns fit one, else by pairing rows in hash order, else
        (few rows, or a hash collision in the way) by the diff."""
        if self.ng != self.npred:
            return False
        for shown in (self._words_equal, self._paired):
            verdict = shown()
            if verdict is not None:
                return verdict
        return self.diff_is_empty()

    def _words_equal(self) -> bool | None:
        """Sorted 64-bit words, one per row, when the columns fit one (``None`` when they
        do not): each column's key and NULL flag get their own bits, so equal words mean
        identical rows."""
        if sum(c.width for c in self.cols) > 64 or not self.n:
            return None
        w, shift = np.zeros(self.n, np.uint64), 0
        for c in self.cols:
            if c.width:
                w |= (c.bits().view(np.uint64) if c.tol else c.key.astype(np.uint64)) << np.uint64(shift)
                shift += c.width
                if c.null is not None:
                    w |= c.null.astype(np.uint64) << np.uint64(shift - 1)
        return bool(np.array_equal(np.sort(w[:self.ng]), np.sort(w[self.ng:])))

    def _paired(self) -> bool | None:
        """Each side sorted on its row hashes (high bits, the row's number in the low bits),
        and the k-th gold row paired with the k-th predicted row: hash sums or sorted hashes
        that differ prove the rows differ; pairs that are all identical prove them equal.
        ``None``: few rows (sorting values is cheaper), or pairs that differ although the
        hashes agree (a collision), for the diff to settle. The hashes are kept for it."""
        if self.n <= HASH_ROWS:
            return None
        h = self._hash = self.take_hash()
        if h[:self.ng].sum() != h[self.ng:].sum():  # the sums wrap around 2**64 alike
            return False
        low = np.uint64(int(self.ng - 1).bit_length())
        sides = []
        for part in (h[:self.ng], h[self.ng:]):
            k = (part >> low) << low
            k |= np.arange(len(part), dtype=np.uint64)
            k.sort()
            sides.append(k)
        if not np.array_equal(sides[0] >> low, sides[1] >> low):
            return False
        mask = (np.uint64(1) << low) - np.uint64(1)
        partner = np.empty(self.ng, np.int64)  # each gold row's predicted row, so gold rows are read in order
        partner[(sides[0] & mask).view(np.int64)] = (sides[1] & mask).view(np.int64) + self.ng
        del sides
        return True if self.eq(slice(0, self.ng), partner).all() else None

    def take_hash(self) -> np.ndarray:
        """The row hashes, kept from ``_paired`` or computed now; the caller owns them
        (and can let go of them early)."""
        h, self._hash = self._hash, None
        return self.hash() if h is None else h

    @cached_property
    def diff(self) -> tuple[np.ndarray, np.ndarray]:
        """The exact multiset difference: (gold rows left unpaired, predicted rows left unpaired)."""
        return _surplus(*_group(self), self.ng)

    def diff_is_empty(self) -> bool:
        return not any(len(d) for d in self.diff)

    def column_matches(self, spec: ComparePolicy) -> list[bool]:
        """Per column whether it holds the same multiset on both sides (numbers within
        tolerance). Exactly: the unpaired rows of the diff compared column by column (the
        paired rows cancel out). Within tolerance: the whole columns sorted and paired,
        which finds a pairing whenever one exists for a single column."""
        if self._matches is None:
            missing, extra = self.diff
            g, p = np.arange(self.ng), np.arange(self.ng, self.n)
            self._matches = []
            for c in self.cols:
                self._matches.append(c.same_bag(missing, extra, None)
                                     or (c.tol and self.ng == self.npred and c.same_bag(g, p, spec)))
        return self._matches

    def cells(self, spec: ComparePolicy) -> _Stack | None:
        """The stack with each double replaced by its cell: the bits of its magnitude plus
        half a cell, shifted right by ``s``, the largest with ``2**(s-52) <= rel_tol``, and
        its sign. Two normal doubles of one cell are less than ``2**s`` ulps of the larger
        apart, so within rel_tol of it: rows of one cell pair up in any order. (The half
        cell puts round numbers, whose low bits are zero, mid-cell rather than on a border
        where any noise would split them.) Zero, subnormals, infinities and NaN keep their
        own value, numbered after the cells. ``None`` when the tolerance is too small."""
        rel = spec.float_rel_tol
        if not (rel > 0 and math.isfinite(rel)):
            return None
        s = min(52 + math.floor(math.log2(rel)), 52)
        while s > 0 and 2.0 ** (s - 52) > rel:
            s -= 1
        if s < 1:
            return None
        cols = []
        for c in self.cols:
            if not c.tol:
                cols.append(c)
                continue
            b = c.bits()
            cell = b & np.int64(0x7FFFFFFFFFFFFFFF)  # the magnitude's bits
            special = (cell - np.int64(1 << 52)).view(np.uint64) >= np.uint64(0x7FF0000000000000 - (1 << 52))
            cell += np.int64(1 << (s - 1))
            cell >>= np.int64(s)
            np.negative(cell, out=cell, where=b < 0)
            if special.any():  # zero and subnormals by their bits, then infinity, NaN; signed
                sb = b[special]
                m = sb & np.int64(0x7FFFFFFFFFFFFFFF)
                code = np.where(m < np.int64(1 << 52), m, np.int64(1 << 52) + (m > np.int64(0x7FF0000000000000)))
                np.subtract(-1, code, out=code, where=sb < 0)
                cell[special] = np.max(cell, where=~special, initial=0) + 1 + code - code.min()
            cols.append(_Col(cell, c.null, False))
        return _Stack(cols, self.ng, self.n)


def _narrow(key: np.ndarray) -> tuple[np.ndarray, int]:
    """Integer keys less their minimum, in the narrowest unsigned type that holds them,
    and how many bits they use."""
    if not len(key):
        return key.astype(np.uint8), 0
    lo, hi = int(key.min()), int(key.max())
    if hi - lo >= 2 ** 63:  # int64 spanning more than half its range: flip the sign bit instead
        return key.view(np.uint64) ^ np.uint64(1 << 63), 64
    t = next(t for t in (np.uint8, np.uint16, np.uint32, np.uint64) if hi - lo < 1 << (8 * np.dtype(t).itemsize))
    if lo == 0 and key.dtype == t:
        return key, hi.bit_length()
    fits = hi - lo < 1 << (8 * key.dtype.itemsize - 1)  # the difference fits the key's own (signed) type
    d = (key - key.dtype.type(lo)) if fits else key.astype(np.int64) - lo
    return d.astype(t, copy=False), (hi - lo).bit_length()


def _ordinal(x: np.ndarray) -> np.ndarray:
    """Doubles as int64 in the same order (-0.0 as 0.0, NaN after +inf)."""
    x = x + 0.0
    x[np.isnan(x)] = np.nan
    b = x.view(np.int64)
    return np.where(b < 0, b ^ np.int64(0x7FFFFFFFFFFFFFFF), b)


def _common_kind(a: str, b: str) -> str:
    """The kind both sides are compared as: a float on either side makes numbers inexact."""
    kinds = {a, b} - {"null"}
    return "null" if not kinds else kinds.pop() if len(kinds) == 1 else "float" if "float" in kinds else "decimal"


def _encode(g: pa.ChunkedArray, p: pa.ChunkedArray, a: str, b: str, cast: Any) -> _Col:
    """Gold column ``g`` and predicted column ``p`` (compatible kinds ``a`` and ``b``) as
    one canonical column: numbers with a float on either side as doubles (compared within
    tolerance), integers as int64, exact numbers with a decimal as exact integers at the
    finer scale of the two (``_exact``), strings (and text from DuckDB for other types) as
    codes of one dictionary over both sides, temporals as integers in the finer unit of
    the two, booleans as 0/1."""
    n = len(g) + len(p)
    kind = _common_kind(a, b)
    if kind == "null":
        return _Col(np.zeros(n, np.int8), np.ones(n, bool), False)
    if kind == "decimal":
        return _exact(g, p)
    types = [x.type for x in (g, p) if not pat.is_null(x.type)]
    if kind in ("float", "integer", "boolean", "date"):
        target = {"float": pa.float64(), "integer": pa.int64(), "boolean": pa.int8(), "date": pa.date32()}[kind]
    elif kind in ("timestamp", "timestamptz", "time"):
        unit = max((t.unit for t in types), key=["s", "ms", "us", "ns"].index)
        target = pa.time64("ns") if kind == "time" else pa.timestamp(unit, types[0].tz)
    elif kind == "string":
        target = types[0] if len(set(types)) == 1 else pa.large_string()
    else:
        target = None
    both = None
    if target is not None:
        try:
            both = _stacked([x if x.type == target else pc.cast(x, target, safe=kind != "float") for x in (g, p)],
                            target)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            pass  # e.g. uint64 beyond int64, decimal256: cast as DuckDB would
    if both is None:
        sql_type = "DOUBLE" if kind == "float" else "VARCHAR"
        both = _stacked([cast(x, sql_type) for x in (g, p)], pa.float64() if kind == "float" else pa.string())
    null = numpy_numbers(pc.is_null(both)) if both.null_count else None
    tol = pat.is_float64(both.type)
    if pat.is_string(both.type) or pat.is_large_string(both.type):
        key = _codes(both)
    else:
        if pat.is_temporal(both.type):
            both = pc.cast(both, pa.int32() if pat.is_date32(both.type) else pa.int64())
        key = numpy_numbers(both) if n else np.zeros(0, np.int64)
    return _Col(key, null, tol)


def _exact(g: pa.ChunkedArray, p: pa.ChunkedArray) -> _Col:
    """Exact numbers of both sides (integers, decimals of any width; no float) as one exact
    column: each value as the integer it is in units of ``10**-s``, ``s`` the finer scale of
    the two sides, so 1 = 1.0 = 1.00 and 1999000 != 1999001 whatever the types (a HUGEINT
    sum arrives as a 128-bit decimal). As int64 when every value fits, which is the usual
    case and vectorised; else (a value past 2**63 at that scale) as codes of one dictionary
    of the exact Python integers, so equal values, and only they, get one code."""
    scale = max([0] + [x.type.scale for x in (g, p) if pat.is_decimal(x.type)])
    sides = [_scaled_int64(x, scale) for x in (g, p)]
    fitting = [s for s in sides if s is not None]  # None: a value of that side does not fit int64
    null = np.concatenate([s[1] for s in fitting]) if len(fitting) == len(sides) else None
    if null is not None:
        key = np.concatenate([s[0] for s in fitting])
    else:
        values = [v for x in (g, p) for v in _scaled_ints(x, scale)]
        null = np.fromiter((v is None for v in values), bool, len(values))
        codes: dict[int, int] = {}
        key = np.fromiter((0 if v is None else codes.setdefault(v, len(codes)) for v in values), np.int64, len(values))
    return _Col(key, null if null.any() else None, False)


def _scaled_int64(x: pa.ChunkedArray, scale: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Exact numbers ``x`` times ``10**(scale - their scale)`` as int64 (0 under a NULL),
    and where the NULLs are; None when a value does not fit. A decimal's unscaled integer
    is read from its buffer (the low word, when the higher words only extend its sign),
    never through a double."""
    n = len(x)
    null = numpy_numbers(pc.is_null(x)) if x.null_count else np.zeros(n, bool)
    if pat.is_null(x.type):
        return np.zeros(n, np.int64), null
    if pat.is_integer(x.type):
        try:
            ints = pc.cast(x, pa.int64())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return None  # uint64 past 2**63
        key, factor = numpy_numbers(ints), 10 ** scale
    else:
        words = max(x.type.bit_width // 64, 1)  # 64-bit words a value (decimal32: one int32)
        dtype = np.int32 if x.type.bit_width == 32 else np.int64
        lows = []
        for c in x.chunks:
            if not len(c):
                continue
            both = np.frombuffer(c.buffers()[1], dtype, (c.offset + len(c)) * words)[c.offset * words:]
            low = both[::words].astype(np.int64)  # a copy: NULLs' leftover bytes are zeroed below
            if words > 1:  # the higher words must only extend the low word's sign
                both = both.reshape(-1, words)
                sign = low >> 63
                fits = both[:, 1] == sign if words == 2 else (both[:, 1:] == sign[:, None]).all(axis=1)
                if not fits.all() and not (fits | numpy_numbers(pc.is_null(c))).all():
                    return None  # a value past int64
            lows.append(low)
        key = np.concatenate(lows) if len(lows) > 1 else lows[0] if lows else np.zeros(0, np.int64)
        if x.null_count:
            key[null] = 0
        factor = 10 ** (scale - x.type.scale)
    if factor != 1 and key.any():
        bound = np.iinfo(np.int64).max // factor
        if ((key > bound) | (key < -bound)).any():
            return None
        key = key * np.int64(factor)
    return key, null


def _scaled_ints(x: pa.ChunkedArray, scale: int) -> list[int | None]:
    """Exact numbers ``x`` times ``10**(scale - their scale)`` as Python integers (None
    for NULL): exact at any size, for the columns ``_scaled_int64`` cannot hold."""
    shift = scale - (x.type.scale if pat.is_decimal(x.type) else 0)
    out: list[int | None] = []
    for v in x.to_pylist():
        if v is None:
            out.append(None)
        elif isinstance(v, int):
            out.append(v * 10 ** shift)
        else:  # a Decimal: its digits and exponent, so no context precision rounds it
            sign, digits, exponent = v.as_tuple()
            whole = int("".join(map(str, digits)) or "0") * 10 ** (exponent + scale)
            out.append(-whole if sign else whole)
    return out


def _stacked(sides: list[pa.ChunkedArray], target: pa.DataType) -> pa.ChunkedArray:
    return pa.chunked_array([c for x in sides for c in x.chunks], type=target)


def numpy_numbers(x: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A column of fixed-width numbers (0 under a NULL) or of booleans without NULLs as numpy,
    read from its buffers: pyarrow's ``to_numpy``, like ``pa.array`` and ``pc.fill_null(x, 0)``
    (see ``_int64_array``), imports pandas on its first call, 150 ms of an engine process's
    CPU, 0.15 ms a case of a 1000-case run."""
    parts = []
    for c in x.chunks if isinstance(x, pa.ChunkedArray) else [x]:
        n, at = len(c), c.offset
        if pat.is_boolean(c.type) and not c.null_count:
            parts.append(_bits(c.buffers()[1], at, n))
        elif pat.is_integer(c.type) or pat.is_floating(c.type):
            dtype = np.dtype(c.type.to_pandas_dtype())
            values = np.frombuffer(c.buffers()[1], dtype, at + n)[at:] if n else np.zeros(0, dtype)
            if c.null_count:
                values = values.copy()
                values[~_bits(c.buffers()[0], at, n)] = 0
            parts.append(values)
        else:
            parts.append(c.to_numpy(zero_copy_only=False))
    if len(parts) == 1:
        return parts[0]
    return np.concatenate(parts) if parts else np.zeros(0, np.dtype(x.type.to_pandas_dtype()))


def _bits(buffer: pa.Buffer, offset: int, n: int) -> np.ndarray:
    """``n`` bits of an Arrow bitmap from bit ``offset``, as booleans."""
    return np.unpackbits(np.frombuffer(buffer, np.uint8), bitorder="little")[offset:offset + n].view(bool) if n \
        else np.zeros(0, bool)


def _int64_array(values: Any) -> pa.Array:
    """Integers (positions, group ids) as an Arrow int64 array made on numpy's buffer, not by
    ``pa.array``, which imports pandas on its first call (``numpy_numbers``)."""
    data = np.ascontiguousarray(values, np.int64)
    return pa.Array.from_buffers(pa.int64(), len(data), [None, pa.py_buffer(data)])


def _codes(strings: pa.ChunkedArray) -> np.ndarray:
    """Codes of one dictionary over all chunks (a NULL's code is 0; its mask says NULL)."""
    enc = pc.dictionary_encode(strings)
    if len({c.dictionary.buffers()[1].address for c in enc.chunks if len(c.dictionary)}) > 1:
        enc = pa.chunked_array([pc.dictionary_encode(strings.combine_chunks())])
    if not enc.num_chunks:
        return np.zeros(0, np.int32)
    return np.concatenate([numpy_numbers(c.indices) for c in enc.chunks])


# -- grouping and pairing ----------------------------------------------------------------------
def _group(st: _Stack) -> tuple[np.ndarray, np.ndarray]:
    """All rows reordered so that identical rows are adjacent, and where each run of
    identical rows starts. Few rows are sorted on their values; many on their hash (its
    high bits, with the row's number in the low bits, in one ``np.sort``), after which
    every pair of neighbours with equal hashes is checked value by value. A run that fails
    the check (a collision) is sorted again on its values."""
    m = st.n
    if m <= HASH_ROWS:
        order = np.lexsort(st.sort_keys(np.arange(m)))
        same = st.eq_next(order)
    else:
        h = st.take_hash()
        low = np.uint64(int(m - 1).bit_length())
        packed = (h >> low) << low
        del h
        packed |= np.arange(m, dtype=np.uint64)
        packed.sort()
        same = (packed[1:] >> low) == (packed[:-1] >> low)
        packed &= (np.uint64(1) << low) - np.uint64(1)
        order = packed.view(np.int64)
        bad = same & ~st.eq_next(order)
        if bad.any():
            order, same = _regroup(st, order, same, np.flatnonzero(bad))
    return order, np.flatnonzero(np.concatenate(([True], ~same)))


def _regroup(st: _Stack, order: np.ndarray, same: np.ndarray, bad: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sort the runs of equal hashes that hold different rows (``bad``: positions where a
    neighbour differs) on their values, and find where their rows really change."""
    run = np.concatenate(([0], np.cumsum(~same)))
    slots = np.flatnonzero(np.isin(run, np.unique(run[bad])))
    sub = order[slots]
    order[slots] = sub[np.lexsort(st.sort_keys(sub) + [run[slots]])]
    inner = slots[:-1][run[slots[:-1]] == run[slots[1:]]]
    same[inner] = st.eq(order[inner], order[inner + 1])
    return order, same


def _counts(order: np.ndarray, starts: np.ndarray, ng: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per run: its length, its gold rows, its predicted rows."""
    lengths = np.diff(np.append(starts, len(order)))
    npred = np.add.reduceat(order >= ng, starts, dtype=np.int64) if len(order) else np.zeros(0, np.int64)
    return lengths, lengths - npred, npred


def _surplus(order: np.ndarray, starts: np.ndarray, ng: int) -> tuple[np.ndarray, np.ndarray]:
    """The rows left over once each run's gold rows are paired with its predicted rows."""
    lengths, cg, cp = _counts(order, starts, ng)
    bad = cg != cp
    if not bad.any():
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    at = np.repeat(bad, lengths)
    rows, run = order[at], np.repeat(np.arange(len(starts)), lengths)[at]
    pred = rows >= ng
    keep = np.zeros(len(rows), bool)
    for side, other in ((~pred, cp), (pred, cg)):
        n = side.astype(np.int64)
        before = np.cumsum(n) - n  # rows of this side before each row ...
        first = np.flatnonzero(np.concatenate(([True], run[1:] != run[:-1])))
        rank = before - np.repeat(before[first], np.diff(np.append(first, len(run))))  # ... in its run
        keep |= side & (rank >= other[run])
    return rows[keep & ~pred], rows[keep & pred]


def _unbalanced(order: np.ndarray, starts: np.ndarray, ng: int) -> np.ndarray:
    """All rows of the runs whose gold and predicted counts differ."""
    lengths, cg, cp = _counts(order, starts, ng)
    rows: np.ndarray = order[np.repeat(cg != cp, lengths)]
    return rows


def _pairs(st: _Stack, a: np.ndarray, b: np.ndarray, spec: ComparePolicy) -> bool:
    """Whether gold rows ``a`` and predicted rows ``b`` pair up within tolerance when both
    sides are sorted alike and paired in order: once on the values, once on numbers cut to
    about four significant digits first (so noise across a sort boundary of one column
    cannot split the pairs on the next)."""
    if len(a) != len(b):
        return False
    for coarse in (False, True) if st.tolerant and len(st.cols) > 1 else (False,):
        if st.close(a[np.lexsort(st.sort_keys(a, coarse))], b[np.lexsort(st.sort_keys(b, coarse))], spec).all():
            return True
    return False


def _matched(st: _Stack, a: np.ndarray, b: np.ndarray, spec: ComparePolicy) -> bool:
    """Whether a perfect matching of rows ``a`` to rows ``b`` within tolerance exists
    (Kuhn's augmenting paths on the closeness matrix): the definition itself, for few rows."""
    return len(a) == len(b) and _matching(st, a, b, spec) is not None


def _matching(st: _Stack, a: np.ndarray, b: np.ndarray, spec: ComparePolicy) -> np.ndarray | None:
    """A matching of every row of ``a`` to its own row of ``b`` within tolerance (``b`` may
    hold more rows): for each row of ``a``, its partner's index in ``b``; None if none exists."""
    return _assignment(st.close(a[:, None], b[None, :], spec))


def _assignment(close: np.ndarray) -> np.ndarray | None:
    """For each row of the matrix ``close`` (``close[i, j]``: row i of one side may pair
    with row j of the other), its own column, by Kuhn's augmenting paths; None if some
    row can have none."""
    nbrs = [np.flatnonzero(r).tolist() for r in close]
    if not all(nbrs):
        return None
    b = close.shape[1]
    owner = [-1] * b

    def augment(i: int, seen: list[bool]) -> bool:
        for j in nbrs[i]:
            if not seen[j]:
                seen[j] = True
                if owner[j] < 0 or augment(owner[j], seen):
                    owner[j] = i
                    return True
        return False
    if not all(augment(i, [False] * b) for i in range(len(nbrs))):
        return None
    partner = np.empty(len(nbrs), np.int64)
    for j, i in enumerate(owner):
        if i >= 0:
            partner[i] = j
    return partner


def _tolerant(st: _Stack, spec: ComparePolicy) -> bool:
    """Whether the rows (as many on each side) pair up within tolerance. When noise has
    touched most rows, large results first pair the rows of each cell (``_cells_pair``).
    Otherwise the exact diff is small and goes to ``_pairs`` first; if that fails, every
    column must at least pair up on its own (which settles most real mismatches without
    cells), then cells are tried, and up to MATCH_ROWS rows an exact matching decides
    (over all rows of a small result: pairing identical rows first is not always right)."""
    n = st.ng
    large = n >= CELL_ROWS
    cells_first = large and not _mostly_identical(st)
    if cells_first and _cells_pair(st, spec):
        return True
    missing, extra = st.diff
    big = len(missing) > MATCH_ROWS
    if not big and _pairs(st, missing, extra, spec):
        return True
    if not all(st.column_matches(spec)):
        return False
    if large and not cells_first and _cells_pair(st, spec):
        return True
    if big:
        return _pairs(st, missing, extra, spec)
    return _matched(st, np.arange(n), np.arange(n, st.n), spec) if n <= MATCH_ROWS else _matched(st, missing, extra, spec)


def _mostly_identical(st: _Stack) -> bool:
    """Whether at least 90 % of a sample of gold rows have an identical predicted row (by
    row hash): then the exact diff is small, and cheaper to pair than every cell."""
    h = st.take_hash()
    st._hash = h  # kept for the diff
    sample = np.unique(h[:st.ng][::max(1, st.ng // 1024)])
    pred = h[st.ng:]
    at = np.minimum(np.searchsorted(sample, pred), len(sample) - 1)
    found = np.unique(at[sample[at] == pred])
    return len(found) >= 0.9 * len(sample)


def _cells_pair(st: _Stack, spec: ComparePolicy) -> bool:
    """Whether pairing the rows of each cell (``_Stack.cells``), then sorting the rows of
    cells with unequal counts (a value and its noisy twin either side of a cell border),
    pairs every row. False only means no pairing was shown this way."""
    n = st.ng
    cells = st.cells(spec)
    if cells is None:
        return False
    if cells.bag_equal():
        return True
    rest = _unbalanced(*_group(cells), st.ng)
    del cells
    if not len(rest):
        return True
    return len(rest) <= max(4 * MATCH_ROWS, n // 10) and _pairs(st, rest[rest < n], rest[rest >= n], spec)


def _breaks(st: _Stack, rows: np.ndarray) -> np.ndarray:
    """1 where a row starts a new tie group (its values differ from the row before), else 0."""
    if not len(rows):
        return np.zeros(0, np.int64)
    return np.concatenate(([True], ~st.eq(rows[1:], rows[:-1]))).astype(np.int64)


def _first_out_of_order(st: _Stack, spec: ComparePolicy, gid: np.ndarray | None) -> int | None:
    """Rows already equal as a bag: the first position where the order differs, or None.
    Sort keys must agree position by position; rows tied on them (a tie group: consecutive
    equal keys in gold order, or the groups stored with the gold) compare as a bag."""
    g = np.arange(st.ng)
    if gid is None:
        ncols = len(st.cols)
        keys = [i for i in spec.sort_keys if i < ncols] if spec.sort_keys is not None else list(range(ncols))
        bad = np.flatnonzero(~st.select(keys).close(g, g + st.ng, spec))
        if len(bad):
            return int(bad[0])
        if keys == list(range(ncols)):
            return None
        gid = _breaks(st.select(keys), g).cumsum()
    both = np.concatenate((gid, gid))
    grouped = _Stack(st.cols + [_Col(both, None, False)], st.ng, st.n)
    if grouped.diff_is_empty() or (st.tolerant and _tolerant(grouped, spec)):
        return None
    bad_gid = both[np.concatenate(grouped.diff)].min()
    return int(np.flatnonzero(gid == bad_gid)[0])


# -- evidence ----------------------------------------------------------------------------------
def _overlap(res: CompareResult, counts: tuple[int, int] | None) -> None:
    if counts is None:
        res.row_precision = res.row_recall = res.row_f1 = 0.0
    else:
        missing, extra = counts
        inter = res.gold_rows - missing
        res.row_precision = inter / res.pred_rows if res.pred_rows else float(res.gold_rows == 0)
        res.row_recall = inter / res.gold_rows if res.gold_rows else float(res.pred_rows == 0)
        pr = res.row_precision + res.row_recall
        res.row_f1 = round(2 * res.row_precision * res.row_recall / pr, 6) if pr else 0.0
    n = len(res.gold_kinds)
    res.cell_overlap = round(sum(res.column_matches) / n, 6) if n and res.column_matches else 0.0


def _rows_at(table: pa.Table, positions: Any) -> list[list[Any]]:
    """The rows at ``positions``, as they came (not canonical), for reports."""
    return _report_rows(table.take(_int64_array(positions)))


def _renamed(t: pa.Table) -> pa.Table:
    return t.rename_columns([f"c{i}" for i in range(t.num_columns)])
