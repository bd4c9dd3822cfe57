"""The Vantage course's parts of the ablation report (Lab 3, checkpoints 3.2 and 3.3), which
the agent's configurations bring to a run's report (``Backend.report_sections``) and the
``report`` and ``reproduce`` commands pass to it: the table itself
(``pytest_sqleval.reports.ablation``) knows no course.

*The semantic layer's ingredients* (seed 002, checkpoints 3.2 and 3.3): a configuration's
records name the layer's ingredients it gives the model (``backend_metadata["layer_ingredients"]``:
``descriptions``, ``joins``, ``anti_patterns``). The configuration the first ingredient is
added to (a1 in the Lab) gets its error-class histogram: the failures documentation has to
reach. Each step that only adds ingredients gets its price: the accuracy it bought
(percentage points of execution accuracy) per 1,000 mean prompt tokens it added per question.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from ...reports.ablation import CLASS_HEADERS, ERROR_CLASSES, AblationRow, consecutive_steps

INGREDIENT_NAMES = {"descriptions": "descriptions", "joins": "join paths", "anti_patterns": "anti-patterns"}


@dataclass
class IngredientStep:
    """What one step that only adds semantic-layer ingredients bought, and at what price."""

    base: str
    config: str
    added: list[str]
    accuracy_delta: float | None  # execution accuracy, as a fraction
    added_prompt_tokens: float | None  # mean prompt tokens per question
    pp_per_1k_tokens: float | None  # percentage points bought per 1,000 added prompt tokens

    @property
    def label(self) -> str:
        return " + ".join(INGREDIENT_NAMES.get(i, i) for i in self.added)


def ingredient_steps(rows: list[AblationRow]) -> list[IngredientStep]:
    """Each consecutive step whose configuration gives the model the same ingredients and more;
    the price is left out (None) when the step added no prompt tokens on average."""
    out = []
    for x, y in consecutive_steps(rows):
        if x.ingredients is None or y.ingredients is None or not set(x.ingredients) < set(y.ingredients):
            continue
        acc = (None if x.execution_accuracy is None or y.execution_accuracy is None
               else y.execution_accuracy - x.execution_accuracy)
        tokens = (None if x.mean_prompt_tokens is None or y.mean_prompt_tokens is None
                  else y.mean_prompt_tokens - x.mean_prompt_tokens)
        per_1k = 100 * acc / tokens * 1000 if acc is not None and tokens is not None and tokens > 0 else None
        out.append(IngredientStep(x.config, y.config, [i for i in y.ingredients if i not in x.ingredients],
                                  acc, tokens, per_1k))
    return out


def layer_baseline(rows: list[AblationRow]) -> AblationRow | None:
    """The configuration the semantic layer's first ingredient is added to (a1 in the Lab)."""
    steps = ingredient_steps(rows)
    return next((r for r in rows if r.config == steps[0].base), None) if steps else None


def _baseline_section(rows: list[AblationRow]) -> list[str]:
    """Checkpoint 3.2: the failures of the configuration before the semantic layer, per class."""
    base = layer_baseline(rows)
    if base is None:
        return []
    top = max(list(base.classes.values()) + [1])
    out = ["", f"## Error classes before the semantic layer ({base.config})", "",
           f"Failing cases of **{base.config}** per error class: what the semantic layer's ingredients "
           f"have to reach ({base.failed} failed of {base.graded} graded).", "",
           "| error class | failing cases | |", "|---|---:|---|"]
    out += [f"| {CLASS_HEADERS[c]} | {base.classes[c]} | {'█' * round(20 * base.classes[c] / top)} |"
            for c in ERROR_CLASSES]
    return out


def _ingredients_section(rows: list[AblationRow]) -> list[str]:
    """Checkpoint 3.3: the accuracy each added ingredient bought per added context token."""
    steps = ingredient_steps(rows)
    if not steps:
        return []
    out = ["", "## Accuracy per added context token, per semantic-layer ingredient", "",
           "Each step that only adds ingredients of the semantic layer: the execution accuracy it bought and the "
           "mean prompt tokens per question it added.", "",
           "| ingredient | step | exec acc (pp) | mean prompt tokens added | pp per 1k added tokens |",
           "|---|---|---:|---:|---:|"]
    for st in steps:
        out.append(f"| {st.label} | {st.base} → {st.config} | "
                   f"{'–' if st.accuracy_delta is None else f'{100 * st.accuracy_delta:+.1f}'} | "
                   f"{'–' if st.added_prompt_tokens is None else f'{st.added_prompt_tokens:+,.0f}'} | "
                   f"{'–' if st.pp_per_1k_tokens is None else f'{st.pp_per_1k_tokens:+.2f}'} |")
    priced = [st for st in steps if st.pp_per_1k_tokens is not None]
    best = max(priced, key=lambda st: st.pp_per_1k_tokens or 0.0) if priced else None
    out.append("")
    if best is not None and (best.pp_per_1k_tokens or 0) > 0:
        out.append(f"Most accuracy per added token: **{best.label}** ({best.base} → {best.config}), "
                   f"{best.pp_per_1k_tokens:+.2f} pp per 1,000 added prompt tokens.")
    else:
        out.append("No ingredient bought accuracy on this run.")
    together = [st for st in steps if len(st.added) > 1]
    if together:
        out.append("")
        out.append(" ".join(f"{st.config} adds {st.label} together, so they share a line; a configuration that "
                            "adds one of them alone would give each its own." for st in together))
    return out


class SemanticLayerCheckpoints:
    """Checkpoints 3.2 and 3.3 as a section of the ablation report (``reports.ablation.AblationSection``)."""

    def markdown(self, rows: list[AblationRow]) -> list[str]:
        return _baseline_section(rows) + _ingredients_section(rows)

    def json(self, rows: list[AblationRow]) -> dict[str, Any]:
        base = layer_baseline(rows)
        return {"layer_baseline": None if base is None else {"config": base.config, "failed": base.failed,
                                                            "graded": base.graded, "error_classes": base.classes},
                "ingredients": [{**asdict(st), "label": st.label} for st in ingredient_steps(rows)]}


#: what the course adds to an ablation report: to every run's, through the entry-point group
#: ``pytest_sqleval.report_sections`` (a run that replays the agent's predictions has no agent
#: backend to bring it), and by the agent's backends and the ``report``/``reproduce`` commands
SEMANTIC_LAYER_CHECKPOINTS = SemanticLayerCheckpoints()
COURSE_SECTIONS = (SEMANTIC_LAYER_CHECKPOINTS,)
