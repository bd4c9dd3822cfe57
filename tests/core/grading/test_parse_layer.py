"""Unit tests of the parse layer (``grading.parse.parse_sql``), called directly.

A wrong answer is a ``ParseResult``, never an exception: ok/failed per dialect, the
error's line and column (1-based, pointing at the offending token's first character),
the statement count, and the empty / comment-only / huge inputs a backend can return."""
from __future__ import annotations


import pytest

from pytest_sqleval.core.grading.parse import ParseResult, parse_sql


@pytest.mark.parametrize(("sql", "dialect", "ok"), [
    pytest.param("SELECT 1", "duckdb", True, id="duckdb-select"),
    pytest.param("FROM orders SELECT id", "duckdb", True, id="duckdb-from-first"),
    pytest.param("SELECT region FROM customers GROUP BY ALL", "duckdb", True, id="duckdb-group-by-all"),
    pytest.param("SELECT a FROM t QUALIFY row_number() OVER () = 1", "duckdb", True, id="duckdb-qualify"),
    pytest.param("SELECT x::INT FROM t", "postgres", True, id="postgres-cast-operator"),
    pytest.param("SELECT * FROM t WHERE a = $1", "postgres", True, id="postgres-placeholder"),
    pytest.param("SELECT a FROM t LIMIT 1 OFFSET 2", "sqlite", True, id="sqlite-limit-offset"),
    pytest.param("SELECT `a` FROM t", "sqlite", True, id="sqlite-backticks"),
    pytest.param("SELECT [a] FROM t", "sqlite", True, id="sqlite-brackets"),
    pytest.param("SELECT `a` FROM t", "duckdb", False, id="duckdb-backticks-rejected"),
    pytest.param("SELEC 1", "duckdb", False, id="duckdb-typo-keyword"),
    pytest.param("SELECT a FROM t\nWHERE b = )", "postgres", False, id="postgres-dangling-paren"),
    pytest.param("SELECT a FROM t\nWHERE b = )", "sqlite", False, id="sqlite-dangling-paren"),
    pytest.param("SELECT * FROM t WHERE a IN (1, 2", "duckdb", False, id="duckdb-unclosed-paren"),
])
def test_ok_or_failed_per_dialect(sql: str, dialect: str, ok: bool) -> None:
    res = parse_sql(sql, dialect)
    assert isinstance(res, ParseResult)
    assert res.ok is ok
    assert res.dialect == dialect
    if ok:
        assert res.statements == 1 and res.error is None and res.expression is not None
    else:
        assert res.statements == 0 and res.expression is None
        assert res.error is not None and res.error["message"]


@pytest.mark.parametrize(("sql", "dialect", "line", "col"), [
    # the second "=" of "a = = 1" on line 3
    pytest.param("SELECT a\nFROM t\nWHERE a = = 1", "duckdb", 3, 11, id="double-equals-line-3"),
    # the ")" on line 2
    pytest.param("SELECT a FROM t\nWHERE b = )", "postgres", 2, 11, id="dangling-paren-line-2"),
    pytest.param("SELECT a FROM t\nWHERE b = )", "sqlite", 2, 11, id="dangling-paren-line-2-sqlite"),
    # the "1" that follows the unknown word SELEC
    pytest.param("SELEC 1", "duckdb", 1, 7, id="typo-keyword"),
    # the backtick-quoted name DuckDB does not accept
    pytest.param("SELECT `a` FROM t", "duckdb", 1, 10, id="backtick"),
])
def test_syntax_error_has_line_and_col(sql: str, dialect: str, line: int, col: int) -> None:
    res = parse_sql(sql, dialect)
    assert not res.ok and res.error is not None
    assert (res.error["line"], res.error["col"]) == (line, col)
    assert res.to_dict() == {"ok": False, "dialect": dialect, "statements": 0, "error": res.error}


@pytest.mark.xfail(strict=True, reason="parse.py: a tokenizer error (unterminated string literal) is reported "
                                       "with line=None, col=None; the contract says a parse error carries line/col")
def test_unterminated_string_has_line_and_col() -> None:
    res = parse_sql("SELECT a\nFROM t\nWHERE name = 'unterminated", "duckdb")
    assert not res.ok and res.error is not None
    assert res.error["line"] == 3 and res.error["col"] is not None


def test_unterminated_string_is_a_result_not_an_exception() -> None:
    res = parse_sql("SELECT 'unterminated", "duckdb")
    assert not res.ok and res.statements == 0 and res.error is not None
    assert res.error["message"].startswith("cannot tokenize")


@pytest.mark.parametrize(("sql", "statements", "has_tree"), [
    pytest.param("SELECT 1", 1, True, id="one"),
    pytest.param("SELECT 1;", 1, True, id="one-trailing-semicolon"),
    pytest.param("SELECT 1;;", 1, True, id="one-double-semicolon"),
    pytest.param("SELECT 1; SELECT 2", 2, False, id="two"),
    pytest.param("SELECT 1; SELECT 2; SELECT 3", 3, False, id="three"),
    pytest.param("SELECT 1 /* x */; DROP TABLE orders", 2, False, id="comment-hidden-second"),
    pytest.param("SELECT 1 UNION ALL SELECT 2", 1, True, id="set-op-is-one"),
    pytest.param("WITH a AS (SELECT 1) SELECT * FROM a", 1, True, id="cte-is-one"),
])
def test_statements_are_counted(sql: str, statements: int, has_tree: bool) -> None:
    res = parse_sql(sql, "duckdb")
    assert res.ok
    assert res.statements == statements
    # only a single statement keeps its tree (the safety layer refuses the others)
    assert (res.expression is not None) is has_tree


