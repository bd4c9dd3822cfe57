"""Spider-style SQLite databases for the coincidence bench: a seeded generator of small
databases with many tables, text keys and foreign keys, and Spider-style golds.

Two seeds of the same generator give two instances of the same schemas: the pinned one
(the suite's database, which the grader sees) and a ground-truth one (which it never
sees). The golds are drawn once, from the pinned instance's values, and run on both.

    python bench/vbench/spider_data.py --seed 1 --out /work/vbench-data/spider-s1 [--golds-seed 7] [--copies 3]
    python bench/vbench/spider_data.py --seed 2 --out /work/vbench-data/spider-s2 --schema-only

The first writes the Spider layout (``dev.json``, ``tables.json``, ``database/<db>/<db>.sqlite``,
``sqleval.toml``); the second only the databases."""
from __future__ import annotations

import argparse
import json
import random
import shutil
import sqlite3
from pathlib import Path
from typing import Any, Callable

WORDS = ["Amber", "Birch", "Cedar", "Delta", "Ember", "Fjord", "Grove", "Harbor", "Iris", "Juniper", "Kestrel",
         "Lumen", "Maple", "Nova", "Orchid", "Pine", "Quartz", "Raven", "Sierra", "Tundra", "Umber", "Vale",
         "Willow", "Yarrow", "Zephyr"]
CITIES = ["Austin", "Boston", "Chicago", "Denver", "El Paso", "Fresno", "Houston", "Miami", "Omaha", "Portland",
          "Reno", "Seattle", "Tampa"]
COUNTRIES = [("US", "United States", "Americas"), ("CA", "Canada", "Americas"), ("MX", "Mexico", "Americas"),
             ("FR", "France", "Europe"), ("DE", "Germany", "Europe"), ("IT", "Italy", "Europe"),
             ("JP", "Japan", "Asia"), ("KR", "Korea", "Asia"), ("IN", "India", "Asia"), ("BR", "Brazil", "Americas")]


def _code(prefix: str, i: int) -> str:
    return f"{prefix}{i:03d}"


def _date(rng: random.Random, y0: int = 2015, y1: int = 2022) -> str:
    return f"{rng.randint(y0, y1)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"


# -- schemas: DDL and a seeded filler each ------------------------------------------------
UNIVERSITY = """
CREATE TABLE department (dept_code TEXT PRIMARY KEY, name TEXT NOT NULL, building TEXT, budget REAL);
CREATE TABLE instructor (instr_id TEXT PRIMARY KEY, name TEXT NOT NULL, dept_code TEXT REFERENCES department(dept_code),
  salary INTEGER, hired_year INTEGER);
CREATE TABLE course (course_id TEXT PRIMARY KEY, title TEXT NOT NULL, dept_code TEXT REFERENCES department(dept_code),
  credits INTEGER);
CREATE TABLE student (student_id TEXT PRIMARY KEY, name TEXT NOT NULL, dept_code TEXT REFERENCES department(dept_code),
  year INTEGER, gpa REAL, home_city TEXT);
CREATE TABLE enrollment (student_id TEXT REFERENCES student(student_id), course_id TEXT REFERENCES course(course_id),
  semester TEXT, grade INTEGER, PRIMARY KEY (student_id, course_id, semester));
CREATE TABLE teaches (instr_id TEXT REFERENCES instructor(instr_id), course_id TEXT REFERENCES course(course_id),
  semester TEXT, PRIMARY KEY (instr_id, course_id, semester));
"""
SEMESTERS = ["2019F", "2020S", "2020F", "2021S", "2021F", "2022S"]


