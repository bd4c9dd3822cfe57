"""Which grader grades a case of a layout: the suite's, one per database (LRU-bounded), or
one built from the case's own DDL. A temporary home: this folds into the run's grader pool."""
from __future__ import annotations

import hashlib
import weakref
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .cases import BenchmarkCase, SuiteManifest
from .errors import BadInputError

if TYPE_CHECKING:
    from .session import SqlevalSession

MAX_OPEN_DATABASES = 4  # per-database engine processes kept open per run (least recently used closed)


# -- graders -----------------------------------------------------------------------------
_open: "weakref.WeakKeyDictionary[Any, OrderedDict[Path, None]]" = weakref.WeakKeyDictionary()


def grader_for(state: "SqlevalSession", manifest: SuiteManifest, case: BenchmarkCase) -> Any:
    """The grader of one case: the suite's, its database's (Spider/BIRD; at most
    ``MAX_OPEN_DATABASES`` engine processes stay open), or a grader without a database
    whose catalog is the case's own CREATE TABLE context (sql-create-context)."""
    if manifest.layout == "sql-create-context" and manifest.database is None:
        return _context_grader(state, manifest, case)
    grader = state.grader_for(manifest)
    if "#" in manifest.path.name:
        lru = _open.setdefault(state, OrderedDict())
        lru[manifest.path] = None
        lru.move_to_end(manifest.path)
        while len(lru) > MAX_OPEN_DATABASES:
            old, _ = lru.popitem(last=False)
            stale = state._graders.pop(old, None)
            if stale is not None:
                stale.close()
    return grader


def _context_grader(state: "SqlevalSession", manifest: SuiteManifest, case: BenchmarkCase) -> Any:
    from .grading.grounding import catalog_from_ddl
    from .grading.pipeline import StaticGrader
    context = str(case.metadata.get("context") or "")
    key = manifest.path.with_name(f"{manifest.path.name}#ddl-{hashlib.sha256(context.encode()).hexdigest()[:16]}")
    grader = state._graders.get(key)
    if grader is None:
        try:
            catalog = catalog_from_ddl(context, manifest.dialect) if context.strip() else None
        except ValueError as exc:
            where, _, line = case.source.rpartition(":")
            raise BadInputError(where or case.source, f"the context's DDL: {exc}", line=int(line) if line.isdigit() else None,
                                field="context", fix="fix the CREATE TABLE statements of this case") from None
        if sum(1 for k in state._graders if "#ddl-" in k.name) > 1024:
            for k in [k for k in state._graders if "#ddl-" in k.name]:
                state._graders.pop(k)
        grader = state._graders[key] = StaticGrader(dialect=manifest.dialect, catalog=catalog,
                                                    deprecated=manifest.deprecated_tables, catalog_source=context)
    return grader

