"""The prediction's tree shipped to the engine process for its structural diff (issue 35,
BENCHMARKS 12.9): with pure-Python sqlglot the engine's second parse of each prediction was
most of the diff's cost. What a user relies on: the diff made from the shipped tree is the
diff made from the text, on every kind of query; a form the engine cannot read is refused
and the text parsed instead (the same evidence); and the tree never decides what runs: the
engine executes the text under its sandbox's own checks."""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from sqlglot import exp

from pytest_sqleval.core.grading import engine_side
from pytest_sqleval.core.grading import parse as parse_module
from pytest_sqleval.core.grading.layers import send
from pytest_sqleval.core.grading.parse import parse_sql, tree_nodes
from pytest_sqleval.core.grading.pipeline import SuiteGrader
from pytest_sqleval.core.grading.structure import compare_structure, gold_side
from pytest_sqleval.core.grading.tree_wire import from_wire, to_wire

from .test_gold_analysis import GOLD, pets_db
from .test_structure_in_engine import GOLDS, graded, graded_in_process, local_diffs, never_behind

#: Spider-like predictions (DAIL-SQL's kinds, and what the parser keeps beyond the clauses:
#: a function's spelling, data types, comments, quoting, double-quoted strings)
SPIDER_LIKE = [
    "SELECT count(*) FROM singer",
    "SELECT name, country, age FROM singer ORDER BY age DESC",
    "SELECT avg(age), min(age), max(age) FROM singer WHERE country = 'France'",
    "SELECT T2.name, count(*) FROM concert AS T1 JOIN stadium AS T2 ON T1.stadium_id = T2.stadium_id "
    "GROUP BY T1.stadium_id HAVING count(*) >= 2 ORDER BY count(*) DESC LIMIT 1",
    "SELECT name FROM stadium WHERE stadium_id NOT IN (SELECT stadium_id FROM concert)",
    "SELECT country FROM singer WHERE age > 40 INTERSECT SELECT country FROM singer WHERE age < 30",
    "SELECT name FROM singer UNION ALL SELECT name FROM stadium EXCEPT SELECT 'x'",
    "SELECT DISTINCT T1.fname FROM student AS T1 JOIN has_pet AS T2 ON T1.stuid = T2.stuid "
    "JOIN pets AS T3 ON T3.petid = T2.petid WHERE T3.pettype = 'cat' AND T1.age BETWEEN 18 AND 20",
    "SELECT CAST(avg(weight) AS REAL), CAST(age AS INTEGER) FROM pets GROUP BY pettype",
    "SELECT substr(name, 1, 3), substring(name, 2), length(name) FROM singer",
    "SELECT name FROM singer WHERE name LIKE '%Hey%' OR song_name = \"Love\"",
    "SELECT \"name\", `country` FROM singer WHERE \"age\" IN (20, 30, 40) -- the oldest\n",
    "/* count them */ SELECT count(DISTINCT country) FROM singer",
    "SELECT CASE WHEN age > 30 THEN 'old' ELSE 'young' END AS band FROM singer",
    "SELECT strftime('%Y', date) AS y, count(*) FROM concert GROUP BY y ORDER BY y",
    "SELECT name, rank() OVER (PARTITION BY country ORDER BY age DESC) FROM singer",
    "WITH t AS (SELECT country, count(*) AS n FROM singer GROUP BY country) SELECT country FROM t WHERE n > 1",
    "SELECT T1.name FROM a AS T1 LEFT JOIN b AS T2 USING (id) WHERE T2.id IS NULL",
    "SELECT max(capacity), average FROM stadium WHERE NOT (highest < 10 OR lowest >= -5.5)",
    "SELECT name FROM singer WHERE age = (SELECT max(age) FROM singer) LIMIT 3 OFFSET 1",
    "SELECT iif(age > 1, 'a', 'b'), coalesce(name, ''), abs(-age) % 7 FROM singer",
    "SELECT X'00ff', NULL, TRUE FROM singer WHERE 1 = 1 AND 'a' || 'b' = name",
    GOLD,
]


