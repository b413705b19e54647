"""W1 for the Pydantic AI adapter: ``python benchmarks/frameworks/pydantic_ai_w1.py``.

200 cases × 5 trials of a Pydantic AI weather agent (``get_weather`` from the example, an
``OpenAIChatModel`` on the benchmark's scripted server: one tool call, then the answer —
two model calls per trial, 50 ms each), at most 16 at a time, measured two ways on the
same agent object and the same server:

- **framework alone** — ``agent.run(question)`` per trial, ``asyncio.gather`` under a
  ``Semaphore(16)``: what Pydantic AI costs by itself;
- **through the adapter** — the run's trial stage (``pipeline.stages.trials_stage`` on a
  planned run, ``max_concurrency`` 16): a session per trial, events read from the run's
  messages, each trial redacted and written to ``trials.jsonl``; planning, judging and
  reporting are left out.

The server runs in its own process (``benchmarks.bench_server``), so it does not share
this process's GIL. One unmeasured warm-up of each comes first (imports, Pydantic AI's
schemas, the connection pool); then ``--repeats`` rounds, alternating which goes first.
Prints each round and a one-line summary with the medians and their ratio (target:
adapter ≤ 1.2 × framework alone).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from openai import AsyncOpenAI  # noqa: E402
from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.models.openai import OpenAIChatModel  # noqa: E402
from pydantic_ai.providers.openai import OpenAIProvider  # noqa: E402

from agentflow_eval.agents.frameworks.pydantic_ai import PydanticAIAgent  # noqa: E402
from agentflow_eval.files.loading import load_evalset  # noqa: E402
from agentflow_eval.llm.client import ModelClient  # noqa: E402
from agentflow_eval.llm.ratelimit import RateLimiter  # noqa: E402
from agentflow_eval.pipeline.stages import trials_stage  # noqa: E402
from agentflow_eval.run.inputs import RunInputs  # noqa: E402
from agentflow_eval.run.plan import RunOptions, plan_run  # noqa: E402
from benchmarks.bench_model import AGENT_MODEL  # noqa: E402
from benchmarks.run import model_server, questions  # noqa: E402
from benchmarks.workloads import Workload, write_workload  # noqa: E402
from examples.weather.agent import SYSTEM_PROMPT, get_weather  # noqa: E402

LATENCY_S = 0.05
CONCURRENCY = 16
CASES, RUNS = 200, 5


def weather_agent(api_base: str) -> Agent[None, str]:
    """The weather agent, written the Pydantic AI way, on the benchmark's server."""
    client = AsyncOpenAI(base_url=api_base, api_key="bench")
    model = OpenAIChatModel(AGENT_MODEL, provider=OpenAIProvider(openai_client=client))
    return Agent(model, name="weather_agent", instructions=SYSTEM_PROMPT, tools=[get_weather])


@dataclass(frozen=True)
class Timing:
    """Wall seconds, and this process's CPU seconds (the server runs in another)."""

    wall_s: float
    cpu_s: float


def _since(wall: float, cpu: float) -> Timing:
    return Timing(time.perf_counter() - wall, time.process_time() - cpu)


async def framework_alone(agent: Agent[None, str], asked: list[str]) -> Timing:
    """``agent.run`` on every question, ``CONCURRENCY`` at a time."""
    gate = asyncio.Semaphore(CONCURRENCY)

    async def one(question: str) -> None:
        async with gate:
            result = await agent.run(question)
        if not result.output:
            raise RuntimeError(f"empty answer to {question!r}")

    wall, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(one(q) for q in asked))
    return _since(wall, cpu)


async def through_adapter(agent: Agent[None, str], workload: Workload, out: Path) -> Timing:
    """The trial stage of a planned run of ``workload`` (checked: every trial
    answered, two model calls and one tool call each)."""
    loaded = load_evalset(workload.evalset).eval_set
    inputs = RunInputs.of(loaded, None)
    options = RunOptions(runs=workload.runs, max_concurrency=CONCURRENCY)
    with plan_run(inputs, options, agent=PydanticAIAgent(agent), output_dir=out) as handle:
        plan = handle.plan
        async with ModelClient(RateLimiter.from_config(plan.config)) as models:
            wall, cpu = time.perf_counter(), time.process_time()
            await trials_stage(plan, PydanticAIAgent(agent), models)
            elapsed = _since(wall, cpu)
        lines = plan.paths.trials.read_text(encoding="utf-8").splitlines()
    trials = [json.loads(line) for line in lines]
    bad = [
        t
        for t in trials
        if t.get("error")
        or len(t["turns"][0]["tool_calls"]) != 1
        or t["turns"][0]["usage"]["calls"] != 2
        or not t["turns"][0]["final_response"]
    ]
    if len(trials) != workload.trials or bad:
        raise RuntimeError(f"{len(trials)} trials, {len(bad)} unexpected: {bad[:1]}")
    return elapsed


async def measure(api_base: str, repeats: int, folder: Path) -> list[tuple[Timing, Timing]]:
    agent = weather_agent(api_base)
    workload = write_workload(folder, "w1", cases=CASES, runs=RUNS, concurrency=CONCURRENCY)
    warm = write_workload(folder, "warm", cases=CONCURRENCY, runs=1, concurrency=CONCURRENCY)
    asked = questions(workload)
    await framework_alone(agent, questions(warm))
    await through_adapter(agent, warm, folder / "out-warm")
    rounds: list[tuple[Timing, Timing]] = []
    for index in range(repeats):
        if index % 2 == 0:
            bare = await framework_alone(agent, asked)
            adapted = await through_adapter(agent, workload, folder / f"out-{index}")
        else:
            adapted = await through_adapter(agent, workload, folder / f"out-{index}")
            bare = await framework_alone(agent, asked)
        rounds.append((bare, adapted))
        print(
            f"round {index + 1}: framework alone {bare.wall_s:.2f} s (CPU {bare.cpu_s:.2f} s), "
            f"through the adapter {adapted.wall_s:.2f} s (CPU {adapted.cpu_s:.2f} s): "
            f"{adapted.wall_s / bare.wall_s:.2f}× wall, {adapted.cpu_s / bare.cpu_s:.2f}× CPU",
            flush=True,
        )
    return rounds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pai-w1-") as tmp, model_server(LATENCY_S) as url:
        rounds = asyncio.run(measure(url, args.repeats, Path(tmp)))
    bare = statistics.median(b.wall_s for b, _ in rounds)
    adapted = statistics.median(a.wall_s for _, a in rounds)
    wall = statistics.median(a.wall_s / b.wall_s for b, a in rounds)
    cpu = statistics.median(a.cpu_s / b.cpu_s for b, a in rounds)
    print(
        f"pydantic-ai W1 ({CASES}×{RUNS} trials, 2 calls each, {LATENCY_S * 1000:.0f} ms, "
        f"concurrency {CONCURRENCY}): framework alone {bare:.2f} s, adapter {adapted:.2f} s; "
        f"adapter/framework {wall:.2f}× wall, {cpu:.2f}× CPU (medians of {len(rounds)} "
        "rounds' ratios; target ≤ 1.20×)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
