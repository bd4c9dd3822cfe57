"""The run as one self-contained page: ``sqleval-results/report.html``.

Built from the records and the summary only (what results.jsonl and summary.json hold),
so ``python -m pytest_sqleval view`` rebuilds the same page from a finished run. The page
needs no network: its script, styles and data are inline (``report_template.html``).
Its size is bounded: result previews are cut to ``PREVIEW_ROWS`` rows, cells to
``CELL_CHARS`` and texts to ``TEXT_CHARS`` characters, and past ``DETAIL_BUDGET`` bytes of
evidence the remaining cases (passed ones last in line) lose their layers' evidence and keep
``PREVIEW_ROWS_OVER_BUDGET`` rows of their results; every cut says so on the page."""
from __future__ import annotations

import base64
import html
import io
import json
import os
import shlex
import tempfile
from importlib import resources
from pathlib import Path
from typing import IO, Any, Iterable, Mapping, NamedTuple

from ..core import TRACE_KEY, TRACE_REPORT_KEY
from ..core import render_trace as render_markdown
from ..core.records import CaseRecord, as_records
from .files import publish_file, suite_nodeid

REPORT_NAME = "report.html"
PREVIEW_ROWS = 20
PREVIEW_ROWS_OVER_BUDGET = 5  # a case past the budget keeps this much of its result
CELL_CHARS = 120
TEXT_CHARS = 1500
TRACE_CHARS = 20_000  # of a case's trace shown inline; its report file has all of it
DETAIL_BUDGET = 10_000_000  # bytes of layer evidence, previews and traces (as the page writes them) across all cases: 10,000 cases stay a page a browser opens
_DATA_MARK = "/*SQLEVAL_DATA*/null"
_STATIC_MARK = "<!--SQLEVAL_STATIC-->"


def write_report(records: Iterable[CaseRecord | Mapping[str, Any]], summary: dict[str, Any] | None,
                 path: Path) -> Path:
    """Write the page to ``path`` (replaced whole) and return it."""
    records = as_records(records)
    page = PageBuilder(path.parent)
    for rec in records:
        page.add(rec)
    page.publish(path, _static_html(records, summary))
    return path


def render_report(records: Iterable[CaseRecord | Mapping[str, Any]], summary: dict[str, Any] | None, *,
                  page_dir: Path | None = None) -> str:
    """The page; ``page_dir`` (where it will be written) makes its links to trace reports relative.
    ``records`` as ``CaseRecord``s or as the JSON objects of results.jsonl."""
    records = as_records(records)
    page = PageBuilder(page_dir)
    for rec in records:
        page.add(rec)
    out = io.StringIO()
    page.write(out, _static_html(records, summary))
    return out.getvalue()


