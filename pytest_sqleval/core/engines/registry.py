"""Which engine opens a database location: a registry of engines, the built-ins and plugins.

An engine is any object with

- ``name``: a short name of its own (``duckdb``, ``sqlite``, ``postgres``, ...);
- ``dialect``: the sqlglot dialect gold and predictions are transpiled to;
- ``claims(location) -> bool``: whether it opens this database location (a path or URL);
- ``open(location, limits) -> Sandbox``: the sandbox (see ``engines.base.Sandbox``).

A location goes to the first engine that claims it, in this order:

1. plugin engines: those given to ``register_engine`` (in registration order), then the
   entry points of group ``pytest_sqleval.engines`` (by name), loaded at the first lookup,
   never at import. A plugin comes first so it can take over a kind of location: claim
   narrowly (a URL scheme, a file suffix);
2. PostgreSQL: ``postgresql://`` and ``postgres://`` URLs; Spark: ``spark://`` locations
   (``spark_sandbox.spark_location``: a DuckDB file or Parquet folder mirrored into a local
   Spark) and ``sc://`` (a Spark Connect server's catalog, ``spark_connect.ConnectSandbox``);
3. SQLite: a path ending in ``.sqlite``, ``.sqlite3``, ``.db`` or ``.db3``, or any file
   (but ``.duckdb``/``.ddb``) that starts with the SQLite header;
4. DuckDB: any other path. A URL nobody claims is an error.

Grading runs each database in an engine process of its own, which finds the same engines:
entry points by themselves, and ``register_engine``'s by importing them again, so register
an object the process can import (a module-level name, e.g. in ``conftest.py``, or a
``"module:attr"`` string).

    # pyproject.toml of a plugin
    [project.entry-points."pytest_sqleval.engines"]
    mydb = "mydb_sqleval:ENGINE"
"""
from __future__ import annotations

import importlib
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Protocol

from ..errors import UsageError
from ..registry import ADDED_FIRST, Registry

if TYPE_CHECKING:
    from .base import Sandbox

ENTRY_POINT_GROUP = "pytest_sqleval.engines"


class EngineError(UsageError):
    """An engine plugin is broken: it cannot be loaded, lacks part of the engine surface, or
    fails to decide on a location. The message names the plugin and the fix."""


class EngineLike(Protocol):
    """What the grader uses of an engine, built-in or a plugin's (``_check_surface`` checks it)."""

    @property
    def name(self) -> str: ...
    @property
    def dialect(self) -> str: ...
    def claims(self, location: Any, /) -> bool: ...
    def open(self, location: Any, limits: Any, /) -> Sandbox: ...


@dataclass(frozen=True)
class Engine:
    """An engine as the registry holds it; built-ins are instances, plugins may be too."""

    name: str
    dialect: str
    claims: Callable[[Any], bool]
    open: Callable[[Any, Any], Sandbox]


# -- the built-ins ---------------------------------------------------------------------------
def _claims_postgres(location: Any) -> bool:
    from .shared import POSTGRES_SCHEMES
    scheme = _scheme(location)
    return scheme is not None and scheme in POSTGRES_SCHEMES


def _claims_sqlite(location: Any) -> bool:
    from .shared import DUCKDB_SUFFIXES, SQLITE_MAGIC, SQLITE_SUFFIXES
    if _scheme(location) is not None:
        return False
    path = Path(location)
    suffix = path.suffix.lower()
    if suffix in SQLITE_SUFFIXES:
        return True
    if suffix not in DUCKDB_SUFFIXES and path.is_file():
        try:
            with open(path, "rb") as fh:
                return fh.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC
        except OSError:
            return False
    return False


def _claims_spark(location: Any) -> bool:
    from .shared import SPARK_SCHEMES  # not from spark_sandbox: every lookup would import it
    scheme = _scheme(location)
    return scheme is not None and scheme in SPARK_SCHEMES


def _claims_duckdb(location: Any) -> bool:
    return _scheme(location) is None


def _open_postgres(location: Any, limits: Any) -> Sandbox:
    from .postgres_sandbox import PostgresSandbox
    return PostgresSandbox(str(location), limits)


def _open_sqlite(location: Any, limits: Any) -> Sandbox:
    from .sqlite_sandbox import SQLiteSandbox
    return SQLiteSandbox(location, limits)


def _open_spark(location: Any, limits: Any) -> Sandbox:
    if _scheme(location) == "sc":  # an existing catalog over Spark Connect
        from .spark_connect import ConnectSandbox
        return ConnectSandbox(str(location), limits)
    from .spark_sandbox import SparkSandbox
    return SparkSandbox(str(location), limits)


def _open_duckdb(location: Any, limits: Any) -> Sandbox:
    from .duckdb_sandbox import DuckDBSandbox
    return DuckDBSandbox(location, limits)


BUILTINS: tuple[Engine, ...] = (
    Engine("postgres", "postgres", _claims_postgres, _open_postgres),
    Engine("spark", "spark", _claims_spark, _open_spark),
    Engine("sqlite", "sqlite", _claims_sqlite, _open_sqlite),
    Engine("duckdb", "duckdb", _claims_duckdb, _open_duckdb),  # the default: any path
)


