"""The send layer: the prediction, in the engine's dialect, sent to the engine process."""
from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from ..tree_wire import SHIP_TREE, to_wire
from .base import Candidate
from .structure import StructureLayer


#: the longest prediction whose structural diff the engine process makes: it parses the text
#: again, and a huge prediction's parse (an IN of 20,000 values: seconds) is made here already
STRUCTURE_SQL_MAX = 4096


class SendLayer:
    """Sends the candidate, in the engine's dialect, to the engine process; its result is
    collected by ``ExecutionLayer``. Nothing to send without a database. With it goes the
    gold's side of the structural diff, when the built-in structure layer runs, the engine
    is a process of its own, not behind this one, and the gold's answer was stored before:
    the engine makes the diff (``StructureLayer`` reads it)."""

    name, ahead = "send", True

    def run(self, c: Candidate) -> None:
        grader = c.grader
        if c.stopped or grader.host is None or c.parsed is None:
            return
        try:
            c.executed_sql = grader.to_engine(c.parsed.expression, c.sql)
        except RecursionError:  # the engine's own parser says whether it can run the original
            c.executed_sql = c.sql
            c.layers["parse"] = replace(c.layers["parse"], layer_error="recursion: not transpiled, executed as written")
        c.sent_at = time.perf_counter()
        gold = c.gold
        payload: dict[str, Any] = {"sql": c.executed_sql, "gold_key": gold.key, "spec": gold.policy.to_wire(),
                                   "gold_sql": gold.sql}
        if gold.alternatives or gold.kind != "sql":  # several golds: the engine compares with each until one matches
            payload.update(gold_index=gold.index, gold_kind=gold.kind, alternatives=[
                {"gold_key": alt.key, "spec": alt.policy.to_wire(), "index": alt.index, "kind": alt.kind,
                 "gold_sql": alt.sql} for alt in gold.alternatives])
        side = gold.analysis.structure if gold.analysis is not None and gold.kind == "sql" else None
        if side is not None and gold.cached and len(c.sql) <= STRUCTURE_SQL_MAX and \
                not getattr(grader.host, "in_process", True) and not getattr(grader.host, "behind", False) and \
                any(type(layer) is StructureLayer for layer in getattr(grader, "layers", ())):
            # The structural diff is made in the engine process beside the execution when the
            # gold's answer was read from the store: that engine process has CPU to spare while
            # the grading process (pytest's, the serial run's critical path) does not. A gold
            # run in this run (a first run) already keeps the engine busy: the diff stays here;
            # so it does while the engine is the slower process (its queries cost more than
            # this process's work: ``EngineHost.behind``), for this process would wait anyway.
            payload["structure"] = {"sql": c.sql, "dialect": grader.dialect, "gold": side.to_json(),
                                    "budget_s": max(0.0, c.budget.seconds - c.budget.spent)}
            if SHIP_TREE and c.sql != side.sql and c.parsed.expression is not None:
                # the tree as parsed here, so the engine process need not parse the text again
                payload["structure"]["tree"] = to_wire(c.parsed.expression, c.parsed.nodes)
            c.structure_sent = gold
        if gold.spider2 is not None:  # Spider 2.0's official verdict, beside ours (engine_side._spider2)
            payload["spider2"] = gold.spider2
        chosen = (grader.variant_set.known(gold.key, gold.sql)
                  if grader.variant_set is not None and gold.sql is not None else None)
        if chosen is not None and not c.same_sql_as_gold:
            # The engine runs a match on the variants in the same request, while this
            # process goes on with the case: the wait for them overlaps pytest's work.
            payload["variants"] = {"gold": gold.request, "variants": chosen.variants}
        c.ticket = grader.host.submit("grade", payload, ahead=c.ahead)
