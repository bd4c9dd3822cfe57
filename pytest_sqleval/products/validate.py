"""``python -m pytest_sqleval validate <suite>``: is a suite fit to grade with, and what
are its gold answers?

Checks, each reported as one line per problem:

- the manifest's ``[constraints]`` (question count, minimum counts per tag), plus what
  the gold SQL can prove about a tag: a case tagged ``3_tables`` must read 3 tables;
- gold SQL hygiene: it parses, passes the safety layer, names no deprecated table, calls
  nothing that drifts (``now()``, ``current_date``, ``random()``), and has no ``LIMIT``
  without ``ORDER BY``;
- gold answers: non-empty (unless the case declares ``expected_shape: empty``), not NULLs
  only (unless it declares ``expected_shape: null``; with variants, either is accepted when
  some variant gives the gold a value), the declared shape, and no ``LIMIT`` that cuts
  through tied rows;
- determinism: every gold is rerun under other thread counts and on an in-memory copy
  of the tables it reads, inserted in shuffled order, and compared with the grader's
  ``Comparator`` under the case's own contract (``grading.pipeline.case_contract``: the
  same policy and spec the grader makes, column rule and tolerances included);
- the suite's ``semantic_layer.yaml``: it parses, names only tables and columns that
  exist, lists every deprecated table, and does not leak the questions' wording.

When everything passes, the gold answers are frozen into ``gold_answers.json`` next to
the manifest, with the content hash and engine version they belong to, exact numbers as
the engine returned them (``ANSWERS_FORMAT``); a later run on the
same database that computes a different answer (by the same comparator and contract)
reports the drift.

Exit codes: 0 clean, 1 problems, 2 bad input (a manifest, questions file or layer that
cannot be read).
"""
from __future__ import annotations

import hashlib
import json
import math
import re
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

from ..core import BadInputError, SqlevalError

GOLD_ANSWERS = "gold_answers.json"
DEFAULT_THREADS = (1, 2, 4)
FULL_ROWS = 200  # answers up to this many rows are frozen in full; larger ones as a digest plus a preview
_N_TABLES_TAG = re.compile(r"^(\d+)_tables?$")
_VOLATILE_CLASSES = ("CurrentDate", "CurrentTimestamp", "CurrentTime", "CurrentDatetime", "Rand", "Randn", "Uuid",
                     "CurrentTimestampLTZ")
_VOLATILE_NAMES = {"now", "get_current_timestamp", "get_current_time", "transaction_timestamp", "current_localtimestamp",
                   "current_localtime", "random", "setseed", "uuid", "gen_random_uuid", "today", "current_date",
                   "statement_timestamp", "clock_timestamp"}

Out = Callable[[str], None]
#: a suite folder -> its generator's own variants (``GraderPool.native_variants``)
NativeVariantsOf = Callable[[Path], Callable[[Any, Path], list[Path]]]


def one_line(exc: BaseException) -> str:
    """A ``BadInputError`` (or any message) on one line: ``file:line: problem (fix: ...)``."""
    if isinstance(exc, BadInputError):
        where = exc.path if exc.line is None else f"{exc.path}:{exc.line}"
        what = f"field '{exc.field}': {exc.problem}" if exc.field else exc.problem
        return f"{where}: {what}" + (f" (fix: {exc.fix})" if exc.fix else "")
    return " ".join(str(exc).split())


@dataclass
class _Gold:
    """One case's gold, as validate sees it."""

    case: Any
    sql: str  # what runs (transpiled, keys appended when the ORDER BY sorts on hidden columns)
    policy: Any  # the case's ComparePolicy (case.policy): the very object the grader reads
    spec: Any  # that policy resolved against the gold (grading.pipeline.case_contract, as the grader
    # does); _baseline points its sort keys into the reruns' columns
    n_appended: int = 0
    limit: int | None = None
    probe_sql: str | None = None
    key_positions: list[int] | None = None
    nested_limits: list[dict[str, Any]] = field(default_factory=list)  # LIMITs below the top level (ordering.nested_limits)
    tables: list[str] = field(default_factory=list)
    table: Any = None  # the baseline Arrow answer
    index: int = 0  # which of the case's golds (cases.Gold.index); only the first SQL gold's answer is frozen
    first: bool = True  # the case's first SQL gold
    source: str = ""  # its SQL as written (the engine's own gold, gold_sql_spark, when it replaced the default)

    @property
    def at(self) -> str:
        """Where a problem of this gold is: the case, and the gold's index when the case has several."""
        return f"{self.case.source}: {self.case.id}" + ("" if not self.case.several_golds else f" gold {self.index}")

    @property
    def key(self) -> tuple[str, int]:
        return (self.case.id, self.index)

    @property
    def gold_sql(self) -> str:
        return self.source or str(next(g.source for g in self.case.golds if g.index == self.index))


@dataclass
class Validation:
    """What a run found; ``exit_code`` is the verdict."""

    problems: list[str] = field(default_factory=list)
    bad_input: list[str] = field(default_factory=list)
    info: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return 2 if self.bad_input else 1 if self.problems else 0


def validate_suite(target: str | Path, *, layer: str | Path | None = None, freeze: bool = True,
                   threads: tuple[int, ...] = DEFAULT_THREADS, out: Out = print,
                   err: Out = lambda s: print(s, file=sys.stderr), engines: tuple[str, ...] = (),
                   native_variants_of: NativeVariantsOf | None = None, variants: int | None = None) -> int:
    """Check a suite, print what was checked, one line per problem; freeze the gold answers when clean.
    ``engines``: engines (``spark``) whose dialect every gold is also checked to transpile to
    (besides the suite's own engine and those its cases have per-engine golds for).
    ``native_variants_of(suite folder)``: the suite generator's own variants as a pytest run
    asks them (the command line passes the conftest hooks'), so that the frozen pool is the
    run's. ``variants``: the count to freeze the variants for (``--sqleval-variants``), when
    not the manifest's: a suite that grades on none by default can still ship its choices."""
    start = time.perf_counter()
    v = Validation()
    try:
        _run(Path(target), v, layer=Path(layer) if layer else None, freeze=freeze, threads=threads, out=out,
             engines=engines, native_variants_of=native_variants_of, variants=variants)
    except BadInputError as exc:
        v.bad_input.append(one_line(exc))
    except (SqlevalError, FileNotFoundError) as exc:
        v.bad_input.append(one_line(exc))
    for line in v.bad_input:
        err(f"error: {line}")
    for line in v.problems:
        err(f"problem: {line}")
    took = time.perf_counter() - start
    if v.exit_code == 0:
        out(f"validate: OK in {took:.1f} s")
    else:
        n = len(v.problems) + len(v.bad_input)
        out(f"validate: {n} problem{'s' if n != 1 else ''} in {took:.1f} s; gold answers not frozen")
    return v.exit_code


