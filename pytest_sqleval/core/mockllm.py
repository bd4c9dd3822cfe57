"""``mockllm/...``: an offline stand-in for a chat model, in the spirit of inspect_ai's mockllm.

Any model string that starts with ``mockllm/`` is answered here, in process, with an OpenAI
chat-completion object (``choices[0].message.content``, ``usage``), so the LLM backends
(raw_llm, a0 ... a3-sc) and the judge's client run end to end with no network, key or
server: to try the agent's ablation, or to test a pipeline around it. ``python -m
pytest_sqleval.core.mockllm`` serves the same answers over HTTP on 127.0.0.1 as an
OpenAI-compatible ``/v1/chat/completions``, for a client that only speaks HTTP
(``--sqleval-api-base=http://127.0.0.1:PORT/v1 --sqleval-model=openai/mockllm``).
**It is not a model**: every record it touches says so (``NOT_A_MODEL``; a served model's
name must start with ``mockllm`` for that), and its figures measure the plumbing, never
text-to-SQL skill.

What it answers is deterministic and reads the prompt the way a weak model might: the table
of the schema context whose name and columns share most words with the question, summed
over its measure column (one the question names first) or, for "how many" or a table with no
measure, counted; each repair request moves to the next table. A context line that quotes the
question word for word next to a query is copied instead, as a model copies a worked example:
that is what a leaky semantic layer (one that embeds eval answers) feeds it. Without a schema in the
prompt it guesses a table from the question's words. Asked by the LLM judge, it repeats the
deterministic comparison. Tokens are characters / 4; the cost is 0.
"""
from __future__ import annotations

import json
import re
import time
from typing import Any, Mapping, Sequence

PREFIX = "mockllm/"
NOT_A_MODEL = "mockllm: a deterministic offline responder, not a model (its accuracy measures nothing)"

_CREATE = re.compile(r"CREATE TABLE\s+([\w.\"]+)\s*\((.*?)\n\)", re.S | re.I)
_COMPACT = re.compile(r"^([\w.]+)\(([^)]*)\)", re.M)
_WORD = re.compile(r"[a-z][a-z0-9]+")
_JUDGE_EVIDENCE = "DETERMINISTIC EVIDENCE (JSON):"  # the LLM judge's prompt (grading/judge.py)
_MEASURES = ("amount", "revenue", "usd", "price", "total", "cost", "spend", "value", "qty", "quantity", "units")


def is_mock(model: str | None) -> bool:
    """Answered in process (``llm.complete``): ``mockllm/<anything>``."""
    return bool(model) and str(model).startswith(PREFIX)


def label(model: str | None) -> dict[str, str]:
    """The field a record of a mock run carries, in process or served (``openai/mockllm``);
    nothing for a real model."""
    served = bool(model) and str(model).rsplit("/", 1)[-1].startswith("mockllm")
    return {"not_a_model": NOT_A_MODEL} if is_mock(model) or served else {}


def _words(text: str) -> set[str]:
    return {w[:-1] if w.endswith("s") and len(w) > 3 else w for w in _WORD.findall(text.lower())}


def _tables(context: str) -> list[tuple[str, list[str]]]:
    found = [(name.strip('"'), [c.strip().split()[0] for c in body.splitlines()
                                if c.strip() and not c.strip().startswith("--")])
             for name, body in _CREATE.findall(context)]
    found += [(name, [c.strip().split()[0] for c in cols.split(",") if c.strip()])
              for name, cols in _COMPACT.findall(context) if not name.upper().startswith("CREATE")]
    return found


