"""``python -m pytest_sqleval``: build the Vantage warehouse, validate a suite and freeze
its gold answers, hash a database, reprint a summary, view a run's report, reproduce an
ablation report, merge the shards of a run.

Grading itself runs under pytest; these are the chores around it."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable

from .core.errors import SqlevalError


def _validate(args: argparse.Namespace) -> int:
    from .products.validate import DEFAULT_THREADS, validate_suite
    if args.variants is not None and args.variants < 0:
        print(f"error: --variants {args.variants}: expected 0 or more variants", file=sys.stderr)
        return 2
    try:
        threads = tuple(int(t) for t in args.threads.split(",")) if args.threads else DEFAULT_THREADS
        if not threads or min(threads) < 1:
            raise ValueError
    except ValueError:
        print(f"error: --threads {args.threads!r}: expected a comma list of positive whole numbers, e.g. 1,2,4",
              file=sys.stderr)
        return 2
    from .plugin.suite_hooks import native_variants_of
    return validate_suite(args.suite, layer=args.layer, freeze=not args.no_freeze, threads=threads,
                          engines=tuple(args.engine), native_variants_of=native_variants_of, variants=args.variants)


def _build_warehouse(rest: list[str]) -> int:
    from .products.warehouse import main as warehouse_main
    return warehouse_main(["build", *rest])


def _hash(args: argparse.Namespace) -> int:
    from .core.cases import Limits
    from .core.engines import display_location, is_url, open_sandbox
    from .core.errors import UsageError
    where = display_location(args.database)
    if not is_url(args.database) and not Path(args.database).is_file():
        raise UsageError(f"{where}: no such database file. Fix: give the path of a DuckDB or SQLite database")
    try:
        db = open_sandbox(args.database, Limits())
    except Exception as exc:  # the engine's own words on why this is not a database it can open
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UsageError(f"{where}: cannot open it as a database ({reason}). "
                         "Fix: give a DuckDB or SQLite database file, or a postgresql:// URL") from None
    try:
        print(db.content_hash())
    finally:
        db.close()
    return 0


def _summary(args: argparse.Namespace) -> int:
    from .reports.summary import summarize
    from .reports.table import read_records
    from .reports.terminal import summary_lines
    _, records = read_records(args.results)
    for line in summary_lines(summarize(records)):
        print(line)
    return 0


def _view(args: argparse.Namespace) -> int:
    """Rebuild report.html beside the results (so an older run gets this version's page),
    then open it in a browser, or serve its folder on loopback with --serve."""
    import json
    import webbrowser

    from .reports.html import REPORT_NAME, write_report
    from .reports.table import read_records
    path, records = read_records(args.results)
    summary_path = path.with_name("summary.json")
    summary = json.loads(summary_path.read_text(encoding="utf-8")) if summary_path.is_file() else None
    page = write_report(records, summary, path.with_name(REPORT_NAME))
    print(f"report: {page}")
    if args.serve is None:
        if not args.no_open and not webbrowser.open(page.resolve().as_uri()):
            print("no browser to open it here: open the file above in one, or use --serve")
        return 0
    import functools
    import http.server
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(page.parent))
    with http.server.ThreadingHTTPServer(("127.0.0.1", args.serve), handler) as server:
        print(f"serving http://127.0.0.1:{server.server_address[1]}/{REPORT_NAME} (Ctrl-C stops)", flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
    return 0


def _merge(args: argparse.Namespace) -> int:
    """The shards of one run as one run: its files, its summary, and the gate over the whole.
    Exit 0 merged (gate passed or none asked), 1 merged but the gate failed, 2 refused."""
    from .plugin.gate import RunFacts, gate_verdict
    from .plugin.session import report_sections
    from .reports.ablation import has_ablation, write_ablation
    from .reports.shards import merge_shards, write_merged
    from .reports.summary import summarize
    from .reports.terminal import summary_lines
    run = merge_shards([Path(d) for d in args.shards])
    records = list(run.records)
    facts = RunFacts(lost=run.lost, other_failures=run.other_failures, collection_errors=run.collection_errors,
                     stopped=run.stopped)
    summary = summarize(records, expected=run.expected, run={
        "run_id": run.run_id, "shards": run.shard_count, "backends": sorted({r.backend for r in records}),
        "min_pass_rate": args.min_pass_rate, "lost": list(run.lost),
        "merged_from": [str(s.folder) for s in run.shards]})
    ok, gate_lines = (True, []) if args.min_pass_rate is None else gate_verdict(args.min_pass_rate, summary, facts)
    summary["run"]["exit_status"] = 0 if ok else 1
    out = Path(args.out)
    paths = write_merged(run, summary, out)
    if has_ablation(records):
        write_ablation(records, out, sections=report_sections([]))
    print(f"merged {run.shard_count} shard(s) of run {run.run_id}: {len(records)} record(s)")
    for line in summary_lines(summary):
        print(line)
    print(f"results: {paths['results']}  summary: {paths['summary']}  report: {paths['report']}  "
          f"durations: {paths['durations']}")
    for line in gate_lines:
        print(line)
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["build-warehouse"]:  # its options belong to the warehouse builder
        return _guarded(lambda: _build_warehouse(argv[1:]))
    if argv[:1] == ["report"]:  # the ablation table and plot from results or json reports
        from .products.warehouse.course import COURSE_SECTIONS
        from .reports.ablation import main as ablation_main
        return _guarded(lambda: ablation_main(argv[1:], sections=COURSE_SECTIONS))
    if argv[:1] == ["reproduce"]:  # regrade a report's cases from cached generations and compare its numbers
        from .products.reproduce import main as reproduce_main
        return _guarded(lambda: reproduce_main(argv[1:]))
    parser = argparse.ArgumentParser(prog="python -m pytest_sqleval", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("build-warehouse", help="build the Vantage warehouse: [--scale N] [--out DIR] [--pin] [--no-verify]",
                   add_help=False)
    p = sub.add_parser("validate", help="check a suite (constraints, gold determinism, semantic layer) and freeze its gold answers",
                       description="Exit 0 when clean, 1 on problems (one line each), 2 on bad input.")
    p.add_argument("suite", help="suite folder or its sqleval.toml")
    p.add_argument("--layer", default=None, help="semantic layer to check (default: semantic_layer.yaml next to the manifest)")
    p.add_argument("--threads", default=None, help="thread counts to rerun every gold under (default: 1,2,4; the first is the baseline)")
    p.add_argument("--no-freeze", action="store_true", help="check only; do not write gold_answers.json")
    p.add_argument("--engine", action="append", default=[], metavar="NAME",
                   help="also report, per case, what does not transpile to this engine's dialect (e.g. spark) and "
                        "whether a gold of its own (gold_sql_spark) covers it; repeatable")
    p.add_argument("--variants", type=int, default=None, metavar="N",
                   help="freeze the database variants and each gold's choice for runs with --sqleval-variants=N "
                        "(default: the manifest's [variants] count)")
    p.set_defaults(func=_validate)
    sub.add_parser("report", help="rebuild report/ablation.md and its plot from results.jsonl or json reports",
                   add_help=False)
    sub.add_parser("reproduce", help="regrade report/ablation.md's cases from their cached generations (no model "
                   "call) and name every number that differs", add_help=False)
    p = sub.add_parser("hash", help="print a DuckDB database's content hash (computed in SQL)")
    p.add_argument("database")
    p.set_defaults(func=_hash)
    p = sub.add_parser("summary", help="reprint the summary of a results.jsonl (or its folder)")
    p.add_argument("results", nargs="?", default="sqleval-results")
    p.set_defaults(func=_summary)
    p = sub.add_parser("view", help="rebuild a run's HTML report (report.html) and open it, or serve it",
                       description="The page is self-contained: it opens offline and can be sent as one file.")
    p.add_argument("results", nargs="?", default="sqleval-results", help="results.jsonl or its folder")
    p.add_argument("--serve", nargs="?", type=int, const=0, default=None, metavar="PORT",
                   help="serve the folder on 127.0.0.1 (a free port unless given) instead of opening a browser")
    p.add_argument("--no-open", action="store_true", help="only write report.html")
    p.set_defaults(func=_view)
    from .core.numeric import PASS_RATE
    p = sub.add_parser("merge", help="merge the results folders of a sharded run (--sqleval-shard=K/N) into one run",
                       description="Exit 0 when merged (and the gate, if asked, passed), 1 when the gate failed, "
                                   "2 when the folders are not every shard of one run.")
    p.add_argument("shards", nargs="+", metavar="DIR", help="each shard's --sqleval-results folder")
    p.add_argument("--out", required=True, metavar="DIR", help="where the merged results go")
    p.add_argument("--min-pass-rate", type=PASS_RATE, default=None, metavar="X",
                   help="the gate over the merged run, as --sqleval-min-pass-rate: every backend's pass rate >= X, "
                        "no case lost, no other test failed, no collection error")
    p.set_defaults(func=_merge)
    args = parser.parse_args(argv)
    return _guarded(lambda: args.func(args))


def _guarded(command: Callable[[], int]) -> int:
    """Run a subcommand; bad input is one paragraph on stderr and exit code 2, never a traceback."""
    try:
        return command()
    except (SqlevalError, OSError) as exc:
        print(f"error: {_one_paragraph(exc)}", file=sys.stderr)
        return 2
    except UnicodeDecodeError as exc:  # a reader that does not name the file itself
        print(f"error: an input file is not UTF-8 text ({exc.reason} at byte {exc.start}). "
              "Fix: save it as UTF-8", file=sys.stderr)
        return 2


def _one_paragraph(exc: BaseException) -> str:
    """An error as the user reads it: a BadInputError's "fix" line joins its paragraph."""
    text = str(exc).strip()
    if isinstance(exc, OSError) and exc.filename is not None:
        text = f"{exc.filename}: {exc.strerror or text}"
    return " ".join(part.strip() for part in text.splitlines())


if __name__ == "__main__":
    sys.exit(main())
