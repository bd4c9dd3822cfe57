"""Build a small TPC-H DuckDB database and the 22 official queries, offline-friendly.

What it is for: the TPC-H acceptance material of pytest-sqleval needs a pinned
database that the grader (DuckDB 2.x) opens read-only. DuckDB 2.x cannot load the
``tpch`` extension without network, but the PyPI package ``duckdb-extension-tpch``
ships the extension binary for DuckDB 1.5.x, and a database file written by 1.5
opens read-only in 2.x. So this script:

1. ``pip install --target <cache>/duckdb15 "duckdb==1.5.*" duckdb-extension-tpch``
   (once; skipped when the directory is already complete; the extension wheel is pinned
   and itself pins the exact DuckDB version it was built for);
2. runs an *isolated* child interpreter (``-I -S``: no user site, no venv
   site-packages, no PYTHON* variables) whose ``sys.path`` starts with that
   directory, so the venv's DuckDB 2.x is never imported. The child LOADs the
   extension from the wheel's file path, runs ``CALL dbgen(sf=...)``, dumps
   ``tpch_queries()`` to JSON, CHECKPOINTs and closes;
3. publishes both outputs by atomic rename, so a crash never leaves a half file.

Idempotent: when the database and the queries JSON exist and the JSON records the
same scale factor, nothing is done. A file lock on the cache directory makes
concurrent callers (e.g. pytest-xdist workers) safe.

Stdlib only. Usage::

    python tests/tpch/make_tpch.py                        # sf=0.01, default paths
    python tests/tpch/make_tpch.py --sf 0.1 --out /tmp/tpch.duckdb \\
        --queries /tmp/tpch_queries.json --cache-dir /tmp/cache
    python tests/tpch/make_tpch.py --verify               # also check with the running DuckDB

Prints the database path on stdout as its last line (handy for ``$(...)``).
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_CACHE = REPO_ROOT / ".sqleval-cache" / "tpch"
DUCKDB_SPEC = "duckdb==1.5.*"
TPCH_EXT_SPEC = "duckdb-extension-tpch==1.5.5"  # pinned: it fixes the DuckDB 1.5 patch level too
QUERIES_FORMAT = 1

# Runs inside the isolated DuckDB 1.5 interpreter. argv: libdir, db_tmp, json_tmp, sf
_CHILD = r"""
import sys
libdir, db_path, json_path, sf = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
sys.path.insert(0, libdir)
import glob, json, os
import duckdb
import duckdb_extension_tpch
if not duckdb.__file__.startswith(libdir):
    sys.exit("wrong duckdb imported: " + duckdb.__file__)
ext_root = os.path.join(os.path.dirname(duckdb_extension_tpch.__file__), "extensions")
want = os.path.join(ext_root, "v" + duckdb.__version__, "tpch.duckdb_extension")
found = [want] if os.path.exists(want) else sorted(glob.glob(os.path.join(ext_root, "*", "tpch.duckdb_extension")))
if not found:
    sys.exit("no tpch.duckdb_extension under " + ext_root)
con = duckdb.connect(db_path)
con.execute("SET autoinstall_known_extensions = false")
con.execute("SET autoload_known_extensions = false")
con.execute("LOAD '" + found[0].replace("'", "''") + "'")
con.execute("CALL dbgen(sf = " + repr(sf) + ")")
queries = [{"query_nr": int(n), "query": q} for n, q in
           con.execute("SELECT query_nr, query FROM tpch_queries() ORDER BY query_nr").fetchall()]
counts = {t: con.execute('SELECT count(*) FROM "' + t + '"').fetchone()[0] for (t,) in
          con.execute("SELECT table_name FROM duckdb_tables() ORDER BY table_name").fetchall()}
con.execute("CHECKPOINT")
con.close()
with open(json_path, "w", encoding="utf-8") as fh:
    json.dump({"format": %(fmt)d, "scale_factor": sf, "generator": "duckdb " + duckdb.__version__ + " tpch dbgen",
               "extension": os.path.basename(os.path.dirname(found[0])), "row_counts": counts,
               "queries": queries}, fh, indent=2)
    fh.write("\n")
""" % {"fmt": QUERIES_FORMAT}


def log(msg: str) -> None:
    print(f"[make_tpch] {msg}", file=sys.stderr, flush=True)


@contextlib.contextmanager
def locked(cache_dir: Path) -> Iterator[None]:
    """Serialise builders that share a cache directory."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    with open(cache_dir / ".lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _child_cmd(libdir: Path, code: str, *args: str) -> list[str]:
    return [sys.executable, "-I", "-S", "-c", code, str(libdir), *args]


