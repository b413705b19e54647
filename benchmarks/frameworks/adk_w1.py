"""W1 for the Google ADK adapter: 200 cases x 5 trials of an ADK weather agent, its model
a scripted server (50 ms per reply, its own process) that answers each question with one
``get_weather`` call, then the answer from the tool's result (two model calls a trial).

Two sides, at most 16 trials in flight, on the same server, in the same process:

- **ADK alone**: per trial a ``Runner`` with its own ``InMemorySessionService``, one
  session, one ``run_async`` turn, driven by ``asyncio.gather`` under a
  ``Semaphore(16)``: what the adapter does for a trial, without agentflow-eval;
- **through agentflow-eval**: the same agent wrapped by the adapter, evaluated by
  ``pipeline.evaluate`` (``max_concurrency=16``, judged by the two local criteria only);
  the trial phase is read from ``trials.jsonl`` (first trial start to last trial end),
  as ``benchmarks/run.py`` reads it, and the whole call is timed too.

The sides take turns going first, after a warm-up that pays the process's first-call
costs. Prints each repetition and a one-line summary with the medians and their ratio.

``python benchmarks/frameworks/adk_w1.py [--repeats 3] [--cases 200] [--runs 5]``
"""

from __future__ import annotations

import argparse
import asyncio
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
from agentflow_eval.pipeline.evaluate import evaluate  # noqa: E402
from agentflow_eval.run.settings import RunOptions  # noqa: E402
from benchmarks.bench_model import AGENT_MODEL, CITIES  # noqa: E402
from benchmarks.measure import trial_times  # noqa: E402
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
) -> tuple[float, float, float]:
    """(trial phase, whole evaluate call, CPU of the whole call) in seconds for the
    workload through the adapter."""
    loaded = load_evalset(evalset)
    start, cpu = time.perf_counter(), time.process_time()
    result = await evaluate(
        adk.wrap(agent, name="weather_agent"),
        loaded.eval_set,
        load_config(config),
        options=RunOptions(max_concurrency=CONCURRENCY),
        output_dir=output,
    )
    whole, cpu = time.perf_counter() - start, time.process_time() - cpu
    if result.totals.passed != result.totals.trials:
        raise RuntimeError(f"through agentflow-eval: {result.totals}")
    (trials,) = output.glob("*/*/trials.jsonl")
    return trial_times(trials.parent).phase_s, whole, cpu


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
        phases: list[float] = []
        wholes: list[float] = []
        wholes_cpu: list[float] = []
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
            phases.append(through[0])
            wholes.append(through[1])
            wholes_cpu.append(through[2])
            print(
                f"repetition {repeat + 1}: ADK alone {bare[0]:.2f} s (CPU {bare[1]:.2f} s); "
                f"through agentflow-eval trial phase {through[0]:.2f} s "
                f"({through[0] / bare[0]:.2f}x), whole evaluate {through[1]:.2f} s "
                f"(CPU {through[2]:.2f} s, {through[2] / bare[1]:.2f}x)",
                flush=True,
            )
    a, p, w = (statistics.median(xs) for xs in (alone, phases, wholes))
    ac, wc = statistics.median(alone_cpu), statistics.median(wholes_cpu)
    print(
        f"adk W1 ({cases}x{runs} trials, {CONCURRENCY} in flight, {LATENCY_S * 1000:.0f} ms "
        f"replies, one tool call then an answer; medians of {repeats}): ADK alone {a:.2f} s, "
        f"through agentflow-eval {p:.2f} s trial phase ({p / a:.2f}x; target <= 1.2x), "
        f"{w:.2f} s whole evaluate; CPU {ac:.2f} s alone, {wc:.2f} s whole evaluate "
        f"({wc / ac:.2f}x)"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    asyncio.run(main(args.repeats, args.cases, args.runs))
