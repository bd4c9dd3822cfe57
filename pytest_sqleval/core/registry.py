"""One registry mechanism for every kind of plugin object: backends, engines, layouts,
layers and error classes.

A ``Registry`` maps names to objects. An object gets there three ways, each kind the same:

- built in: given to the registry when it is made;
- by call: ``register(obj)`` (a ``conftest.py`` or a plugin module at import);
- by entry point: a distribution declares ``name = "module:attr"`` in the registry's group.
  Entry points are read at the first lookup, never at import, each once, in name order; a
  broken one is one error naming it, its distribution and the fix.

What differs between kinds is policy, not mechanism: how an object is checked (``check``),
how it is named (by itself, ``name_of``; or by its entry point's name, ``name_of=None``,
when only the chosen one is loaded: backends), and the order lookups walk the three
sources (``order``: engines ask added ones first, so a plugin can take over a kind of
location).

A name is owned once: registering the same object, or registering again from the same
owner (a conftest imported again), replaces; another owner's object under a taken name,
a built-in's name, or two entry points of one name is an error naming the fix."""
from __future__ import annotations

import sys
from typing import Any, Callable, Generic, Iterable, Iterator, Mapping, TypeVar

T = TypeVar("T")

#: where lookups look, in order: the default, and the engines' (added engines asked first)
BUILTINS_FIRST = ("built-ins", "registered", "entry points")
ADDED_FIRST = ("registered", "entry points", "built-ins")


def _no_check(obj: Any, where: str) -> None:
    return None


def _object_name(obj: Any) -> str:
    return str(obj.name)


def installed_entry_points(group: str) -> list[tuple[str, Any]]:
    """``(name, entry point)`` of every installed distribution's entry point in ``group``."""
    from importlib.metadata import entry_points
    return [(ep.name, ep) for ep in entry_points(group=group)]