@pytest.mark.parametrize(("sql", "statements"), [
    pytest.param("SELECT 1;\n-- count rows", 1, id="trailing-line-comment"),
    pytest.param("SELECT 1; /* done */", 1, id="trailing-block-comment"),
    pytest.param("SELECT 1; -- first\nSELECT 2", 2, id="comment-between-two"),
])
def test_comment_after_semicolon_is_not_a_statement(sql: str, statements: int) -> None:
    """sqlglot returns a comment after the last ';' as a Semicolon tree: not a statement."""
    res = parse_sql(sql, "duckdb")
    assert res.ok and res.statements == statements
    assert (res.expression is not None) is (statements == 1)


@pytest.mark.parametrize(("sql", "message"), [
    pytest.param("", "empty SQL", id="empty"),
    pytest.param("   \n\t ", "empty SQL", id="whitespace"),
    pytest.param("-- just a comment", "no statement (only comments?)", id="line-comment"),
    pytest.param("/* block */", "no statement (only comments?)", id="block-comment"),
    pytest.param("-- c\n/* d */\n", "no statement (only comments?)", id="mixed-comments"),
    pytest.param(";", "no statement (only comments?)", id="lone-semicolon"),
])
def test_empty_whitespace_and_comment_only(sql: str, message: str) -> None:
    res = parse_sql(sql, "duckdb")
    assert res.to_dict() == {"ok": False, "dialect": "duckdb", "statements": 0,
                             "error": {"message": message, "line": 1, "col": 1}}
    assert res.expression is None


@pytest.mark.parametrize(("sql", "ok"), [
    pytest.param("SELECT " + " + ".join(["1"] * 20000), True, id="20k-term-sum"),
    pytest.param("SELECT a FROM t WHERE " + " OR ".join(f"a = {i}" for i in range(5000)), True, id="5k-or-chain"),
    pytest.param("SELECT '" + "x" * 1_000_000 + "'", True, id="1MB-literal"),
    pytest.param("SELECT " + "(" * 3000 + "1" + ")" * 3000, False, id="3000-deep-nesting"),
])
def test_very_long_input_does_not_crash(sql: str, ok: bool) -> None:
    res = parse_sql(sql, "duckdb")
    assert res.ok is ok
    if ok:
        assert res.statements == 1
    else:
        assert res.error == {"message": "nested too deeply to parse", "line": None, "col": None}


@pytest.mark.parametrize("sql", [
    "SELECT a, b FROM t WHERE a = 1 AND b IN (SELECT c FROM u WHERE u.d > 2) ORDER BY a LIMIT 3",
    "WITH x AS (SELECT 1 AS one UNION ALL SELECT 2) SELECT list_transform([1, 2], v -> v + one) FROM x",
    "SELECT count(*) FILTER (WHERE s = 'a'), sum(CASE WHEN p THEN 1 ELSE 0 END) FROM t JOIN u USING (id) "
    "GROUP BY ROLLUP (a, b) HAVING count(*) > 1 QUALIFY row_number() OVER (PARTITION BY a ORDER BY b) = 1",
    "PIVOT sales ON year USING sum(amount) GROUP BY region",
])
def test_tree_nodes_are_the_walk_in_its_order(sql: str) -> None:
    """The safety, grounding and stale layers read ``tree_nodes`` instead of walking the tree
    each: the same nodes, in ``walk()``'s order (safety's first refusal is the same one)."""
    from pytest_sqleval.core.grading.parse import tree_nodes
    tree = parse_sql(sql, "duckdb").expression
    assert tree is not None
    walked = list(tree.walk())
    assert len(walked) > 10 and len(tree_nodes(tree)) == len(walked)
    assert all(a is b for a, b in zip(tree_nodes(tree), walked))


@pytest.mark.parametrize(("sql", "catalog", "duckdb"), [
    # without the schema: a double-quoted name compared with a column is a string, and only then
    ('SELECT name FROM t WHERE continent = "north america"', None,
     "SELECT name FROM t WHERE continent = 'north america'"),
    ('SELECT "Korea", name FROM t WHERE "name" = \'x\'', None, 'SELECT "Korea", name FROM t WHERE "name" = \'x\''),
    # with the schema (SQLite's own rule): a name that is no column is a string wherever it stands,
    # a column stays one even compared with another column
    ('SELECT "Korea", name FROM t WHERE "name" = \'x\'', ["NAME", "continent"],
     "SELECT 'Korea', name FROM t WHERE \"name\" = 'x'"),
    ('SELECT name FROM t WHERE continent = "name"', ["name", "continent"],
     'SELECT name FROM t WHERE continent = "name"'),
    ('SELECT name FROM t WHERE continent = "name"', None, "SELECT name FROM t WHERE continent = 'name'"),
])
def test_sqlites_double_quoted_strings_with_and_without_the_schema(sql: str, catalog: list[str] | None,
                                                                   duckdb: str) -> None:
    """One rule for the grader (no schema) and the variants' builder (``nonempty``: the
    schema's column names), so a gold reads alike in both; the tree given is kept."""
    from pytest_sqleval.core.sqlite_quoting import sqlite_quoted_strings
    tree = parse_sql(sql, "sqlite").expression
    assert tree is not None
    before = tree.sql(dialect="sqlite")
    assert sqlite_quoted_strings(tree, catalog).sql(dialect="duckdb") == duckdb
    assert tree.sql(dialect="sqlite") == before
