"""One ``Runner.run`` as a turn's trajectory, taken from the SDK's own run data.

A finished run is read from its result: ``new_items`` in order (messages, tool calls with
their outputs paired by ``call_id``, handoffs), each item's ``agent`` as the author, a node
event whenever the acting agent changes, and ``raw_responses`` (one per model call, with its
usage) placed before the first item that call produced. The SDK's run hooks
(:class:`RunObserver`) meanwhile note when each model call, tool call, agent start and
handoff happened, so the events carry their real times, model calls their latency and tool
calls their duration; the same hooks hold the run's rate-limit slot around each model call.

A run that did not finish (a provider error, a tool error the agent lets through, the
trial's timeout) has no result: its turn is then rendered from what the hooks saw, so the
model calls made, the tools that ran (and any still running, marked as cut short) and the
handoffs stay in the record.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, Literal

from agents import (
    Agent,
    HandoffOutputItem,
    ItemHelpers,
    MessageOutputItem,
    ModelResponse,
    RunContextWrapper,
    RunHooks,
    RunItem,
    Tool,
    ToolCallItem,
    ToolCallOutputItem,
)
from agents.tool_context import ToolContext

from agentflow_eval.agents.base import TrajectoryRecorder
from agentflow_eval.agents.frameworks.openai_agents.models import ModelBook
from agentflow_eval.agents.tool_gate import StandIn
from agentflow_eval.llm.ratelimit import RateLimiter
from agentflow_eval.models.results import (
    HandoffEvent,
    MessageEvent,
    ModelCallEvent,
    NodeEvent,
    RecordedToolCall,
    ToolCallEvent,
    TrajectoryEvent,
    Usage,
)

__all__ = [
    "RunObserver",
    "record_result",
    "record_unfinished",
    "tool_error",
    "unfinished_reason",
]

RUN_ERROR = "An error occurred while running the tool. Please try again. Error: "
_ARGS_ERROR = "An error occurred while parsing tool arguments."
"""What the SDK's default ``failure_error_function`` sends the model when a tool raises
(or its arguments are not JSON): the only sign of a failed tool call in its run data."""


_AWAITING = "not run: awaiting a human's approval"


def tool_error(output: Any) -> str | None:
    """The error a tool output reports, when it is the SDK's default failure text."""
    if not isinstance(output, str):
        return None
    if output.startswith(RUN_ERROR):
        return output.removeprefix(RUN_ERROR) or output
    if output.startswith(_ARGS_ERROR):
        return output
    return None


# ---------------------------------------------------------------------------- the hooks


@dataclass
class _ModelCall:
    agent: Agent[Any]
    started_ms: float
    ended_ms: float | None = None
    response: ModelResponse | None = None


@dataclass
class _ToolRun:
    agent: str
    call_id: str
    name: str
    arguments: str
    started_ms: float
    ended_ms: float | None = None
    result: Any = None
    done: bool = False


@dataclass
class _Step:
    """Something the hooks saw, in the order it happened."""

    kind: Literal["agent", "model", "tool", "handoff"]
    at_ms: float
    agent: str
    target: str = ""
    model: _ModelCall | None = None
    tool: _ToolRun | None = None