class PageBuilder:
    """The page's data built record by record, as a run's records arrive: each run's entry
    kept as its JSON text (a few KB, not the record's evidence as objects), each case's row
    likewise, and what the budget (``_bound``) needs. ``write`` then streams the page, in
    the order given, equal byte for byte to the page built from every record at once; the
    entries the budget cuts are made from their text (``_RunText.cut``)."""

    def __init__(self, page_dir: Path | None) -> None:
        self.page_dir = page_dir
        # per record, in the order added: case key, run JSON (without "c"), its evidence's
        # cost, passed, the case's row JSON (without its gold preview), the gold preview's JSON
        self._entries: list[tuple[str, _RunText, int, bool, str, str | None]] = []
        self._texts: dict[str, str] = {}  # one copy of a row or preview text many records share

    def add(self, rec: CaseRecord) -> int:
        """Add a record's entry; returns its index (``write``'s ``order`` uses it)."""
        run_text = _RunText.of(_run(rec, self.page_dir))
        cost = run_text.evidence_bytes  # read off the entry's own text: the evidence is not written out twice
        gold = _dict(rec.gold)
        row = {"id": rec.case_id, "suite": rec.suite, "question": _clip(rec.question),
               "gold_sql": _clip(rec.gold_sql, 20_000), "tags": list(rec.tags),
               "difficulty": rec.difficulty, "category": rec.category,
               "complexity": rec.complexity, "gold_columns": gold.get("columns")}
        preview = _preview(gold.get("preview"), gold.get("rows"))
        row_text = self._texts.setdefault(t := _json(row), t)
        preview_text = None if preview is None else self._texts.setdefault(t := _json(preview), t)
        self._entries.append((f"{rec.suite}\x1f{rec.case_id}", run_text, cost, rec.status == "passed",
                              row_text, preview_text))
        return len(self._entries) - 1

    def write(self, fh: IO[str], static_html: str, order: Iterable[int] | None = None) -> None:
        """The page to ``fh``: the records' entries in ``order`` (indexes from ``add``;
        default: as added), the run's tables (``static_html``) above them."""
        order = list(range(len(self._entries)) if order is None else order)
        entries = self._entries
        template = resources.files(__package__).joinpath("report_template.html").read_text(encoding="utf-8")
        head, tail = template.split(_DATA_MARK, 1)  # the data's mark is the template's only one
        if _STATIC_MARK in head:  # the static's comes first
            head = head.replace(_STATIC_MARK, static_html, 1)
        else:
            tail = tail.replace(_STATIC_MARK, static_html, 1)
        cases: dict[str, int] = {}
        rows: list[tuple[str, list[str | None]]] = []  # each case once: its row, and its gold preview
        for i in order:
            key, _, _, _, row_text, preview_text = entries[i]
            at = cases.get(key)
            if at is None:
                cases[key] = len(rows)
                rows.append((row_text, [preview_text]))
            elif rows[at][1][0] is None:
                rows[at][1][0] = preview_text
        cut = self._cut(order)
        fh.write(head)
        fh.write('{"cases":[')
        fh.write(",".join(f'{row[:-1]},"gold_preview":{preview[0] or "null"}}}' for row, preview in rows))
        fh.write('],"runs":[')
        for n, i in enumerate(order):
            key, run = entries[i][0], entries[i][1]
            run_text = run.cut() if i in cut else run.text
            fh.write(f'{"," if n else ""}{{"c":{cases[key]},{run_text[1:]}')
        limits = {"preview_rows": PREVIEW_ROWS, "text_chars": TEXT_CHARS, "detail_left_out": len(cut)}
        fh.write(f'],"limits":{_json(limits)}}}')
        fh.write(tail)

    def _cut(self, order: list[int]) -> set[int]:
        """The entries past ``DETAIL_BUDGET`` bytes of evidence, failures served first: they
        lose their layers and most of their preview."""
        budget, cut = DETAIL_BUDGET, set()
        for i in sorted(order, key=lambda i: self._entries[i][3]):  # stable: failures first, then in order
            cost = self._entries[i][2]
            if cost <= budget:
                budget -= cost
            else:
                cut.add(i)
        return cut

    def publish(self, path: Path, static_html: str, order: Iterable[int] | None = None) -> None:
        """``write`` into ``path``, replaced whole."""
        def write(tmp: Path) -> None:
            with open(tmp, "w", encoding="utf-8") as fh:
                self.write(fh, static_html, order)
        publish_file(path, write)


class _RunText(NamedTuple):
    """A run's entry as JSON text, with where its preview, its layers and its trace are:
    enough to make the entry the budget cuts (``_run(..., cut=True)``) from the text alone,
    its keys in the same order."""
    text: str
    preview_at: int
    preview_end: int
    layers_at: int
    trace_at: int

    @classmethod
    def of(cls, run: dict[str, Any]) -> "_RunText":
        keys = list(run)
        p, m = keys.index("preview"), keys.index("layers")
        assert keys[m:] == ["layers", "trace"]
        head = _json({k: run[k] for k in keys[:p]})[:-1] + ',"preview":'
        preview = _json(run["preview"])
        middle = "," + _json({k: run[k] for k in keys[p + 1:m]})[1:-1]
        layers = f',"layers":{_json(run["layers"])},"trace":'
        a = len(head)
        b = a + len(preview)
        c = b + len(middle)
        return cls(f"{head}{preview}{middle}{layers}{_json(run['trace'])}}}", a, b, c, c + len(layers))

    @property
    def evidence_bytes(self) -> int:
        """What the entry costs the page's budget (``DETAIL_BUDGET``): the bytes of its result
        preview, its layers' evidence and its trace, as the page holds them."""
        return (self.preview_end - self.preview_at) + (len(self.text) - 1 - self.layers_at)

    def cut(self) -> str:
        """The entry past the page's budget: no layers, no trace text, the first
        ``PREVIEW_ROWS_OVER_BUDGET`` rows of its preview (as ``_run(..., cut=True)`` makes it)."""
        text = self.text
        preview = json.loads(text[self.preview_at:self.preview_end])
        if preview is not None:
            rows = preview["rows"][:PREVIEW_ROWS_OVER_BUDGET]
            preview = {"rows": rows, "total": preview["total"], "shown": len(rows)}
        trace = json.loads(text[self.trace_at:-1])
        if trace:
            trace["markdown"] = None  # the link to its report file stays
        return (f'{text[:self.preview_at]}{_json(preview)}{text[self.preview_end:self.layers_at]}'
                f',"layers":null,"trace":{_json(trace)}}}')


