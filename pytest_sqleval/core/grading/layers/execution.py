"""The execution layer: the engine's answer to the prediction, its execution record and result comparison."""
from __future__ import annotations

import time

from ...engines.host import HostCrashed, HostTimeout
from ..execute import engine_failure_record, timeout_record
from .base import Candidate


class ExecutionLayer:
    """The engine's answer to the candidate sent by ``SendLayer``: the execution record and
    the result comparison (made in the engine process, next to the gold answer)."""

    name, ahead = "execution", False

    def run(self, c: Candidate) -> None:
        if c.ticket is None:
            return
        c.budget.pause()  # execution has its own limits, enforced in the engine process
        compare = None
        try:
            answer = c.grader.host.result(c.ticket)
            execution, compare = answer["execution"], answer["compare"]
            c.variants_answer = answer.get("variants")
            if answer.get("pred_preview") is not None:
                execution["preview"] = answer["pred_preview"]
            if answer.get("over_cap") is not None:  # more rows than the cap, against a gold of at most that many
                execution["over_cap"] = answer["over_cap"]
            if answer.get("sidebyside") is not None:  # no result of ours: the peers' verdicts stand alone
                c.layers["official"] = {"sidebyside": answer["sidebyside"]}
        except HostTimeout as exc:
            execution = timeout_record(str(exc), round((time.perf_counter() - c.sent_at) * 1000, 3), exc.over_limit)
        except HostCrashed as exc:  # the engine failed on this query, or died: not a timeout
            execution = engine_failure_record(str(exc), round((time.perf_counter() - c.sent_at) * 1000, 3))
        c.budget.resume()
        c.layers["execution"] = execution
        c.layers["compare"] = compare
