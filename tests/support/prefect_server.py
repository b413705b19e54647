"""A real Prefect server (SQLite) on 127.0.0.1 for end-to-end tests, process workers, the
prefect CLI, and a copy of the project to deploy from."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.prefect_db import seeded_home

PREFECT = [sys.executable, "-m", "prefect"]
"""The prefect CLI on the tests' own interpreter (the ``prefect`` script's first line may
name another Python: a virtualenv copied from elsewhere keeps the original's)."""
ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def prefect_env(home: Path, api_url: str | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        PREFECT_HOME=str(home),
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        # Workers pick up new runs within two seconds (Prefect's default is 10). Each poll
        # costs the server CPU too: at one second, a worker's polls took about as much of
        # it as the idle server itself, on a tier that is bound by CPU.
        PREFECT_WORKER_QUERY_SECONDS="2",
    )
    if api_url:
        env["PREFECT_API_URL"] = api_url
    return env


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


class PortTaken(RuntimeError):
    """Another server answered on the port picked for this one."""


@contextmanager
def prefect_server(
    home: Path, timeout_s: float = 90, database_url: str | None = None
) -> Iterator[str]:
    """Start ``prefect server start`` (its database in ``home``, or at ``database_url``,
    e.g. PostgreSQL); yield its API URL once /api/health answers and the server answering
    is this one. A free port can be taken by another process before the server binds it
    (other test sessions on the machine start servers too): then it starts again on
    another port."""
    for attempt in range(3):
        try:
            with _prefect_server(home, timeout_s, database_url) as api_url:
                yield api_url
            return
        except PortTaken:
            if attempt == 2:
                raise


