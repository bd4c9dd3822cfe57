"""What the agent knows about a suite: its tables and columns with their comments, its
semantic layer, and a sandbox to run candidates on for the self-check.

A case finds its suite through the questions file it came from
(``case.source.rsplit(':', 1)[0]``). One :class:`SuiteWorkspace` per suite per process is
kept, and one sandbox per database: DuckDB refuses a second locked-down connection to
the same file in one process, and every configuration of a run shares the first one.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...core import BackendError, BenchmarkCase, SqlevalError, SuiteManifest, find_manifest_for


@dataclass(frozen=True)
class ColumnDoc:
    name: str
    type: str
    comment: str = ""


@dataclass(frozen=True)
class TableDoc:
    """One table or view as the model sees it."""

    schema: str
    name: str
    columns: tuple[ColumnDoc, ...]
    comment: str = ""

    @property
    def qualified(self) -> str:
        return self.name if self.schema in ("main", "") else f"{self.schema}.{self.name}"

    def ddl(self, *, comments: bool = True, note: str = "") -> str:
        """A CREATE TABLE with the comments as SQL comments: the form models read best."""
        head = f"CREATE TABLE {self.qualified} ("
        if comments and self.comment:
            head += f"  -- {_one_line(self.comment)}"
        lines = [head]
        if note:
            lines.insert(0, note)
        for i, c in enumerate(self.columns):
            sep = "," if i < len(self.columns) - 1 else ""
            line = f"  {c.name} {c.type}{sep}"
            if comments and c.comment:
                line += f"  -- {_one_line(c.comment)}"
            lines.append(line)
        lines.append(");")
        return "\n".join(lines)

    def compact(self) -> str:
        """``schema.table(col TYPE, ...)``: names and types only."""
        return f"{self.qualified}(" + ", ".join(f"{c.name} {c.type}" for c in self.columns) + ")"


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


@dataclass
class SuiteWorkspace:
    """A suite's schema, layer and self-check sandbox, shared by every backend of a process."""

    manifest: SuiteManifest
    tables: list[TableDoc]
    dialect: str  # the suite's SQL dialect: what the model is asked to write
    sandbox: Any = None  # None: no database to run candidates on (a schema-only suite)
    layer: Any = None  # a pytest_sqleval.products.warehouse.semantic.SemanticLayer, or None
    layer_error: str | None = None
    layer_sha: str | None = None
    cache: dict[Any, Any] = field(default_factory=dict)  # retrievers and rendered blocks, per config
    lock: threading.Lock = field(default_factory=threading.Lock)

    def by_name(self) -> dict[str, TableDoc]:
        return {t.qualified.lower(): t for t in self.tables}

    def schema_key(self) -> str:
        """A digest of everything about the suite a prompt can show: the dialect, every
        table and column with its type and comment, and the semantic layer's text. It keys
        the agent's cached generations, so an edited database or layer is asked again."""
        with self.lock:
            key = self.cache.get("schema_key")
            if key is None:
                import hashlib
                text = "\n".join([self.dialect, self.layer_sha or "", *(t.ddl(comments=True) for t in self.tables)])
                key = self.cache["schema_key"] = hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]
        return key


_workspaces: dict[str, SuiteWorkspace] = {}
_sandboxes: dict[str, Any] = {}
_lock = threading.Lock()
_atexit_registered = False


def workspace_for(case: BenchmarkCase) -> SuiteWorkspace:
    """The workspace of the suite a case belongs to (built once per process; thread-safe)."""
    questions = case.source.rsplit(":", 1)[0] if case.source else ""
    if not questions:
        raise BackendError(f"case {case.id!r} carries no source file, so its suite (schema, database, "
                           "semantic layer) cannot be found")
    key = str(Path(questions).resolve())
    with _lock:
        ws = _workspaces.get(key)
        if ws is None:
            ws = _workspaces[key] = _build_workspace(Path(questions))
    return ws


def _build_workspace(questions: Path) -> SuiteWorkspace:
    try:
        manifest = find_manifest_for(questions)
    except SqlevalError as exc:
        raise BackendError(str(exc)) from None
    if manifest is None:
        raise BackendError(f"{questions}: no sqleval.toml next to it names it as its questions file")
    sandbox = None
    if manifest.database is not None:
        from ...core import ensure_database
        ensure_database(manifest.database, manifest.build)
        sandbox = _sandbox(manifest)
        tables = _tables_from_sandbox(sandbox)
    elif manifest.schema_ddl is not None:
        tables = _tables_from_ddl(manifest.schema_ddl)
    else:
        raise BackendError(f"{manifest.path}: the suite has neither a database nor a schema file, so an LLM "
                           "backend has no schema to show the model. Fix: add database = ... or schema = \"schema.sql\"")
    ws = SuiteWorkspace(manifest=manifest, tables=tables, dialect=manifest.dialect, sandbox=sandbox)
    _attach_layer(ws)
    return ws


