"""Result-file golds: a gold answer given as a file (CSV, Parquet, JSON lines) instead of SQL,
read into a typed Arrow table once, when its suite is read, so a bad file is one collection
error naming the case and the file, never a failure of the prediction.

Types: a declared type wins (the case's ``gold_types``, else the suite's ``[gold_results]
types``); the rest are inferred (DuckDB's CSV sniffer; pyarrow's JSON reader; Parquet's own
schema). An inferred column is marked (``INFERRED_KEY`` in the field's metadata): a CSV
cannot say whether ``2020-01-02`` was a DATE or a string, or ``1.50`` a DECIMAL(10,2) or a
double, so the comparator reads a predicted text column against an inferred one as the
inferred type when every value converts (``compare.coerce_to_file_gold``), and numbers
compare by value whatever their scale or spelling. An empty unquoted CSV field is NULL, a
quoted ``""`` the empty string (DuckDB's reading, ``allow_quoted_nulls = false``)."""
from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

INFERRED_KEY = b"sqleval.inferred"  # field metadata: this column's type was inferred from the file


class ResultFileError(Exception):
    """A result file that cannot be a gold: missing, ragged, untypable. ``fix`` says what to do."""

    def __init__(self, message: str, fix: str) -> None:
        super().__init__(message)
        self.fix = fix


def read_result_file(path: Path, declared: tuple[tuple[str | int, str], ...] = ()) -> Any:
    """The file as a typed Arrow table (declared types applied, inferred columns marked)."""
    import duckdb
    import pyarrow as pa
    if not path.is_file():
        raise ResultFileError(f"result file {path} does not exist",
                              "give the path relative to the suite's folder (the folder of sqleval.toml)")
    suffix = path.suffix.lower()
    con = duckdb.connect(":memory:", config={"autoload_known_extensions": False})
    try:
        if suffix == ".csv":
            table, inferred = _read_csv(con, path), True
        elif suffix == ".parquet":
            import pyarrow.parquet as pq
            try:
                table, inferred = pq.read_table(path), False  # Parquet's own schema: its types are declared
            except (pa.ArrowException, OSError) as exc:
                raise ResultFileError(f"result file {path} is not readable Parquet ({exc})",
                                      "write it with pyarrow.parquet.write_table or DuckDB's COPY ... (FORMAT parquet)") from None
        else:
            import pyarrow.json as pj
            try:
                table, inferred = pj.read_json(path), True
            except (pa.ArrowException, OSError) as exc:
                raise ResultFileError(f"result file {path} cannot be typed as JSON lines ({str(exc).splitlines()[0]})",
                                      "write one JSON object per line, the same keys on each, one JSON type per key") from None
        return _typed(con, table, declared, inferred, path)
    finally:
        con.close()


def _read_csv(con: Any, path: Path) -> Any:
    """A CSV with a header row, comma-separated, read by DuckDB's reader after a check that
    every row has the header's number of fields (DuckDB would read a ragged file as one
    column, or fail with a sniffer's message)."""
    import duckdb
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise ResultFileError(f"result file {path} is not readable UTF-8 text ({exc})", "save it as UTF-8 CSV") from None
    rows = csv.reader(io.StringIO(text))
    header = next(rows, None)
    if not header:
        raise ResultFileError(f"result file {path} is empty: it has no header row",
                              "write the gold's column names on the first line, then one line per row")
    for n, row in enumerate(rows, start=2):
        if row and len(row) != len(header):
            raise ResultFileError(f"result file {path} line {n} has {len(row)} fields, the header has {len(header)}",
                                  "give every row as many comma-separated fields as the header (quote a value "
                                  "holding a comma)")
    try:
        return con.sql("SELECT * FROM read_csv(?, header = true, delim = ',', quote = '\"', escape = '\"', "
                       "strict_mode = true, null_padding = false, allow_quoted_nulls = false, "
                       "sample_size = -1)", params=[str(path)]).to_arrow_table()
    except duckdb.Error as exc:
        raise ResultFileError(f"result file {path} cannot be read as CSV ({str(exc).splitlines()[0]})",
                              "give a comma-separated file with a header row") from None


def _typed(con: Any, table: Any, declared: tuple[tuple[str | int, str], ...], inferred: bool, path: Path) -> Any:
    """``table`` with each declared column cast to its type (a value that does not convert is
    an error naming it) and every other column marked as inferred when the format infers."""
    import duckdb
    import pyarrow as pa
    names = table.column_names
    by_pos: dict[int, str] = {}
    for key, sql_type in declared:
        if isinstance(key, int):
            if key >= len(names):
                raise ResultFileError(f"result file {path} has {len(names)} columns; a type is declared for "
                                      f"position {key}", "declare types for the file's columns only (0-based)")
            by_pos[key] = sql_type
        elif key in names:
            by_pos[names.index(key)] = sql_type
        # a suite-wide declaration of a column this file lacks does not apply to it
    columns, fields = [], []
    for i, name in enumerate(names):
        col = table.column(i)
        if i in by_pos:
            con.register("__gold", pa.table({"v": col}))
            try:
                cast = con.sql(f"SELECT CAST(v AS {by_pos[i]}) AS v FROM __gold").to_arrow_table().column(0)
            except duckdb.Error as exc:
                raise ResultFileError(f"result file {path} column {name!r} cannot be typed as {by_pos[i]} "
                                      f"({str(exc).splitlines()[0]})",
                                      f"fix the value, or declare another type for {name!r} in \"gold_types\"") from None
            finally:
                con.unregister("__gold")
            columns.append(cast)
            fields.append(pa.field(name, cast.type))
        else:
            columns.append(col)
            fields.append(pa.field(name, col.type, metadata={INFERRED_KEY: b"1"} if inferred else None))
    return pa.Table.from_arrays(columns, schema=pa.schema(fields))


def inferred_columns(table: Any) -> list[int]:
    """Positions of the columns whose type was inferred from a result file."""
    return [i for i, f in enumerate(table.schema) if f.metadata and f.metadata.get(INFERRED_KEY)]
