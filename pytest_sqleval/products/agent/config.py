"""The named agent configurations of the ablation (seed 002, Lab 3) and their budgets.

Each configuration switches one component on or off, so the ablation table can say what
each component is worth per error class:

| config | schema context | semantic layer | self-check |
|---|---|---|---|
| ``a0`` | the first 20 tables alphabetically (no retrieval) | none | off |
| ``a1`` | BM25 retrieval, at most 20 tables / 8k tokens | none | on, at most 3 repair rounds |
| ``a2-desc`` | as a2 | a2 without the join paths (seed 002's checkpoint 3.3 prices them apart) | on |
| ``a2`` | retrieval over tables *and* the layer's text | descriptions, measures, filters, joins | on |
| ``a3`` | as a2 | a2 + anti-patterns and the deprecated-table list | on |
| ``a3-sc`` | as a3 | as a3 | off |
| ``raw_llm`` | every table, names and types only, up to 8k tokens | none | off |
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any, Literal

#: Bumped whenever a prompt's wording changes; part of every backend fingerprint and record.
PROMPT_VERSION = "agent-v2"  # v2: the "null" expected shape is told to the model

ContextStrategy = Literal["alphabetical", "retrieval", "compact"]
LayerLevel = Literal["none", "descriptions", "anti_patterns"]


#: The semantic layer's ingredients (seed 002, checkpoint 3.3) each layer level gives the model:
#: a2 adds the descriptions (with measures, filters, dimensions) and the join paths together, as
#: the handout's A2 does (a2-desc, without ``joins``, prices the two apart); a3 adds the
#: anti-patterns (with the deprecated-table list).
LAYER_INGREDIENTS: dict[str, tuple[str, ...]] = {
    "none": (), "descriptions": ("descriptions", "joins"), "anti_patterns": ("descriptions", "joins", "anti_patterns")}


@dataclass(frozen=True)
class AgentConfig:
    """One point of the ablation: which components run, and the budgets they run under."""

    name: str
    context: ContextStrategy
    layer: LayerLevel = "none"
    self_check: bool = False
    components: str = ""
    # context caps (seed 002: "<= 20 tables / 8k tok")
    max_tables: int | None = 20
    max_context_tokens: int = 8000
    # self-check (seed 002: "<= 3 repair rounds")
    max_repair_rounds: int = 3
    # budgets per case, enforced before every model call
    max_llm_calls: int = 4
    max_total_tokens: int = 64_000
    max_latency_s: float = 240.0
    # the model call
    temperature: float = 0.0
    # the layer's join paths: in each table's notes, and the tables they join pulled into the context
    joins: bool = True

    @property
    def uses_layer(self) -> bool:
        return self.layer != "none"

    @property
    def uses_anti_patterns(self) -> bool:
        return self.layer == "anti_patterns"

    @property
    def layer_ingredients(self) -> tuple[str, ...]:
        return tuple(i for i in LAYER_INGREDIENTS[self.layer] if i != "joins" or self.joins)

    def fingerprint_dict(self) -> dict[str, Any]:
        """What decides a generation: everything but the human description."""
        d = asdict(self)
        d.pop("components", None)
        return d

    def with_budgets(self, **kw: Any) -> "AgentConfig":
        return replace(self, **kw)


CONFIGS: dict[str, AgentConfig] = {
    "a0": AgentConfig("a0", "alphabetical", "none", False, "no retrieval (first 20 tables alphabetically), no layer, "
                      "no self-check", max_llm_calls=1),
    "a1": AgentConfig("a1", "retrieval", "none", True, "retrieval + self-check"),
    "a2-desc": AgentConfig("a2-desc", "retrieval", "descriptions", True,
                           "a1 + semantic layer descriptions, without its join paths", joins=False),
    "a2": AgentConfig("a2", "retrieval", "descriptions", True, "a1 + semantic layer (descriptions + joins)"),
    "a3": AgentConfig("a3", "retrieval", "anti_patterns", True, "a2 + anti-patterns"),
    "a3-sc": AgentConfig("a3-sc", "retrieval", "anti_patterns", False, "a3 without self-check", max_llm_calls=1),
}

RAW_LLM = AgentConfig("raw_llm", "compact", "none", False, "one call; every table's columns, up to 8k tokens",
                      max_tables=None, max_llm_calls=1)

#: The ablation's order, used by reports.
ABLATION_ORDER: tuple[str, ...] = ("a0", "a1", "a2-desc", "a2", "a3", "a3-sc")
