"""Fault matrix, area 4, with a second process: a run folder another process holds cannot
be taken, and the holder is named — by the lock itself and by the CLI, in one line; the
lock of a process that died is taken over."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agentflow_eval.cli import main
from agentflow_eval.run.folder_lock import LOCK_NAME, RunFolderBusy, RunFolderLock
from tests.support.faults import ANSWER, unfinished_run_dir

ROOT = Path(__file__).resolve().parents[2]


def agent(message: str) -> str:
    return ANSWER


def hold_in_subprocess(run_dir: Path) -> subprocess.Popen[str]:
    """Another process holding ``run_dir``'s lock until killed."""
    code = textwrap.dedent(
        f"""
        import sys, time
        from agentflow_eval.run.folder_lock import RunFolderLock
        lock = RunFolderLock.acquire({str(run_dir)!r})
        print("held", flush=True)
        time.sleep(600)
        """
    )
    process = subprocess.Popen(
        [sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None and process.stdout.readline().strip() == "held"
    return process


def test_two_owners_of_one_folder_are_refused_naming_the_holder(tmp_path: Path) -> None:
    holder = hold_in_subprocess(tmp_path)
    try:
        with pytest.raises(RunFolderBusy) as busy:
            RunFolderLock.acquire(tmp_path)
        message = str(busy.value)
        assert f"in use by process {holder.pid} on this host (since " in message
        assert "\n" not in message
    finally:
        holder.kill()
        holder.wait()
    # the holder died without letting go: its lock is taken over
    with RunFolderLock.acquire(tmp_path) as lock:
        assert lock.holder.pid == os.getpid()
        recorded = json.loads((tmp_path / LOCK_NAME).read_text())
        assert recorded["pid"] == os.getpid()
        with pytest.raises(RunFolderBusy, match="in use by this process"):
            RunFolderLock.acquire(tmp_path)  # one process, two runs: refused too
    RunFolderLock.acquire(tmp_path).release()  # released: free again


def test_the_cli_refuses_a_folder_another_process_holds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """--resume of a folder another process holds: exit 2, one line naming the holder,
    before anything starts."""
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:9/api")  # no server is started
    run_dir = unfinished_run_dir(tmp_path, "tests.e2e.test_run_folder_owners:agent")
    monkeypatch.chdir(ROOT)

    holder = hold_in_subprocess(run_dir)
    try:
        assert main(["run", "--resume", str(run_dir)]) == 2
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and f"in use by process {holder.pid}" in err
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()


def test_a_busy_folder_is_refused_before_any_server_starts(tmp_path: Path) -> None:
    """The real CLI, in its own process, with no Prefect API configured (so it would
    launch its temporary server): a --resume of a folder another process holds is refused
    in one line, exit 2, and the CLI spawned no process at all — the lock is taken before
    the server is launched. Every process the CLI starts is recorded by an audit hook
    (``subprocess.Popen`` raises an audit event before it forks)."""
    run_dir = unfinished_run_dir(tmp_path, "tests.e2e.test_run_folder_owners:agent")
    spawned = tmp_path / "spawned.txt"
    cli = textwrap.dedent(
        f"""
        import sys
        def record(event, args):
            if event == "subprocess.Popen":
                with open({str(spawned)!r}, "a") as out:
                    out.write(repr(args[1]) + "\\n")
        sys.addaudithook(record)
        from agentflow_eval.cli import main
        sys.exit(main(["run", "--resume", {str(run_dir)!r}]))
        """
    )
    env = {key: value for key, value in os.environ.items() if key != "PREFECT_API_URL"}
    holder = hold_in_subprocess(run_dir)
    try:
        done = subprocess.run(
            [sys.executable, "-c", cli],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    assert done.returncode == 2, done.stderr
    err = done.stderr.strip()
    assert err.count("\n") == 0 and f"in use by process {holder.pid}" in err
    assert not spawned.exists(), spawned.read_text()
