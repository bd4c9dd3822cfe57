"""The small singer/concert database built the same way on DuckDB, SQLite and PostgreSQL,
and a throwaway PostgreSQL server (initdb + pg_ctl from Debian's ``postgresql`` package, in
a temporary directory on a free port, as the ``postgres`` user when run as root). The
fixtures that serve them are in tests/core/conftest.py."""
from __future__ import annotations

import glob
import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

# -- one small database, built the same way on every engine -------------------------------
SINGERS = [(1, "Joe", "France", 52, 1.1), (2, "Ann", "France", 43, 2.2), (3, "Bo", "US", 30, 0.1),
           (4, "Cy", "US", 30, 0.2), (5, "Di", "UK", 25, None)]
CONCERTS = [(1, 1, "2014"), (2, 1, "2015"), (3, 2, "2014"), (4, 3, "2015")]
FLOAT = {"duckdb": "DOUBLE", "sqlite": "REAL", "postgres": "DOUBLE PRECISION"}


def ddl(engine: str) -> list[str]:
    return [f"CREATE TABLE singer (singer_id INTEGER PRIMARY KEY, name TEXT, country TEXT, age INTEGER, "
            f"net_worth {FLOAT[engine]})",
            "CREATE TABLE concert (concert_id INTEGER, singer_id INTEGER, year TEXT)",
            "CREATE VIEW french AS SELECT name FROM singer WHERE country = 'France'"]


def fill(con: Any, engine: str, mark: str = "?") -> None:
    cur = con.cursor()
    for stmt in ddl(engine):
        cur.execute(stmt)
    cur.executemany(f"INSERT INTO singer VALUES ({', '.join([mark] * 5)})", SINGERS)
    cur.executemany(f"INSERT INTO concert VALUES ({', '.join([mark] * 3)})", CONCERTS)
    con.commit()


def build_sqlite(path: Path) -> Path:
    con = sqlite3.connect(path)
    fill(con, "sqlite")
    con.close()
    return path


def build_duckdb(path: Path) -> Path:
    import duckdb
    con = duckdb.connect(str(path))
    fill(con, "duckdb")
    con.close()
    return path


# -- a throwaway PostgreSQL server --------------------------------------------------------
PG_BINS = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))


WATCHDOG = """
import json, os, shutil, subprocess, sys, time
pid, stop, root = int(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3]
while os.path.isdir(root):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        subprocess.run(stop, capture_output=True)
        shutil.rmtree(root, ignore_errors=True)
        break
    time.sleep(1)
"""


class PgServer:
    """initdb + pg_ctl in a temporary directory; ``admin`` is the superuser, ``grader``
    a login role that may only SELECT."""

    def __init__(self) -> None:
        self.bindir = Path(PG_BINS[-1]).parent
        self.root = Path(tempfile.mkdtemp(prefix="sqleval-pg-"))
        self.as_user: list[str] = []
        if os.geteuid() == 0:  # initdb refuses to run as root
            import pwd
            try:
                pw = pwd.getpwnam("postgres")
            except KeyError:
                pytest.skip("running as root and there is no 'postgres' user to run initdb as")
            os.chown(self.root, pw.pw_uid, pw.pw_gid)
            self.as_user = ["runuser", "-u", "postgres", "--"]
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        data = self.root / "data"
        # a run killed before its teardown must not leave the server (or its directory) behind
        subprocess.Popen([sys.executable, "-c", WATCHDOG, str(os.getpid()), json.dumps(
            [*self.as_user, str(self.bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"]),
            str(self.root)], start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        self._run("initdb", "-D", str(data), "-U", "admin", "--auth=trust", "-E", "UTF8", "--no-locale", "-N")
        self._run("pg_ctl", "-D", str(data), "-l", str(self.root / "log"), "-w", "-t", "60", "-o",
                  f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off "
                  f"-c full_page_writes=off -c synchronous_commit=off", "start")
        self.data = data

    def _run(self, tool: str, *args: str) -> None:
        proc = subprocess.run([*self.as_user, str(self.bindir / tool), *args], capture_output=True, text=True,
                              timeout=120)
        if proc.returncode != 0:
            raise RuntimeError(f"{tool} failed: {proc.stdout}\n{proc.stderr}")

    def url(self, db: str = "postgres", user: str = "admin", query: str = "") -> str:
        return f"postgresql://{user}@127.0.0.1:{self.port}/{db}" + (f"?{query}" if query else "")

    def create_db(self, name: str) -> str:
        import psycopg
        with psycopg.connect(self.url(), autocommit=True) as con:
            con.execute(f'CREATE DATABASE "{name}"')
            con.execute("DO $$BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'grader') THEN "
                        "CREATE ROLE grader LOGIN; END IF; END$$")
        with psycopg.connect(self.url(name)) as con:
            fill(con, "postgres", "%s")
            con.execute("GRANT SELECT ON ALL TABLES IN SCHEMA public TO grader")
        return self.url(name, "grader")

    def stop(self) -> None:
        try:
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)
