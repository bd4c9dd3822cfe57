"""The benchmark formats a manifest can name (``layout = "spider"``), as a registry: a
benchmark is read as it is shipped, with no conversion step, and a format we do not ship
is added the way the built-ins are, by ``register_layout`` or an entry point.

A layout turns its questions file into raw records (``(line, dict in our case shape)``);
``read.validate_records`` makes them cases, so every layout gets the same validation,
the same duplicate-id check and the same file:line:field messages.

    # pyproject.toml of a plugin
    [project.entry-points."pytest_sqleval.layouts"]
    mybench = "mybench_sqleval:LAYOUT"
"""
from __future__ import annotations

import contextvars
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from ..errors import BadInputError, UsageError
from ..registry import Registry
from ..textio import iter_jsonl, read_text

ENTRY_POINT_GROUP = "pytest_sqleval.layouts"

#: ``(line, record)`` pairs: each record a dict with ``id``, ``question``, ``gold_sql``,
#: optional labels, and anything else (which becomes the case's metadata)
Records = Iterable[tuple[int, Any]]
#: case id -> (sql, metadata), or None when the file is not in this layout's format
Predictions = dict[str, tuple[str, dict[str, Any]]]


class LayoutError(UsageError):
    """A layout plugin is broken: not a ``Layout``, a name taken by another, or an entry
    point that cannot be loaded. The message names the plugin and the fix."""


@dataclass(frozen=True)
class Layout:
    """A benchmark format: how its questions file becomes case records, the manifest
    defaults it implies, and how its cases find their databases and predictions."""

    name: str  # what `layout = "..."` says; lower case
    records: Callable[[Path], Records]  # questions file -> (line, record) in file order
    questions: str | None = None  # the questions file when the manifest names none
    database: str | None = None  # the database (file, folder or URL) when the manifest names none
    dialect: str = "duckdb"  # the SQL dialect when the manifest names none
    #: the record key naming each case's own database (Spider/BIRD: "db_id"): the suite's
    #: database is then a folder (<folder>/<value>/<value>.sqlite), one file, or a URL with
    #: "{db_id}" in it; None: every case runs on the suite's database
    split_by: str | None = None
    #: where one database sits in the suite's database folder, "{0}" its ``split_by`` value
    #: (Spider/BIRD: a folder per database; Spider 2.0-lite: "{0}.sqlite"; defog: "{0}.db")
    database_file: str = "{0}/{0}.sqlite"
    #: reads a predictions file in this benchmark's own format (keyed by case id), or
    #: returns None when the file is not in it; the latest registered layout is asked first
    predictions: Callable[[Path], Predictions | None] | None = None
    #: a suite must name a database or a schema; False when each case carries its own
    #: schema (sql-create-context's CREATE TABLE context)
    requires_database: bool = True
    description: str = ""
    #: the benchmark's own column rule, the suite's ``[compare] column_order`` unless it says
    #: otherwise: "position" (ours, BIRD's tuples) or "any" (Spider's column bijection)
    column_order: str = "position"


# -- the registry --------------------------------------------------------------------------
def _check(layout: Any, where: str) -> Layout:
    if not isinstance(layout, Layout):
        raise LayoutError(f"{where} is not a layout (got {type(layout).__name__}). Fix: make it a "
                          "pytest_sqleval.core.cases.Layout(name=..., records=...)")
    name = layout.name
    if not isinstance(name, str) or not name or name != name.strip().lower() or " " in name:
        raise LayoutError(f"{where} has the name {name!r}. Fix: name it in lower case without spaces "
                          "(the manifest's `layout = \"...\"` is matched in lower case)")
    bad = [f for f in ("records", "predictions") if getattr(layout, f) is not None and not callable(getattr(layout, f))]
    if not callable(layout.records) or bad:
        raise LayoutError(f"{where}: {', '.join(bad or ['records'])} must be a function. Fix: "
                          "records(path) -> (line, record) pairs; predictions(path) -> {case id: (sql, metadata)} "
                          "or None")
    return layout


#: the layouts: registered ones in registration order (the built-ins first), then entry points by name
LAYOUTS: Registry[Layout] = Registry("layout", ENTRY_POINT_GROUP, LayoutError, check=_check)
_registered = LAYOUTS.registered  # name -> (layout, module that registered it)


def register_layout(layout: Layout) -> Layout:
    """Make ``layout`` available to manifests under its name; returns it. Registering again
    from the same module (a conftest.py imported again) replaces it; another module's
    layout under a taken name is an error."""
    return LAYOUTS.register(layout, owner=sys._getframe(1).f_globals.get("__name__", "?"))