def fill_university(con: sqlite3.Connection, rng: random.Random) -> None:
    depts = [(w[:3].upper(), f"{w} Studies", rng.choice(WORDS) + " Hall", rng.randrange(100_000, 900_000, 5000))
             for w in WORDS[:rng.randint(5, 8)]]
    con.executemany("INSERT INTO department VALUES (?,?,?,?)", depts)
    codes = [d[0] for d in depts]
    n_i, n_c, n_s = rng.randint(12, 25), rng.randint(15, 30), rng.randint(40, 90)
    con.executemany("INSERT INTO instructor VALUES (?,?,?,?,?)",
                    [(_code("I", i), f"{rng.choice(WORDS)} {rng.choice(WORDS)}son", rng.choice(codes),
                      rng.randrange(40_000, 160_000, 1000), rng.randint(1990, 2021)) for i in range(n_i)])
    con.executemany("INSERT INTO course VALUES (?,?,?,?)",
                    [(_code("C", i), f"{rng.choice(WORDS)} {rng.choice(['I', 'II', 'Seminar', 'Lab'])}",
                      rng.choice(codes), rng.choice([1, 2, 3, 4, 5])) for i in range(n_c)])
    con.executemany("INSERT INTO student VALUES (?,?,?,?,?,?)",
                    [(_code("S", i), f"{rng.choice(WORDS)} {rng.choice(WORDS)}", rng.choice(codes), rng.randint(1, 5),
                      round(rng.uniform(1.5, 4.0), 2), rng.choice(CITIES)) for i in range(n_s)])
    enr = {(_code("S", rng.randrange(n_s)), _code("C", rng.randrange(n_c)), rng.choice(SEMESTERS))
           for _ in range(n_s * 4)}
    con.executemany("INSERT INTO enrollment VALUES (?,?,?,?)", [(*e, rng.randint(40, 100)) for e in sorted(enr)])
    tea = {(_code("I", rng.randrange(n_i)), _code("C", rng.randrange(n_c)), rng.choice(SEMESTERS)) for _ in range(n_c * 2)}
    con.executemany("INSERT INTO teaches VALUES (?,?,?)", sorted(tea))


RETAIL = """
CREATE TABLE country (code TEXT PRIMARY KEY, name TEXT NOT NULL, region TEXT);
CREATE TABLE store (store_code TEXT PRIMARY KEY, city TEXT, country_code TEXT REFERENCES country(code), opened INTEGER,
  floor_area INTEGER);
CREATE TABLE product (sku TEXT PRIMARY KEY, name TEXT NOT NULL, category TEXT, price REAL);
CREATE TABLE customer (cust_id TEXT PRIMARY KEY, name TEXT NOT NULL, country_code TEXT REFERENCES country(code),
  signup_year INTEGER, tier TEXT);
CREATE TABLE orders (order_id TEXT PRIMARY KEY, cust_id TEXT REFERENCES customer(cust_id),
  store_code TEXT REFERENCES store(store_code), order_date TEXT, status TEXT);
CREATE TABLE order_line (order_id TEXT REFERENCES orders(order_id), sku TEXT REFERENCES product(sku), qty INTEGER,
  unit_price REAL, PRIMARY KEY (order_id, sku));
"""
CATEGORIES = ["books", "garden", "kitchen", "music", "sports", "toys"]


def fill_retail(con: sqlite3.Connection, rng: random.Random) -> None:
    countries = COUNTRIES[:rng.randint(5, 8)]
    con.executemany("INSERT INTO country VALUES (?,?,?)", countries)
    ccodes = [c[0] for c in countries]
    n_st, n_p, n_cu, n_o = rng.randint(6, 14), rng.randint(20, 40), rng.randint(30, 70), rng.randint(80, 160)
    con.executemany("INSERT INTO store VALUES (?,?,?,?,?)",
                    [(_code("ST", i), rng.choice(CITIES), rng.choice(ccodes), rng.randint(1995, 2020),
                      rng.randrange(500, 5000, 50)) for i in range(n_st)])
    prices = {}
    rows = []
    for i in range(n_p):
        prices[_code("P", i)] = round(rng.uniform(2, 200), 2)
        rows.append((_code("P", i), f"{rng.choice(WORDS)} {rng.choice(['Set', 'Kit', 'Pack', 'Box'])}",
                     rng.choice(CATEGORIES), prices[_code("P", i)]))
    con.executemany("INSERT INTO product VALUES (?,?,?,?)", rows)
    con.executemany("INSERT INTO customer VALUES (?,?,?,?,?)",
                    [(_code("CU", i), f"{rng.choice(WORDS)} {rng.choice(WORDS)}", rng.choice(ccodes),
                      rng.randint(2010, 2022), rng.choice(["gold", "silver", "basic"])) for i in range(n_cu)])
    con.executemany("INSERT INTO orders VALUES (?,?,?,?,?)",
                    [(_code("O", i), _code("CU", rng.randrange(n_cu)), _code("ST", rng.randrange(n_st)),
                      _date(rng, 2018, 2022), rng.choice(["shipped", "shipped", "open", "returned"]))
                     for i in range(n_o)])
    lines = {(_code("O", rng.randrange(n_o)), _code("P", rng.randrange(n_p))) for _ in range(n_o * 3)}
    con.executemany("INSERT INTO order_line VALUES (?,?,?,?)",
                    [(o, p, rng.randint(1, 9), prices[p]) for o, p in sorted(lines)])


