"""The Spark engine behind the whole grader, in its engine process: a DuckDB suite graded on
Spark reaches the same verdicts, the hostile corpus of grader_tests/test_hostile.py is
refused, and the content hash does not move. One engine process (one JVM) for the module,
over the session's singer database and its mirror (``conftest.py``)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest

from grader_tests.test_hostile import HOSTILE, refused
from pytest_sqleval.core.engines.base import Limits
from pytest_sqleval.core.engines.spark_sandbox import SparkSettings, spark_location
from tests.core.engines.test_spark import _spark_missing

pytestmark = pytest.mark.spark

GOLD = "SELECT country, count(*) FROM singer GROUP BY country"
NORMAL = "SELECT s.country AS c, count(s.singer_id) AS n FROM singer s GROUP BY 1"


@pytest.fixture(scope="module")
def grader(spark_source: Path, spark_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The session's singer database on Spark (its mirror is the session's: built once)."""
    missing = _spark_missing()
    if missing:
        pytest.skip(missing)
    from pytest_sqleval.core.api import Grader
    location = spark_location(spark_source, SparkSettings(master="local[1]", driver_memory="1g",
                                                          cache_dir=str(spark_cache)))
    with Grader(location, cache_dir=tmp_path_factory.mktemp("spark-grader"), limits=Limits(timeout_s=20.0)) as g:
        yield g


@pytest.fixture(scope="module")
def duck(spark_source: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The same database on DuckDB: one engine process for the module."""
    from pytest_sqleval.core.api import Grader
    with Grader(spark_source, cache_dir=tmp_path_factory.mktemp("duck-grader")) as g:
        yield g


def test_the_grader_runs_on_spark(grader: Any) -> None:
    assert grader._grader.engine == "spark" and grader._grader.engine_dialect == "spark"


@pytest.mark.parametrize("predicted, passes", [
    (NORMAL, True),
    ("SELECT country, count(*) FROM singer WHERE age > 26 GROUP BY country", False),
    ("SELECT country, count(DISTINCT age) FROM singer GROUP BY country", False),
    ("SELECT country FROM singer GROUP BY country", False),
])
def test_verdicts_on_spark_match_duckdbs(grader: Any, duck: Any, predicted: str, passes: bool) -> None:
    assert grader.compare(predicted, GOLD).passed is passes
    assert duck.compare(predicted, GOLD).passed is passes


def test_a_missing_column_is_a_hallucinated_column_on_spark(grader: Any) -> None:
    v = grader.compare("SELECT nationality, count(*) FROM singer GROUP BY 1", GOLD)
    assert not v.passed and v.error_class == "hallucinated_column"
    assert (v.layers.get("execution") or {}).get("error", {}).get("category") == "missing_column"


def test_the_whole_hostile_corpus_is_refused_on_spark(grader: Any) -> None:
    before = grader.content_hash
    escaped = {}
    for param in HOSTILE:
        v = grader.compare(param.values[0], GOLD)
        if v.passed or not refused(v):
            escaped[param.id] = (v.failure_kind, (v.layers.get("execution") or {}).get("error"))
    assert not escaped, escaped
    assert grader.compare(NORMAL, GOLD).passed
    assert grader.content_hash == before and len(HOSTILE) >= 50
