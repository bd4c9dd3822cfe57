"""What a person reads: the failure repr of one case and the run summary."""
from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any, Mapping

from ..core import REFUSED, TRACE_REPORT_KEY, engine_display
from ..core.records import CaseRecord
from .sidebyside import sidebyside_lines

MAX_SQL_LINES = 12
MAX_LINE_CHARS = 500  # a failure text's line is cut here, and says so; the results file has the rest


def _article(word: str) -> str:
    """``word`` with its indefinite article: an aggregate error, a join error."""
    return f"{'an' if word[:1].lower() in 'aeiou' else 'a'} {word}"


def _line(text: str) -> str:
    if len(text) <= MAX_LINE_CHARS:
        return text
    return f"{text[:MAX_LINE_CHARS]}… ({len(text):,} characters, truncated; see the results file)"


def _sql(sql: str | None) -> str:
    if sql is None:
        return "    (none)"
    lines = sql.strip().splitlines() or [""]
    if len(lines) > MAX_SQL_LINES:
        lines = lines[:MAX_SQL_LINES] + [f"... ({len(lines) - MAX_SQL_LINES} more lines in the results file)"]
    return textwrap.indent("\n".join(lines), "    ")


def _rows(rows: list[list[Any]] | None, limit: int = 5) -> str:
    if not rows:
        return "      (none)"
    return "\n".join(f"      {tuple(r)!r}" for r in rows[:limit])


def display_path(path: str) -> str:
    """``path`` relative to the working directory when it lies under it (``runs/a1/traces/q04.md``)."""
    try:
        return Path(path).resolve().relative_to(Path.cwd().resolve()).as_posix()
    except (ValueError, OSError):
        return path


def _official_rewrite_lines(rec: CaseRecord) -> list[str]:
    """What Spider's official evaluator does to this prediction before running it, and
    its verdict on what it runs: graded as written here, it may pass there."""
    rewrites = rec.layer("official").get("rewrites") or []
    if not rewrites:
        return []
    what = {"value_placeholder": "the placeholder", "spaced_operator": "the spaced operator",
            "current_year": "the MySQL call"}
    said = "; ".join(
        f"{what.get(r['rewrite'], r['rewrite'])} {r['text']!r} (line {r['line']}, col {r['col']}"
        + (f", {r['count']} times" if r["count"] > 1 else "") + "): "
        + (f"joined to {r['becomes']!r}" if r["rewrite"] == "spaced_operator" else
           r["becomes"] if r["rewrite"] == "value_placeholder" else f"becomes {r['becomes']!r}")
        for r in rewrites)
    sbs = rec.compare.get("sidebyside") if rec.compare else rec.sidebyside
    verdicts: dict[Any, str] = {True: "pass", False: "fail"}
    verdict = verdicts.get((sbs or {}).get("spider"), "undecided")
    return [f"  graded as written; Spider's official evaluator rewrites it before running it: {said}; "
            f"its verdict on the rewritten query: {verdict}"]


def _golds_lines(golds: Any) -> list[str]:
    """A case of several golds: the gold the comparison below is against (the nearest), and
    how the prediction differs from each gold tried."""
    if not isinstance(golds, Mapping) or not golds.get("golds"):
        return []
    out = [f"  golds: compared with the nearest, gold {golds.get('compared')}"
           + ("" if golds.get("structural", True) else " (a result file: no SQL, no structural layers)")]
    for g in golds["golds"]:
        source = g.get("source") or ""
        source = source if len(source) <= 80 else source[:77] + "..."
        why = "matches" if g.get("match") else f"differs: {g.get('reason')}"
        if not g.get("match") and g.get("gold_rows") is not None:
            why += f" (rows {g.get('pred_rows')} vs gold {g.get('gold_rows')}, columns {len(g.get('gold_columns') or [])} in gold)"
        out.append(f"    gold {g['index']} [{g.get('kind', 'sql')}] {source}: {why}")
    return out