#: the page's one encoder (``json.dumps`` with these settings made a new one on every call,
#: seven a record)
_encode = json.JSONEncoder(default=str, separators=(",", ":")).encode


def _json(value: Any) -> str:
    """As the page's script reads it: compact, and no "<" (neither "</script>" nor "<!--"
    in a question can end the script early)."""
    return _encode(value).replace("<", "\\u003c")


# -- the data the page's script reads -------------------------------------------------------
def _clip(text: Any, limit: int = TEXT_CHARS) -> Any:
    if not isinstance(text, str) or len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text):,} characters, truncated in this page; results.jsonl has more)"


def _dict(value: Any) -> Mapping[str, Any]:
    """A record's sub-object, or an empty one where the record holds something else: the
    page is drawn from whatever a record holds (an older version's, a plugin's)."""
    return value if type(value) is dict or isinstance(value, Mapping) else {}  # (a dict without the ABC's check)


def _preview(rows: Any, total: Any, limit: int = PREVIEW_ROWS) -> dict[str, Any] | None:
    if not isinstance(rows, list):
        return None
    cut = rows[:limit]
    return {"rows": [[_clip(v, CELL_CHARS) for v in (r if isinstance(r, list) else [r])] for r in cut],
            "total": total if isinstance(total, int) and not isinstance(total, bool) else len(rows), "shown": len(cut)}


def _marks(rows: list[Any] | None, other: list[Any] | None, listed: list[Any] | None) -> list[int]:
    """Indexes of preview rows that differ: listed by the comparison (missing or extra rows),
    or, where it listed none, absent from the other side's preview."""
    if not rows or not isinstance(rows, list):
        return []
    other = other if isinstance(other, list) else []
    keys = {repr(r) for r in (listed if isinstance(listed, list) else [])}
    if keys:
        return [i for i, r in enumerate(rows[:PREVIEW_ROWS]) if repr(r) in keys]
    theirs: dict[str, int] = {}
    for r in (other or [])[:4 * PREVIEW_ROWS]:
        k = repr(r)
        theirs[k] = theirs.get(k, 0) + 1
    out = []
    for i, r in enumerate(rows[:PREVIEW_ROWS]):
        k = repr(r)
        if theirs.get(k):
            theirs[k] -= 1
        else:
            out.append(i)
    return out


def _layers(rec: CaseRecord) -> dict[str, Any]:
    """Each layer's evidence, the structure layer's matching clauses left out."""
    layers = dict(rec.layers)
    struct = layers.get("structure")
    if isinstance(struct, dict) and isinstance(struct.get("clauses"), dict):
        layers["structure"] = {**struct, "clauses": {k: v for k, v in struct["clauses"].items()
                                                     if not (isinstance(v, dict) and v.get("match"))}}
    for key, evidence in (("execution", rec.execution), ("compare", rec.compare), ("judge", rec.judge)):
        if evidence:
            layers[key] = evidence
    if isinstance(layers.get("execution"), dict):
        layers["execution"] = {k: v for k, v in layers["execution"].items() if k != "preview"}
    if isinstance(layers.get("compare"), dict):
        layers["compare"] = {k: (v[:PREVIEW_ROWS] if isinstance(v, list) else v) for k, v in layers["compare"].items()}
    return layers


