"""A run's records as a table, one row per case, for analysis in DuckDB or pandas:

    from pytest_sqleval import load_results
    rel = load_results("sqleval-results")              # a DuckDB relation, also a view named "results"
    rel.filter("error_class = 'stale_table'").select("case_id, backend, grounding__tables").show()
    df = load_results("sqleval-results", kind="pandas")   # needs pandas

The record's own fields are columns as they are (``case_id``, ``status``, ``error_class``,
``tags``...); every layer's evidence is a column ``<layer>__<field>`` (``parse__ok``,
``structure__distance``, ``diagnostics__most_likely``, ``compare__reason``,
``execution__rows``...), the backend's metadata ``meta__<key>`` (``meta__model``,
``meta__total_tokens``...). A value that is itself a list or a mapping (a result preview, a
clause diff) is JSON text, which DuckDB's ``->>`` and ``json_extract`` read."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..core.records import READ_FIX, CaseRecord, as_records

#: Record fields whose mapping is spread over columns ``<prefix>__<key>``.
SPREAD = {"backend_metadata": "meta", "execution": "execution", "compare": "compare", "gold": "gold",
          "generation": "generation", "judge": "judge", "run_metadata": "run", "case_metadata": "case"}


def read_records(results: str | Path) -> tuple[Path, list[CaseRecord]]:
    """The case records of a results.jsonl (or the folder a run wrote it to), checked line by
    line: a line that is not a record (or a record of a version this release does not read)
    is a ``BadInputError`` naming the file and line (``CaseRecord.from_json_dict``)."""
    from ..core import BadInputError, iter_jsonl
    results = Path(results)
    path = results / "results.jsonl" if results.is_dir() else results
    if not path.is_file():
        raise BadInputError(path, "no such results file",
                            fix="give a results.jsonl, or the folder a run wrote it to (--sqleval-results)")
    records = [CaseRecord.from_json_dict(data, source=path, line=lineno)
               for lineno, data in iter_jsonl(path, fix=READ_FIX)]
    return path, records


def flatten(record: CaseRecord | Mapping[str, Any]) -> dict[str, Any]:
    """One record as one flat row (see the module docstring for the column names): its JSON
    object (``CaseRecord.to_json_dict``), spread."""
    row: dict[str, Any] = {}
    for key, value in CaseRecord.of(record).to_json_dict().items():
        if key == "layers" and isinstance(value, dict):
            for layer, evidence in value.items():
                for k, v in (evidence.items() if isinstance(evidence, dict) else [("value", evidence)]):
                    row[f"{layer}__{k}"] = v
        elif key in SPREAD and isinstance(value, dict):
            for k, v in value.items():
                row[f"{SPREAD[key]}__{k}"] = v
        else:
            row[key] = value
    return row


def _column(values: list[Any]) -> Any:
    """An Arrow column: scalars as their type, a list of texts (``tags``) as a list, anything
    else (or a column of mixed types) as JSON text."""
    import pyarrow as pa
    if all(v is None or isinstance(v, list) and all(isinstance(x, str) for x in v) for v in values):
        return pa.array(values, type=pa.list_(pa.string()))
    if all(v is None or isinstance(v, (str, int, float, bool)) for v in values):
        try:
            return pa.array(values)
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
            pass
    return pa.array([None if v is None else v if isinstance(v, str) else json.dumps(v, default=str)
                     for v in values], type=pa.string())


def records_table(records: Iterable[CaseRecord | Mapping[str, Any]]) -> Any:
    """The records as a ``pyarrow.Table``, one row per case, every column any record has."""
    import pyarrow as pa
    rows = [flatten(r) for r in as_records(records)]
    names: dict[str, None] = {}
    for row in rows:
        names.update(dict.fromkeys(row))
    return pa.table({name: _column([row.get(name) for row in rows]) for name in names})


def load_results(results: str | Path = "sqleval-results", *, kind: str = "duckdb", connection: Any = None) -> Any:
    """A finished run's results.jsonl (or its folder) as a table: ``kind`` is ``duckdb`` (a
    relation on ``connection``, or on a new in-memory database; also registered there as the
    view ``results``), ``pandas`` (a DataFrame) or ``arrow`` (a pyarrow Table)."""
    from ..core import UsageError
    if kind not in ("duckdb", "pandas", "arrow"):
        raise UsageError(f"load_results(kind={kind!r}): expected 'duckdb', 'pandas' or 'arrow'")
    table = records_table(read_records(results)[1])
    if kind == "arrow":
        return table
    if kind == "pandas":
        try:
            return table.to_pandas()
        except ImportError:
            raise UsageError("load_results(kind='pandas') needs pandas: pip install pandas "
                             "(or use kind='duckdb' and .df() later)") from None
    import duckdb
    con = connection if connection is not None else duckdb.connect()
    con.register("results", table)
    return con.table("results")