def render_failure(record: CaseRecord | Mapping[str, Any]) -> str:
    """Short enough for a terminal; the results file has everything."""
    rec = CaseRecord.of(record)
    head = {"undecidable": "UNDECIDABLE on this database, not a pass", "error": "NOT GRADED (case error)"}.get(
        rec.status)
    out = [f"{rec.case_id} [{rec.backend}]: " + (f"{head} ({rec.failure_kind})" if head else
                                                 f"{rec.error_class} ({rec.failure_kind}, "
                                                 f"confidence {rec.confidence:.2f})"),
           f"  why: {rec.explanation}",
           f"  question: {rec.question}",
           "  predicted SQL:", _sql(rec.generated_sql),
           "  gold SQL:", _sql(rec.gold_sql)]
    layers = rec.layers
    out += _golds_lines(layers.get("golds"))
    parse = layers.get("parse") or {}
    if parse and not parse.get("ok"):
        err = parse.get("error") or {}
        out.append(f"  layer parse failed at line {err.get('line')}, col {err.get('col')}: {err.get('message')}")
    safety = layers.get("safety") or {}
    if safety and not safety.get("ok"):
        out.append(f"  layer safety refused it: {safety.get('reason')} - {safety.get('detail')}")
    for kind, items in (("tables", rec.hallucinated_tables), ("columns", rec.hallucinated_columns)):
        if items:
            out.append(f"  hallucinated {kind}: " + ", ".join(
                f"{h['name']} (line {h.get('line')}, col {h.get('col')})" for h in items))
    if rec.stale_tables:
        out.append("  deprecated tables referenced: " + ", ".join(rec.stale_tables))
    ex = rec.execution or {}
    err = ex.get("error")
    if err and err.get("exception") == REFUSED:  # a sandbox rule, named as the safety layer names its own
        out.append(f"  the {engine_display(rec.engine)} sandbox refused it: {err.get('subject')} - "
                   f"{err['message'].split('): ', 1)[-1].splitlines()[0]}")
    elif err:
        out.append(f"  layer execute failed: {err['category']}: {err['message'].splitlines()[0]}")
    cmp = rec.compare
    if cmp:
        out.append(f"  layer compare: {cmp['reason']}; rows {cmp['pred_rows']} vs gold {cmp['gold_rows']}; "
                   f"columns {len(cmp['pred_columns'])} vs gold {len(cmp['gold_columns'])}; "
                   f"row F1 {cmp['row_f1']:.2f}; {'ordered' if cmp['ordered'] else 'unordered'}")
        if cmp["reason"] in ("arity_mismatch", "type_mismatch"):
            out.append(f"    predicted columns: {list(zip(cmp['pred_columns'], cmp['pred_kinds']))}")
            out.append(f"    gold columns:      {list(zip(cmp['gold_columns'], cmp['gold_kinds']))}")
        if cmp.get("first_diff"):
            d = cmp["first_diff"]
            out.append(f"    first difference at row {d['position'] + 1}: predicted {d['predicted']} vs gold {d['gold']}")
        if cmp.get("missing_rows") or cmp.get("extra_rows"):
            out.append("    gold rows missing from the prediction:")
            out.append(_rows(cmp.get("missing_rows")))
            out.append("    predicted rows not in the gold:")
            out.append(_rows(cmp.get("extra_rows")))
    mismatch = (layers.get("variants") or {}).get("mismatch")
    if mismatch:
        out.extend(_coincidence_lines(mismatch))
    out.extend(_official_rewrite_lines(rec))
    for name in ("grounding", "structure", "diagnostics"):  # evidence a layer could not give
        why = (layers.get(name) or {}).get("skipped") or (layers.get(name) or {}).get("layer_error")
        if why:
            out.append(f"  {name}: not available ({why})")
    struct = layers.get("structure")
    if struct and struct.get("distance") is not None:
        diff = ", ".join(struct["differing_clauses"]) or "none"
        out.append(f"  structure: clauses that differ from the gold: {diff} (distance {struct['distance']:.2f}; "
                   f"exact match {'yes' if struct['exact_match'] else 'no'})")
    diag = layers.get("diagnostics")
    if diag and diag.get("most_likely"):
        top = diag.get("candidates") or [[diag["most_likely"], diag["scores"][diag["most_likely"]]]]
        flags = [f for f, on in (("cardinality explosion", diag["cardinality_explosion"]),
                                 ("ordering only", diag["ordering_only"]), ("ambiguous", diag["ambiguous"])) if on]
        out.append(f"  diagnosis: most likely {_article(diag['most_likely'])} error ("
                   + ", ".join(f"{k} {v:.2f}" for k, v in top) + f"); evidence {diag['evidence_strength']}"
                   + (f"; {', '.join(flags)}" if flags else ""))
    for advice in (diag or {}).get("advice") or []:
        out.append(f"  what to do: {advice}")
    trace = rec.backend_metadata.get(TRACE_REPORT_KEY)
    if trace:
        out.append(f"  trace (what the backend retrieved, asked and answered): {display_path(trace)}")
    return "\n".join(_line(line) for chunk in out for line in chunk.split("\n"))


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _held_out_line(h: dict[str, Any]) -> str:
    """Main set against held-out questions; the flag is the ablation's (``possible_leakage``)."""
    from .ablation import LEAKAGE_GAP
    gap = h.get("held_out_gap")
    return (f"    held out: main {_pct(h['main_accuracy'])} ({h['main_passed']}/{h['main_graded']}) vs held-out "
            f"{_pct(h['held_out_accuracy'])} ({h['held_out_passed']}/{h['held_out_graded']})"
            + ("" if gap is None else f", gap {100 * gap:+.1f} pp")
            + (f" | POSSIBLE LEAKAGE: main beats held-out by more than {100 * LEAKAGE_GAP:.0f} pp, as a semantic "
               "layer fitted to the main questions does" if h.get("possible_leakage") else ""))