FLIGHTS = """
CREATE TABLE airport (iata TEXT PRIMARY KEY, city TEXT NOT NULL, country TEXT, elevation INTEGER);
CREATE TABLE airline (code TEXT PRIMARY KEY, name TEXT NOT NULL, country TEXT, founded INTEGER);
CREATE TABLE aircraft (tail TEXT PRIMARY KEY, model TEXT, airline_code TEXT REFERENCES airline(code), seats INTEGER);
CREATE TABLE route (route_no TEXT PRIMARY KEY, airline_code TEXT REFERENCES airline(code),
  src TEXT REFERENCES airport(iata), dst TEXT REFERENCES airport(iata), distance INTEGER);
CREATE TABLE departure (route_no TEXT REFERENCES route(route_no), dep_date TEXT, tail TEXT REFERENCES aircraft(tail),
  delay_min INTEGER, passengers INTEGER, PRIMARY KEY (route_no, dep_date));
CREATE TABLE crew (crew_id TEXT PRIMARY KEY, name TEXT NOT NULL, airline_code TEXT REFERENCES airline(code),
  role TEXT, hired_year INTEGER);
"""
MODELS = [("A320", 180), ("A321", 220), ("B737", 189), ("B787", 296), ("E190", 100), ("CRJ9", 90)]


def fill_flights(con: sqlite3.Connection, rng: random.Random) -> None:
    ports = [(c[:3].upper(), c, rng.choice(COUNTRIES)[1], rng.randint(0, 2500)) for c in CITIES[:rng.randint(7, 11)]]
    ports = list({p[0]: p for p in ports}.values())
    con.executemany("INSERT INTO airport VALUES (?,?,?,?)", ports)
    lines = [(w[:2].upper(), f"{w} Air", rng.choice(COUNTRIES)[1], rng.randint(1930, 2015))
             for w in WORDS[3:3 + rng.randint(4, 7)]]
    lines = list({a[0]: a for a in lines}.values())
    con.executemany("INSERT INTO airline VALUES (?,?,?,?)", lines)
    codes, iatas = [a[0] for a in lines], [p[0] for p in ports]
    n_ac, n_r = rng.randint(10, 25), rng.randint(15, 35)
    planes = []
    for i in range(n_ac):
        model, seats = rng.choice(MODELS)
        planes.append((f"N{100 + i}", model, rng.choice(codes), seats))
    con.executemany("INSERT INTO aircraft VALUES (?,?,?,?)", planes)
    routes = []
    for i in range(n_r):
        src, dst = rng.sample(iatas, 2)
        routes.append((f"R{i:03d}", rng.choice(codes), src, dst, rng.randrange(150, 6000, 10)))
    con.executemany("INSERT INTO route VALUES (?,?,?,?,?)", routes)
    deps = {(f"R{rng.randrange(n_r):03d}", _date(rng, 2021, 2022)) for _ in range(n_r * 5)}
    con.executemany("INSERT INTO departure VALUES (?,?,?,?,?)",
                    [(r, d, f"N{100 + rng.randrange(n_ac)}", max(0, int(rng.gauss(10, 25))), rng.randint(20, 300))
                     for r, d in sorted(deps)])
    con.executemany("INSERT INTO crew VALUES (?,?,?,?,?)",
                    [(_code("K", i), f"{rng.choice(WORDS)} {rng.choice(WORDS)}", rng.choice(codes),
                      rng.choice(["pilot", "copilot", "attendant", "attendant"]), rng.randint(1995, 2022))
                     for i in range(rng.randint(20, 50))])


