"""W1 for LangGraph: 200 cases × 5 trials (1000 trials) of a weather graph against the
scripted model server (50 ms per reply, in its own process), at most 16 at once.

Each trial is one question; the model answers it with one ``get_weather`` tool call, then
with the answer written from the tool's result: two model calls and one tool run per trial
(``benchmarks.bench_model``). The graph is the example's shape (``agent`` ⇄ ``tools``,
``ChatOpenAI`` + ``ToolNode``), pointed at the server.

Two ways of running the same 1000 trials, alternated, on one event loop:

- **framework alone**: ``graph.ainvoke({"messages": [HumanMessage(q)]})`` per trial under
  ``asyncio.Semaphore(16)``, gathered (no checkpointer, nothing recorded);
- **adapter**: the trial stage of a planned run (``run.trials.run_trials``, as
  ``pipeline.evaluate`` runs it, judging left out) with the graph wrapped by the LangGraph
  adapter: a session per trial (the graph's copy with its own ``InMemorySaver``, a unique
  thread), the ``tasks``/``updates`` stream read into events, the thread's state read
  after the turn, each trial written to ``trials.jsonl``.

Run from the repository root: ``python -m benchmarks.frameworks.langgraph_w1 [--reps 3]
[--slices 5]``. ``--slices`` splits each side's 1000 trials into parts run alternately
(framework, adapter, adapter, framework, ...), so that on a shared machine both sides see
the same changes in load. Prints one line per repetition and a summary line (medians).
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
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from agentflow_eval.agents.frameworks.langgraph import wrap
from agentflow_eval.llm.client import ModelClient
from agentflow_eval.models.config import CriterionConfig, EvalConfig
from agentflow_eval.models.evalset import EvalSet
from agentflow_eval.run.inputs import RunInputs
from agentflow_eval.run.plan import RunOptions, plan_run
from agentflow_eval.run.trials import run_trials
from benchmarks.bench_model import AGENT_MODEL, CITIES
from examples.weather.agent import SYSTEM_PROMPT, get_weather

CASES, RUNS, CONCURRENCY, LATENCY_S = 200, 5, 16, 0.05


def start_server(latency_s: float) -> tuple[subprocess.Popen[str], str]:
    server = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.bench_server", "--latency", str(latency_s)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None
    return server, server.stdout.readline().strip()


def build_graph(url: str) -> Any:
    weather_tool = tool(get_weather)
    model = ChatOpenAI(model=AGENT_MODEL, base_url=url, api_key="bench").bind_tools([weather_tool])

    async def call_model(state: MessagesState) -> dict[str, Any]:
        return {
            "messages": [await model.ainvoke([SystemMessage(SYSTEM_PROMPT), *state["messages"]])]
        }

    builder = StateGraph(MessagesState)
    builder.add_node("agent", call_model)
    builder.add_node("tools", ToolNode([weather_tool]))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    return builder.compile(name="weather_agent")


def questions(cases: int) -> list[str]:
    return [f"What's the weather in {CITIES[i % len(CITIES)]}?" for i in range(cases)]


Timing = tuple[float, float]
"""Wall seconds, and this process's CPU seconds, of one way of running the trials."""


async def framework_alone(graph: Any, asks: list[str], runs: int) -> Timing:
    gate = asyncio.Semaphore(CONCURRENCY)

    async def one(question: str) -> None:
        async with gate:
            out = await graph.ainvoke({"messages": [HumanMessage(question)]})
        if len(out["messages"]) != 4:
            raise RuntimeError(f"unexpected run: {out['messages']}")

    start, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(one(q) for q in asks for _ in range(runs)))
    return time.perf_counter() - start, time.process_time() - cpu