class RunObserver(RunHooks[Any]):
    """The SDK's run hooks for one turn: when things happened (times from ``recorder``),
    and the run's rate limits held around each model call (``limiter``, by the model's
    LiteLLM name; ``None``: no limits)."""

    def __init__(
        self, recorder: TrajectoryRecorder, models: ModelBook, limiter: RateLimiter | None
    ) -> None:
        self.recorder = recorder
        self.models = models
        self.limiter = limiter
        self.steps: list[_Step] = []
        self._calls: dict[int, _ModelCall] = {}
        self._open: list[_ModelCall] = []
        self._tools: dict[str, _ToolRun] = {}
        self._slots: list[AbstractAsyncContextManager[None]] = []
        self.served: Mapping[str, StandIn] = {}
        """What answered a call instead of its tool (tool mocks), by the call's id."""

    def _now(self) -> float:
        return self.recorder.elapsed_ms()

    async def on_agent_start(self, context: Any, agent: Any) -> None:
        self.steps.append(_Step("agent", self._now(), agent.name))

    async def on_llm_start(
        self,
        context: RunContextWrapper[Any],
        agent: Agent[Any],
        system_prompt: str | None,
        input_items: list[Any],
    ) -> None:
        limit_name = self.models.of(agent).limit_name
        if self.limiter is not None and limit_name and self.limiter.budgets_for(limit_name):
            slot = self.limiter.slot(limit_name)
            await slot.__aenter__()
            self._slots.append(slot)
        call = _ModelCall(agent, self._now())
        self._open.append(call)
        self.steps.append(_Step("model", call.started_ms, agent.name, model=call))

    async def on_llm_end(
        self, context: RunContextWrapper[Any], agent: Agent[Any], response: ModelResponse
    ) -> None:
        now = self._now()
        call = next((c for c in self._open if c.agent is agent), None)
        if call is None:  # an end without its start: time it from here
            call = _ModelCall(agent, now)
            self.steps.append(_Step("model", now, agent.name, model=call))
        else:
            self._open.remove(call)
        call.ended_ms, call.response = now, response
        self._calls[id(response)] = call
        if self._slots:
            await self._slots.pop().__aexit__(None, None, None)

    async def on_tool_start(self, context: Any, agent: Any, tool: Tool) -> None:
        call_id, arguments = _tool_call_of(context, tool, len(self._tools))
        run = _ToolRun(agent.name, call_id, tool.name, arguments, self._now())
        self._tools[call_id] = run
        self.steps.append(_Step("tool", run.started_ms, agent.name, tool=run))

    async def on_tool_end(self, context: Any, agent: Any, tool: Tool, result: Any) -> None:
        call_id, _ = _tool_call_of(context, tool, -1)
        run = self._tools.get(call_id) or next(
            (r for r in self._tools.values() if r.name == tool.name and not r.done), None
        )
        if run is not None:
            run.ended_ms, run.result, run.done = self._now(), result, True

    async def on_handoff(self, context: Any, from_agent: Any, to_agent: Any) -> None:
        self.steps.append(_Step("handoff", self._now(), from_agent.name, target=to_agent.name))

    async def release(self) -> None:
        """Give back any rate-limit slot a model call that failed still holds."""
        while self._slots:
            await self._slots.pop().__aexit__(None, None, None)

    def call_of(self, response: ModelResponse) -> _ModelCall | None:
        return self._calls.get(id(response))

    def tool_run(self, call_id: str | None) -> _ToolRun | None:
        return self._tools.get(call_id) if call_id else None


def _tool_call_of(context: Any, tool: Tool, index: int) -> tuple[str, str]:
    """A function tool's call id and raw arguments (its ``ToolContext`` has them); other
    tools get a made-up id."""
    if isinstance(context, ToolContext):
        return context.tool_call_id, context.tool_arguments
    return f"{tool.name}#{index}", ""


# ------------------------------------------------------------------ a finished run


