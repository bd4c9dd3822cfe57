"""defog sql-eval's questions CSV read as shipped: its ``{a, b}`` alternatives become several
golds on load (``expand_alternatives``), every case accepts extra columns, and its results
CSV (``generated_query``) is read as predictions."""
from __future__ import annotations

import shutil
import sqlite3
from itertools import combinations
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_sqleval.core.cases import get_layout, read_layout_predictions
from pytest_sqleval.core.cases.defog import MAX_EXPANSIONS, AlternativesError, expand_alternatives
from pytest_sqleval.core.errors import BadInputError
from tests.sqleval_helpers import read_results

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "suites" / "defog"
IDENT = st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True)
#: string-literal contents holding everything the expander must leave alone
LITERAL = st.text(alphabet="{},;ab -x", max_size=12).map(lambda s: "'" + s + "'")


def records(path: Path) -> list[tuple[int, dict]]:
    layout = get_layout("defog")
    assert layout is not None
    return list(layout.records(path))


# -- expand_alternatives: properties -----------------------------------------------------------
@given(st.text(alphabet="abcSELECT ()*,.=<>'\"\n-", max_size=60).filter(lambda s: s.strip() and ";" not in s))
def test_a_query_without_braces_is_its_own_only_gold(sql: str) -> None:
    assert expand_alternatives(sql) == [sql.strip()]


@given(st.lists(IDENT, min_size=1, max_size=5, unique=True))
def test_a_group_expands_to_every_non_empty_ordered_selection(options: list[str]) -> None:
    golds = expand_alternatives("SELECT {" + ", ".join(options) + "} FROM t")
    want = [f"SELECT {', '.join(c)} FROM t" for r in range(1, len(options) + 1) for c in combinations(options, r)]
    assert golds == want
    assert len(golds) == 2 ** len(options) - 1


@given(st.lists(st.lists(IDENT, min_size=1, max_size=3, unique=True), min_size=1, max_size=3))
def test_several_groups_multiply_and_group_by_repeats_each_selection(groups: list[list[str]]) -> None:
    sql = "SELECT " + ", ".join("{" + ", ".join(g) + "}" for g in groups) + ", count(*) FROM t GROUP BY {}"
    golds = expand_alternatives(sql, limit=7 ** 3)
    want = 1
    for g in groups:
        want *= 2 ** len(g) - 1
    assert len(set(golds)) == len(golds)
    # distinct texts: as many as the product unless two selections read the same (a name in two groups)
    assert len(golds) <= want
    if len({x for g in groups for x in g}) == sum(len(g) for g in groups):
        assert len(golds) == want
    for gold in golds:
        selected = gold[len("SELECT "):gold.index(", count(*)")]
        last_group = gold.rsplit("GROUP BY ", 1)[1]
        assert selected.endswith(last_group)  # {} is the last group's selection


@given(LITERAL, st.lists(IDENT, min_size=2, max_size=3, unique=True))
def test_braces_commas_and_semicolons_inside_string_literals_are_text(literal: str, options: list[str]) -> None:
    sql = "SELECT {" + ", ".join(options) + "} FROM t WHERE s = " + literal
    golds = expand_alternatives(sql)
    assert len(golds) == 2 ** len(options) - 1
    assert all(g.endswith("WHERE s = " + literal) for g in golds)


@given(st.lists(IDENT, min_size=1, max_size=4))
def test_duplicates_are_removed_in_first_seen_order(options: list[str]) -> None:
    golds = expand_alternatives("SELECT {" + ", ".join(options) + "} FROM t; SELECT " + options[0] + " FROM t")
    assert len(golds) == len(set(golds))
    assert golds[0] == f"SELECT {options[0]} FROM t"


@given(st.integers(min_value=9, max_value=14))
def test_too_many_expansions_is_one_clear_error(n: int) -> None:
    options = [f"c{i}" for i in range(n)]  # 2**9 - 1 = 511 > 256
    with pytest.raises(AlternativesError, match=f"more than {MAX_EXPANSIONS} gold queries"):
        expand_alternatives("SELECT {" + ", ".join(options) + "} FROM t")


