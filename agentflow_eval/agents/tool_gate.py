"""The one gate every tool call of a trial passes: a mock answers it, an injected fault
fails it, the unmocked policy refuses it, or the real tool runs.

A trial has one :class:`TrialTools` (the config's and the case's mocks, the policy, and
what the trial's calls have used up: each mock's place in its ``results`` and each
fault's draws); each turn gets a :class:`ToolGate` with the turn's own mocks first. The
gate reaches agents on the turn's recorder (``recorder.tools``):

- the built-in LiteLLM loop and :meth:`TrajectoryRecorder.call_tool` run calls through
  :meth:`ToolGate.run`, so a mocked tool's function is never called;
- a framework adapter asks :meth:`ToolGate.decide` from the framework's own hook (a
  before-tool callback, a wrapped tool) and hands the framework the stand-in's answer.

Each recorded call says what served it (``RecordedToolCall.served_by``): the tool, a
mock, an injected fault, or the policy.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from agentflow_eval.agents.tool_simulator import SimulationFailed, ToolSimulator
from agentflow_eval.models.matching import json_subset
from agentflow_eval.models.results import RecordedToolCall
from agentflow_eval.models.simulated_tools import SimulatedTool
from agentflow_eval.models.tool_mocks import ToolFault, ToolMock, UnmockedPolicy

__all__ = [
    "NO_MOCKS",
    "InjectedToolTimeout",
    "MockBypassed",
    "ServedBy",
    "StandIn",
    "ToolCallFailed",
    "ToolGate",
    "TrialTools",
]

ServedBy = Literal["tool", "mock", "fault", "policy"]


class ToolCallFailed(RuntimeError):
    """A tool call failed by a mock's ``error``, an injected fault or the unmocked
    policy: to the agent, the tool failed with this message."""

    def __init__(self, message: str, served_by: ServedBy = "mock") -> None:
        super().__init__(message)
        self.served_by: ServedBy = served_by


class MockBypassed(RuntimeError):
    """A mocked call was made in code that runs the tool itself (``recorder.tool()``'s
    block), where no mock can answer instead."""

    def __init__(self, name: str) -> None:
        super().__init__(
            f"tool {name!r} is mocked, but it was called inside recorder.tool(), whose block "
            f"runs the tool's own code: call it as recorder.call_tool({name}, **args) (or "
            "await recorder.acall_tool(...)) so the mock answers instead"
        )


class MockNotReached(RuntimeError):
    """The agent ran a tool that a mock (or the unmocked policy) should have answered,
    somewhere no mock can reach: the tool's own code ran."""

    def __init__(self, names: Sequence[str]) -> None:
        shown = ", ".join(repr(name) for name in dict.fromkeys(names))
        super().__init__(
            f"tool {shown} ran where no mock could answer it, so the tool itself ran: a "
            "Python agent calls tools through recorder.call_tool (or acall_tool); a "
            "LangGraph graph runs them in a ToolNode; ADK and Agents SDK tools are reached "
            "as they are"
        )


class InjectedToolTimeout(ToolCallFailed):
    """An injected timeout: to the agent, the tool did not answer in time. (Not a
    ``TimeoutError``: the trial's own deadline is the only one that ends a trial.)"""


@dataclass(frozen=True)
class StandIn:
    """What answers a call instead of the tool."""

    served_by: Literal["mock", "fault", "policy"]
    result: Any = None
    error: str | None = None
    timeout: bool = False
    latency_s: float = 0.0
    simulate: SimulatedTool | None = None
    """A simulated tool's: the result comes from the trial's simulator."""

    def exception(self) -> ToolCallFailed:
        """The exception a failing stand-in raises in the agent's code."""
        assert self.error is not None
        kind = InjectedToolTimeout if self.timeout else ToolCallFailed
        return kind(self.error, self.served_by)


@dataclass
class _Placed:
    """A mock with the state its calls use up in one trial."""

    mock: ToolMock
    rng: random.Random | None
    answered: int = 0


@dataclass
class TrialTools:
    """The tool mocks of one trial, and what its calls have used up (see the module).
    ``seed_key`` names the trial (case and trial index): with a fault's seed it fixes which
    calls fail."""

    config_mocks: Sequence[ToolMock] = ()
    case_mocks: Sequence[ToolMock] = ()
    unmocked: UnmockedPolicy = "run"
    seed_key: str = ""
    simulator: ToolSimulator | None = None
    """The trial's simulated world, which answers the calls of mocks that ``simulate``."""
    _placed: dict[tuple[str, int], _Placed] = field(default_factory=dict)

    def for_turn(self, turn_id: str | None = None, turn_mocks: Sequence[ToolMock] = ()) -> ToolGate:
        """The gate of one turn: its own mocks, then the case's, then the config's."""
        placed = [
            *(self._place(f"turn {turn_id}", i, m) for i, m in enumerate(turn_mocks)),
            *(self._place("case", i, m) for i, m in enumerate(self.case_mocks)),
            *(self._place("config", i, m) for i, m in enumerate(self.config_mocks)),
        ]
        return ToolGate(tuple(placed), self.unmocked, simulator=self.simulator)

    def _place(self, where: str, index: int, mock: ToolMock) -> _Placed:
        key = (where, index)
        if key not in self._placed:
            rng = None
            if mock.fault is not None:
                # a string seed is hashed the same way in every process and version
                rng = random.Random(f"{mock.fault.seed}|{self.seed_key}|{where}#{index}")
            self._placed[key] = _Placed(mock, rng)
        return self._placed[key]


