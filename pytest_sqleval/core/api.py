"""The library API: grade one predicted query against a gold query, outside pytest."""
from __future__ import annotations

import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from .cases import COMPARE_SETTINGS, DEFAULT_DEPRECATED, ComparePolicy, Gold, Limits
from .cases.model import RESULT_SUFFIXES
from .engines import is_url
from .grading.pipeline import SuiteGrader
from .grading.verdict import Verdict

__all__ = ["compare", "Grader", "Verdict"]


class Grader:
    """A reusable grader for one database: the engine process and gold answers are kept."""

    def __init__(self, database: str | Path, *, dialect: str = "duckdb", cache_dir: str | Path | None = None,
                 deprecated_tables: Iterable[str] | str | None = None, limits: Limits | None = None,
                 judge: str = "off", judge_model: str | None = None, judge_api_base: str | None = None,
                 variants: int = 0, variant_seed: int = 0, variant_golds: Iterable[str] = (),
                 **contract: Any) -> None:
        """``deprecated_tables``: the table-name patterns a prediction must not read
        (``*_old``, ``legacy.*``, ...). Left out (``None``), they are the suite's when a
        ``sqleval.toml`` next to the database names it (its list plus the defaults, as in a
        pytest run), else the defaults (``DEFAULT_DEPRECATED``: ``*_old``, ``*_v1``,
        ``*_bak``); a list is used as given, so ``[]`` means none and
        ``DEFAULT_DEPRECATED + ("legacy.*",)`` extends them.

        ``judge`` (``off``, ``advisory``, ``decide``) and ``judge_model`` (a litellm model
        string) add the LLM judge exactly as ``--sqleval-judge`` does in a pytest run: the
        verdict is decided by the same code (``grading.verdict.decide``).

        ``variants`` (0 to 64): grade on up to that many generated variants of the database
        too, as ``--sqleval-variants`` does (DuckDB and SQLite databases). ``variant_golds``:
        the gold queries you will grade, whose literals the variants' boundary rows are
        built around (a pytest run takes them from the suite)."""
        from .grading.verdict import JUDGE_MODES
        if judge not in JUDGE_MODES:
            raise ValueError(f"judge must be one of {', '.join(JUDGE_MODES)}, got {judge!r}")
        if judge != "off" and not judge_model:
            raise ValueError(f"judge={judge!r} needs a judge_model, e.g. 'openai/gpt-4o-mini'")
        deprecated = (suite_deprecated(database) if deprecated_tables is None else None) \
            or deprecated_patterns(deprecated_tables)
        tmp = tempfile.TemporaryDirectory(prefix="sqleval-") if cache_dir is None else None
        self._tmp = tmp
        cache = Path(tmp.name) if tmp is not None else Path(cache_dir or "")
        if variants:
            if is_url(database) or not 0 < variants <= 64:
                raise ValueError("variants must be from 0 to 64, on a DuckDB or SQLite database file")
            from .variants.distill import VariantSet
        self._grader = SuiteGrader(database if is_url(database) else Path(database), dialect=dialect, limits=limits or Limits(),
                                   policy=library_policy(contract),
                                   deprecated=deprecated,
                                   cache_dir=cache)
        if variants:
            self._grader.variant_set = VariantSet.build(Path(database), cache, variants, seed=variant_seed,
                                                        gold_sqls=variant_golds, dialect=dialect,
                                                        pinned_hash=self._grader.content_hash)
        self._judge_mode = judge
        self._judge = None
        if judge != "off" and judge_model:  # (a judge without a model was refused above)
            from .grading.judge import Judge
            self._judge = Judge.configured(judge_model, api_base=judge_api_base, cache_dir=cache / "judge")

    @property
    def content_hash(self) -> str:
        content_hash = self._grader.content_hash
        assert content_hash is not None  # the grader of a database has started its engine
        return content_hash

    def compare(self, predicted_sql: str, gold_sql: str | Sequence[str], question: str | None = None, *,
                gold_results: Sequence[str | Path] = ()) -> Verdict:
        """Grade ``predicted_sql``; raises ``GoldError`` when a gold itself cannot be trusted.
        ``question`` is what the judge reads, when there is one.

        Several golds: ``gold_sql`` a list of queries and/or ``gold_results`` result files
        (CSV, Parquet or JSON lines, column types inferred): the prediction passes if it
        matches any of them, as a case of several golds does in a pytest run;
        ``verdict.matched_gold`` names the gold it matched (index, kind, source: the SQL
        golds first, in order, then the files), ``verdict.layers["golds"]`` how it compared
        with each gold tried, and a failure is diagnosed against the nearest gold."""
        golds = library_golds(gold_sql, gold_results)
        if len(golds) == 1 and golds[0].is_sql:  # one gold query: exactly as before several golds
            sql = golds[0].source
            return self._grader.grade(predicted_sql, self._grader.gold(sql),
                                      judge=self._judge.call if self._judge is not None else None,
                                      judge_mode=self._judge_mode, question=question, gold_sql=sql)
        from .cases import BenchmarkCase
        first = next((g.source for g in golds if g.is_sql), "")
        case = BenchmarkCase(id="compare", question=question or "", gold_sql=first, golds=tuple(golds),
                             source="compare()")
        return self._grader.grade(predicted_sql, self._grader.case_gold(case),
                                  judge=self._judge.call if self._judge is not None else None,
                                  judge_mode=self._judge_mode, question=question, gold_sql=first or None)

    def close(self) -> None:
        self._grader.close()
        if self._tmp is not None:
            self._tmp.cleanup()

    def __enter__(self) -> "Grader":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def library_golds(gold_sql: str | Sequence[str] | None, gold_results: Sequence[str | Path]) -> list[Gold]:
    """A library caller's golds as a case holds them (``cases.Gold``): the SQL golds first,
    in order, then the result files, indexed in that order."""
    sqls = [gold_sql] if isinstance(gold_sql, str) else list(gold_sql or ())
    files = [gold_results] if isinstance(gold_results, (str, Path)) else list(gold_results)
    bad = [q for q in sqls if not isinstance(q, str) or not q.strip()]
    if bad or not (sqls or files):
        raise ValueError("gold_sql must be a query or a list of queries (or give gold_results=[...] result files), "
                         f"got {gold_sql!r}")
    golds = [Gold(i, "sql", q) for i, q in enumerate(sqls)]
    for path in files:
        if not str(path).lower().endswith(RESULT_SUFFIXES):
            raise ValueError(f"gold result file {str(path)!r} is not one of {', '.join(RESULT_SUFFIXES)}")
        golds.append(Gold(len(golds), "result", str(path), path=Path(path)))
    return golds


