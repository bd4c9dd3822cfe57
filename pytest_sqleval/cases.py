"""Benchmark cases and suite manifests: reading them with line numbers, and refusing
anything malformed with an error that names the file, the line, the field and the fix."""
from __future__ import annotations

import difflib
import hashlib
import json
import re
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Iterator

from .engines.base import Limits  # noqa: F401  (re-exported: suites name their limits here)
from .errors import BadInputError
from .textio import UTF8_BOM, iter_jsonl, not_utf8_error, read_text  # noqa: F401  (re-exported)

MANIFEST_NAME = "sqleval.toml"
DEFAULT_DEPRECATED = ("*_old", "*_v1", "*_bak")
EXPECTED_SHAPES = ("scalar", "table", "empty")
_ID_RE = re.compile(r"^[A-Za-z0-9_.\-]+$")


@dataclass(frozen=True)
class ComparePolicy:
    """The comparison contract's knobs; suites and cases may override each."""

    order_matters: bool | None = None  # None = ordered iff the gold has a top-level ORDER BY
    float_rel_tol: float = 1e-6
    float_abs_tol: float = 1e-9
    allow_empty: bool = False

    def merged(self, **overrides: Any) -> "ComparePolicy":
        vals = {f.name: getattr(self, f.name) for f in fields(self)}
        vals.update({k: v for k, v in overrides.items() if v is not None})
        return ComparePolicy(**vals)

    def for_case(self, case: "BenchmarkCase | None") -> "ComparePolicy":
        """This (suite) policy with one case's overrides: its ``order_matters``, its
        ``"compare"`` tolerances (``metadata["compare"]``, checked by ``parse_case``) and
        ``"expected_shape": "empty"`` as ``allow_empty``. Grading and ``validate`` both use it."""
        if case is None:
            return self
        compare = case.metadata.get("compare")
        overrides = compare if isinstance(compare, dict) else {}
        return self.merged(**{**overrides, "order_matters": case.order_matters,
                              "allow_empty": True if case.expected_shape == "empty" else None})


@dataclass(frozen=True)
class BenchmarkCase:
    """One benchmark question. Unknown JSONL keys land in ``metadata``."""

    id: str
    question: str
    gold_sql: str
    difficulty: str | None = None
    expected_shape: str | None = None
    complexity: str | None = None
    category: str | None = None
    schema: str | None = None
    tags: tuple[str, ...] = ()
    order_matters: bool | None = None
    metadata: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    source: str = field(default="", compare=False)  # "file:line", for messages
    suite: str = field(default="", compare=False)

    @property
    def case_id(self) -> str:  # seed-000 spelling
        return self.id

    @property
    def content_hash(self) -> str:
        """Identity of what a backend sees; keys the generation cache."""
        payload = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("source",)}
        blob = json.dumps(payload, sort_keys=True, default=str).encode()
        return hashlib.sha256(blob).hexdigest()[:32]

    def to_dict(self) -> dict[str, Any]:
        d = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("source", "suite")}
        d["tags"] = list(self.tags)
        return d


@dataclass(frozen=True)
class SuiteManifest:
    """A suite: a folder with ``sqleval.toml`` naming questions, database and dialect."""

    path: Path
    name: str
    questions: Path
    database: Path | str | None  # None: a judge-only suite, graded without executing anything; str: a URL
    dialect: str = "duckdb"
    build: Path | str | None = None  # a SQL script, or "module:function" called with the target path
    deprecated_tables: tuple[str, ...] = DEFAULT_DEPRECATED
    schema_ddl: Path | None = None  # CREATE TABLE statements for grounding when there is no database
    compare: ComparePolicy = ComparePolicy()
    limits: Limits = Limits()
    layout: str = "sqleval"  # or spider, bird, sql-create-context (see layouts.py)
    tables: Path | None = None  # Spider/BIRD tables.json, when the suite names one
    constraints: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)  # checked by `validate`

    @property
    def root(self) -> Path:
        return self.path.parent


_SUITE_KEYS = {"name", "questions", "database", "dialect", "build", "deprecated_tables", "schema", "layout", "tables"}
_COMPARE_KEYS = {f.name for f in fields(ComparePolicy)}
_LIMIT_KEYS = {f.name for f in fields(Limits)}
_CONSTRAINT_KEYS = {"cases", "min_tagged", "max_layer_leakage"}  # values are checked by `validate`
_SECTIONS = {"suite": _SUITE_KEYS, "compare": _COMPARE_KEYS, "limits": _LIMIT_KEYS, "constraints": _CONSTRAINT_KEYS}


