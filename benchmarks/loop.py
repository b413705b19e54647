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

Each is run ``--repeat`` times (default 5), interleaved, and reported as medians, as a
ratio to bare and as bare + seconds; the block between the loop markers of
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
    ProcessRun,
    benchmark_parser,
    replace_block,
    run_measured,
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


def measure(repeat: int, folder: Path) -> dict[str, list[float]]:
    """Wall seconds of each way, ``repeat`` times each, interleaved."""
    workload = write_workload(folder, "loop", cases=CASES, runs=RUNS)
    env = _env(folder / "prefect")
    run_measured(_command("flow", workload, folder / "warmup"), env=env, cwd=ROOT).check()
    walls: dict[str, list[float]] = {way: [] for way in WAYS}
    for index in range(repeat):
        for way in WAYS:
            output = folder / f"out-{index}-{way.strip('-')}"
            run: ProcessRun = run_measured(_command(way, workload, output), env=env, cwd=ROOT)
            walls[way].append(run.check().wall_s)
            print(f"[{time.strftime('%H:%M:%S')}] {way}: {run.wall_s:.2f} s", flush=True)
    return walls


def summary_lines(walls: dict[str, list[float]], started: datetime) -> list[str]:
    about = machine()
    bare = statistics.median(walls["bare"])
    cells = []
    for way in WAYS:
        median = statistics.median(walls[way])
        relative = (
            "1.00×" if way == "bare" else f"{median / bare:.2f}× (bare + {median - bare:.1f} s)"
        )
        cells.append(
            f"| {way} | {median:.2f} s | {relative} | "
            + ", ".join(f"{wall:.2f}" for wall in walls[way])
            + " |"
        )
    count = len(walls["bare"])
    return [
        f"Measured {started:%Y-%m-%d %H:%M} UTC on {about['cpu']}, Python {about['python']} "
        f"({about['packages']}); load average at start {about['load average at start']}.",
        "",
        f"### The local loop — {CASES} cases × {RUNS} trials on the demo model; medians of {count}",
        "",
        "Each a fresh process: bare is `AgentEvaluator.evaluate_file` (as in pytest); "
        "`--no-prefect` and flow are `agentflow-eval run`, the flow on Prefect's temporary "
        "API server.",
        "",
        "| way | wall | against bare | each run (s) |",
        "|---|---:|---:|---|",
        *cells,
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = benchmark_parser(__doc__.splitlines()[0], repeat=5)
    args = parser.parse_args(argv)
    started = datetime.now(UTC)
    with tempfile.TemporaryDirectory(prefix="agentflow-loop-") as tmp:
        walls = measure(args.repeat, Path(tmp))
    lines = summary_lines(walls, started)
    print("\n".join(["", *lines]))
    if not args.no_write:
        replace_block(RESULTS_MD, START_MARK, END_MARK, lines)
        print(f"written to {RESULTS_MD}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