def _same_tree(a: Any, b: Any) -> bool:
    """Node for node: the same classes, arguments (a child by its place), comments and meta."""
    xs, ys = tree_nodes(a), tree_nodes(b)
    if len(xs) != len(ys):
        return False
    for x, y in zip(xs, ys):
        if type(x) is not type(y) or list(x.args) != list(y.args) or x.comments != y.comments:
            return False
        for k, v in x.args.items():
            w = y.args[k]
            if type(v) is not type(w):
                return False
            if type(v) is list:
                if [type(p) for p in v] != [type(q) for q in w]:
                    return False
            elif not isinstance(v, exp.Expr) and v != w:  # a child is compared at its own place
                return False
        meta = {k: v for k, v in (x._meta or {}).items() if k not in ("line", "col", "start", "end")}
        if meta != (y._meta or {}):
            return False
    return True


@pytest.mark.parametrize("sql", SPIDER_LIKE)
def test_the_shipped_tree_is_the_parsed_tree_and_gives_the_same_diff(sql: str) -> None:
    parsed = parse_sql(sql, "sqlite")
    assert parsed.ok and parsed.expression is not None
    wire = to_wire(parsed.expression, parsed.nodes)
    assert wire is not None
    rebuilt = from_wire(wire)
    assert rebuilt is not None and rebuilt.sql("sqlite") == parsed.expression.sql("sqlite")
    assert _same_tree(parsed.expression, rebuilt)
    side = gold_side(parse_sql(GOLD, "sqlite").expression, "sqlite", GOLD)
    req = {"sql": sql, "dialect": "sqlite", "gold": side.to_json(), "budget_s": 5.0}
    from_text = engine_side.structure_on_wire(req)
    assert from_text == compare_structure(parse_sql(sql, "sqlite").expression, side, "sqlite", pred_sql=sql).to_dict()
    assert engine_side.structure_on_wire({**req, "tree": wire}) == from_text


def test_the_engine_reads_the_shipped_tree_instead_of_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    sql = SPIDER_LIKE[3]
    parsed = parse_sql(sql, "sqlite")
    side = gold_side(parse_sql(GOLD, "sqlite").expression, "sqlite", GOLD)
    req = {"sql": sql, "dialect": "sqlite", "gold": side.to_json(), "budget_s": 5.0,
           "tree": to_wire(parsed.expression, parsed.nodes)}
    expected = engine_side.structure_on_wire(req)

    def no_parse(*_: Any) -> Any:
        raise AssertionError("parsed again")
    monkeypatch.setattr(parse_module, "parse_sql", no_parse)
    assert engine_side.structure_on_wire(req) == expected


def _wire(sql: str = "SELECT a FROM t WHERE b = 1") -> tuple[tuple[Any, ...], ...]:
    parsed = parse_sql(sql, "sqlite")
    wire = to_wire(parsed.expression, parsed.nodes)
    assert wire is not None
    return wire


def _edit(wire: tuple[tuple[Any, ...], ...], at: int, entry: tuple[Any, ...]) -> tuple[tuple[Any, ...], ...]:
    return (*wire[:at], entry, *wire[at + 1:])


def _with_child(wire: tuple[tuple[Any, ...], ...], position: Any) -> tuple[tuple[Any, ...], ...]:
    """The root's first child position replaced by ``position``."""
    name, items, meta, comments = wire[-1]
    i = next(i for i in range(0, len(items), 3) if items[i + 1] in (1, 2))
    value = position if items[i + 1] == 1 else (position, *items[i + 2][1:])
    return _edit(wire, len(wire) - 1, (name, (*items[:i + 2], value, *items[i + 3:]), meta, comments))


