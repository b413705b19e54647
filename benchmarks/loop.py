"""The local loop: ``python benchmarks/loop.py [--repeat N] [--no-write]``.

A tiny evaluation — 3 cases × 3 trials of the weather agent on the offline demo model
(``agentflow-demo/weather``: no server, no key) — timed three ways, each a fresh process
as a person runs it:

- **bare**: ``AgentEvaluator.evaluate_file`` in a Python process (what a pytest test
  runs: the stage list without Prefect);
- **--no-prefect**: ``agentflow-eval run ... --no-prefect``;
- **flow**: ``agentflow-eval run ...`` (the default: the ``evaluate`` flow on Prefect's
  temporary API server, whose database one unmeasured run creates first, as a user's
  home keeps it).

Each is run ``--repeat`` times (default 5), interleaved, and reported as medians of wall
and CPU time (CPU: steadier on a shared machine), as a ratio to bare and as bare +
seconds; the block between the loop markers of
``benchmarks/RESULTS.md`` is rewritten."""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.measure import (  # noqa: E402
    Measured,
    benchmark_parser,
    replace_block,
    run_measured,
    run_measured_cpu,
)
from benchmarks.run import RESULTS_MD, WEATHER_AGENT, machine  # noqa: E402
from benchmarks.workloads import Workload, write_workload  # noqa: E402

START_MARK = "<!-- loop:start -->"
END_MARK = "<!-- loop:end -->"
CASES, RUNS = 3, 3
WAYS = ("bare", "--no-prefect", "flow")

_BARE = """
import asyncio, sys
from agentflow_eval import AgentEvaluator
asyncio.run(AgentEvaluator.evaluate_file(
    sys.argv[1], sys.argv[2], sys.argv[3], min_pass_rate=0.0, output_dir=sys.argv[4]
))
"""


def _env(prefect_home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(PREFECT_HOME=str(prefect_home), PYTHONPATH=str(ROOT))
    for name in ("PREFECT_API_URL", "AGENTFLOW_EVAL_NO_PREFECT"):
        env.pop(name, None)  # Prefect's start is part of what the flow way measures
    return env


def _command(way: str, workload: Workload, output: Path) -> list[str]:
    if way == "bare":
        files = [str(workload.evalset), str(workload.config)]
        return [sys.executable, "-c", _BARE, WEATHER_AGENT, *files, str(output)]
    cli = [str(Path(sys.executable).parent / "agentflow-eval"), "run", WEATHER_AGENT]
    cli += [str(workload.evalset), "--config", str(workload.config), "--output", str(output)]
    return [*cli, "--quiet", *(["--no-prefect"] if way == "--no-prefect" else [])]


def measure(repeat: int, folder: Path) -> dict[str, list[Measured]]:
    """Each way ``repeat`` times, interleaved: wall and CPU time."""
    workload = write_workload(folder, "loop", cases=CASES, runs=RUNS)
    env = _env(folder / "prefect")
    run_measured(_command("flow", workload, folder / "warmup"), env=env, cwd=ROOT).check()
    runs: dict[str, list[Measured]] = {way: [] for way in WAYS}
    for index in range(repeat):
        for way in WAYS:
            output = folder / f"out-{index}-{way.strip('-')}"
            done = run_measured_cpu(_command(way, workload, output), env=env, cwd=ROOT)
            runs[way].append(done)
            print(
                f"[{time.strftime('%H:%M:%S')}] {way}: {done.run.wall_s:.2f} s wall, "
                f"{done.cpu_s:.2f} s CPU",
                flush=True,
            )
    return runs


def _against(value: float, bare: float) -> str:
    return f"{value / bare:.2f}× (bare {value - bare:+.1f} s)"


def summary_lines(runs: dict[str, list[Measured]], started: datetime) -> list[str]:
    about = machine()
    wall = {way: statistics.median(m.run.wall_s for m in runs[way]) for way in WAYS}
    cpu = {way: statistics.median(m.cpu_s for m in runs[way]) for way in WAYS}
    rows = [
        f"| {way} | {wall[way]:.2f} s | {_against(wall[way], wall['bare'])} "
        f"| {cpu[way]:.2f} s | {_against(cpu[way], cpu['bare'])} | "
        + "; ".join(f"{m.run.wall_s:.1f}/{m.cpu_s:.1f}" for m in runs[way])
        + " |"
        for way in WAYS
    ]
    return [
        f"Measured {started:%Y-%m-%d %H:%M} UTC on {about['cpu']}, Python {about['python']} "
        f"({about['packages']}); load average at start {about['load average at start']}.",
        "",
        f"### The local loop — {CASES} cases × {RUNS} trials on the demo model; medians of "
        f"{len(runs['bare'])}",
        "",
        "Each a fresh process: bare is `AgentEvaluator.evaluate_file` (as in pytest); "
        "`--no-prefect` and flow are `agentflow-eval run`, the flow on Prefect's temporary "
        "API server. CPU is the process's and its children's (the temporary server's).",
        "",
        "| way | wall | wall against bare | CPU | CPU against bare | each run: wall/CPU (s) |",
        "|---|---:|---:|---:|---:|---|",
        *rows,
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = benchmark_parser(__doc__.splitlines()[0], repeat=5)
    args = parser.parse_args(argv)
    started = datetime.now(UTC)
    with tempfile.TemporaryDirectory(prefix="agentflow-loop-") as tmp:
        runs = measure(args.repeat, Path(tmp))
    lines = summary_lines(runs, started)
    print("\n".join(["", *lines]))
    if not args.no_write:
        replace_block(RESULTS_MD, START_MARK, END_MARK, lines)
        print(f"written to {RESULTS_MD}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
