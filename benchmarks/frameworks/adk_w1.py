"""W1 for the Google ADK adapter: 200 cases x 5 trials of an ADK weather agent, its model
a scripted server (50 ms per reply, its own process) that answers each question with one
``get_weather`` call, then the answer from the tool's result (two model calls a trial).

Two sides, at most 16 trials in flight, on the same server, in the same process:

- **ADK alone**: per trial a ``Runner`` with its own ``InMemorySessionService``, one
  session, one ``run_async`` turn, driven by ``asyncio.gather`` under a
  ``Semaphore(16)``: what the adapter does for a trial, without agentflow-eval;
- **through agentflow-eval**: the same agent wrapped by the adapter, the run planned as
  ``pipeline.evaluate`` plans it (``max_concurrency=16``), and its trial stage
  (``pipeline.stages.trials_stage``: sessions, trials, their records, ``trials.jsonl``)
  timed; judging and reports, which are not the adapter's, are left out.

Both sides are timed in wall seconds and in this process's CPU seconds (the server runs
in its own process), as the machine is shared and wall times swing with its load.

The sides take turns going first, after a warm-up that pays the process's first-call
costs. Prints each repetition and a one-line summary with the medians and their ratio.

``python benchmarks/frameworks/adk_w1.py [--repeats 3] [--cases 200] [--runs 5]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from google.adk.agents import LlmAgent  # noqa: E402
from google.adk.models.lite_llm import LiteLlm  # noqa: E402
from google.adk.runners import Runner  # noqa: E402
from google.adk.sessions import InMemorySessionService  # noqa: E402
from google.genai import types  # noqa: E402

from agentflow_eval.agents.frameworks import adk  # noqa: E402
from agentflow_eval.files.loading import load_config, load_evalset  # noqa: E402
from agentflow_eval.llm.client import ModelClient  # noqa: E402
from agentflow_eval.llm.ratelimit import RateLimiter  # noqa: E402
from agentflow_eval.pipeline.stages import trials_stage  # noqa: E402
from agentflow_eval.run.plan import RunInputs, plan_run  # noqa: E402
from agentflow_eval.run.settings import RunOptions  # noqa: E402
from benchmarks.bench_model import AGENT_MODEL, CITIES  # noqa: E402
from benchmarks.run import model_server  # noqa: E402
from benchmarks.workloads import write_workload  # noqa: E402
from examples.weather.agent import SYSTEM_PROMPT, get_weather  # noqa: E402

LATENCY_S = 0.05
CONCURRENCY = 16
APP = "weather_agent"
USER = adk.DEFAULT_USER_ID


def weather_agent(api_base: str) -> LlmAgent:
    return LlmAgent(
        name="weather_agent",
        model=LiteLlm(model=f"openai/{AGENT_MODEL}", api_base=api_base, api_key="bench"),
        instruction=SYSTEM_PROMPT,
        tools=[get_weather],
    )


async def adk_alone(agent: LlmAgent, questions: list[str]) -> tuple[float, float]:
    """(wall, CPU) seconds for every question as one ADK run each, 16 at a time."""
    gate = asyncio.Semaphore(CONCURRENCY)

    async def trial(question: str) -> str:
        async with gate:
            sessions = InMemorySessionService()
            runner = Runner(agent=agent, app_name=APP, session_service=sessions)
            session = await sessions.create_session(app_name=APP, user_id=USER)
            answer = ""
            message = types.Content(role="user", parts=[types.Part(text=question)])
            async for event in runner.run_async(
                user_id=USER, session_id=session.id, new_message=message
            ):
                if event.is_final_response() and event.content and event.content.parts:
                    answer = "".join(part.text or "" for part in event.content.parts)
            await runner.close()
            return answer

    start, cpu = time.perf_counter(), time.process_time()
    answers = await asyncio.gather(*(trial(q) for q in questions))
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    empty = sum(1 for answer in answers if not answer)
    if empty:
        raise RuntimeError(f"ADK alone: {empty} trials gave no answer")
    return elapsed, cpu


async def through_agentflow(
    agent: LlmAgent, evalset: Path, config: Path, output: Path
) -> tuple[float, float]:
    """(wall, CPU) seconds of the trial stage for the workload through the adapter: the
    run planned as ``pipeline.evaluate`` plans it, then only its trials stage timed (its
    judging, aggregation and reports are not the adapter's)."""
    wrapped = adk.wrap(agent, name="weather_agent")
    inputs = RunInputs.of(load_evalset(evalset).eval_set, load_config(config))
    handle = plan_run(
        inputs, RunOptions(max_concurrency=CONCURRENCY), agent=wrapped, output_dir=output
    )
    with handle:
        plan = handle.plan
        async with ModelClient(RateLimiter.from_config(plan.config)) as models:
            start, cpu = time.perf_counter(), time.process_time()
            counts = await trials_stage(plan, wrapped, models)
            elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    (trials,) = output.glob("*/*/trials.jsonl")
    records = [json.loads(line) for line in trials.read_text(encoding="utf-8").splitlines()]
    answered = sum(1 for r in records if r["error"] is None and r["turns"][0]["final_response"])
    if counts.errored or answered != len(records) or not records:
        raise RuntimeError(f"through agentflow-eval: {counts}, {answered} answered")
    return elapsed, cpu


async def main(repeats: int, cases: int, runs: int) -> None:
    questions = [f"What's the weather in {CITIES[i % len(CITIES)]}?" for i in range(cases)]
    questions = [q for q in questions for _ in range(runs)]
    with tempfile.TemporaryDirectory() as folder, model_server(LATENCY_S) as api_base:
        work = Path(folder)
        workload = write_workload(work / "workload", "w1", cases=cases, runs=runs)
        agent = weather_agent(api_base)
        adk.wrap(agent, name="warm-up")  # the adapter's imports, as loading an agent does
        await adk_alone(agent, questions[: CONCURRENCY * 2])  # first-call costs, both sides
        alone: list[float] = []
        alone_cpu: list[float] = []
        stage: list[float] = []
        stage_cpu: list[float] = []
        for repeat in range(repeats):
            run_dir = work / f"run{repeat}"
            if repeat % 2:  # every other repetition the other side goes first
                through = await through_agentflow(agent, workload.evalset, workload.config, run_dir)
                bare = await adk_alone(agent, questions)
            else:
                bare = await adk_alone(agent, questions)
                through = await through_agentflow(agent, workload.evalset, workload.config, run_dir)
            alone.append(bare[0])
            alone_cpu.append(bare[1])
            stage.append(through[0])
            stage_cpu.append(through[1])
            print(
                f"repetition {repeat + 1}: ADK alone {bare[0]:.2f} s (CPU {bare[1]:.2f} s); "
                f"through agentflow-eval {through[0]:.2f} s ({through[0] / bare[0]:.2f}x; "
                f"CPU {through[1]:.2f} s, {through[1] / bare[1]:.2f}x)",
                flush=True,
            )
    a, t = statistics.median(alone), statistics.median(stage)
    ac, tc = statistics.median(alone_cpu), statistics.median(stage_cpu)
    print(
        f"adk W1 ({cases}x{runs} trials, {CONCURRENCY} in flight, {LATENCY_S * 1000:.0f} ms "
        f"replies, one tool call then an answer; medians of {repeats}): ADK alone {a:.2f} s, "
        f"through agentflow-eval {t:.2f} s trial stage ({t / a:.2f}x; target <= 1.2x); "
        f"CPU {ac:.2f} s vs {tc:.2f} s ({tc / ac:.2f}x)"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    asyncio.run(main(args.repeats, args.cases, args.runs))
