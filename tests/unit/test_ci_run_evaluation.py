"""deployments/ci/run_evaluation.py retries what a busy or restarting Prefect API answers
(connection refused, 503, 429) and never what the request got wrong (404)."""

from __future__ import annotations

import importlib.util
import json
import threading
import urllib.error
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "deployments" / "ci" / "run_evaluation.py"


@pytest.fixture
def script(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    spec = importlib.util.spec_from_file_location("run_evaluation", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "RETRY_DELAYS_S", (0.0, 0.0, 0.0))
    return module


@pytest.fixture
def api() -> Iterator[tuple[str, list[int], list[dict]]]:
    """An API answering each request with the next status of ``statuses`` (then 200),
    recording the bodies it was sent."""
    statuses: list[int] = []
    bodies: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            bodies.append(json.loads(self.rfile.read(length) or b"{}"))
            status = statuses.pop(0) if statuses else 200
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(json.dumps({"id": "run-1", "status": status}).encode())

        do_GET = do_POST = _answer

        def log_message(self, *args: object) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/api", statuses, bodies
    finally:
        server.shutdown()


def test_transient_answers_are_retried_with_the_same_idempotent_body(script, api) -> None:
    url, statuses, bodies = api
    statuses.extend([503, 429])
    body = {"parameters": {}, "idempotency_key": "k-1"}
    assert script._call(url, "POST", "/deployments/x/create_flow_run", body)["status"] == 200
    assert len(bodies) == 3 and all(b == body for b in bodies)


def test_a_request_error_is_not_retried(script, api) -> None:
    url, statuses, bodies = api
    statuses.append(404)
    with pytest.raises(urllib.error.HTTPError):
        script._call(url, "GET", "/deployments/name/missing")
    assert len(bodies) == 1


def test_an_api_that_stays_down_is_given_up_on(script) -> None:
    with pytest.raises(urllib.error.URLError):
        script._call("http://127.0.0.1:9/api", "GET", "/flow_runs/x")  # nothing listens