def write_sql(messages: Sequence[Mapping[str, Any]]) -> str:
    """The query the mock answers with, from the conversation so far."""
    users = [str(m.get("content") or "") for m in messages if m.get("role") == "user"]
    first = users[0] if users else ""
    match = re.search(r"^Question:\s*(.+)$", first, re.M)
    question = match.group(1) if match else first
    copied = _worked_example(first, question)
    if copied is not None:
        return copied
    asked = _words(question)
    tables = _tables(first)
    if not tables:  # no schema shown: a guess from the question, as a model without context would
        noun = sorted(asked - {"how", "many", "what", "which", "total", "the", "our", "were", "was", "did"} or {"data"})[0]
        return f"SELECT count(*) AS n FROM {noun}s"
    ranked = sorted(tables, key=lambda t: -(2 * len(asked & _words(t[0].replace("_", " ")))
                                            + len(asked & _words(" ".join(t[1]).replace("_", " ")))))
    name, columns = ranked[(len(users) - 1) % len(ranked)]  # each repair request: the next table
    measures = [c for c in columns if any(m in c.lower() for m in _MEASURES)]
    measure = next((c for c in measures if _words(c.replace("_", " ")) & asked), measures[0] if measures else None)
    if measure and not {"how", "many"} <= asked:
        return f"SELECT sum({measure}) AS value FROM {name}"
    return f"SELECT count(*) AS n FROM {name}"


def _worked_example(prompt: str, question: str) -> str | None:
    """The query on a context line (not the question's own) that quotes the question verbatim."""
    wanted = " ".join(question.split()).lower()
    if len(wanted) < 12:
        return None
    for line in prompt.splitlines():
        flat = " ".join(line.split())
        if flat.startswith("Question:") or wanted not in flat.lower():
            continue
        found = re.search(r"\b(SELECT|WITH)\b.*", flat[flat.lower().index(wanted) + len(wanted):], re.I)
        if found:
            return found.group(0).strip()
    return None


def judge(evidence: str) -> str:
    """A judge's verdict that repeats the deterministic comparison: equivalent where the
    results matched, different elsewhere, at confidence 0.5."""
    try:
        data = json.loads(evidence)
    except ValueError:
        data = {}
    match = isinstance(data, dict) and data.get("result_match") is True  # grading.verdict.judge_evidence
    return json.dumps({"equivalence": "equivalent" if match else "different", "confidence": 0.5,
                       "rationale": f"{NOT_A_MODEL}; it repeats the deterministic comparison"})


def respond(messages: Sequence[Mapping[str, Any]], model: str) -> dict[str, Any]:
    """One chat completion, shaped as OpenAI's ``/v1/chat/completions`` returns it: a judge's
    JSON verdict to the LLM judge's prompt, else a SQL query in a fence."""
    last = str(messages[-1].get("content") or "") if messages else ""
    if _JUDGE_EVIDENCE in last:
        text = judge(last.split(_JUDGE_EVIDENCE, 1)[1].strip())
    else:
        text = f"```sql\n{write_sql(messages)}\n```"
    prompt_tokens = sum(len(str(m.get("content") or "")) for m in messages) // 4 + 1
    return {"id": f"mockllm-{time.monotonic_ns()}", "object": "chat.completion", "created": int(time.time()),
            "model": model, "system_fingerprint": NOT_A_MODEL,
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": len(text) // 4 + 1,
                      "total_tokens": prompt_tokens + len(text) // 4 + 1}}


def serve(port: int = 0) -> Any:
    """An OpenAI-compatible server on 127.0.0.1 (``port`` 0: a free one), not yet started:
    call ``serve_forever()`` (or run it in a thread) and ``shutdown()``."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
            if not self.path.rstrip("/").endswith("/chat/completions"):
                return self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            try:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                reply = respond(body["messages"], str(body.get("model") or "mockllm"))
            except (ValueError, KeyError, TypeError) as exc:
                return self._send(400, {"error": {"message": f"bad request: {exc}", "type": "invalid_request_error"}})
            self._send(200, reply)

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:  # quiet: one line per call would drown a run's output
            pass

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    return server


if __name__ == "__main__":  # python -m pytest_sqleval.core.mockllm [PORT]
    import sys
    httpd = serve(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
    print(f"mockllm (not a model) at http://127.0.0.1:{httpd.server_address[1]}/v1 (Ctrl-C stops)", flush=True)
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass
