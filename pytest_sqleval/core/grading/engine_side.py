"""What runs in the engine process on the grading's behalf (``engines.host`` handler).

Why there: results stay in that process. Gold answers are executed once and stored as
Arrow files on disk (the gold store), a candidate is executed and compared with its
stored gold there, and so are the peers' verdicts; only the evidence crosses the pipe.
"""
from __future__ import annotations

import functools
import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

from ..comparison import ComparePolicy
from ..engines.host import executed, partial, started

GOLD_CHECKSUM = "arrow_sha256"  # the .json's record of its .arrow's bytes
MAX_CHOICES = 16  # valid choices of the rows a LIMIT below a gold's top level cuts, evaluated one by one
_GOLD_FIELDS = ("rows", "columns", "types")


# -- the gold store ----------------------------------------------------------------------
def _file_sha256(path: Path) -> str:
    import hashlib
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def read_checked_table(path: Path, sha256: str) -> Any:
    """The Arrow table a stored answer file holds if its bytes have ``sha256``, else None:
    the file is read once, for the checksum and the table both (a variant's many small gold
    answers are read once per case: a second read of each through ``pyarrow.feather`` cost
    ten times the rest)."""
    import hashlib

    import pyarrow as pa
    import pyarrow.ipc as ipc
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if hashlib.sha256(data).hexdigest() != sha256:
        return None
    return ipc.open_file(pa.py_buffer(data)).read_all()


def read_stored_gold(gold_dir: str | Path, key: str) -> dict[str, Any] | None:
    """A stored gold answer's description, if its entry is whole: the ``.json`` is an object
    with a gold answer's fields and the SHA-256 of the ``.arrow`` beside it, and the
    ``.arrow`` has those bytes. Anything else (a part missing, bad JSON, other bytes, no
    checksum: an entry written before checksums) is a damaged entry: None, so the gold is
    computed again and the entry rewritten (atomically, over the damaged one). A damaged
    cache thus costs one gold execution, never a verdict against the prediction."""
    gold_dir = Path(gold_dir)
    meta = _read_meta(gold_dir, key)
    if meta is None:
        return None
    try:
        if _file_sha256(gold_dir / f"{key}.arrow") != meta[GOLD_CHECKSUM]:
            return None
        ties = meta.get("ties")  # the whole tie group a LIMIT cuts, beside the answer (engine_side._store)
        if ties is not None and _file_sha256(gold_dir / f"{key}.ties.arrow") != ties.get(GOLD_CHECKSUM):
            return None
        alternatives = (meta.get("alternatives") or {}).get(GOLD_CHECKSUM) or []  # the other answers it may give
        if any(_file_sha256(gold_dir / f"{key}.alt{i}.arrow") != sha for i, sha in enumerate(alternatives)):
            return None
    except OSError:
        return None
    return meta


