"""What both the sink and the HTML page need, below both of them: a file replaced whole,
and the questions file's node id of a case."""
from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any, Callable


def suite_nodeid(nodeid: str, case_id: str, backend_label: str) -> str:
    """The questions file's node id, from a case's: the node id without the item's name,
    which is ``q06`` (one backend) or ``q06[gold]`` (several)."""
    for name in (f"{case_id}[{backend_label}]", case_id):
        if nodeid.endswith(f"::{name}"):
            return nodeid[:-len(name) - 2]
    return nodeid.rsplit("::", 1)[0]


def publish_file(path: Path, write: Callable[[Path], Any]) -> None:
    """Replace ``path`` whole: ``write`` fills a temporary file in the same folder, which
    then takes the name in one ``os.replace``. A reader, or another run sharing the folder,
    sees the old file or the new one, never a mix; when two runs publish, the last wins."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