def library_policy(contract: dict[str, Any]) -> ComparePolicy:
    """The comparison contract a library caller's keywords set (``COMPARE_SETTINGS``) over the
    defaults: the suite policy of ``Grader`` and ``compare``, made for their gold like a case's."""
    unknown = sorted(set(contract) - set(COMPARE_SETTINGS))
    if unknown:
        raise TypeError(f"Grader() got an unexpected keyword argument {unknown[0]!r}")
    return ComparePolicy().merged(**contract)


def suite_deprecated(database: str | Path) -> tuple[str, ...] | None:
    """The deprecated-table patterns of the suite whose ``sqleval.toml`` sits next to
    ``database`` and names it, so ``compare()`` on a suite's database judges a read of
    ``legacy.*`` as that suite does; None when there is no such (readable) manifest."""
    from .cases import load_manifest
    from .errors import SqlevalError
    if is_url(database):
        return None
    path = Path(database)
    manifest_path = path.parent / "sqleval.toml"
    if not manifest_path.is_file():
        return None
    try:
        manifest = load_manifest(manifest_path)
    except SqlevalError:
        return None
    named = manifest.database
    return manifest.deprecated_tables if named is not None and Path(named).resolve() == path.resolve() else None


def deprecated_patterns(deprecated_tables: Iterable[str] | str | None) -> tuple[str, ...]:
    """The deprecated-table patterns a library caller asked for: the defaults when it
    said nothing, exactly its list otherwise (one string is one pattern, not its letters)."""
    if deprecated_tables is None:
        return DEFAULT_DEPRECATED
    if isinstance(deprecated_tables, str):
        return (deprecated_tables,)
    patterns = tuple(deprecated_tables)
    bad = [p for p in patterns if not isinstance(p, str) or not p]
    if bad:
        raise TypeError(f"deprecated_tables must be table-name patterns such as '*_old' or 'legacy.*', got {bad!r}")
    return patterns


def compare(predicted_sql: str, gold_sql: str | Sequence[str], database: str | Path, question: str | None = None,
            *, gold_results: Sequence[str | Path] = (), **contract: Any) -> Verdict:
    """Compare a predicted query with a gold query (or several: a list, and/or
    ``gold_results`` files; see ``Grader.compare``) on ``database`` under the comparison
    contract (keywords: ``order_matters``, ``float_rel_tol``, ``float_abs_tol``,
    ``allow_empty``, ``columns`` ("exact" or "superset"), ``condition_cols``, ``dialect``,
    ``deprecated_tables``: left out, the patterns of the suite
    whose ``sqleval.toml`` names the database, else the defaults ``*_old``, ``*_v1``, ``*_bak``;
    ``[]`` means none; ``judge``, ``judge_model``, ``judge_api_base``: the LLM judge, see
    ``Grader``). Returns the verdict with every layer's evidence; ``verdict.passed`` and
    ``verdict.error_class`` are the headline, ``verdict.matched_gold`` the gold it matched."""
    with Grader(database, **contract) as grader:
        return grader.compare(predicted_sql, gold_sql, question=question, gold_results=gold_results)
