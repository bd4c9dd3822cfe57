"""TPC-H and TPC-DS instances for the coincidence bench, built offline.

DuckDB 2.x cannot load the tpch/tpcds extensions without the network; the package index
has ``duckdb-extension-tpch`` / ``duckdb-extension-tpcds`` 1.5.5 for DuckDB 1.5.5. So a
*separate* interpreter with duckdb==1.5.5 and those packages (``--dd15-python``, e.g. a
venv made with ``pip install duckdb==1.5.5 duckdb-extension-tpcds==1.5.5
duckdb-extension-tpch==1.5.5``) runs dbgen/dsdgen, writes each table as Parquet plus its
``CREATE TABLE`` statement and the official queries; this interpreter's DuckDB then
creates the tables from those statements (declared keys kept) and loads the Parquet.
What is pinned is the content (the generator, its version and the scale factor), never
the bytes of a file.

    python bench/vbench/tpc_data.py tpcds --sf 0.01 --out /work/vbench-data/tpcds-sf0.01.duckdb \\
        --dd15-python /tmp/venv-vbench-dd15/bin/python

Writes ``<out>`` and ``<out without .duckdb>.queries.json``."""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import duckdb

_CHILD = r"""
import sys, os, glob, json
family, sf, outdir = sys.argv[1], float(sys.argv[2]), sys.argv[3]
import duckdb
mod = __import__("duckdb_extension_" + family)
root = os.path.join(os.path.dirname(mod.__file__), "extensions")
want = os.path.join(root, "v" + duckdb.__version__, family + ".duckdb_extension")
found = [want] if os.path.exists(want) else sorted(glob.glob(os.path.join(root, "*", family + ".duckdb_extension")))
con = duckdb.connect()
con.execute("SET autoinstall_known_extensions = false")
con.execute("SET autoload_known_extensions = false")
con.execute("LOAD '" + found[0].replace("'", "''") + "'")
con.execute(("CALL dbgen(sf = %r)" if family == "tpch" else "CALL dsdgen(sf = %r)") % sf)
tables = []
for name, ddl in con.execute("SELECT table_name, sql FROM duckdb_tables() ORDER BY table_name").fetchall():
    path = os.path.join(outdir, name + ".parquet")
    con.execute("COPY \"%s\" TO '%s' (FORMAT parquet)" % (name, path))
    tables.append({"name": name, "ddl": ddl, "rows": con.execute('SELECT count(*) FROM "%s"' % name).fetchone()[0]})
fn = "tpch_queries" if family == "tpch" else "tpcds_queries"
queries = [{"query_nr": int(n), "query": q} for n, q in con.execute("SELECT query_nr, query FROM %s() ORDER BY query_nr" % fn).fetchall()]
json.dump({"generator": "duckdb " + duckdb.__version__ + " " + family + " extension", "scale_factor": sf,
           "tables": tables, "queries": queries}, open(os.path.join(outdir, "meta.json"), "w"), indent=1)
"""


def build(family: str, sf: float, out: Path, dd15_python: str) -> Path:
    out = out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f"vbench-{family}-", dir=out.parent) as tmp:
        subprocess.run([dd15_python, "-I", "-c", _CHILD, family, repr(sf), tmp], check=True)
        meta = json.loads((Path(tmp) / "meta.json").read_text())
        partial = out.with_name(f".{out.name}.partial")
        partial.unlink(missing_ok=True)
        con = duckdb.connect(str(partial))
        for t in meta["tables"]:
            con.execute(t["ddl"])
            con.execute(f'INSERT INTO "{t["name"]}" SELECT * FROM read_parquet(?)', [str(Path(tmp) / f'{t["name"]}.parquet')])
            got = con.execute(f'SELECT count(*) FROM "{t["name"]}"').fetchone()[0]
            if got != t["rows"]:
                raise SystemExit(f"{t['name']}: loaded {got} rows of {t['rows']}")
        con.execute("CHECKPOINT")
        con.close()
        os.replace(partial, out)
    qfile = out.with_name(out.name.removesuffix(".duckdb") + ".queries.json")
    qfile.write_text(json.dumps({"family": family, "scale_factor": sf, "generator": meta["generator"],
                                 "row_counts": {t["name"]: t["rows"] for t in meta["tables"]},
                                 "queries": meta["queries"]}, indent=1) + "\n")
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("family", choices=("tpch", "tpcds"))
    ap.add_argument("--sf", type=float, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--dd15-python", default=shutil.which("python-dd15") or "/tmp/venv-vbench-dd15/bin/python",
                    help="an interpreter with duckdb==1.5.5 and duckdb-extension-<family>==1.5.5")
    args = ap.parse_args(argv)
    print(build(args.family, args.sf, args.out, args.dd15_python))


if __name__ == "__main__":
    sys.exit(main())
