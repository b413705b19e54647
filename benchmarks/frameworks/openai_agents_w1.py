"""W1 for the OpenAI Agents SDK adapter: ``python benchmarks/frameworks/openai_agents_w1.py``.

200 cases × 5 trials (1000 trials) of an SDK weather agent, each trial one user turn that
makes two model calls — a ``get_weather`` tool call, then the answer written from the
tool's result — against the benchmark's scripted model server (``benchmarks.bench_server``,
in its own process, 50 ms per reply), at most 16 trials at once. Timed two ways, on the
same server, with a fresh agent (and so a fresh ``AsyncOpenAI`` client) for each timing:

- **adapter**: the trial phase through the adapter, as a run does it: the run planned
  (``plan_run``) and ``run.trials.run_trials`` timed, which writes ``trials.jsonl``, runs
  the loop watchdog and records every trial's trajectory; no judging;
- **SDK alone**: ``Runner.run(agent, question)`` for the same 1000 questions under
  ``asyncio.Semaphore(16)`` with ``asyncio.gather``, in a bare event loop.

Each timing is preceded by an untimed warm-up (16 trials the same way); the two sides
take turns going first, and the whole is repeated (``--repeat``, default 3); medians are
reported with the ratio adapter / SDK alone (target ≤ 1.2), for wall time and for the
process's CPU time. The SDK's tracing is off for both.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from agents import (  # noqa: E402
    Agent,
    OpenAIChatCompletionsModel,
    Runner,
    function_tool,
    set_tracing_disabled,
)
from openai import AsyncOpenAI  # noqa: E402

from agentflow_eval.agents.frameworks import wrap  # noqa: E402
from agentflow_eval.criteria.config_files import load_config  # noqa: E402
from agentflow_eval.files.loading import load_evalset  # noqa: E402
from agentflow_eval.llm.client import ModelClient  # noqa: E402
from agentflow_eval.llm.ratelimit import RateLimiter  # noqa: E402
from agentflow_eval.run.plan import RunInputs, RunOptions, plan_run  # noqa: E402
from agentflow_eval.run.trials import run_trials  # noqa: E402
from benchmarks.bench_model import AGENT_MODEL  # noqa: E402
from benchmarks.workloads import Workload, write_workload  # noqa: E402
from examples.weather import agent as weather  # noqa: E402

LATENCY_S = 0.05
CONCURRENCY = 16
CASES, RUNS = 200, 5
WARM_UP = 16


@function_tool
def get_weather(location: str) -> str:
    """Get the current weather for a city.

    Args:
        location: The city to look up, e.g. "Tokyo" or "San Francisco".
    """
    return json.dumps(weather.get_weather(location))


def sdk_agent(client: AsyncOpenAI) -> Agent[Any]:
    """The weather agent as the SDK writes it, on the benchmark's model."""
    return Agent(
        name="weather_agent",
        instructions=weather.SYSTEM_PROMPT,
        tools=[get_weather],
        model=OpenAIChatCompletionsModel(model=AGENT_MODEL, openai_client=client),
    )


def new_client(api_base: str) -> AsyncOpenAI:
    """A client for one timing (closed in its event loop: a client kept for the next
    loop would have its connections closed there, noisily)."""
    return AsyncOpenAI(base_url=api_base, api_key="bench", max_retries=0)


@contextmanager
def model_server() -> Iterator[str]:
    """``benchmarks.bench_server`` in its own process; yields its ``api_base``."""
    process = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.bench_server", "--latency", str(LATENCY_S)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        if not url.startswith("http"):
            raise RuntimeError(f"benchmark server did not start (first line: {url!r})")
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


def questions(workload: Workload) -> list[str]:
    """Every trial's question, in the order the run plans them (case by case)."""
    document = json.loads(workload.evalset.read_text(encoding="utf-8"))
    return [
        case["conversation"][0]["user_content"]
        for case in document["eval_cases"]
        for _ in range(workload.runs)
    ]


Timing = tuple[float, float]
"""Wall seconds, and CPU seconds of this process (every thread) meanwhile."""


