"""Resolve ``--sqleval-backend`` specs: ``gold``, ``predictions:PATH``, entry points (the
agent's configurations register there like any plugin's backends), and ``module:function``
(sync or async callables, or zero-argument factories)."""
from __future__ import annotations

import asyncio
import difflib
import functools
import hashlib
import importlib
import inspect
import sys
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Callable

from ..cases import BenchmarkCase
from ..errors import BadInputError, NoPrediction, UsageError
from ..registry import Registry
from ..traces import TRACE_KEY, runs_dir, write_trace_report
from .base import Backend, BackendOptions, GenerationResult
from .depends import code_key, declared_files, depends_on, files_key

ENTRY_POINT_GROUP = "pytest_sqleval.backends"


async def _gold(case: BenchmarkCase) -> GenerationResult:
    if not case.gold_sql:  # a case whose golds are result files only: no SQL to give
        raise NoPrediction(f"case {case.id!r} has result-file golds only: the gold backend has no SQL to give")
    return GenerationResult(case.gold_sql, {"backend": "gold"})


BUILTINS: dict[str, Callable[[BackendOptions], Backend]] = {
    "gold": lambda opts: Backend("gold", "gold", _gold, None, "the suite's own gold SQL: a self-check of the suite"),
}

def _entry_points() -> dict[str, Any]:
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def _check_factory(obj: Any, where: str) -> None:
    if not callable(obj):
        raise UsageError(f"{where} is not a backend factory (got {type(obj).__name__}). Fix: make it a function "
                         "of the run's BackendOptions returning a generate function or a Backend")


#: name -> backend factory (``factory(options)`` -> a generate function or a ``Backend``).
#: Named by the entry point, so only the backend a run names is loaded.
BACKENDS: Registry[Callable[[BackendOptions], Any]] = Registry(
    "backend", ENTRY_POINT_GROUP, UsageError, check=_check_factory, name_of=None, builtins=BUILTINS,
    source=lambda: _entry_points().items())


def register_backend(name: str, factory: Callable[[BackendOptions], Any]) -> Callable[[BackendOptions], Any]:
    """Make ``--sqleval-backend=<name>`` call ``factory(options)``; returns the factory. As an
    entry point of group ``pytest_sqleval.backends`` does, for a conftest or a plugin module."""
    return BACKENDS.register(factory, name=name, owner=sys._getframe(1).f_globals.get("__name__", "?"))


def known_backends() -> list[str]:
    return sorted(BACKENDS.names()) + ["predictions:PATH", "module:function"]


def resolve_backends(specs: str, options: BackendOptions) -> list[Backend]:
    """A comma list of specs, each with a label no other backend of the run has."""
    parts = [p.strip() for p in specs.split(",") if p.strip()]
    if not parts:
        raise UsageError("--sqleval-backend is empty; known backends: " + ", ".join(known_backends()))
    backends = [resolve_backend(p, options) for p in parts]
    unique_labels(backends)
    return backends


def unique_labels(backends: list[Backend]) -> None:
    """Give every backend a label of its own, in place. The first backend with a derived
    label keeps it; a later one gets the first ``<label><n>`` (n = 2, 3, ...) that is
    neither derived by another backend nor already given, so ``run1``, ``run1`` and
    ``run12`` become ``run1``, ``run13`` and ``run12``. Items, results, the error-class
    cache and the generation key all use the label, so two backends never share it."""
    derived = {b.label for b in backends}
    taken: set[str] = set()
    for b in backends:
        if b.label in taken:
            base, n = b.label, 2
            while f"{base}{n}" in taken or f"{base}{n}" in derived:
                n += 1
            b.label = f"{base}{n}"
        taken.add(b.label)
    labels = [b.label for b in backends]
    dupes = sorted({label for label in labels if labels.count(label) > 1})
    if dupes:  # pragma: no cover - the loop above makes this impossible; never grade under a shared label
        raise UsageError(f"backends share the label {', '.join(dupes)}: "
                         + "; ".join(f"{b.spec} ({b.description})" for b in backends if b.label in dupes)
                         + ". Fix: rename one of the files")