def unregister_layout(name: str) -> None:
    """Remove a layout given to ``register_layout`` (a no-op for unknown names)."""
    LAYOUTS.unregister(name)


def reload_entry_points() -> None:
    """Forget the loaded entry points; the next lookup reads them again."""
    LAYOUTS.reload_entry_points()


def all_layouts() -> list[Layout]:
    """Every layout: registered ones in registration order (the built-ins first), then
    entry points by name."""
    return LAYOUTS.all()


def layout_names() -> list[str]:
    return LAYOUTS.names()


def get_layout(name: str) -> Layout | None:
    """The layout called ``name``, or None."""
    return LAYOUTS.get(name)


#: the texts of the files ``read_layout_predictions`` is asking the layouts about: each
#: file read once however many layouts look at it (``layout_text``)
_TEXTS: contextvars.ContextVar[dict[Path, str] | None] = contextvars.ContextVar("sqleval_layout_texts", default=None)


def layout_text(path: Path) -> str:
    """``read_text(path)``; while ``read_layout_predictions`` asks the layouts about a file,
    read once for all of them (each built-in looks at the text to tell whether the file is
    its format; a layout plugin may call this too)."""
    texts = _TEXTS.get()
    if texts is None:
        return read_text(path)
    text = texts.get(path)
    if text is None:
        text = texts[path] = read_text(path)
    return text


def read_layout_predictions(path: Path, text: str | None = None) -> Predictions | None:
    """Predictions in a benchmark's own format, or ``None`` when no layout reads the file
    (then it is our JSONL). The latest registered layout is asked first, as pluggy calls
    the latest plugin first, so a plugin's format comes before the built-ins'. ``text``:
    the file's text when the caller has read it already (``read_text``)."""
    token = _TEXTS.set({} if text is None else {path: text})
    try:
        for layout in reversed(all_layouts()):
            if layout.predictions is not None:
                found = layout.predictions(path)
                if found is not None:
                    return found
        return None
    finally:
        _TEXTS.reset(token)


# -- what the built-ins share -------------------------------------------------------------
def read_records(path: Path) -> Iterator[tuple[int, Any]]:
    """``(line, object)`` for each entry of a JSON array or a JSONL file."""
    text = read_text(path)
    if not text.lstrip().startswith("["):
        yield from iter_jsonl(path, fix="each line must be one complete JSON object")
        return
    decoder = json.JSONDecoder()
    pos = text.index("[") + 1
    line, counted = 1, 0  # lines are counted on from the last entry: once over the file, not once per entry
    while True:
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(text):
            raise BadInputError(path, "the JSON array is not closed", line=text.count("\n") + 1,
                                fix="end the file with ']'")
        if text[pos] == "]":
            return
        line += text.count("\n", counted, pos)
        counted = pos
        try:
            obj, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise BadInputError(path, f"not valid JSON ({exc.msg})", line=exc.lineno,
                                fix="check quoting and commas around this entry") from None
        yield line, obj


def need(obj: Any, key: str, path: Path, line: int, fix: str) -> str:
    """``obj[key]`` as a non-empty string; a ``BadInputError`` naming file, line and field otherwise."""
    if not isinstance(obj, dict):
        raise BadInputError(path, f"expected a JSON object, got {type(obj).__name__}", line=line, fix=fix)
    val = obj.get(key)
    if not isinstance(val, str) or not val.strip():
        raise BadInputError(path, f"missing or empty (got {val!r})", line=line, field=key, fix=fix)
    return val


# -- the built-ins ---------------------------------------------------------------------------
#: Spider keys left out of a case's metadata: tokenisations and the parsed SQL tree.
SPIDER_BULK_KEYS = ("query_toks", "query_toks_no_value", "question_toks", "sql")
BIRD_SEPARATOR = "\t----- bird -----\t"


def _sqleval_records(path: Path) -> Records:
    return iter_jsonl(path, fix="each line must be one complete JSON object")