class _Writer:
    """Adds events to the recorder, each stamped when the hooks saw it happen and never
    before the event ahead of it."""

    def __init__(self, recorder: TrajectoryRecorder, observer: RunObserver) -> None:
        self.recorder = recorder
        self.observer = observer
        self.node: str | None = None
        self.last_ms = 0.0

    def add(self, event: TrajectoryEvent, at_ms: float | None) -> None:
        at = max(at_ms if at_ms is not None else self.last_ms, self.last_ms)
        event.at_ms = self.last_ms = at if at > 0 else self.recorder.elapsed_ms()
        self.recorder.add(event)

    def enter(self, agent: str, at_ms: float | None = None) -> None:
        """A node event when ``agent`` takes over from another (or starts the turn),
        stamped when the SDK started it."""
        if agent == self.node:
            return
        self.node = agent
        started = next(
            (
                s.at_ms
                for s in self.observer.steps
                if s.kind == "agent" and s.agent == agent and s.at_ms >= self.last_ms
            ),
            at_ms,
        )
        self.add(NodeEvent(name=agent, author=agent), started)

    def model_call(
        self, agent: Agent[Any], response: ModelResponse, call: _ModelCall | None
    ) -> None:
        info = self.observer.models.of(agent)
        usage = response.usage
        prompt, completion = int(usage.input_tokens or 0), int(usage.output_tokens or 0)
        latency = None
        if call is not None and call.ended_ms is not None:
            latency = call.ended_ms - call.started_ms
        self.enter(agent.name, call.started_ms if call is not None else None)
        self.add(
            ModelCallEvent(
                model=info.name,
                usage=Usage.of_call(
                    prompt,
                    completion,
                    info.cost(prompt, completion),
                    total_tokens=int(usage.total_tokens or prompt + completion),
                    calls=max(1, int(usage.requests or 1)),
                ),
                latency_ms=latency,
                author=agent.name,
            ),
            call.ended_ms if call is not None else None,
        )

    def tool_call(
        self,
        name: str,
        arguments: Any,
        call_id: str | None,
        agent: str,
        output: Any,
        *,
        unfinished: str | None = None,
    ) -> None:
        """One tool call with its output (an error when the output is the SDK's failure
        text, or ``unfinished`` says why it never ended)."""
        run = self.observer.tool_run(call_id)
        stand_in = self.observer.served.get(call_id) if call_id else None
        error = unfinished or tool_error(output)
        duration = 0.0
        if run is not None and run.ended_ms is not None:
            duration = run.ended_ms - run.started_ms
        call = RecordedToolCall(
            name=name,
            args=_args(arguments),
            result=None if error is not None else _jsonable(output),
            error=error,
            duration_ms=duration,
            id=call_id,
            served_by=stand_in.served_by if stand_in is not None else "tool",
        )
        self.add(ToolCallEvent(call=call, author=agent), run.started_ms if run else None)

    def handoff(self, source: str, target: str) -> None:
        at = next(
            (
                s.at_ms
                for s in self.observer.steps
                if s.kind == "handoff"
                and (s.agent, s.target) == (source, target)
                and s.at_ms >= self.last_ms
            ),
            None,
        )
        self.add(HandoffEvent(source=source, target=target, author=source), at)


def record_result(
    recorder: TrajectoryRecorder,
    observer: RunObserver,
    items: list[RunItem],
    responses: list[ModelResponse],
    *,
    final_message: MessageOutputItem | None,
    last_agent: Agent[Any],
    awaiting_approval: frozenset[str] = frozenset(),
) -> None:
    """The events of a finished run: ``items`` (its ``new_items``) in order, each model
    call of ``responses`` (its ``raw_responses``) before the first item it produced;
    ``final_message`` (the item whose text is the turn's answer) is left to the trial,
    which records the answer itself; the calls ``awaiting_approval`` (by call id) did not
    run."""
    writer = _Writer(recorder, observer)
    produced: dict[int, int] = {}
    by_call_id: dict[str, int] = {}
    for index, response in enumerate(responses):
        for output in response.output:
            produced[id(output)] = index
            call_id = _field(output, "call_id")
            if isinstance(call_id, str):
                by_call_id[call_id] = index
    outputs: dict[str, ToolCallOutputItem] = {}
    for item in items:
        call_id = _field(item.raw_item, "call_id")
        if isinstance(item, ToolCallOutputItem) and isinstance(call_id, str):
            outputs[call_id] = item
    paired: set[str] = set()
    emitted = 0

    def model_calls_through(last: int, agent: Agent[Any]) -> None:
        nonlocal emitted
        while emitted <= last and emitted < len(responses):
            response = responses[emitted]
            call = observer.call_of(response)
            writer.model_call(call.agent if call is not None else agent, response, call)
            emitted += 1

    for item in items:
        agent = item.agent
        raw_id = _field(item.raw_item, "call_id")
        call_id = raw_id if isinstance(raw_id, str) else None
        source = produced.get(id(item.raw_item))
        if source is None and call_id and isinstance(item, ToolCallItem | MessageOutputItem):
            source = by_call_id.get(call_id)
        if source is not None:
            model_calls_through(source, agent)
        writer.enter(agent.name)
        if isinstance(item, MessageOutputItem):
            text = ItemHelpers.text_message_output(item)
            if item is not final_message and text:
                writer.add(
                    MessageEvent(text=text, author=agent.name), _ended(observer, responses, source)
                )
        elif isinstance(item, ToolCallItem):
            output_item = outputs.get(call_id) if call_id else None
            if call_id and output_item is not None:
                paired.add(call_id)
            writer.tool_call(
                _tool_name(item.raw_item),
                _field(item.raw_item, "arguments"),
                call_id,
                agent.name,
                output_item.output if output_item is not None else None,
                unfinished=_AWAITING if call_id in awaiting_approval else None,
            )
        elif isinstance(item, ToolCallOutputItem):
            if call_id is None or call_id not in paired:  # its call is not among the items
                run = observer.tool_run(call_id)
                writer.tool_call(
                    run.name if run else "tool",
                    run.arguments if run else None,
                    call_id,
                    agent.name,
                    item.output,
                )
        elif isinstance(item, HandoffOutputItem):
            writer.handoff(item.source_agent.name, item.target_agent.name)
        # a HandoffCallItem (the transfer_to_<agent> call) is told by its output; reasoning,
        # MCP listings and approvals are not part of a trajectory
    model_calls_through(len(responses) - 1, last_agent)


