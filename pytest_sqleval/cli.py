"""``python -m pytest_sqleval``: check a suite, hash a database, reprint a summary.

Grading itself runs under pytest; these are the chores around it."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .errors import SqlevalError


def _validate(args: argparse.Namespace) -> int:
    from .cases import MANIFEST_NAME, load_manifest, read_cases
    from .engines.build import ensure_database
    path = Path(args.suite)
    manifest = load_manifest(path / MANIFEST_NAME if path.is_dir() else path)
    cases = read_cases(manifest.questions, manifest.name)
    built = ensure_database(manifest.database, manifest.build)
    print(f"suite {manifest.name}: {len(cases)} cases in {manifest.questions}; database {manifest.database}"
          f"{' (built now)' if built else ''}; dialect {manifest.dialect}")
    return 0


def _hash(args: argparse.Namespace) -> int:
    from .cases import Limits
    from .engines import open_sandbox
    db = open_sandbox(args.database, Limits())
    try:
        print(db.content_hash())
    finally:
        db.close()
    return 0


def _summary(args: argparse.Namespace) -> int:
    from .reports.summary import summarize
    from .reports.terminal import summary_lines
    results = Path(args.results)
    path = results / "results.jsonl" if results.is_dir() else results
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    for line in summary_lines(summarize(records)):
        print(line)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pytest_sqleval", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("validate", help="check a suite's manifest and questions; build its database if needed")
    p.add_argument("suite", help="suite folder or its sqleval.toml")
    p.set_defaults(func=_validate)
    p = sub.add_parser("hash", help="print a DuckDB database's content hash (computed in SQL)")
    p.add_argument("database")
    p.set_defaults(func=_hash)
    p = sub.add_parser("summary", help="reprint the summary of a results.jsonl (or its folder)")
    p.add_argument("results", nargs="?", default="sqleval-results")
    p.set_defaults(func=_summary)
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (SqlevalError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