# -- the run ---------------------------------------------------------------------------------
def _run(target: Path, v: Validation, *, layer: Path | None, freeze: bool, threads: tuple[int, ...], out: Out,
         engines: tuple[str, ...] = (), native_variants_of: NativeVariantsOf | None = None,
         variants: int | None = None) -> None:
    from ..core import MANIFEST_NAME, engine_name, ensure_database, is_url, load_manifest, read_layout_cases

    manifest_path = target / MANIFEST_NAME if target.is_dir() else target
    if not manifest_path.is_file():
        raise BadInputError(manifest_path, "no suite manifest here",
                            fix=f"point validate at a suite folder that holds {MANIFEST_NAME}, or at the manifest itself")
    manifest = load_manifest(manifest_path)
    cases = read_layout_cases(manifest)  # also rejects a case in an undeclared split
    constraints = _constraints(manifest)
    built = ensure_database(manifest.database, manifest.build) if manifest.database is not None else False
    out(f"suite {manifest.name}: {len(cases)} cases in {manifest.questions}; database {manifest.database}"
        f"{' (built now)' if built else ''}; dialect {manifest.dialect}")

    counts_line = _check_constraints(cases, constraints, v)
    if counts_line:
        out(counts_line)
    if manifest.held_out:
        _check_split(cases, manifest.held_out, v, out)

    catalog: dict[str, Any] | None = None
    content_hash = engine = engine_version = None
    golds: list[_Gold] = []
    if manifest.database is None:
        out("no database: gold answers are not executed, determinism is not checked")
    else:
        from ..core import Limits, open_sandbox
        limits = manifest.limits
        # The hash is an order-independent sum, so it may use every thread; the baseline uses threads[0].
        hasher = open_sandbox(manifest.database, Limits(timeout_s=max(limits.timeout_s, 600.0),
                                                        memory_limit=limits.memory_limit, threads=max(threads or (1,))))
        try:
            content_hash, engine, engine_version = hasher.content_hash(), hasher.name, hasher.version
        finally:
            hasher.close()
        base = open_sandbox(manifest.database, Limits(timeout_s=limits.timeout_s, max_rows=limits.max_rows,
                                                      max_bytes=limits.max_bytes, memory_limit=limits.memory_limit,
                                                      threads=threads[0] if threads else 1))
        try:
            catalog = base.catalog()
            out(f"database: {sum(len(t) for t in catalog.values())} tables, content hash {content_hash}; "
                f"engine {engine} {engine_version}")
            golds = _prepare(cases, manifest, base.dialect, catalog, v, engine)
            _baseline(golds, base, manifest, v)
        finally:
            base.close()
        duck = not is_url(manifest.database) and engine_name(manifest.database) == "duckdb"
        _determinism(golds, manifest, threads, duck, v, out)
        _check_several_golds(cases, golds, v, out)

    own = engine_name(manifest.database) if manifest.database is not None else None
    _check_dialects(cases, manifest, catalog, own, engines, v, out)

    layer_path = layer or manifest.root / "semantic_layer.yaml"
    if layer is not None or layer_path.is_file():
        _check_layer(layer_path, cases, catalog, manifest, constraints, v, out)
    else:
        out(f"semantic layer: none ({layer_path.name} not found next to the manifest)")

    answers_path = manifest.root / answers_name(engine)
    if golds and content_hash:
        frozen, fresh = _answers(golds, content_hash, engine, engine_version, manifest.name)
        _check_frozen(answers_path, frozen, fresh, v, out, {g.case.id: g for g in golds if g.first})
        if frozen.pop("foreign", False):
            pass  # a file of another engine's answers (frozen before per-engine files) is left as it is
        elif freeze and not v.problems and not v.bad_input and _already_frozen(answers_path, frozen):
            out(f"{answers_path.name}: already holds these answers; left as it is")
        elif freeze and not v.problems and not v.bad_input:
            text = _render_answers(frozen)
            answers_path.write_text(text, encoding="utf-8")
            out(f"froze {len(frozen['answers'])} gold answers for content hash {content_hash[:16]}... into "
                f"{answers_path} ({len(text.encode()) / 1024:.1f} KiB)")
    count = manifest.variants.count if variants is None else variants
    if golds and count and not v.problems and not v.bad_input:
        _freeze_variants(manifest, cases, v, out, freeze=freeze, native_variants_of=native_variants_of, count=count)


def answers_name(engine: str | None) -> str:
    """The file a suite's gold answers on ``engine`` are frozen into: ``gold_answers.json``,
    or for Spark ``gold_answers.spark.json``. Gold answers are frozen per engine: Spark
    answers some golds otherwise than DuckDB (avg of a decimal, date + interval), and its
    content hash is its source's, so one file would mix two engines' answers."""
    return GOLD_ANSWERS if engine in (None, "duckdb", "sqlite", "postgres") else f"gold_answers.{engine}.json"