async def through_adapter(graph: Any, asks: list[str], runs: int, folder: Path) -> Timing:
    eval_set = EvalSet.model_validate(
        {
            "eval_set_id": "bench_langgraph",
            "eval_cases": [
                {"eval_id": f"weather_{i:05d}", "conversation": [{"user_content": q}]}
                for i, q in enumerate(asks)
            ],
        }
    )
    config = EvalConfig(criteria={"tool_trajectory_avg_score": CriterionConfig(threshold=1.0)})
    agent = wrap(graph, name="weather_agent")
    options = RunOptions(runs=runs, max_concurrency=CONCURRENCY)
    handle = plan_run(RunInputs.of(eval_set, config), options, agent=agent, output_dir=folder)
    with handle:
        async with ModelClient() as models:
            start, cpu = time.perf_counter(), time.process_time()
            counts = await run_trials(handle.plan, agent, models)
            elapsed = time.perf_counter() - start, time.process_time() - cpu
        lines = handle.plan.paths.trials.read_text().splitlines()
    trials = [json.loads(line) for line in lines]
    bad = [t for t in trials if t["error"] or len(t["turns"][0]["tool_calls"]) != 1]
    if len(trials) != len(asks) * runs or bad:
        raise RuntimeError(f"adapter run: {len(trials)} trials, {len(bad)} bad; {counts}")
    return elapsed


def _add(a: Timing, b: Timing) -> Timing:
    return a[0] + b[0], a[1] + b[1]


async def main(reps: int, slices: int) -> None:
    server, url = start_server(LATENCY_S)
    try:
        graph = build_graph(url)
        asks = questions(CASES)
        parts = [asks[i::slices] for i in range(slices)]
        with tempfile.TemporaryDirectory() as tmp:
            # warm-up: imports, the HTTP client's connections, LangGraph's first compile paths
            await framework_alone(graph, asks[:32], 1)
            await through_adapter(graph, asks[:32], 1, Path(tmp) / "warm")
            alone: list[Timing] = []
            adapted: list[Timing] = []
            for rep in range(reps):
                a_total, b_total = (0.0, 0.0), (0.0, 0.0)
                for index, part in enumerate(parts):
                    # alternate which goes first, so both see the same drift in the load
                    first_alone = (rep * slices + index) % 2 == 0
                    for which in ("alone", "adapter") if first_alone else ("adapter", "alone"):
                        if which == "alone":
                            a_total = _add(a_total, await framework_alone(graph, part, RUNS))
                        else:
                            folder = Path(tmp) / f"{rep}-{index}"
                            timing = await through_adapter(graph, part, RUNS, folder)
                            b_total = _add(b_total, timing)
                alone.append(a_total)
                adapted.append(b_total)
                (a_wall, a_cpu), (b_wall, b_cpu) = a_total, b_total
                print(
                    f"rep {rep + 1}: framework alone {a_wall:.2f} s (CPU {a_cpu:.2f} s), "
                    f"adapter {b_wall:.2f} s (CPU {b_cpu:.2f} s): {b_wall / a_wall:.2f}× wall, "
                    f"{b_cpu / a_cpu:.2f}× CPU",
                    flush=True,
                )
    finally:
        server.terminate()
        server.wait()
    a_wall, b_wall = (statistics.median(t[0] for t in ts) for ts in (alone, adapted))
    a_cpu, b_cpu = (statistics.median(t[1] for t in ts) for ts in (alone, adapted))
    ratio = statistics.median(b[0] / a[0] for a, b in zip(alone, adapted, strict=True))
    trials = CASES * RUNS
    sliced = f", in {slices} interleaved slices" if slices > 1 else ""
    print(
        f"W1 langgraph ({CASES}×{RUNS} trials{sliced}, {LATENCY_S * 1000:.0f} ms/reply, "
        f"concurrency {CONCURRENCY}, medians of {reps}): framework alone {a_wall:.2f} s, "
        f"through the adapter {b_wall:.2f} s — {ratio:.2f}× (median of the reps' ratios; "
        f"target ≤ 1.2×); CPU per trial {a_cpu / trials * 1000:.1f} vs "
        f"{b_cpu / trials * 1000:.1f} ms"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument(
        "--slices",
        type=int,
        default=1,
        help="split each side's 1000 trials into this many parts, run alternately "
        "(steadier on a shared machine)",
    )
    args = parser.parse_args()
    asyncio.run(main(args.reps, args.slices))