def _did_you_mean(word: str, options: set[str] | list[str]) -> str:
    close = difflib.get_close_matches(word, sorted(options), n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _toml_line(text: str, key: str) -> int | None:
    for i, line in enumerate(text.splitlines(), 1):
        if re.match(rf"\s*\[?\s*{re.escape(key)}\s*[\]=]", line):
            return i
    return None


def _known_dialect(name: str) -> bool:
    """Whether sqlglot knows the dialect. Each built-in one is a module of its own, so a
    file check answers without importing sqlglot (a quarter of a large suite's collection)."""
    import importlib.util
    spec = importlib.util.find_spec("sqlglot")
    if name.isidentifier() and not name.startswith("_") and name != "dialect" and spec is not None and any(
            (Path(loc) / "dialects" / f"{name}.py").is_file() for loc in spec.submodule_search_locations or ()):
        return True
    from sqlglot.dialects.dialect import Dialect  # plugins and "name, setting = value" forms
    try:
        Dialect.get_or_raise(name)
    except ValueError:
        return False
    return True


def load_manifest(path: str | Path) -> SuiteManifest:
    """Read and validate ``sqleval.toml``; every mistake names file, line and fix."""
    path = Path(path)
    text = read_text(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line = getattr(exc, "lineno", None)  # Python >= 3.14; before, only the message says it
        found = re.search(r"\(at line (\d+), column \d+\)", str(exc)) if line is None else None
        line = int(found.group(1)) if found else line
        raise BadInputError(path, f"not valid TOML: {exc}", line=line,
                            fix="check quoting and brackets; see the README's 'Suite format'") from None
    for section, value in data.items():
        if section not in _SECTIONS:
            raise BadInputError(path, f"unknown section [{section}]{_did_you_mean(section, set(_SECTIONS))}",
                                line=_toml_line(text, section), fix="use [suite], [compare], [limits] or [constraints]")
        if not isinstance(value, dict):
            raise BadInputError(path, f"'{section}' must be a table", line=_toml_line(text, section),
                                fix=f"write it as a [{section}] section")
        for key in value:
            if key not in _SECTIONS[section]:
                raise BadInputError(path, f"unknown key in [{section}]{_did_you_mean(key, _SECTIONS[section])}",
                                    line=_toml_line(text, key), field=key,
                                    fix=f"known keys: {', '.join(sorted(_SECTIONS[section]))}")
    suite = data.get("suite")
    if suite is None:
        raise BadInputError(path, "missing [suite] section", line=1,
                            fix='add [suite] with questions = "questions.jsonl" and database = "<file>.duckdb"')

    def need_str(sec: dict, key: str, section: str, default: str | None = None) -> str:
        val = sec.get(key, default)
        if not isinstance(val, str) or not val.strip():
            raise BadInputError(path, "must be a non-empty string", line=_toml_line(text, key) or 1,
                                field=f"{section}.{key}", fix=f'add {key} = "..." under [{section}]')
        return val

    root = path.parent
    from .engines import is_url
    from .layouts import LAYOUT_DEFAULTS
    layout = need_str(suite, "layout", "suite", "sqleval").lower()
    if layout not in LAYOUT_DEFAULTS:
        raise BadInputError(path, f"unknown layout '{layout}'{_did_you_mean(layout, set(LAYOUT_DEFAULTS))}",
                            line=_toml_line(text, "layout"), field="suite.layout",
                            fix=f"use one of {', '.join(LAYOUT_DEFAULTS)}")
    defaults = LAYOUT_DEFAULTS[layout]
    questions = root / need_str(suite, "questions", "suite", defaults.get("questions"))
    raw_db = need_str(suite, "database", "suite") if "database" in suite else defaults.get("database")
    database: Path | str | None = raw_db if raw_db is None or is_url(raw_db) else root / raw_db
    tables = root / need_str(suite, "tables", "suite") if "tables" in suite else None
    schema_ddl = root / need_str(suite, "schema", "suite") if "schema" in suite else None
    if database is None and schema_ddl is None and layout == "sqleval":
        raise BadInputError(path, "the suite names neither a database nor a schema", line=_toml_line(text, "suite") or 1,
                            field="suite.database",
                            fix='add database = "<file>.duckdb" to grade by execution, or schema = "schema.sql" '
                                "(CREATE TABLE statements) to grade without a database")
    if schema_ddl is not None and not schema_ddl.is_file():
        raise BadInputError(path, f"schema file {schema_ddl} does not exist", line=_toml_line(text, "schema"),
                            field="suite.schema", fix="point it at a SQL file of CREATE TABLE statements")
    dialect = need_str(suite, "dialect", "suite", defaults.get("dialect", "duckdb")).lower()
    if not _known_dialect(dialect):
        raise BadInputError(path, f"unknown SQL dialect '{dialect}'", line=_toml_line(text, "dialect"),
                            field="suite.dialect", fix="use a sqlglot dialect name such as duckdb, sqlite, postgres") from None
    build: Path | str | None = None
    if "build" in suite:
        raw_build = need_str(suite, "build", "suite")
        build = raw_build if _is_callable_spec(raw_build) else root / raw_build
    dep = suite.get("deprecated_tables", [])
    if not isinstance(dep, list) or not all(isinstance(x, str) for x in dep):
        raise BadInputError(path, "must be a list of table-name patterns", line=_toml_line(text, "deprecated_tables"),
                            field="suite.deprecated_tables", fix='e.g. deprecated_tables = ["legacy.*", "sales.orders_2019"]')
    compare = _typed_section(path, text, data.get("compare", {}), ComparePolicy, "compare")
    limits = _typed_section(path, text, data.get("limits", {}), Limits, "limits")
    if not questions.is_file():
        raise BadInputError(path, f"questions file {questions} does not exist", line=_toml_line(text, "questions"),
                            field="suite.questions", fix="point it at the JSONL file, relative to the manifest")
    if tables is not None and not tables.is_file():
        raise BadInputError(path, f"tables file {tables} does not exist", line=_toml_line(text, "tables"),
                            field="suite.tables", fix="point it at the layout's tables.json, or leave it out")
    if isinstance(database, Path) and not database.exists() and build is None:
        raise BadInputError(path, f"database {database} does not exist", line=_toml_line(text, "database"),
                            field="suite.database",
                            fix='point it at a DuckDB file next to the manifest, or add build = "build.sql" to make it')
    if isinstance(build, Path) and not build.is_file():
        raise BadInputError(path, f"build script {build} does not exist", line=_toml_line(text, "build"),
                            field="suite.build",
                            fix='point it at a SQL file that creates the database, or name a builder as "package.module:function"')
    return SuiteManifest(path=path, name=str(suite.get("name") or root.name), questions=questions,
                         database=database, dialect=dialect, build=build, schema_ddl=schema_ddl,
                         deprecated_tables=DEFAULT_DEPRECATED + tuple(dep), compare=compare, limits=limits,
                         layout=layout, tables=tables, constraints=dict(data.get("constraints", {})))


def _is_callable_spec(value: str) -> bool:
    """``package.module:function`` (a Python builder) rather than a script path."""
    mod, sep, fn = value.partition(":")
    return bool(sep) and mod.replace(".", "").replace("_", "").isalnum() and fn.replace("_", "").isalnum()


def _typed_section(path: Path, text: str, values: dict, cls: type, section: str) -> Any:
    defaults = cls()
    for key, val in values.items():
        want = type(getattr(defaults, key))
        ok = (val is None or isinstance(val, bool)) if key in ("order_matters",) else (
            isinstance(val, want) or (want is float and isinstance(val, int) and not isinstance(val, bool)))
        if not ok or (want in (int, float) and isinstance(val, bool)):
            raise BadInputError(path, f"expected {want.__name__}, got {val!r}", line=_toml_line(text, key),
                                field=f"{section}.{key}", fix=f"write {key} as a {want.__name__}")
    return cls(**values)


def find_manifest_for(jsonl: Path) -> SuiteManifest | None:
    """The manifest that owns ``jsonl``, if any: only owned files are benchmark suites."""
    manifest = jsonl.parent / MANIFEST_NAME
    if not manifest.is_file():
        return None
    try:
        raw = tomllib.loads(read_text(manifest))
        named = raw.get("suite", {}).get("questions")
        if named is None:  # a benchmark layout's default questions file (Spider/BIRD: dev.json)
            from .layouts import LAYOUT_DEFAULTS
            layout = str(raw["suite"].get("layout", "sqleval")).lower()
            if layout not in LAYOUT_DEFAULTS:
                return load_manifest(manifest)  # reports the unknown layout
            named = LAYOUT_DEFAULTS[layout].get("questions")
    except (tomllib.TOMLDecodeError, AttributeError, KeyError):
        named = None  # a broken manifest: load it to report the error properly
        return load_manifest(manifest)
    if not isinstance(named, str) or (jsonl.parent / named).resolve() != jsonl.resolve():
        return None
    return load_manifest(manifest)


_CASE_STR_FIELDS = ("difficulty", "expected_shape", "complexity", "category", "schema")


def parse_case(obj: Any, where: Path, line: int, suite: str = "") -> BenchmarkCase:
    """Validate one decoded JSONL object."""
    if not isinstance(obj, dict):
        raise BadInputError(where, f"expected a JSON object, got {type(obj).__name__}", line=line,
                            fix='write one object per line: {"id": "q01", "question": "...", "gold_sql": "..."}')
    obj = dict(obj)
    if "id" not in obj and "qid" in obj:
        obj["id"] = obj.pop("qid")
    for key in ("id", "question", "gold_sql"):
        val = obj.get(key)
        if val is None:
            hint = _did_you_mean(key, [k for k in obj if isinstance(k, str)])
            raise BadInputError(where, f"missing required field{hint}", line=line, field=key,
                                fix=f'add "{key}": "..." to this line')
        if isinstance(val, (int,)) and key == "id" and not isinstance(val, bool):
            val = obj[key] = str(val)
        if not isinstance(val, str) or not val.strip():
            raise BadInputError(where, f"must be a non-empty string, got {val!r}", line=line, field=key,
                                fix=f'write "{key}" as a JSON string')
    if not _ID_RE.match(obj["id"]):
        raise BadInputError(where, f"id {obj['id']!r} has characters outside [A-Za-z0-9_.-]", line=line,
                            field="id", fix="use ids such as q06 or sales-17; they become pytest node ids")
    kwargs: dict[str, Any] = {"id": obj.pop("id"), "question": obj.pop("question"), "gold_sql": obj.pop("gold_sql")}
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
            obj["compare"] = overrides  # read by ComparePolicy.for_case (grading and validate)
    kwargs["order_matters"] = om
    return BenchmarkCase(**kwargs, metadata=obj, source=f"{where}:{line}", suite=suite)


#: What a case's ``"compare"`` object may override (the suite's ``[compare]`` keys, except
#: ``allow_empty``, which a case declares with ``"expected_shape": "empty"``).
CASE_COMPARE_KEYS = ("order_matters", "float_rel_tol", "float_abs_tol")


def _case_compare(value: Any, where: Path, line: int) -> dict[str, Any]:
    """A case's ``"compare"`` object, checked key by key: known keys only (with a "did you
    mean"), booleans and non-negative numbers of the right type; the numbers as floats."""
    example = '"compare": {"order_matters": false, "float_rel_tol": 1e-4, "float_abs_tol": 1e-9}'
    if not isinstance(value, dict):
        raise BadInputError(where, f"must be a JSON object, got {json.dumps(value)[:60]}", line=line, field="compare",
                            fix=f"write {example} (any of these keys), or leave it out")
    out: dict[str, Any] = {}
    for key, val in value.items():
        if key == "allow_empty":
            raise BadInputError(where, "a case cannot override allow_empty", line=line, field="compare.allow_empty",
                                fix='declare an empty answer with "expected_shape": "empty" on the case')
        if key not in CASE_COMPARE_KEYS:
            raise BadInputError(where, f"unknown comparison override{_did_you_mean(str(key), list(CASE_COMPARE_KEYS))}",
                                line=line, field=f"compare.{key}", fix=f"known keys: {', '.join(CASE_COMPARE_KEYS)}")
        if key == "order_matters":
            if val is not None and not isinstance(val, bool):
                raise BadInputError(where, f"expected true or false, got {json.dumps(val)}", line=line,
                                    field=f"compare.{key}",
                                    fix="write true, false, or leave it out to follow the gold's ORDER BY")
            out[key] = val
            continue
        if isinstance(val, bool) or not isinstance(val, (int, float)):
            raise BadInputError(where, f"expected a number, got {json.dumps(val)}", line=line, field=f"compare.{key}",
                                fix=f'write "{key}": 1e-4 (a JSON number, not a string)')
        if not val >= 0 or val == float("inf"):
            raise BadInputError(where, f"must not be negative, infinite or NaN, got {val!r}", line=line,
                                field=f"compare.{key}", fix=f'write "{key}" as a small non-negative number such as 1e-6')
        out[key] = float(val)
    return out


def read_cases(path: str | Path, suite: str = "") -> list[BenchmarkCase]:
    """All cases of a questions JSONL, in file order; duplicate ids are an error."""
    path = Path(path)
    cases: list[BenchmarkCase] = []
    seen: dict[str, int] = {}
    for lineno, obj in iter_jsonl(path, fix="each line must be one complete JSON object"):
        case = parse_case(obj, path, lineno, suite)
        if case.id in seen:
            raise BadInputError(path, f"duplicate id {case.id!r} (first on line {seen[case.id]})", line=lineno,
                                field="id", fix="give every case a unique id")
        seen[case.id] = lineno
        cases.append(case)
    return cases
