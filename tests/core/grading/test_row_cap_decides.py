"""A result over the row cap is decided by its size where its size decides it: more rows
than the cap against a gold of at most that many cannot be the same bag, so our verdict
and Spider's (``result_eq`` compares lengths first) fail it, known once the engine has
read past the cap, without fetching the rest or waiting for the time limit. BIRD compares
sets, which a size does not decide (a cross join of copies of the gold's rows is an equal
set): a prefix of the rows decides it when it holds a row the gold has not, and it stays
undecided otherwise."""
from __future__ import annotations

import json
import sqlite3

import pyarrow as pa
import pytest

from pytest_sqleval.core.grading import peers
from tests.sqleval_helpers import read_results, read_summary, sqleval_ini  # noqa: F401  (fixture)
from tests.core.cases.test_layouts import CONCERT

CAP = 20
#: a cross join of ten copies of singer: 5**10 rows, seconds to read whole, the time limit 2 s
HUGE = "SELECT a.name FROM " + ", ".join(f"singer s{i}" for i in range(9)) + ", singer a"

#: gold, prediction, ours (failure kind), Spider, BIRD -- and why
CASES = [
    # a cross join far over the cap against 2 rows: a cardinality fail, decided at the cap, not by the time limit
    ("SELECT name FROM singer WHERE age > 40", HUGE, "cardinality_mismatch", False, None),
    # copies of the gold's own rows over the cap: a different bag (ours, Spider), maybe an equal set (BIRD)
    ("SELECT country FROM singer WHERE age > 40",
     "SELECT a.country FROM singer a, singer b, singer c WHERE a.age > 40", "cardinality_mismatch", False, None),
    # within the cap as written (3 countries), over it as Spider runs it (DISTINCT dropped: 125 rows against 5)
    ("SELECT DISTINCT country FROM singer", "SELECT DISTINCT a.country FROM singer a, singer b, singer c",
     None, False, True),
]


def _suite(pytester: pytest.Pytester, cases: list[tuple[str, str, str | None, bool, bool | None]]) -> None:
    root = pytester.path / "spider"
    (root / "database" / "concert").mkdir(parents=True)
    con = sqlite3.connect(root / "database" / "concert" / "concert.sqlite")
    con.executescript(CONCERT)
    con.close()
    (root / "dev.json").write_text(json.dumps([{"db_id": "concert", "question": f"q{i}", "query": gold}
                                               for i, (gold, *_) in enumerate(cases)]))
    (root / "sqleval.toml").write_text('[suite]\nname = "spider_dev"\nlayout = "spider"\n'
                                       f'[limits]\nmax_rows = {CAP}\ntimeout_s = 2\n')
    (pytester.path / "pred.sql").write_text("\n".join(pred for _, pred, *_ in cases) + "\n")


def test_a_result_over_the_cap_is_a_cardinality_fail_not_an_error(pytester: pytest.Pytester) -> None:
    _suite(pytester, CASES)
    result = pytester.runpytest("spider", "--sqleval-backend=predictions:pred.sql", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=2)
    records = sorted(read_results(pytester.path), key=lambda r: int(r["case_id"]))
    for r, (_, _, kind, spider, bird) in zip(records, CASES):
        assert r["failure_kind"] == kind, r["case_id"]
        assert (r["sidebyside"] or r["compare"]["sidebyside"])["spider"] is spider, r["case_id"]
        assert (r["sidebyside"] or r["compare"]["sidebyside"])["bird"] is bird, r["case_id"]
    huge, copies, _ = records
    assert huge["explanation"].startswith(f"returned more than {CAP} rows (the cap); the gold returns 2")
    assert huge["error_class"] == "wrong_join"  # a row count off through the joins, as any cardinality mismatch
    assert huge["execution"]["error"]["category"] != "timeout"  # read to the cap and stopped, not run to the limit
    assert copies["explanation"].startswith(f"returned more than {CAP} rows (the cap); the gold returns 2")
    assert "BIRD compares sets, which a result's size does not decide" in copies["sidebyside"]["note"]
    result.stdout.fnmatch_lines([f"*why: returned more than {CAP} rows (the cap); the gold returns 2*"])
    side = read_summary(pytester.path)["backends"]["pred"]["sidebyside"]
    assert side["spider"]["undecided"] == 0 and side["bird"]["undecided"] == 2
    assert side["spider"]["reasons"] == {"distinct_stripping": 1}


def _table(rows: list[tuple]) -> pa.Table:
    return pa.table({"c": [r[0] for r in rows]})


def test_a_result_too_large_to_compare_whole_is_judged_by_its_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """Over ``peers.MAX_ROWS`` (results held, not converted to Python rows): Spider's
    lengths decide; BIRD's sets are decided by a prefix holding a row the gold has not."""
    monkeypatch.setattr(peers, "MAX_ROWS", 10)
    gold = _table([("France",), ("France",)])

    def sbs(pred: pa.Table, g: pa.Table = gold) -> dict:
        return peers.side_by_side(g, pred, {"match": False}, gold_sql="SELECT country FROM singer",
                                  pred_sql="SELECT country FROM singer", dialect="sqlite")
    other = sbs(_table([("France",), ("US",)] * 20))
    assert (other["spider"], other["bird"]) == (False, False)
    copies = sbs(_table([("France",)] * 40))
    assert (copies["spider"], copies["bird"]) == (False, None)
    same_size = sbs(_table([("France",)] * 40), _table([("France",)] * 40))
    assert same_size["spider"] is None and "are not compared" in same_size["note"]


def test_a_result_stopped_at_the_byte_cap_is_decided_by_the_rows_read(pytester: pytest.Pytester) -> None:
    """The byte cap stops a wide result before the row cap: the rows read by then are
    already more than the gold's, which decides it the same way."""
    cases = [("SELECT name FROM singer WHERE age > 40", HUGE, "cardinality_mismatch", False, None)]
    _suite(pytester, cases)
    manifest = pytester.path / "spider" / "sqleval.toml"
    manifest.write_text(manifest.read_text().replace(f"max_rows = {CAP}", "max_bytes = 20000"))
    result = pytester.runpytest("spider", "--sqleval-backend=predictions:pred.sql", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    (r,) = read_results(pytester.path)
    assert r["failure_kind"] == "cardinality_mismatch" and r["sidebyside"]["spider"] is False
    assert "rows (where reading stopped at the byte cap); the gold returns 2" in r["explanation"]