def ensure_duckdb15(cache_dir: Path) -> Path:
    """Install DuckDB 1.5 + the tpch extension wheel into ``<cache>/duckdb15`` once."""
    libdir = cache_dir / "duckdb15"
    probe = (
        "import sys; sys.path.insert(0, sys.argv[1]); import duckdb, duckdb_extension_tpch; "
        "assert duckdb.__file__.startswith(sys.argv[1]) and duckdb.__version__.startswith('1.5.')"
    )
    stamp = f"{DUCKDB_SPEC} {TPCH_EXT_SPEC}\n"
    if (libdir / ".complete").exists() and (libdir / ".complete").read_text() == stamp:
        if subprocess.run(_child_cmd(libdir, probe), capture_output=True).returncode == 0:
            return libdir
        log(f"{libdir} is broken; reinstalling")
    tmp = cache_dir / f"duckdb15.tmp{os.getpid()}"
    subprocess.run(["rm", "-rf", str(tmp)], check=True)
    log(f"pip install --target {libdir} {DUCKDB_SPEC} {TPCH_EXT_SPEC}")
    started = time.monotonic()
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
         "--no-input", "--target", str(tmp), DUCKDB_SPEC, TPCH_EXT_SPEC],
        check=True,
    )
    if subprocess.run(_child_cmd(tmp, probe)).returncode != 0:
        raise SystemExit(f"installed {tmp} but DuckDB 1.5 + tpch extension do not import from it")
    (tmp / ".complete").write_text(stamp)
    subprocess.run(["rm", "-rf", str(libdir)], check=True)
    tmp.rename(libdir)
    log(f"installed in {time.monotonic() - started:.1f}s")
    return libdir


def _up_to_date(out: Path, queries: Path, sf: float) -> bool:
    if not (out.exists() and queries.exists()):
        return False
    try:
        meta = json.loads(queries.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return (
        isinstance(meta, dict)
        and meta.get("format") == QUERIES_FORMAT
        and meta.get("scale_factor") == sf
        and len(meta.get("queries", [])) == 22
    )


def build(sf: float, out: Path, queries: Path, cache_dir: Path, force: bool = False) -> bool:
    """Make sure ``out`` and ``queries`` exist for ``sf``; return True when work was done."""
    out, queries = out.resolve(), queries.resolve()
    with locked(cache_dir):
        if not force and _up_to_date(out, queries, sf):
            log(f"up to date: {out} (sf={sf})")
            return False
        libdir = ensure_duckdb15(cache_dir)
        out.parent.mkdir(parents=True, exist_ok=True)
        queries.parent.mkdir(parents=True, exist_ok=True)
        db_tmp = out.with_name(f".{out.name}.tmp{os.getpid()}")
        json_tmp = queries.with_name(f".{queries.name}.tmp{os.getpid()}")
        for p in (db_tmp, Path(str(db_tmp) + ".wal"), json_tmp):
            p.unlink(missing_ok=True)
        log(f"dbgen sf={sf} -> {out}")
        started = time.monotonic()
        try:
            subprocess.run(_child_cmd(libdir, _CHILD, str(db_tmp), str(json_tmp), repr(sf)), check=True)
            if Path(str(db_tmp) + ".wal").exists():
                raise SystemExit(f"{db_tmp}.wal left behind after CHECKPOINT")
            # Database first: a JSON without its database is never "up to date".
            Path(str(out) + ".wal").unlink(missing_ok=True)
            os.replace(db_tmp, out)
            os.replace(json_tmp, queries)
        finally:
            for p in (db_tmp, Path(str(db_tmp) + ".wal"), json_tmp):
                p.unlink(missing_ok=True)
        log(f"built in {time.monotonic() - started:.1f}s ({out.stat().st_size / 1e6:.1f} MB)")
        return True


def verify(out: Path, queries: Path) -> None:
    """Open the database read-only with the *running* interpreter's DuckDB and run all 22 queries."""
    import duckdb  # the project's DuckDB (2.x in the venv)

    meta = json.loads(queries.read_text(encoding="utf-8"))
    con = duckdb.connect(str(out), read_only=True)
    try:
        for q in meta["queries"]:
            started = time.monotonic()
            rows = con.execute(q["query"]).fetchall()
            log(f"Q{q['query_nr']:02d}: {len(rows):5d} rows in {time.monotonic() - started:.3f}s "
                f"(duckdb {duckdb.__version__})")
    finally:
        con.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sf", type=float, default=0.01, help="TPC-H scale factor (default 0.01)")
    ap.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE,
                    help=f"where DuckDB 1.5 is installed (default {DEFAULT_CACHE})")
    ap.add_argument("--out", type=Path, default=None,
                    help="database path (default <cache-dir>/tpch-sf<SF>.duckdb)")
    ap.add_argument("--queries", type=Path, default=None,
                    help="queries JSON path (default <out without .duckdb>.queries.json)")
    ap.add_argument("--force", action="store_true", help="rebuild even when outputs exist")
    ap.add_argument("--verify", action="store_true",
                    help="open the result read-only with this interpreter's DuckDB and run all 22 queries")
    args = ap.parse_args(argv)
    if args.sf <= 0:
        ap.error("--sf must be positive")
    cache_dir = args.cache_dir.resolve()
    out = args.out or cache_dir / f"tpch-sf{args.sf:g}.duckdb"
    queries = args.queries or out.with_name(out.name.removesuffix(".duckdb") + ".queries.json")
    build(args.sf, out, queries, cache_dir, force=args.force)
    if args.verify:
        verify(out.resolve(), queries.resolve())
    print(out.resolve())
    return 0


if __name__ == "__main__":
    sys.exit(main())
