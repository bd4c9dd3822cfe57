"""Benchmark layouts a manifest can point at directly, with no conversion step.

``layout`` in ``[suite]`` selects how the questions file is read and where each case's
database is:

- ``sqleval`` (default): our JSONL (``id``, ``question``, ``gold_sql``, labels).
- ``spider``: ``dev.json`` (a JSON array of ``db_id``, ``question``, ``query``) next to
  ``tables.json`` and ``database/<db_id>/<db_id>.sqlite``. Defaults: ``questions =
  "dev.json"``, ``database = "database"``, ``dialect = "sqlite"``.
- ``bird``: ``dev.json`` (``question_id``, ``db_id``, ``question``, ``evidence``, ``SQL``,
  ``difficulty``) and ``dev_databases/<db_id>/<db_id>.sqlite``. Defaults: ``questions =
  "dev.json"``, ``database = "dev_databases"``, ``dialect = "sqlite"``. The evidence
  reaches backends as ``case.metadata["evidence"]``.
- ``sql-create-context``: JSONL (or a JSON array) of ``question``, ``context`` (CREATE
  TABLE statements) and ``answer``. No database: each case is graded without execution
  against a catalog built from *its own* context (parse rate, schema adherence, exact
  match, no-values exact match, and the judge when enabled).

A Spider or BIRD case's ``db_id`` selects its database: ``database`` may be a folder
(``<folder>/<db_id>/<db_id>.sqlite``), one database file for every case, or a URL with
``{db_id}`` in it (``postgresql://grader@host/{db_id}``). Each database gets its own
engine and content hash, so gold answers are cached per database; its records carry the
suite name ``<suite>/<db_id>``.

Case ids are the 0-based position of the question in the file (``0``, ``1``, ...; a
``sql-create-context`` line may give its own ``id``), which is how the benchmarks' own
prediction files are keyed: Spider's one SQL per line in question order, and BIRD's
``predict_dev.json`` (``{"0": "SQL\\t----- bird -----\\tdb_id", ...}``). Both are read by
``--sqleval-backend=predictions:FILE`` (see ``read_layout_predictions``), as is JSONL.
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, Iterator

from .cases import BenchmarkCase, SuiteManifest, iter_jsonl, parse_case, read_cases, read_text
from .errors import BadInputError


LAYOUT_DEFAULTS: dict[str, dict[str, str]] = {
    "sqleval": {},
    "spider": {"questions": "dev.json", "database": "database", "dialect": "sqlite"},
    "bird": {"questions": "dev.json", "database": "dev_databases", "dialect": "sqlite"},
    "sql-create-context": {"dialect": "sqlite"},
}
#: Spider keys left out of a case's metadata: tokenisations and the parsed SQL tree.
SPIDER_BULK_KEYS = ("query_toks", "query_toks_no_value", "question_toks", "sql")
BIRD_SEPARATOR = "\t----- bird -----\t"


# -- reading records ---------------------------------------------------------------------
def read_records(path: Path) -> Iterator[tuple[int, Any]]:
    """``(line, object)`` for each entry of a JSON array or a JSONL file."""
    text = read_text(path)
    if not text.lstrip().startswith("["):
        yield from iter_jsonl(path, fix="each line must be one complete JSON object")
        return
    decoder = json.JSONDecoder()
    pos = text.index("[") + 1
    while True:
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(text):
            raise BadInputError(path, "the JSON array is not closed", line=text.count("\n") + 1,
                                fix="end the file with ']'")
        if text[pos] == "]":
            return
        line = text.count("\n", 0, pos) + 1
        try:
            obj, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise BadInputError(path, f"not valid JSON ({exc.msg})", line=exc.lineno,
                                fix="check quoting and commas around this entry") from None
        yield line, obj


def _need(obj: Any, key: str, path: Path, line: int, fix: str) -> str:
    if not isinstance(obj, dict):
        raise BadInputError(path, f"expected a JSON object, got {type(obj).__name__}", line=line, fix=fix)
    val = obj.get(key)
    if not isinstance(val, str) or not val.strip():
        raise BadInputError(path, f"missing or empty (got {val!r})", line=line, field=key, fix=fix)
    return val


def read_layout_cases(manifest: SuiteManifest, path: Path | None = None) -> list[BenchmarkCase]:
    """Every case of a suite in the manifest's layout, in file order."""
    path = path or manifest.questions
    layout = manifest.layout
    if layout == "sqleval":
        return read_cases(path, suite=manifest.name)
    cases: list[BenchmarkCase] = []
    seen: dict[str, int] = {}
    for index, (line, obj) in enumerate(read_records(path)):
        if layout in ("spider", "bird"):
            gold_key = "query" if layout == "spider" else "SQL"
            fix = (f'each entry needs "db_id", "question" and "{gold_key}"'
                   + (' (and usually "evidence")' if layout == "bird" else ""))
            db_id = _need(obj, "db_id", path, line, fix)
            gold = _need(obj, gold_key, path, line, fix)
            question = _need(obj, "question", path, line, fix)
            meta = {k: v for k, v in obj.items() if k not in (gold_key, "question", "difficulty", *SPIDER_BULK_KEYS)}
            meta["db_id"] = db_id
            if layout == "bird":
                meta.setdefault("evidence", "")
            if "id" in meta:
                meta["source_id"] = meta.pop("id")
            raw = {**meta, "id": str(index), "question": question, "gold_sql": gold}
            if isinstance(obj.get("difficulty"), str):
                raw["difficulty"] = obj["difficulty"]
        else:  # sql-create-context
            fix = 'each line needs "question", "context" (CREATE TABLE statements) and "answer"'
            question = _need(obj, "question", path, line, fix)
            gold = _need(obj, "answer", path, line, fix)
            context = _need(obj, "context", path, line, fix)
            cid = obj.get("id")
            raw = {k: v for k, v in obj.items() if k not in ("question", "answer")}
            raw.update(id=str(cid) if isinstance(cid, (str, int)) and not isinstance(cid, bool) else str(index),
                       question=question, gold_sql=gold, context=context)
        case = parse_case(raw, path, line, manifest.name)
        if case.id in seen:
            raise BadInputError(path, f"duplicate id {case.id!r} (first on line {seen[case.id]})", line=line,
                                field="id", fix="give every case a unique id")
        seen[case.id] = line
        cases.append(case)
    return cases