def _malformed() -> list[tuple[str, Any]]:
    w = _wire()
    root = w[-1]
    return [
        ("not a tuple", list(w)),
        ("empty", ()),
        ("a string", "SELECT 1"),
        ("a class outside sqlglot.expressions", _edit(w, 0, ("Popen", (), None, None))),
        ("a dotted path", _edit(w, 0, ("os.system", (), None, None))),
        ("a function, not a class", _edit(w, 0, ("maybe_parse", (), None, None))),
        ("a dunder", _edit(w, 0, ("__builtins__", (), None, None))),
        ("a non-string class name", _edit(w, 0, (42, (), None, None))),
        ("an entry of three", _edit(w, 0, w[0][:3])),
        ("items not in threes", _edit(w, len(w) - 1, (root[0], root[1][:-1], root[2], root[3]))),
        ("an unknown tag", _edit(w, len(w) - 1, (root[0], ("this", 9, 0), None, None))),
        ("a non-string key", _edit(w, len(w) - 1, (root[0], (7, 0, "x"), None, None))),
        ("an object as a value", _edit(w, len(w) - 1, (root[0], ("this", 0, object()), None, None))),
        ("a forward child", _with_child(w, len(w) - 1)),
        ("a child out of range", _with_child(w, 10 ** 6)),
        ("a negative child", _with_child(w, -1)),
        ("a child as a bool", _with_child(w, True)),
        ("a child used twice", _edit(w, len(w) - 1, (root[0], ("this", 1, 0, "expression", 1, 0), None, None))),
        ("a node nobody holds", (("Column", (), None, None), *w)),
        ("an unknown data type", (("DataType", ("this", 3, "NO_SUCH_TYPE"), None, None),)),
        ("meta not a dict", _edit(w, 0, (w[0][0], w[0][1], ["x"], None))),
        ("comments not strings", _edit(w, 0, (w[0][0], w[0][1], None, [1]))),
    ]


@pytest.mark.parametrize("why, wire", _malformed(), ids=[why for why, _ in _malformed()])
def test_a_malformed_or_hostile_form_is_refused(why: str, wire: Any) -> None:
    assert from_wire(wire) is None


def test_a_refused_form_falls_back_to_the_text_with_the_same_evidence() -> None:
    sql = SPIDER_LIKE[7]
    side = gold_side(parse_sql(GOLD, "sqlite").expression, "sqlite", GOLD)
    req = {"sql": sql, "dialect": "sqlite", "gold": side.to_json(), "budget_s": 5.0}
    expected = engine_side.structure_on_wire(req)
    for _, wire in _malformed():
        assert engine_side.structure_on_wire({**req, "tree": wire}) == expected


def test_the_tree_never_decides_what_runs(tmp_path: Path) -> None:
    """A grade request whose tree is a harmless SELECT and whose text writes: the engine runs
    the text, and its sandbox refuses it by its own rule; the database is unchanged."""
    db = pets_db(tmp_path / "pets.sqlite")
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    g = SuiteGrader(db, dialect="sqlite", cache_dir=tmp_path / "cache")
    try:
        gold = g.gold(GOLD)
        assert gold.analysis is not None and gold.analysis.structure is not None
        for sql in ("DELETE FROM pet", "DROP TABLE owner", "ATTACH DATABASE 'x.db' AS x",
                    "SELECT load_extension('/tmp/x.so')"):
            answer = g.host.call("grade", {
                "sql": sql, "gold_key": gold.key, "spec": gold.policy.to_wire(), "gold_sql": gold.sql,
                "structure": {"sql": sql, "dialect": "sqlite", "gold": gold.analysis.structure.to_json(),
                              "budget_s": 5.0, "tree": _wire("SELECT name FROM owner")}})
            assert answer["compare"] is None
            assert answer["execution"]["error"]["category"] == "permission_error", sql
    finally:
        g.close()
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "pets.sqlite"]


@pytest.mark.parametrize("ship", [True, False])
def test_a_rerun_with_the_tree_shipped_or_not_gives_every_verdict_of_a_grader_that_diffs_itself(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ship: bool) -> None:
    never_behind(monkeypatch)
    db = pets_db(tmp_path / "pets.sqlite")
    expected = graded_in_process(db, tmp_path / "here")
    monkeypatch.setattr(send, "SHIP_TREE", ship)
    for _ in range(2):  # the first run stores the golds; the rerun sends the diffs to the engine
        g = SuiteGrader(db, dialect="sqlite", cache_dir=tmp_path / "moved")
        seen = local_diffs(monkeypatch)
        try:
            assert graded(g) == expected
        finally:
            g.close()
    assert seen == ["DELETE FROM pet"] * len(GOLDS)  # only the query that was never sent to an engine