async def _adapter_trials(api_base: str, workload: Workload, folder: Path, runs: int) -> Timing:
    loaded = load_evalset(workload.evalset)
    config = load_config(workload.config)
    client = new_client(api_base)
    agent = wrap(sdk_agent(client), name="agent")
    handle = plan_run(
        RunInputs.of(loaded.eval_set, config),
        RunOptions(runs=runs, max_concurrency=CONCURRENCY),
        agent=agent,
        output_dir=folder,
    )
    with handle:
        async with ModelClient(RateLimiter.from_config(handle.plan.config)) as models:
            started, cpu = time.perf_counter(), time.process_time()
            counts = await run_trials(handle.plan, agent, models)
            elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    await client.close()
    if counts.errored or counts.written != len(loaded.eval_set.eval_cases) * runs:
        raise RuntimeError(f"adapter run went wrong: {counts}")
    return elapsed, cpu


async def _sdk_alone(api_base: str, asked: list[str]) -> Timing:
    client = new_client(api_base)
    agent = sdk_agent(client)
    gate = asyncio.Semaphore(CONCURRENCY)

    async def one(question: str) -> str:
        async with gate:
            result = await Runner.run(agent, question)
        return str(result.final_output)

    started, cpu = time.perf_counter(), time.process_time()
    answers = await asyncio.gather(*(one(q) for q in asked))
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    await client.close()
    if not all(answers):
        raise RuntimeError("SDK alone: an empty answer")
    return elapsed, cpu


def measure_adapter(api_base: str, workload: Workload, warm_up: Workload, folder: Path) -> Timing:
    asyncio.run(_adapter_trials(api_base, warm_up, folder / "warm", 1))
    return asyncio.run(_adapter_trials(api_base, workload, folder / "timed", workload.runs))


def measure_sdk_alone(api_base: str, asked: list[str]) -> Timing:
    asyncio.run(_sdk_alone(api_base, asked[:WARM_UP]))
    return asyncio.run(_sdk_alone(api_base, asked))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    set_tracing_disabled(True)
    adapter: list[Timing] = []
    alone: list[Timing] = []
    with tempfile.TemporaryDirectory(prefix="oai-w1-") as tmp, model_server() as api_base:
        folder = Path(tmp)
        workload = write_workload(folder / "files", "w1", cases=CASES, runs=RUNS)
        warm_up = write_workload(folder / "files", "warm", cases=WARM_UP, runs=1)
        asked = questions(workload)
        for index in range(args.repeat):
            # the order alternates, so neither side always runs on the warmer process
            if index % 2 == 0:
                alone.append(measure_sdk_alone(api_base, asked))
            adapter.append(measure_adapter(api_base, workload, warm_up, folder / f"run{index}"))
            if index % 2 == 1:
                alone.append(measure_sdk_alone(api_base, asked))
            (a_wall, a_cpu), (b_wall, b_cpu) = adapter[-1], alone[-1]
            print(
                f"  repetition {index + 1}: adapter {a_wall:.2f} s (CPU {a_cpu:.2f} s), "
                f"SDK alone {b_wall:.2f} s (CPU {b_cpu:.2f} s), {a_wall / b_wall:.2f}×; "
                f"load average {os.getloadavg()[0]:.1f}",
                flush=True,
            )
    a = statistics.median(t[0] for t in adapter)
    b = statistics.median(t[0] for t in alone)
    a_cpu = statistics.median(t[1] for t in adapter)
    b_cpu = statistics.median(t[1] for t in alone)
    print(
        f"W1 openai-agents ({CASES}×{RUNS} trials, 2 model calls each, {LATENCY_S * 1000:.0f} ms "
        f"latency, concurrency {CONCURRENCY}, medians of {args.repeat}): adapter {a:.2f} s, "
        f"SDK alone {b:.2f} s, ratio {a / b:.2f}× (target ≤ 1.2×); CPU {a_cpu:.2f} s vs "
        f"{b_cpu:.2f} s ({a_cpu / b_cpu:.2f}×)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
