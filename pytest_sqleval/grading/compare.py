"""Result comparison under the comparison contract, computed inside DuckDB over Arrow.

Columns by position (names ignored, arity must match); rows as a multiset, or in order
with tie groups on the gold's sort keys compared as bags; numbers numerically within a
relative/absolute tolerance; a string never equals a number, a date never equals a
timestamp; NULL equals NULL and nothing else.
"""
from __future__ import annotations

import datetime as _dt
import decimal
from dataclasses import dataclass, field
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.types as pat

PREVIEW_ROWS = 5
GID_COLUMN = "__sqleval_gid"  # a stored gold's tie-group ids, appended as its last column
SMALL_ROWS = 100_000  # results up to this size are copied into DuckDB for the comparison (see _load)
CELL_MIN_ROWS = 20_000  # below this the sort pairing alone is as fast as the cell pairing


@dataclass
class CompareSpec:
    ordered: bool = False
    sort_keys: list[int] | None = None  # gold output positions of the ORDER BY keys; None = all columns
    float_rel_tol: float = 1e-6
    float_abs_tol: float = 1e-9


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

    def to_dict(self) -> dict[str, Any]:
        from dataclasses import asdict
        d = asdict(self)
        d["gold_columns_found_at"] = {str(k): v for k, v in self.gold_columns_found_at.items()}
        return d


def kind_of(t: pa.DataType) -> str:
    """The comparison class of an Arrow type: values of different kinds never compare equal."""
    if pat.is_null(t):
        return "null"
    if pat.is_boolean(t):
        return "boolean"
    if pat.is_integer(t):
        return "integer"
    if pat.is_floating(t) or pat.is_decimal(t):
        return "number"
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
    numeric = {"integer", "number"}
    return a == b or "null" in (a, b) or (a in numeric and b in numeric)


