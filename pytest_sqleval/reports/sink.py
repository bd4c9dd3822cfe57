"""The results sink: every case record as it arrives (a journal a killed run keeps),
then the run's outputs, written once at the end: results.jsonl, summary.json, the
ablation table when agent configurations ran, the HTML report (``reports.html``) and the
error-class cache.

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

from ..core.records import CaseRecord

RECORD_KEY = "sqleval"
CASE_KEY = "sqleval_case"
ERROR_CLASS_CACHE = "sqleval/error_classes"


class ResultsSink:
    def __init__(self, results_dir: Path, run_id: str, cache: Any = None) -> None:
        self.results_dir = results_dir
        self.run_id = run_id
        self.cache = cache  # pytest's cache (None with -p no:cacheprovider)
        self.records: dict[str, CaseRecord] = {}
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
            return
        offered = self._offered.pop(report.nodeid, None)
        record = self.records[report.nodeid] = (offered[0] if offered is not None and offered[1] is data
                                                else CaseRecord.from_json_dict(data, source=report.nodeid))
        if self._results_fh is None:
            self.results_dir.mkdir(parents=True, exist_ok=True)
            self._journal = self.results_dir / f".results.{self.run_id}.{os.getpid()}.partial.jsonl"
            self._results_fh = open(self._journal, "wb")
        line = _record_line(record)
        self._journal_lines[report.nodeid] = (self._journal_size, len(line))
        self._journal_size += len(line)
        self._results_fh.write(line)
        self._results_fh.flush()  # a killed run keeps every finished case in its journal

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
        and the page built from both, report.html."""
        self.results_dir.mkdir(parents=True, exist_ok=True)
        journal = self._journal_bytes(records)
        self.close_journal(remove=True)

        def write_results(tmp: Path) -> None:
            with open(tmp, "wb") as fh:
                for rec in records:
                    where = self._journal_lines.get(rec.nodeid) if journal is not None else None
                    if where is not None and journal is not None:
                        fh.write(journal[where[0]:where[0] + where[1]])
                    else:
                        fh.write(_record_line(rec))

        summary_text = json.dumps(summary, indent=2, default=str) + "\n"
        with _folder_lock(self.results_dir):  # runs sharing the folder: the last to finish writes both files
            publish_file(self.results_dir / "results.jsonl", write_results)
            journal = None  # its bytes (6 KB a case) are not held while the page is rendered
            publish_file(self.results_dir / "summary.json", lambda tmp: tmp.write_text(summary_text, encoding="utf-8"))
            from .html import REPORT_NAME, write_report
            write_report(records, summary, self.results_dir / REPORT_NAME)

    def _journal_bytes(self, records: list[CaseRecord]) -> bytes | None:
        """The journal as written, when it holds the line of every record to publish (the
        records are this sink's own): each line is then the record's line in results.jsonl."""
        if self._results_fh is None or self._journal is None or any(
                self.records.get(rec.nodeid) is not rec or rec.nodeid not in self._journal_lines for rec in records):
            return None
        self._results_fh.flush()
        try:
            data = self._journal.read_bytes()
        except OSError:
            return None
        return data if len(data) == self._journal_size else None

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


def _record_line(record: CaseRecord) -> bytes:
    """A record's line in the journal and in results.jsonl (keys sorted, ASCII)."""
    return (json.dumps(record.to_json_dict(), default=str, sort_keys=True) + "\n").encode("ascii")


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
