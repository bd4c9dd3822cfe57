"""Whether a gold written in a suite's dialect runs on another engine once sqlglot has
transpiled it: what ``validate --engine spark`` reports per case.

sqlglot raises for what it knows it cannot write in the target dialect (its
"unsupported" errors, at ``ErrorLevel.RAISE``), but passes some constructs through
untranslated or changes their meaning without a word. Those are listed here (``KNOWN``,
per target dialect), each shown on the real engine by a test
(``tests/core/engines/test_spark_golds.py``). Last, the engine's own static gate (for Spark,
``spark_sandbox.gate``: one query that sqlglot reads as Spark SQL) is run on the
transpiled text, so what the sandbox would refuse is reported here rather than at grading.
Everything is static: no engine runs."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

__all__ = ["Portability", "dialect_of_engine", "portability"]


def dialect_of_engine(name: str) -> str:
    """The sqlglot dialect of the engine of that name (``spark`` -> ``spark``); a
    ``ValueError`` names the known engines."""
    from ..engines.registry import engines
    known = {e.name: e.dialect for e in engines()}
    if name not in known:
        raise ValueError(f"no engine named {name!r} (known: {', '.join(sorted(known))})")
    return known[name]


@dataclass(frozen=True)
class Portability:
    """One reason a gold does not run (or does not mean the same) on the target engine:
    ``construct`` names it (``ASOF JOIN``), ``reason`` says what happens there."""

    construct: str
    reason: str

    def __str__(self) -> str:
        return f"{self.construct}: {self.reason}"


def _join_method(method: str) -> Callable[[Any], bool]:
    def found(tree: Any) -> bool:
        from sqlglot import exp
        return any(str(j.args.get("method") or "").upper() == method for j in tree.find_all(exp.Join))
    return found


def _time_type(tree: Any) -> bool:
    from sqlglot import exp
    return any(d.this == exp.DataType.Type.TIME for d in tree.find_all(exp.DataType))


def _quantified(tree: Any) -> bool:
    from sqlglot import exp
    return any(isinstance(n.this, (exp.Subquery, exp.Query)) for n in tree.find_all(exp.All, exp.Any))


def _qualify_rewrite(tree: Any) -> bool:
    """A QUALIFY sqlglot rewrites wrongly for Spark: into a subquery whose outer filter still
    names a table alias (a missing column there), and below which ORDER BY ... LIMIT runs."""
    from sqlglot import exp
    for select in tree.find_all(exp.Select):
        qualify = select.args.get("qualify")
        if qualify is None:
            continue
        if select.args.get("limit") is not None:
            return True
        if any(c.table and c.find_ancestor(exp.Window) is None for c in qualify.find_all(exp.Column)):
            return True
    return False


#: (construct, test on the tree as read in the suite's dialect, what the target engine does),
#: per target dialect: what sqlglot passes through, or rewrites to another meaning
KNOWN: dict[str, tuple[tuple[str, Callable[[Any], bool], str], ...]] = {
    "spark": (
        ("ASOF JOIN", _join_method("ASOF"),
         "sqlglot passes it through and Spark has no ASOF JOIN (a syntax error there); write the latest-match join "
         "out (a max() of the match key per row, then an equi-join)"),
        ("POSITIONAL JOIN", _join_method("POSITIONAL"),
         "sqlglot passes it through and Spark has no POSITIONAL JOIN (the sandbox refuses it as not Spark SQL)"),
        ("ALL / ANY (subquery)", _quantified,
         "sqlglot passes it through and Spark has no quantified comparison with a subquery (a syntax error); "
         "compare with the subquery's max() or min()"),
        ("QUALIFY", _qualify_rewrite,
         "sqlglot rewrites QUALIFY into a subquery whose outer filter still names a table alias (a missing column on "
         "Spark) and runs ORDER BY ... LIMIT before the filter; write the window in a subquery yourself"),
        ("TIME type", _time_type,
         "Spark has no time-of-day type: sqlglot writes TIME as TIMESTAMP, which Spark reads as today's date at "
         "that time"),
    ),
}


def portability(sql: str, read: str, write: str, *, time_columns: frozenset[str] = frozenset()) -> list[Portability]:
    """Why ``sql`` (in dialect ``read``) does not run, or does not mean the same, once
    transpiled to ``write``; empty when nothing is known against it. ``time_columns``: the
    lower-case names of the database's ``TIME`` columns (mirrored to Spark as text), a read
    of which is reported."""
    import sqlglot
    from sqlglot import ErrorLevel, exp
    from sqlglot.errors import SqlglotError
    try:
        tree = sqlglot.parse_one(sql, read=read)
    except SqlglotError as exc:
        return [Portability("parse", f"does not parse as {read}: {str(exc).splitlines()[0][:200]}")]
    issues: list[Portability] = []
    try:
        text = tree.sql(dialect=write, unsupported_level=ErrorLevel.RAISE)
    except SqlglotError as exc:
        issues.append(Portability("unsupported", f"sqlglot cannot write it as {write}: {str(exc).splitlines()[0][:200]}"))
        text = tree.sql(dialect=write)
    issues += [Portability(name, why) for name, found, why in KNOWN.get(write, ()) if found(tree)]
    read_time = sorted({c.name for c in tree.find_all(exp.Column) if c.name.lower() in time_columns})
    if read_time and write == "spark":
        issues.append(Portability("TIME column", f"reads {', '.join(read_time)}, a TIME column: Spark has no "
                                                 "time-of-day type, so the mirror holds it as text (HH:MM:SS); "
                                                 "comparisons with a time and time arithmetic differ"))
    if write == "spark" and not any(i.construct in ("ASOF JOIN", "POSITIONAL JOIN") for i in issues):
        from ..engines.spark_sandbox import gate
        refused = gate(text)
        if refused is not None:
            issues.append(Portability("refused", f"the Spark sandbox refuses the transpiled SQL: {refused.message}"))
    return issues
