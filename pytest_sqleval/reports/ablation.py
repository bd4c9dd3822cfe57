"""The ablation table (seed 002, Lab 3): per configuration, execution accuracy, counts per
error class, mean LLM calls, tokens and latency per question, and the Pareto frontier of
accuracy against mean calls, as ``report/ablation.md``, ``report/ablation.json`` and a
PNG plot ``report/ablation.png``.

It reads only finished records, so it never re-runs anything: ``sqleval-results/results.jsonl``
(or its folder), and pytest-json-report files (each test's ``metadata.sqleval``). Several
inputs are merged; a case seen twice (same node id) keeps its last record.

    python -m pytest_sqleval report sqleval-results/ [more.json ...] [--out report]

Definitions (as in the summary): *execution accuracy* = passed / graded cases (a case
error, i.e. a backend crash or timeout, or an untrustworthy gold, is not graded and is
counted in its own column); *mean calls / tokens / latency* are over the cases whose
backend reported them (``backend_metadata``: ``n_llm_calls``, ``prompt_tokens``,
``completion_tokens``, ``latency_ms``). A configuration is on the *Pareto frontier* when no
other configuration has at least its accuracy with at most its mean calls, and is better
in one of the two.

*Held-out split* (seed 002: "a large gap between your-50 and our-10 accuracy is treated as
leakage"): a record whose case names a split (``case_metadata["split"]``, the held-out split
the suite's ``[splits] held_out`` declares) is held out; every other record is the main set.
Each row then reports execution accuracy on both, and flags ``possible leakage`` when the
main set beats the held-out set by more than ``LEAKAGE_GAP`` (20 percentage points: more than
two of ten held-out questions). Why a gap means leakage: the semantic layer is written while
watching the agent fail on the main set, so fixes specific to those questions score there and
nowhere else; on questions nobody looked at, a layer that documents the schema (not the eval
set) does about as well.

The records say which backends are the ablation's configurations and what each one is:
``backend_metadata["components"]`` describes a row, ``backend_metadata["ablation_step"]``
(0, 1, ...) places it; consecutive steps get a line of "what each step changed". Rows
without a step follow, by name. Nothing here knows any backend by name.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Protocol, Sequence

from ..core.records import CaseRecord, as_records, finite_number

ERROR_CLASSES = ("wrong_join", "wrong_metric", "hallucinated_column", "stale_table", "other")
ABLATION_STEP = "ablation_step"  # backend_metadata key: the configuration's place in the ablation
LAYER_INGREDIENTS_KEY = "layer_ingredients"  # backend_metadata key: the semantic layer's ingredients given to the model
SPLIT_KEY = "split"  # case_metadata key: the held-out split a case belongs to (absent: the main set)
LEAKAGE_GAP = 0.20  # main minus held-out accuracy above which a row is flagged as possible leakage
CLASS_HEADERS = {"wrong_join": "wrong-join", "wrong_metric": "wrong-metric", "hallucinated_column": "halluc. column",
                 "stale_table": "stale-table", "other": "other"}


class ReportInputError(Exception):
    """An input that is not a results file or a pytest-json-report file."""


@dataclass
class AblationRow:
    config: str
    components: str = ""
    models: list[str] = field(default_factory=list)
    cases: int = 0
    passed: int = 0
    failed: int = 0
    errors: int = 0
    classes: dict[str, int] = field(default_factory=lambda: {c: 0 for c in ERROR_CLASSES})
    mean_calls: float | None = None
    mean_prompt_tokens: float | None = None
    mean_completion_tokens: float | None = None
    mean_total_tokens: float | None = None
    mean_latency_ms: float | None = None
    mean_repair_rounds: float | None = None
    total_cost_usd: float | None = None
    pareto: bool = False
    main_passed: int = 0
    main_graded: int = 0
    held_out_passed: int = 0
    held_out_graded: int = 0
    ingredients: list[str] | None = None  # the semantic layer's ingredients it gives the model, when recorded
    step: int | None = None  # its ablation_step; a sort key, not a column
    #: leniency: passes that matched a gold other than the case's first, passes that needed a
    #: column policy (superset, condition_cols), passes that needed either
    alternative_gold_passes: int = 0
    column_policy_passes: int = 0
    lenient_passes: int = 0
    #: case id -> which gold it was graded against (``CaseRecord.gold_label``), for cases with
    #: several golds, a result-file gold or a column policy
    gold_matches: dict[str, str] = field(default_factory=dict)

    @property
    def graded(self) -> int:
        return self.passed + self.failed

    @property
    def execution_accuracy(self) -> float | None:
        return self.passed / self.graded if self.graded else None

    @property
    def main_accuracy(self) -> float | None:
        return self.main_passed / self.main_graded if self.main_graded else None

    @property
    def held_out_accuracy(self) -> float | None:
        return self.held_out_passed / self.held_out_graded if self.held_out_graded else None

    @property
    def held_out_gap(self) -> float | None:
        """Main minus held-out accuracy; None unless both sets have graded cases."""
        main, held = self.main_accuracy, self.held_out_accuracy
        return None if main is None or held is None else main - held

    @property
    def possible_leakage(self) -> bool:
        return self.held_out_gap is not None and self.held_out_gap > LEAKAGE_GAP + 1e-9

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        del d["step"]
        d["execution_accuracy"] = self.execution_accuracy
        d["graded"] = self.graded
        d.update(main_accuracy=self.main_accuracy, held_out_accuracy=self.held_out_accuracy,
                 held_out_gap=self.held_out_gap, possible_leakage=self.possible_leakage)
        return d


class AblationSection(Protocol):
    """A part of the report a product adds below the held-out split (the Vantage course's
    checkpoints: ``pytest_sqleval/products/warehouse/course.py``), so the table never imports
    a product: its lines of ``ablation.md`` and its keys of ``ablation.json``. A backend
    brings its product's sections (``Backend.report_sections``) to a run's report."""

    def markdown(self, rows: list[AblationRow]) -> list[str]: ...

    def json(self, rows: list[AblationRow]) -> dict[str, Any]: ...


# -- reading --------------------------------------------------------------------------------
def load_records(paths: Iterable[str | Path]) -> list[CaseRecord]:
    """Every case record in the inputs, deduplicated by node id (the last one wins)."""
    merged: dict[str, CaseRecord] = {}
    anonymous: list[CaseRecord] = []
    for raw in paths:
        for rec in _records_of(Path(raw)):
            key = rec.nodeid
            if key:
                merged[key] = rec
            else:
                anonymous.append(rec)
    return list(merged.values()) + anonymous


def _records_of(path: Path) -> list[CaseRecord]:
    if path.is_dir():
        inner = path / "results.jsonl"
        if not inner.is_file():
            raise ReportInputError(f"{path}: a folder without results.jsonl. Fix: give the --sqleval-results folder, "
                                   "a results.jsonl, or a pytest-json-report file (--json-report)")
        path = inner
    if not path.is_file():
        raise ReportInputError(f"{path}: no such file")
    from ..core import BadInputError, read_text
    try:
        text = read_text(path)  # UTF-8 with or without a BOM; another encoding names its first bad line
    except BadInputError as exc:
        raise ReportInputError(str(exc).replace("\n  fix: ", ". Fix: ")) from None
    try:
        doc = json.loads(text)  # one JSON document: a pytest-json-report (or a single record)
    except ValueError:
        doc = None  # JSON lines
    if doc is not None:
        if isinstance(doc, dict) and "tests" in doc:  # pytest-json-report
            out = []
            for test in doc.get("tests") or []:
                rec = ((test or {}).get("metadata") or {}).get("sqleval")
                if isinstance(rec, dict):
                    out.append(_read(rec, path, None))
            return out
        if isinstance(doc, dict) and "case_id" in doc:
            return [_read(doc, path, None)]
        raise ReportInputError(f"{path}: a JSON file that is neither a pytest-json-report (no 'tests') nor a "
                               "results record. Fix: give results.jsonl or the --json-report file")
    out = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            raise ReportInputError(f"{path}:{lineno}: not valid JSON. Fix: give results.jsonl as written by a "
                                   "run, or a pytest-json-report file") from None
        out.append(_read(rec, path, lineno))
    return out


def _read(data: Any, path: Path, line: int | None) -> CaseRecord:
    """One JSON object of an input as a record; one that is not is a ``ReportInputError``
    naming the file and line (``CaseRecord.from_json_dict`` says why and what to do)."""
    from ..core import BadInputError
    try:
        return CaseRecord.from_json_dict(data, source=path, line=line,
                                         fix="give sqleval-results/results.jsonl or a pytest-json-report file")
    except BadInputError as exc:
        raise ReportInputError(str(exc).replace("\n  fix: ", ". Fix: ")) from None


# -- computing --------------------------------------------------------------------------------
def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _step(meta: Mapping[str, Any]) -> int | None:
    step = meta.get(ABLATION_STEP)
    return step if isinstance(step, int) and not isinstance(step, bool) else None


def is_held_out(rec: CaseRecord) -> bool:
    """Whether the record's case belongs to its suite's held-out split."""
    split = rec.case_metadata.get(SPLIT_KEY)
    return isinstance(split, str) and split not in ("", "main")


def has_ablation(records: Iterable[CaseRecord | Mapping[str, Any]]) -> bool:
    """Whether any record comes from one of an ablation's configurations."""
    return any(_step(rec.backend_metadata) is not None for rec in as_records(records))