SCHEMAS: dict[str, tuple[str, Callable[[sqlite3.Connection, random.Random], None]]] = {
    "university": (UNIVERSITY, fill_university), "retail": (RETAIL, fill_retail), "flights": (FLIGHTS, fill_flights)}


# -- golds: Spider-style questions, literals drawn from the pinned instance ----------------
def _pick(con: sqlite3.Connection, rng: random.Random, sql: str) -> Any:
    values = [r[0] for r in con.execute(sql) if r[0] is not None]
    return rng.choice(values)


def golds(db: str, con: sqlite3.Connection, rng: random.Random) -> list[str]:
    p = lambda sql: _pick(con, rng, sql)  # noqa: E731
    if db == "university":
        d, y, c = p("SELECT dept_code FROM department"), p("SELECT year FROM student"), p("SELECT home_city FROM student")
        s, h, g = p("SELECT salary FROM instructor"), p("SELECT hired_year FROM instructor"), p("SELECT grade FROM enrollment")
        sem, cr = p("SELECT semester FROM enrollment"), p("SELECT credits FROM course")
        return [
            "SELECT count(*) FROM student",
            f"SELECT name, gpa FROM student WHERE dept_code = '{d}' ORDER BY gpa DESC",
            f"SELECT count(*) FROM student WHERE year = {y} AND home_city = '{c}'",
            f"SELECT name FROM instructor WHERE salary > {s}",
            f"SELECT T2.name, count(*) FROM instructor AS T1 JOIN department AS T2 ON T1.dept_code = T2.dept_code "
            f"GROUP BY T2.name",
            f"SELECT T1.name FROM student AS T1 JOIN enrollment AS T2 ON T1.student_id = T2.student_id "
            f"WHERE T2.grade >= {g} AND T2.semester = '{sem}'",
            "SELECT dept_code, avg(salary) FROM instructor GROUP BY dept_code HAVING count(*) >= 3",
            "SELECT name FROM department ORDER BY budget DESC LIMIT 3",
            f"SELECT title FROM course WHERE credits BETWEEN {cr} AND {cr + 1} AND dept_code = '{d}'",
            "SELECT T1.title, count(*) FROM course AS T1 JOIN enrollment AS T2 ON T1.course_id = T2.course_id "
            "GROUP BY T1.course_id, T1.title ORDER BY count(*) DESC LIMIT 5",
            f"SELECT name FROM instructor WHERE hired_year < {h} AND dept_code IN (SELECT dept_code FROM department "
            f"WHERE budget > 300000)",
            "SELECT T3.name, T1.title FROM course AS T1 JOIN teaches AS T2 ON T1.course_id = T2.course_id "
            f"JOIN instructor AS T3 ON T2.instr_id = T3.instr_id WHERE T2.semester = '{sem}' AND T1.credits >= {cr}",
            "SELECT max(gpa), min(gpa) FROM student WHERE year = 4",
            "SELECT home_city, count(*) FROM student GROUP BY home_city HAVING count(*) > 5 ORDER BY home_city",
            "SELECT name FROM student WHERE student_id NOT IN (SELECT student_id FROM enrollment)",
            "SELECT T1.name, sum(T3.credits) FROM student AS T1 JOIN enrollment AS T2 ON T1.student_id = T2.student_id "
            f"JOIN course AS T3 ON T2.course_id = T3.course_id WHERE T2.grade > {g} GROUP BY T1.student_id, T1.name",
            "SELECT count(DISTINCT course_id) FROM enrollment WHERE grade < 60",
            "SELECT building, sum(budget) FROM department GROUP BY building ORDER BY sum(budget) DESC",
            "SELECT avg(T1.gpa) FROM student AS T1 JOIN department AS T2 ON T1.dept_code = T2.dept_code "
            f"WHERE T2.budget >= {p('SELECT budget FROM department')}",
            "SELECT name, salary FROM instructor WHERE salary > (SELECT avg(salary) FROM instructor) ORDER BY salary",
        ]
    if db == "retail":
        cat, cc, yr = p("SELECT category FROM product"), p("SELECT code FROM country"), p("SELECT signup_year FROM customer")
        pr, od, q = p("SELECT price FROM product"), p("SELECT order_date FROM orders"), p("SELECT qty FROM order_line")
        op, tier = p("SELECT opened FROM store"), p("SELECT tier FROM customer")
        return [
            f"SELECT name, price FROM product WHERE category = '{cat}' ORDER BY price",
            f"SELECT count(*) FROM customer WHERE country_code = '{cc}'",
            f"SELECT name FROM customer WHERE signup_year > {yr} AND tier = '{tier}'",
            f"SELECT count(*) FROM product WHERE price < {pr}",
            "SELECT T2.name, count(*) FROM store AS T1 JOIN country AS T2 ON T1.country_code = T2.code GROUP BY T2.name",
            f"SELECT order_id FROM orders WHERE order_date >= '{od}' AND status = 'shipped'",
            "SELECT category, avg(price) FROM product GROUP BY category HAVING count(*) >= 4",
            "SELECT T1.name, sum(T2.qty) FROM product AS T1 JOIN order_line AS T2 ON T1.sku = T2.sku "
            "GROUP BY T1.sku, T1.name ORDER BY sum(T2.qty) DESC LIMIT 5",
            "SELECT T3.name, count(*) FROM orders AS T1 JOIN customer AS T2 ON T1.cust_id = T2.cust_id "
            f"JOIN country AS T3 ON T2.country_code = T3.code WHERE T1.status = 'returned' GROUP BY T3.name",
            f"SELECT city FROM store WHERE opened BETWEEN {op} AND {op + 5}",
            "SELECT name FROM customer WHERE cust_id NOT IN (SELECT cust_id FROM orders)",
            f"SELECT DISTINCT T1.category FROM product AS T1 JOIN order_line AS T2 ON T1.sku = T2.sku WHERE T2.qty >= {q}",
            "SELECT max(price), min(price), avg(price) FROM product",
            "SELECT region, count(*) FROM country GROUP BY region ORDER BY count(*) DESC",
            "SELECT T1.order_id, sum(T2.qty * T2.unit_price) FROM orders AS T1 JOIN order_line AS T2 "
            f"ON T1.order_id = T2.order_id WHERE T1.order_date < '{od}' GROUP BY T1.order_id HAVING sum(T2.qty) > 10",
            "SELECT store_code FROM store WHERE floor_area > (SELECT avg(floor_area) FROM store) ORDER BY store_code",
            f"SELECT count(DISTINCT T1.cust_id) FROM orders AS T1 JOIN store AS T2 ON T1.store_code = T2.store_code "
            f"WHERE T2.country_code = '{cc}'",
            "SELECT tier, count(*) FROM customer GROUP BY tier",
            f"SELECT name FROM product WHERE category IN ('{cat}', 'toys') AND price > {pr}",
            "SELECT city, max(floor_area) FROM store GROUP BY city ORDER BY max(floor_area) DESC LIMIT 3",
        ]
    src, al = p("SELECT iata FROM airport"), p("SELECT code FROM airline")
    dist, dl, pax = p("SELECT distance FROM route"), p("SELECT delay_min FROM departure"), p("SELECT passengers FROM departure")
    dd, hy = p("SELECT dep_date FROM departure"), p("SELECT hired_year FROM crew")
    return [
        "SELECT count(*) FROM airport",
        f"SELECT route_no, distance FROM route WHERE src = '{src}' ORDER BY distance DESC",
        f"SELECT count(*) FROM route WHERE airline_code = '{al}' AND distance > {dist}",
        "SELECT T2.name, count(*) FROM route AS T1 JOIN airline AS T2 ON T1.airline_code = T2.code GROUP BY T2.name",
        f"SELECT route_no, dep_date FROM departure WHERE delay_min > {dl} AND passengers < {pax}",
        "SELECT model, avg(seats) FROM aircraft GROUP BY model HAVING count(*) >= 2",
        "SELECT T3.city, count(*) FROM departure AS T1 JOIN route AS T2 ON T1.route_no = T2.route_no "
        "JOIN airport AS T3 ON T2.dst = T3.iata GROUP BY T3.city ORDER BY count(*) DESC LIMIT 3",
        f"SELECT name FROM crew WHERE role = 'pilot' AND hired_year >= {hy}",
        "SELECT name FROM airline WHERE code NOT IN (SELECT airline_code FROM aircraft)",
        f"SELECT sum(passengers) FROM departure WHERE dep_date BETWEEN '{dd}' AND '2022-12-31'",
        "SELECT T1.tail, T1.model FROM aircraft AS T1 JOIN departure AS T2 ON T1.tail = T2.tail "
        f"WHERE T2.delay_min >= {dl} GROUP BY T1.tail, T1.model HAVING count(*) > 1",
        "SELECT max(distance), min(distance) FROM route",
        "SELECT city FROM airport WHERE elevation > (SELECT avg(elevation) FROM airport) ORDER BY city",
        "SELECT T2.name, avg(T1.delay_min) FROM departure AS T1 JOIN route AS T3 ON T1.route_no = T3.route_no "
        "JOIN airline AS T2 ON T3.airline_code = T2.code GROUP BY T2.name",
        "SELECT role, count(*) FROM crew GROUP BY role ORDER BY role",
        f"SELECT count(DISTINCT tail) FROM departure WHERE passengers > {pax}",
        "SELECT route_no FROM route WHERE distance > 1000 AND src IN (SELECT iata FROM airport WHERE elevation < 500)",
        "SELECT country, count(*) FROM airline GROUP BY country HAVING count(*) > 1",
        "SELECT route_no, passengers FROM departure ORDER BY passengers DESC, route_no LIMIT 5",
        f"SELECT T1.name FROM crew AS T1 JOIN airline AS T2 ON T1.airline_code = T2.code WHERE T2.founded < 1990 "
        f"AND T1.hired_year > {hy}",
    ]


