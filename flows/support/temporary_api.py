"""Prefect's temporary API server for one CLI run, launched before the CLI's heavy imports.

Without a configured Prefect API, a flow run starts a temporary server itself — but only
once the flow starts, after the CLI has imported Prefect and the agent, and then waits for
it to boot. This module launches the same server (Prefect's own app factory under
uvicorn, as Prefect's ``SubprocessASGIServer`` does) as the CLI's first step, needing
nothing but the standard library, so it boots on the other core while the CLI imports and
checks its inputs. The flow then runs against it through ``PREFECT_API_URL``, and the CLI
process never imports Prefect's server package. No work of the run happens before the flow
run starts: every stage runs inside the task run Prefect shows for it.

    api = TemporaryPrefectAPI.launch()       # first thing: before the heavy imports
    ...                                      # parse, import, check the inputs
    outcome = await run_on(api, lambda: evaluate(params), flow_name=evaluate.name)

The server lives until the interpreter exits, as Prefect's own temporary server does:
Prefect's background workers (events, logs) drain at thread shutdown, before ``atexit``
handlers run, and they need the server until then.

It never outlives the CLI, however the CLI ends. An orderly exit stops it (``atexit``);
a CLI killed outright (SIGKILL, SIGTERM, a closed terminal) runs no handler, so the
server watches its parent itself: it holds the read end of a pipe whose only write end
is the CLI's, and the pipe's end-of-file — which the kernel delivers when the CLI's
process is gone, whatever ended it — makes it exit. On Linux the kernel also sends it
SIGTERM when the CLI dies (``PR_SET_PDEATHSIG``). It runs in its own process group, so
a Ctrl-C at the terminal reaches the CLI, which stops it in order, and stopping it stops
anything it started.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import importlib
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import IO, TypeVar

from agentflow_eval.errors import RunStopped
from agentflow_eval.flows.support.prefect_internals import (
    APP_FACTORY,
    TEMPORARY_SERVER_ENV,
    temporary_server_allowed,
)

__all__ = ["TemporaryAPIError", "TemporaryPrefectAPI", "run_on"]

STARTUP_TIMEOUT_S = 90.0
_POLL_S = 0.05
T = TypeVar("T")

# The child process: Prefect's app factory under uvicorn, with the cyclic garbage collector
# paused while Prefect imports and builds its app (that start allocates many objects and
# frees few, so collecting meanwhile is wasted work), and the start's objects then frozen
# (``gc.freeze``) so later collections in the serving process skip them. Before any of
# that it starts watching its parent (see the module doc): on the watch pipe's
# end-of-file it asks uvicorn to stop (SIGTERM), and ends itself if that takes too long.
_SERVE = """
import gc, importlib, os, signal, sys, threading, time
gc.disable()
watch_fd, parent = int(sys.argv[5]), int(sys.argv[6])

def _parent_gone():
    try:
        while os.read(watch_fd, 64):
            pass
    except OSError:
        pass
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(10)
    os._exit(0)

threading.Thread(target=_parent_gone, name="parent watch", daemon=True).start()
if sys.platform.startswith("linux"):
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM), 0, 0, 0)
    except Exception:
        pass
if os.getppid() != parent:
    os._exit(0)
sys.path.insert(0, sys.argv[1])
import uvicorn
factory = getattr(importlib.import_module(sys.argv[3]), sys.argv[4])
app = factory()
gc.enable()
gc.freeze()
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[2]), log_level="error", lifespan="on")
"""

_RUN_ENGINES = ("prefect.flow_engine", "prefect.task_engine")
"""What Prefect imports at a process's first flow run: imported while the server boots."""


class TemporaryAPIError(RunStopped):
    """Prefect's temporary server did not start."""


def _free_port() -> int:
    with contextlib.closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _prefect_dir() -> Path:
    spec = importlib.util.find_spec("prefect")
    if spec is None or spec.origin is None:
        raise RuntimeError("prefect is not installed")
    return Path(spec.origin).parent.parent