# -- dialects: what does not transpile to an engine ------------------------------------------
def _check_dialects(cases: list[Any], manifest: Any, catalog: dict[str, Any] | None, own: str | None,
                    asked: tuple[str, ...], v: Validation, out: Out) -> None:
    """For each engine whose dialect is not the suite's (the suite's own engine, those asked
    with ``--engine``, those its cases have golds of their own for): each case whose gold
    does not transpile to it, with the reason (``core.portability``), and whether a gold of
    its own for that engine (``gold_sql_spark``) covers it; each such gold parses in the
    engine's dialect and passes the engine's gate. Uncovered cases are problems only on the
    suite's own engine (elsewhere they are what a run there would fail on)."""
    from ..core import dialect_of_engine, portability
    wanted = [own] if own else []
    wanted += [e for e in asked if e not in wanted]
    wanted += [e for e in sorted({e for c in cases for e in c.gold_engines}) if e not in wanted]
    time_columns = frozenset(col.lower() for tables in (catalog or {}).values() for cols in tables.values()
                             for col, typ in cols.items() if str(typ).upper().startswith("TIME")
                             and not str(typ).upper().startswith("TIMESTAMP"))
    for engine in wanted:
        try:
            dialect = dialect_of_engine(engine)
        except ValueError as exc:
            v.bad_input.append(f"--engine {engine}: {exc}")
            continue
        if dialect == manifest.dialect:
            continue
        failing = covered = 0
        for case in cases:
            own_golds = [g for g in case.engine_golds if g.engine == engine]
            for g in own_golds:
                bad = [i for i in portability(g.source, dialect, dialect) if i.construct in ("parse", "refused")]
                if bad:
                    v.problems.append(f"{case.source}: {case.id}: its gold_sql_{engine} is not a query {engine} runs: "
                                      f"{bad[0]}")
            issues = [(g, i) for g in case.sql_golds for i in portability(g.source, manifest.dialect, dialect,
                                                                        time_columns=time_columns)]
            if not issues:
                continue
            failing += 1
            covered += bool(own_golds)
            for g, issue in issues:
                which = "" if not case.several_golds else f" gold {g.index}"
                cover = (f"covered by its gold_sql_{engine}" if own_golds else
                         f"not covered (add \"gold_sql_{engine}\": \"...\" to the case, in {engine}'s SQL)")
                line = f"{engine}: {case.source}: {case.id}{which}: does not transpile: {issue}; {cover}"
                if engine == own and not own_golds:
                    v.problems.append(line)
                else:
                    out(line)
        out(f"{engine}: {failing} of {len(cases)} cases have a gold that does not transpile from {manifest.dialect}; "
            f"{covered} covered by a gold_sql_{engine}, {failing - covered} not")


# -- database variants ------------------------------------------------------------------------
def _freeze_variants(manifest: Any, cases: list[Any], v: Validation, out: Out, *, freeze: bool, count: int,
                     native_variants_of: NativeVariantsOf | None = None) -> None:
    """``count`` (the manifest's ``[variants] count``, or ``--variants``): build the variants
    (the suite generator's own too, as a run asks them), choose each gold's, and freeze both
    into ``variants.frozen.json`` (a run then distils nothing). A variant that builds to other content than was frozen for the same
    settings and golds is a problem: the generator is not stable (another gold builds other variants: refrozen)."""
    from ..core import FROZEN_VARIANTS_NAME as FROZEN_NAME
    from ..core import CaseError, GraderPool, read_frozen
    pool = GraderPool(Path(".sqleval-cache").resolve(), variants=count)
    pool.frozen_variants = False  # choose afresh; the old record is compared below
    try:
        if native_variants_of is not None:
            pool.native_variants = native_variants_of(manifest.root)
        pool.check_variants(manifest)
        grader = pool.for_suite(manifest)
        variants = grader.variant_set
        for case in cases:
            try:
                gold = grader.case_gold(case)
            except CaseError as exc:  # the one left for here: a gold empty on every variant too
                v.problems.append(f"{case.source}: {case.id}: {exc}")
                continue
            if gold.sql is not None:  # a result file has no variants
                variants.for_gold(gold.key, gold.request, gold.sql, grader.engine_dialect, grader.host, gold.elapsed_ms)
        record = variants.frozen_record()
    finally:
        pool.close()
    path = manifest.root / FROZEN_NAME
    try:
        old = read_frozen(path)
    except (OSError, ValueError):
        old = None  # a damaged record is replaced
    for entry, built in variants.drift(old):
        v.problems.append(f"{path}: variant {entry.get('index')} ({entry.get('kind')}) builds to content hash "
                          f"{(built or 'nothing')[:16]}..., frozen as {str(entry.get('content_hash'))[:16]}... for "
                          "the same database, seed, generator and golds: the variant generator is not stable")
    strength = [(e["pinned"] + e["by_variants"]) / e["mutants"] for e in record["choices"].values() if e["mutants"]]
    out(f"variants: {len(record['variants'])} built (seed {manifest.variants.seed}), {len(record['choices'])} golds' "
        f"choices of {count}; mean evidence strength "
        f"{sum(strength) / len(strength) if strength else 0:.2f}")
    if freeze and not v.problems and not v.bad_input:
        path.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        out(f"froze the variants and each gold's choice into {path}")


# -- constraints ------------------------------------------------------------------------------
def _check_split(cases: list[Any], held_out: str, v: Validation, out: Out) -> None:
    """A declared held-out split with no case in it (or no main set left) measures no gap."""
    from ..core import split_of
    n = sum(1 for c in cases if split_of(c) == held_out)
    out(f"splits: main {len(cases) - n}, {held_out} {n} (held out)")
    if n == 0 or n == len(cases):
        v.problems.append(f"split {held_out!r}: {n} of {len(cases)} cases are held out; the gap between the main set "
                          f"and the held-out set needs cases in both (give some cases \"split\": \"{held_out}\")")


def _constraints(manifest: Any) -> dict[str, Any]:
    """The ``[constraints]`` table, type-checked (bad values are bad input, with the line)."""
    from ..core import manifest_key_line as _toml_line
    from ..core import read_text
    raw = manifest.constraints or {}
    text = read_text(manifest.path)

    def bad(key: str, problem: str, fix: str) -> BadInputError:
        return BadInputError(manifest.path, problem, line=_toml_line(text, key), field=f"constraints.{key}", fix=fix)

    out: dict[str, Any] = {}
    if "cases" in raw:
        if not isinstance(raw["cases"], int) or isinstance(raw["cases"], bool) or raw["cases"] < 0:
            raise bad("cases", f"expected a whole number of cases, got {raw['cases']!r}", "write cases = 50")
        out["cases"] = raw["cases"]
    tagged = raw.get("min_tagged", {})
    if not isinstance(tagged, dict):
        raise bad("min_tagged", "expected a table of tag = minimum count", "write [constraints.min_tagged] with trap_metric = 8")
    for tag, n in tagged.items():
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise bad(tag, f"minimum for tag {tag!r} must be a whole number, got {n!r}", f"write {tag} = 5")
    out["min_tagged"] = dict(tagged)
    if "max_layer_leakage" in raw:
        val = raw["max_layer_leakage"]
        if not isinstance(val, (int, float)) or isinstance(val, bool) or not 0 <= val <= 1:
            raise bad("max_layer_leakage", f"expected a share between 0 and 1, got {val!r}", "write max_layer_leakage = 0.25")
        out["max_layer_leakage"] = float(val)
    return out