def resolve_backend(spec: str, options: BackendOptions) -> Backend:
    if spec.startswith("predictions:"):
        return _predictions_backend(spec, spec.split(":", 1)[1], options)
    factory = BACKENDS.get(spec)
    if factory is not None:
        made = factory(options)
        if isinstance(made, Backend):  # a plugin that names, fingerprints and describes its backend itself
            return made
        return _wrap(spec, spec, made, f"{spec}|{options.model}|{options.provider}|"
                     f"{_depends_key(spec, options.rootdir, factory, made)}", runs_dir(options.rootdir))
    if ":" in spec:
        return _module_backend(spec, runs_dir(options.rootdir), options.rootdir)
    hint = difflib.get_close_matches(spec, BACKENDS.names(), n=1)
    raise UsageError(f"unknown backend {spec!r}" + (f" (did you mean {hint[0]!r}?)" if hint else "")
                     + ". Known backends: " + ", ".join(known_backends()))


def _depends_key(spec: str, rootdir: str, obj: Any, fn: Any) -> str:
    """What the backend's generations depend on besides the case (``depends.py``): its
    module with the project modules it imports, and the files it declares in
    ``sqleval_depends_on`` (on the generate function or its factory)."""
    root = Path(rootdir).resolve()
    declared = declared_files(depends_on(fn, obj), root, spec)
    return f"code:{code_key(obj, root)}|files:{files_key(declared, root)}"


def _module_backend(spec: str, traces_root: Path, rootdir: str = ".") -> Backend:
    module_name, _, attr = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise UsageError(f"backend {spec!r}: cannot import module {module_name!r} ({exc}). "
                         "Fix: make it importable (install it, or put it on sys.path, e.g. via conftest.py "
                         "or `pythonpath` in the pytest ini)") from None
    obj: Any = module
    for part in attr.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            names = [n for n in dir(module) if not n.startswith("_")]
            hint = difflib.get_close_matches(part, names, n=1)
            raise UsageError(f"backend {spec!r}: module {module_name!r} has no attribute {part!r}"
                             + (f" (did you mean {hint[0]!r}?)" if hint else ""))
    if not callable(obj):
        raise UsageError(f"backend {spec!r} is not callable")
    fn = obj
    if _takes_no_arguments(obj):  # a zero-argument factory returning the generate function
        fn = obj()
        if not callable(fn):
            raise UsageError(f"backend {spec!r}: the factory returned {type(fn).__name__}, not a callable")
    fingerprint = getattr(fn, "sqleval_fingerprint", None) or getattr(obj, "sqleval_fingerprint", None)
    return _wrap(spec, attr.rsplit(".", 1)[-1], fn, f"{spec}|{fingerprint or ''}|{_depends_key(spec, rootdir, obj, fn)}",
                 traces_root)


def _takes_no_arguments(obj: Any) -> bool:
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return False
    return all(p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
               for p in sig.parameters.values()) and not any(
        p.kind == p.VAR_POSITIONAL for p in sig.parameters.values())


def _wrap(spec: str, label: str, fn: Callable[..., Any], fingerprint: str, traces_root: Path | None = None) -> Backend:
    """Sync callables run in a worker thread so they overlap like async ones. A result whose
    metadata holds a trace gets its markdown report, as the built-in agent's does
    (``runs/<label>/traces/<qid>.md``)."""
    if inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(getattr(fn, "__call__", None)):
        call = fn
    else:
        async def call(case: BenchmarkCase) -> Any:
            result = await asyncio.to_thread(fn, case)
            return await result if inspect.isawaitable(result) else result

    async def generate(case: BenchmarkCase) -> Any:
        result = await call(case)
        if (traces_root is not None and isinstance(result, GenerationResult) and isinstance(result.metadata, dict)
                and isinstance(result.metadata.get(TRACE_KEY), list)):
            await asyncio.to_thread(write_trace_report, traces_root, backend.label, case, result.sql, result.metadata)
        return result
    functools.update_wrapper(generate, fn)
    backend = Backend(spec, label, generate, hashlib.sha256(fingerprint.encode()).hexdigest()[:24], spec)
    return backend