# -- expand_alternatives: the cases a reader checks by eye ---------------------------------------
@pytest.mark.parametrize(("sql", "golds"), [
    ("SELECT {a, {b, c}} FROM t", ["SELECT a FROM t", "SELECT b FROM t", "SELECT c FROM t", "SELECT b, c FROM t",
                                   "SELECT a, b FROM t", "SELECT a, c FROM t", "SELECT a, b, c FROM t"]),
    ("SELECT {count(a, b), c} FROM t", ["SELECT count(a, b) FROM t", "SELECT c FROM t", "SELECT count(a, b), c FROM t"]),
    ("SELECT {x.id,x.name} FROM x;", ["SELECT x.id FROM x", "SELECT x.name FROM x", "SELECT x.id, x.name FROM x"]),
    ("SELECT a FROM t WHERE j = '{\"k\": 1}' -- {not, this}", ["SELECT a FROM t WHERE j = '{\"k\": 1}' -- {not, this}"]),
    ('SELECT "{odd, name}" FROM t /* {a, b}; */', ['SELECT "{odd, name}" FROM t /* {a, b}; */']),
    ("SELECT 'it''s {a, b}' FROM t", ["SELECT 'it''s {a, b}' FROM t"]),
    ("SELECT 'I\\'m {a, b}'; SELECT {c, d} FROM t", ["SELECT 'I\\'m {a, b}'", "SELECT c FROM t", "SELECT d FROM t",
                                                   "SELECT c, d FROM t"]),  # BigQuery's \' (defog's idk files)
    ("SELECT 1; ; SELECT 2;", ["SELECT 1", "SELECT 2"]),
])
def test_expansions(sql: str, golds: list[str]) -> None:
    assert expand_alternatives(sql) == golds


@pytest.mark.parametrize(("sql", "message"), [
    ("SELECT {a, b FROM t", "never closed"),
    ("SELECT a} FROM t", "closes no"),
    ("SELECT {a, , b} FROM t", "empty option"),
    ("SELECT a FROM t GROUP BY {}", "none comes before it"),
    (" ; ", "no query"),
])
def test_malformed_alternatives(sql: str, message: str) -> None:
    with pytest.raises(AlternativesError, match=message):
        expand_alternatives(sql)


# -- the layout ----------------------------------------------------------------------------------
def test_fixture_databases_are_their_sql_sources() -> None:
    for name in ("library", "weather"):
        built = sqlite3.connect(":memory:")
        built.executescript((FIXTURE / "sqlite_dbs" / f"{name}.sql").read_text())
        shipped = sqlite3.connect(FIXTURE / "sqlite_dbs" / f"{name}.db")
        assert list(shipped.iterdump()) == list(built.iterdump())


def test_defog_rows_become_cases_with_expanded_golds() -> None:
    got = records(FIXTURE / "questions_gen_sqlite.csv")
    assert [line for line, _ in got] == [2, 3, 4, 5]
    by_id = {raw["id"]: raw for _, raw in got}
    assert list(by_id) == ["0", "1", "2", "3"]
    first = by_id["0"]
    assert first["gold_sql"] == [
        "SELECT authors.name, COUNT(books.book_id) AS n_books FROM authors JOIN books ON books.author_id = "
        "authors.author_id GROUP BY authors.name ORDER BY n_books DESC",
        "SELECT authors.author_id, COUNT(books.book_id) AS n_books FROM authors JOIN books ON books.author_id = "
        "authors.author_id GROUP BY authors.author_id ORDER BY n_books DESC",
        "SELECT authors.name, authors.author_id, COUNT(books.book_id) AS n_books FROM authors JOIN books ON "
        "books.author_id = authors.author_id GROUP BY authors.name, authors.author_id ORDER BY n_books DESC"]
    assert first["gold_template"].startswith("SELECT {authors.name, authors.author_id}")
    # defog sorts both results unless the category is order_by or the question says order/sort/arrange
    assert first["compare"] == {"columns": "superset", "order_matters": False}
    assert first["category"] == "group_by" and first["db_name"] == "library" and first["db_type"] == "sqlite"
    ordered = by_id["1"]
    assert ordered["gold_sql"] == "SELECT title FROM books ORDER BY published DESC LIMIT 2"
    assert ordered["compare"] == {"columns": "superset"} and "gold_template" not in ordered
    assert ordered["instructions"] == "Use the published column for dates. Do not use book_id"
    # the braces of a string literal stay; the question's braces are not SQL at all
    assert by_id["2"]["gold_sql"] == ["SELECT title FROM books WHERE tags = '{fiction, classic}'",
                                      "SELECT book_id FROM books WHERE tags = '{fiction, classic}'",
                                      "SELECT title, book_id FROM books WHERE tags = '{fiction, classic}'"]
    assert by_id["2"]["question"] == 'Which books are tagged exactly "{fiction, classic}"?'
    # the second alternative repeats an expansion of the first: one gold, not two
    assert by_id["3"]["gold_sql"] == ["SELECT station, MAX(temp_c) FROM readings GROUP BY station",
                                      "SELECT station_id, MAX(temp_c) FROM readings GROUP BY station_id",
                                      "SELECT station, station_id, MAX(temp_c) FROM readings GROUP BY station, "
                                      "station_id"]


