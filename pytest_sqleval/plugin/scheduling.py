"""xdist scheduling by database: under ``-n N`` a worker gets whole databases, not every
Nth case, so it opens (and reads the gold answers of) only its share of a Spider/BIRD
suite's databases; a database with more than a worker's share of the cases is cut in
runs of that share, so one big database cannot leave the others idle. Cases of a
one-database suite go in short runs of consecutive cases, so every worker shares the
work; any other test is a unit of its own. Only a run that names a suite on its command
line is scheduled so; any other keeps xdist's ``--dist load``. Runs in the xdist
controller, which collects nothing: it reads each case's id and database from the suite's
questions file (not the cases' validation, nor its databases) to know each node id's."""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from xdist.scheduler import LoadScopeScheduling

CHUNK = 16  # at most this many consecutive cases of a one-database suite go to a worker at a time


class DatabaseScheduling(LoadScopeScheduling):
    """xdist's scheduling by scope, where a case's scope is its database."""

    def __init__(self, config: Any, log: Any = None) -> None:
        super().__init__(config, log)
        self._scopes: dict[str, dict[str, str]] = {}  # questions file's node id -> {item name: scope}

    def remove_node(self, node: Any) -> str | None:
        """As xdist's, except that the case running when its worker crashed is not run
        again with the rest of its unit (as with ``--dist load``): it is reported lost."""
        units = self.assigned_work.get(node, {}).values()
        crashed = next(((unit, nodeid) for unit in units for nodeid, done in unit.items() if not done), None)
        if crashed is None:
            requeued: str | None = super().remove_node(node)
            return requeued
        crashed[0][crashed[1]] = True
        super().remove_node(node)  # the rest of its units go back to the queue
        lost: str = crashed[1]
        return lost

    def _split_scope(self, nodeid: str) -> str:
        nodeid = str(nodeid)
        parent, sep, name = nodeid.rpartition("::")
        if not sep:
            return nodeid
        scopes = self._scopes.get(parent)
        if scopes is None:
            scopes = self._scopes[parent] = case_scopes(Path(self.config.rootpath) / parent, max(len(self.nodes), 1))
        return scopes.get(name) or scopes.get(name.rpartition("[")[0]) or nodeid  # "<case>[<backend>]"


def names_a_suite(args: list[str], rootpath: Path) -> bool:
    """Whether the command line names a suite (a folder holding a ``sqleval.toml`` within
    two levels, or a questions file beside one): only then is the run scheduled by
    database; any other run keeps xdist's own ``--dist load``."""
    for arg in args:
        path = Path(rootpath, arg.split("::", 1)[0])
        if path.is_file():
            if (path.parent / "sqleval.toml").is_file():
                return True
        elif path.is_dir() and any(True for pattern in ("sqleval.toml", "*/sqleval.toml", "*/*/sqleval.toml")
                                   for _ in path.glob(pattern)):
            return True
    return False


def case_scopes(path: Path, workers: int = 2) -> dict[str, str]:
    """Case id -> its scope, for a questions file of a suite (else nothing). Split by
    database (Spider, BIRD): its database, in runs of at most a worker's share; one
    database: runs of up to ``CHUNK`` cases, a quarter of a worker's share when smaller.

    The controller collects nothing, and the workers send it node ids only, so it reads
    the file itself; but only what it schedules by (``scheduling_pairs``): each record's
    id and database, not the suite's validated cases, their policies or result files."""
    from ..core.errors import SqlevalError
    if path.suffix not in (".json", ".jsonl", ".csv") or not (path.parent / "sqleval.toml").is_file():
        return {}
    try:
        pairs = scheduling_pairs(path)
    except (SqlevalError, OSError):
        return {}  # the workers report it as a collection error
    share = len(pairs) / workers
    by_database = len({group for _, group in pairs}) > 1
    run = max(1, math.ceil(share) if by_database else min(CHUNK, int(share / 4)))
    seen: dict[str, int] = {}
    out = {}
    for cid, database in pairs:
        group = f"{path}#{database}" if database is not None else str(path)
        i = seen[group] = seen.get(group, -1) + 1
        out[cid] = f"{group}#{i // run}"
    return out


def scheduling_pairs(path: Path) -> list[tuple[str, str | None]]:
    """``(case id, database)`` for each record of a suite's questions file, as the layout
    yields it (``collect_cases`` makes the same ids and picks the same database key); the
    database is None unless the suite is split by database. Nothing is validated: a bad
    record is the workers' collection error, and a record with no usable id is skipped."""
    from ..core.cases import find_manifest_for, get_layout
    manifest = find_manifest_for(path)
    layout = get_layout(manifest.layout) if manifest is not None else None
    if manifest is None or layout is None:
        return []
    key = layout.split_by if manifest.database is not None else None
    pairs: list[tuple[str, str | None]] = []
    for _, obj in layout.records(path):
        if not isinstance(obj, dict):
            continue
        cid = obj.get("id", obj.get("qid"))
        if isinstance(cid, int) and not isinstance(cid, bool):
            cid = str(cid)
        if isinstance(cid, str):
            database = obj.get(key) if key is not None else None
            pairs.append((cid, database if isinstance(database, str) else None))
    return pairs
