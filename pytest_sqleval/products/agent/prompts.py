"""The prompts (versioned by :data:`.config.PROMPT_VERSION`)."""
from __future__ import annotations

from typing import Any

_DIALECT_NAMES = {"duckdb": "DuckDB", "sqlite": "SQLite", "postgres": "PostgreSQL", "bigquery": "BigQuery",
                  "snowflake": "Snowflake", "mysql": "MySQL", "tsql": "T-SQL"}

SHAPES = {"scalar": "a single value (one row, one column)", "table": "a table", "empty": "possibly no rows",
          "null": "possibly NULL only (an aggregate over no rows)"}


def dialect_name(dialect: str) -> str:
    return _DIALECT_NAMES.get(dialect, dialect)


def system_prompt(dialect: str) -> str:
    d = dialect_name(dialect)
    return (f"You are a senior analytics engineer. You answer business questions by writing one read-only {d} "
            f"SQL query (SELECT or WITH ... SELECT) over the warehouse described by the user. Use only the tables and "
            f"columns shown. Reply with the query in a single ```sql fenced block and nothing else.")


def question_prompt(question: str, context: str, *, expected_shape: str | None, logical_date: str | None,
                    layer_used: bool) -> str:
    parts = ["Schema" + (" with semantic-layer notes" if layer_used else "") + ":", context or "(no tables)"]
    if logical_date:
        parts.append(f"The data is a snapshot; 'today' is {logical_date}.")
    parts.append(f"Question: {question}")
    if expected_shape in SHAPES:
        parts.append(f"Expected answer: {SHAPES[expected_shape]}.")
    return "\n\n".join(parts)


def repair_prompt(problem: Any, preview: str) -> str:
    what = {"error": "failed on the database", "empty": "ran but returned no rows",
            "suspicious": "ran but its result looks wrong", "no_sql": "was not a SQL query"}.get(problem.kind, "is wrong")
    lines = [f"Your answer {what}: {problem.message}"]
    if preview:
        lines.append("Result preview:\n" + preview)
    lines.append("Fix the query. Reply with the corrected query in a single ```sql fenced block and nothing else.")
    return "\n\n".join(lines)