class TemporaryPrefectAPI:
    """A temporary Prefect API server in a child process."""

    def __init__(
        self,
        process: subprocess.Popen[bytes],
        port: int,
        watch_fd: int | None = None,
        log: IO[bytes] | None = None,
    ) -> None:
        self.process = process
        self.port = port
        self._watch_fd = watch_fd
        """The write end of the server's parent-watch pipe: the server runs while it is
        open, so it is never written to and only closed by :meth:`stop` (or death)."""
        self._log = log
        """What the server wrote: kept from the terminal (a server stopped while it still
        boots, as a command refusing its input does, prints the tracebacks of its
        cancelled start), and quoted when it does not start."""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api"

    @classmethod
    def launch(cls) -> TemporaryPrefectAPI | None:
        """Start the server now, unless ``PREFECT_API_URL`` is set in the environment
        (the run then uses that API, as Prefect would)."""
        if os.environ.get("PREFECT_API_URL"):
            return None
        port = _free_port()
        module, factory = APP_FACTORY
        watch_read, watch_write = os.pipe()  # neither end is inherited by other children
        command = [
            sys.executable,
            "-c",
            _SERVE,
            str(_prefect_dir()),
            str(port),
            module,
            factory,
            str(watch_read),
            str(os.getpid()),
        ]
        log = tempfile.TemporaryFile()  # noqa: SIM115 (the server writes to it while it runs)
        try:
            process = subprocess.Popen(
                command,
                env={**os.environ, **TEMPORARY_SERVER_ENV},
                pass_fds=(watch_read,),
                start_new_session=True,
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
        except BaseException:
            os.close(watch_write)
            log.close()
            raise
        finally:
            os.close(watch_read)
        api = cls(process, port, watch_write, log)
        atexit.register(api.stop)
        return api

    def healthy(self) -> bool:
        """Whether the server answers its health check now."""
        if self.process.poll() is not None:
            return False
        try:
            with urllib.request.urlopen(f"{self.url}/health", timeout=2) as response:
                return bool(response.status == 200)
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            return False

    async def ready(self, timeout_s: float = STARTUP_TIMEOUT_S) -> None:
        """Wait, without blocking the event loop, until the server answers its health
        check; raise :class:`TemporaryAPIError` if it exits or does not answer within
        ``timeout_s``."""
        deadline = time.monotonic() + timeout_s
        while not await asyncio.to_thread(self.healthy):
            code = self.process.poll()
            if code is not None:
                raise TemporaryAPIError(
                    f"the temporary Prefect server exited with code {code}{self._last_words()}"
                )
            if time.monotonic() >= deadline:
                raise TemporaryAPIError(
                    f"the temporary Prefect server on port {self.port} did not answer "
                    f"within {timeout_s:.0f} s{self._last_words()}"
                )
            await asyncio.sleep(_POLL_S)

    def warm_up(self, flow_name: str) -> None:
        """Make the requests a flow run's start makes first, so the server does its lazy
        first-request work now (FastAPI builds its route table on the first request; the
        first flow-run query compiles): best effort, errors are left to the flow. Creating
        the flow by name is what the flow run does anyway."""
        requests = [
            ("GET", "/admin/version", None),
            ("POST", "/flows/", {"name": flow_name}),
            ("POST", "/flow_runs/filter", {"limit": 1}),
        ]
        for method, path, body in requests:
            request = urllib.request.Request(
                f"{self.url}{path}",
                method=method,
                data=None if body is None else json.dumps(body).encode(),
                headers={"Content-Type": "application/json"},
            )
            try:
                with urllib.request.urlopen(request, timeout=30) as response:
                    response.read()
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                return

    def _last_words(self) -> str:
        """The end of what the server wrote, as ``: ...`` (nothing if it wrote nothing)."""
        if self._log is None:
            return ""
        try:
            self._log.seek(0)
            lines = self._log.read().decode("utf-8", "replace").strip().splitlines()
        except (OSError, ValueError):
            return ""
        return f": {' / '.join(lines[-3:])[-500:]}" if lines else ""

    def stop(self) -> None:
        """Stop the server (what Prefect does with its own temporary server). Runs by
        itself at exit; call it earlier only once Prefect's background workers are
        drained (``EventsWorker.drain_all()``, ``APILogWorker.drain_all()``)."""
        if self.process.poll() is None:
            self._signal_group(signal.SIGTERM)
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._signal_group(signal.SIGKILL)
                self.process.wait()
        if self._watch_fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._watch_fd)
            self._watch_fd = None
        if self._log is not None:
            self._log.close()
            self._log = None

    def _signal_group(self, signum: int) -> None:
        """Signal the server's process group (the server and anything it started)."""
        try:
            os.killpg(self.process.pid, signum)
        except (ProcessLookupError, PermissionError, AttributeError):
            with contextlib.suppress(ProcessLookupError):
                self.process.send_signal(signum)

    def wanted(self) -> bool:
        """False when Prefect's settings already name an API or forbid a temporary
        server: the server is stopped at once and the run goes on without it."""
        if temporary_server_allowed():
            return True
        self.stop()
        return False

    @contextlib.contextmanager
    def serving(self) -> Iterator[str]:
        """Point Prefect at this server for the block (yields its URL). Prefect's UI URL
        is cleared meanwhile: this server has no UI and is gone when the command returns,
        so Prefect prints no "View at" link into it."""
        from prefect.settings import PREFECT_API_URL, PREFECT_UI_URL, temporary_settings

        with temporary_settings(updates={PREFECT_API_URL: self.url, PREFECT_UI_URL: ""}):
            yield self.url


async def run_on(
    api: TemporaryPrefectAPI | None, call: Callable[[], Awaitable[T]], *, flow_name: str
) -> T:
    """``await call()`` (a run of the flow ``flow_name``) against ``api`` once it answers,
    or as Prefect would without it when Prefect already has an API (``api`` is ``None`` or
    not wanted). Raises :class:`TemporaryAPIError` when the server does not start."""
    if api is None or not api.wanted():
        return await call()
    await asyncio.gather(api.ready(), _import_engines())
    await asyncio.to_thread(api.warm_up, flow_name)
    with api.serving():
        return await call()


async def _import_engines() -> None:
    for name in _RUN_ENGINES:
        importlib.import_module(name)
