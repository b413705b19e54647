"""`--output` naming a file, or a place no folder can be made (`/proc/x`), is one line and
exit 2 — not a traceback and exit 1, the code a CI gate reads as "below --fail-under"."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.cli_in_process import CliResult


@pytest.mark.parametrize("where", ["a file", "/proc/x"])
def test_an_output_that_cannot_hold_runs_is_one_line_and_exit_2(
    tmp_path: Path, where: str, cli: Callable[..., CliResult]
) -> None:
    if where == "a file":
        output = tmp_path / "results.txt"
        output.write_text("not a folder")
    else:
        output = Path("/proc/x")
        if not Path("/proc").is_dir():
            pytest.skip("no /proc here")
    done = cli(
        "run",
        "examples.weather.agent:agent",
        "examples/weather/weather.evalset.json",
        "--runs",
        "1",
        "--quiet",
        "--output",
        str(output),
    )
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"agentflow-eval: error: output folder {output}: cannot create")
    assert done.stdout == ""
