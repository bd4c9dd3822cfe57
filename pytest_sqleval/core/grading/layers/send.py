"""The send layer: the prediction, in the engine's dialect, sent to the engine process."""
from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from .base import Candidate


class SendLayer:
    """Sends the candidate, in the engine's dialect, to the engine process; its result is
    collected by ``ExecutionLayer``. Nothing to send without a database."""

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
        if gold.spider2 is not None:  # Spider 2.0's official verdict, beside ours (engine_side._spider2)
            payload["spider2"] = gold.spider2
        chosen = (grader.variant_set.known(gold.key, gold.sql)
                  if grader.variant_set is not None and gold.sql is not None else None)
        if chosen is not None and not c.same_sql_as_gold:
            # The engine runs a match on the variants in the same request, while this
            # process goes on with the case: the wait for them overlaps pytest's work.
            payload["variants"] = {"gold": gold.request, "variants": chosen.variants}
        c.ticket = grader.host.submit("grade", payload, ahead=c.ahead)
