"""The results sink: every case record as it arrives (a journal a killed run keeps),
then the run's outputs, written once at the end: results.jsonl, summary.json, the
ablation table when agent configurations ran, the HTML report (``reports.html``) and the
error-class cache.

A run of 10,000 cases must not hold 10,000 records' evidence (some 25 KB of objects a
case): once a record's line is in the journal the sink keeps only its lean form
(``lean_record``: what the summary, the gate and the ablation table read) and its
entry of the page (``html.PageBuilder``, JSON text); results.jsonl copies the journal's
lines and the page reads back the few records its budget cuts.

It reads records only. In an xdist run only the controller keeps one; workers attach
their records to the reports they send (``user_properties``, as the record's JSON object),
so serial and ``-n 2`` runs write the same files. That object becomes a ``CaseRecord``
here, on arrival (``CaseRecord.from_json_dict``), and JSON again only in the files; in a
serial run the item that made it offers the typed record with it (``offer``), which is
taken instead of reading the same object back."""
from __future__ import annotations

import json
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from .files import publish_file, suite_nodeid

from ..core import TRACE_KEY
from ..core.records import CaseRecord

RECORD_KEY = "sqleval"
CASE_KEY = "sqleval_case"
ERROR_CLASS_CACHE = "sqleval/error_classes"