def jsonable(v: Any) -> Any:
    """A value as it appears in reports: ISO-8601 for temporals, numbers stay numbers."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, decimal.Decimal):
        return float(v) if v == v.to_integral_value() or abs(v.as_tuple().exponent) < 16 else str(v)
    if isinstance(v, (_dt.datetime, _dt.date, _dt.time)):
        return v.isoformat()
    if isinstance(v, bytes):
        return v.hex()
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): jsonable(x) for k, x in v.items()}
    return str(v)


class Comparator:
    """Owns a private in-memory DuckDB (no external access) used only to compare results."""

    def __init__(self, threads: int = 2) -> None:
        self.con = duckdb.connect(":memory:", config={"enable_external_access": False, "threads": threads,
                                                      "autoload_known_extensions": False})

    def tie_groups(self, table: pa.Table, key_positions: list[int]) -> pa.Array:
        """Group id per row: consecutive rows with equal sort keys share one."""
        t = _positional(table.select(key_positions), "k")
        self.con.register("__keys", t)
        try:
            keys = [f"c{i}" for i in range(len(key_positions))]
            change = " OR ".join(f"{k} IS DISTINCT FROM lag({k}) OVER (ORDER BY __pos)" for k in keys) or "FALSE"
            return self.con.sql(
                f"SELECT sum(brk) OVER (ORDER BY __pos) AS gid FROM (SELECT __pos, CASE WHEN __pos = 0 OR {change} "
                f"THEN 1 ELSE 0 END AS brk FROM __keys) ORDER BY __pos").to_arrow_table().column(0).combine_chunks()
        finally:
            self.con.unregister("__keys")

    def compare(self, gold: pa.Table, pred: pa.Table, spec: CompareSpec) -> CompareResult:
        gid = None
        if gold.num_columns and gold.column_names[-1] == GID_COLUMN:  # tie groups stored with the gold
            gid = gold.column(gold.num_columns - 1)
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
            # identical, row for row: equal under every mode, no SQL needed
            res.match, res.within_tolerance = True, False
            res.row_precision = res.row_recall = res.row_f1 = res.cell_overlap = 1.0
            res.column_matches = [True] * len(gk)
            return res
        con = self.con
        small = gold.num_rows <= SMALL_ROWS and pred.num_rows <= SMALL_ROWS
        self._load("__g", gold, small, gid)
        self._load("__p", pred, small)
        try:
            if len(gk) != len(pk):
                res.reason = "arity_mismatch"
                res.gold_columns_found_at = self._locate_columns(gk, pk, gold.num_rows, pred.num_rows)
                res.column_matches = [i in res.gold_columns_found_at for i in range(len(gk))]
                self._row_samples(res, None)
                return res
            exprs = [_canon(f"c{i}", a, b, gt, pt)
                     for i, (a, b, gt, pt) in enumerate(zip(gk, pk, gold.schema.types, pred.schema.types))]
            if not res.schema_match:
                res.reason = "type_mismatch"
                res.column_matches = [False] * len(gk)
                self._overlap(res, None)
                self._row_samples(res, None)
                return res
            sel_g = ", ".join(f"{e.format(t='g')} AS c{i}" for i, e in enumerate(exprs))
            sel_p = ", ".join(f"{e.format(t='p')} AS c{i}" for i, e in enumerate(exprs))
            con.execute(f"CREATE OR REPLACE TEMP VIEW gn AS SELECT {sel_g}, __pos FROM __g g")
            con.execute(f"CREATE OR REPLACE TEMP VIEW pn AS SELECT {sel_p}, __pos FROM __p p")
            cols = [f"c{i}" for i in range(len(gk))]
            numeric = [i for i, (a, b) in enumerate(zip(gk, pk)) if "number" in (a, b)]
            if (numeric and gold.num_rows == pred.num_rows >= CELL_MIN_ROWS and self._snap_keys(cols, numeric, spec) is not None
                    and self._fingerprints_differ(cols) and self._cell_pairing(cols, numeric, spec)):
                # not equal exactly (the fingerprints prove it), equal within tolerance (the cells prove it)
                missing = extra = 0
                res.within_tolerance = True
            else:
                missing, extra = self._except_counts(cols)
            bag_equal = missing == 0 and extra == 0
            if not bag_equal and numeric and gold.num_rows == pred.num_rows:
                bag_equal = self._tolerant_bag_equal(cols, numeric, spec)
                res.within_tolerance = bag_equal
            res.column_matches = ([True] * len(cols) if bag_equal else
                                  [self._column_equal(i, numeric, spec) for i in range(len(cols))])
            self._overlap(res, (0, 0) if bag_equal else (missing, extra))
            if not bag_equal:
                res.reason = "row_count" if gold.num_rows != pred.num_rows else "values"
                self._row_samples(res, cols)
                return res
            if spec.ordered:
                ok, diff = self._order_equal(cols, numeric, spec, gid is not None)
                if not ok:
                    res.reason, res.order_only, res.first_diff = "order_only", True, diff
                    return res
            res.match, res.reason = True, "equal"
            return res
        finally:
            for name in ("__g", "__p"):
                if small:
                    con.execute(f"DROP TABLE IF EXISTS {name}")
                else:
                    con.unregister(name)
            if not small:  # let go of the big intermediate tables now, not at the next comparison
                con.execute("DROP TABLE IF EXISTS __diff; DROP TABLE IF EXISTS __cells; DROP TABLE IF EXISTS __resid; "
                            "DROP TABLE IF EXISTS __grp")

    def _load(self, name: str, table: pa.Table, small: bool, gid: pa.ChunkedArray | pa.Array | None = None) -> None:
        """Make ``table`` visible as ``name`` with columns c0..cn and ``__pos`` (and the
        gold's tie groups as ``__gid``). A small table is copied into DuckDB once: every
        later query then skips the set-up of an Arrow scan, which costs more than the
        query itself on a few rows. A large one is scanned where it is, without a copy."""
        t = _renamed(table)
        if gid is not None:
            t = t.append_column("__gid", gid)
        if not small:
            self.con.register(name, t.append_column("__pos", _positions(table.num_rows)))
            return
        self.con.register(name + "_src", t)
        try:
            self.con.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS SELECT * FROM {name}_src "
                             f"POSITIONAL JOIN (SELECT range::BIGINT AS __pos FROM range({table.num_rows}))")
        finally:
            self.con.unregister(name + "_src")

    # -- pieces ------------------------------------------------------------------------
    def _except_counts(self, cols: list[str]) -> tuple[int, int]:
        """Multiset difference in one hash aggregate over both sides (faster than two
        EXCEPT ALLs); the differing rows stay in ``__diff`` for the evidence."""
        c = ", ".join(cols)
        self.con.execute(
            f"CREATE OR REPLACE TEMP TABLE __diff AS SELECT * FROM (SELECT {c}, count(*) FILTER (WHERE __side = 0) AS __ng, "
            f"count(*) FILTER (WHERE __side = 1) AS __np FROM (SELECT {c}, 0 AS __side FROM gn UNION ALL "
            f"SELECT {c}, 1 AS __side FROM pn) GROUP BY {c}) WHERE __ng <> __np")
        missing, extra = self.con.execute(
            "SELECT coalesce(sum(greatest(__ng - __np, 0)), 0), coalesce(sum(greatest(__np - __ng, 0)), 0) "
            "FROM __diff").fetchall()[0]
        return int(missing), int(extra)

    def _tol(self, a: str, b: str, spec: CompareSpec) -> str:
        """Never NULL: NULL equals only NULL, NaN only NaN, an infinity only itself; finite
        numbers are equal within tolerance. (A NULL-valued predicate here would vanish
        under ``WHERE NOT (...)`` and let NULL vs 0 or inf vs 5 pass.)"""
        return (f"({a} IS NOT DISTINCT FROM {b} OR coalesce(isfinite({a}) AND isfinite({b}) AND "
                f"abs({a} - {b}) <= greatest({spec.float_abs_tol!r}, {spec.float_rel_tol!r} * greatest(abs({a}), abs({b}))), FALSE))")

    def _row_eq(self, cols: list[str], numeric: list[int], spec: CompareSpec) -> str:
        parts = []
        for i, c in enumerate(cols):
            parts.append(self._tol(f"a.{c}", f"b.{c}", spec) if i in numeric else f"a.{c} IS NOT DISTINCT FROM b.{c}")
        return " AND ".join(parts) or "TRUE"

    def _fingerprints_differ(self, cols: list[str]) -> bool:
        """Whether the two sides' row hashes, summed, differ: proof that the rows differ as
        multisets (equal rows hash alike; DuckDB hashes -0.0 as 0.0 and every NaN alike).
        Equal sums prove nothing, so the exact diff still decides that case."""
        h = f"sum(hash({', '.join(cols)})::HUGEINT)"
        fg, fp = self.con.execute(f"SELECT (SELECT {h} FROM gn), (SELECT {h} FROM pn)").fetchall()[0]
        return fg != fp

    def _cell_pairing(self, cols: list[str], numeric: list[int], spec: CompareSpec) -> bool:
        """Whether the rows pair up within tolerance, shown in one hash aggregate: numbers
        are snapped to cells (``_snap_keys``) in which any two values are within tolerance,
        and rows whose cells hold as many gold as predicted rows are paired there. The rows
        of unbalanced cells (a value and its noisy twin on either side of a cell boundary)
        are paired by sorting, as ``_sort_pairing`` does. ``False`` means "not shown", and
        the exact diff and the sort pairing over all differing rows decide as before."""
        snapped = self._snap_keys(cols, numeric, spec)
        assert snapped is not None
        keys = ", ".join(f"{e} AS k{i}" for i, e in enumerate(snapped))
        kn = ", ".join(f"k{i}" for i in range(len(cols)))
        self.con.execute(
            f"CREATE OR REPLACE TEMP TABLE __cells AS SELECT * FROM (SELECT {kn}, count(*) FILTER (WHERE __side = 0) AS __ng, "
            f"count(*) FILTER (WHERE __side = 1) AS __np FROM (SELECT {keys}, 0 AS __side FROM gn UNION ALL "
            f"SELECT {keys}, 1 AS __side FROM pn) GROUP BY {kn}) WHERE __ng <> __np")
        left = self.con.execute("SELECT coalesce(sum(__ng + __np), 0) FROM __cells").fetchall()[0][0]
        if left == 0:
            return True
        total = self.con.execute("SELECT count(*) FROM gn").fetchall()[0][0] * 2
        if left > max(1000, total // 20):  # not float noise at a few boundaries: leave it to the exact diff
            return False
        exact_keys = [f"k{i}" for i in range(len(cols)) if i not in numeric]
        # Two filters, the first without the logarithms: the exact columns of a left-over cell.
        xh = f"hash({', '.join(exact_keys)})" if exact_keys else "0"
        self.con.execute(f"CREATE OR REPLACE TEMP TABLE __cellh AS SELECT DISTINCT {xh} AS xh, hash({kn}) AS kh FROM __cells")
        # The rows of the unbalanced cells, found by the hash of their cell (a collision only
        # brings in a whole balanced cell, whose rows then pair here instead).
        kh = f"hash({', '.join(snapped)})"
        xr = f"hash({', '.join(cols[i] for i in range(len(cols)) if i not in numeric)})" if exact_keys else "0"
        c = ", ".join(cols)
        pick = (f"FROM (SELECT * FROM {{t}} WHERE {xr} IN (SELECT xh FROM __cellh)) WHERE {kh} IN (SELECT kh FROM __cellh)")
        self.con.execute(
            f"CREATE OR REPLACE TEMP TABLE __resid AS SELECT {c}, count(*) FILTER (WHERE __side = 0) AS __ng, "
            f"count(*) FILTER (WHERE __side = 1) AS __np FROM (SELECT {c}, 0 AS __side {pick.format(t='gn')} "
            f"UNION ALL SELECT {c}, 1 AS __side {pick.format(t='pn')}) GROUP BY {c}")
        return self._sort_pairing("__resid", cols, numeric, spec)

    def _tolerant_bag_equal(self, cols: list[str], numeric: list[int], spec: CompareSpec) -> bool:
        """Whether the rows that did not match exactly (``__diff``) pair up within tolerance."""
        return self._sort_pairing("__diff", cols, numeric, spec)

    @staticmethod
    def _snap_keys(cols: list[str], numeric: list[int], spec: CompareSpec, alias: str = "") -> list[str] | None:
        """Per column the SQL of its cell: the value itself, or for a finite non-zero
        number ``sign * floor(ln|x| / d)`` with ``d = float_rel_tol / 2``. Same cell
        means ``|a - b| < d * max(|a|, |b|)``, half the tolerance, which leaves room for
        the rounding of ``ln``. NULL, NaN, infinities and zero keep their own value, so
        they share a cell only with themselves. ``None`` when the tolerance is too small
        for the cell numbers to stay exact in a double."""
        if not 1e-9 <= spec.float_rel_tol < 1:
            return None
        d = spec.float_rel_tol / 2
        out = []
        for i, col in enumerate(cols):
            c = alias + col
            if i in numeric:
                out.append(f"CASE WHEN {c} IS NULL OR NOT isfinite({c}) OR {c} = 0 THEN {c} "
                           f"ELSE sign({c}) * (floor(ln(abs({c})) / {d!r}) + 8796093022208) END")
            else:
                out.append(c)
        return out

    def _sort_pairing(self, table: str, cols: list[str], numeric: list[int], spec: CompareSpec) -> bool:
        """Pair the rows of ``table`` (rows with multiplicities ``__ng``/``__np``, expanded)
        by sorting both sides the same way, then compare pairs within tolerance; a second
        pass sorts on rounded numbers so noise across a sort boundary cannot split a match."""
        c = ", ".join(cols)
        side = ("SELECT {c} FROM (SELECT {c}, unnest(range({n})) FROM " + table + " WHERE {n} > 0)")
        a_rows = side.format(c=c, n="__ng - __np")
        b_rows = side.format(c=c, n="__np - __ng")
        for rounding in (False, True):
            keys = []
            for i, col in enumerate(cols):
                if rounding and i in numeric:
                    keys.append(f"CASE WHEN {col} IS NULL OR isnan({col}) OR {col} = 0 THEN {col} ELSE "
                                f"round({col} / pow(10, floor(log10(abs({col})))), 4) * pow(10, floor(log10(abs({col})))) END")
                keys.append(col)
            order = ", ".join(f"{k} NULLS LAST" for k in keys)
            bad = self.con.execute(
                f"WITH a AS (SELECT *, row_number() OVER (ORDER BY {order}) AS rn FROM ({a_rows})), "
                f"b AS (SELECT *, row_number() OVER (ORDER BY {order}) AS rn FROM ({b_rows})) "
                f"SELECT count(*) FROM a FULL JOIN b USING (rn) "
                f"WHERE a.rn IS NULL OR b.rn IS NULL OR NOT ({self._row_eq(cols, numeric, spec)})").fetchall()[0][0]
            if bad == 0:
                return True
        return False

    def _order_equal(self, cols: list[str], numeric: list[int], spec: CompareSpec,
                     stored_groups: bool = False) -> tuple[bool, dict | None]:
        """Rows in gold order; rows tied on the gold's sort keys form a bag."""
        if stored_groups:
            self.con.execute("CREATE OR REPLACE TEMP TABLE __grp AS SELECT __pos, __gid AS gid FROM __g")
            return self._groups_equal(cols, numeric, spec)
        keys = [cols[i] for i in spec.sort_keys if i < len(cols)] if spec.sort_keys is not None else cols
        key_eq = self._row_eq(keys, [k for k, c in enumerate(keys) if cols.index(c) in numeric], spec) if keys else "TRUE"
        # keys must agree position by position
        row = self.con.execute(
            f"SELECT a.__pos FROM gn a JOIN pn b USING (__pos) WHERE NOT ({key_eq}) "
            f"ORDER BY a.__pos LIMIT 1").fetchall()
        if row:
            row = row[0]
            return False, self._diff_at(int(row[0]), cols)
        if keys == cols:
            return True, None
        # within each tie group (consecutive equal keys in gold order) rows compare as a bag
        change = " OR ".join(f"{k} IS DISTINCT FROM lag({k}) OVER (ORDER BY __pos)" for k in keys)
        self.con.execute(f"CREATE OR REPLACE TEMP TABLE __grp AS SELECT __pos, sum(brk) OVER (ORDER BY __pos) AS gid "
                         f"FROM (SELECT __pos, CASE WHEN __pos = 0 OR {change} THEN 1 ELSE 0 END AS brk FROM gn)")
        return self._groups_equal(cols, numeric, spec)

    def _groups_equal(self, cols: list[str], numeric: list[int], spec: CompareSpec) -> tuple[bool, dict | None]:
        """Within each tie group of ``__grp`` rows compare as a bag; groups keep their order."""
        c = ", ".join(cols)
        bad_gid = self.con.execute(
            f"SELECT min(gid) FROM (SELECT gid, {c} FROM gn JOIN __grp USING (__pos) EXCEPT ALL "
            f"SELECT gid, {c} FROM pn JOIN __grp USING (__pos))").fetchall()[0][0]
        if bad_gid is None or (numeric and self._tolerant_groups(cols, numeric, spec)):
            return True, None
        first = self.con.execute("SELECT min(__pos) FROM __grp WHERE gid = ?", [bad_gid]).fetchall()[0][0]
        return False, self._diff_at(int(first), cols)

    def _tolerant_groups(self, cols: list[str], numeric: list[int], spec: CompareSpec) -> bool:
        order = ", ".join(f"{c} NULLS LAST" for c in cols)
        bad = self.con.execute(
            f"WITH a AS (SELECT gn.*, gid, row_number() OVER (PARTITION BY gid ORDER BY {order}) AS rn FROM gn JOIN __grp USING (__pos)), "
            f"b AS (SELECT pn.*, gid, row_number() OVER (PARTITION BY gid ORDER BY {order}) AS rn FROM pn JOIN __grp USING (__pos)) "
            f"SELECT count(*) FROM a JOIN b USING (gid, rn) WHERE NOT ({self._row_eq(cols, numeric, spec)})").fetchall()[0][0]
        return bad == 0

    def _diff_at(self, pos: int, cols: list[str]) -> dict[str, Any]:
        c = ", ".join(cols) if cols else "NULL"
        g = self.con.execute(f"SELECT {c} FROM __g WHERE __pos = ?", [pos]).fetchall()
        p = self.con.execute(f"SELECT {c} FROM __p WHERE __pos = ?", [pos]).fetchall()
        g, p = (g[0] if g else None), (p[0] if p else None)
        return {"position": pos, "gold": jsonable(list(g) if g else None), "predicted": jsonable(list(p) if p else None)}

    def _column_equal(self, i: int, numeric: list[int], spec: CompareSpec) -> bool:
        """Whether gold column ``i`` holds the same multiset of values in the prediction."""
        c = f"c{i}"
        m = self.con.execute(f"SELECT count(*) FROM (SELECT {c} FROM gn EXCEPT ALL SELECT {c} FROM pn)").fetchall()[0][0]
        e = self.con.execute(f"SELECT count(*) FROM (SELECT {c} FROM pn EXCEPT ALL SELECT {c} FROM gn)").fetchall()[0][0]
        if m == 0 and e == 0:
            return True
        if i in numeric:
            bad = self.con.execute(
                f"WITH a AS (SELECT {c}, row_number() OVER (ORDER BY {c} NULLS LAST) rn FROM gn), "
                f"b AS (SELECT {c}, row_number() OVER (ORDER BY {c} NULLS LAST) rn FROM pn) "
                f"SELECT count(*) + (SELECT abs((SELECT count(*) FROM gn) - (SELECT count(*) FROM pn))) "
                f"FROM a JOIN b USING (rn) WHERE NOT {self._tol('a.' + c, 'b.' + c, spec)}").fetchall()[0][0]
            return bad == 0
        return False

    def _locate_columns(self, gk: list[str], pk: list[str], gn: int, pn: int) -> dict[int, int]:
        """With an arity mismatch, which gold columns appear (as a multiset) in the prediction."""
        found: dict[int, int] = {}
        if gn != pn or gn > 200_000:
            return found
        for i, a in enumerate(gk):
            for j, b in enumerate(pk):
                if j in found.values() or not _compatible(a, b):
                    continue
                ce = _canon("x", a, b)
                q = (f"SELECT (SELECT count(*) FROM (SELECT {ce.format(t='g').replace('g.x', f'g.c{i}')} FROM __g g EXCEPT ALL "
                     f"SELECT {ce.format(t='p').replace('p.x', f'p.c{j}')} FROM __p p)) + "
                     f"(SELECT count(*) FROM (SELECT {ce.format(t='p').replace('p.x', f'p.c{j}')} FROM __p p EXCEPT ALL "
                     f"SELECT {ce.format(t='g').replace('g.x', f'g.c{i}')} FROM __g g))")
                if self.con.execute(q).fetchall()[0][0] == 0:
                    found[i] = j
                    break
        return found

    def _overlap(self, res: CompareResult, counts: tuple[int, int] | None) -> None:
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

    def _row_samples(self, res: CompareResult, cols: list[str] | None) -> None:
        if cols is None:
            res.missing_rows = [jsonable(list(r)) for r in self.con.execute(
                f"SELECT COLUMNS(lambda c: c LIKE 'c%') FROM __g ORDER BY __pos LIMIT {PREVIEW_ROWS}").fetchall()]
            res.extra_rows = [jsonable(list(r)) for r in self.con.execute(
                f"SELECT COLUMNS(lambda c: c LIKE 'c%') FROM __p ORDER BY __pos LIMIT {PREVIEW_ROWS}").fetchall()]
            return
        c = ", ".join(cols)
        res.missing_rows = [jsonable(list(r)) for r in self.con.execute(
            f"SELECT {c} FROM __diff WHERE __ng > __np ORDER BY ALL LIMIT {PREVIEW_ROWS}").fetchall()]
        res.extra_rows = [jsonable(list(r)) for r in self.con.execute(
            f"SELECT {c} FROM __diff WHERE __np > __ng ORDER BY ALL LIMIT {PREVIEW_ROWS}").fetchall()]
        if res.column_matches and res.cell_overlap == 0:
            res.cell_overlap = round(sum(res.column_matches) / len(res.column_matches), 6)


def _renamed(t: pa.Table) -> pa.Table:
    return t.rename_columns([f"c{i}" for i in range(t.num_columns)])


def _positional(t: pa.Table, prefix: str) -> pa.Table:
    """Rename columns to c0..cn (names are ignored) and add the row position."""
    return _renamed(t).append_column("__pos", _positions(t.num_rows))


def _positions(n: int) -> pa.Array:
    if n <= SMALL_ROWS:
        return pa.array(range(n), pa.int64())
    return duckdb.sql(f"SELECT range::BIGINT AS __pos FROM range({n})").to_arrow_table().column(0).combine_chunks()


def _canon(col: str, a: str, b: str, ta: pa.DataType | None = None, tb: pa.DataType | None = None) -> str:
    """SQL that brings a column to the form compared; ``{t}`` is the table alias. Two
    columns of the same 64-bit integer or double type are compared as they are: the
    cast would not change which values are equal, only make the hash keys wider."""
    ref = "{t}." + col
    if ta is not None and ta == tb and (pat.is_int64(ta) or pat.is_float64(ta)):
        return ref
    if "number" in (a, b):
        return f"CAST({ref} AS DOUBLE)"
    if a == "integer" or b == "integer":
        return f"CAST({ref} AS HUGEINT)"
    if a in ("boolean", "string", "date", "timestamp", "timestamptz", "time") and a == b:
        return ref
    if "null" in (a, b):
        other = b if a == "null" else a
        if other in ("boolean", "string", "date", "timestamp", "timestamptz", "time", "null"):
            return ref if a == b else f"CAST({ref} AS VARCHAR)"
    return f"CAST({ref} AS VARCHAR)"