def _db_records(path: Path, gold_key: str, bird: bool) -> Records:
    """Spider's and BIRD's entries; the id is the 0-based position, as their prediction files key them."""
    fix = f'each entry needs "db_id", "question" and "{gold_key}"' + (' (and usually "evidence")' if bird else "")
    for index, (line, obj) in enumerate(read_records(path)):
        db_id = need(obj, "db_id", path, line, fix)
        gold = need(obj, gold_key, path, line, fix)
        question = need(obj, "question", path, line, fix)
        meta = {k: v for k, v in obj.items() if k not in (gold_key, "question", "difficulty", *SPIDER_BULK_KEYS)}
        meta["db_id"] = db_id
        if bird:
            meta.setdefault("evidence", "")
        if "id" in meta:
            meta["source_id"] = meta.pop("id")
        raw = {**meta, "id": str(index), "question": question, "gold_sql": gold}
        if isinstance(obj.get("difficulty"), str):
            raw["difficulty"] = obj["difficulty"]
        yield line, raw


def _spider_records(path: Path) -> Records:
    return _db_records(path, "query", bird=False)


def _bird_records(path: Path) -> Records:
    return _db_records(path, "SQL", bird=True)


def _context_records(path: Path) -> Records:
    fix = 'each line needs "question", "context" (CREATE TABLE statements) and "answer"'
    for index, (line, obj) in enumerate(read_records(path)):
        question = need(obj, "question", path, line, fix)
        gold = need(obj, "answer", path, line, fix)
        context = need(obj, "context", path, line, fix)
        cid = obj.get("id")
        raw = {k: v for k, v in obj.items() if k not in ("question", "answer")}
        raw.update(id=str(cid) if isinstance(cid, (str, int)) and not isinstance(cid, bool) else str(index),
                   question=question, gold_sql=gold, context=context)
        yield line, raw


def _spider_predictions(path: Path) -> Predictions | None:
    """One SQL per line in question order (a ``\\t<db_id>`` suffix is dropped; an empty
    line is an empty prediction; trailing empty lines are ignored)."""
    if path.is_dir():
        return None  # a folder: Spider 2.0's submission
    text = layout_text(path)
    if text.lstrip().startswith("{"):
        return None  # JSON: BIRD's object or our JSONL
    lines = text.splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    out = {}
    for i, line in enumerate(lines):
        sql, _, db_id = line.partition("\t")
        out[str(i)] = (sql.strip(), {"db_id": db_id.strip()} if db_id.strip() else {})
    return out


def _bird_predictions(path: Path) -> Predictions | None:
    """BIRD's ``predict_dev.json``: ``{"0": "SQL\\t----- bird -----\\tdb_id", ...}``."""
    if path.is_dir():
        return None  # a folder: Spider 2.0's submission
    text = layout_text(path)
    if not text.lstrip().startswith("{"):
        return None
    try:  # one JSON object spanning the file: BIRD's predict_dev.json
        obj = json.loads(text)
    except json.JSONDecodeError:
        return None  # JSONL: one object per line
    if not isinstance(obj, dict) or {"sql", "id", "qid"} & set(obj):
        return None  # a one-line JSONL file
    if not all(isinstance(v, str) for v in obj.values()):
        raise BadInputError(path, "a JSON object of predictions must map question positions to SQL strings",
                            line=1, fix='write {"0": "SELECT ...", "1": "SELECT ..."}, or JSONL')
    out = {}
    for key, value in obj.items():
        sql, _, db_id = value.partition(BIRD_SEPARATOR)
        out[str(key)] = (sql.strip(), {"db_id": db_id.strip()} if db_id else {})
    return out


SQLEVAL = register_layout(Layout(
    "sqleval", _sqleval_records,
    description="our JSONL: id, question, gold_sql, labels; one database file or URL"))
SPIDER = register_layout(Layout(
    "spider", _spider_records, questions="dev.json", database="database", dialect="sqlite", split_by="db_id",
    predictions=_spider_predictions, column_order="any",  # Spider's result_eq accepts any column permutation
    description="dev.json (db_id, question, query) next to tables.json and database/<db_id>/<db_id>.sqlite"))
BIRD = register_layout(Layout(
    "bird", _bird_records, questions="dev.json", database="dev_databases", dialect="sqlite", split_by="db_id",
    predictions=_bird_predictions,
    description="dev.json (question_id, db_id, question, evidence, SQL, difficulty) and "
                "dev_databases/<db_id>/<db_id>.sqlite; evidence reaches backends as case.metadata['evidence']"))
SQL_CREATE_CONTEXT = register_layout(Layout(
    "sql-create-context", _context_records, dialect="sqlite", requires_database=False,
    description="JSONL or a JSON array of question, context (CREATE TABLE) and answer; no database: each case "
                "is graded without execution against a catalog built from its own context"))