def test_each_gold_of_the_fixture_runs_on_its_database() -> None:
    for _, raw in records(FIXTURE / "questions_gen_sqlite.csv"):
        con = sqlite3.connect(FIXTURE / "sqlite_dbs" / f"{raw['db_name']}.db")
        golds = raw["gold_sql"] if isinstance(raw["gold_sql"], list) else [raw["gold_sql"]]
        assert all(con.execute(g).fetchall() for g in golds)


@pytest.mark.parametrize(("text", "line", "message"), [
    ("question,query\nq,SELECT 1\n", 1, "no column 'db_name'"),
    ("question,query,db_name\nq,SELECT 1,db\n,SELECT 2,db\n", 3, "field 'question': missing or empty"),
    ('question,query,db_name\nq,"SELECT {a, b FROM t",db\n', 2, "field 'query': a '{' is never closed (at character 8"),
    ("question,query,db_name\nq,SELECT 1,db,extra\n", 2, "4 fields, the header has 3"),
    ("question,query,db_name\nq,\"SELECT {" + ", ".join(f"c{i}" for i in range(9)) + "} FROM t\",db\n", 2,
     "more than 256 gold queries"),
])
def test_bad_defog_files_name_the_line_and_field(tmp_path: Path, text: str, line: int, message: str) -> None:
    path = tmp_path / "questions.csv"
    path.write_text(text)
    with pytest.raises(BadInputError) as exc:
        records(path)
    assert exc.value.line == line and message in str(exc.value)


def test_defog_results_csv_is_read_as_predictions() -> None:
    got = read_layout_predictions(FIXTURE / "predictions.csv")
    assert got is not None and list(got) == ["0", "1", "2", "3"]
    assert got["1"] == ("SELECT title FROM books ORDER BY published DESC LIMIT 2",
                        {"latency_seconds": "1.25", "tokens_used": "321"})
    layout = get_layout("defog")
    assert layout is not None and layout.predictions is not None
    assert layout.predictions(FIXTURE / "questions_gen_sqlite.csv") is None  # no generated_query: not a results file


def test_defog_databases_are_files_named_by_db_name() -> None:
    from pytest_sqleval.core.cases import database_manifest, load_manifest
    manifest = load_manifest(FIXTURE / "sqleval.toml")
    assert manifest.layout == "defog" and manifest.dialect == "sqlite"
    assert database_manifest(manifest, "weather").database == FIXTURE / "sqlite_dbs" / "weather.db"


def test_a_csv_questions_file_is_collected_and_other_csvs_beside_it_are_not(pytester: pytest.Pytester) -> None:
    shutil.copytree(FIXTURE, pytester.path / "defog")
    result = pytester.runpytest("defog", "--collect-only", "-p", "no:cacheprovider")
    out = result.stdout.str()
    assert result.ret != pytest.ExitCode.NO_TESTS_COLLECTED and "questions_gen_sqlite.csv" in out
    assert "predictions.csv" not in out  # the manifest names the questions file; a results CSV is not a suite


def test_defog_suite_grades_end_to_end(pytester: pytest.Pytester) -> None:
    shutil.copytree(FIXTURE, pytester.path / "defog")
    result = pytester.runpytest("defog", "--sqleval-backend=predictions:defog/predictions.csv", "-p", "no:cacheprovider")
    # 0: extra column over the name+id gold, ordered as defog ignores order: pass (superset)
    # 1: the same query: pass; 2: LIKE also finds 'Salt' (one tag): fail; 3: station + max: pass (first gold)
    result.assert_outcomes(passed=3, failed=1)
    records_ = {r["case_id"]: r for r in read_results(pytester.path)}
    assert [records_[i]["pass"] for i in "0123"] == [True, True, False, True]