def _check_constraints(cases: list[Any], constraints: dict[str, Any], v: Validation) -> str:
    parts = []
    if "cases" in constraints:
        ok = len(cases) == constraints["cases"]
        parts.append(f"cases {len(cases)} (={constraints['cases']}) {'ok' if ok else 'NOT MET'}")
        if not ok:
            v.problems.append(f"constraint not met: the suite has {len(cases)} cases, the manifest asks for exactly "
                              f"{constraints['cases']}")
    for tag, minimum in constraints.get("min_tagged", {}).items():
        have = sum(1 for c in cases if tag in c.tags)
        ok = have >= minimum
        parts.append(f"{tag} {have} (>={minimum}) {'ok' if ok else 'NOT MET'}")
        if not ok:
            v.problems.append(f"constraint not met: {have} cases are tagged {tag!r}, the manifest asks for at least {minimum}")
    return ("constraints: " + "; ".join(parts)) if parts else "constraints: none declared (add [constraints] to the manifest)"


# -- gold SQL, statically -----------------------------------------------------------------------
def _prepare(cases: list[Any], manifest: Any, engine_dialect: str, catalog: dict[str, Any], v: Validation,
             engine: str | None = None) -> list[_Gold]:
    from sqlglot import exp

    from ..core import case_contract, case_policy, check_safety, deprecated_refs, order_info, parse_sql, table_names

    known = {f"{s}.{t}".lower() for s, tables in catalog.items() for t in tables}
    bare = {t.lower() for tables in catalog.values() for t in tables}
    golds = []
    # every SQL gold of every case: the engine's own (gold_sql_spark, in its dialect) where the case has them
    for case, gold in ((c, g) for c in cases for g in c.golds_for(engine) if g.is_sql):
        at = f"{case.source}: {case.id}" + ("" if not case.several_golds else f" gold {gold.index}")
        if gold.engine:
            at += f" (gold_sql_{gold.engine})"
        dialect = engine_dialect if gold.engine else manifest.dialect
        parsed = parse_sql(gold.source, dialect)
        if not parsed.ok or parsed.expression is None:
            e = parsed.error or {}
            v.problems.append(f"{at}: gold SQL does not parse: {e.get('message')} (line {e.get('line')}, col {e.get('col')})")
            continue
        safety = check_safety(parsed.expression, parsed.statements)
        if not safety.ok:
            v.problems.append(f"{at}: gold SQL is refused by the safety layer: {safety.detail}")
            continue
        tree = parsed.expression
        tables = [t for t in table_names(tree) if t in known or t in bare]
        stale = deprecated_refs(tables, manifest.deprecated_tables)
        if stale:
            v.problems.append(f"{at}: gold reads deprecated table{'s' if len(stale) > 1 else ''} {', '.join(stale)}")
        for tag in case.tags:
            m = _N_TABLES_TAG.match(tag)
            if m and len(tables) < int(m.group(1)):
                v.problems.append(f"{at}: tagged {tag!r} but its gold reads {len(tables)} table"
                                  f"{'s' if len(tables) != 1 else ''} ({', '.join(tables) or 'none'})")
        volatile = sorted({n.sql(dialect) for n in tree.walk()
                           if type(n).__name__ in _VOLATILE_CLASSES
                           or (isinstance(n, exp.Anonymous) and n.name.lower() in _VOLATILE_NAMES)})
        if volatile:
            v.problems.append(f"{at}: gold calls {', '.join(volatile)}, which drifts between runs; write the snapshot's "
                              f"date or value as a literal")
        if isinstance(tree, exp.Query) and tree.args.get("limit") is not None and tree.args.get("order") is None:
            v.problems.append(f"{at}: gold has LIMIT without ORDER BY, so which rows it keeps depends on row order")
        # the grader's own contract: the case's policy, resolved against its gold by the grader's function
        order = order_info(tree, engine_dialect)
        spec = case_contract(manifest.compare, case, order)
        policy = case_policy(manifest.compare, case)
        ordered = spec.ordered
        sql = tree.sql(dialect=engine_dialect) if dialect != engine_dialect else gold.source
        if ordered and order.augmented_sql:
            sql = order.augmented_sql
        golds.append(_Gold(case, sql, policy, spec, n_appended=order.n_appended if ordered and order.augmented_sql else 0,
                           limit=order.limit, probe_sql=order.probe_sql if ordered else None,
                           key_positions=order.key_positions if ordered else None,
                           nested_limits=order.nested_limits, tables=tables, index=gold.index,
                           first=gold is next(g for g in case.golds_for(engine) if g.is_sql), source=gold.source))
    return golds


# -- gold answers -------------------------------------------------------------------------------
def _baseline(golds: list[_Gold], db: Any, manifest: Any, v: Validation) -> None:
    for g in list(golds):
        at = g.at
        outcome = db.run(g.sql)
        if outcome.error is not None:
            v.problems.append(f"{at}: gold fails on the database ({outcome.error.category}): "
                              f"{outcome.error.message.splitlines()[0]}")
            golds.remove(g)
            continue
        table = outcome.table
        g.table = table
        if g.key_positions is not None:
            g.spec = replace(g.spec, sort_keys=[p if p >= 0 else table.num_columns + p for p in g.key_positions])
        visible = table.num_columns - g.n_appended
        shape = g.case.expected_shape
        nulls = bool(visible) and table.num_rows > 0 and all(  # every value NULL (as the grader's null_only)
            table.column(i).null_count == table.num_rows for i in range(visible))
        if table.num_rows == 0 and not g.policy.allow_empty and not manifest.variants.count:  # else: on variants
            v.problems.append(f"{at}: gold returns no rows; an empty gold cannot tell a right answer from a wrong one "
                              f"(declare \"expected_shape\": \"empty\" if that is the answer)")
        elif shape == "empty" and table.num_rows:
            v.problems.append(f"{at}: declares expected_shape 'empty' but the gold returns {table.num_rows} rows")
        elif shape == "null" and not nulls:
            v.problems.append(f"{at}: declares expected_shape 'null' but the gold returns "
                              f"{'no rows' if not table.num_rows else 'a value that is not NULL'}")
        elif nulls and not g.policy.allow_null and not manifest.variants.count:  # else: on variants (the grader says)
            v.problems.append(f"{at}: gold returns only NULLs ({table.num_rows} row(s); an aggregate over rows it does "
                              f"not match?); like an empty gold it cannot tell a right answer from a wrong one "
                              f"(declare \"expected_shape\": \"null\" if that is the answer)")
        elif shape == "scalar" and (table.num_rows != 1 or visible != 1):
            v.problems.append(f"{at}: declares expected_shape 'scalar' but the gold returns {table.num_rows} rows x "
                              f"{visible} columns")
        if g.probe_sql and g.limit is not None and g.spec.sort_keys and table.num_rows == g.limit:
            probe = db.run(g.probe_sql)
            if probe.table is not None and probe.table.num_rows > g.limit:
                rows = probe.table.select(list(g.spec.sort_keys)).slice(g.limit - 1, 2).to_pylist()
                if len(rows) == 2 and rows[0] == rows[1]:
                    v.problems.append(f"{at}: LIMIT {g.limit} cuts through rows tied on the ORDER BY keys, so the answer "
                                      f"depends on tie order; add a tiebreaker column to ORDER BY")
        for check in g.nested_limits:  # graded only where it cuts no tie: a mismatch is a case error
            from ..core import nested_cut
            why = nested_cut(db, check)
            if why is not None:
                v.problems.append(f"{at}: {why}, so the gold's answer depends on tie order (a prediction that differs "
                                  f"from it is not graded); add a tiebreaker column to that ORDER BY")
                break


