"""A Spider-shaped benchmark: many small SQLite databases, about 1000 cases, graded by
Spider's execution rule (the baseline) and by pytest-sqleval, in one run.

    python bench/spider_bench.py [--databases 20] [--per-database 50] [--repeat 3]

Why built here: Spider's data cannot ship with the project, and what sets the pace on it
is its shape (cases per database, result sizes, the mix of right and wrong predictions),
which this reproduces: ``database/<db_id>/<db_id>.sqlite``, ``dev.json``, ``tables.json``
and one predicted SQL per line, as Spider's evaluator reads them.

The baseline is Spider's published execution rule (test-suite-sql-eval, ``--etype exec``,
one database per ``db_id``): the prediction gets ``value`` -> ``1``, both queries get
``postprocess``, ``remove_distinct`` and ``replace_cur_year`` (``peers.spider_variant``),
each runs on a fresh ``sqlite3`` connection, and the results compare with ``result_eq``
(a multiset, or a sequence when the gold says ``order by``, under any column
permutation), here through the project's own implementation of that rule
(``grading.peers``). It skips what the official script also does (parsing every gold for
its hardness, an asyncio timeout per query), so it is a floor under the official wall time.

With ``--official DIR`` (a checkout of test-suite-sql-eval, with nltk and sqlparse
installed), the official script runs on the same data too, in turn with ours. Its parser
needs nltk's trained English Punkt model, a download from nltk's servers; the bench gives
it an untrained one instead (``punkt_stand_in``) and reports whether that can change a
token of this data's SQL (``punkt_agreement``).
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import resource
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _util import Report, check, fresh, load, median, pytest_cmd, read_records, run  # noqa: E402

WORK = Path(os.environ.get("SQLEVAL_BENCH_WORK", "/tmp/sqleval-bench")) / "spider"  # a private one on a shared machine
COUNTRIES = ["France", "Netherlands", "United States", "Japan", "Brazil", "Kenya"]
CITIES = ["Aberdeen", "Bergen", "Cork", "Delft", "Essen", "Ghent", "Haarlem"]

SCHEMA = """
CREATE TABLE stadium (stadium_id INTEGER PRIMARY KEY, name TEXT, city TEXT, capacity INTEGER, opened INTEGER);
CREATE TABLE singer (singer_id INTEGER PRIMARY KEY, name TEXT, country TEXT, age INTEGER, is_male TEXT, net_worth REAL);
CREATE TABLE concert (concert_id INTEGER PRIMARY KEY, concert_name TEXT, theme TEXT, stadium_id INTEGER REFERENCES stadium,
                      year INTEGER);
CREATE TABLE singer_in_concert (concert_id INTEGER REFERENCES concert, singer_id INTEGER REFERENCES singer,
                                PRIMARY KEY (concert_id, singer_id));
