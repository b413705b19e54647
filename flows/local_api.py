"""Prefect's temporary API server for one CLI run, started before the CLI's heavy imports.

Without a configured Prefect API, a flow run starts a temporary server itself — but only
when the flow starts, after the CLI has imported LiteLLM, Prefect and the agent, and it
then waits for the server to boot (~5–8 s on a 2-core machine, most of a short run). This
module launches the same server (Prefect's own app factory under uvicorn, as Prefect's
``SubprocessASGIServer`` does) as the very first thing, needing nothing but the standard
library, so it boots on the other core while this process imports. The flow then uses it
through ``PREFECT_API_URL``, and the CLI process never imports Prefect's server package.

    api = LocalPrefectAPI.launch()           # first thing: before the heavy imports
    ...                                      # parse, import, load the agent
    with api.serving():                      # waits until healthy; yields the URL or None
        asyncio.run(evaluate(params))

``serving()`` stands down (and stops the server) when Prefect's settings name an API URL
or forbid a temporary server: the flow then behaves exactly as without this module.
Otherwise the server lives until the interpreter exits, as Prefect's own temporary server
does: Prefect's background workers (events, logs) drain at thread shutdown, before
``atexit`` handlers run, and they need the server until then.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

__all__ = ["LocalPrefectAPI"]

STARTUP_TIMEOUT_S = 90.0
_POLL_S = 0.05


def _free_port() -> int:
    with contextlib.closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _prefect_dir() -> Path:
    spec = importlib.util.find_spec("prefect")
    if spec is None or spec.origin is None:
        raise RuntimeError("prefect is not installed")
    return Path(spec.origin).parent.parent


class LocalPrefectAPI:
    """A temporary Prefect API server in a child process."""

    def __init__(self, process: subprocess.Popen[bytes], port: int) -> None:
        self.process = process
        self.port = port

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api"

    @classmethod
    def launch(cls) -> LocalPrefectAPI | None:
        """Start the server now, unless ``PREFECT_API_URL`` is set in the environment
        (the run then uses that API, as Prefect would)."""
        if os.environ.get("PREFECT_API_URL"):
            return None
        port = _free_port()
        env = {
            **os.environ,
            "PREFECT_UI_ENABLED": "0",
            "PREFECT__SERVER_EPHEMERAL": "1",
            "PREFECT__SERVER_FINAL": "1",
        }
        command = [
            sys.executable,
            "-m",
            "uvicorn",
            "--app-dir",
            str(_prefect_dir()),
            "--factory",
            "prefect.server.api.server:create_app",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--log-level",
            "error",
            "--lifespan",
            "on",
        ]
        api = cls(subprocess.Popen(command, env=env), port)
        atexit.register(api.stop)
        return api

    def wait_ready(self, timeout_s: float = STARTUP_TIMEOUT_S) -> None:
        """Block until the server answers its health check; raise ``RuntimeError`` if it
        exits or does not answer within ``timeout_s``."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            code = self.process.poll()
            if code is not None:
                raise RuntimeError(f"the temporary Prefect server exited with code {code}")
            try:
                with urllib.request.urlopen(f"{self.url}/health", timeout=2) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(_POLL_S)
        raise RuntimeError(
            f"the temporary Prefect server on port {self.port} did not answer within "
            f"{timeout_s:.0f} s"
        )

    def stop(self) -> None:
        """Stop the server (what Prefect does with its own temporary server). Runs by
        itself at exit; call it earlier only once Prefect's background workers are
        drained (``EventsWorker.drain_all()``, ``APILogWorker.drain_all()``)."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    @contextlib.contextmanager
    def serving(self) -> Iterator[str | None]:
        """Point Prefect at this server for the block (yields its URL). When Prefect's
        settings already name an API or disallow a temporary server, stop it at once and
        change nothing (yields ``None``)."""
        from prefect.settings import PREFECT_API_URL, get_current_settings, temporary_settings

        settings = get_current_settings()
        if settings.api.url or not settings.server.ephemeral.enabled:
            self.stop()
            yield None
            return
        self.wait_ready()
        with temporary_settings(updates={PREFECT_API_URL: self.url}):
            yield self.url