def _ended(
    observer: RunObserver, responses: list[ModelResponse], index: int | None
) -> float | None:
    if index is None:
        return None
    call = observer.call_of(responses[index])
    return call.ended_ms if call is not None else None


# ---------------------------------------------------------------- an unfinished run


def record_unfinished(recorder: TrajectoryRecorder, observer: RunObserver, reason: str) -> None:
    """The events of a run that raised or was cancelled, from what the hooks saw: agent
    starts, finished model calls (with any text they said), tool calls (those still
    running get ``reason`` as their error) and handoffs."""
    writer = _Writer(recorder, observer)
    for step in observer.steps:
        if step.kind == "agent":
            writer.enter(step.agent, step.at_ms)
        elif step.kind == "model" and step.model is not None:
            call = step.model
            if call.response is None:
                continue  # it never answered: nothing was used that the SDK reports
            writer.model_call(call.agent, call.response, call)
            for output in call.response.output:
                text = _message_text(output)
                if text:
                    writer.add(MessageEvent(text=text, author=step.agent), call.ended_ms)
        elif step.kind == "tool" and step.tool is not None:
            run = step.tool
            writer.enter(run.agent, run.started_ms)
            writer.tool_call(
                run.name,
                run.arguments,
                run.call_id,
                run.agent,
                run.result,
                unfinished=None if run.done else f"cut short: {reason}",
            )
        elif step.kind == "handoff":
            writer.handoff(step.agent, step.target)


def unfinished_reason(exc: BaseException) -> str:
    """How a run ended that did not finish, in a few words."""
    if isinstance(exc, asyncio.CancelledError):
        return "the turn was cancelled (trial timeout)"
    return f"{type(exc).__name__}: {exc}"


# -------------------------------------------------------------------------- helpers


def _field(raw: Any, name: str) -> Any:
    """A field of a raw item, which the SDK keeps as a pydantic model or a dict."""
    if isinstance(raw, dict):
        return raw.get(name)
    return getattr(raw, name, None)


def _tool_name(raw: Any) -> str:
    name = _field(raw, "name")
    if isinstance(name, str) and name:
        return name
    kind = _field(raw, "type")
    return str(kind) if kind else "tool"


def _args(arguments: Any) -> dict[str, Any]:
    """A tool call's arguments as the model wrote them (a JSON object), else none."""
    if isinstance(arguments, dict):
        return dict(arguments)
    if not isinstance(arguments, str) or not arguments.strip():
        return {}
    try:
        parsed = json.loads(arguments)
    except json.JSONDecodeError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _message_text(output: Any) -> str:
    if _field(output, "type") != "message":
        return ""
    parts = _field(output, "content") or []
    return "".join(
        str(_field(part, "text") or "") for part in parts if _field(part, "type") == "output_text"
    )


def _jsonable(value: Any) -> Any:
    """Tool results go into JSON files: JSON values as they are, models dumped, the rest
    as text."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return _jsonable(dump(mode="json"))
    return str(value)