"""


# -- the data -----------------------------------------------------------------------------
def build_database(path: Path, rng: random.Random) -> None:
    """One small database, Spider-sized: tens of rows per table."""
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path)
    con.executescript(SCHEMA)
    n_stadium, n_singer, n_concert = rng.randint(5, 12), rng.randint(8, 40), rng.randint(6, 30)
    con.executemany("INSERT INTO stadium VALUES (?, ?, ?, ?, ?)",
                    [(i, f"Stadium {i}", rng.choice(CITIES), rng.randrange(1000, 90000, 500), rng.randint(1950, 2015))
                     for i in range(1, n_stadium + 1)])
    con.executemany("INSERT INTO singer VALUES (?, ?, ?, ?, ?, ?)",
                    [(i, f"Singer {i}", rng.choice(COUNTRIES), rng.randint(18, 70), rng.choice("TF"),
                      round(rng.uniform(0.5, 80), 2)) for i in range(1, n_singer + 1)])
    con.executemany("INSERT INTO concert VALUES (?, ?, ?, ?, ?)",
                    [(i, f"Concert {i}", rng.choice(["Free", "Party", "Wide", "Happy"]), rng.randint(1, n_stadium),
                      rng.randint(2012, 2016)) for i in range(1, n_concert + 1)])
    pairs = {(rng.randint(1, n_concert), rng.randint(1, n_singer)) for _ in range(n_concert * 3)}
    con.executemany("INSERT INTO singer_in_concert VALUES (?, ?)", sorted(pairs))
    con.commit()
    con.close()


def questions(rng: random.Random, con: sqlite3.Connection) -> list[tuple[str, list[str], list[str]]]:
    """Spider-style questions on one database: (gold, right rewrites, wrong predictions).
    Parameters are drawn from the data, so no gold is empty; every gold is SQL that
    Spider's own parser (``process_sql.get_sql``) reads, as the official evaluator parses
    each gold for its hardness with no fallback (a ``SELECT`` without ``FROM`` stops it)."""
    country = rng.choice([r[0] for r in con.execute("SELECT DISTINCT country FROM singer")])
    year = rng.choice([r[0] for r in con.execute("SELECT DISTINCT year FROM concert JOIN singer_in_concert USING (concert_id)")])
    age = rng.choice([r[0] for r in con.execute("SELECT age FROM singer WHERE age < (SELECT max(age) FROM singer)")])
    cap = rng.choice([r[0] for r in con.execute("SELECT capacity FROM stadium")])
    opened = rng.choice([r[0] for r in con.execute("SELECT opened FROM stadium WHERE opened < (SELECT max(opened) FROM stadium)")])
    other = next(c for c in COUNTRIES if c != country)
    return [
        ("SELECT count(*) FROM singer", ["SELECT count(singer_id) FROM singer"],
         ["SELECT count(*) FROM concert", "SELECT count(DISTINCT country) FROM singer"]),
        ("SELECT name, country, age FROM singer ORDER BY age DESC, singer_id",
         ["SELECT name, country, age FROM singer AS s ORDER BY s.age DESC, s.singer_id"],
         ["SELECT name, country, age FROM singer ORDER BY age", "SELECT name, age FROM singer ORDER BY age DESC"]),
        (f"SELECT avg(age), min(age), max(age) FROM singer WHERE country = '{country}'",
         [f"SELECT avg(age), min(age), max(age) FROM singer WHERE country LIKE '{country}'"],
         [f"SELECT avg(age), min(age), max(age) FROM singer WHERE country = '{other}'",
          "SELECT avg(age), min(age), max(age) FROM singer"]),
        (f"SELECT DISTINCT country FROM singer WHERE age > {age}",
         [f"SELECT country FROM singer WHERE age > {age} GROUP BY country"],
         [f"SELECT country FROM singer WHERE age >= {age}", f"SELECT DISTINCT country FROM singer WHERE age < {age}"]),
        ("SELECT country, count(*) FROM singer GROUP BY country",
         ["SELECT count(*), country FROM singer GROUP BY country"],
         ["SELECT country, count(*) FROM singer GROUP BY is_male", "SELECT country, sum(age) FROM singer GROUP BY country"]),
        ("SELECT T2.name, count(*) FROM concert AS T1 JOIN stadium AS T2 ON T1.stadium_id = T2.stadium_id "
         "GROUP BY T1.stadium_id",
         ["SELECT s.name, count(c.concert_id) FROM stadium s JOIN concert c ON c.stadium_id = s.stadium_id GROUP BY s.stadium_id"],
         ["SELECT T2.name, count(*) FROM concert AS T1 JOIN stadium AS T2 GROUP BY T1.stadium_id",
          "SELECT T2.name, count(*) FROM concert AS T1 JOIN stadium AS T2 ON T1.stadium_id = T2.stadium_id GROUP BY T2.city"]),
        ("SELECT name FROM stadium WHERE capacity > (SELECT avg(capacity) FROM stadium)",
         ["SELECT name FROM stadium WHERE capacity > (SELECT sum(capacity) * 1.0 / count(*) FROM stadium)"],
         ["SELECT name FROM stadium WHERE capacity < (SELECT avg(capacity) FROM stadium)",
          "SELECT name FROM stadium WHERE capacity > (SELECT avg(capacty) FROM stadium)"]),
        (f"SELECT DISTINCT T1.name FROM singer AS T1 JOIN singer_in_concert AS T2 ON T1.singer_id = T2.singer_id "
         f"JOIN concert AS T3 ON T2.concert_id = T3.concert_id WHERE T3.year = {year}",
         [f"SELECT name FROM singer WHERE singer_id IN (SELECT singer_id FROM singer_in_concert WHERE concert_id IN "
          f"(SELECT concert_id FROM concert WHERE year = {year}))"],
         [f"SELECT T1.name FROM singer AS T1 JOIN concert AS T3 ON T1.singer_id = T3.concert_id WHERE T3.year = {year}",
          f"SELECT T1.name FROM singer AS T1 JOIN singer_in_concert AS T2 ON T1.singer_id = T2.singer_id "
          f"JOIN concert AS T3 ON T2.concert_id = T3.concert_id WHERE T3.year = {year}"]),
        (f"SELECT name FROM stadium WHERE stadium_id NOT IN (SELECT stadium_id FROM concert) "
         f"UNION SELECT name FROM stadium WHERE opened <= {opened} ORDER BY name",
         [f"SELECT name FROM stadium s WHERE NOT EXISTS (SELECT 1 FROM concert c WHERE c.stadium_id = s.stadium_id) "
          f"UNION SELECT name FROM stadium WHERE opened <= {opened} ORDER BY name"],
         [f"SELECT name FROM stadium WHERE stadium_id IN (SELECT stadium_id FROM concert) "
          f"UNION SELECT name FROM stadium WHERE opened <= {opened} ORDER BY name",
          "SELECT name FROM stadiums WHERE stadium_id NOT IN (SELECT stadium_id FROM concert)"]),
        (f"SELECT name, capacity FROM stadium WHERE capacity >= {cap} ORDER BY capacity DESC, stadium_id LIMIT 3",
         [f"SELECT name, capacity FROM stadium WHERE {cap} <= capacity ORDER BY capacity DESC, stadium_id LIMIT 3"],
         [f"SELECT name, capacity FROM stadium WHERE capacity >= {cap} ORDER BY capacity, stadium_id LIMIT 3",
          f"SELECT name, capacity FROM stadium WHERE capacity >= {cap} ORDER BY capacity DESC, stadium_id LIMT 3"]),
        ("SELECT theme, year FROM concert WHERE concert_id = (SELECT max(concert_id) FROM concert)",
         ["SELECT theme, year FROM concert ORDER BY concert_id DESC LIMIT 1"],
         ["SELECT theme, year FROM concert WHERE concert_id = (SELECT min(concert_id) FROM concert)",
          "SELECT theme FROM concert WHERE concert_id = (SELECT max(concert_id) FROM concert)"]),
        ("SELECT is_male, avg(net_worth) FROM singer GROUP BY is_male",
         ["SELECT is_male, sum(net_worth) / count(*) FROM singer GROUP BY is_male"],
         ["SELECT is_male, max(net_worth) FROM singer GROUP BY is_male", "SELECT is_male, avg(net_worth) FROM singer"]),
    ]


def build(root: Path, n_db: int, per_db: int, seed: int = 0) -> tuple[Path, Path]:
    """The Spider layout under ``root`` and its predictions file: about 70 % right (half
    of them written differently from the gold), the rest wrong results or errors, as
    published Spider predictions score."""
    rng = random.Random(seed)
    fresh(root)
    dev, preds, tables = [], [], []
    for d in range(n_db):
        db_id = f"concert_{d:02d}"
        path = root / "database" / db_id / f"{db_id}.sqlite"
        build_database(path, rng)
        tables.append({"db_id": db_id})
        con = sqlite3.connect(path)
        pool: list[tuple[str, list[str], list[str]]] = []
        while len(pool) < per_db:
            pool += questions(rng, con)
        con.close()
        for gold, right, wrong in pool[:per_db]:
            dev.append({"db_id": db_id, "question": f"({db_id}) {gold[:40]}", "query": gold})
            roll = rng.random()
            preds.append(gold if roll < 0.35 else rng.choice(right) if roll < 0.7 else rng.choice(wrong))
    (root / "dev.json").write_text(json.dumps(dev, indent=1))
    (root / "dev_gold.sql").write_text("".join(f"{c['query']}\t{c['db_id']}\n" for c in dev))  # the official script's gold
    (root / "tables.json").write_text(json.dumps(tables))
    (root / "sqleval.toml").write_text('[suite]\nname = "spider_shaped"\nlayout = "spider"\ntables = "tables.json"\n')
    pred_file = root.parent / "pred.sql"
    pred_file.write_text("\n".join(preds) + "\n")
    return root, pred_file


# -- the baseline: Spider's execution rule --------------------------------------------------
def _fetch(db: Path, sql: str) -> list[tuple] | None:
    """One query on a fresh connection, as Spider's ``exec_on_db`` runs it; None on an error."""
    con = sqlite3.connect(db)
    con.text_factory = lambda b: b.decode(errors="ignore")
    try:
        return con.execute(sql).fetchall()
    except Exception:
        return None
    finally:
        con.close()