def _read_meta(gold_dir: Path, key: str) -> dict[str, Any] | None:
    """A stored answer's ``.json``, if it is an object with the fields and a checksum."""
    try:
        meta = json.loads((gold_dir / f"{key}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not (isinstance(meta, dict) and all(f in meta for f in _GOLD_FIELDS)
            and isinstance(meta.get(GOLD_CHECKSUM), str)):
        return None
    return meta


# -- the handler -------------------------------------------------------------------------
def request_policy(req: dict[str, Any]) -> ComparePolicy:
    """The case's comparison policy a gold or grade request carries: ``ComparePolicy.to_wire``
    on the grader's side (``pipeline.SuiteGrader._gold_request``), read back here only."""
    return ComparePolicy.from_wire(req["spec"])


def variant_policy(spec: ComparePolicy, pinned_gold: Any) -> ComparePolicy:
    """The policy a variant is compared under: the case's, with the absolute slack its
    relative tolerance gave on the pinned database. A variant holds fewer rows, so a sum
    is smaller there and the same absolute error is a larger relative one: a prediction
    within tolerance on the pinned data (``round(sum(x))`` for ``sum(x)``) must not become
    a coincidence only because the variant is small. The slack is ``float_rel_tol`` times
    the smallest, over the gold's float columns, of the largest magnitude the column has on
    the pinned database: no column gets more slack than the pinned comparison gave it."""
    import numpy as np

    from .compare import kind_of, numpy_numbers
    if pinned_gold is None or not spec.float_rel_tol:
        return spec
    scales = []
    for field, column in zip(pinned_gold.schema, pinned_gold.columns):
        if kind_of(field.type) != "float":
            continue
        values = np.abs(numpy_numbers(column.drop_null()).astype("float64"))  # not to_numpy: it imports pandas
        values = values[np.isfinite(values)]
        if values.size:
            scales.append(float(values.max()))
    if not scales or min(scales) == 0:
        return spec
    return replace(spec, float_abs_tol=max(spec.float_abs_tol, spec.float_rel_tol * min(scales)))


#: a candidate's variants run this many at a time where the engine allows it (``side_by_side``):
#: a warm rerun's engine process spends most of its time there, one query per variant
VARIANT_LANES = 2

#: errors that say how a run went (its time limit on a loaded machine, its caps, a failure of the
#: engine), not what the query is: never stored, so one slow run cannot settle a later run's verdict
RUN_DEPENDENT_ERRORS = frozenset({"timeout", "resource_exceeded", "unknown_error"})


class GradingHandler:
    """Serves the ``gold`` and ``grade`` requests on the engine process's sandbox."""

    def __init__(self, db: Any, limits: Any, gold_dir: str) -> None:
        from .compare import Comparator
        self.db = db
        self.limits = limits
        self._variant_dbs: dict[str, Any] = {}  # variant file -> its sandbox, opened on first use
        self._lane: Any = None  # the thread a candidate's second variant runs on (``_run_side_by_side``)
        self.cmp = Comparator(threads=max(1, int(limits.threads)))
        self.gold_dir = Path(gold_dir)
        self._gold_tables: dict[str, Any] = {}
        self._gold_sql: dict[str, str] = {}  # gold key -> gold SQL, for the peers' rules
        self._ties: dict[str, tuple[dict[str, Any], Any] | None] = {}  # gold key -> its LIMIT's whole tie group
        self._metas: dict[str, dict[str, Any] | None] = {}  # gold key -> its stored description
        self._analyses: dict[tuple[str, str], Any] = {}  # (folder, engine dialect) -> gold_analysis.GoldAnalyses
        self._stored_here: set[str] = set()  # the gold keys this handler stored (see ``gold``)
        self._gold_py: dict[str, list[tuple[Any, ...]]] = {}  # gold key -> its stored answer's rows (_gold_rows)
        self._gold_variants: dict[tuple[str, str], Any] = {}  # (gold key, Spider's variant SQL) -> its answer

    def gold(self, req: dict[str, Any], out: Any) -> dict[str, Any]:
        """Execute a gold query (twice, to catch nondeterminism) and store its answer.
        ``cached``: the answer was in the gold store when the run began, so two runs from the
        same store say the same, whichever case's request (sent ahead, in timing order) or
        shard stored it first; ``ran``: executed for this request."""
        key = req["key"]
        self._gold_sql[key] = req["sql"]
        stored = read_stored_gold(self.gold_dir, key)  # a damaged entry is computed again
        if stored is not None:
            return {"cached": key not in self._stored_here, **stored}
        answer = self._run_gold(self.db, req, out, resolve_ties=True)
        if "error" in answer:
            return {"cached": False, "ran": True, **answer}
        table, meta = answer["table"], answer["meta"]
        if meta["problem"] is None:
            _store(self.gold_dir, key, table, meta, answer.get("group"), answer.get("alternatives"))
            self._stored_here.add(key)
        # Not kept in memory: the grading reads the stored file memory-mapped (``_gold_table``),
        # so the process holds no copy of its gold answers, only pages the kernel can drop.
        del table, answer
        return {"cached": False, "ran": True, **meta}

    def analysed_gold(self, req: dict[str, Any], out: Any) -> dict[str, Any]:
        """A gold the grader has not analysed yet, sent ahead of its case: analysed here
        (``gold_analysis``: parse, ordering, its side of the structural diff) and stored
        where the grader reads analyses, its request built as the grader builds it
        (``gold_analysis.gold_request``, under the case's policy resolved against the gold)
        and answered as ``gold``. So a first run's gold parses cost the engine process,
        which runs beside pytest, not the grading process. Returns the analysis, the key
        and the gold's description; ``analysis_error`` for a gold that cannot be analysed
        (the grader then analyses it itself, for its own error)."""
        from ..errors import GoldError
        from .gold_analysis import GoldAnalyses, gold_request
        analyses = self._analyses.get((req["folder"], req["engine_dialect"]))
        if analyses is None:
            analyses = self._analyses[(req["folder"], req["engine_dialect"])] = GoldAnalyses(
                Path(req["folder"]), req["dialect"], req["engine_dialect"], memory=16)
        try:
            static = analyses.get(req["gold_sql"], req["dialect"])
        except GoldError as exc:
            return {"analysis_error": str(exc)}
        policy = ComparePolicy.from_wire(req["case_spec"]).for_gold(static.order)
        request = gold_request(static, policy, req["identity"])
        return {"analysis": static.to_json(), "key": request["key"], "meta": self.gold(request, out)}

    def _run_gold(self, db: Any, req: dict[str, Any], out: Any, resolve_ties: bool = False) -> dict[str, Any]:
        """Run a gold request on ``db``: ``{"error": record}``, or ``{"table", "meta"}`` where
        the table carries its tie groups when ordered and ``meta["problem"]`` says why the
        answer cannot be trusted (two runs differ, a LIMIT cuts through ties and they are
        not resolved). With ``resolve_ties``, a LIMIT that cuts through a tie group adds
        ``group`` (the whole group, from the gold without its LIMIT, under the case's limits)
        and ``meta["ties"]``, and the answer is graded tie-aware (``compare_topk``); a top-level
        LIMIT without ORDER BY that keeps k of more rows is one tie group of every row; a
        LIMIT below the top level that cuts through ties is ``meta["ambiguous"]`` (a mismatch
        is then not graded, ``verdict.decide``), a problem without ``resolve_ties``."""
        import pyarrow as pa

        from .compare import GID_COLUMN
        from .execute import execution_record
        exec_sql = req.get("exec_sql") or req["sql"]
        first = db.run(exec_sql)
        if first.error is not None:
            executed(out)
            return {"error": execution_record(first)}
        started(out)  # each run has the whole limit
        second = db.run(exec_sql)
        executed(out)
        spec = request_policy(req)
        key_positions = req.get("key_positions")
        if key_positions is not None:  # negative positions count from the end (appended keys)
            key_positions = [p if p >= 0 else first.table.num_columns + p for p in key_positions]
        problem, ties = None, None
        # two runs of the gold, compared by position, with ties on the keys as they ran
        same = replace(spec, sort_keys=None if key_positions is None else tuple(key_positions), column_order="position")
        limit = req.get("limit")
        unordered = bool(req.get("unordered_limit"))
        if req.get("probe_sql") and (key_positions is not None or unordered) and first.table.num_rows == limit:
            started(out)
            probe = db.run(req["probe_sql"])
            executed(out)
            if probe.table is not None and probe.table.num_rows > limit:
                rows = [] if unordered else _rows(probe.table.select(key_positions).slice(limit - 1, 2))
                if unordered or (len(rows) == 2 and rows[0] == rows[1]):
                    ties = self._tie_group(db, req, first.table, key_positions, out) if resolve_ties else None
                    if not isinstance(ties, tuple):
                        problem = ((f"LIMIT {limit} without ORDER BY keeps {limit} of more rows, whichever the "
                                    "engine returns first, so the answer depends on row order; add an ORDER BY "
                                    "with a tiebreaker column") if unordered else
                                   (f"LIMIT {limit} cuts through rows tied on the ORDER BY keys, so the answer "
                                    f"depends on tie order; add a tiebreaker column to ORDER BY")) + (ties or "")
        cuts: list[tuple[str, dict[str, Any]]] = []  # the LIMITs below the top level that cut through ties
        for check in req.get("nested_limits") or ():
            if problem is not None or len(cuts) > 1:
                break
            started(out)
            why = nested_cut(db, check)
            executed(out)
            if why is not None:
                cuts.append((why, check))
                if not resolve_ties:
                    problem = f"{why}, so its answer depends on tie order; add a tiebreaker column"
        ambiguous = cuts[0][0] if cuts else None
        n_keep = first.table.num_columns - (req.get("n_appended") or 0)
        table = first.table.select(list(range(n_keep)))
        alternatives = None
        if cuts and problem is None and not isinstance(ties, tuple):
            visible = replace(spec, column_order="position")  # the gold's choices, by position
            got = (self._choices(db, cuts[0][1], table, visible, out) if len(cuts) == 1
                   else "two LIMITs below the top level cut through ties")
            if isinstance(got, tuple):  # every valid choice evaluated: the gold's answers are known
                alternatives = {"tables": got[0], "choices": got[1], "limit": cuts[0][1]["limit"], "why": ambiguous,
                                **got[2]}
                ambiguous = None
            else:
                ambiguous = f"{ambiguous} ({got})"
        gids = self.cmp.tie_groups(first.table, key_positions) if spec.ordered and key_positions is not None else None
        group = None
        if isinstance(ties, tuple):
            before, group, candidates = ties[0], ties[1].select(list(range(n_keep))), ties[2]
            if unordered:  # every row of the whole result is in the one tie group
                gids = pa.array([1] * table.num_rows, pa.int64())
        if problem is None:
            if second.error is not None:
                problem = "nondeterministic: two executions of the gold query gave different results"
            elif not self.cmp.compare(first.table, second.table, same).match:
                again = second.table.select(list(range(n_keep)))
                if (group is None or gids is None or not self.cmp.compare_topk(
                        table.append_column(GID_COLUMN, gids), group, before, again, spec).match) and not (
                        alternatives is not None and any(self.cmp.compare(alt, again, visible).match
                                                         for alt in alternatives["tables"])):
                    problem = ("nondeterministic: two executions of the gold query gave different results"
                               + (f" ({ambiguous or (alternatives or {}).get('why')})" if cuts else ""))
        meta = {"rows": table.num_rows, "columns": table.column_names,
                "types": [str(f.type) for f in table.schema], "elapsed_ms": first.elapsed_ms,
                "problem": problem, "preview": _preview(table), "null_only": null_only(table)}
        if group is not None and problem is None:
            meta["ties"] = {"limit": limit, "before": before, "group_rows": group.num_rows, "candidates": candidates,
                            **({"unordered": True} if unordered else {})}
        if ambiguous is not None and problem is None:
            meta["ambiguous"] = ambiguous
        if alternatives is not None and problem is None and alternatives["tables"]:
            meta["alternatives"] = {k: v for k, v in alternatives.items() if k != "tables"}
        if problem is None and gids is not None:
            table = table.append_column(GID_COLUMN, gids)
        return {"table": table, "meta": meta, "group": group if problem is None else None,
                "alternatives": alternatives["tables"] if alternatives is not None and problem is None else None}

    def _choices(self, db: Any, check: dict[str, Any], table: Any, spec: Any,
                 out: Any) -> tuple[list[Any], int, dict[str, Any]] | str:
        """Every answer the gold may give when a LIMIT below its top level cuts through tied
        rows: the gold run once per valid choice of them (``check["choice_sql"]``: the rows
        ahead of the tie group and any k - (those) of the group, ranked by the subquery's
        ORDER BY), when there are at most ``MAX_CHOICES``. Returns the answers other than
        ``table`` (the engine's own; none: the choice never changes the answer), the
        number of choices and the tie group's evidence (its rows, the subquery's rows, the
        rows ahead of it, whether it is every row); else why not."""
        import itertools
        import math

        from ..ordering import CHOICE_MARKER
        if not check.get("choice_sql") or not check.get("full_sql"):
            return "its output columns cannot be named to evaluate each choice"
        started(out)
        full = db.run(check["full_sql"])
        executed(out)
        if full.table is None:
            return f"the subquery without its LIMIT did not finish within the case's limits ({full.error.category})"
        k, keys = check["limit"], check.get("key_positions")
        if keys is None:  # no ORDER BY: any k of its rows
            before, size = 0, full.table.num_rows
        else:
            width = full.table.num_columns
            rows = _rows(full.table.select([p if p >= 0 else width + p for p in keys]))
            run = _tie_run(rows, rows[k - 1], k) if len(rows) >= k else None
            if run is None:
                return "the subquery without its LIMIT orders its rows differently"
            before, size = run
        count = math.comb(size, k - before)
        if count > MAX_CHOICES:
            return f"{count} valid choices of the tied rows, more than the {MAX_CHOICES} the grader evaluates"
        answers: list[Any] = []
        for chosen in itertools.combinations(range(before + 1, before + size + 1), k - before):
            ranks = ", ".join(str(r) for r in [*range(1, before + 1), *chosen])
            started(out)
            ran = db.run(check["choice_sql"].replace(CHOICE_MARKER, ranks))
            executed(out)
            if ran.table is None:
                return f"a choice of the tied rows does not run ({ran.error.category})"
            if ran.table.num_columns != table.num_columns:
                return "a choice of the tied rows gives other columns"
            if not any(self.cmp.compare(known, ran.table, spec).match for known in [table, *answers]):
                answers.append(ran.table)
        return answers, count, {"group_rows": size, "candidates": full.table.num_rows, "before": before,
                                "all_tied": before == 0 and size == full.table.num_rows,
                                **({"unordered": True} if keys is None else {})}

    def _tie_group(self, db: Any, req: dict[str, Any], top: Any, key_positions: list[int] | None,
                   out: Any) -> tuple[int, Any, int] | str:
        """The tie group a gold's LIMIT cuts through: ``(rows ahead of it, every row of it,
        the rows the gold without its LIMIT ranks)`` from the gold run without its LIMIT,
        bounded by the case's limits (its rows, bytes and time, and the process guard); else
        why not, for the gold's problem. Without ORDER BY (``key_positions`` None) the group
        is the whole result."""
        if not req.get("full_sql"):
            return " (with an OFFSET the tie group is not resolved)"
        started(out)
        full = db.run(req["full_sql"])
        executed(out)
        if full.table is None:
            return (f" (the gold without its LIMIT, run to find the whole tie group, did not finish within the "
                    f"case's limits: {full.error.category})")
        if key_positions is None:
            return 0, full.table, full.table.num_rows
        limit = req["limit"]
        last = _rows(top.select(key_positions).slice(limit - 1, 1))[0]
        run = _tie_run(_rows(full.table.select(key_positions)), last, limit)
        if run is None:
            return " (the gold without its LIMIT orders its rows differently)"
        return run[0], full.table.slice(*run), full.table.num_rows

    def grade(self, req: dict[str, Any], out: Any) -> dict[str, Any]:
        """Execute a candidate and compare it with the stored gold answer."""
        from .execute import execution_record
        outcome = self.db.run(req["sql"])
        executed(out)
        result: dict[str, Any] = {"execution": execution_record(outcome), "compare": None}
        if req.get("structure"):  # the structure layer's diff, made here beside the execution (structure_on_wire)
            result["structure"] = structure_on_wire(req["structure"])
        if outcome.table is None:
            self._no_result(outcome.error, result, req, out)
            return result
        gold = self._gold_table(req["gold_key"])
        spec = request_policy(req)
        result["compare"] = self._against(req["gold_key"], gold, outcome.table, spec)
        result["pred_preview"] = _preview(outcome.table)
        if req.get("alternatives"):  # several golds: the first that matches, else the nearest
            self._other_golds(req, outcome.table, result)
        first = result.get("gold_index", req.get("gold_index", 0)) == req.get("gold_index", 0)
        sbs = self._peers_any_gold(gold, outcome.table, result, req, out)
        if sbs is not None:
            result["compare"]["sidebyside"] = sbs
        if req.get("spider2"):  # Spider 2.0's rule reads every gold CSV of the case, whichever gold we matched
            result["compare"]["sidebyside"] = {**(result["compare"].get("sidebyside") or {}),
                                               **spider2_verdict(req["spider2"], outcome.table, result["compare"])}
        if req.get("variants") and result["compare"]["match"] and first:  # a match: graded on the variants too
            partial(out, {**result, "variants": {"error": "a query on a database variant did not finish in time; "
                                                          "the engine process was killed"}})
            result["variants"] = self.variants({**req["variants"], "sql": req["sql"]}, out)
        return result

    def _against(self, key: str, gold: Any, pred: Any, spec: ComparePolicy) -> dict[str, Any]:
        """The prediction's result against one stored gold answer: tie-aware where its LIMIT
        cuts a tie group, against its other valid answers where a LIMIT below its top level does."""
        ties = self._gold_ties(key)
        compare = (self.cmp.compare(gold, pred, spec) if ties is None else self.cmp.compare_topk(
            gold, ties[1], ties[0]["before"], pred, spec, candidates=ties[0].get("candidates"),
            unordered=bool(ties[0].get("unordered")))).to_dict()
        stored = self._stored_meta(key) or {}
        if stored.get("ambiguous"):  # a LIMIT below the gold's top level cuts through ties: a mismatch is not graded
            compare["gold_ambiguous"] = stored["ambiguous"]
        elif stored.get("alternatives"):
            compare = self._other_choice(key, stored["alternatives"], pred, spec, compare)
        return compare

    def _other_golds(self, req: dict[str, Any], pred: Any, result: dict[str, Any]) -> None:
        """A case of several golds: the prediction against each of the others in turn until
        one matches (each gold's answer stored once; one comparison per gold). ``golds`` says
        how it compared with each gold tried; ``gold_index`` is the gold whose comparison
        ``compare`` now holds: the one it matched, else the nearest (``nearness``)."""
        first = req.get("gold_index", 0)
        tried = [(first, result["compare"])]
        for alt in req["alternatives"]:
            if tried[-1][1]["match"]:
                break
            try:
                gold = self._gold_table(alt["gold_key"])
            except OSError:  # not stored (it failed): no evidence from it
                continue
            tried.append((alt["index"], self._against(alt["gold_key"], gold, pred, request_policy(alt))))
        index, chosen = max(tried, key=lambda t: nearness(t[1]))
        result["golds"] = [{"index": i, **gold_summary(c)} for i, c in tried]
        result["gold_index"] = index
        result["compare"] = chosen

    def _no_result(self, error: Any, result: dict[str, Any], req: dict[str, Any], out: Any) -> None:
        """A candidate that gave no result. Stopped at a cap with more rows read than the gold
        has (past ``max_rows``, or before the byte cap), its size decides: ``over_cap`` (the
        rows it exceeds, the gold's rows) for the verdict, which fails it by cardinality, and
        the peers' verdicts the size decides. A prediction Spider's evaluator rewrites before
        running it (``peers.official_rewrites``) gets Spider's verdict on the rewritten query;
        any other error is wrong under both rules."""
        from .spider_text import official_rewrites
        cap = getattr(error, "rows_over", None)
        if cap is None and not official_rewrites(req["sql"]):
            return
        try:
            gold = self._gold_table(req["gold_key"])
        except OSError:  # no stored answer (the gold itself failed): nothing to decide against
            return
        if cap is not None and gold.num_rows <= cap:  # else its size decides nothing: the peers' undecided
            result["over_cap"] = {"cap": cap, "gold_rows": gold.num_rows, "by": error.cap}
        result["sidebyside"] = self._side_by_side(gold, None, result, req, out, pred_over_cap=cap, ours=False)

    def official(self, req: dict[str, Any], out: Any) -> dict[str, Any]:
        """BIRD's and Spider's verdicts on a case we do not grade, because its gold cannot be
        trusted (it returns nothing, or differs between runs): the prediction and, unless
        its answer is stored, the gold (``gold_sql``, as written, run once as the official
        evaluators do) under the case's limits, then the rules on the two results; and
        Spider 2.0's (``spider2``: its gold CSVs, which our gold query's problem does not touch)."""
        pred: list[Any] = []
        result = self._official(req, out, pred)
        if req.get("spider2"):
            verdict = spider2_verdict(req["spider2"], pred[0]) if pred else {"spider2": False}  # no result: wrong
            result["sidebyside"] = {**(result.get("sidebyside") or {"bird": False, "spider": False}), **verdict}
        return result

    def _official(self, req: dict[str, Any], out: Any, pred: list[Any]) -> dict[str, Any]:
        from .execute import execution_record
        from .spider_text import current_year, join_spaced_operators, official_rewrites
        result: dict[str, Any] = {"execution": None, "compare": None}
        partial(out, {**result, "sidebyside": {"bird": False, "spider": False, "note": (
            "the prediction did not finish within the case's limits: both rules score a timeout wrong")}})
        started(out)
        outcome = self.db.run(req["sql"])
        executed(out)
        result["execution"] = execution_record(outcome)
        if outcome.table is not None:
            pred.append(outcome.table)
        cap = getattr(outcome.error, "rows_over", None)
        if outcome.table is None and cap is None and not official_rewrites(req["sql"]):
            return result  # an error or a timeout: both rules score it wrong (reports.sidebyside)
        stored = read_stored_gold(self.gold_dir, req["gold_key"]) if req.get("gold_key") else None
        if stored is not None:
            gold = self._gold_table(req["gold_key"])
        else:
            partial(out, {**result, "sidebyside": {"bird": None, "spider": None, "note": (
                "the gold did not finish within the case's limits")}})
            started(out)
            ran = self.db.run(req["gold_sql"])
            executed(out)
            spider_gold = current_year(join_spaced_operators(req["gold_sql"]))
            if ran.table is None and spider_gold != req["gold_sql"]:  # Spider's evaluator runs its rewrite
                started(out)
                rewritten = self.db.run(spider_gold)
                executed(out)
                if rewritten.table is not None:
                    result["gold_rows"] = rewritten.table.num_rows
                    sbs = self._side_by_side(rewritten.table, outcome.table, result, {**req, "gold_sql": spider_gold},
                                             out, pred_over_cap=cap)
                    result["sidebyside"] = {**sbs, "bird": False, "bird_reason": None, "note": (
                        f"the gold as written fails on this database ({ran.error.category}): BIRD scores the case "
                        "wrong; Spider's evaluator runs it rewritten (spaced operators joined, YEAR(CURDATE()) as 2020)")}
                    return result
            if ran.table is None:
                result["sidebyside"] = {"bird": False, "spider": None, "note": (
                    f"the gold fails on this database ({ran.error.category}): BIRD scores the case wrong, "
                    "Spider's evaluator stops")}
                return result
            gold = ran.table
        result["gold_rows"] = gold.num_rows
        result["sidebyside"] = self._side_by_side(gold, outcome.table, result, req, out, pred_over_cap=cap)
        return result

    # -- database variants ------------------------------------------------------------------
    def variants(self, req: dict[str, Any], out: Any) -> dict[str, Any]:
        """Run a candidate that matched on the pinned database on the case's variants, each
        against the gold's answer on that variant (run once, stored beside the gold store).
        Stops at the first variant where it differs: one is evidence enough to fail it. On an
        engine that allows it the variants go ``VARIANT_LANES`` at a time: a window's later
        variants then run (and a first run asks their gold) even where an earlier one differs,
        and are left out of the record, which is the record of one at a time."""
        from .execute import execution_record
        try:
            pinned = self._gold_table(req["gold"]["key"])
        except OSError:  # no stored answer: the case's own tolerance
            pinned = None
        spec = variant_policy(request_policy(req["gold"]), pinned)
        results: list[dict[str, Any]] = []
        lanes = VARIANT_LANES if getattr(self.db, "side_by_side", False) and int(self.limits.threads) <= 1 else 1
        todo = list(req["variants"])
        while todo:
            window, todo = todo[:lanes], todo[lanes:]
            golds = [(variant, self._variant_gold(variant, req["gold"], out)) for variant in window]
            paths = [variant["path"] for variant, gold in golds if gold.get("table") is not None]
            outcomes = iter(self._run_side_by_side(paths, req["sql"], out) if paths else [])
            for variant, gold in golds:
                entry: dict[str, Any] = {"variant": variant["index"], "kind": variant["kind"],
                                         "gold_rows": gold.get("rows"), "gold_problem": gold.get("problem")}
                results.append(entry)
                if gold.get("table") is None:
                    continue  # the gold fails or is untrustworthy here: no evidence either way
                outcome = next(outcomes)
                entry["execution"] = execution_record(outcome)
                if outcome.error is not None and outcome.error.category == "unfinished":
                    continue  # stopped by a loaded machine, not by its limit: no evidence either way
                if outcome.table is None:
                    entry["match"] = False
                    return {"results": results}
                compare = self.cmp.compare(gold["table"], outcome.table, spec)
                entry["match"] = compare.match
                if not compare.match:
                    entry["compare"] = compare.to_dict()
                    entry["gold_preview"] = gold["preview"]
                    entry["pred_preview"] = _preview(outcome.table)
                    return {"results": results}  # a later variant of the window ran for nothing: not recorded
        return {"results": results}

    def _run_side_by_side(self, paths: list[str], sql: str, out: Any = None) -> list[Any]:
        """``sql``'s outcome on each variant file, the first on this thread and the rest on
        the lane's thread at the same time. Each variant has its own connection, and each
        query is timed on the CPU clock of the thread that runs it (``QueryTime`` with one
        engine thread), so a verdict does not depend on what ran beside it. The wait for the
        lane is bounded by its query's own watchdog, as this thread's is."""
        started(out)
        if len(paths) == 1:
            outcomes = [self._variant_run(paths[0], sql)]
        else:
            if self._lane is None:
                from concurrent.futures import ThreadPoolExecutor
                self._lane = ThreadPoolExecutor(max_workers=VARIANT_LANES - 1, thread_name_prefix="sqleval-variant")
            beside = [self._lane.submit(self._variant_run, path, sql) for path in paths[1:]]
            outcomes = [self._variant_run(paths[0], sql)] + [future.result() for future in beside]
        executed(out)
        return outcomes

    def _variant_run(self, path: str, sql: str) -> Any:
        return self._variant_db(path).run(sql)

    def distill(self, req: dict[str, Any], out: Any) -> dict[str, Any]:
        """Which of a gold's mutants the pinned database tells apart from it, and which
        each variant does: the matrix distillation chooses a case's variants from. Each
        mutant runs under ``mutant_timeout_s``; one that overruns it on the pinned database
        (a dropped join condition's cross product) is left out everywhere (None), and one
        the pinned database tells apart is not run on the variants (None: the choice only
        counts what the database cannot tell)."""
        budget = req.get("mutant_timeout_s")
        refused = self._refused_by_plan(req)
        pinned = self._gold_table(req["gold"]["key"])
        spec = request_policy(req["gold"])
        on_variants = variant_policy(spec, pinned)
        places = [(self.db, pinned)] + [
            (self._variant_db(v["path"]), self._variant_gold(v, req["gold"], out).get("table")) for v in req["variants"]]
        killed: list[list[bool | None]] = [[] for _ in places]  # per place (pinned first), per mutant: told apart?
        for sql in req["mutants"]:
            settled = False  # too slow on the database, or told apart there: the variants add nothing
            for i, (db, gold) in enumerate(places):
                if gold is None or settled:
                    killed[i].append(None)
                    continue
                if i == 0 and refused(sql):  # a cross product, by its plan: as one past its time, unrun
                    killed[i].append(None)
                    settled = True
                    continue
                started(out)
                outcome = db.run(sql, timeout_s=budget)
                executed(out)
                if outcome.error is not None and outcome.error.category == "timeout":
                    killed[i].append(None)
                    settled = i == 0  # slow on the database: no evidence worth its cost on the variants
                    continue
                told_apart = outcome.table is None or not self.cmp.compare(
                    gold, outcome.table, spec if i == 0 else on_variants).match
                killed[i].append(told_apart)
                settled = i == 0 and told_apart
        return {"killed": killed, "gold_rows": [None if gold is None else gold.num_rows for _, gold in places],
                "informative": [gold is not None and gold.num_rows > 0 and not null_only(gold) for _, gold in places],
                "differs": [None] + [None if gold is None else _difference(pinned, gold, on_variants, self.cmp)
                                     for _, gold in places[1:]]}

    def _refused_by_plan(self, req: dict[str, Any]) -> Callable[[str], bool]:
        """Whether a near-miss is refused unrun on the pinned database: its plan rows
        (``plan_rows``) over ``mutant_plan_rows`` = (times the gold's plan rows, at least).
        Never where not asked or where the engine gives no plan (the time budget alone then).
        A dropped or reversed join condition's cross product ran to its time budget and was
        left out anyway; its plan says so from the content, not from the machine's load."""
        times_least = req.get("mutant_plan_rows")
        plan = getattr(self.db, "plan_rows", None)
        if not times_least or plan is None or not req["mutants"]:
            return lambda sql: False
        gold = req["gold"]
        ceiling = max(float(times_least[1]), float(times_least[0]) * (plan(gold.get("exec_sql") or gold["sql"]) or 0.0))
        return lambda sql: (plan(sql) or 0.0) > ceiling

    def _variant_db(self, path: str) -> Any:
        db = self._variant_dbs.get(path)
        if db is None:
            from ..engines import open_sandbox
            db = self._variant_dbs[path] = open_sandbox(path, self.limits)
        return db

    def _variant_gold(self, variant: dict[str, Any], req: dict[str, Any], out: Any) -> dict[str, Any]:
        """The gold's answer on one variant: ``table`` (None when the gold fails there or
        cannot be trusted), ``rows``, ``problem``, ``preview``; stored per variant content."""
        folder = self.gold_dir / "variants" / variant["hash"][:16]
        key = req["key"]
        stored = _read_meta(folder, key)
        if stored is not None and stored.get("problem"):
            return {**stored, "table": None}
        table = None if stored is None else read_checked_table(folder / f"{key}.arrow", stored[GOLD_CHECKSUM])
        if table is not None:
            assert stored is not None  # a table is only read from a stored answer
            return {**stored, "table": table}
        started(out)
        answer = self._run_gold(self._variant_db(variant["path"]), req, out)
        if "error" in answer:
            return {"table": None, "rows": None, "problem": "the gold query fails on this variant"}
        table, meta = answer["table"], answer["meta"]
        if meta["problem"] is None and _degenerate(table):
            meta["problem"] = ("degenerate on this variant: one row of NULLs, zeros or NaN, what aggregates give "
                               "over no rows (equivalent forms differ there: SUM gives NULL, CASE ... ELSE 0 gives 0, "
                               "0/0 gives NaN)")
        if meta["problem"] is None:
            _store(folder, key, table, meta)
            return {**meta, "table": table}
        _store(folder, key, table, meta)  # kept with its problem, so it is not run again
        return {**meta, "table": None}

    def _peers_any_gold(self, gold: Any, pred: Any, result: dict[str, Any], req: dict[str, Any],
                        out: Any) -> dict[str, Any] | None:
        """BIRD's and Spider's verdicts on a case's SQL golds (the peers' rules read a gold
        query; a result file has none): each rule passes if it passes against any of them,
        tried from the gold ours compared with (the one it matched, else the nearest:
        ``compared_gold``, the record's ``matched_gold`` on a pass), then in the case's order,
        until both pass; ``bird_gold`` / ``spider_gold`` name the gold that passed a rule
        when it is another one. None: the case has no SQL gold."""
        golds = [(req.get("gold_index", 0), gold, req)] if req.get("gold_kind", "sql") == "sql" else []
        golds += [(alt["index"], None, {**req, "gold_key": alt["gold_key"], "gold_sql": alt.get("gold_sql")})
                  for alt in req.get("alternatives") or () if alt.get("kind", "sql") == "sql"]
        compared = result.get("gold_index", req.get("gold_index", 0))  # the gold ours matched, else the nearest
        golds.sort(key=lambda g: g[0] != compared)  # read first: its reasons are the ones a failure shows
        combined: dict[str, Any] | None = None
        for index, table, sub in golds:
            if combined is not None and combined.get("bird") and combined.get("spider"):
                break
            if table is None:
                try:
                    table = self._gold_table(sub["gold_key"])
                except OSError:  # not stored (it failed): no verdict from it
                    continue
            sbs = self._side_by_side(table, pred, result, sub, out)
            if combined is None:
                combined = {**sbs, "compared_gold": index} if req.get("alternatives") else sbs
                continue
            for rule in ("bird", "spider"):
                if not combined.get(rule) and sbs.get(rule):
                    keys = [k for k in sbs if k.startswith(rule + "_")]
                    combined = {**combined, **{k: sbs[k] for k in keys}, rule: True, f"{rule}_gold": index}
        return combined

    def _side_by_side(self, gold: Any, pred: Any, result: dict[str, Any], req: dict[str, Any],
                      out: Any, pred_over_cap: int | None = None, ours: bool | None = None) -> dict[str, Any]:
        """BIRD's and Spider's verdicts on the same results (evidence only; never fails grading).

        Spider's re-runs (the queries its evaluator runs: DISTINCT dropped, the prediction's
        placeholder and spaced operators rewritten) are executions like the candidate's:
        before each, the verdict so far goes to the parent with the side-by-side marked undecided (``cut``),
        and the re-run gets the case's execution limit and process guard (``started``). A
        re-run that overruns gets the engine process killed; the case keeps its verdict. A
        gold's DISTINCT-free variant read from the store runs nothing, so it costs no message
        (the verdict so far goes out only before a query that runs); the gold's Python rows
        are made once per gold in this process (``_gold_rows``)."""
        from .peers import side_by_side
        undecided_now: list[dict[str, Any]] = []  # what to record should the next run overrun

        def cut(undecided: dict[str, Any]) -> None:
            undecided_now[:] = [undecided]

        def run_under_limits(run: Any, sql: str) -> Any:
            if undecided_now:
                undecided = undecided_now.pop()
                if result["compare"] is None:  # an ungraded case (``official``): the verdicts stand alone
                    partial(out, {**result, "sidebyside": undecided})
                else:
                    partial(out, {**result, "compare": {**result["compare"], "sidebyside": undecided}})
            started(out)
            try:
                return run(sql)
            finally:
                executed(out)

        key = req.get("gold_key")
        gold_sql = req.get("gold_sql") or self._gold_sql.get(req["gold_key"])

        def run_prediction(sql: str) -> Any:
            stored = self._as_gold_variant(key, gold_sql, sql)
            return stored if stored is not None else run_under_limits(self.db.run, sql)

        try:
            return side_by_side(gold, pred, result["compare"], gold_sql=gold_sql,
                                pred_sql=req["sql"], dialect=self.db.dialect, run=run_prediction,
                                gold_variant=(lambda sql: self._gold_variant(key, sql, lambda s: run_under_limits(
                                    self.db.run, s))) if key else None, cut=cut, pred_over_cap=pred_over_cap,
                                ours=ours, gold_rows=self._gold_rows(key, gold) if key else None)
        except Exception as exc:  # pragma: no cover - defensive
            return {"bird": None, "spider": None, "note": f"side-by-side failed: {type(exc).__name__}: {exc}"}

    def _as_gold_variant(self, key: str | None, gold_sql: str | None, sql: str) -> Any:
        """Spider's re-run of a prediction whose rewritten text (``peers.spider_variant``) is
        the gold's rewritten text: the same query on the same read-only database and engine,
        whose answer is the gold's DISTINCT-free answer, stored (``_gold_variant``) and read
        before the prediction's re-run is asked for (``peers.side_by_side``). So the outcome
        is that answer, and the query is not run a second time: None otherwise (no stored
        variant: the gold has no DISTINCT, or its variant fails), and the re-run runs."""
        from ..engines.base import ExecOutcome
        from .peers import spider_variant
        if not key or not gold_sql:
            return None
        text = spider_variant(gold_sql, self.db.dialect)
        if sql != text or text == gold_sql:
            return None
        table = self._gold_variants.get((key, text))  # read (or run) just before, for the gold's side
        return None if table is None or isinstance(table, str) else ExecOutcome(table, None, 0.0)

    def _gold_rows(self, key: str, table: Any) -> list[tuple[Any, ...]] | None:
        """A stored gold answer's rows as the peers read them (``peers.python_rows``), made
        once per gold in this process, not once per case (None over ``peers.MAX_ROWS``).
        ``table`` is the key's stored answer or, for a gold not stored, whatever was run:
        only a stored one (``_gold_tables``) is kept."""
        from .peers import MAX_ROWS, python_rows
        if table.num_rows > MAX_ROWS:
            return None
        if self._gold_tables.get(key) is not table:
            return python_rows(table)
        rows = self._gold_py.get(key)
        if rows is None:
            if len(self._gold_py) > 64:
                self._gold_py.clear()
            rows = self._gold_py[key] = python_rows(table)
        return rows

    def _gold_variant(self, key: str, sql: str, run: Any = None) -> Any:
        """Spider's DISTINCT-free variant of a gold query: run once (by ``run``, under the
        case's limits; default ``self.db.run``), kept beside the gold answer (an Arrow file,
        or the error category), so a rerun executes no gold query; read from there once per
        process."""
        import hashlib
        import pyarrow.feather as feather
        memo = (key, sql)
        if memo in self._gold_variants:
            return self._gold_variants[memo]
        if len(self._gold_variants) > 64:
            self._gold_variants.clear()
        base = self.gold_dir / f"{key}.spider-{hashlib.sha256(sql.encode()).hexdigest()[:16]}"
        arrow, err = base.with_name(base.name + ".arrow"), base.with_name(base.name + ".error")
        if arrow.exists():
            value = self._gold_variants[memo] = feather.read_table(str(arrow))
            return value
        if err.exists():
            text = self._gold_variants[memo] = err.read_text()
            return text
        outcome = (run or self.db.run)(sql)
        self.gold_dir.mkdir(parents=True, exist_ok=True)
        tmp = self.gold_dir / f".{base.name}.{os.getpid()}.tmp"
        if outcome.error is not None:
            if outcome.error.category in RUN_DEPENDENT_ERRORS:
                return outcome.error.category  # this run's limits or load, not the query's: asked again next time
            tmp.write_text(outcome.error.category)
            os.replace(tmp, err)
            return outcome.error.category
        feather.write_feather(outcome.table, str(tmp), compression="uncompressed")
        os.replace(tmp, arrow)
        return outcome.table

    def _other_choice(self, key: str, alternatives: dict[str, Any], pred: Any, spec: Any,
                      compare: dict[str, Any]) -> dict[str, Any]:
        """A prediction that differs from the gold's answer, against the other answers the
        gold gives under the other valid choices of the rows a LIMIT below its top level
        cuts through (``_choices``): the first it matches, as a tie-only match; else the
        comparison with the gold's own answer (a match with it, or none), with the evidence."""
        import pyarrow.feather as feather
        evidence = {"nested": True, "answers": 1 + len(alternatives[GOLD_CHECKSUM]),
                    **{k: v for k, v in alternatives.items() if k != GOLD_CHECKSUM}}
        for i in range(0 if compare["match"] else len(alternatives[GOLD_CHECKSUM])):
            other = self.cmp.compare(feather.read_table(str(self.gold_dir / f"{key}.alt{i}.arrow")), pred, spec)
            if other.match:
                other.tie_group = {**evidence, "alternative": i + 1, "chosen": True, "tie_only": True}
                return other.to_dict()
        return {**compare, "tie_group": {**evidence, "tie_only": False}}

    def _stored_meta(self, key: str) -> dict[str, Any] | None:
        """A stored gold answer's description, read once per key."""
        if key not in self._metas:
            if len(self._metas) > 256:
                self._metas.clear()
            self._metas[key] = read_stored_gold(self.gold_dir, key)
        return self._metas[key]

    def _gold_ties(self, key: str) -> tuple[dict[str, Any], Any] | None:
        """The whole tie group a stored gold's LIMIT cuts through, with its description
        (``before``: rows ahead of it, ``candidates``: rows the gold without its LIMIT ranks),
        stored beside the gold answer; None: the LIMIT cuts none."""
        if key not in self._ties:
            import pyarrow.feather as feather
            meta = self._stored_meta(key) or {}
            if len(self._ties) > 64:
                self._ties.clear()
            self._ties[key] = None if not meta.get("ties") else (
                meta["ties"], feather.read_table(str(self.gold_dir / f"{key}.ties.arrow"), memory_map=True))
        return self._ties[key]

    def _gold_table(self, key: str) -> Any:
        if key not in self._gold_tables:
            import pyarrow.feather as feather
            if len(self._gold_tables) > 64:
                self._gold_tables.clear()
            self._gold_tables[key] = feather.read_table(str(self.gold_dir / f"{key}.arrow"), memory_map=True)
        return self._gold_tables[key]


def structure_on_wire(req: dict[str, Any]) -> dict[str, Any] | None:
    """The structure layer's evidence (``layers.structure``), made in the engine process so
    that the grading process, pytest's critical path, does not make it: the prediction
    (``sql``, in ``dialect``: already parsed and found safe there, as it was sent) is rebuilt
    from the tree the grading process parsed (``tree``: ``tree_wire.to_wire``), else parsed
    again here, and diffed with the gold's side (``gold``: its ``GoldSide``) under the
    case's remaining layer budget (``budget_s``). The tree serves this diff alone: the
    execution runs ``sql``'s text under the sandbox's own checks. Returns the evidence's
    record form (``StructureResult.to_dict``, or a failure's ``skipped`` / ``layer_error``);
    None when the prediction does not parse here, so the grading process makes the diff itself."""
    from .budget import Budget
    from .guard import failure_evidence
    from .parse import parse_sql
    from .structure import GoldSide, compare_structure
    from .tree_wire import from_wire
    side, sql, dialect = GoldSide.from_json(req["gold"]), req["sql"], req["dialect"]
    budget = Budget(float(req["budget_s"]))
    tree: Any = None  # written as the gold: read off the gold's side, nothing to parse
    if sql != side.sql:
        tree = from_wire(req["tree"]) if req.get("tree") is not None else None  # a form it cannot read: parsed
        if tree is None:
            parsed = parse_sql(sql, dialect)
            if not parsed.ok or parsed.expression is None:
                return None
            tree = parsed.expression
    try:
        budget.check()
        return compare_structure(tree, side, dialect, budget, pred_sql=sql).to_dict()
    except Exception as exc:  # the layer's failure evidence (``guard.guarded``)
        return failure_evidence(exc)


def _store(gold_dir: Path, key: str, table: Any, meta: dict[str, Any], group: Any = None,
           alternatives: list[Any] | None = None) -> None:
    """Write a gold answer (Arrow) and its description with the Arrow file's checksum,
    each by rename, the description last: a reader sees a whole entry or none. The tie
    group its LIMIT cuts (``group``), if any, and the other answers a LIMIT below its top
    level lets it give (``alternatives``) are written first, beside it."""
    import pyarrow.feather as feather
    gold_dir.mkdir(parents=True, exist_ok=True)
    tmp = gold_dir / f".{key}.{os.getpid()}.tmp"
    if group is not None:
        feather.write_feather(group, str(tmp), compression="uncompressed")
        meta = {**meta, "ties": {**meta["ties"], GOLD_CHECKSUM: _file_sha256(tmp)}}
        os.replace(tmp, gold_dir / f"{key}.ties.arrow")
    if alternatives and meta.get("alternatives"):
        sums = []
        for i, alt in enumerate(alternatives):
            feather.write_feather(alt, str(tmp), compression="uncompressed")
            sums.append(_file_sha256(tmp))
            os.replace(tmp, gold_dir / f"{key}.alt{i}.arrow")
        meta = {**meta, "alternatives": {**meta["alternatives"], GOLD_CHECKSUM: sums}}
    feather.write_feather(table, str(tmp), compression="uncompressed")
    stored_meta = {**meta, GOLD_CHECKSUM: _file_sha256(tmp)}
    os.replace(tmp, gold_dir / f"{key}.arrow")
    tmp.with_suffix(".json").write_text(json.dumps(stored_meta), encoding="utf-8")
    os.replace(tmp.with_suffix(".json"), gold_dir / f"{key}.json")


def nested_cut(db: Any, check: dict[str, Any]) -> str | None:
    """Why a LIMIT below a gold's top level (``ordering.nested_limits``) makes its answer depend
    on tie order on ``db``, or None when it cuts no tie there: its subquery, run on its own
    with LIMIT k+1, has a (k+1)-th row tied with the k-th on its ORDER BY keys, or more than
    k rows without ORDER BY. A subquery that cannot run on its own (a correlated one) is
    not checked, and said so."""
    k = check.get("limit")
    if check.get("unchecked"):
        return f"a LIMIT {k} inside a subquery cannot be checked for ties ({check['unchecked']})"
    probe = db.run(check["probe_sql"])
    if probe.table is None:
        return (f"a LIMIT {k} inside a subquery cannot be checked for ties (the subquery does not run on its own: "
                f"{probe.error.category}; correlated?)")
    assert k is not None  # only an unchecked check has no LIMIT count (ordering.nested_limits)
    if probe.table.num_rows <= k:
        return None
    keys = check.get("key_positions")
    if keys is None:
        return f"a LIMIT {k} without ORDER BY inside a subquery keeps {k} of more rows, whichever the engine returns first"
    width = probe.table.num_columns
    rows = _rows(probe.table.select([p if p >= 0 else width + p for p in keys]).slice(k - 1, 2))
    if len(rows) == 2 and rows[0] == rows[1]:
        return f"a LIMIT {k} inside a subquery cuts through rows tied on its ORDER BY keys"
    return None


_REASON_RANK = {"equal": 5, "order_only": 4, "values": 3, "row_count": 2, "type_mismatch": 1, "arity_mismatch": 0}


def nearness(compare: dict[str, Any]) -> tuple[Any, ...]:
    """How near a prediction came to one gold (greater: nearer): a match, then how far its
    comparison got (order only, values, row count, types, columns), then its rows' F1, its
    cells' overlap and the difference in row count. Ties go to the earlier gold (max keeps
    the first)."""
    return (bool(compare.get("match")), _REASON_RANK.get(compare.get("reason", ""), -1),
            compare.get("row_f1") or 0.0, compare.get("cell_overlap") or 0.0,
            -abs(compare.get("cardinality_delta") or 0))


def gold_summary(compare: dict[str, Any]) -> dict[str, Any]:
    """One gold's comparison in a few fields, for the record's list of golds tried."""
    return {k: compare.get(k) for k in ("match", "reason", "gold_rows", "pred_rows", "row_f1", "gold_columns",
                                        "column_mapping")}


def null_only(table: Any) -> bool:
    """Rows, and every value of them NULL (the grader's tie-group column aside): an answer
    that, like an empty one, every query that matches nothing also gives (``SELECT avg(x)``
    over a join no row passes), so it tells a right answer from a wrong one no better."""
    from .compare import GID_COLUMN
    columns = [c for name, c in zip(table.column_names, table.columns) if name != GID_COLUMN]
    return table.num_rows > 0 and bool(columns) and all(c.null_count == len(c) for c in columns)


def _difference(pinned: Any, variant: Any, spec: Any, cmp: Any) -> float:
    """How far a gold's answer on a variant is from its pinned answer: 0 when they match
    under the case's contract, else 1 - the row F1 of the two (at least 0.001): a variant
    where the gold's own answer changed is informative for that gold (``distill.choose``)."""
    from .compare import GID_COLUMN
    strip = [n for n in variant.column_names if n != GID_COLUMN]
    res = cmp.compare(pinned, variant.select(strip), spec)
    if res.match:
        return 0.0
    f1 = getattr(res, "row_f1", None)
    return round(max(0.001, 1.0 - f1), 4) if isinstance(f1, (int, float)) else 1.0


def _degenerate(table: Any) -> bool:
    """One row whose every value is NULL, zero, false or NaN (0/0): an aggregate over no rows."""
    if table.num_rows != 1:
        return False
    return all(v is None or v != v or v in (0, False) for row in _rows(table) for v in row)


def _preview(table: Any) -> list[list[Any]]:
    from .compare import preview_rows
    return preview_rows(table, 5)


def _rows(table: Any) -> list[tuple[Any, ...]]:
    from .compare import python_values
    return list(zip(*(python_values(c) for c in table.columns)))


def _tie_run(keys: list[Any], last: Any, limit: int) -> tuple[int, int] | None:
    """Where the rows tied with ``last`` (the sort keys of a LIMIT's k-th row) stand among
    ``keys`` (the sort keys of the whole result, in its order): ``(first, how many)`` when
    they are one run that the cut at ``limit`` goes through; None when the result without
    the LIMIT orders its rows otherwise."""
    at = [i for i, row in enumerate(keys) if row == last]
    if not at or at[0] >= limit or at[-1] < limit - 1 or at[-1] - at[0] + 1 != len(at):
        return None
    return at[0], len(at)


HANDLER = f"{GradingHandler.__module__}:{GradingHandler.__qualname__}"  # for EngineHost(handler=...)


@functools.lru_cache(maxsize=256)
def _csv_text(path: str, mtime_ns: int) -> str:
    """A gold CSV's text, read once per version of the file in this engine process."""
    return Path(path).read_text(encoding="utf-8")


def spider2_verdict(standard: dict[str, Any], pred: Any, compare: dict[str, Any] | None = None) -> dict[str, Any]:
    """Spider 2.0's official verdict on a prediction's result (``peers.spider2_tables``): it
    passes if any gold CSV of the case matches, under that CSV's condition_cols and the
    case's ignore_order (``pipeline.spider2_standard``); ``spider2_gold`` is the case's
    index of the gold CSV it matched; ``spider2_reason`` why it differs from our ``compare``
    (``peers.spider2_reason``). Evidence only: an unreadable CSV or a result over the
    peers' row cap leaves it undecided (None), with the reason."""
    from .peers import MAX_ROWS, spider2_reason, spider2_tables
    if pred.num_rows > MAX_ROWS:
        return {"spider2": None, "spider2_note": f"Spider 2.0: a result over {MAX_ROWS} rows is not compared"}
    try:
        texts = [_csv_text(g["path"], Path(g["path"]).stat().st_mtime_ns) for g in standard["golds"]]
    except (OSError, UnicodeDecodeError) as exc:
        return {"spider2": None, "spider2_note": f"Spider 2.0: a gold CSV cannot be read ({exc})"}
    cols, ignore = standard.get("condition_cols"), bool(standard.get("ignore_order"))
    try:
        at = spider2_tables(texts, pred, cols, ignore)
        official = at is not None
        reason = (None if compare is None or official == bool(compare.get("match"))
                  else spider2_reason(official, texts, pred, cols, ignore, compare))
    except Exception as exc:  # pragma: no cover - defensive: evidence never fails grading
        return {"spider2": None, "spider2_note": f"Spider 2.0 comparison failed: {type(exc).__name__}: {exc}"}
    return {"spider2": official, "spider2_gold": None if at is None else standard["golds"][at]["index"],
            "spider2_reason": reason}
