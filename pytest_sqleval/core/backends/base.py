"""The backend protocol: ``async (BenchmarkCase) -> str | GenerationResult``.

The runner treats a backend as opaque; whatever metadata it returns (model, prompt
version, calls, tokens, latency) passes through untouched into results and reports."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Protocol, Union

from ..cases import BenchmarkCase


@dataclass
class GenerationResult:
    sql: str
    metadata: dict[str, Any] = field(default_factory=dict)


GenerateFn = Callable[[BenchmarkCase], Awaitable[Union[str, GenerationResult]]]


class BackendFactory(Protocol):
    """What an entry point in ``pytest_sqleval.backends`` provides: a generate function, or
    a ready :class:`Backend` that keeps its own label, fingerprint, description and metadata."""

    def __call__(self, options: "BackendOptions") -> "Backend | GenerateFn | Callable[..., Any]": ...


@dataclass(frozen=True)
class BackendOptions:
    """Standard knobs routed to built-in factories, never to the runner;
    ``module:function`` backends ignore them."""

    model: str | None = None
    provider: str | None = None
    api_base: str | None = None
    rootdir: str = "."
    suites: tuple[str, ...] = ()


@dataclass
class Backend:
    """A resolved backend: a display label, an async generate function, and the
    fingerprint that keys its cached generations (``None``: never cached). ``metadata`` is
    what every record of the backend carries in ``backend_metadata``, whether or not its
    generation came back (a generation's own keys win): how reports know the backend even
    from a crashed case."""

    spec: str
    label: str
    generate: Callable[[BenchmarkCase], Awaitable[Any]]
    fingerprint: str | None = None
    description: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    #: what a case's generation depends on beyond the case and the fingerprint, as a string
    #: (the agent: the schema text of the case's suite); part of the cache key, computed
    #: before the cache is read. ``None``: nothing more.
    case_key: Callable[[BenchmarkCase], str] | None = None
    #: the parts the backend's product adds to a run's ablation report
    #: (``reports.ablation.AblationSection``: the agent's bring the Vantage course's checkpoints)
    report_sections: tuple[Any, ...] = ()