class ResultsSink:
    def __init__(self, results_dir: Path, run_id: str, cache: Any = None) -> None:
        self.results_dir = results_dir
        self.run_id = run_id
        self.cache = cache  # pytest's cache (None with -p no:cacheprovider)
        self.records: dict[str, CaseRecord] = {}  # node id -> the record's lean form (``lean_record``)
        self.case_nodeids: set[str] = set()
        self.other_failures = 0
        self.seconds_by_file: dict[str, float] = {}  # questions file's node id -> its cases' summed durations
        self.failed_reports = 0  # test reports pytest counts as failures (session.testsfailed counts them too)
        self._results_fh: Any = None  # this run's journal: every finished record, appended as it comes
        self._journal: Path | None = None
        # where each record's line is in the journal: results.jsonl copies the lines, in
        # order, instead of writing every record to JSON a second time
        self._journal_lines: dict[str, tuple[int, int]] = {}
        self._journal_size = 0
        self._page: Any = None  # the report page's entries (html.PageBuilder), built as records come
        self._page_index: dict[str, int] = {}
        self.previous_classes: dict[str, str] = cache.get(ERROR_CLASS_CACHE, {}) if cache is not None else {}
        # nodeid -> (record, its JSON object): offered by the item that graded it in this process
        self._offered: dict[str, tuple[CaseRecord, Any]] = {}

    def offer(self, nodeid: str, record: CaseRecord, data: Any) -> None:
        """The typed record of a case graded in this process (serial), beside the JSON object
        its report carries: taken as it is on arrival, instead of read back from ``data``."""
        self._offered[nodeid] = (record, data)

    def on_report(self, report: Any) -> None:
        props = dict(p for p in report.user_properties if isinstance(p, tuple) and len(p) == 2)
        if report.failed and not hasattr(report, "wasxfail"):  # as pytest's Session counts them
            self.failed_reports += 1
        data = props.get(RECORD_KEY)
        # a report xdist makes up for an item whose worker crashed carries no properties:
        # it is still a benchmark case, to be reported as lost, not as a failing test
        if CASE_KEY in props or report.nodeid.split("::", 1)[0].endswith(".jsonl"):
            self.case_nodeids.add(report.nodeid)
            file_part = report.nodeid.split("::", 1)[0]
            self.seconds_by_file[file_part] = self.seconds_by_file.get(file_part, 0.0) + (report.duration or 0.0)
        elif report.failed:
            self.other_failures += 1
        if data is None or report.nodeid in self.records:
            if data is not None:  # a later report of the same case (its teardown's) carries the same record
                _drop_record(report)
            return
        offered = self._offered.pop(report.nodeid, None)
        if offered is not None and offered[1] is data:  # made by this process's item: data is record.to_json_dict()
            record, as_json = offered[0], data
        else:
            record = CaseRecord.from_json_dict(data, source=report.nodeid)
            as_json = record.to_json_dict()
        if self._results_fh is None:
            self.results_dir.mkdir(parents=True, exist_ok=True)
            self._journal = self.results_dir / f".results.{self.run_id}.{os.getpid()}.partial.jsonl"
            self._results_fh = open(self._journal, "w+b")  # read back at the end (results.jsonl, the page)
        line = _record_line(as_json)
        self._journal_lines[report.nodeid] = (self._journal_size, len(line))
        self._journal_size += len(line)
        self._results_fh.write(line)
        self._results_fh.flush()  # a killed run keeps every finished case in its journal
        if self._page is None:
            from .html import PageBuilder
            self._page = PageBuilder(self.results_dir)
        self._page_index[report.nodeid] = self._page.add(record)
        self.records[report.nodeid] = lean_record(record)
        # pytest keeps every report to the end of the run (the terminal's statistics): the
        # one that carried the record keeps the case's id, not its evidence
        _drop_record(report)

    def close_journal(self, remove: bool) -> None:
        if self._results_fh is not None:
            self._results_fh.close()
            self._results_fh = None
        if remove and self._journal is not None:
            self._journal.unlink(missing_ok=True)
            self._journal = None

    def cases_and_seconds(self) -> dict[str, tuple[int, float]]:
        """Per questions file (its node id): the cases reported and their summed durations."""
        counts: dict[str, int] = {}
        for nodeid in self.case_nodeids:
            file_part = nodeid.split("::", 1)[0]
            counts[file_part] = counts.get(file_part, 0) + 1
        return {f: (counts[f], self.seconds_by_file.get(f, 0.0)) for f in counts}

    def lost_cases(self) -> list[str]:
        return sorted(self.case_nodeids - set(self.records))

    def sorted_records(self) -> list[CaseRecord]:
        return [self.records[k] for k in sorted(self.records)]

    def expected(self) -> int:
        return len(self.case_nodeids | set(self.records))

    def publish(self, records: list[CaseRecord], summary: dict[str, Any]) -> None:
        """results.jsonl (sorted, so serial and xdist runs give identical files), summary.json
        and the page built from both, report.html. ``records``: this sink's (lean) records."""
        self.results_dir.mkdir(parents=True, exist_ok=True)
        fh = self._results_fh
        if (fh is None and records) or any(self.records.get(rec.nodeid) is not rec for rec in records):
            raise ValueError("publish takes the sink's own records, whose lines its journal holds")
        if fh is not None:
            fh.flush()
        if self._page is None:  # every case lost: the page says so
            from .html import PageBuilder
            self._page = PageBuilder(self.results_dir)
        lines = self._journal_lines

        def line_of(nodeid: str) -> bytes:
            # the open journal is read even if something removed its file meanwhile
            offset, size = lines[nodeid]
            assert fh is not None
            fh.seek(offset)
            line: bytes = fh.read(size)
            return line

        def write_results(tmp: Path) -> None:
            with open(tmp, "wb") as out:
                for rec in records:
                    out.write(line_of(rec.nodeid))

        order = [self._page_index[rec.nodeid] for rec in records]
        summary_text = json.dumps(summary, indent=2, default=str) + "\n"
        from .html import REPORT_NAME, _static_html
        with _folder_lock(self.results_dir):  # runs sharing the folder: the last to finish writes both files
            publish_file(self.results_dir / "results.jsonl", write_results)
            publish_file(self.results_dir / "summary.json", lambda tmp: tmp.write_text(summary_text, encoding="utf-8"))
            self._page.publish(self.results_dir / REPORT_NAME, _static_html(records, summary), order)
        self.close_journal(remove=True)

    def remember_error_classes(self, records: list[CaseRecord]) -> None:
        """Merged per case: cases not run keep what they had; only the controller writes."""
        if self.cache is None:
            return
        merged = dict(self.cache.get(ERROR_CLASS_CACHE, {}))
        for rec in records:
            key = case_cache_key(suite_nodeid(rec.nodeid, rec.case_id, rec.backend), rec.case_id, rec.backend)
            if rec.status == "failed" and rec.error_class:
                merged[key] = rec.error_class
            else:
                merged.pop(key, None)
        self.cache.set(ERROR_CLASS_CACHE, merged)

    def previous_error_class(self, suite: str, case_id: str, backend_label: str) -> str | None:
        return self.previous_classes.get(case_cache_key(suite, case_id, backend_label))