HELD_OUT_FIELDS = ("main_passed", "main_graded", "main_accuracy", "held_out_passed", "held_out_graded",
                   "held_out_accuracy", "held_out_gap", "possible_leakage")


def held_out_by_backend(records: Iterable[CaseRecord | Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per backend, main against held-out accuracy and the leakage flag, as the ablation's rows
    compute them (the run's summary and terminal show the same numbers); empty when no case
    was held out."""
    records = as_records(records)
    if not any(is_held_out(rec) for rec in records):
        return {}
    return {row.config: {k: v for k, v in row.to_dict().items() if k in HELD_OUT_FIELDS}
            for row in ablation_rows(records)}


def ablation_rows(records: Iterable[CaseRecord | Mapping[str, Any]]) -> list[AblationRow]:
    """One row per backend, in the ablation's order (their ``ablation_step``), then the rest by name."""
    groups: dict[str, list[CaseRecord]] = {}
    for rec in as_records(records):
        groups.setdefault(str(rec.backend or "?"), []).append(rec)
    rows = []
    for name, recs in groups.items():
        row = AblationRow(name)
        calls, pt, ct, tt, lat, rr, costs = [], [], [], [], [], [], []
        cost_known = True
        models: set[str] = set()
        for rec in recs:
            row.cases += 1
            status = rec.status
            # leakage compares answers: a question the backend has no answer for (no_prediction)
            # counts against its accuracy, but would flag a file that skips the held-out set;
            # undecidable is graded, not a pass
            if status in ("passed", "failed", "undecidable") and rec.failure_kind != "no_prediction":
                held = is_held_out(rec)
                row.held_out_graded += held
                row.main_graded += not held
                row.held_out_passed += held and status == "passed"
                row.main_passed += not held and status == "passed"
            label = rec.gold_label
            if label is not None:
                row.gold_matches[rec.case_id] = label
            if status == "passed":
                row.passed += 1
                row.alternative_gold_passes += rec.alternative_gold
                row.column_policy_passes += rec.column_policy
                row.lenient_passes += rec.alternative_gold or rec.column_policy
            elif status == "failed":
                row.failed += 1
                cls = rec.error_class or "other"
                row.classes[cls if cls in row.classes else "other"] += 1
            elif status == "undecidable":
                row.failed += 1
            else:
                row.errors += 1
            meta = rec.backend_metadata
            if not row.components and isinstance(meta.get("components"), str):
                row.components = meta["components"]
            if row.step is None:
                row.step = _step(meta)
            if row.ingredients is None and isinstance(meta.get(LAYER_INGREDIENTS_KEY), list):
                row.ingredients = [str(i) for i in meta[LAYER_INGREDIENTS_KEY]]
            if meta.get("model"):
                models.add(str(meta["model"]))
            usage = rec.usage
            if usage.n_llm_calls is not None:
                calls.append(usage.n_llm_calls)
                pt.append(usage.prompt_tokens or 0.0)
                ct.append(usage.completion_tokens or 0.0)
                tt.append(usage.total_tokens or (pt[-1] + ct[-1]))
                if usage.cost_usd is None:
                    cost_known = False
                else:
                    costs.append(usage.cost_usd)
            if usage.repair_rounds is not None:
                rr.append(usage.repair_rounds)
            latency = usage.latency_ms
            if latency is None and status != "error":  # a crash's time is the run's, not a generation's to replay
                latency = finite_number(rec.generation.elapsed_ms) if rec.generation is not None else None
            if latency is not None:
                lat.append(latency)
        row.models = sorted(models)
        row.mean_calls, row.mean_prompt_tokens, row.mean_completion_tokens = _mean(calls), _mean(pt), _mean(ct)
        row.mean_total_tokens, row.mean_latency_ms, row.mean_repair_rounds = _mean(tt), _mean(lat), _mean(rr)
        row.total_cost_usd = round(sum(costs), 6) if calls and cost_known else None
        rows.append(row)
    rows.sort(key=lambda r: (r.step is None, r.step or 0, r.config))
    mark_pareto(rows)
    return rows


def consecutive_steps(rows: list[AblationRow]) -> Iterable[tuple[AblationRow, AblationRow]]:
    """Pairs of the run's consecutive ablation configurations (rows come sorted by step): a
    configuration the run left out is stepped over (without ``a2-desc``, which splits
    a1 -> a2 in two, a1 -> a2 is still one step)."""
    present = [r for r in rows if r.step is not None]
    yield from zip(present, present[1:])


def mark_pareto(rows: list[AblationRow]) -> list[AblationRow]:
    """Set ``pareto`` on the rows no other row dominates (accuracy up, mean calls down);
    rows without accuracy or calls (e.g. ``gold``) are left off the frontier."""
    pts = [r for r in rows if r.execution_accuracy is not None and r.mean_calls is not None]
    for r in rows:
        r.pareto = False
    for r in pts:
        acc, calls = r.execution_accuracy, r.mean_calls
        r.pareto = not any(o is not r and o.execution_accuracy >= acc and o.mean_calls <= calls  # type: ignore[operator]
                           and (o.execution_accuracy > acc or o.mean_calls < calls) for o in pts)  # type: ignore[operator]
    return rows


# -- writing --------------------------------------------------------------------------------
def _pct(v: float | None) -> str:
    return "–" if v is None else f"{100 * v:.1f}"


def _f(v: float | None, digits: int = 2) -> str:
    return "–" if v is None else f"{v:,.{digits}f}"


def render_markdown(rows: list[AblationRow], *, sources: Sequence[str] = (), plot: str | None = None,
                    plot_note: str | None = None, suites: Sequence[str] = (),
                    sections: Sequence[AblationSection] = ()) -> str:
    lines = ["# Ablation", ""]
    if sources:
        lines.append("Built from " + ", ".join(f"`{s}`" for s in sources)
                     + (f"; suites: {', '.join(suites)}" if suites else "") + ".")
    models = sorted({m for r in rows for m in r.models})
    if models:
        lines.append("Models: " + ", ".join(f"`{m}`" for m in models) + ".")
    from ..core import NOT_A_MODEL, is_mock
    if any(is_mock(m) for m in models):
        lines += ["", f"**Not a model:** {NOT_A_MODEL}. These rows show that the pipeline runs; "
                  "they say nothing about text-to-SQL."]
    lines += ["", "Execution accuracy = passed / graded cases; *errors* are cases that could not be graded "
              "(backend crash or timeout, untrustworthy gold). Calls, tokens and latency are means per question.", ""]
    head = (["config", "components", "exec acc (%)", "passed / graded"] + [CLASS_HEADERS[c] for c in ERROR_CLASSES]
            + ["errors", "mean LLM calls", "mean tokens (prompt / completion)", "mean latency (ms)",
               "mean repair rounds", "cost (USD)", "Pareto"])
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "|".join("---" if i < 2 else "---:" for i in range(len(head) - 1)) + "|:---:|")
    for r in rows:
        tokens = "–" if r.mean_total_tokens is None else (
            f"{r.mean_total_tokens:,.0f} ({r.mean_prompt_tokens:,.0f} / {r.mean_completion_tokens:,.0f})")
        cells = [f"**{r.config}**", r.components or "–", _pct(r.execution_accuracy), f"{r.passed} / {r.graded}"]
        cells += [str(r.classes[c]) for c in ERROR_CLASSES]
        cells += [str(r.errors), _f(r.mean_calls), tokens, _f(r.mean_latency_ms, 0), _f(r.mean_repair_rounds),
                  "–" if r.total_cost_usd is None else f"{r.total_cost_usd:.4f}", "★" if r.pareto else ""]
        lines.append("| " + " | ".join(cells) + " |")
    frontier = sorted((r for r in rows if r.pareto), key=lambda r: (r.mean_calls, -(r.execution_accuracy or 0)))
    lines += ["", "## Pareto frontier: accuracy against mean LLM calls per question", ""]
    if frontier:
        lines += ["| config | mean LLM calls | exec acc (%) | mean tokens |", "|---|---:|---:|---:|"]
        for r in frontier:
            lines.append(f"| {r.config} | {_f(r.mean_calls)} | {_pct(r.execution_accuracy)} | {_f(r.mean_total_tokens, 0)} |")
        off = [r.config for r in rows if not r.pareto and r.mean_calls is not None and r.execution_accuracy is not None]
        if off:
            lines += ["", "Dominated (another configuration is at least as accurate for no more calls): "
                      + ", ".join(off) + "."]
    else:
        lines.append("No configuration reported its LLM calls, so there is no frontier to draw.")
    if plot:
        lines += ["", f"![accuracy against mean LLM calls]({plot})"]
    elif plot_note:
        lines += ["", f"_{plot_note}_"]
    lines += _golds_section(rows)
    lines += _held_out_section(rows)
    for section in sections:  # a product's parts (the Vantage course's checkpoints)
        lines += section.markdown(rows)
    deltas = _deltas(rows)
    if deltas:
        lines += ["", "## What each step changed, per error class", "",
                  "| step | exec acc (pp) | " + " | ".join(CLASS_HEADERS[c] for c in ERROR_CLASSES)
                  + " | mean calls | mean tokens |",
                  "|---|" + "---:|" * (len(ERROR_CLASSES) + 3)]
        lines += deltas
    return "\n".join(lines) + "\n"


def _golds_section(rows: list[AblationRow]) -> list[str]:
    """How much the leniency contributed: per configuration, the passes that needed an
    alternative gold or a column policy, and per case which gold it was graded against."""
    if not any(r.gold_matches for r in rows):
        return []
    lines = ["", "## Several golds and column policies", "",
             "Passes that matched a gold other than the case's first, or needed a column policy "
             "(`columns = \"superset\"`, `condition_cols`); *strict* passes needed neither.", "",
             "| config | passed | via an alternative gold | via a column policy | strict passes | strict exec acc (%) |",
             "|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        strict = r.passed - r.lenient_passes
        lines.append(f"| {r.config} | {r.passed} | {r.alternative_gold_passes} | {r.column_policy_passes} | {strict} | "
                     f"{_pct(strict / r.graded if r.graded else None)} |")
    cases = sorted({c for r in rows for c in r.gold_matches})
    lines += ["", "Which gold each case was graded against:", "",
              "| case | " + " | ".join(r.config for r in rows) + " |", "|---|" + "---|" * len(rows)]
    for case in cases:
        lines.append(f"| {case} | " + " | ".join(r.gold_matches.get(case, "–") for r in rows) + " |")
    return lines


def _held_out_section(rows: list[AblationRow]) -> list[str]:
    """Main set against held-out set, per configuration; nothing when no case was held out."""
    if not any(r.held_out_graded for r in rows):
        return []
    out = ["", "## Main set against held-out questions", "",
           f"A gap above {100 * LEAKAGE_GAP:.0f} percentage points is flagged as possible leakage of the semantic "
           "layer: a layer written while watching the agent fail on the main set encodes fixes for those questions, "
           "which score there and not on questions nobody looked at.", "",
           "| config | main acc (%) | main passed / graded | held-out acc (%) | held-out passed / graded | gap (pp) | flag |",
           "|---|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        gap = "–" if r.held_out_gap is None else f"{100 * r.held_out_gap:+.1f}"
        out.append(f"| {r.config} | {_pct(r.main_accuracy)} | {r.main_passed} / {r.main_graded} | "
                   f"{_pct(r.held_out_accuracy)} | {r.held_out_passed} / {r.held_out_graded} | {gap} | "
                   f"{'**possible leakage**' if r.possible_leakage else ''} |")
    return out


def _deltas(rows: list[AblationRow]) -> list[str]:
    """One line per pair of rows on consecutive ablation steps (rows come sorted by step)."""
    out = []
    for x, y in consecutive_steps(rows):
        a, b = x.config, y.config

        def d(u: float | None, v: float | None, scale: float = 1.0, digits: int = 1) -> str:
            return "–" if u is None or v is None else f"{(v - u) * scale:+.{digits}f}"
        cells = [f"{a} → {b}", d(x.execution_accuracy, y.execution_accuracy, 100)]
        cells += [f"{y.classes[c] - x.classes[c]:+d}" for c in ERROR_CLASSES]
        cells += [d(x.mean_calls, y.mean_calls, 1, 2), d(x.mean_total_tokens, y.mean_total_tokens, 1, 0)]
        out.append("| " + " | ".join(cells) + " |")
    return out


def _xy(r: AblationRow) -> tuple[float, float]:
    """Where a row is plotted: its mean calls, its accuracy in percent."""
    assert r.mean_calls is not None and r.execution_accuracy is not None  # only rows with both are plotted
    return r.mean_calls, 100 * r.execution_accuracy


def plot_pareto(rows: list[AblationRow], path: Path) -> str | None:
    """Write the PNG; returns None, or why no plot was drawn (matplotlib missing, no points)."""
    pts = [r for r in rows if r.execution_accuracy is not None and r.mean_calls is not None]
    if not pts:
        return "No plot: no configuration reported its LLM calls."
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "No plot: matplotlib is not installed (pip install 'pytest-sqleval[plot]')."
    fig, ax = plt.subplots(figsize=(6.4, 4.4), dpi=120)
    for r in pts:
        x, y = _xy(r)
        ax.scatter([x], [y], s=60, zorder=3,
                   color="#1f77b4" if r.pareto else "#9a9a9a", edgecolor="black", linewidth=0.6)
    frontier = sorted((r for r in pts if r.pareto), key=lambda r: _xy(r)[0])
    if frontier:
        xs: list[float] = []
        ys: list[float] = []
        for r in frontier:  # a staircase: accuracy holds until the next frontier point
            x, y = _xy(r)
            if xs:
                xs.append(x)
                ys.append(ys[-1])
            xs.append(x)
            ys.append(y)
        ax.plot(xs, ys, color="#1f77b4", linewidth=1.5, zorder=2, label="Pareto frontier")
        ax.legend(loc="lower right", fontsize=8)
    ax.set_xlabel("mean LLM calls per question")
    ax.set_ylabel("execution accuracy (%)")
    ax.set_ylim(-5, 110)
    lo = min(_xy(r)[0] for r in pts)
    hi = max(_xy(r)[0] for r in pts)
    pad = max(0.25, (hi - lo) * 0.15)
    ax.set_xlim(max(0.0, lo - pad), hi + pad)
    ax.grid(True, alpha=0.3)
    ax.set_title("Accuracy against cost, per configuration"
                 + (" (mockllm: not a model)" if any(m.startswith("mockllm/") for r in pts for m in r.models) else ""))
    fig.tight_layout()
    _label_points(ax, pts)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return None


def _label_points(ax: Any, pts: list[AblationRow]) -> None:
    """Each point's configuration name, placed where it covers no other label: one that would
    overlap an earlier one moves a line up, with a leader line back to its point. Laid out in
    pixels, after the axes' limits are final."""
    from matplotlib.text import Text
    renderer = ax.figure.canvas.get_renderer()
    placed: list[Any] = []
    for r in sorted(pts, key=lambda r: (r.mean_calls, -(r.execution_accuracy or 0))):
        xy = _xy(r)
        for step in range(12):
            text = ax.annotate(r.config, xy, textcoords="offset points", xytext=(7, 4 + 12 * step), fontsize=9,
                               va="center", arrowprops=None if step == 0 else
                               {"arrowstyle": "-", "color": "#888", "linewidth": 0.6, "shrinkA": 0, "shrinkB": 4})
            text.update_positions(renderer)  # where the point puts it (otherwise computed at draw time)
            box = Text.get_window_extent(text, renderer).expanded(1.05, 1.2)  # the words, not the leader line
            if step == 11 or not any(box.overlaps(b) for b in placed):  # past 12 stacked points: the last line stays
                placed.append(box)
                break
            text.remove()


def write_ablation(records: Iterable[CaseRecord | Mapping[str, Any]], out_dir: str | Path = "report", *,
                   sources: Sequence[str] = (), rootdir: str | Path | None = None,
                   grading_args: Sequence[str] = (), sections: Sequence[AblationSection] = ()) -> dict[str, Path]:
    """Write ``ablation.md``, ``ablation.json`` and ``ablation.png`` into ``out_dir``.

    ``ablation.json`` also says where its numbers came from (:func:`provenance`), so
    ``python -m pytest_sqleval reproduce`` can regrade the same cases from the same cached
    generations; ``rootdir`` is the run's (its node ids are relative to it; default: the
    working directory), ``grading_args`` the run's options that change a verdict
    (``--sqleval-variants``), ``sections`` the parts a product adds to both files
    (:class:`AblationSection`)."""
    records = as_records(records)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rows = ablation_rows(records)
    png = out / "ablation.png"
    note = plot_pareto(rows, png)
    if note is not None:
        png.unlink(missing_ok=True)
    suites = sorted({str(r.suite) for r in records if r.suite})
    md = render_markdown(rows, sources=sources, plot=None if note else png.name, plot_note=note, suites=suites,
                         sections=sections)
    (out / "ablation.md").write_text(md, encoding="utf-8")
    doc: dict[str, Any] = {"rows": [r.to_dict() for r in rows], "sources": list(sources), "suites": suites}
    for section in sections:
        doc.update(section.json(rows))
    doc["provenance"] = provenance(records, out, Path.cwd() if rootdir is None else Path(rootdir), grading_args)
    (out / "ablation.json").write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    paths = {"markdown": out / "ablation.md", "json": out / "ablation.json"}
    if note is None:
        paths["plot"] = png
    return paths


def provenance(records: list[CaseRecord], out_dir: Path, rootdir: Path,
               grading_args: Sequence[str] = ()) -> dict[str, Any]:
    """What regrading needs to give the same numbers without asking any model: per row, the
    backend that replays its generations (``predictions:`` its predictions file, or ``gold``;
    None when there is nothing to replay), the node ids of its cases and whether its backend
    reported every latency (else the row's latency was measured, and cannot be replayed); each suite's database
    content hash; the run's rootdir, relative to the report folder; the options it graded
    with; and whether an LLM judge decided verdicts (then no regrade is free of model calls)."""
    def rel(path: str | Path) -> str:
        p = Path(path)
        try:
            return p.resolve().relative_to(rootdir.resolve()).as_posix()
        except (ValueError, OSError):
            return p.as_posix()

    configs: dict[str, dict[str, Any]] = {}
    hashes: dict[str, str] = {}
    for rec in records:
        entry = configs.setdefault(str(rec.backend or "?"),
                                   {"replay": None, "nodeids": [], "latency_reported": True})
        entry["nodeids"].append(rec.nodeid)
        spec = str(rec.backend_spec or "")
        meta = rec.backend_metadata
        if rec.status != "error" and rec.usage.latency_ms is None:
            entry["latency_reported"] = False  # its mean latency is this run's wall clock: no replay gives it again
        if entry["replay"] is None:
            if spec.startswith("predictions:"):
                path = Path(spec.split(":", 1)[1])
                entry["replay"] = "predictions:" + rel(path if path.is_absolute() else rootdir / path)
            elif isinstance(meta.get("predictions_file"), str):
                entry["replay"] = "predictions:" + rel(meta["predictions_file"])
            elif spec == "gold":
                entry["replay"] = "gold"
        if rec.suite and rec.content_hash:
            hashes[str(rec.suite)] = str(rec.content_hash)
    try:
        root = Path(os.path.relpath(rootdir.resolve(), out_dir.resolve())).as_posix()
    except ValueError:  # another drive
        root = rootdir.resolve().as_posix()
    judged = any(rec.run_metadata.get("judge_mode") == "decide" for rec in records)
    return {"rootdir": root, "configs": configs, "content_hashes": hashes, "grading_args": list(grading_args),
            "judge_decided": judged}


def main(argv: Sequence[str] | None = None, sections: Sequence[AblationSection] = ()) -> int:
    """``python -m pytest_sqleval report <results.jsonl | results folder | json-report> ... [--out DIR]``;
    ``sections``: the parts a product adds (the command line passes the Vantage course's)."""
    parser = argparse.ArgumentParser(prog="python -m pytest_sqleval report",
                                     description="Rebuild the ablation table and its Pareto plot from finished runs.")
    parser.add_argument("inputs", nargs="*", default=["sqleval-results"],
                        help="results.jsonl files or folders, and pytest-json-report files (default: sqleval-results)")
    parser.add_argument("--out", default="report", help="output folder (default: report)")
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        records = load_records(args.inputs)
    except ReportInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not records:
        print("error: the inputs hold no case records. Fix: run pytest on a suite first (results land in "
              "sqleval-results/), or pass --json-report files of such runs", file=sys.stderr)
        return 2
    paths = write_ablation(records, args.out, sources=[str(p) for p in args.inputs], sections=sections)
    rows = ablation_rows(records)
    for r in rows:
        held = (f"  main {_pct(r.main_accuracy):>5} % / held-out {_pct(r.held_out_accuracy):>5} %"
                f"{'  POSSIBLE LEAKAGE' if r.possible_leakage else ''}") if r.held_out_graded else ""
        print(f"{r.config:>10}  exec acc {_pct(r.execution_accuracy):>5} %  calls {_f(r.mean_calls):>5}  "
              f"tokens {_f(r.mean_total_tokens, 0):>7}{'  *pareto' if r.pareto else ''}{held}")
    for kind, p in paths.items():
        print(f"{kind}: {p}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
