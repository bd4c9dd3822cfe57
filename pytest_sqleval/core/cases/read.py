"""Reading a suite's cases: whatever the layout, its records pass through one validation
(``validate_records``: fields, types, the one duplicate-id check), so every format gets
the same file:line:field messages and the same ``BenchmarkCase``."""
from __future__ import annotations

import dataclasses
import difflib
import json
import re
from pathlib import Path
from typing import Any

from ..errors import BadInputError
from ..numeric import TOLERANCE, NumberError
from ..textio import read_text
from .layouts import Layout, LayoutError, Records, get_layout, layout_names
from .model import (COLUMN_ORDERS, COLUMN_RULES, EXPECTED_SHAPES, RESULT_SUFFIXES, BenchmarkCase, ComparePolicy, Gold,
                    SuiteManifest)

ID_RE = re.compile(r"^[A-Za-z0-9_.\-]+$")  # ids become pytest node ids


def did_you_mean(word: str, options: set[str] | list[str]) -> str:
    close = difflib.get_close_matches(word, sorted(options), n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


_CASE_STR_FIELDS = ("difficulty", "expected_shape", "complexity", "category", "schema")


def parse_case(obj: Any, where: Path, line: int, suite: str = "", policy: ComparePolicy | None = None,
               policies: dict[tuple[bool | None, str | None], ComparePolicy] | None = None) -> BenchmarkCase:
    """Validate one decoded JSONL object; with the suite's ``policy``, the case carries its
    own (``ComparePolicy.for_case``), made here rather than by copying the case later.
    ``policies``: the suite's policy for each (``order_matters``, shape) of a case without
    overrides already met, so each is resolved once per suite, not once per case."""
    if not isinstance(obj, dict):
        raise BadInputError(where, f"expected a JSON object, got {type(obj).__name__}", line=line,
                            fix='write one object per line: {"id": "q01", "question": "...", "gold_sql": "..."}')
    obj = dict(obj)
    if "id" not in obj and "qid" in obj:
        obj["id"] = obj.pop("qid")
    if obj.get("gold_sql") is None and obj.get("gold_results") is not None:
        obj.pop("gold_sql", None)  # a case of result files only
        required: tuple[str, ...] = ("id", "question")
    else:
        required = ("id", "question", "gold_sql")
    for key in required:
        val = obj.get(key)
        if val is None:
            hint = did_you_mean(key, [k for k in obj if isinstance(k, str)])
            raise BadInputError(where, f"missing required field{hint}", line=line, field=key,
                                fix=f'add "{key}": "..." to this line' + (
                                    ' (or "gold_results": ["<file>.csv"], a result file relative to the suite)'
                                    if key == "gold_sql" else ""))
        if isinstance(val, (int,)) and key == "id" and not isinstance(val, bool):
            val = obj[key] = str(val)
        if key == "gold_sql" and isinstance(val, list):
            continue  # several gold SQLs: checked by _golds
        if not isinstance(val, str) or not val.strip():
            raise BadInputError(where, f"must be a non-empty string, got {val!r}", line=line, field=key,
                                fix=f'write "{key}" as a JSON string' + (
                                    ', or a list of them (several acceptable golds)' if key == "gold_sql" else ""))
    if not ID_RE.match(obj["id"]):
        raise BadInputError(where, f"id {obj['id']!r} has characters outside [A-Za-z0-9_.-]", line=line,
                            field="id", fix="use ids such as q06 or sales-17; they become pytest node ids")
    golds = _golds(obj.pop("gold_sql", None), obj.pop("gold_results", None), obj.pop("gold_types", None), where, line)
    first_sql = golds[0].source if golds[0].is_sql else ""  # the SQL golds come first
    kwargs: dict[str, Any] = {"id": obj.pop("id"), "question": obj.pop("question"), "gold_sql": first_sql,
                              "golds": golds, "engine_golds": _engine_golds(obj, where, line)}
    for key in _CASE_STR_FIELDS:
        val = obj.pop(key, None)
        if val is not None and not isinstance(val, str):
            raise BadInputError(where, f"must be a string, got {val!r}", line=line, field=key,
                                fix=f'write "{key}" as a JSON string or leave it out')
        kwargs[key] = val
    if kwargs["expected_shape"] is not None and kwargs["expected_shape"] not in EXPECTED_SHAPES:
        raise BadInputError(where, f"unknown shape {kwargs['expected_shape']!r}", line=line, field="expected_shape",
                            fix=f"use one of {', '.join(EXPECTED_SHAPES)}")
    tags = obj.pop("tags", None) or []
    if isinstance(tags, str):
        tags = [tags]
    if not isinstance(tags, list) or not all(isinstance(t, str) and t.strip() for t in tags):
        raise BadInputError(where, f"must be a list of strings, got {tags!r}", line=line, field="tags",
                            fix='write "tags": ["revenue", "3_tables"]')
    kwargs["tags"] = tuple(tags)
    om = obj.pop("order_matters", None)
    if om is not None and not isinstance(om, bool):
        raise BadInputError(where, f"must be true or false, got {om!r}", line=line, field="order_matters",
                            fix="write true, false, or leave it out to follow the gold's ORDER BY")
    if "compare" in obj:
        overrides = _case_compare(obj.pop("compare"), where, line)
        if "order_matters" in overrides:
            inner = overrides.pop("order_matters")
            if om is not None and inner is not None and inner != om:
                raise BadInputError(where, f"{inner!r} conflicts with \"order_matters\": {om!r} on the same case",
                                    line=line, field="compare.order_matters",
                                    fix="give order_matters once, either on the case or in its \"compare\" object")
            om = inner if om is None else om
        if overrides:
            obj["compare"] = overrides  # read once, by ComparePolicy.for_case (BenchmarkCase.policy)
    kwargs["order_matters"] = om
    if policy is not None:
        kwargs["policy"] = _case_policy(policy, policies, obj.get("compare"), om, kwargs["expected_shape"])
    kwargs.update(metadata=obj, source=f"{where}:{line}", suite=suite)
    return BenchmarkCase.of_checked(kwargs)  # every field checked above, ``golds`` given


def _case_policy(policy: ComparePolicy, policies: dict[tuple[bool | None, str | None], ComparePolicy] | None,
                 overrides: dict[str, Any] | None, om: bool | None, shape: str | None) -> ComparePolicy:
    """The case's policy; one without overrides shares its kind's (``policies``)."""
    if overrides or policies is None:
        return policy.for_case_fields(overrides, om, shape)
    found = policies.get((om, shape))
    if found is None:
        found = policies[(om, shape)] = policy.for_case_fields(None, om, shape)
    return found


#: What a case's ``"compare"`` object may override (the suite's ``[compare]`` keys, except
#: ``allow_empty`` and ``allow_null``, which a case declares with ``"expected_shape": "empty"``
#: or ``"null"``).
CASE_COMPARE_KEYS = ("order_matters", "float_rel_tol", "float_abs_tol", "column_order", "columns", "condition_cols")


def _golds(sql: Any, results: Any, types: Any, where: Path, line: int) -> tuple[Gold, ...]:
    """A case's golds: ``gold_sql`` (a string, or a non-empty list of strings), then
    ``gold_results`` (paths of result files relative to the suite's folder: .csv, .parquet,
    .jsonl), with ``gold_types`` (the result files' declared column types: an object of
    column name -> SQL type, or a list by position, null = inferred). The files themselves
    are read when the suite is (``gold_files.check_result_golds``)."""
    sqls: list[str] = []
    if sql is not None:
        listed = sql if isinstance(sql, list) else [sql]
        if not listed or not all(isinstance(s, str) and s.strip() for s in listed):
            raise BadInputError(where, f"must be a non-empty string or a non-empty list of them, got "
                                f"{json.dumps(sql)[:80]}", line=line, field="gold_sql",
                                fix='write "gold_sql": "SELECT ..." or "gold_sql": ["SELECT ...", "SELECT ..."]')
        sqls = listed
    files: list[str] = []
    own_cols: list[tuple[int, ...] | None] = []
    if results is not None:
        listed = results if isinstance(results, list) else [results]
        fix = ('write "gold_results": ["gold/q01_a.csv", "gold/q01_b.csv"], or an entry as '
               '{"path": "gold/q01_b.csv", "condition_cols": [0]} (that file\'s own condition_cols)')
        if not listed:
            raise BadInputError(where, "must be a non-empty list of file paths", line=line, field="gold_results", fix=fix)
        paths = []
        for entry in listed:
            if isinstance(entry, dict):
                path, cols = entry.get("path"), entry.get("condition_cols")
                if (set(entry) - {"path", "condition_cols"} or not isinstance(cols, list)
                        or not all(isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in cols)):
                    raise BadInputError(where, f"a result file entry must be {{\"path\": ..., \"condition_cols\": "
                                        f"[0-based positions]}}, got {json.dumps(entry)[:80]}", line=line,
                                        field="gold_results", fix=fix)
                own_cols.append(tuple(cols))
            else:
                path = entry
                own_cols.append(None)
            if not isinstance(path, str) or not path.strip():
                raise BadInputError(where, f"must be a list of file paths, got {json.dumps(results)[:80]}", line=line,
                                    field="gold_results", fix=fix)
            paths.append(path)
        listed = paths
        for f in listed:
            if not f.lower().endswith(RESULT_SUFFIXES):
                raise BadInputError(where, f"result file {f!r} is not one of {', '.join(RESULT_SUFFIXES)}", line=line,
                                    field="gold_results", fix="give the gold's result as CSV, Parquet or JSON lines")
        files = listed
    declared: tuple[tuple[str | int, str], ...] = ()
    if types is not None:
        fix = 'write "gold_types": {"order_date": "DATE", "total": "DECIMAL(10,2)"} (or a list by position)'
        if isinstance(types, dict) and all(isinstance(k, str) and isinstance(v, str) and v.strip()
                                           for k, v in types.items()):
            declared = tuple(types.items())
        elif isinstance(types, list) and all(v is None or (isinstance(v, str) and v.strip()) for v in types):
            declared = tuple((i, v) for i, v in enumerate(types) if v is not None)
        else:
            raise BadInputError(where, f"must map column names to SQL types, got {json.dumps(types)[:80]}", line=line,
                                field="gold_types", fix=fix)
        if not files:
            raise BadInputError(where, "declares column types but the case has no result file", line=line,
                                field="gold_types", fix='drop "gold_types", or add "gold_results": [...]')
    out = [Gold(i, "sql", s) for i, s in enumerate(sqls)]
    out += [Gold(len(sqls) + i, "result", f, path=where.parent / f, types=declared, condition_cols=own_cols[i])
            for i, f in enumerate(files)]
    return tuple(out)


ENGINE_GOLD_PREFIX = "gold_sql_"  # "gold_sql_spark": the case's gold on that engine, in its dialect


def _engine_golds(obj: dict[str, Any], where: Path, line: int) -> tuple[Gold, ...]:
    """A case's per-engine golds, popped from its record: ``"gold_sql_<engine>"`` (a string,
    or a non-empty list of them), each written in that engine's dialect. The engine must be
    one the registry knows (a typo would otherwise be a gold no run ever uses)."""
    keys = [k for k in obj if isinstance(k, str) and k.startswith(ENGINE_GOLD_PREFIX)]
    if not keys:
        return ()
    from ..engines.registry import engines
    known = {e.name for e in engines()}
    out: list[Gold] = []
    for key in sorted(keys):
        engine = key[len(ENGINE_GOLD_PREFIX):]
        if engine not in known:
            raise BadInputError(where, f"no engine named {engine!r}{did_you_mean(engine, known)}", line=line, field=key,
                                fix=f"name a gold for one engine as {', '.join(ENGINE_GOLD_PREFIX + n for n in sorted(known))}")
        value = obj.pop(key)
        listed = value if isinstance(value, list) else [value]
        if not listed or not all(isinstance(v, str) and v.strip() for v in listed):
            raise BadInputError(where, f"must be a non-empty string or a non-empty list of them, got "
                                f"{json.dumps(value)[:80]}", line=line, field=key,
                                fix=f'write "{key}": "SELECT ..." in {engine}\'s own SQL dialect')
        out += [Gold(i, "sql", v, engine=engine) for i, v in enumerate(listed)]
    return tuple(out)


#: a case's ``"compare"`` keys that name one of a few rules: the rules, and the fix for a typo
_COLUMN_CHOICES = {
    "columns": (COLUMN_RULES, 'write "columns": "superset" (extra predicted columns allowed) or "exact"'),
    "column_order": (COLUMN_ORDERS, 'write "column_order": "any" (any bijection of columns) or "position"'),
}


def _case_compare(value: Any, where: Path, line: int) -> dict[str, Any]:
    """A case's ``"compare"`` object, checked key by key: known keys only (with a "did you
    mean"), booleans and non-negative numbers of the right type; the numbers as floats."""
    example = '"compare": {"order_matters": false, "float_rel_tol": 1e-4, "float_abs_tol": 1e-9}'
    if not isinstance(value, dict):
        raise BadInputError(where, f"must be a JSON object, got {json.dumps(value)[:60]}", line=line, field="compare",
                            fix=f"write {example} (any of these keys), or leave it out")
    out: dict[str, Any] = {}
    for key, val in value.items():
        if key in ("allow_empty", "allow_null"):
            shape = key.partition("_")[2]
            raise BadInputError(where, f"a case cannot override {key}", line=line, field=f"compare.{key}",
                                fix=f'declare an {"empty" if shape == "empty" else "all-NULL"} answer with '
                                    f'"expected_shape": "{shape}" on the case')
        if key not in CASE_COMPARE_KEYS:
            raise BadInputError(where, f"unknown comparison override{did_you_mean(str(key), list(CASE_COMPARE_KEYS))}",
                                line=line, field=f"compare.{key}", fix=f"known keys: {', '.join(CASE_COMPARE_KEYS)}")
        if key == "order_matters":
            if val is not None and not isinstance(val, bool):
                raise BadInputError(where, f"expected true or false, got {json.dumps(val)}", line=line,
                                    field=f"compare.{key}",
                                    fix="write true, false, or leave it out to follow the gold's ORDER BY")
            out[key] = val
            continue
        if key in _COLUMN_CHOICES:
            allowed, fix = _COLUMN_CHOICES[key]
            if val not in allowed:
                raise BadInputError(where, f"expected {' or '.join(json.dumps(a) for a in allowed)}, got {json.dumps(val)}",
                                    line=line, field=f"compare.{key}", fix=fix)
            out[key] = val
            continue
        if key == "condition_cols":
            if not (isinstance(val, list) and val and all(isinstance(i, int) and not isinstance(i, bool) and i >= 0
                                                         for i in val) and len(set(val)) == len(val)):
                raise BadInputError(where, f"expected a non-empty list of distinct 0-based gold column positions, "
                                    f"got {json.dumps(val)}", line=line, field=f"compare.{key}",
                                    fix='write "condition_cols": [0, 2] (the gold columns that must be found)')
            out[key] = tuple(val)
            continue
        try:
            out[key] = TOLERANCE.check(val)  # the suite's [compare] tolerances' own parser
        except NumberError as exc:
            raise BadInputError(where, str(exc), line=line, field=f"compare.{key}",
                                fix=f'write "{key}" as a small non-negative JSON number such as 1e-6') from None
    return out


def validate_records(records: Records, path: Path, suite: str = "",
                     policy: ComparePolicy | None = None) -> list[BenchmarkCase]:
    """The one reader: a layout's ``(line, record)`` pairs as cases, in file order; a duplicate
    id is an error naming both lines."""
    cases: list[BenchmarkCase] = []
    seen: dict[str, int] = {}
    policies: dict[tuple[bool | None, str | None], ComparePolicy] = {}
    for lineno, obj in records:
        case = parse_case(obj, path, lineno, suite, policy, policies)
        if case.id in seen:
            raise BadInputError(path, f"duplicate id {case.id!r} (first on line {seen[case.id]})", line=lineno,
                                field="id", fix="give every case a unique id")
        seen[case.id] = lineno
        cases.append(case)
    return cases


def _layout(name: str) -> Layout:
    layout = get_layout(name)
    if layout is None:  # load_manifest refuses it with file and line; this is a name given in code
        raise LayoutError(f"unknown layout {name!r}{did_you_mean(name, layout_names())}. Fix: use one of "
                          f"{', '.join(layout_names())}, or register it with pytest_sqleval.core.cases.register_layout")
    return layout


SPLIT_KEY = "split"  # a case's split: absent = the main set; else the manifest's [splits] held_out


def read_cases(path: str | Path, suite: str = "", layout: str = "sqleval",
               policy: ComparePolicy | None = None) -> list[BenchmarkCase]:
    """All cases of a questions file in ``layout`` (our JSONL by default), in file order;
    with the suite's ``policy``, each carrying its own (``read_layout_cases``)."""
    path = Path(path)
    return validate_records(_layout(layout).records(path), path, suite, policy)


def read_layout_cases(manifest: SuiteManifest, path: Path | None = None) -> list[BenchmarkCase]:
    """Every case of a suite in the manifest's layout, in file order, each carrying its
    comparison contract (``BenchmarkCase.policy``); a case naming a split the manifest does
    not declare is bad input (a typo would silently move it to the main set)."""
    cases = read_cases(path or manifest.questions, manifest.name, manifest.layout, manifest.compare)  # each its contract
    cases = [check_result_golds(case, manifest) for case in cases]  # a case of SQL golds only comes back as it is
    held_out = manifest.held_out
    for case in cases:
        split = case.metadata.get(SPLIT_KEY) if case.metadata else None
        if split is not None and split != held_out:
            where, _, line = case.source.rpartition(":")
            declared = (f"declares held_out = {manifest.held_out!r}" if manifest.held_out
                        else "declares no held-out split")
            raise BadInputError(where, f"split {split!r} is not a split of this suite ({manifest.path.name} {declared})",
                                line=int(line) if line.isdigit() else None, field=SPLIT_KEY,
                                fix=f'add [splits] held_out = "{split}" to {manifest.path.name}, or drop the "split" '
                                    "key (cases without one are the main set)")
    return cases


def check_result_golds(case: BenchmarkCase, manifest: SuiteManifest) -> BenchmarkCase:
    """The case with its result-file golds resolved against the suite's folder and their
    declared types (the case's, then the suite's ``[gold_results] types``), each file read
    once now: a file that is missing, ragged or cannot be typed, or that lacks a column its
    ``condition_cols`` (its own, else the case's) names, is one collection error naming the
    case and the file."""
    if all(g.is_sql for g in case.golds):
        return case
    from .result_files import ResultFileError, read_result_file
    where, _, line = case.source.rpartition(":")
    lineno = int(line) if line.isdigit() else None
    golds = []
    for gold in case.golds:
        if not gold.is_sql:
            named = {k for k, _ in gold.types}
            types = gold.types + tuple((k, v) for k, v in manifest.gold_types if k not in named)
            gold = dataclasses.replace(gold, path=manifest.root / gold.source, types=types)
            assert gold.path is not None
            try:
                table = read_result_file(gold.path, types)
            except ResultFileError as exc:
                raise BadInputError(where, f"case {case.id!r}: {exc}", line=lineno, field="gold_results",
                                    fix=exc.fix) from None
            wanted = gold.condition_cols if gold.condition_cols is not None else (
                case.policy.condition_cols if case.policy is not None else None)
            lacking = [i for i in wanted or () if i >= table.num_columns]
            if lacking:
                raise BadInputError(where, f"case {case.id!r}: condition_cols names gold column(s) {lacking} but "
                                    f"result file {gold.path} has {table.num_columns} column(s)", line=lineno,
                                    field="compare.condition_cols",
                                    fix=f"name 0-based positions below {table.num_columns}")
        golds.append(gold)
    return dataclasses.replace(case, golds=tuple(golds))


def split_of(case: BenchmarkCase) -> str:
    """The case's split: the held-out split's name, or "main"."""
    split = case.metadata.get(SPLIT_KEY)
    return split if isinstance(split, str) else "main"


def collect_cases(manifest: SuiteManifest, path: Path) -> list[tuple[BenchmarkCase, SuiteManifest]]:
    """Each case with the manifest it is graded under: for a layout split by database
    (Spider, BIRD), one derived manifest per database (its own engine, content hash and gold cache)."""
    cases = read_layout_cases(manifest, path)
    key = _layout(manifest.layout).split_by
    if key is None or manifest.database is None:
        return [(c, manifest) for c in cases]
    tables = manifest.tables
    described = _described_databases(tables) if tables is not None else None
    per_db: dict[str, SuiteManifest] = {}
    out = []
    for case in cases:
        db_id = case.metadata.get(key)
        where, _, line = case.source.rpartition(":")
        if not isinstance(db_id, str) or not db_id.strip():
            raise BadInputError(where, f"missing or empty (got {db_id!r})", line=int(line) if line.isdigit() else None,
                                field=key, fix=f'give every case a "{key}" naming its database')
        if tables is not None and described is not None and db_id not in described:
            raise BadInputError(where, f"database {db_id!r} is not described in {tables.name}",
                                line=int(line) if line.isdigit() else None, field=key,
                                fix=f"fix the {key}, or add the database to {tables}")
        if db_id not in per_db:
            per_db[db_id] = database_manifest(manifest, db_id)
        out.append((case, per_db[db_id]))
    return out


def _described_databases(tables: Path) -> set[str]:
    """The ``db_id`` of every database a Spider/BIRD ``tables.json`` describes."""
    try:
        entries = json.loads(read_text(tables))
    except json.JSONDecodeError as exc:
        raise BadInputError(tables, f"not valid JSON ({exc.msg})", line=exc.lineno,
                            fix="give the layout's tables.json as released") from None
    if not isinstance(entries, list):
        raise BadInputError(tables, "expected a JSON array of database descriptions", line=1,
                            fix='write [{"db_id": "...", "table_names_original": [...], ...}, ...]')
    return {e["db_id"] for e in entries if isinstance(e, dict) and isinstance(e.get("db_id"), str)}


def database_manifest(manifest: SuiteManifest, db_id: str) -> SuiteManifest:
    """The manifest of one database within a suite split by database."""
    db = manifest.database
    if isinstance(db, str) and db.lower().startswith("spark:"):  # the suite's folder on Spark: this database's file
        from ..engines.spark_sandbox import parse_location, spark_location
        folder, settings = parse_location(db)
        target: Path | str | None = (spark_location(folder / _layout(manifest.layout).database_file.format(db_id),
                                                    settings) if folder.is_dir() else db)
    elif isinstance(db, str):
        target = db.replace("{db_id}", db_id)
    elif db is not None and db.is_dir():
        target = db / _layout(manifest.layout).database_file.format(db_id)
    else:
        target = db  # one database for every case
    return dataclasses.replace(manifest, path=manifest.path.with_name(f"{manifest.path.name}#{db_id}"),
                               name=f"{manifest.name}/{db_id}", database=target)
