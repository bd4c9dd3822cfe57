"""Speed without changing a verdict: one engine process shared by the databases of a run
gives each database's answers as a process of its own would, keeps the databases apart,
and still fails only the request that overran; under xdist a worker gets whole databases."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from pytest_sqleval.core.cases import Limits
from pytest_sqleval.core.engines.host import EngineProcess
from pytest_sqleval.core.grading.pipeline import SuiteGrader
from pytest_sqleval.plugin.scheduling import CHUNK, case_scopes, names_a_suite
from tests.hosts import host_of


def sqlite_db(path: Path, table: str, rows: list[tuple[int, str]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path)
    con.execute(f"CREATE TABLE {table} (id INTEGER PRIMARY KEY, name TEXT)")
    con.executemany(f"INSERT INTO {table} VALUES (?, ?)", rows)
    con.commit()
    con.close()
    return path


def shared_graders(tmp_path: Path, databases: list[Path], limits: Limits = Limits()) -> tuple[EngineProcess, list[SuiteGrader]]:
    process = EngineProcess()
    return process, [SuiteGrader(db, dialect="sqlite" if db.suffix == ".sqlite" else "duckdb", limits=limits,
                                 cache_dir=tmp_path / "cache",
                                 started=SuiteGrader.start_engine(db, limits, tmp_path / "cache", process))
                     for db in databases]


def test_databases_sharing_one_engine_process_grade_as_with_their_own(tmp_path: Path) -> None:
    a = sqlite_db(tmp_path / "a.sqlite", "singer", [(1, "Ann"), (2, "Bo")])
    b = sqlite_db(tmp_path / "b.sqlite", "pet", [(1, "Rex"), (2, "Tom"), (3, "Kit")])
    process, (ga, gb) = shared_graders(tmp_path, [a, b])
    own = SuiteGrader(b, dialect="sqlite", cache_dir=tmp_path / "own")
    try:
        assert ga.catalog != gb.catalog and gb.catalog == own.catalog  # each sees its own database only
        assert ga.content_hash != gb.content_hash and gb.content_hash == own.content_hash
        cases = [("SELECT count(*) FROM pet", "SELECT count(*) FROM pet"),
                 ("SELECT name FROM pet", "SELECT name FROM pet WHERE id < 3"),
                 ("SELECT name FROM pet", "SELECT name FROM singer")]  # singer is the other database's table
        for gold, sql in cases:
            shared, alone = gb.grade(sql, gb.gold(gold)), own.grade(sql, own.gold(gold))
            assert (shared.passed, shared.failure_kind, shared.error_class) == (alone.passed, alone.failure_kind,
                                                                             alone.error_class)
        assert gb.grade("SELECT name FROM singer", gb.gold("SELECT name FROM pet")).error_class == "hallucinated_column"
        assert ga.grade("SELECT count(*) FROM singer", ga.gold("SELECT count(*) FROM singer")).passed
        ga.close()  # the child lets a go; the process and b go on, and a reopens on its next request
        assert gb.grade("SELECT count(*) FROM pet", gb.gold("SELECT count(*) FROM pet")).passed
        assert ga.grade("SELECT count(*) FROM singer", ga.gold("SELECT count(*) FROM singer")).passed
        assert process.restarts == 0
    finally:
        own.close()
        process.close()


def test_a_killed_query_fails_only_itself_in_a_shared_engine_process(tmp_path: Path, shop_db: Path) -> None:
    """An uninterruptible query on one database is killed with the process; the request of
    another database queued behind it is answered by a fresh process."""
    pets = sqlite_db(tmp_path / "pets.sqlite", "pet", [(1, "Rex")])
    process, (shop, pet) = shared_graders(tmp_path, [shop_db, pets], Limits(timeout_s=1))
    try:
        gold_shop, gold_pet = shop.gold("SELECT count(*) FROM orders"), pet.gold("SELECT count(*) FROM pet")
        shop.submit("SELECT md5(repeat('ab', 400000000))", gold_shop)
        pet.submit("SELECT count(*) FROM pet", gold_pet)
        assert pet.grade("SELECT count(*) FROM pet", gold_pet).passed
        assert shop.grade("SELECT md5(repeat('ab', 400000000))", gold_shop).failure_kind == "timeout"
        assert process.restarts == 1 and host_of(shop).restarts == host_of(pet).restarts == 1
        assert shop.grade("SELECT count(*) FROM orders", gold_shop).passed
    finally:
        process.close()


def test_a_database_that_cannot_be_opened_fails_alone(tmp_path: Path) -> None:
    good = sqlite_db(tmp_path / "good.sqlite", "pet", [(1, "Rex")])
    process = EngineProcess()
    try:
        host, ticket = SuiteGrader.start_engine(tmp_path / "missing.sqlite", Limits(), tmp_path / "cache", process)
        with pytest.raises(Exception, match="cannot open"):
            host.result(ticket)
        g = SuiteGrader(good, dialect="sqlite", cache_dir=tmp_path / "cache",
                        started=SuiteGrader.start_engine(good, Limits(), tmp_path / "cache", process))
        assert g.grade("SELECT count(*) FROM pet", g.gold("SELECT count(*) FROM pet")).passed
        assert process.restarts == 0
    finally:
        process.close()


# -- xdist ------------------------------------------------------------------------------
def spider_suite(root: Path, databases: int, per_database: int) -> Path:
    dev = []
    for d in range(databases):
        db_id = f"db{d}"
        sqlite_db(root / "database" / db_id / f"{db_id}.sqlite", "pet", [(i, f"pet {i}") for i in range(1, d + 3)])
        dev += [{"db_id": db_id, "question": f"q{i}", "query": f"SELECT count(*) FROM pet WHERE id > {i % 2}"}
                for i in range(per_database)]
    (root / "dev.json").write_text(json.dumps(dev))
    (root / "sqleval.toml").write_text('[suite]\nname = "spider_dev"\nlayout = "spider"\n')
    return root


def test_cases_are_scheduled_by_database_or_in_runs_of_one_database(tmp_path: Path, shop_db: Path) -> None:
    root = spider_suite(tmp_path / "spider", 3, 4)
    scopes = case_scopes(root / "dev.json", workers=2)
    assert len(scopes) == 12 and len(set(scopes.values())) == 3
    assert len({scopes[str(i)] for i in range(4)}) == 1  # the first database's cases together
    cut = case_scopes(root / "dev.json", workers=4)  # a database over a worker's share (3 cases) is cut
    assert len({cut[str(i)] for i in range(4)}) == 2 and cut["0"] != cut["4"]
    one = tmp_path / "one"
    one.mkdir()
    (one / "sqleval.toml").write_text(f'[suite]\nname = "one"\nquestions = "q.jsonl"\ndatabase = "{shop_db}"\n')
    (one / "q.jsonl").write_text("".join(json.dumps({"id": f"c{i}", "question": "?", "gold_sql": "SELECT 1"}) + "\n"
                                         for i in range(CHUNK + 1)))
    runs = case_scopes(one / "q.jsonl", workers=1)
    assert len(set(runs.values())) == 5 and runs["c0"] == runs["c3"] != runs["c4"]  # a quarter of 17 cases
    (one / "q.jsonl").write_text("".join(json.dumps({"id": f"c{i}", "question": "?", "gold_sql": "SELECT 1"}) + "\n"
                                         for i in range(8 * CHUNK)))
    runs = case_scopes(one / "q.jsonl", workers=1)
    assert runs["c0"] == runs[f"c{CHUNK - 1}"] != runs[f"c{CHUNK}"]  # at most CHUNK cases at a time
    assert case_scopes(tmp_path / "elsewhere.json") == {}
    assert names_a_suite(["spider"], tmp_path) and names_a_suite([str(one / "q.jsonl")], tmp_path)
    assert names_a_suite([str(tmp_path)], Path("/")) and not names_a_suite(["tests"], Path(__file__).parents[3])


def test_under_xdist_each_database_is_graded_by_one_worker(pytester: pytest.Pytester) -> None:
    spider_suite(pytester.path / "spider", 4, 3)
    result = pytester.runpytest_subprocess("-n", "2", "-v", "spider", "--sqleval-backend=gold", "-p", "no:cacheprovider",
                                           "-p", "no:randomly")
    result.assert_outcomes(passed=12)
    workers: dict[int, set[str]] = {}
    for line in result.outlines:
        if "PASSED" in line and "::" in line:
            worker, case = line.split()[0], int(line.rsplit("::", 1)[1].split()[0])
            workers.setdefault(case // 3, set()).add(worker)  # three cases per database, in file order
    assert len(workers) == 4 and all(len(w) == 1 for w in workers.values())


READS_CONFTEST = '''
import os
from pytest_sqleval.core.cases import layouts, read

def counted(kind, real):
    def call(*args, **kw):
        with open(os.environ["READS_LOG"], "a") as fh:
            fh.write(f"{os.environ.get('PYTEST_XDIST_WORKER', 'controller')} {kind}\\n")
        return real(*args, **kw)
    return call

read.validate_records = counted("cases", read.validate_records)
layouts.read_records = counted("records", layouts.read_records)
'''


def test_the_xdist_controller_reads_only_ids_and_databases_to_schedule(pytester: pytest.Pytester) -> None:
    """The controller collects nothing and hears node ids only, so it reads the questions
    file to schedule; it read the whole suite (every case validated, its policy resolved,
    its result files read) as a worker's collection does. Now each record's id and database
    only: the controller makes no case, and the file's records are read once there."""
    spider_suite(pytester.path / "spider", 4, 3)
    pytester.makeconftest(READS_CONFTEST)
    log = pytester.path / "reads.log"
    pytester._monkeypatch.setenv("READS_LOG", str(log))
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
        pytester._monkeypatch.delenv(name, raising=False)  # under an outer -n, the inner controller is no worker
    result = pytester.runpytest_subprocess("-n", "2", "-v", "spider", "--sqleval-backend=gold", "-p", "no:cacheprovider",
                                           "-p", "no:randomly")
    result.assert_outcomes(passed=12)
    reads: dict[str, int] = {}
    for line in log.read_text().splitlines():
        reads[line] = reads.get(line, 0) + 1
    assert reads.get("controller cases", 0) == 0, reads  # no case made where none is graded
    assert reads.get("controller records") == 1, reads
    assert reads.get("gw0 cases") == reads.get("gw1 cases") == 1, reads  # each worker's collection, once
    graded: dict[int, set[str]] = {}  # still by database: each database's cases on one worker
    for line in result.outlines:
        if "PASSED" in line and "::" in line:
            graded.setdefault(int(line.rsplit("::", 1)[1].split()[0]) // 3, set()).add(line.split()[0])
    assert len(graded) == 4 and all(len(w) == 1 for w in graded.values())


def test_an_xdist_worker_opens_only_the_databases_it_grades(pytester: pytest.Pytester) -> None:
    """A worker has collected every case, but the controller sends it only some databases:
    it opens no database ahead of its cases (before, each worker opened the first two)."""
    spider_suite(pytester.path / "spider", 4, 3)
    pytester.makeconftest('''
import os
from pytest_sqleval.core.grading.pipeline import SuiteGrader
real = SuiteGrader.start_engine

def logged(database, *args, **kw):
    with open(os.environ["OPENED_LOG"], "a") as fh:
        fh.write(f"{os.environ.get('PYTEST_XDIST_WORKER', 'serial')} {os.path.basename(str(database))}\\n")
    return real(database, *args, **kw)

SuiteGrader.start_engine = staticmethod(logged)
''')
    log = pytester.path / "opened.log"
    pytester._monkeypatch.setenv("OPENED_LOG", str(log))
    result = pytester.runpytest_subprocess("-n", "2", "-v", "spider", "--sqleval-backend=gold", "-p", "no:cacheprovider",
                                           "-p", "no:randomly")
    result.assert_outcomes(passed=12)
    graded = {(line.split()[0].strip("[]"), f"db{int(line.rsplit('::', 1)[1].split()[0]) // 3}.sqlite")
              for line in result.outlines if "PASSED" in line and "::" in line}
    opened = [tuple(line.split()) for line in log.read_text().splitlines()]
    assert sorted(opened) == sorted(graded)  # each database opened once, by the worker that grades it


def test_a_serial_run_asks_for_each_next_database_before_its_cases_and_opens_each_once(
        pytester: pytest.Pytester) -> None:
    """Opening a database costs the engine about 10 ms; asked for while the previous
    database's cases are graded, no case waits for it (before, only the first two were)."""
    spider_suite(pytester.path / "spider", 5, 2)
    pytester.makeconftest('''
import os
import pytest
from pytest_sqleval.core.grading.pipeline import SuiteGrader
real = SuiteGrader.start_engine

def log(line):
    with open(os.environ["OPENED_LOG"], "a") as fh:
        fh.write(line + "\\n")

def logged(database, *args, **kw):
    log("open " + os.path.basename(str(database)))
    return real(database, *args, **kw)

SuiteGrader.start_engine = staticmethod(logged)

@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    log("case db%d.sqlite" % (int(item.nodeid.rsplit("::", 1)[1].split("[")[0]) // 2))
''')
    log = pytester.path / "opened.log"
    pytester._monkeypatch.setenv("OPENED_LOG", str(log))
    result = pytester.runpytest_subprocess("spider", "--sqleval-backend=gold", "-p", "no:cacheprovider",
                                           "-p", "no:randomly")
    result.assert_outcomes(passed=10)
    lines = log.read_text().splitlines()
    opened = [line.split()[1] for line in lines if line.startswith("open ")]
    assert sorted(opened) == [f"db{d}.sqlite" for d in range(5)]  # each once
    for d in range(5):
        assert lines.index(f"open db{d}.sqlite") < lines.index(f"case db{d}.sqlite")


def test_records_cross_from_workers_as_they_were_made() -> None:
    """A worker's case record goes to the controller as one JSON string and is read back
    before any plugin sees the report; the report the worker keeps is left alone."""
    from pytest_sqleval.plugin.xdist_wire import pack_records, unpack_records
    record = {"case_id": "q1", "status": "failed", "layers": {"structure": {"distance": 0.25, "clauses": {}}},
              "compare": {"extra_rows": [[1, None, "é", 2.5]], "match": False}}
    kept = [("sqleval_case", "q1"), ("sqleval", record)]
    data = {"nodeid": "s::q1", "user_properties": kept}
    pack_records(data)
    assert kept == [("sqleval_case", "q1"), ("sqleval", record)]  # the worker's report is untouched
    assert data["user_properties"][1][0] == "sqleval.json" and isinstance(data["user_properties"][1][1], str)
    unpack_records(data)
    assert data["user_properties"] == [("sqleval_case", "q1"), ("sqleval", record)]
    odd = {"user_properties": [("sqleval", {"bytes": b"\x00"})]}  # JSON cannot hold it: sent as it is
    pack_records(odd)
    assert odd["user_properties"] == [("sqleval", {"bytes": b"\x00"})]
