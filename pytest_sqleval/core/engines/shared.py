"""What the engines and their package share, below all of them: how a database location
is read (file suffixes, URL schemes, the SQLite header; a URL's password masked), memory
sizes, and counting statements. It imports no engine, so every engine may import it."""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

DUCKDB_SUFFIXES = (".duckdb", ".ddb")
SQLITE_SUFFIXES = (".sqlite", ".sqlite3", ".db", ".db3")
POSTGRES_SCHEMES = ("postgresql", "postgres")
SPARK_SCHEMES = ("spark", "sc")  # a mirrored local source; a Spark Connect server
SQLITE_MAGIC = b"SQLite format 3\x00"
_URL_RE = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*)://")
_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?i?B?)\s*$", re.I)


def is_url(database: Any) -> bool:
    """Whether a database location is a URL (``scheme://...``) rather than a file path."""
    return isinstance(database, str) and _URL_RE.match(database) is not None


def display_location(database: Any) -> str:
    """A database location for messages and records: a URL's password is masked, and a
    Spark Connect location's ``;token=`` (``sc://host:port/;token=...``)."""
    text = str(database)
    if not is_url(text):
        return text
    text = re.sub(r"(;token=)[^;]*", r"\1***", text, flags=re.I)
    from urllib.parse import urlsplit, urlunsplit
    parts = urlsplit(text)
    if parts.password is None:
        return text
    netloc = parts.netloc.replace(":" + parts.password + "@", ":***@", 1)
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def parse_size(value: str | int | float) -> int:
    """``"2GB"`` -> bytes (DuckDB's spelling of memory limits; 1 KB = 1000 B, 1 KiB = 1024 B)."""
    if isinstance(value, (int, float)):
        return int(value)
    m = _SIZE_RE.match(value)
    if not m:
        raise ValueError(f"not a size: {value!r} (write e.g. '2GB' or '512MiB')")
    num, unit = float(m.group(1)), m.group(2).upper()
    base = 1024 if "I" in unit else 1000
    prefix = unit.rstrip("B").rstrip("I")
    return int(num * base ** ("KMGT".index(prefix) + 1 if prefix else 0))


def statement_count(sql: str, dialect: str) -> int:
    """How many statements ``sql`` holds, by sqlglot's tokenizer (trailing semicolons and
    comments do not count). -1 when it cannot be tokenized."""
    import sqlglot
    from sqlglot import TokenType
    try:
        tokens = sqlglot.tokenize(sql, read=dialect)
    except Exception:
        return -1
    count, pending = 0, False
    for tok in tokens:
        if tok.token_type == TokenType.SEMICOLON:
            count += pending
            pending = False
        else:
            pending = True
    return count + pending


def write_cache_file(path: Path, text: str) -> None:
    """``text`` into ``path`` atomically (a temporary file, then a rename), so a reader never
    sees half a cache entry; a cache that cannot be written is only slower, never an error."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(text)
        os.replace(tmp, path)
    except OSError:
        pass