def _predictions_backend(spec: str, raw_path: str, options: BackendOptions) -> Backend:
    path = Path(raw_path)
    if not path.is_absolute():
        path = Path(options.rootdir) / path
    if not path.is_file() and not path.is_dir():  # a folder: a layout's (Spider 2.0's <id>.sql files)
        raise UsageError(f"backend {spec!r}: predictions file {path} does not exist. "
                         "Fix: give a JSONL file with one {\"id\": ..., \"sql\": ...} per line")
    data = path.read_bytes() if path.is_file() else None  # read once: the predictions and their digest
    predictions = read_predictions(path, data)

    async def generate(case: BenchmarkCase) -> GenerationResult:
        if case.id not in predictions:  # a missing answer is a wrong answer: the case fails, never errors
            raise NoPrediction(f"no prediction for this case: the predictions file {path} has no line "
                               f"with id {case.id!r}")
        sql, meta = predictions[case.id]
        return GenerationResult(sql, meta)

    label = path.stem if path.stem != "predictions" else (path.parent.name or "predictions")
    # the description names the file by resolved path and content: the generation key
    # includes it, so two prediction files can never share generations
    digest = hashlib.sha256(data if data is not None else b"".join(
        f.name.encode() + b"\0" + f.read_bytes() for f in sorted(path.iterdir()) if f.is_file())).hexdigest()[:16]
    backend = Backend(spec, label, generate, None, f"predictions from {path.resolve()} (sha256 {digest})")
    backend.predictions = predictions  # type: ignore[attr-defined]
    return backend


def read_predictions(path: Path, data: bytes | None = None) -> dict[str, tuple[str, dict[str, Any]]]:
    """``id``/``qid`` -> (sql, other keys). Errors name file, line and fix. Spider's one
    SQL per line and BIRD's JSON object are read too, keyed by question position. ``data``:
    the file's bytes when the caller has read them; the file is read (and decoded) once,
    however many layouts look at it."""
    from ..cases import read_layout_predictions
    from ..textio import decode_text, iter_jsonl_text, read_text
    text = None if path.is_dir() else decode_text(path, data) if data is not None else read_text(path)
    layout_predictions = read_layout_predictions(path, text)
    if layout_predictions is not None:
        return layout_predictions
    if text is None:
        raise UsageError(f"predictions folder {path}: no layout reads a folder of these files. Fix: give a JSONL file "
                         "with one {\"id\": ..., \"sql\": ...} per line, or Spider 2.0's <instance_id>.sql files")
    out: dict[str, tuple[str, dict[str, Any]]] = {}
    first_line: dict[str, int] = {}
    for lineno, obj in iter_jsonl_text(text, path, fix='each line must be {"id": "q01", "sql": "SELECT ..."}'):
        if not isinstance(obj, dict):
            raise BadInputError(path, "expected a JSON object", line=lineno, fix='write {"id": ..., "sql": ...}')
        cid = obj.pop("id", None)
        if cid is None:
            cid = obj.pop("qid", None)
        if isinstance(cid, int) and not isinstance(cid, bool):
            cid = str(cid)
        if not isinstance(cid, str) or not cid:
            raise BadInputError(path, "missing case id", line=lineno, field="id",
                                fix='add "id": "<case id>" (or "qid")')
        sql = obj.pop("sql", None)
        if not isinstance(sql, str):
            raise BadInputError(path, f"must be a string, got {sql!r}", line=lineno, field="sql",
                                fix='add "sql": "SELECT ..." (an empty string is graded as an empty answer)')
        if cid in first_line:
            raise BadInputError(path, f"duplicate prediction for {cid!r} (first on line {first_line[cid]})",
                                line=lineno, field="id", fix="keep one prediction per case")
        first_line[cid] = lineno
        out[cid] = (sql, obj)
    return out
