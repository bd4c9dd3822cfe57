"""A loopback OpenAI-compatible chat-completions server for tests that talk to a model.

It answers ``POST /v1/chat/completions`` on 127.0.0.1 from a script: a queue of
:class:`Reply` objects (one per request, in order) or a callable that decides each reply
from the recorded request. Every request is recorded, so a test can count calls and check
what was sent (model, temperature, messages). Nothing leaves the machine.

The ``llm_server`` fixture is registered for every test by ``tests/conftest.py``.
"""
from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterator

import pytest

__all__ = ["Reply", "RecordedRequest", "ScriptedLLMServer", "llm_server"]


@dataclass
class Reply:
    """One scripted answer.

    ``content`` becomes the assistant message of a well-formed completion. ``body``
    replaces the whole HTTP body (bytes/str sent as is, anything else JSON-encoded) for
    malformed or error payloads. ``truncate_body`` announces the full Content-Length but
    sends only that many bytes and closes the connection. ``delay`` sleeps before answering.
    """

    content: str | None = ""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    body: Any = None
    truncate_body: int | None = None
    prompt_tokens: int = 11
    completion_tokens: int = 7
    model: str | None = None  # echoed from the request when None
    finish_reason: str = "stop"

    @classmethod
    def json(cls, obj: Any, **kw: Any) -> "Reply":
        """An assistant message whose content is ``obj`` encoded as JSON."""
        return cls(content=json.dumps(obj), **kw)

    @classmethod
    def verdict(cls, equivalence: str, rationale: str = "scripted", confidence: float = 0.9,
                **kw: Any) -> "Reply":
        """A well-formed judge verdict."""
        return cls.json({"equivalence": equivalence, "rationale": rationale,
                         "confidence": confidence}, **kw)

    @classmethod
    def rate_limited(cls, retry_after: float | str = 1, **kw: Any) -> "Reply":
        """HTTP 429 with a Retry-After header, in the OpenAI error shape."""
        return cls(status=429, headers={"Retry-After": str(retry_after)},
                   body={"error": {"message": "rate limited (scripted)", "type": "rate_limit_error",
                                   "code": "rate_limit_exceeded"}}, **kw)

    @classmethod
    def error(cls, status: int = 500, message: str = "server error (scripted)", **kw: Any) -> "Reply":
        """An HTTP error in the OpenAI error shape."""
        return cls(status=status, body={"error": {"message": message, "type": "server_error",
                                                  "code": None}}, **kw)


@dataclass
class RecordedRequest:
    """What the server received: ``body`` is the parsed JSON (None if it did not parse)."""

    method: str
    path: str
    headers: dict[str, str]
    raw: bytes
    body: dict[str, Any] | None
    received_at: float  # time.monotonic()

    @property
    def model(self) -> str | None:
        return (self.body or {}).get("model")

    @property
    def temperature(self) -> Any:
        return (self.body or {}).get("temperature")

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list((self.body or {}).get("messages") or [])

    @property
    def prompt_text(self) -> str:
        """All message contents joined, for assertions on what the model was shown."""
        parts = []
        for m in self.messages:
            c = m.get("content")
            parts.append(c if isinstance(c, str) else json.dumps(c))
        return "\n".join(parts)


Responder = Callable[[RecordedRequest], Reply]


class ScriptedLLMServer:
    """A threaded stdlib HTTP server bound to 127.0.0.1 on a free port."""

    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        self._queue: deque[Reply] = deque()
        self._responder: Responder | None = None
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self))
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------
    def start(self) -> "ScriptedLLMServer":
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="llm-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> "ScriptedLLMServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- addresses ---------------------------------------------------------------
    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def api_base(self) -> str:
        """The OpenAI-style base URL, ending in ``/v1``."""
        return f"http://127.0.0.1:{self.port}/v1"

    # -- scripting ---------------------------------------------------------------
    def script(self, *replies: Reply | str) -> None:
        """Queue replies, one per request; a str is shorthand for ``Reply(content=str)``."""
        with self._lock:
            self._queue.extend(Reply(content=r) if isinstance(r, str) else r for r in replies)

    def respond_with(self, responder: Responder | None) -> None:
        """Decide every reply from the request (used once the queue is empty)."""
        self._responder = responder

    @property
    def calls(self) -> int:
        return len(self.chat_requests)

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.rstrip("/").endswith("/chat/completions")]

    def _next_reply(self, req: RecordedRequest) -> Reply:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        if self._responder is not None:
            return self._responder(req)
        return Reply.error(500, "llm_server: no scripted reply left")


def _completion_body(reply: Reply, req: RecordedRequest, n: int) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-test-{n}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": reply.model or req.model or "test-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": reply.content},
                     "finish_reason": reply.finish_reason, "logprobs": None}],
        "usage": {"prompt_tokens": reply.prompt_tokens, "completion_tokens": reply.completion_tokens,
                  "total_tokens": reply.prompt_tokens + reply.completion_tokens},
    }


def _make_handler(server: ScriptedLLMServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def _record(self) -> RecordedRequest:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = None
            req = RecordedRequest(self.command, self.path, dict(self.headers.items()), raw,
                                  body if isinstance(body, dict) else None, time.monotonic())
            with server._lock:
                server.requests.append(req)
            return req

        def do_GET(self) -> None:  # e.g. /v1/models probes
            self._record()
            self._send(404, {}, b'{"error": {"message": "not found"}}')

        def do_POST(self) -> None:
            req = self._record()
            if not req.path.rstrip("/").endswith("/chat/completions"):
                self._send(404, {}, b'{"error": {"message": "not found"}}')
                return
            reply = server._next_reply(req)
            if reply.delay:
                time.sleep(reply.delay)
            if reply.body is None:
                payload = json.dumps(_completion_body(reply, req, len(server.requests))).encode()
            elif isinstance(reply.body, bytes):
                payload = reply.body
            elif isinstance(reply.body, str):
                payload = reply.body.encode()
            else:
                payload = json.dumps(reply.body).encode()
            self._send(reply.status, reply.headers, payload, reply.truncate_body)

        def _send(self, status: int, headers: dict[str, str], payload: bytes,
                  truncate: int | None = None) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for k, v in headers.items():
                    self.send_header(k, v)
                if truncate is not None:
                    self.send_header("Connection", "close")
                    self.close_connection = True
                self.end_headers()
                self.wfile.write(payload if truncate is None else payload[:truncate])
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):  # client gave up (timeout test)
                self.close_connection = True

    return Handler


@pytest.fixture
def llm_server() -> Iterator[ScriptedLLMServer]:
    """A started :class:`ScriptedLLMServer`; use ``.api_base``, ``.script(...)``,
    ``.respond_with(fn)``, ``.requests`` / ``.calls``. Shut down after the test."""
    server = ScriptedLLMServer().start()
    try:
        yield server
    finally:
        server.stop()