def _determinism(golds: list[_Gold], manifest: Any, threads: tuple[int, ...], duck: bool, v: Validation, out: Out) -> None:
    from ..core import Comparator, Limits, open_sandbox

    golds = [g for g in golds if g.table is not None]
    if not golds:
        return
    limits = manifest.limits
    cmp = Comparator(threads=2)

    def sandbox(t: int | None) -> Callable[[], Any]:
        def open_() -> Any:
            return open_sandbox(manifest.database, Limits(timeout_s=limits.timeout_s, max_rows=limits.max_rows,
                                                          max_bytes=limits.max_bytes, memory_limit=limits.memory_limit,
                                                          threads=t or Limits.threads))
        return open_

    # One variant open at a time: DuckDB refuses two connections to one file with different settings.
    variants: list[tuple[str, Callable[[], Any]]] = []
    if duck:
        variants += [(f"threads={t}", sandbox(t)) for t in threads[1:]]
        needed = sorted({t for g in golds for t in g.tables})
        top = max(threads) if threads else 1

        def shuffled() -> Any:
            t0 = time.perf_counter()
            copy = ShuffledCopy(Path(manifest.database), needed, threads=top, timeout_s=limits.timeout_s,
                                memory_limit=limits.memory_limit)
            out(f"determinism: copied the {len(needed)} tables the golds read, rows in shuffled order, "
                f"in {time.perf_counter() - t0:.1f} s")
            return copy
        variants.append((f"a copy with rows in shuffled order (threads={top})", shuffled))
    else:
        variants.append(("a second run", sandbox(None)))
    failed: set[tuple[str, int]] = set()
    for label, open_ in variants:
        db = open_()
        try:
            for g in golds:
                if g.key in failed:
                    continue
                at = g.at
                outcome = db.run(g.sql)
                if outcome.error is not None:
                    v.problems.append(f"{at}: nondeterministic gold: it fails on {label} "
                                      f"({outcome.error.category}: {outcome.error.message.splitlines()[0]})")
                    failed.add(g.key)
                    continue
                res = cmp.compare(g.table, outcome.table, g.spec)
                if not res.match:
                    v.problems.append(f"{at}: nondeterministic gold: its answer on {label} differs from the first run "
                                      f"({_why(res)})")
                    failed.add(g.key)
        finally:
            db.close()
    names = "; ".join(label for label, _ in variants)
    out(f"determinism: {len(golds)} golds rerun on {names}: {len(golds) - len(failed)} identical, {len(failed)} differ")


def _check_several_golds(cases: list[Any], golds: list[_Gold], v: Validation, out: Out) -> None:
    """A case's golds against each other: SQL golds that give different answers are flagged
    (several golds must be alternatives, not mistakes: a warning to read, not a problem), and
    a case with both SQL and result files must hold its SQL's answer in one of its files (a
    problem: the file and its SQL disagree). The files were read, typed and checked for
    shape when the suite was read (``cases.result_files``)."""
    from ..core import Comparator, ResultFileError, read_result_file
    cmp = Comparator(threads=2)
    answers: dict[str, list[_Gold]] = {}
    for g in golds:
        if g.table is not None:
            answers.setdefault(g.case.id, []).append(g)
    several = [c for c in cases if c.several_golds]
    flagged = disagreeing = 0
    for case in several:
        sql = answers.get(case.id, [])
        visible = [g.table.select(list(range(g.table.num_columns - g.n_appended))) for g in sql]
        for g, table in zip(sql[1:], visible[1:]):
            res = cmp.compare(visible[0], table, replace(sql[0].spec, order_matters=False, sort_keys=None))
            if not res.match:
                flagged += 1
                out(f"warning: {g.at}: gives another answer than gold {sql[0].index} ({_why(res)}); several golds "
                    "must be alternatives, not mistakes: check it is meant")
        files = [gold for gold in case.golds if not gold.is_sql]
        if not sql or not files:
            continue
        tables = []
        for gold in files:
            try:
                tables.append((gold, read_result_file(gold.path, gold.types)))
            except ResultFileError as exc:  # read at collection; changed since?
                v.problems.append(f"{case.source}: {case.id} gold {gold.index}: {exc}")
        holds = [gold for gold, table in tables
                 if any(cmp.compare(table, answer, replace(g.spec, order_matters=False, sort_keys=None)).match
                        for g, answer in zip(sql, visible))]
        if tables and not holds:
            disagreeing += 1
            v.problems.append(f"{case.source}: {case.id}: none of its result files ({', '.join(g.source for g, _ in tables)}) "
                              "holds the answer of its gold SQL: the files and the SQL disagree; fix the file or the SQL")
    if several:
        out(f"several golds: {len(several)} cases; {flagged} SQL gold(s) flagged as giving another answer than the "
            f"first; {disagreeing} case(s) whose result files disagree with their SQL")


