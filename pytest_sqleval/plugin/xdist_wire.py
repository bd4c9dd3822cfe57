"""Case records between xdist workers and the controller: sent as one JSON string each,
read back into the record before any plugin of the controller sees the report.

A report carries its record as the record's JSON object (``CaseRecord.to_json_dict``, made
by the item); the sink makes it a ``CaseRecord`` again (``from_json_dict``), serial or not."""
from __future__ import annotations

import json
from typing import Any

RECORD_KEY, PACKED_KEY = "sqleval", "sqleval.json"


def pack_records(data: dict[str, Any]) -> None:
    """A worker's report, made serializable: its case record goes as one JSON string.
    execnet's serializer walks every object of a record in Python (a third of a worker's
    time on small cases); ``json`` writes it in C. The report's own properties are left
    as they are (``data`` shares its list). A record JSON cannot hold goes as it is."""
    props = data.get("user_properties")
    if not props or not any(isinstance(p, tuple) and p and p[0] == RECORD_KEY for p in props):
        return
    packed = []
    for prop in props:
        if isinstance(prop, tuple) and len(prop) == 2 and prop[0] == RECORD_KEY:
            try:
                prop = (PACKED_KEY, json.dumps(prop[1], allow_nan=True))
            except (TypeError, ValueError):
                pass
        packed.append(prop)
    data["user_properties"] = packed


def unpack_records(data: dict[str, Any]) -> None:
    """The controller's side of ``pack_records``, before any plugin sees the report."""
    props = data.get("user_properties")
    if props and any(isinstance(p, (tuple, list)) and len(p) == 2 and p[0] == PACKED_KEY for p in props):
        data["user_properties"] = [(RECORD_KEY, json.loads(p[1])) if isinstance(p, (tuple, list)) and len(p) == 2
                                   and p[0] == PACKED_KEY else p for p in props]