class Registry(Generic[T]):
    """Name -> object for one kind of plugin object (see the module docstring)."""

    def __init__(self, kind: str, group: str, error: type[Exception], *,
                 check: Callable[[Any, str], Any] = _no_check,
                 name_of: Callable[[Any], str] | None = _object_name,
                 builtins: Mapping[str, T] | None = None,
                 order: tuple[str, str, str] = BUILTINS_FIRST,
                 source: Callable[[], Iterable[tuple[str, Any]]] | None = None) -> None:
        self.kind = kind
        self.group = group
        self.error = error
        self.check = check  # raises ``error`` naming ``where`` and the fix when an object is not one of this kind
        self.name_of = name_of  # None: an object is named by its entry point (loaded only when looked up)
        self.builtins: dict[str, T] = dict(builtins or {})
        self.order = order
        self.source = source or (lambda: installed_entry_points(group))
        #: name -> (object, owner): the module that registered it, or where it is imported from
        self.registered: dict[str, tuple[T, str]] = {}
        self._found: dict[str, tuple[Any, str, str | None]] | None = None  # name -> (entry point, where, its dist)
        self._loaded: dict[str, T] = {}  # entry points loaded so far

    # -- by call --------------------------------------------------------------------------
    def admit(self, obj: Any, owner: str, *, name: str | None = None) -> str:
        """The name ``obj`` would be registered under; the error a registration would give otherwise."""
        where = f"{self.kind} {name or getattr(obj, 'name', obj)!r} (registered by {owner})"
        self.check(obj, where)
        name = name if name is not None else self._name(obj)
        if name in self.builtins:
            raise self.error(f"{self.kind} name {name!r} is a built-in {self.kind}'s. "
                             f"Fix: give the {self.kind} another name")
        held = self.registered.get(name)
        if held is not None and held[0] is not obj and held[1] != owner:
            raise self.error(f"{self.kind} name {name!r} is registered already (by {held[1]}). "
                             f"Fix: give the {self.kind} another name")
        return name

    def register(self, obj: T, *, name: str | None = None, owner: str | None = None) -> T:
        """Add ``obj`` (under ``name``, else its own); returns it. ``owner`` defaults to the
        calling module."""
        owner = owner or sys._getframe(1).f_globals.get("__name__", "?")
        name = self.admit(obj, owner, name=name)
        self.registered[name] = (obj, owner)
        return obj

    def unregister(self, name: str) -> None:
        """Remove an object given to ``register`` (a no-op for unknown names)."""
        self.registered.pop(name, None)

    # -- by entry point ---------------------------------------------------------------------
    def reload_entry_points(self) -> None:
        """Forget the entry points read so far; the next lookup reads them again."""
        self._found = None
        self._loaded = {}

    def _where(self, name: str, ep: Any) -> tuple[str, str | None]:
        dist = getattr(getattr(ep, "dist", None), "name", None)
        value = getattr(ep, "value", None)
        where = (f"{self.kind} entry point '{name}{f' = {value}' if value else ''}' (group {self.group}"
                 + (f", from the distribution {dist})" if dist else ")"))
        return where, dist

    def _load(self, ep: Any, where: str, dist: str | None) -> T:
        try:
            obj = ep.load()
        except Exception as exc:
            raise self.error(f"{where} cannot be loaded: {type(exc).__name__}: {exc}. Fix: repair or uninstall "
                             f"{dist or 'the distribution that declares it'}") from None
        self.check(obj, where)
        loaded: T = obj  # what ``check`` accepted is the registry's kind
        return loaded

    def _entry_points(self) -> dict[str, tuple[Any, str, str | None]]:
        """The entry points by name, read once: named by themselves, or (``name_of``) each
        loaded and named by its object."""
        if self._found is None:
            found: dict[str, tuple[Any, str, str | None]] = {}
            loaded: dict[str, T] = {}
            for ep_name, ep in sorted(self.source(), key=lambda pair: pair[0]):
                where, dist = self._where(ep_name, ep)
                name = ep_name
                if self.name_of is not None:
                    obj = self._load(ep, where, dist)
                    name = self._name(obj)
                    loaded[name] = obj
                if name in self.builtins or name in self.registered or name in found:
                    raise self.error(f"{where} is named {name!r}, which another {self.kind} has. "
                                     "Fix: rename one of them")
                found[name] = (ep, where, dist)
            self._found, self._loaded = found, loaded
        return self._found

    def _entry_point(self, name: str) -> T:
        if name not in self._loaded:
            self._loaded[name] = self._load(*self._entry_points()[name])
        return self._loaded[name]

    # -- lookups --------------------------------------------------------------------------
    def _name(self, obj: Any) -> str:
        assert self.name_of is not None, f"{self.kind}s are named by their entry points"
        return self.name_of(obj)

    def names(self) -> list[str]:
        """Every name, in lookup order; loads no entry point a name does not need."""
        sources = {"built-ins": lambda: list(self.builtins), "registered": lambda: list(self.registered),
                   "entry points": lambda: list(self._entry_points())}
        return [name for source in self.order for name in sources[source]()]

    def items(self) -> Iterator[tuple[str, T]]:
        """``(name, object)`` in lookup order, every entry point loaded."""
        for source in self.order:
            if source == "built-ins":
                yield from self.builtins.items()
            elif source == "registered":
                yield from ((name, obj) for name, (obj, _) in list(self.registered.items()))
            else:
                yield from ((name, self._entry_point(name)) for name in list(self._entry_points()))

    def all(self) -> list[T]:
        """Every object, in lookup order."""
        return [obj for _, obj in self.items()]

    def get(self, name: str) -> T | None:
        """The object called ``name``, or None. Reads the entry points (the first lookup of
        any name does: a broken one is an error whichever name is asked for), and loads
        at most that one."""
        found = self._entry_points()
        if name in self.builtins:
            return self.builtins[name]
        if name in self.registered:
            return self.registered[name][0]
        return self._entry_point(name) if name in found else None

    def __contains__(self, name: str) -> bool:
        found = self._entry_points()
        return name in self.builtins or name in self.registered or name in found


def load_group(group: str, kind: str, error: type[Exception], name_of: Callable[[Any, str], str],
               taken: set[str]) -> list[Any]:
    """Every object one entry-point group names, as a ``Registry`` reads them: each once, in
    name order. ``name_of(obj, where)`` checks one and returns its name; a name in ``taken``
    or given twice is an ``error``. (The 0.1 ``pytest_sqleval.entrypoints.load_group``.)"""
    names: dict[int, str] = {}

    def check(obj: Any, where: str) -> None:
        names[id(obj)] = name_of(obj, where)
    registry: Registry[Any] = Registry(kind, group, error, check=check, name_of=lambda obj: names[id(obj)],
                                       builtins=dict.fromkeys(taken))
    return [obj for name, obj in registry.items() if name not in taken]