def _drop_record(report: Any) -> None:
    report.user_properties[:] = [p for p in report.user_properties
                                 if not (isinstance(p, tuple) and len(p) == 2 and p[0] == RECORD_KEY)]


#: the comparison's keys the summary and the ablation table read (``sidebyside``,
#: ``CaseRecord.column_policy`` and ``gold_label``); the rest is the page's and results.jsonl's
_LEAN_COMPARE = ("match", "sidebyside", "column_mapping", "gold_kinds", "pred_columns")


def lean_record(record: CaseRecord) -> CaseRecord:
    """What the end of a run reads of a record once its line is in the journal: everything
    but the evidence (layers, result previews, the comparison's rows, the trace), of which
    it keeps the keys the summary (``summary.rates``, ``sidebyside``), the gate, the
    ablation table and the page's tables read. Never written anywhere: results.jsonl and
    the page read the journal's lines."""
    from dataclasses import replace
    layers: dict[str, Any] = {}
    variants = record.layer("variants")
    if variants.get("chosen") is not None:
        layers["variants"] = {"chosen": variants["chosen"]}
    elif variants.get("error"):  # a check that failed: counted and its first error shown (``summary``)
        layers["variants"] = {"error": variants["error"]}
    golds = record.layer("golds")
    if golds:
        layers["golds"] = {"compared": golds.get("compared")}
    execution = record.execution
    if execution:  # only its presence is read ("executed" cases)
        execution = {k: v for k, v in execution.items() if k != "preview"} or {"preview": []}
    compare = record.compare
    if compare is not None:
        compare = {k: compare[k] for k in _LEAN_COMPARE if k in compare}
    meta = record.backend_metadata
    if TRACE_KEY in meta:
        meta = {k: v for k, v in meta.items() if k != TRACE_KEY}
    return replace(record, layers=layers, execution=execution, compare=compare, gold=None, judge=None,
                   backend_metadata=meta)


def _record_line(data: dict[str, Any]) -> bytes:
    """A record's line (``CaseRecord.to_json_dict()``) in the journal and in results.jsonl
    (keys sorted, ASCII). A record is a tree (JSON's values, from the record's own edge):
    no container can hold itself, so the encoder does not keep its table of containers.
    One encoder for every line (``json.dumps`` with settings makes one a call)."""
    return (_encode_line(data) + "\n").encode("ascii")


_encode_line = json.JSONEncoder(default=str, sort_keys=True, check_circular=False).encode


def case_cache_key(suite: str, case_id: str, backend_label: str) -> str:
    """The error-class cache's key: suite (its questions file's node id), case id, backend label.

    It never depends on how this run names the item (``q06`` with one backend, ``q06[gold]``
    with several), so a class remembered for a case and backend applies whatever backend
    list the next run names."""
    return f"{suite}::{case_id}|{backend_label}"


@contextmanager
def _folder_lock(folder: Path) -> Iterator[None]:
    """Held while a run publishes its final results.jsonl and summary.json, so both files
    come from the same run (the last to finish). Where there is no ``fcntl`` it locks nothing."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    with open(folder / ".sqleval.lock", "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
