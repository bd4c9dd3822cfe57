"""Reading the text files a user writes (manifests, questions, predictions, DDL):
UTF-8 with or without a BOM, and one clear error naming the line of the first bad byte."""
from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any, Iterator

from .errors import BadInputError

UTF8_BOM = b"\xef\xbb\xbf"


def not_utf8_error(path: Path, data: bytes, exc: UnicodeDecodeError) -> BadInputError:
    """The error for a file that is not UTF-8: the line and column of its first bad byte,
    and the fix. ``data`` is the file's bytes (after any BOM), as ``exc`` decoded them."""
    pos = exc.start
    line = data.count(b"\n", 0, pos) + 1
    col = pos - (data.rfind(b"\n", 0, pos) + 1) + 1
    return BadInputError(path, f"not UTF-8 text: byte 0x{data[pos]:02x} at column {col} cannot be decoded "
                               f"(the file looks like it was saved in another encoding, such as Latin-1 or cp1252)",
                         line=line, fix="save it as UTF-8 (with or without a BOM)")


def read_text(path: Path) -> str:
    """A text file we read (manifest, questions, predictions, layouts' JSON): UTF-8, with or
    without a BOM; anything else is one ``BadInputError`` naming the line of the first bad
    byte. Line ends are kept as they are."""
    return decode_text(path, Path(path).read_bytes())


def decode_text(path: Path, data: bytes) -> str:
    """``read_text`` of bytes already read from ``path`` (a reader that also hashes them
    reads the file once)."""
    if data.startswith(UTF8_BOM):
        data = data[len(UTF8_BOM):]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise not_utf8_error(Path(path), data, exc) from None


def iter_jsonl_text(text: str, path: Path, *, fix: str) -> Iterator[tuple[int, Any]]:
    """``iter_jsonl`` of a file's text already read (``read_text``): the same lines (universal
    newlines, as the file is read), values and errors."""
    for lineno, raw in enumerate(io.StringIO(text, newline=None), 1):
        if raw.strip():
            yield lineno, _line_value(raw, path, lineno, fix)


_JSON_SPACE = " \t\n\r"  # what JSON allows around a value (str.strip takes more)
_raw_decode = json.JSONDecoder().raw_decode


def _line_value(raw: str, path: Path, lineno: int, fix: str) -> Any:
    """``json.loads(raw)``, by the decoder's own step (``json.loads`` adds two calls and two
    searches for spaces around it, on every line); any line it refuses is given to
    ``json.loads`` for its message and column."""
    text = raw.strip(_JSON_SPACE)
    try:
        value, end = _raw_decode(text)
    except json.JSONDecodeError:
        end = -1
    if end == len(text):
        return value
    try:
        return json.loads(raw)  # raises, naming what is wrong (extra data after the value among it)
    except json.JSONDecodeError as exc:
        raise BadInputError(path, f"not valid JSON ({exc.msg} at column {exc.colno})", line=lineno,
                            fix=fix) from None


def iter_jsonl(path: Path, *, fix: str) -> Iterator[tuple[int, Any]]:
    """(line number, decoded value) for every non-blank line; bad JSON names file and line.
    UTF-8 with or without a BOM; a file in another encoding names its first bad line."""
    try:
        with path.open(encoding="utf-8-sig") as fh:
            for lineno, raw in enumerate(fh, 1):
                if raw.strip():
                    yield lineno, _line_value(raw, path, lineno, fix)
    except UnicodeDecodeError:
        read_text(path)  # raises the error that names the line of the first bad byte
        raise