def _scheme(location: Any) -> str | None:
    from .shared import _URL_RE
    m = _URL_RE.match(location) if isinstance(location, str) else None
    return m.group(1).lower() if m else None


# -- plugins -------------------------------------------------------------------------------
def _check_surface(obj: Any, where: str) -> str:
    """The engine's name; an ``EngineError`` naming what is missing otherwise."""
    missing = [a for a in ("name", "dialect") if not isinstance(getattr(obj, a, None), str) or not getattr(obj, a)]
    missing += [a for a in ("claims", "open") if not callable(getattr(obj, a, None))]
    if missing:
        raise EngineError(f"{where} is not an engine: it lacks {', '.join(missing)}. Fix: give it `name` and "
                          "`dialect` (strings), `claims(location) -> bool` and `open(location, limits) -> Sandbox`")
    name: str = obj.name
    return name


#: the engines, added ones asked first; a registered engine's owner is the ``module:attr``
#: the engine process imports it by
ENGINES: Registry[Any] = Registry("engine", ENTRY_POINT_GROUP, EngineError, check=_check_surface,
                                  builtins={e.name: e for e in BUILTINS}, order=ADDED_FIRST)
_registered = ENGINES.registered  # name -> (engine, "module:attr")


def _import_spec(spec: str) -> Any:
    module_name, _, attr = spec.partition(":")
    try:
        obj: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except Exception as exc:
        raise EngineError(f"engine {spec!r} cannot be imported: {type(exc).__name__}: {exc}. Fix: make the module "
                          "importable (install it, or put it on sys.path, e.g. `pythonpath` in the pytest ini)") from None
    return obj


def _locate(obj: Any, caller: str | None) -> str | None:
    """``module:attr`` under which ``obj`` can be imported again, or None."""
    if getattr(obj, "__qualname__", None) and getattr(obj, "__module__", None) and "<" not in obj.__qualname__:
        return f"{obj.__module__}:{obj.__qualname__}"  # a class or function
    for module_name in (caller, getattr(type(obj), "__module__", None)):
        module = sys.modules.get(module_name or "")
        for attr, value in (vars(module).items() if module else ()):
            if value is obj:
                return f"{module_name}:{attr}"
    return None


def register_engine(engine: Any) -> Any:
    """Add an engine (an object with the engine surface, or a ``"module:attr"`` string naming
    one); returns it. Registering the same engine again does nothing; another engine under
    a taken name is an error. The engine must be importable by name (a module-level object,
    a class, or the string form): the engine process imports it again."""
    if isinstance(engine, str):
        spec, engine = engine, _import_spec(engine)
    else:
        spec = None
    _check_surface(engine, f"engine {engine!r}")
    spec = spec or _locate(engine, sys._getframe(1).f_globals.get("__name__"))
    name = ENGINES.admit(engine, spec or "?")
    if spec is None:
        raise EngineError(f"engine {name!r} cannot be found again by the engine process (each database is opened "
                          "in a process of its own, which imports the engine by name). Fix: register a module-level "
                          "object after assigning it (ENGINE = MyEngine(); register_engine(ENGINE)), a class, or "
                          "a 'module:attr' string; or declare an entry point in group " + ENTRY_POINT_GROUP)
    return ENGINES.register(engine, owner=spec)


def unregister_engine(name: str) -> None:
    """Remove an engine given to ``register_engine`` (a no-op for unknown names)."""
    ENGINES.unregister(name)


def exported() -> list[str]:
    """``module:attr`` of every ``register_engine`` engine, for the engine process."""
    return [spec for _, spec in ENGINES.registered.values()]


def adopt(specs: list[str] | tuple[str, ...] = (), sys_path: list[str] | tuple[str, ...] = ()) -> None:
    """In the engine process: see what the grading process sees (its ``sys.path`` entries
    this process lacks, appended) and register its engines."""
    sys.path.extend(p for p in sys_path if p not in sys.path)
    if sys_path:
        importlib.invalidate_caches()
    for spec in specs:
        register_engine(spec)


def reload_entry_points() -> None:
    """Forget the loaded entry points; the next lookup reads them again."""
    ENGINES.reload_entry_points()


def engines() -> list[EngineLike]:
    """Every engine, in the order a location is offered to them."""
    return ENGINES.all()


def choose(location: Any) -> EngineLike:
    """The engine that opens ``location`` (see the module docstring)."""
    for engine in engines():
        try:
            claimed = engine.claims(location)
        except Exception as exc:
            raise EngineError(f"engine {engine.name!r} failed to decide on {_display(location)}: "
                              f"{type(exc).__name__}: {exc}. Fix: its claims() must return True or False") from None
        if claimed:
            return engine
    scheme = _scheme(location)
    raise ValueError(f"unsupported database URL scheme {scheme!r}: use postgresql://, "
                     "or a path to a DuckDB or SQLite file")


def _display(location: Any) -> str:
    from .shared import display_location
    return display_location(location)