def _attach_layer(ws: SuiteWorkspace) -> None:
    from ..warehouse.semantic import LAYER_NAME, load_layer
    path = ws.manifest.root / LAYER_NAME
    if not path.is_file():
        return
    import hashlib
    ws.layer_sha = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    try:
        ws.layer = load_layer(path)
    except SqlevalError as exc:  # only the layer configurations need it; they report this per case
        ws.layer_error = str(exc)


def _sandbox(manifest: SuiteManifest) -> Any:
    from ...core import open_sandbox
    database = manifest.database
    assert database is not None  # the agent's backends run on suites with a database
    key = str(database if isinstance(database, str) else Path(database).resolve())
    sb = _sandboxes.get(key)
    if sb is None:
        try:
            sb = _sandboxes[key] = open_sandbox(database, manifest.limits)
        except Exception as exc:
            raise BackendError(f"cannot open {manifest.database} for the agent's self-check: {exc}") from None
        global _atexit_registered
        if not _atexit_registered:  # close before interpreter teardown, which DuckDB's bindings dislike
            import atexit
            atexit.register(reset_workspaces)
            _atexit_registered = True
    return sb


def _tables_from_sandbox(sandbox: Any) -> list[TableDoc]:
    catalog = sandbox.catalog()
    comments: dict[tuple[str, str, str | None], str] = {}
    if getattr(sandbox, "name", "") == "duckdb":  # DuckDB keeps COMMENT ON text in its catalog
        for sql, has_col in (("SELECT schema_name, table_name, NULL, comment FROM duckdb_tables() "
                              "WHERE comment IS NOT NULL AND NOT internal", False),
                             ("SELECT schema_name, view_name, NULL, comment FROM duckdb_views() "
                              "WHERE comment IS NOT NULL AND NOT internal", False),
                             ("SELECT schema_name, table_name, column_name, comment FROM duckdb_columns() "
                              "WHERE comment IS NOT NULL AND NOT internal", True)):
            out = sandbox.run(sql)
            if out.table is not None:
                for row in out.table.to_pylist():
                    s, t, c, text = row.values()
                    comments[(s, t, c)] = str(text)
    tables = []
    for schema, tabs in catalog.items():
        for table, cols in tabs.items():
            tables.append(TableDoc(schema, table, tuple(ColumnDoc(c, str(t), comments.get((schema, table, c), ""))
                                                        for c, t in cols.items()),
                                   comments.get((schema, table, None), "")))
    tables.sort(key=lambda t: t.qualified.lower())
    return tables


def _tables_from_ddl(path: Path) -> list[TableDoc]:
    """A schema-only suite: its CREATE TABLE file, loaded into an empty in-memory DuckDB."""
    import duckdb

    from ...core import read_text
    script = read_text(path)  # UTF-8 with or without a BOM; another encoding: BadInputError with the line
    con = duckdb.connect(":memory:")
    try:
        for stmt in duckdb.extract_statements(script):
            try:
                con.execute(stmt)
            except duckdb.Error:
                continue  # another dialect's statement: keep what DuckDB understands
        rows = con.execute("SELECT schema_name, table_name, column_name, data_type, comment FROM duckdb_columns() "
                           "WHERE NOT internal ORDER BY schema_name, table_name, column_index").fetchall()
        tcomments = {(s, t): c for s, t, c in con.execute(
            "SELECT schema_name, table_name, comment FROM duckdb_tables() WHERE NOT internal").fetchall() if c}
    finally:
        con.close()
    grouped: dict[tuple[str, str], list[ColumnDoc]] = {}
    for s, t, c, typ, com in rows:
        grouped.setdefault((s, t), []).append(ColumnDoc(c, typ, com or ""))
    return sorted((TableDoc(s, t, tuple(cols), tcomments.get((s, t), "")) for (s, t), cols in grouped.items()),
                  key=lambda t: t.qualified.lower())


def reset_workspaces() -> None:
    """Forget every workspace and close the sandboxes (tests; a long-lived process)."""
    with _lock:
        for sb in _sandboxes.values():
            try:
                sb.close()
            except Exception:
                pass
        _sandboxes.clear()
        _workspaces.clear()