def _why(res: Any) -> str:
    if res.reason == "row_count":
        return f"{res.gold_rows} rows vs {res.pred_rows}"
    if res.reason == "order_only":
        return "same rows in a different order"
    if res.missing_rows:
        return f"{res.reason}; first run has {res.missing_rows[0]}, rerun has {res.extra_rows[0] if res.extra_rows else '?'}"
    reason: str = res.reason
    return reason


class ShuffledCopy:
    """An in-memory DuckDB holding ``tables`` of a database, each inserted in an order
    unrelated to the original's (sorted by a hash of the row), then locked down: no
    external access, configuration locked. Runs gold SQL for the determinism check."""

    def __init__(self, database: Path, tables: list[str], *, threads: int = 4, timeout_s: float = 10.0,
                 memory_limit: str = "2GB", salt: int = 20251130) -> None:
        import duckdb
        self.timeout_s = timeout_s
        self.con = duckdb.connect(":memory:", config={"threads": max(1, threads), "memory_limit": memory_limit,
                                                      "autoinstall_known_extensions": False,
                                                      "autoload_known_extensions": False})
        con = self.con
        con.execute(f"ATTACH '{_sql_quote(str(database))}' AS __src (READ_ONLY)")
        try:
            for name in tables:
                schema, _, table = name.rpartition(".")
                schema = schema or "main"
                if schema != "main":
                    con.execute(f'CREATE SCHEMA IF NOT EXISTS memory."{schema}"')
                con.execute(f'CREATE TABLE memory."{schema}"."{table}" AS SELECT r.* FROM __src."{schema}"."{table}" r '
                            f"ORDER BY hash(r, {salt})")
        finally:
            con.execute("USE memory")
            con.execute("DETACH __src")
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")

    def run(self, sql: str) -> Any:
        import duckdb

        from ..core import WATCHDOG, ExecError, ExecOutcome
        from ..core import classify_duckdb_error as classify_error
        start = time.perf_counter()
        cur = self.con.cursor()
        token = WATCHDOG.arm(self.timeout_s, cur.interrupt)
        try:
            return ExecOutcome(cur.sql(sql).to_arrow_table(), None, _ms(start))
        except duckdb.Error as exc:
            return ExecOutcome(None, classify_error(exc), _ms(start))
        except MemoryError as exc:
            return ExecOutcome(None, ExecError("resource_exceeded", str(exc), "MemoryError"), _ms(start))
        finally:
            WATCHDOG.disarm(token)
            cur.close()

    def close(self) -> None:
        self.con.close()


def _sql_quote(text: str) -> str:
    return text.replace("'", "''")


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 3)


# -- the semantic layer ---------------------------------------------------------------------------
def _check_layer(path: Path, cases: list[Any], catalog: dict[str, Any] | None, manifest: Any,
                 constraints: dict[str, Any], v: Validation, out: Out) -> None:
    from .warehouse import leakage
    from .warehouse.semantic import check_layer, load_layer
    try:
        layer = load_layer(path)
    except BadInputError as exc:
        v.bad_input.append(one_line(exc))
        out(f"semantic layer: {path} does not load")
        return
    n_measures = sum(len(c.measures) for c in layer.cubes)
    if catalog is not None:
        problems = check_layer(layer, catalog, manifest.deprecated_tables)
        v.problems += problems
        verdict = "every table and column it names exists" if not problems else f"{len(problems)} problems"
    else:
        verdict = "not checked against a database (the suite has none)"
    out(f"semantic layer: {path}: {len(layer.cubes)} cubes, {n_measures} measures, "
        f"{len(layer.deprecated_tables)} deprecated tables; {verdict}")
    background = _background(manifest, catalog)
    report = leakage.measure(layer.texts(), [(c.id, c.question) for c in cases], background=background,
                             threshold=constraints.get("max_layer_leakage", leakage.THRESHOLD))
    out(report.summary())
    v.problems += report.problems(str(path))


def _background(manifest: Any, catalog: dict[str, Any] | None) -> list[str]:
    """The schema's own words (names and comments): restating them is not leakage."""
    texts = []
    if catalog:
        for schema, tables in catalog.items():
            for table, cols in tables.items():
                texts.append(f"{schema}.{table} " + " ".join(f"{table}.{c} {c}" for c in cols))
    db = manifest.database
    if isinstance(db, Path) and db.is_file():
        from ..core import engine_name
        if engine_name(db) == "duckdb":
            import duckdb
            con = duckdb.connect(str(db), read_only=True)
            try:
                texts += [c for (c,) in con.execute("SELECT comment FROM duckdb_tables() WHERE comment IS NOT NULL "
                                                    "AND database_name = current_database()").fetchall()]
                texts += [c for (c,) in con.execute("SELECT comment FROM duckdb_columns() WHERE comment IS NOT NULL "
                                                    "AND database_name = current_database()").fetchall()]
            finally:
                con.close()
    if manifest.schema_ddl is not None and manifest.schema_ddl.is_file():
        from ..core import read_text
        texts.append(read_text(manifest.schema_ddl))
    return texts


# -- frozen answers ---------------------------------------------------------------------------------
#: The layout of ``gold_answers.json``. 1 (no "format" key): every number a float rounded to 12
#: significant digits, floats in the digest to 9, so an exact answer came back inexact and a
#: drift of one unit went unseen. 2: each answer names its columns' kinds (``kinds``, the
#: comparator's ``kind_of``); integers (and decimals of scale 0) are JSON integers of any
#: width, other decimals their exact text at the scale the engine returned ("1999000.00"), floats to 12 digits (compared within
#: tolerance anyway), and the digest of a large answer is exact for exact numbers.
ANSWERS_FORMAT = 2
_READS_FORMATS = (1, 2)


def _column_values(table: Any) -> list[list[Any]]:
    """A table's rows as Python values (a value Python cannot hold, such as an infinite date, as text)."""
    from ..core import python_values
    cols = [python_values(c) for c in table.columns]
    return [list(r) for r in zip(*cols)] if cols else [[] for _ in range(table.num_rows)]


def _encode(v: Any, kind: str) -> Any:
    """A value as frozen (format 2): exact numbers exactly, as the engine returned them."""
    from decimal import Decimal

    from ..core import jsonable
    if v is None:
        return None
    if kind == "integer" and isinstance(v, int):
        return int(v)
    if kind == "decimal" and isinstance(v, Decimal) and v.is_finite():
        # scale 0 (a HUGEINT sum arrives as DECIMAL(38, 0)): an integer; else its text at its scale
        return int(v) if v.as_tuple().exponent == 0 else format(v, "f")
    v = jsonable(v)
    if isinstance(v, float):
        return float(f"{v:.12g}") if math.isfinite(v) else str(v)
    return v