@contextmanager
def _prefect_server(home: Path, timeout_s: float, database_url: str | None) -> Iterator[str]:
    port = free_port()
    api_url = f"http://127.0.0.1:{port}/api"
    if database_url is None:
        seeded_home(home)  # its schema migrated already (tests/support/prefect_db.py)
    log = (home / "server.log").open("wb")
    env = {**prefect_env(home), "PREFECT_UI_API_URL": api_url}  # the UI calls this API
    if database_url:
        env["PREFECT_API_DATABASE_CONNECTION_URL"] = database_url
    process = subprocess.Popen(
        [*PREFECT, "server", "start", "--host", "127.0.0.1", "--port", str(port)],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                with urllib.request.urlopen(f"{api_url}/health", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(
                    "prefect server did not start:\n" + (home / "server.log").read_text()[-3000:]
                )
            time.sleep(0.5)
        if _served_home(api_url) != str(home):
            raise PortTaken(f"port {port} answered for another Prefect server")
        yield api_url
    finally:
        _stop(process)
        log.close()


def _served_home(api_url: str) -> str | None:
    """The PREFECT_HOME of the server answering at ``api_url`` (its settings say)."""
    with urllib.request.urlopen(f"{api_url}/admin/settings", timeout=10) as response:
        return json.loads(response.read()).get("home")


@dataclass(frozen=True)
class PrefectServer:
    """A running server: its API URL and its PREFECT_HOME (where its database is)."""

    home: Path
    api_url: str

    def database(self) -> bytes:
        """The bytes of the server's SQLite database (its write-ahead log included)."""
        return b"".join(
            p.read_bytes() for p in sorted(self.home.glob("prefect.db*")) if p.is_file()
        )


@contextmanager
def process_worker(
    home: Path,
    api_url: str,
    pool: str,
    cwd: Path,
    *options: str,
    name: str = "worker",
    env: dict[str, str] | None = None,
) -> Iterator[Path]:
    """Start a process worker on ``pool`` (``options`` go to ``prefect worker start``, e.g.
    ``--limit 1``; ``env`` adds to its environment, which its flow runs inherit); yield
    the path of its log, ``<home>/<name>.log``. Its pid is in ``<home>/<name>.pid``."""
    log_path = home / f"{name}.log"
    log = log_path.open("wb")
    process = subprocess.Popen(
        [
            *PREFECT,
            "worker",
            "start",
            "--pool",
            pool,
            "--type",
            "process",
            "--name",
            name,
            *options,
        ],
        # INFO: tests read from its log which flow runs it submitted
        env={
            **prefect_env(home, api_url),
            "PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL": "INFO",
            **(env or {}),
        },
        cwd=cwd,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    (home / f"{name}.pid").write_text(str(process.pid))
    try:
        yield log_path
    finally:
        _stop(process)
        log.close()


def descendants(pid: int) -> list[int]:
    """The processes ``pid`` started, and theirs, from ``/proc`` (Linux)."""
    children: dict[int, list[int]] = {}
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(
                line.split(":\t", 1) for line in status.read_text().splitlines() if ":\t" in line
            )
        except OSError:  # gone meanwhile
            continue
        children.setdefault(int(fields["PPid"]), []).append(int(fields["Pid"]))
    found: list[int] = []
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def kill_machine(pid: int) -> list[int]:
    """SIGKILL process ``pid`` and every process it started, at once, as a machine that
    loses power would stop them; returns the pids killed."""
    victims = [pid, *descendants(pid)]
    for victim in victims:
        with suppress(ProcessLookupError):
            os.kill(victim, signal.SIGKILL)
    return victims


def prefect_cli(home: Path, api_url: str, *args: str, cwd: Path, **env: str) -> str:
    """Run the prefect CLI; return its output, raising with it on failure."""
    result = subprocess.run(
        [*PREFECT, "--no-prompt", *args],
        env={**prefect_env(home, api_url), **env},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if result.returncode != 0:
        raise AssertionError(f"prefect {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return result.stdout


_CRASH_AUTOMATION_STEP = re.compile(
    r"(?m)^  - agentflow_eval\.flows\.support\.deploy_steps\.ensure_automations:\n(?:      .*\n)+"
)


def deployable_copy(target: Path, pool: str, *, crash_automation: bool = False) -> Path:
    """The files prefect.yaml's deployments need — itself, the entrypoints, the examples,
    the automations its build step installs — copied to ``target``, their work pool
    renamed ``pool``: tests that share a server deploy to pools of their own, so no worker
    takes another test's flow run.

    The build step that installs the crash automation is left out unless
    ``crash_automation``: on the session's SQLite server its proactive trigger writes a
    bucket per flow run, and those writes lock the database for the modules after it (the
    pool setup the deployment guide gives is PostgreSQL). The module that tests it asks
    for it and removes it when done."""
    target.mkdir(parents=True)
    text = (ROOT / "prefect.yaml").read_text(encoding="utf-8")
    renamed, count = re.subn(
        r"(?m)^(\s+work_pool:.*\n\s+name: )agentflow-eval$", rf"\g<1>{pool}", text
    )
    assert count == 3, "prefect.yaml names its work pool in three places"
    if not crash_automation:
        renamed, count = _CRASH_AUTOMATION_STEP.subn("", renamed)
        assert count == 1, "prefect.yaml installs the crash automation in one build step"
    (target / "prefect.yaml").write_text(renamed, encoding="utf-8")
    for folder in ("flows", "examples", "deployments/automations"):
        shutil.copytree(
            ROOT / folder, target / folder, ignore=shutil.ignore_patterns("__pycache__")
        )
    return target


async def server_events(
    api_url: str,
    name: str,
    where: Callable[[Any], bool] = lambda event: True,
    timeout_s: float = 60,
) -> list[Any]:
    """The ``name`` events matching ``where`` in the server's events API, once there is
    one (events are stored a moment after they are emitted)."""
    from prefect.client.orchestration import PrefectClient
    from prefect.events.filters import EventFilter, EventNameFilter

    async with PrefectClient(api=api_url) as client:
        for _ in range(int(timeout_s / 2)):
            page = await client.read_events(
                EventFilter(event=EventNameFilter(name=[name])), limit=50
            )
            found = [event for event in page.events if where(event)]
            if found:
                return found
            await asyncio.sleep(2)
    raise AssertionError(f"no matching {name} event within {timeout_s}s")


async def start_next_scheduled_run(api_url: str, deployment_name: str, interval_s: float) -> Any:
    """The id of the next run the scheduler made for ``deployment_name`` (whose one
    schedule is every ``interval_s`` seconds), made due now instead of waiting for it.
    Only the deployment's own runs count: another module may have deployed the same
    deployment on the session's server, and the runs it left carry its parameters."""
    from prefect.client.orchestration import PrefectClient
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterDeploymentId
    from prefect.states import Scheduled

    async with PrefectClient(api=api_url) as client:
        deployment = await client.read_deployment_by_name(deployment_name)
        intervals = [s.schedule.interval.total_seconds() for s in deployment.schedules]  # type: ignore[union-attr]
        assert intervals == [interval_s], intervals
        of_deployment = FlowRunFilter(deployment_id=FlowRunFilterDeploymentId(any_=[deployment.id]))
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            scheduled = [
                r
                for r in await client.read_flow_runs(flow_run_filter=of_deployment)
                if r.state_name == "Scheduled"
                and r.auto_scheduled
                and r.parameters == deployment.parameters
            ]
            if scheduled:
                first = min(scheduled, key=lambda r: r.expected_start_time or 0)
                await client.set_flow_run_state(first.id, Scheduled(), force=True)
                return first.id
            await asyncio.sleep(1)
    raise AssertionError(f"the scheduler made no run of {deployment_name} within 120 s")