def reproduce_command(record: CaseRecord | Mapping[str, Any]) -> str:
    """The command that runs this one case with this backend (and its model): the item is
    addressed by its case id (its name has no ``[backend]`` part when one backend runs)."""
    rec = CaseRecord.of(record)
    suite = suite_nodeid(rec.nodeid, rec.case_id, rec.backend)
    spec = rec.backend_spec or rec.backend
    model = rec.backend_metadata.get("model")
    return (f"pytest {shlex.quote(suite + '::' + rec.case_id)} --sqleval-backend={shlex.quote(spec)}"
            + (f" --sqleval-model={shlex.quote(str(model))}" if model else ""))


def _trace(rec: CaseRecord, page_dir: Path | None) -> dict[str, Any] | None:
    """A case's trace as the page shows it: the markdown its report file holds (the one
    renderer, :func:`pytest_sqleval.core.traces.render_markdown`) and a link to that file."""
    meta = rec.backend_metadata
    events = meta.get(TRACE_KEY)
    report = meta.get(TRACE_REPORT_KEY)
    if not isinstance(events, list) and not report:
        return None
    text = render_markdown(case_id=rec.case_id, question=rec.question or "", backend=rec.backend,
                           sql=rec.generated_sql, events=events) if isinstance(events, list) else None
    link = None
    if report:
        link = Path(report).as_posix()
        if page_dir is not None:
            try:
                link = Path(os.path.relpath(report, page_dir)).as_posix()
            except ValueError:  # another drive
                pass
    return {"markdown": _clip(text, TRACE_CHARS), "report": report, "link": link}


def _run(rec: CaseRecord, page_dir: Path | None, cut: bool = False) -> dict[str, Any]:
    """A record's verdict as the page's script reads it (its case's index ``c`` apart).
    ``cut``: past the page's budget, without its layers' evidence and with
    ``PREVIEW_ROWS_OVER_BUDGET`` rows of its result."""
    gold = _dict(rec.gold)
    ex = _dict(rec.execution)
    cmp = _dict(rec.compare)
    gold_rows = gold.get("preview")
    meta = rec.backend_metadata
    trace = _trace(rec, page_dir)
    if cut and trace:
        trace["markdown"] = None  # the link to its report file stays
    return {
        "backend": rec.backend, "status": rec.status, "tie_only": bool(rec.tie_only),
        "gold": rec.gold_label,
        "error_class": rec.error_class, "failure_kind": rec.failure_kind,
        "explanation": _clip(rec.explanation), "confidence": rec.confidence,
        "sql": _clip(rec.generated_sql, 20_000), "nodeid": rec.nodeid,
        "reproduce": reproduce_command(rec), "rationale": _clip(rec.rationale), "equivalence": rec.equivalence,
        "decided_by": rec.decided_by, "sidebyside": cmp.get("sidebyside") if rec.compare is not None else rec.sidebyside,
        "columns": ex.get("columns"),
        "preview": _preview(ex.get("preview"), ex.get("rows"), PREVIEW_ROWS_OVER_BUDGET if cut else PREVIEW_ROWS),
        "pred_marks": _marks(ex.get("preview"), gold_rows, cmp.get("extra_rows")),
        "gold_marks": _marks(gold_rows, ex.get("preview"), cmp.get("missing_rows")),
        "compare_reason": cmp.get("reason"), "advice": rec.layer("diagnostics").get("advice"),
        "model": meta.get("model"), "not_a_model": meta.get("not_a_model"),
        "layers": None if cut else _layers(rec), "trace": trace,
    }


# -- the parts drawn once, in Python -----------------------------------------------------------
def _pct(x: Any) -> str:
    return "–" if x is None else f"{100 * x:.1f} %"


def _table(head: list[str], rows: Iterable[list[str]], cls: str = "") -> str:
    th = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return f'<table class="{cls}"><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>'


def _summary_rows(groups: dict[str, Any]) -> list[list[str]]:
    return [[html.escape(str(name)), str(s.get("cases", "")), str(s.get("passed", "")), str(s.get("failed", "")),
             str(s.get("errors", "")), str(s.get("undecidable", 0)), str(s.get("tie_only_passes", 0)),
             _pct(s.get("pass_rate")), _pct(s.get("exact_match_rate"))]
            for name, s in groups.items()]