def _exact_text(v: Any) -> str | None:
    """An exact number (an int, or a decimal's text) as text by value, whatever its scale
    ("1.50" and "1.5" alike, "3.00" as "3"); None if ``v`` is not one. No context
    rounding: the digits are the digits."""
    from decimal import Decimal, InvalidOperation
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return str(v)
    if not isinstance(v, str):
        return None
    try:
        d = Decimal(v)
    except InvalidOperation:
        return None
    if not d.is_finite():
        return None
    text = format(d, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _digest(rows: list[list[Any]], kinds: list[str], ordered: bool) -> str:
    """SHA-256 of an answer too large to freeze in full (format 2): exact numbers by value,
    exactly (an integer and a decimal of the same value alike, as the comparator sees them);
    floats to 9 significant digits; anything else as frozen."""
    def norm(x: Any, kind: str) -> Any:
        if kind in ("integer", "decimal"):
            text = _exact_text(x)
            return x if text is None else {"exact": text}
        return f"{x:.9g}" if isinstance(x, float) else x
    body = [[norm(x, k) for x, k in zip(r, kinds)] for r in rows]
    if not ordered:
        body = sorted(body, key=lambda r: json.dumps(r, default=str))
    return hashlib.sha256(json.dumps(body, default=str).encode()).hexdigest()


def _canon_v1(v: Any) -> Any:
    """A value as format 1 froze it (to compare with a file of that format)."""
    from ..core import jsonable
    v = jsonable(v)
    if isinstance(v, float):
        return float(f"{v:.12g}") if math.isfinite(v) else str(v)
    return v


def _digest_v1(rows: list[list[Any]], ordered: bool) -> str:
    def norm(x: Any) -> Any:
        return f"{x:.9g}" if isinstance(x, float) else x
    body = [[norm(x) for x in r] for r in rows]
    if not ordered:
        body = sorted(body, key=lambda r: json.dumps(r, default=str))
    return hashlib.sha256(json.dumps(body, default=str).encode()).hexdigest()


@dataclass
class _Fresh:
    """One gold's answer as this run computed it, kept as values for a format-1 file."""

    values: list[list[Any]]
    ordered: bool


def _answers(golds: list[_Gold], content_hash: str, engine: str | None, version: str | None,
             suite: str) -> tuple[dict[str, Any], dict[str, _Fresh]]:
    from ..core import kind_of
    answers, fresh = {}, {}
    for g in golds:
        if g.table is None or not g.first:  # the frozen answer is the case's first SQL gold's
            continue
        table = g.table
        if g.n_appended:
            table = table.select(list(range(table.num_columns - g.n_appended)))
        kinds = [kind_of(f.type) for f in table.schema]
        values = _column_values(table)
        rows = [[_encode(x, k) for x, k in zip(r, kinds)] for r in values]
        entry: dict[str, Any] = {
            "gold_sql_sha256": hashlib.sha256(g.gold_sql.encode()).hexdigest()[:16],
            "columns": table.column_names, "types": [str(f.type) for f in table.schema], "kinds": kinds,
            "ordered": g.spec.ordered, "rows": table.num_rows,
        }
        if table.num_rows <= FULL_ROWS:
            entry["data"] = rows
        else:  # too big to commit: a digest of every row, and the first rows to read
            entry["digest"] = _digest(rows, kinds, g.spec.ordered)
            entry["preview"] = rows[:10]
        answers[g.case.id] = entry
        fresh[g.case.id] = _Fresh(values, g.spec.ordered)
    return ({"format": ANSWERS_FORMAT, "suite": suite, "content_hash": content_hash, "engine": engine,
             "engine_version": version, "frozen_by": "python -m pytest_sqleval validate", "answers": answers}, fresh)


def _frozen_spec(g: _Gold) -> Any:
    """The case's spec for its frozen rows, which lack the ORDER BY keys appended to the
    reruns: tie groups over the keys when every key is a visible column, else strict order."""
    visible = (g.table.num_columns - g.n_appended) if g.table is not None else 0
    keys = g.spec.sort_keys
    return replace(g.spec, sort_keys=keys if keys is not None and all(0 <= k < visible for k in keys) else None)


def _frozen_column(values: list[Any], kind: str | None) -> Any:
    """One frozen column as Arrow, by its kind (format 2): integers as int64 (past it as a
    decimal of scale 0, exact), decimals from their text, floats as doubles; any other kind,
    or a format-1 column (``kind`` None), as Arrow infers it from the JSON values. Raises
    ValueError for a value that is not of its column's kind (a hand-edited file)."""
    import pyarrow as pa
    from decimal import Decimal, InvalidOperation
    present = [v for v in values if v is not None]
    if kind == "integer":
        if any(not isinstance(v, int) or isinstance(v, bool) for v in present):
            raise ValueError("an integer column holds a value that is not an integer")
        if all(-2**63 <= v < 2**63 for v in present):
            return pa.array(values, pa.int64())
        return pa.array([None if v is None else Decimal(v) for v in values])
    if kind == "decimal":
        if any(not isinstance(v, (str, int)) or isinstance(v, bool) for v in present):
            raise ValueError("a decimal column holds a value that is neither an integer nor a decimal's text")
        try:
            return pa.array([None if v is None else Decimal(v) for v in values])
        except InvalidOperation as exc:
            raise ValueError(f"a decimal column holds text that is not a number ({exc})") from None
    if kind == "float":
        if any(not isinstance(v, (int, float, str)) or isinstance(v, bool) for v in present):
            raise ValueError("a float column holds a value that is not a number")
        return pa.array([float(v) if isinstance(v, str) else v for v in values], pa.float64())
    return pa.array(values)


def _frozen_table(rows: list[list[Any]], kinds: list[str] | None, width: int) -> Any:
    """Frozen rows as an Arrow table, or None when they do not make one (a ragged row, a
    value not of its column's kind, a column mixing kinds, a number past 76 digits)."""
    import pyarrow as pa
    if any(not isinstance(r, list) or len(r) != width for r in rows):
        return None
    try:
        return pa.table({f"c{i}": _frozen_column([r[i] for r in rows], kinds[i] if kinds else None)
                         for i in range(width)})
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError, TypeError, ValueError):
        return None


