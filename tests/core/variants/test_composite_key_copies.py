"""A copy moved to another parent keeps the rest of its composite key where the moved key is
new already (issue 31, ``CloneWriter._new_keys_by``).

Spider-style ``teaches (instr_id, course_id, semester)`` has no column outside its references
but ``semester``; a copy of a teaching took a fresh semester (``'2020F#30'``) whatever it was
moved to, and so failed the gold's ``semester = '2020F'``: no witness of ``credits >= 4`` was
ever written, and a dropped ``credits >= 4`` (or ``4 -> 3``) passed every variant (held-out
Spider-style seed 1027, ``university_1``). A teaching moved to another course is a new key
with its own semester. (On this small copy other witnesses catch both near-misses too: the
end-to-end cases guard them; the writer's own test fails without the change.)"""
from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.core.variants.conftest import assert_caught_beside_a_rewrite

GOLD = ("SELECT T3.name, T1.title FROM course AS T1 JOIN teaches AS T2 ON T1.course_id = T2.course_id JOIN "
        "instructor AS T3 ON T2.instr_id = T3.instr_id WHERE T2.semester = '2020F' AND T1.credits >= 4")


def make_university(path: Path) -> None:
    """Spider-style ``university_1`` in small: 15 courses of 1 to 5 credits in 6 departments,
    30 teachings (the two in 2020F of one 5-credit course), 200 enrollments."""
    con = sqlite3.connect(path)
    con.executescript("""
        CREATE TABLE department (dept_code TEXT PRIMARY KEY, name TEXT NOT NULL, budget REAL);
        CREATE TABLE instructor (instr_id TEXT PRIMARY KEY, name TEXT NOT NULL, dept_code TEXT REFERENCES
            department(dept_code), salary INTEGER);
        CREATE TABLE course (course_id TEXT PRIMARY KEY, title TEXT NOT NULL, dept_code TEXT REFERENCES
            department(dept_code), credits INTEGER);
        CREATE TABLE student (student_id TEXT PRIMARY KEY, name TEXT NOT NULL, dept_code TEXT REFERENCES
            department(dept_code));
        CREATE TABLE enrollment (student_id TEXT REFERENCES student(student_id), course_id TEXT REFERENCES
            course(course_id), semester TEXT, grade INTEGER, PRIMARY KEY (student_id, course_id, semester));
        CREATE TABLE teaches (instr_id TEXT REFERENCES instructor(instr_id), course_id TEXT REFERENCES
            course(course_id), semester TEXT, PRIMARY KEY (instr_id, course_id, semester));
    """)
    depts = ["AMB", "BIR", "CED", "DEL", "EMB", "FJO"]
    con.executemany("INSERT INTO department VALUES (?, ?, ?)", [(d, f"{d} Studies", 300000.0 + 5000 * i)
                                                                 for i, d in enumerate(depts)])
    con.executemany("INSERT INTO instructor VALUES (?, ?, ?, ?)",
                    [(f"I{i:03}", f"Teacher {i}", depts[i % 6], 50000 + 1000 * i) for i in range(13)])
    credits = [5, 5, 4, 5, 1, 4, 4, 1, 1, 4, 1, 2, 3, 5, 1]
    con.executemany("INSERT INTO course VALUES (?, ?, ?, ?)",
                    [(f"C{i:03}", f"Course {i}", depts[(i * 5) % 6], c) for i, c in enumerate(credits)])
    con.executemany("INSERT INTO student VALUES (?, ?, ?)", [(f"S{i:03}", f"Student {i}", depts[i % 6])
                                                            for i in range(56)])
    semesters = ["2019F", "2020S", "2021S", "2021F", "2022S"]
    con.executemany("INSERT INTO enrollment VALUES (?, ?, ?, ?)", sorted(
        {(f"S{i % 56:03}", f"C{(i * 7) % 15:03}", semesters[i % 5], 50 + i % 50) for i in range(200)}))
    rows = {(f"I{i % 13:03}", f"C{(i * 7) % 15:03}", semesters[i % 5]) for i in range(28)}
    rows |= {("I003", "C003", "2020F"), ("I009", "C003", "2020F")}
    con.executemany("INSERT INTO teaches VALUES (?, ?, ?)", sorted(rows))
    con.commit()
    con.close()


def test_a_copy_moved_onto_a_new_key_keeps_its_semester(tmp_path: Path) -> None:
    """The writer itself: moved to a course the instructor never taught, the copy keeps
    ``'2020F'``; moved onto a key that exists, it takes a fresh semester as before."""
    from pytest_sqleval.core.variants.clones import CloneWriter
    from pytest_sqleval.core.variants.constraints import observe_constraints
    path = tmp_path / "university.sqlite"
    make_university(path)
    constraints = observe_constraints(path)
    con = sqlite3.connect(path)
    try:
        writer = CloneWriter(con, "sqlite", constraints.tables, list(constraints.dependencies),
                             lambda sql, params: con.execute(sql, params).fetchall())
        (rowid,) = con.execute("SELECT rowid FROM teaches WHERE instr_id = 'I003' AND semester = '2020F'").fetchone()
        taught = {r[0] for r in con.execute("SELECT course_id FROM teaches WHERE instr_id = 'I003'")}
        other = min({f"C{i:03}" for i in range(15)} - taught)
        assert writer.clone("teaches", rowid, {"course_id": other}) is not None
        assert con.execute("SELECT semester FROM teaches WHERE instr_id = 'I003' AND course_id = ?",
                           [other]).fetchall() == [("2020F",)]
        con.execute("INSERT INTO teaches VALUES ('I003', 'C014', '2020F')")
        made = writer.clone("teaches", rowid, {"course_id": "C014"})
        assert made is not None and made["semester"] not in ("2020F", None)
    finally:
        con.close()


@pytest.mark.parametrize("wrong", [GOLD.replace(" AND T1.credits >= 4", ""), GOLD.replace(">= 4", ">= 3")],
                         ids=["dropped", "moved-bound"])
def test_a_teaching_moved_to_a_course_of_fewer_credits_keeps_its_semester(tmp_path: Path, wrong: str) -> None:
    path = tmp_path / "university.sqlite"
    make_university(path)
    right = GOLD.replace("T1.credits >= 4", "NOT T1.credits < 4")
    assert_caught_beside_a_rewrite(path, tmp_path, GOLD, wrong, right)