def spider_rule(root: Path, pred_file: Path) -> int:
    """Spider's ``--etype exec`` on one database per question: how many predictions it scores right."""
    from pytest_sqleval.core.grading.peers import spider_equal, spider_order_matters, spider_variant
    dev = json.loads((root / "dev.json").read_text())
    preds = pred_file.read_text().splitlines()
    right = 0
    for case, pred in zip(dev, preds):
        db = root / "database" / case["db_id"] / f"{case['db_id']}.sqlite"
        gold_sql, pred_sql = spider_variant(case["query"], "sqlite"), spider_variant(pred, "sqlite", prediction=True)
        gold, got = _fetch(db, gold_sql), _fetch(db, pred_sql)
        right += got is not None and gold is not None and bool(spider_equal(gold, got, spider_order_matters(gold_sql)))
    return right


def punkt_stand_in(folder: Path) -> Path:
    """An ``NLTK_DATA`` folder with an untrained English Punkt model (``punkt_tab``), for
    the official evaluator's process only. Its parser tokenizes with nltk's
    ``word_tokenize``, which loads nltk's trained English model, a download from nltk's
    servers; untrained (empty abbreviation, collocation, sentence-starter and
    orthographic tables, written by nltk's own ``save_punkt_params`` at run time, never
    vendored), it runs the same code, and ``punkt_agreement`` checks that the tables
    cannot matter on the SQL at hand."""
    import nltk
    from nltk.tokenize.punkt import PunktParameters, save_punkt_params
    english = fresh(folder) / "tokenizers" / "punkt_tab" / "english"
    english.parent.mkdir(parents=True)
    nltk.data.path.append(str(folder))  # nltk writes only under its data roots, and reads the model back from there
    save_punkt_params(PunktParameters(), str(english))
    return folder


