"""A lean OpenAI-compatible client used as a ``module:function`` backend by the LLM bench:
one HTTP/1.1 POST per case over asyncio streams, no SDK, so the bench measures the
plugin's scheduling (concurrency, claims, cache) rather than a client library's cost.
The endpoint comes from ``SQLEVAL_BENCH_API_BASE`` (``http://127.0.0.1:PORT/v1``)."""
from __future__ import annotations

import asyncio
import json
import os
from typing import Any
from urllib.parse import urlparse


async def generate(case: Any) -> str:
    base = urlparse(os.environ["SQLEVAL_BENCH_API_BASE"])
    body = json.dumps({"model": "bench", "temperature": 0, "metadata": {"case": case.id},
                       "messages": [{"role": "user", "content": case.question}]}).encode()
    reader, writer = await asyncio.open_connection(base.hostname, base.port)
    try:
        writer.write(f"POST {base.path.rstrip('/')}/chat/completions HTTP/1.1\r\nHost: {base.netloc}\r\n"
                     f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
                     + body)
        await writer.drain()
        data = await reader.read()
    finally:
        writer.close()
    head, _, payload = data.partition(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1.1 200") and not head.startswith(b"HTTP/1.0 200"):
        raise RuntimeError(f"model endpoint answered {head.splitlines()[0]!r}")
    return json.loads(payload)["choices"][0]["message"]["content"]


generate.sqleval_fingerprint = "bench-lean-backend-v1"  # type: ignore[attr-defined]
