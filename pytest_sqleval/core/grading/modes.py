"""The judge's modes, apart from the verdict that reads them: checking ``--sqleval-judge``
when pytest starts must not import the grader (and sqlglot with it) on every run."""
from __future__ import annotations

JUDGE_MODES = ("off", "advisory", "decide")