def _coincidence_lines(mismatch: dict[str, Any]) -> list[str]:
    """Where a result that matched on the database stops matching: the variant, both
    results there, and the rows that differ."""
    out = [f"  layer variants: matches on the database, not on variant {mismatch['variant']} ({mismatch['kind']})"]
    err = (mismatch.get("execution") or {}).get("error")
    if err:
        out.append(f"    on the variant it fails: {err['category']}: {err['message'].splitlines()[0]}")
        return out
    cmp = mismatch.get("compare") or {}
    out.append(f"    on the variant: {cmp.get('reason')}; rows {cmp.get('pred_rows')} vs gold {cmp.get('gold_rows')}")
    out.append("    gold result there:")
    out.append(_rows(mismatch.get("gold_preview")))
    out.append("    predicted result there:")
    out.append(_rows(mismatch.get("pred_preview")))
    if cmp.get("missing_rows") or cmp.get("extra_rows"):
        out.append("    gold rows missing from the prediction there:")
        out.append(_rows(cmp.get("missing_rows")))
        out.append("    predicted rows not in the gold there:")
        out.append(_rows(cmp.get("extra_rows")))
    return out


def summary_lines(summary: dict[str, Any]) -> list[str]:
    lines = []
    for name, b in summary["backends"].items():
        lines.append(f"backend {name}: {b['cases']} cases, {b['passed']} passed, {b['failed']} failed, "
                     + (f"{b['undecidable']} undecidable, " if b.get("undecidable") else "")
                     + f"{b['errors']} errors | pass rate {_pct(b['pass_rate'])} | execution accuracy "
                     f"{_pct(b['execution_accuracy'])} | parse {_pct(b['parse_rate'])} | grounding "
                     f"{_pct(b['grounding_rate'])}")
        if b.get("held_out"):
            lines.append(_held_out_line(b["held_out"]))
        if b.get("tie_only_passes") or b.get("undecidable"):
            lines.append(f"    ties: {b.get('tie_only_passes', 0)} pass(es) rest only on a tie group the gold's LIMIT "
                         f"cuts (tie-only); {b.get('undecidable', 0)} undecidable on this database (every row the "
                         "gold ranks ties), counted as not passed")
        if b.get("judged") or b.get("judge_skipped"):
            lines.append(f"    judge: {b['judged']} judged, {b['judge_skipped']} skipped | equivalence rate "
                         f"{_pct(b['equivalence_rate'])} | agreement with execution {_pct(b['judge_agreement_rate'])}")
            for d in b.get("judge_disagreements", [])[:10]:
                lines.append(f"      disagreement {d['case_id']}: execution says {d['deterministic']}, "
                             f"judge says {d['judge']}")
        hist = b["error_classes"]
        width = max(hist.values() or [0])
        for cls in hist:  # the built-in classes in precedence order, then a plugin's
            bar = "#" * (round(20 * hist[cls] / width) if width else 0)
            lines.append(f"    {cls:<20} {hist[cls]:>5}  {bar}")
        if b.get("test_suite_accuracy") is not None:
            lines.append(f"    variants: execution accuracy {_pct(b['snapshot_accuracy'])} on the database alone, "
                         f"{_pct(b['test_suite_accuracy'])} on the database and its variants (test-suite accuracy); "
                         f"{b['coincidental_passes']} coincidental pass(es) caught")
        if b.get("variant_unchecked_cases"):
            lines.append(f"    VARIANTS NOT CHECKED: {b['variant_unchecked_cases']} matching case(s) pass on the database "
                         f"alone: their check on the variants failed (first: {b['variant_check_error']}); "
                         "see each record's layers.variants.error")
        if b.get("no_prediction"):
            lines.append(f"    no prediction: {b['no_prediction']} case(s) the backend has no answer for; they fail "
                         "(counted in class other)")
        if b["case_errors"]:
            lines.append("    case errors: " + ", ".join(f"{k} {v}" for k, v in sorted(b["case_errors"].items())))
        lines.extend(sidebyside_lines(name, b))
    if summary.get("cases_lost"):
        lines.append(f"LOST: {summary['cases_lost']} case(s) produced no result (a worker crashed?)")
    for suite, info in summary.get("suites", {}).items():
        lines.append(f"suite {suite}: {info['engine']} {info['engine_version']}, content hash {info['content_hash'][:16]}")
    return lines
