"""Reading ``sqleval.toml``: every mistake is one error naming the file, the line, the
key and the fix; the layout it names comes from the registry."""
from __future__ import annotations

import re
import tomllib
from dataclasses import fields
from pathlib import Path
from typing import Any

from ..engines import is_url
from ..engines.base import Limits
from ..engines.host import ISOLATIONS
from ..errors import BadInputError
from ..numeric import POSITIVE_INT, SECONDS, SEED, THREADS, TOLERANCE, VARIANT_COUNT, Number, NumberError
from ..textio import read_text
from .layouts import get_layout, layout_names
from .model import COLUMN_ORDERS, COLUMN_RULES, COMPARE_SETTINGS, DEFAULT_DEPRECATED, MANIFEST_NAME, ComparePolicy, SuiteManifest, VariantPolicy
from .read import did_you_mean

_SUITE_KEYS = {"name", "questions", "database", "dialect", "build", "deprecated_tables", "schema", "layout", "tables",
               "replacements", "engine"}
_SPARK_KEYS = {"master", "driver_memory", "cache_dir", "conf"}
_COMPARE_KEYS = set(COMPARE_SETTINGS) - {"condition_cols"}  # one case's gold columns: per case only
_GOLD_RESULT_KEYS = {"types"}  # [gold_results] types = {column = "SQL type"}: result-file golds' declared types
_LIMIT_KEYS = {f.name for f in fields(Limits)}
_CONSTRAINT_KEYS = {"cases", "min_tagged", "max_layer_leakage"}  # values are checked by `validate`
_VARIANT_KEYS = {"count", "seed", "frozen_columns"}
_SPLIT_KEYS = {"held_out"}
#: every numeric key, checked by the same parsers as the command line's numbers (numeric.py)
_NUMBERS: dict[str, dict[str, Number]] = {
    "limits": {"timeout_s": SECONDS, "max_rows": POSITIVE_INT, "max_bytes": POSITIVE_INT, "threads": THREADS},
    "compare": {"float_rel_tol": TOLERANCE, "float_abs_tol": TOLERANCE},
    "variants": {"count": VARIANT_COUNT, "seed": SEED},
}
_SECTIONS = {"suite": _SUITE_KEYS, "compare": _COMPARE_KEYS, "limits": _LIMIT_KEYS, "constraints": _CONSTRAINT_KEYS,
             "variants": _VARIANT_KEYS, "splits": _SPLIT_KEYS, "gold_results": _GOLD_RESULT_KEYS,
             "spark": _SPARK_KEYS}
#: ``[suite] engine`` values that take the suite's database file to another engine
ENGINES_FOR_FILES = ("spark",)


def check_engine(engine: str | None) -> str | None:
    """The run's engine for every suite (``--sqleval-engine``), checked: it overrides each
    manifest's ``[suite] engine``; None leaves each manifest's own (default: the engine its
    database location selects). It is passed to ``load_manifest`` by the run that chose it,
    never kept in this module, so two runs in one process cannot see each other's."""
    if engine is not None and engine not in ENGINES_FOR_FILES:
        raise ValueError(f"unknown engine {engine!r}: choose {', '.join(ENGINES_FOR_FILES)}")
    return engine


def check_spark_remote(url: str | None) -> str | None:
    """The Spark Connect server every suite is graded on (``sc://host:port/;token=...``,
    ``--sqleval-spark-remote``), checked: its catalog replaces each manifest's database. Like
    the engine, it is passed to ``load_manifest`` by the run, never kept in this module."""
    if url is not None and not url.lower().startswith("sc://"):
        raise ValueError(f"not a Spark Connect location: {url!r}. Fix: write sc://host:port/;token=...")
    return url


def manifest_key_line(text: str, key: str) -> int | None:
    """The line of a manifest's text that sets ``key`` or opens the table ``[key]`` (for an
    error that names it), or None."""
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