def punkt_agreement(strings: list[str]) -> tuple[int, int]:
    """How many ``strings`` hold a place where a Punkt model, trained or not, may split a
    sentence (its period-context pattern: '.', '?' or '!' before white space or
    punctuation), and how many ``word_tokenize`` with the stand-in tokenizes otherwise
    than Treebank alone: (0, 0) means nltk's trained English model tokenizes them all
    exactly as the stand-in does. The raw strings, a superset of the candidates the
    official parser's text (quoted values swapped out) holds."""
    from nltk import word_tokenize
    from nltk.tokenize.punkt import PunktLanguageVars
    pattern = PunktLanguageVars().period_context_re()
    candidates = sum(pattern.search(s) is not None for s in strings)
    differ = sum(word_tokenize(s) != word_tokenize(s, preserve_line=True) for s in strings)
    return candidates, differ


def official(checkout: Path, root: Path, pred_file: Path, nltk_data: Path) -> tuple[float, float | None, str]:
    """The official evaluator (a checkout of test-suite-sql-eval the user provides, never
    copied here) on the same data, ``--etype exec`` with its defaults (``--table`` is read
    only for ``match``), as a whole process: wall seconds, its execution accuracy, and its
    last lines (what it says when it cannot run)."""
    t, proc = run([sys.executable, str(checkout / "evaluation.py"), "--gold", str(root / "dev_gold.sql"), "--pred",
                   str(pred_file), "--db", str(root / "database"), "--etype", "exec"], cwd=checkout,
                  env={"NLTK_DATA": str(nltk_data)})
    tail = (proc.stdout + proc.stderr).strip().splitlines()[-3:]
    if proc.returncode != 0:
        return t, None, " / ".join(tail)
    lines = [ln.split() for ln in proc.stdout.splitlines() if ln.startswith("execution")]
    return t, float(lines[-1][-1]) if lines else None, " / ".join(tail)


def official_ready(report: Report, root: Path, pred_file: Path) -> Path | None:
    """The stand-in's ``NLTK_DATA`` folder, its check reported; None, and why, when the
    evaluator's own needs (not the project's) are not installed."""
    if any(importlib.util.find_spec(m) is None for m in ("nltk", "sqlparse")):
        report.add("spider", "the official evaluator", None, "s", note="did not run: install nltk and sqlparse")
        return None
    folder = punkt_stand_in(WORK / "nltk_data")
    strings = [c["query"] for c in json.loads((root / "dev.json").read_text())] + pred_file.read_text().splitlines()
    candidates, differ = punkt_agreement(strings)
    report.add("spider", "the official's tokenizer: SQL strings where a Punkt model may split a sentence", candidates,
               "", note=f"of {len(strings)} golds and predictions; with the untrained stand-in, word_tokenize differs "
                        f"from Treebank alone on {differ}")
    return folder


