"""A disk that fills up mid-run (a 1 MB volume as the output folder): the CLI stops with
one line naming the folder and exit 3, no traceback; once there is space, `--resume`
finishes the run with every trial. Needs root to mount the volume (CI runs as root)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.cli_subprocess import command_in
from tests.support.prefect_server import PrefectServer

pytestmark = pytest.mark.e2e

AGENT = """
def chatty(message):
    return "rain " * 40_000  # 200 kB an answer: a few trials fill a 1 MB disk
"""


def _mount(args: list[str]) -> bool:
    done = subprocess.run(["mount", *args], capture_output=True, text=True)
    return done.returncode == 0


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    out = tmp_path / "out"
    out.mkdir()
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("mounting a small volume needs root")
    if not _mount(["-t", "tmpfs", "-o", "size=1m", "tmpfs", str(out)]):
        pytest.skip("this machine does not allow mounting a tmpfs")
    try:
        yield out
    finally:
        subprocess.run(["umount", "-l", str(out)], check=False)


def test_a_full_disk_stops_the_run_in_one_line_and_it_resumes_once_freed(
    small_disk: Path, tmp_path: Path, shared_prefect: PrefectServer
) -> None:
    (tmp_path / "chatty_agents.py").write_text(AGENT)
    evalset = tmp_path / "rain.evalset.json"
    evalset.write_text(
        json.dumps(
            {
                "eval_set_id": "rain",
                "eval_cases": [
                    {
                        "eval_id": f"case{n}",
                        "conversation": [{"user_content": "Rain?"}],
                        "expectations": [{"final_contains": "rain"}],
                    }
                    for n in range(4)
                ],
            }
        )
    )
    run = command_in(tmp_path, shared_prefect.api_url, timeout_s=300)

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return run("run", *args)

    full = cli("chatty_agents.py:chatty", str(evalset), "--runs", "5", "--output", str(small_disk))
    assert full.returncode == 3, full.stdout + full.stderr
    assert "Traceback" not in full.stderr, full.stderr
    (line,) = [ln for ln in full.stderr.splitlines() if "no space left" in ln]
    (run_dir,) = small_disk.glob("rain/*")
    assert f"--resume {run_dir}" in line or f"--resume {run_dir.relative_to(tmp_path)}" in line

    assert _mount(["-o", "remount,size=64m", str(small_disk)])
    resumed = cli("--resume", str(run_dir))
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    results = json.loads((run_dir / "results.json").read_text())
    assert results["totals"]["trials"] == 20 and results["totals"]["passed"] == 20
