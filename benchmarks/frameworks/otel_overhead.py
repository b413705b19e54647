"""The per-turn cost of reading an agent's OpenTelemetry spans when it emits none.

A plain async agent function answers turns through its real ``PythonAgent`` session, in
three set-ups, each timed over the same number of turns (best of several rounds, to
keep the machine's noise out):

- ``off``: span capture disabled (what a process that never imported OpenTelemetry gets:
  one ``sys.modules`` look-up per turn);
- ``on``: capture set up (the global ``TrialTracerProvider`` installed), no span emitted;
- ``on+spans``: capture on and the agent emitting one tool span per turn (for scale).

Run: ``python benchmarks/frameworks/otel_overhead.py [--turns 20000]``. Prints one line
per set-up and the overhead of ``on`` over ``off`` in microseconds per turn.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from pathlib import Path

from opentelemetry import trace

from agentflow_eval.agents import otel
from agentflow_eval.agents.base import SessionContext, TrajectoryRecorder
from agentflow_eval.agents.python import PythonAgent
from agentflow_eval.models.evalset import Message, SessionInput

tracer = trace.get_tracer("overhead")


async def quiet(message: str) -> str:
    return "ok"


async def spanning(message: str) -> str:
    with tracer.start_as_current_span(
        "execute_tool noop",
        attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "noop"},
    ):
        pass
    return "ok"


async def per_turn_us(agent: PythonAgent, turns: int, rounds: int) -> float:
    context = SessionContext("c", 0, "c#0", SessionInput(), Path("unused"))
    message = Message.of("hi")
    best = float("inf")
    for _ in range(rounds):
        # one turn per session: a session's history grows with its turns
        sessions = [await agent.start_session(context) for _ in range(turns)]
        recorders = [TrajectoryRecorder() for _ in range(turns)]
        started = time.perf_counter()
        for session, recorder in zip(sessions, recorders, strict=True):
            await session.respond(message, recorder)
        best = min(best, (time.perf_counter() - started) / turns * 1e6)
    return best


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    figures: dict[str, list[float]] = {"off": [], "on": [], "on+spans": []}
    for _ in range(args.repeats):
        otel._setup = "off"  # as if OpenTelemetry were never imported
        figures["off"].append(await per_turn_us(PythonAgent(quiet), args.turns, args.rounds))
        assert otel.install()
        figures["on"].append(await per_turn_us(PythonAgent(quiet), args.turns, args.rounds))
        spans = await per_turn_us(PythonAgent(spanning), args.turns // 4, args.rounds)
        figures["on+spans"].append(spans)
    medians = {name: statistics.median(values) for name, values in figures.items()}
    for name, value in medians.items():
        runs = ", ".join(f"{v:.2f}" for v in figures[name])
        print(f"{name:9s} {value:7.2f} µs/turn  (runs: {runs})")
    print(f"capture overhead with no spans: {medians['on'] - medians['off']:.2f} µs/turn")


if __name__ == "__main__":
    asyncio.run(main())