# -- the run ------------------------------------------------------------------------------
def cpu_of(step: Any) -> tuple[Any, float]:
    """``step()`` and the CPU seconds (user + system) its child processes spent, theirs included."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = step()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return out, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def run_bench(report: Report, n_db: int, per_db: int, repeat: int = 3, checkout: Path | None = None) -> None:
    """The baseline, then ours cold (no gold cached), cached serial and cached ``-n 2``,
    each a whole pytest process, as a user runs it; with ``checkout``, the official
    evaluator too."""
    print(f"== spider-shaped: {n_db} SQLite databases x {per_db} cases ({load()})", flush=True)
    root, pred_file = build(WORK / "spider", n_db, per_db)
    n = n_db * per_db
    times, right = [], 0
    for _ in range(repeat):
        t = time.perf_counter()
        right = spider_rule(root, pred_file)
        times.append(time.perf_counter() - t)
    base = median(times)
    nltk_data = official_ready(report, root, pred_file) if checkout is not None else None
    cache, results = WORK / "cache", WORK / "results"
    common = [str(root), f"--sqleval-backend=predictions:{pred_file}", f"--sqleval-cache-dir={cache}",
              f"--sqleval-results={results}", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "--tb=no",
              "-rN", "--no-header"]
    cold, serial, parallel, cpu_serial, cpu_parallel, passed = [], [], [], [], [], 0
    idle_serial, idle_parallel = [], []  # start-up and collection alone: every case deselected
    runs, loads = [], []  # the official evaluator's, taken in turn with ours on a shared machine
    for _ in range(repeat):
        loads.append(os.getloadavg()[0])
        if checkout is not None and nltk_data is not None:
            runs.append(official(checkout, root, pred_file, nltk_data))
        fresh(cache)
        t, proc = run(pytest_cmd(*common), cwd=WORK)
        check(proc)
        cold.append(t)
        passed = sum(r["status"] == "passed" for r in read_records(results))
        (t, proc), cpu = cpu_of(lambda: run(pytest_cmd(*common), cwd=WORK))
        check(proc)
        serial.append(t)
        cpu_serial.append(cpu)
        (t, proc), cpu = cpu_of(lambda: run(pytest_cmd(*common, "-n", "2"), cwd=WORK))
        check(proc)
        parallel.append(t)
        cpu_parallel.append(cpu)
        for samples, extra in ((idle_serial, []), (idle_parallel, ["-n", "2"])):
            t, proc = run(pytest_cmd(*common, "-k", "sqleval_no_such_case", *extra), cwd=WORK)
            check(proc, (5,))
            samples.append(t)
    note = f"{n} cases; Spider's rule scores {right} right, ours passes {passed}"
    report.add("spider", f"{n} cases, {n_db} SQLite dbs: Spider's rule (baseline)", base, "s", samples=times, note=note)
    for name, samples in (("ours serial, cold", cold), ("ours serial, gold cached", serial),
                          ("ours -n 2, gold cached", parallel)):
        report.add("spider", f"{n} cases, {n_db} SQLite dbs: {name}", median(samples), "s", baseline=base,
                   baseline_name="Spider's rule", target="<= 1.0x Spider's rule" if "serial" in name else None,
                   met=median(samples) <= base if "serial" in name else None, samples=samples,
                   note=f"{1000 * median(samples) / n:.1f} ms/case")
    if runs:
        walls, accuracy, said = [w for w, _, _ in runs], runs[-1][1], runs[-1][2]
        ran = all(a is not None for _, a, _ in runs)
        official_wall = median(walls) if ran else None
        at_load = f"1-min load at each turn: {', '.join(f'{x:.1f}' for x in loads)}"
        report.add("spider", f"{n} cases: the official evaluator (evaluation.py --etype exec)", official_wall, "s",
                   baseline=base, baseline_name="Spider's rule", samples=walls,
                   note=f"execution accuracy {accuracy:.3f} (Spider's rule {right / n:.3f}, ours {passed / n:.3f} "
                        f"passed); {at_load}" if ran else f"did not run: {said}")
        if official_wall is not None:
            for name, samples in (("serial, cold", cold), ("serial, gold cached", serial),
                                  ("-n 2, gold cached", parallel)):
                serially = name.startswith("serial")
                report.add("spider", f"{n} cases: ours {name}, vs the official evaluator", median(samples), "s",
                           baseline=official_wall, baseline_name="official evaluator",
                           target="<= 1.0x the official" if serially else None,
                           met=median(samples) <= official_wall if serially else None, samples=samples, note=at_load)
    s, p = median(serial), median(parallel)
    report.add("spider", f"{n} cases: -n 2 speed-up over serial (gold cached)", s / p, "x", target="> 1x",
               met=s / p > 1, note=f"serial {s:.1f} s, -n 2 {p:.1f} s")
    report.add("spider", f"{n} cases: CPU seconds, serial (gold cached)", median(cpu_serial), "s", samples=cpu_serial,
               note="user + system of pytest and its children (the engine process, xdist's workers)")
    report.add("spider", f"{n} cases: CPU seconds, -n 2 (gold cached)", median(cpu_parallel), "s",
               baseline=median(cpu_serial), baseline_name="serial", samples=cpu_parallel)
    report.add("spider", "start-up and collection alone (no case selected): serial", median(idle_serial), "s",
               samples=idle_serial)
    report.add("spider", "start-up and collection alone (no case selected): -n 2", median(idle_parallel), "s",
               baseline=median(idle_serial), baseline_name="serial", samples=idle_parallel)
    profile_parts(report, root, pred_file, n)


#: the parts of a cached serial run, as (name, the functions whose cumulative time it is)
PARTS = [
    ("pytest protocol of a case (everything but our setup, call and report hooks)",
     ["_pytest/runner.py:runtestprotocol"], ["pytest_sqleval/plugin/items.py:setup", "pytest_sqleval/plugin/items.py:runtest",
                                             "pytest_sqleval/reports/sink.py:on_report"]),
    ("opening the graders (one per database)", ["pytest_sqleval/core/pool.py:for_suite"], []),
    ("parse (prediction and gold)", ["pytest_sqleval/core/grading/parse.py:parse_sql"], []),
    ("structure layer (exact match)", ["pytest_sqleval/core/grading/structure.py:compare_structure"], []),
    ("waiting for the engine process (select)", ["~:<built-in method select.select>"], []),
    ("sending to the engine process", ["pytest_sqleval/core/engines/host.py:send"], []),
    ("the record and the results file", ["pytest_sqleval/reports/sink.py:on_report"], []),
]


def profile_parts(report: Report, root: Path, pred_file: Path, n: int) -> None:
    """The cached serial run under cProfile, its time split into the parts above (ms per
    case, profiler overhead included: the split, not the sum, is the point)."""
    import pstats
    cache, results, prof = WORK / "cache", WORK / "results", WORK / "run.prof"
    _, proc = run([sys.executable, "-m", "cProfile", "-o", str(prof), "-m", "pytest", str(root),
                   f"--sqleval-backend=predictions:{pred_file}", f"--sqleval-cache-dir={cache}",
                   f"--sqleval-results={results}", "-q", "-p", "no:cacheprovider", "--tb=no", "-rN"], cwd=WORK)
    check(proc)
    stats = pstats.Stats(str(prof)).stats  # type: ignore[attr-defined]

    def cumulative(spec: str) -> float:
        where, _, name = spec.rpartition(":")
        return sum(v[3] for (f, _, fn), v in stats.items() if fn == name and (f == where or f.endswith(where)))
    total = max(v[3] for v in stats.values())
    report.add("spider", "cached serial run under cProfile: whole run", 1000 * total / n, "ms",
               note=f"{total:.1f} s for {n} cases; the parts below are ms per case")
    for name, plus, minus in PARTS:
        value = sum(map(cumulative, plus)) - sum(map(cumulative, minus))
        report.add("spider", f"per case: {name}", 1000 * value / n, "ms")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--databases", type=int, default=20)
    ap.add_argument("--per-database", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--official", type=Path, default=None, metavar="DIR",
                    help="a checkout of taoyds/test-suite-sql-eval (with nltk and sqlparse installed; its Punkt "
                         "model is generated): timed on the same data")
    args = ap.parse_args()
    report = Report()
    run_bench(report, args.databases, args.per_database, args.repeat, args.official)
    report.save(Path(__file__).resolve().parent / "results" / "spider.json")


if __name__ == "__main__":
    main()