def load_manifest(path: str | Path, engine: str | None = None, spark_remote: str | None = None) -> SuiteManifest:
    """Read and validate ``sqleval.toml``; every mistake names file, line and fix.
    ``engine`` (the run's ``--sqleval-engine``, see ``check_engine``) overrides ``[suite] engine``;
    ``spark_remote`` (``--sqleval-spark-remote``, see ``check_spark_remote``) its database."""
    path = Path(path)
    engine = check_engine(engine)
    spark_remote = check_spark_remote(spark_remote)
    text = read_text(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line = getattr(exc, "lineno", None)  # Python >= 3.14; before, only the message says it
        found = re.search(r"\(at line (\d+), column \d+\)", str(exc)) if line is None else None
        line = int(found.group(1)) if found else line
        raise BadInputError(path, f"not valid TOML: {exc}", line=line,
                            fix="check quoting and brackets; see docs/reference/manifest.md") from None
    for section, value in data.items():
        if section not in _SECTIONS:
            raise BadInputError(path, f"unknown section [{section}]{did_you_mean(section, set(_SECTIONS))}",
                                line=manifest_key_line(text, section), fix="use [suite], [compare], [limits], [constraints], [variants], [splits], [gold_results] or [spark]")
        if not isinstance(value, dict):
            raise BadInputError(path, f"'{section}' must be a table", line=manifest_key_line(text, section),
                                fix=f"write it as a [{section}] section")
        for key in value:
            if key not in _SECTIONS[section]:
                raise BadInputError(path, f"unknown key in [{section}]{did_you_mean(key, _SECTIONS[section])}",
                                    line=manifest_key_line(text, key), field=key,
                                    fix=f"known keys: {', '.join(sorted(_SECTIONS[section]))}")
    suite = data.get("suite")
    if suite is None:
        raise BadInputError(path, "missing [suite] section", line=1,
                            fix='add [suite] with questions = "questions.jsonl" and database = "<file>.duckdb"')

    def need_str(sec: dict[str, Any], key: str, section: str, default: str | None = None) -> str:
        val = sec.get(key, default)
        if not isinstance(val, str) or not val.strip():
            raise BadInputError(path, "must be a non-empty string", line=manifest_key_line(text, key) or 1,
                                field=f"{section}.{key}", fix=f'add {key} = "..." under [{section}]')
        return val

    root = path.parent
    layout = need_str(suite, "layout", "suite", "sqleval").lower()
    kind = get_layout(layout)
    if kind is None:
        names = layout_names()
        raise BadInputError(path, f"unknown layout '{layout}'{did_you_mean(layout, set(names))}",
                            line=manifest_key_line(text, "layout"), field="suite.layout",
                            fix=f"use one of {', '.join(names)}")
    questions = root / need_str(suite, "questions", "suite", kind.questions)
    raw_db = need_str(suite, "database", "suite") if "database" in suite else kind.database
    database: Path | str | None = raw_db if raw_db is None or is_url(raw_db) else root / raw_db
    tables = root / need_str(suite, "tables", "suite") if "tables" in suite else None
    schema_ddl = root / need_str(suite, "schema", "suite") if "schema" in suite else None
    if database is None and schema_ddl is None and kind.requires_database:
        raise BadInputError(path, "the suite names neither a database nor a schema", line=manifest_key_line(text, "suite") or 1,
                            field="suite.database",
                            fix='add database = "<file>.duckdb" to grade by execution, or schema = "schema.sql" '
                                "(CREATE TABLE statements) to grade without a database")
    if schema_ddl is not None and not schema_ddl.is_file():
        raise BadInputError(path, f"schema file {schema_ddl} does not exist", line=manifest_key_line(text, "schema"),
                            field="suite.schema", fix="point it at a SQL file of CREATE TABLE statements")
    dialect = need_str(suite, "dialect", "suite", kind.dialect).lower()
    if not _known_dialect(dialect):
        raise BadInputError(path, f"unknown SQL dialect '{dialect}'", line=manifest_key_line(text, "dialect"),
                            field="suite.dialect", fix="use a sqlglot dialect name such as duckdb, sqlite, postgres") from None
    build: Path | str | None = None
    if "build" in suite:
        raw_build = need_str(suite, "build", "suite")
        build = raw_build if _is_callable_spec(raw_build) else root / raw_build
    dep = suite.get("deprecated_tables", [])
    if not isinstance(dep, list) or not all(isinstance(x, str) for x in dep):
        raise BadInputError(path, "must be a list of table-name patterns", line=manifest_key_line(text, "deprecated_tables"),
                            field="suite.deprecated_tables", fix='e.g. deprecated_tables = ["legacy.*", "sales.orders_2019"]')
    compare = _typed_section(path, text, data.get("compare", {}), ComparePolicy, "compare")
    if compare.column_order not in COLUMN_ORDERS:
        raise BadInputError(path, f"unknown column order {compare.column_order!r}", line=manifest_key_line(text, "column_order"),
                            field="compare.column_order",
                            fix='write column_order = "position" (columns by position) or "any" (any bijection)')
    if compare.columns not in COLUMN_RULES:
        raise BadInputError(path, f"unknown column rule {compare.columns!r}", line=manifest_key_line(text, "columns"),
                            field="compare.columns",
                            fix='write columns = "exact" (the gold\'s columns, no more) or "superset" (extra columns allowed)')
    gold_types = data.get("gold_results", {}).get("types", {})
    if not isinstance(gold_types, dict) or not all(isinstance(v, str) and v.strip() for v in gold_types.values()):
        raise BadInputError(path, "must map column names to SQL types", line=manifest_key_line(text, "types"),
                            field="gold_results.types", fix='write types = { order_date = "DATE", total = "DECIMAL(10,2)" }')
    if "column_order" not in data.get("compare", {}):  # the benchmark's own convention (Spider: any)
        compare = compare.merged(column_order=kind.column_order)
    limits = _typed_section(path, text, data.get("limits", {}), Limits, "limits")
    if limits.isolation not in ISOLATIONS:
        raise BadInputError(path, f"unknown isolation {limits.isolation!r}", line=manifest_key_line(text, "isolation"),
                            field="limits.isolation", fix=f"use one of {', '.join(ISOLATIONS)}")
    variants = _variant_section(path, text, data.get("variants", {}))
    held_out = data.get("splits", {}).get("held_out")
    if held_out is not None and (not isinstance(held_out, str) or not re.fullmatch(r"[A-Za-z_][\w-]*", held_out)
                                 or held_out == "main"):
        raise BadInputError(path, f"expected the name of the held-out split, got {held_out!r}",
                            line=manifest_key_line(text, "held_out"), field="splits.held_out",
                            fix='write held_out = "held_out" and give those cases "split": "held_out" '
                                '(cases without a split are the main set)')
    if not questions.is_file():
        raise BadInputError(path, f"questions file {questions} does not exist", line=manifest_key_line(text, "questions"),
                            field="suite.questions", fix="point it at the JSONL file, relative to the manifest")
    if tables is not None and not tables.is_file():
        raise BadInputError(path, f"tables file {tables} does not exist", line=manifest_key_line(text, "tables"),
                            field="suite.tables", fix="point it at the layout's tables.json, or leave it out")
    if isinstance(database, Path) and not database.exists() and build is None:
        raise BadInputError(path, f"database {database} does not exist", line=manifest_key_line(text, "database"),
                            field="suite.database",
                            fix='point it at a DuckDB file next to the manifest, or add build = "build.sql" to make it')
    if isinstance(build, Path) and not build.is_file():
        raise BadInputError(path, f"build script {build} does not exist", line=manifest_key_line(text, "build"),
                            field="suite.build",
                            fix='point it at a SQL file that creates the database, or name a builder as "package.module:function"')
    database = _engine_location(path, text, suite, data.get("spark", {}), database, engine, spark_remote)
    return SuiteManifest(path=path, name=str(suite.get("name") or root.name), questions=questions,
                         database=database, dialect=dialect, build=build, schema_ddl=schema_ddl,
                         deprecated_tables=DEFAULT_DEPRECATED + tuple(dep), compare=compare, limits=limits,
                         layout=layout, tables=tables, constraints=dict(data.get("constraints", {})),
                         variants=variants, held_out=held_out, gold_types=tuple(gold_types.items()),
                         replacements=_replacements(path, text, suite.get("replacements", {})))


def _engine_location(path: Path, text: str, suite: dict[str, Any], spark: dict[str, Any],
                     database: Path | str | None, override: str | None,
                     spark_remote: str | None = None) -> Path | str | None:
    """The database location on the suite's engine: ``[suite] engine = "spark"`` (or
    ``--sqleval-engine=spark``, given as ``override``) grades the suite's DuckDB or SQLite file
    or Parquet folder on a local Spark (``engines.spark_sandbox``), with the settings of ``[spark]``."""
    engine = suite.get("engine")
    if engine is not None and (not isinstance(engine, str) or engine.lower() not in ENGINES_FOR_FILES):
        raise BadInputError(path, f"unknown engine {engine!r}", line=manifest_key_line(text, "engine"),
                            field="suite.engine", fix=f'write engine = "spark", or leave it out (the database '
                                                      "location selects the engine)")
    engine = override or (engine.lower() if isinstance(engine, str) else None)
    from ..engines.spark_sandbox import settings_from_table, spark_location
    try:
        settings = settings_from_table(spark)
    except ValueError as exc:
        raise BadInputError(path, str(exc), line=manifest_key_line(text, "spark"), field="spark",
                            fix="see [spark] in docs/reference/manifest.md") from None
    if spark_remote is not None and database is not None:
        return spark_remote  # the server's tables, whatever the manifest names: nothing is loaded
    if engine != "spark" or database is None or (isinstance(database, str) and is_url(database)):
        return database
    return spark_location(database, settings)


SEMANTIC_LAYER = "semantic_layer.yaml"


def _replacements(path: Path, text: str, values: Any) -> dict[str, str]:
    """``[suite] replacements`` ("deprecated table" = "the live one"), over the ``use_instead``
    of the semantic layer's ``deprecated_tables`` next to the manifest: what a failure text
    tells to read instead of a stale table."""
    if not isinstance(values, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in values.items()):
        raise BadInputError(path, "must be a table of deprecated table = the live table that replaces it",
                            line=manifest_key_line(text, "replacements"), field="suite.replacements",
                            fix='e.g. replacements = { "legacy.orders" = "orders.orders" }')
    out: dict[str, str] = {}
    layer = path.parent / SEMANTIC_LAYER
    if layer.is_file():
        import yaml
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml: every collection reads this file
        try:
            entries = (yaml.load(read_text(layer), Loader=loader) or {}).get("deprecated_tables") or []
        except (yaml.YAMLError, AttributeError):  # `validate` reports a broken layer; grading goes on
            entries = []
        out = {e["table"]: e["use_instead"] for e in entries
               if isinstance(e, dict) and isinstance(e.get("table"), str) and isinstance(e.get("use_instead"), str)}
    return {**out, **values}


def _variant_section(path: Path, text: str, values: dict[str, Any]) -> VariantPolicy:
    frozen = values.get("frozen_columns", [])
    if not isinstance(frozen, list) or not all(isinstance(c, str) and "." in c for c in frozen):
        raise BadInputError(path, "must be a list of \"table.column\" names", line=manifest_key_line(text, "frozen_columns"),
                            field="variants.frozen_columns", fix='e.g. frozen_columns = ["orders.status", "fx.*"]')
    count = _number(path, text, "variants", "count", values.get("count", 0), example=8)
    seed = _number(path, text, "variants", "seed", values.get("seed", 0), example=0)
    return VariantPolicy(count=count, seed=seed, frozen_columns=tuple(frozen))


def _number(path: Path, text: str, section: str, key: str, value: Any, example: Any) -> Any:
    """A numeric key through its parser (numeric.py): finite, in range, the right type."""
    try:
        return _NUMBERS[section][key].check(value)
    except NumberError as exc:
        raise BadInputError(path, str(exc), line=manifest_key_line(text, key), field=f"{section}.{key}",
                            fix=f"write {key} = {example!r}") from None


def _is_callable_spec(value: str) -> bool:
    """``package.module:function`` (a Python builder) rather than a script path."""
    mod, sep, fn = value.partition(":")
    return bool(sep) and mod.replace(".", "").replace("_", "").isalnum() and fn.replace("_", "").isalnum()


def _typed_section(path: Path, text: str, values: dict[str, Any], cls: type, section: str) -> Any:
    defaults = cls()
    values = dict(values)
    for key, val in list(values.items()):
        if key in _NUMBERS.get(section, {}):
            values[key] = _number(path, text, section, key, val, example=getattr(defaults, key))
            continue
        want = type(getattr(defaults, key))
        ok = (val is None or isinstance(val, bool)) if key in ("order_matters",) else (
            isinstance(val, want) or (want is float and isinstance(val, int) and not isinstance(val, bool)))
        if not ok or (want in (int, float) and isinstance(val, bool)):
            raise BadInputError(path, f"expected {want.__name__}, got {val!r}", line=manifest_key_line(text, key),
                                field=f"{section}.{key}", fix=f"write {key} as a {want.__name__}")
    return cls(**values)


def find_manifest_for(jsonl: Path, engine: str | None = None,
                      spark_remote: str | None = None) -> SuiteManifest | None:
    """The manifest that owns ``jsonl``, if any: only owned files are benchmark suites.
    ``engine``, ``spark_remote``: the run's choices for every suite (``load_manifest``)."""
    manifest = jsonl.parent / MANIFEST_NAME
    if not manifest.is_file():
        return None
    try:
        raw = tomllib.loads(read_text(manifest))
        named = raw.get("suite", {}).get("questions")
        if named is None:  # a benchmark layout's default questions file (Spider/BIRD: dev.json)
            layout = get_layout(str(raw["suite"].get("layout", "sqleval")).lower())
            if layout is None:
                return load_manifest(manifest, engine, spark_remote)  # reports the unknown layout
            named = layout.questions
    except (tomllib.TOMLDecodeError, AttributeError, KeyError):
        named = None  # a broken manifest: load it to report the error properly
        return load_manifest(manifest, engine, spark_remote)
    if not isinstance(named, str) or (jsonl.parent / named).resolve() != jsonl.resolve():
        return None
    return load_manifest(manifest, engine, spark_remote)
