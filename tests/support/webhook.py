"""A tiny HTTP server on 127.0.0.1 that records the JSON bodies POSTed to it: where the
automations under test send their webhooks."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@contextmanager
def recording_webhook() -> Iterator[tuple[str, list[Any]]]:
    """Yield the webhook's URL and the list its POSTed bodies are appended to."""
    received: list[Any] = []

    class Hook(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            received.append(json.loads(body or b"null"))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Hook)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/hook", received
    finally:
        server.shutdown()


def wait_for_posts(received: list[Any], timeout_s: float = 60) -> list[Any]:
    """``received`` once something was posted, or empty after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not received and time.monotonic() < deadline:
        time.sleep(0.5)
    return received
