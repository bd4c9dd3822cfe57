"""xdist scheduling by database: under ``-n N`` a worker gets whole databases, not every
Nth case, so it opens (and reads the gold answers of) only its share of a Spider/BIRD
suite's databases. Cases of a one-database suite go in runs of ``CHUNK`` consecutive
cases, so every worker still shares the work; any other test is a unit of its own, as
with ``--dist load``. Runs in the xdist controller, which collects nothing: it reads a
suite's cases (not its databases) to know which database each node id belongs to."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from xdist.scheduler import LoadScopeScheduling

CHUNK = 16  # consecutive cases of a one-database suite sent to a worker at a time


class DatabaseScheduling(LoadScopeScheduling):
    """xdist's scheduling by scope, where a case's scope is its database."""

    def __init__(self, config: Any, log: Any = None) -> None:
        super().__init__(config, log)
        self._scopes: dict[str, dict[str, str]] = {}  # questions file's node id -> {item name: scope}

    def _split_scope(self, nodeid: str) -> str:
        nodeid = str(nodeid)
        parent, sep, name = nodeid.rpartition("::")
        if not sep:
            return nodeid
        scopes = self._scopes.get(parent)
        if scopes is None:
            scopes = self._scopes[parent] = case_scopes(Path(self.config.rootpath) / parent)
        return scopes.get(name) or scopes.get(name.rpartition("[")[0]) or nodeid  # "<case>[<backend>]"


def case_scopes(path: Path) -> dict[str, str]:
    """Case id -> its scope, for a questions file of a suite (else nothing): its database
    for a layout split by database, otherwise its run of ``CHUNK`` cases."""
    from .cases import collect_cases, find_manifest_for
    from .errors import SqlevalError
    if path.suffix not in (".json", ".jsonl") or not (path.parent / "sqleval.toml").is_file():
        return {}
    try:
        manifest = find_manifest_for(path)
        pairs = collect_cases(manifest, path) if manifest is not None else []
    except (SqlevalError, OSError):
        return {}  # the workers report it as a collection error
    if len({m.path for _, m in pairs}) > 1:
        return {case.id: str(m.path) for case, m in pairs}
    return {case.id: f"{path}#{i // CHUNK}" for i, (case, _) in enumerate(pairs)}