def build(out: Path, seed: int, *, golds_seed: int | None = None, schema_only: bool = False, copies: int = 3) -> Path:
    """``copies`` databases of every schema under ``out/database`` (``<schema>_<n>``, each
    its own data and golds), from ``seed``; unless
    ``schema_only``, the Spider layout's files and golds drawn with ``golds_seed``."""
    shutil.rmtree(out, ignore_errors=True)
    dev, tables = [], []
    for schema, (ddl, fill) in sorted(SCHEMAS.items()):
        for copy in range(1, copies + 1):
            db = f"{schema}_{copy}"
            path = out / "database" / db / f"{db}.sqlite"
            path.parent.mkdir(parents=True)
            con = sqlite3.connect(path)
            con.executescript(ddl)
            fill(con, random.Random(f"{seed}:{db}"))
            con.commit()
            if not schema_only:
                tables.append({"db_id": db, "table_names_original": [r[0] for r in con.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]})
                for g in golds(schema, con, random.Random(f"{seed if golds_seed is None else golds_seed}:{db}:golds")):
                    dev.append({"db_id": db, "question": f"({db}) {g[:60]}", "query": g})
            con.close()
    if not schema_only:
        (out / "dev.json").write_text(json.dumps(dev, indent=1) + "\n")
        (out / "tables.json").write_text(json.dumps(tables, indent=1) + "\n")
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--golds-seed", type=int, default=None)
    ap.add_argument("--schema-only", action="store_true", help="databases only (a ground-truth instance)")
    ap.add_argument("--copies", type=int, default=3, help="databases per schema (default 3)")
    args = ap.parse_args(argv)
    print(build(args.out, args.seed, golds_seed=args.golds_seed, schema_only=args.schema_only, copies=args.copies))


if __name__ == "__main__":
    main()
