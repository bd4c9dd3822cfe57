"""Backends: the systems under test. A registry resolves ``--sqleval-backend`` specs."""
from .base import Backend, BackendOptions, GenerateFn, GenerationResult
from .registry import known_backends, register_backend, resolve_backend, resolve_backends

__all__ = ["Backend", "BackendOptions", "GenerateFn", "GenerationResult", "known_backends", "register_backend",
           "resolve_backend", "resolve_backends"]
