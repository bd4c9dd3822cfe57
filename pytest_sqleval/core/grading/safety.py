"""Safety layer: exactly one read-only query, touching no files, settings or extensions.

The engine sandbox enforces the same rules; this layer refuses early with a precise
reason so that a refused statement is reported as ``unsafe_statement``, not as a crash."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from .parse import tree_nodes

# Table and scalar functions that read files, run SQL strings, or reach the environment.
DENIED_FUNCTIONS = frozenset({
    "read_csv", "read_csv_auto", "read_parquet", "parquet_scan", "read_json", "read_json_auto",
    "read_json_objects", "read_json_objects_auto", "read_ndjson", "read_ndjson_auto", "read_ndjson_objects",
    "read_text", "read_blob", "glob", "sniff_csv", "parquet_metadata", "parquet_schema", "parquet_file_metadata",
    "parquet_kv_metadata", "parquet_bloom_probe", "read_xlsx", "st_read", "st_read_meta", "iceberg_scan",
    "iceberg_metadata", "iceberg_snapshots", "delta_scan", "sqlite_scan", "sqlite_attach", "postgres_scan",
    "postgres_query", "postgres_attach", "mysql_scan", "mysql_query", "query", "query_table", "getenv",
    "duckdb_secrets", "which_secret", "load_aws_credentials", "read_file", "read_files", "csv_scan",
    "arrow_scan", "pg_read_file", "pg_read_binary_file", "pg_ls_dir", "lo_import", "lo_export",
    "readfile", "writefile", "load_extension", "fts_main", "httpfs", "http_get", "http_post",
    "json_execute_serialized_sql", "json_serialize_sql", "json_deserialize_sql", "current_setting",
    "duckdb_settings", "test_all_types", "pragma_metadata_info", "pragma_storage_info",
})
_PATHLIKE = re.compile(r"[/\\]|^\w+:|\.(csv|tsv|parquet|json|jsonl|ndjson|txt|gz|zst|xlsx|db|duckdb|sqlite|arrow)$", re.I)
_FORBIDDEN_NODES: tuple[type, ...] = tuple(t for t in (
    getattr(exp, n, None) for n in ("Insert", "Update", "Delete", "Merge", "Create", "Drop", "Alter", "Command",
                                     "Copy", "Set", "Pragma", "Use", "Attach", "Detach", "Install", "Load",
                                     "Transaction", "Commit", "Rollback", "Export", "TruncateTable", "Grant",
                                     "Revoke", "Comment", "Analyze", "Describe", "Into"))
    if isinstance(t, type))


def _pivot_statement(tree: exp.Expr) -> bool:
    """DuckDB's ``PIVOT t ON c USING sum(v)`` / ``UNPIVOT t ON ...``: a query (it only reads),
    though sqlglot parses it as a ``Pivot`` with a source rather than a ``Select``."""
    return isinstance(tree, exp.Pivot) and tree.args.get("this") is not None


@dataclass
class SafetyResult:
    ok: bool
    reason: str | None = None
    detail: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "reason": self.reason, "detail": self.detail}


def check_safety(tree: exp.Expr | None, statements: int, nodes: list[exp.Expr] | None = None) -> SafetyResult:
    """``nodes``: ``tree_nodes(tree)`` when the caller has it (``ParseResult.nodes``)."""
    if statements != 1 or tree is None:
        return SafetyResult(False, "multiple_statements", f"{statements} statements; exactly one SELECT is allowed")
    if not isinstance(tree, (exp.Query, exp.Subquery)) and not _pivot_statement(tree):
        return SafetyResult(False, "not_a_query", f"{type(tree).__name__.upper()} statements are not allowed; "
                                                  "only SELECT / WITH queries")
    for node in (tree_nodes(tree) if nodes is None else nodes):  # in walk()'s order: the same first refusal
        if isinstance(node, _FORBIDDEN_NODES):
            return SafetyResult(False, "not_a_query", f"{type(node).__name__.upper()} inside the query is not allowed")
        if isinstance(node, exp.Func):
            name = (node.name if isinstance(node, exp.Anonymous) else node.sql_name()).lower()
            if name in DENIED_FUNCTIONS:
                return SafetyResult(False, "file_or_system_access", f"function {name}() is not allowed")
        if isinstance(node, exp.Table) and isinstance(node.this, exp.Identifier) and _PATHLIKE.search(node.name):
            return SafetyResult(False, "file_or_system_access", f"table name {node.name!r} looks like a file or URL")
    return SafetyResult(True)
