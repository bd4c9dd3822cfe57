"""Build a suite's database from its ``build`` SQL script the first time it is needed.

Under a file lock, into a temporary file renamed into place, so concurrent xdist
workers build it once and never see half a database."""
from __future__ import annotations

import fcntl
import os
from pathlib import Path

from ..errors import BadInputError


def ensure_database(database: Path | str, build_script: Path | str | None) -> bool:
    """Return True when a build happened. ``build_script`` is a SQL file, or a
    ``module:function`` builder called as ``function(path)`` to write the database.
    A URL (a PostgreSQL server) is never built."""
    from .shared import is_url
    if is_url(database):
        return False
    database = Path(database)
    if database.exists():
        return False
    if build_script is None:
        raise BadInputError(database, "database does not exist", fix="create it, or give the suite a build script")
    database.parent.mkdir(parents=True, exist_ok=True)
    lock_path = database.with_name(database.name + ".lock")
    tmp = database.with_name(f".{database.name}.{os.getpid()}.building")
    try:
        with open(lock_path, "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if database.exists():
                return False
            _build(build_script, tmp)
            if not tmp.exists():
                raise BadInputError(build_script, "the build produced no database file")
            os.replace(tmp, database)
        return True
    finally:  # a failed build leaves nothing in the suite's folder: no half database, no lock
        for leftover in (tmp, Path(str(tmp) + ".wal"), lock_path):
            leftover.unlink(missing_ok=True)


def _build(build_script: Path | str, target: Path) -> None:
    target.unlink(missing_ok=True)
    if isinstance(build_script, str):
        _call_builder(build_script, target)
        return
    import duckdb

    from ..textio import read_text
    script = read_text(build_script)  # before connecting: a script we cannot read leaves no file behind
    con = duckdb.connect(str(target))
    try:
        for i, stmt in enumerate(duckdb.extract_statements(script), 1):
            try:
                con.execute(stmt)
            except duckdb.Error as exc:
                raise BadInputError(build_script, f"statement {i} fails: {exc}".splitlines()[0],
                                    fix="fix the build script; the database was not created") from None
        con.execute("CHECKPOINT")
    finally:
        con.close()


def _call_builder(spec: str, target: Path) -> None:
    import importlib
    module_name, _, attr = spec.partition(":")
    try:
        builder = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise BadInputError(spec, f"cannot load the database builder: {exc}",
                            fix="name an importable function as package.module:function") from None
    builder(target)
    if not target.exists():
        raise BadInputError(spec, f"the builder did not write {target}")