@dataclass(frozen=True)
class ToolGate:
    """One turn's gate (see the module). :data:`NO_MOCKS` lets every call through."""

    placed: tuple[_Placed, ...] = ()
    unmocked: UnmockedPolicy = "run"
    asked: Counter[str] = field(default_factory=Counter, compare=False)
    """How many calls of each tool the gate was asked about (while active)."""
    simulator: ToolSimulator | None = field(default=None, compare=False)
    """Answers the calls of mocks that ``simulate`` (see :class:`TrialTools`)."""

    @property
    def active(self) -> bool:
        """Whether any call could be answered by something other than the tool."""
        return bool(self.placed) or self.unmocked == "fail"

    def mocks(self, name: str) -> bool:
        """Whether some mock names the tool ``name``."""
        return any(p.mock.tool == name for p in self.placed)

    def decide(self, name: str, args: dict[str, Any]) -> StandIn | None:
        """What answers this call instead of the tool, or ``None``: run the tool. Each call
        is decided once (it uses up a sequence's place and a fault's draw)."""
        if self.active:
            self.asked[name] += 1
        for placed in self.placed:
            mock = placed.mock
            if mock.tool != name or (mock.args is not None and not json_subset(mock.args, args)):
                continue
            latency = mock.latency_ms / 1000
            fault = mock.fault
            drawn = placed.rng.random() if placed.rng is not None else 1.0
            if fault is not None and drawn < fault.probability:
                return _fault(name, fault, latency)
            if not mock.answers:
                continue  # spared by its fault: the next mock, or the tool
            if mock.simulate is not None:
                return StandIn("mock", simulate=mock.simulate, latency_s=latency)
            if mock.error is not None:
                return StandIn("mock", error=mock.error, latency_s=latency)
            if mock.results is not None:
                result = mock.results[min(placed.answered, len(mock.results) - 1)]
            else:
                result = mock.result
            placed.answered += 1
            return StandIn("mock", result=mock.answer(result), latency_s=latency)
        if self.unmocked == "fail":
            shown = json.dumps(args, sort_keys=True, ensure_ascii=False, default=repr)
            return StandIn(
                "policy",
                error=(
                    f"tool {name!r} called with {shown} has no mock, and unmocked tools "
                    "fail in this run (unmocked_tools: fail)"
                ),
            )
        return None

    def passes(self, name: str) -> None:
        """A framework's own control call (an ADK transfer to a sub-agent), which is not a
        user's tool: no mock or policy applies to it, and it counts as seen."""
        if self.active:
            self.asked[name] += 1

    def unreached(self, calls: Iterable[RecordedToolCall]) -> list[str]:
        """The tools of ``calls`` (a turn's record) that the gate should have answered but
        was not asked about as often as they were called."""
        if not self.active:
            return []
        made = Counter(call.name for call in calls)
        return [
            name
            for name, count in made.items()
            if (self.unmocked == "fail" or self.mocks(name)) and count > self.asked[name]
        ]

    async def run(
        self, name: str, args: dict[str, Any], tool: Callable[[], Awaitable[Any]]
    ) -> tuple[Any, ServedBy]:
        """The call's result and what served it: a stand-in's (after its latency), else
        ``tool()``'s. A failing stand-in raises :class:`ToolCallFailed`."""
        stand_in = self.decide(name, args)
        if stand_in is None:
            return await tool(), "tool"
        if stand_in.latency_s:
            await asyncio.sleep(stand_in.latency_s)
        if stand_in.error is not None:
            raise stand_in.exception()
        if stand_in.simulate is not None:
            return await self._simulator().answer(stand_in.simulate, name, args), "mock"
        return stand_in.result, stand_in.served_by

    def run_sync(
        self, name: str, args: dict[str, Any], tool: Callable[[], Any]
    ) -> tuple[Any, ServedBy]:
        """:meth:`run` for synchronous agent code (in a worker thread)."""
        stand_in = self.decide(name, args)
        if stand_in is None:
            return tool(), "tool"
        if stand_in.latency_s:
            time.sleep(stand_in.latency_s)
        if stand_in.error is not None:
            raise stand_in.exception()
        if stand_in.simulate is not None:
            return self._simulator().answer_sync(stand_in.simulate, name, args), "mock"
        return stand_in.result, stand_in.served_by

    def _simulator(self) -> ToolSimulator:
        if self.simulator is None:  # a gate made without its trial's simulator
            raise SimulationFailed("this tool is simulated, but the trial has no simulator")
        return self.simulator


def _fault(name: str, fault: ToolFault, latency_s: float) -> StandIn:
    timeout = fault.kind == "timeout"
    what = "timed out" if timeout else "failed"
    message = fault.message or f"{name} {what} (injected fault)"
    return StandIn("fault", error=message, timeout=timeout, latency_s=latency_s)


NO_MOCKS = ToolGate()
"""The gate of a turn without mocks: every call runs its tool."""