def _same_answer(cmp: Any, frozen: list[list[Any]], frozen_kinds: list[str] | None, fresh: list[list[Any]],
                 fresh_kinds: list[str] | None, width: int, spec: Any) -> bool:
    """Frozen rows against fresh ones, by the grader's own comparator under the case's own
    contract (``case_contract``): exact numbers exactly, inexact ones within the case's
    tolerance, columns and order as the case is graded. Rows that make no table compare as
    they are."""
    old, new = _frozen_table(frozen, frozen_kinds, width), _frozen_table(fresh, fresh_kinds, width)
    if old is None or new is None:
        return frozen == fresh
    return bool(cmp.compare(old, new, spec).match)


def _render_answers(frozen: dict[str, Any]) -> str:
    """Top-level keys one per line and one answer per line: small, and diffs read well."""
    head = {k: frozen[k] for k in frozen if k != "answers"}
    lines = ["{"] + [f"  {json.dumps(k)}: {json.dumps(val)}," for k, val in head.items()] + ['  "answers": {']
    items = list(frozen["answers"].items())
    for i, (cid, entry) in enumerate(items):
        lines.append(f"    {json.dumps(cid)}: {json.dumps(entry, ensure_ascii=False)}{',' if i < len(items) - 1 else ''}")
    lines += ["  }", "}", ""]
    return "\n".join(lines)


def _already_frozen(path: Path, frozen: dict[str, Any]) -> bool:
    """The file holds the same answers for the same content in the same format (whichever
    engine release froze them): rewriting it would only churn its engine_version line."""
    try:
        old = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return (isinstance(old, dict) and old.get("format") == frozen["format"]
            and old.get("content_hash") == frozen["content_hash"] and old.get("answers") == frozen["answers"])


def _file_format(old: dict[str, Any], path: Path) -> int:
    """The format of a gold-answers file (no "format" key: 1); a format this release does not
    read is bad input that says how to get a file it does."""
    fmt = old.get("format", 1)
    if isinstance(fmt, bool) or fmt not in _READS_FORMATS:
        raise BadInputError(path, f"gold-answers format {fmt!r} is not one this pytest-sqleval reads "
                            f"({', '.join(map(str, _READS_FORMATS))})",
                            field="format", fix="delete the file and re-run `python -m pytest_sqleval validate "
                            "SUITE` to freeze the answers again (or upgrade pytest-sqleval)")
    return int(fmt)


def _same_entry(cmp: Any, prev: dict[str, Any], entry: dict[str, Any], fresh: _Fresh, fmt: int, g: _Gold) -> bool:
    """Whether a frozen answer (of format ``fmt``) is this run's: in full by the comparator
    under the case's contract, else by the digest."""
    width = len(entry["columns"])
    if fmt == 1:  # numbers to 12 digits: compared at that precision, as format 1 was
        rows = [[_canon_v1(x) for x in r] for r in fresh.values]
        if "data" in prev:
            return len(rows) <= FULL_ROWS and _same_answer(cmp, prev["data"], None, rows, None, width, _frozen_spec(g))
        return prev.get("digest") == _digest_v1(rows, fresh.ordered)
    kinds = prev.get("kinds")
    if not isinstance(kinds, list) or len(kinds) != len(prev.get("columns") or []):
        return False  # a damaged entry cannot show the same answer
    if "data" in prev and "data" in entry:
        return _same_answer(cmp, prev["data"], kinds, entry["data"], entry["kinds"], width, _frozen_spec(g))
    if "digest" in prev and "digest" in entry:
        return bool(prev["digest"] == entry["digest"])
    return False  # frozen in full, now too large to (or the other way round): the row count differs


def _check_frozen(path: Path, frozen: dict[str, Any], fresh: dict[str, _Fresh], v: Validation, out: Out,
                  golds: dict[str, _Gold]) -> None:
    from ..core import Comparator
    if not path.is_file():
        return
    cmp = Comparator(threads=2)
    try:
        old = json.loads(path.read_text(encoding="utf-8"))
        old_answers = old["answers"]
        if not isinstance(old_answers, dict):
            raise TypeError("its answers are not an object")
    except (ValueError, KeyError, TypeError) as exc:
        v.bad_input.append(f"{path}: not a gold-answers file ({exc}) (fix: delete it; validate writes a new one)")
        return
    try:
        fmt = _file_format(old, path)
    except BadInputError as exc:
        v.bad_input.append(one_line(exc))
        return
    if old.get("engine") not in (None, frozen["engine"]):  # another engine's answers are never this one's
        out(f"{path.name}: frozen on engine {old.get('engine')}, not {frozen['engine']}; not compared, not rewritten")
        frozen["foreign"] = True
        return
    if old.get("content_hash") != frozen["content_hash"]:
        out(f"{path.name}: frozen for content hash {str(old.get('content_hash'))[:16]}... "
            f"(engine {old.get('engine_version')}); this database is {frozen['content_hash'][:16]}... "
            f"(engine {frozen['engine_version']}); the answers will be refrozen")
        return
    # Same content, maybe another engine release: a frozen answer must not depend on the
    # engine's rounding or formatting, so answers are compared whatever version froze them.
    drift = 0
    for cid, entry in frozen["answers"].items():
        prev = old_answers.get(cid)
        if not isinstance(prev, dict) or prev.get("gold_sql_sha256") != entry["gold_sql_sha256"]:
            continue  # a new case or a changed gold: nothing to compare with
        same = _same_entry(cmp, prev, entry, fresh[cid], fmt, golds[cid])
        if not same or prev.get("rows") != entry["rows"]:
            drift += 1
            v.problems.append(f"{path}: {cid}: the gold answer differs from the one frozen for this content hash "
                              f"({prev.get('rows')} rows frozen, {entry['rows']} now); the gold is not stable")
    under = ("" if old.get("engine_version") == frozen["engine_version"] else
             f" (frozen under {old.get('engine')} {old.get('engine_version')}, checked under {frozen['engine_version']})")
    older = ("" if fmt == ANSWERS_FORMAT else
             f" (format {fmt}: its numbers were rounded to 12 digits, so they are compared at that precision; "
             f"a clean run rewrites it in format {ANSWERS_FORMAT}, exact numbers exactly)")
    out(f"{path.name}: {len(old_answers)} frozen answers for this content hash{under}{older}; {drift} differ")
