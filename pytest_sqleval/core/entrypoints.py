"""Loading one entry-point group of plugins (engines, layouts): each once, in name order,
a broken one as one error naming it, its distribution and the fix."""
from __future__ import annotations

from typing import Any, Callable


def load_group(group: str, kind: str, error: type[Exception], name_of: Callable[[Any, str], str],
               taken: set[str]) -> list[Any]:
    """Every object the group's entry points name. ``name_of(obj, where)`` checks one and
    returns its name; a name in ``taken`` or given twice is an ``error``."""
    from importlib.metadata import entry_points
    loaded: list[Any] = []
    seen = set(taken)
    for ep in sorted(entry_points(group=group), key=lambda e: e.name):
        dist = getattr(getattr(ep, "dist", None), "name", None)
        where = f"{kind} entry point '{ep.name} = {ep.value}' (group {group}" + \
                (f", from the distribution {dist})" if dist else ")")
        try:
            obj = ep.load()
        except Exception as exc:
            raise error(f"{where} cannot be loaded: {type(exc).__name__}: {exc}. Fix: repair or uninstall "
                        f"{dist or 'the distribution that declares it'}") from None
        name = name_of(obj, where)
        if name in seen:
            raise error(f"{where} is named {name!r}, which another {kind} has. Fix: rename one of them")
        seen.add(name)
        loaded.append(obj)
    return loaded
