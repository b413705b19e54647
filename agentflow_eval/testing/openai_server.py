"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1.

Tests (and benchmarks) point LiteLLM at it with ``api_base=server.url`` and the model
``openai/<anything>``, so every request goes through LiteLLM's real HTTP path. Replies
come from a FIFO script, from a handler function, or both (script first); each reply can
add latency, fail with a status code and headers (429 + Retry-After, 401, 5xx), or send
a malformed body. Every request body is recorded.

Run standalone for benchmarks: ``python -m agentflow_eval.testing.openai_server --latency 0.05``.
``GET /stats`` reports how many requests each model got.
"""

from __future__ import annotations

import argparse
import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["Reply", "ScriptedOpenAIServer", "echo_handler"]


@dataclass
class Reply:
    """One scripted answer. ``tool_calls`` items are ``{"name": ..., "arguments": {...}}``."""

    content: str | None = None
    tool_calls: list[dict[str, Any]] | None = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    raw_body: str | None = None
    delay_s: float = 0.0
    prompt_tokens: int = 10
    completion_tokens: int = 5
    model: str | None = None
    """The model the reply says answered (the response's ``model``); the requested one
    when None."""

    @classmethod
    def text(cls, content: str, **kw: Any) -> Reply:
        return cls(content=content, **kw)

    @classmethod
    def tools(cls, *calls: tuple[str, dict[str, Any]], **kw: Any) -> Reply:
        return cls(tool_calls=[{"name": n, "arguments": a} for n, a in calls], **kw)

    @classmethod
    def error(cls, status: int, message: str = "error", **kw: Any) -> Reply:
        body = json.dumps({"error": {"message": message, "type": "test_error", "code": status}})
        return cls(status=status, raw_body=body, **kw)


Handler = Callable[[dict[str, Any]], Reply]

_ids = itertools.count(1)


class _HTTPServer(ThreadingHTTPServer):
    # socketserver's default listen backlog of 5 drops connections when a client opens
    # dozens at once (a concurrent evaluation), and each drop costs a 1 s SYN retry.
    request_queue_size = 256


class ScriptedOpenAIServer:
    """``with ScriptedOpenAIServer([Reply.text("hi")]) as server: ... server.url``."""

    def __init__(
        self,
        replies: Iterable[Reply] = (),
        *,
        handler: Handler | None = None,
        latency_s: float = 0.0,
        host: str = "127.0.0.1",
        port: int = 0,
        keep_requests: bool = True,
    ) -> None:
        self._script: deque[Reply] = deque(replies)
        self.handler = handler
        self.latency_s = latency_s
        self.keep_requests = keep_requests
        """Whether request bodies are kept in :attr:`requests` (off for long benchmarks,
        whose tens of thousands of bodies only the per-model counts need)."""
        self.requests: list[dict[str, Any]] = []
        self.request_headers: list[dict[str, str]] = []
        """The HTTP headers (lower-cased names) of each kept request, oldest first."""
        self.connections = 0
        """TCP connections accepted so far (keep-alive clients reuse theirs)."""
        self.requests_by_model: dict[str, int] = {}
        self._count = 0
        self._lock = threading.Lock()
        self._httpd = _HTTPServer((host, port), self._make_handler())
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------
    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """The ``api_base`` to hand LiteLLM (ends in ``/v1``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> ScriptedOpenAIServer:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> ScriptedOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- script ----------------------------------------------------------------------
    def push(self, *replies: Reply) -> None:
        with self._lock:
            self._script.extend(replies)

    @property
    def request_count(self) -> int:
        """Requests recorded: ``len(requests)`` (so clearing ``requests`` resets it), or
        every request served when bodies are not kept."""
        with self._lock:
            return len(self.requests) if self.keep_requests else self._count

    def stats(self) -> dict[str, Any]:
        """Requests so far, in total and per requested model (what ``GET /stats`` says)."""
        with self._lock:
            return {"requests": self._count, "by_model": dict(self.requests_by_model)}

    def _next_reply(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        model = str(body.get("model", ""))
        with self._lock:
            self._count += 1
            self.requests_by_model[model] = self.requests_by_model.get(model, 0) + 1
            if self.keep_requests:
                self.requests.append(body)
                self.request_headers.append(headers)
            if self._script:
                return self._script.popleft()
        if self.handler is not None:
            return self.handler(body)
        return Reply.error(400, "scripted server: no replies left")

    # -- HTTP ------------------------------------------------------------------------
    def _make_handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class _Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # headers and body go out in separate writes: with Nagle's algorithm on, the
            # body waits for the client's delayed ACK (~40 ms) on every response
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def setup(self) -> None:  # once per TCP connection
                super().setup()
                with server._lock:
                    server.connections += 1

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, json.dumps({"object": "list", "data": []}), {})
                elif self.path.rstrip("/").endswith("/stats"):
                    self._send(200, json.dumps(server.stats()), {})
                else:
                    self._send(404, json.dumps({"error": {"message": "not found"}}), {})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, json.dumps({"error": {"message": "not found"}}), {})
                    return
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    self._send(400, json.dumps({"error": {"message": "bad json"}}), {})
                    return
                try:
                    headers = {k.lower(): v for k, v in self.headers.items()}
                    reply = server._next_reply(body, headers)
                except Exception as exc:  # a broken handler is a test bug: say so
                    self._send(500, json.dumps({"error": {"message": repr(exc)}}), {})
                    return
                delay = server.latency_s + reply.delay_s
                if delay:
                    time.sleep(delay)
                if reply.raw_body is not None:
                    self._send(reply.status, reply.raw_body, reply.headers)
                else:
                    self._send(reply.status, json.dumps(_completion(body, reply)), reply.headers)

            def _send(self, status: int, text: str, headers: dict[str, str]) -> None:
                data = text.encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for key, value in headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        return _Handler


def _completion(request: dict[str, Any], reply: Reply) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    finish = "stop"
    if reply.tool_calls:
        finish = "tool_calls"
        message["tool_calls"] = [
            {
                "id": f"call_{next(_ids)}",
                "type": "function",
                "function": {
                    "name": call["name"],
                    "arguments": call["arguments"]
                    if isinstance(call["arguments"], str)
                    else json.dumps(call["arguments"]),
                },
            }
            for call in reply.tool_calls
        ]
    return {
        "id": f"chatcmpl-{next(_ids)}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": reply.model or request.get("model", "scripted"),
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": reply.prompt_tokens,
            "completion_tokens": reply.completion_tokens,
            "total_tokens": reply.prompt_tokens + reply.completion_tokens,
        },
    }


def echo_handler(request: dict[str, Any]) -> Reply:
    """Answer with the last user message's text: a handler for smoke tests."""
    for message in reversed(request.get("messages", [])):
        if message.get("role") == "user":
            content = message.get("content")
            return Reply.text(content if isinstance(content, str) else json.dumps(content))
    return Reply.text("")


def main() -> None:  # pragma: no cover - exercised by benchmarks
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.0)
    args = parser.parse_args()
    with ScriptedOpenAIServer(handler=echo_handler, latency_s=args.latency, port=args.port) as s:
        print(s.url, flush=True)
        threading.Event().wait()


if __name__ == "__main__":  # pragma: no cover
    main()