def collect_cases(manifest: SuiteManifest, path: Path) -> list[tuple[BenchmarkCase, SuiteManifest]]:
    """Each case with the manifest it is graded under: for Spider and BIRD, one derived
    manifest per database (its own engine, content hash and gold cache)."""
    cases = read_layout_cases(manifest, path)
    if manifest.layout not in ("spider", "bird") or manifest.database is None:
        return [(c, manifest) for c in cases]
    described = _described_databases(manifest.tables) if manifest.tables is not None else None
    per_db: dict[str, SuiteManifest] = {}
    out = []
    for case in cases:
        db_id = case.metadata["db_id"]
        if described is not None and db_id not in described:
            where, _, line = case.source.rpartition(":")
            raise BadInputError(where, f"database {db_id!r} is not described in {manifest.tables.name}",
                                line=int(line) if line.isdigit() else None, field="db_id",
                                fix=f"fix the db_id, or add the database to {manifest.tables}")
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
    """The manifest of one ``db_id``'s database within a Spider/BIRD suite."""
    db = manifest.database
    if isinstance(db, str):
        target: Path | str = db.replace("{db_id}", db_id)
    elif db is not None and db.is_dir():
        target = db / db_id / f"{db_id}.sqlite"
    else:
        target = db  # one database for every case
    return dataclasses.replace(manifest, path=manifest.path.with_name(f"{manifest.path.name}#{db_id}"),
                               name=f"{manifest.name}/{db_id}", database=target)


# -- predictions -------------------------------------------------------------------------
def read_layout_predictions(path: Path) -> dict[str, tuple[str, dict[str, Any]]] | None:
    """Predictions in a benchmark's own format, keyed by 0-based question position, or
    ``None`` when the file is our JSONL:

    - one SQL per line in question order (Spider's format; a ``\\t<db_id>`` suffix is
      dropped; an empty line is an empty prediction; trailing empty lines are ignored);
    - a JSON object ``{"0": "SQL\\t----- bird -----\\tdb_id", ...}`` (BIRD's format)."""
    text = read_text(path)
    if text.lstrip().startswith("{"):
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
    lines = text.splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    out = {}
    for i, line in enumerate(lines):
        sql, _, db_id = line.partition("\t")
        out[str(i)] = (sql.strip(), {"db_id": db_id.strip()} if db_id.strip() else {})
    return out