def _histogram(summary: dict[str, Any]) -> str:
    backends = summary.get("backends") or {}
    classes: list[str] = []
    for s in backends.values():
        classes += [c for c in (s.get("error_classes") or {}) if c not in classes]
    top = max([n for s in backends.values() for n in (s.get("error_classes") or {}).values()] + [1])
    rows = []
    for name, s in backends.items():
        counts = s.get("error_classes") or {}
        cells = [html.escape(name)]
        for c in classes:
            n = counts.get(c, 0)
            cells.append(f'<span class="bar" style="width:{round(80 * n / top)}px"></span> {n}')
        rows.append(cells)
    return _table(["backend", *classes], rows, "hist") + _class_legend(classes)


def _class_legend(classes: list[str]) -> str:
    """What each class of the histogram means, as declared (``core.error_classes()``)."""
    from ..core import error_classes
    known = {c.name: c for c in error_classes()}
    declared = [(c, known.get(c)) for c in classes]
    items = "".join(f"<dt>{html.escape(str(c))}</dt><dd>{html.escape(d.description)}</dd>"
                    for c, d in declared if d is not None)
    return f'<dl class="legend">{items}</dl>' if items else ""


def _ablation(records: list[CaseRecord]) -> str:
    from .ablation import ERROR_CLASSES, ablation_rows, has_ablation, plot_pareto
    if not has_ablation(records):
        return ""
    rows = ablation_rows(records)
    body = [[html.escape(r.config) + (" ★" if r.pareto else ""), _pct(r.execution_accuracy),
             *(str(r.classes[c]) for c in ERROR_CLASSES),
             "–" if r.mean_calls is None else f"{r.mean_calls:.2f}",
             "–" if r.mean_total_tokens is None else f"{r.mean_total_tokens:.0f}"] for r in rows]
    table = _table(["configuration", "execution accuracy", *ERROR_CLASSES, "calls / question", "tokens / question"], body)
    with tempfile.TemporaryDirectory() as tmp:
        png = Path(tmp) / "ablation.png"
        note = plot_pareto(rows, png)
        img = (f'<img alt="accuracy against cost" src="data:image/png;base64,'
               f'{base64.b64encode(png.read_bytes()).decode()}">' if note is None else f"<p>{html.escape(note)}</p>")
    from ..core import NOT_A_MODEL, is_mock
    mock = any(is_mock(m) for r in rows for m in r.models)
    note = f'<p class="notamodel">Not a model: {html.escape(NOT_A_MODEL)}</p>' if mock else ""
    return f"<h2>Ablation</h2>{note}<p>★ on the Pareto frontier.</p>{table}{img}"


def _static_html(records: list[CaseRecord], summary: dict[str, Any] | None) -> str:
    from .summary import rates, summarize
    summary = summary or summarize(records)
    run = summary.get("run") or {}
    by_suite: dict[str, list[CaseRecord]] = {}
    for r in records:
        by_suite.setdefault(f"{r.suite} · {r.backend}", []).append(r)
    head = f"<p>run {html.escape(str(run.get('run_id', '')))} · {len(records):,} case records</p>"
    labels = ["cases", "passed", "failed", "errors", "undecidable", "tie-only passes", "pass rate", "exact match"]
    parts = [head, "<h2>Per backend</h2>", _table(["backend", *labels], _summary_rows(summary.get("backends") or {})),
             "<h2>Per suite and backend</h2>",
             _table(["suite · backend", *labels], _summary_rows({k: rates(v) for k, v in sorted(by_suite.items())})),
             "<h2>Error classes</h2>", _histogram(summary), _golds(records), _ablation(records)]
    return "".join(parts)


def _golds(records: list[CaseRecord]) -> str:
    """Which gold each case matched, and how many passes needed an alternative gold or a
    column policy (the leniency's share of the pass rate)."""
    from .ablation import ablation_rows
    rows = ablation_rows(records)
    if not any(r.gold_matches for r in rows):
        return ""
    body = [[html.escape(r.config), str(r.passed), str(r.alternative_gold_passes), str(r.column_policy_passes),
             str(r.passed - r.lenient_passes)] for r in rows]
    table = _table(["backend", "passed", "via an alternative gold", "via a column policy", "strict passes"], body)
    cases = sorted({c for r in rows for c in r.gold_matches})
    per_case = _table(["case", *(html.escape(r.config) for r in rows)],
                      [[html.escape(c), *(html.escape(r.gold_matches.get(c, "–")) for r in rows)] for c in cases])
    return f"<h2>Several golds and column policies</h2>{table}<p>Which gold each case was graded against:</p>{per_case}"
