"""The built-in tool-calling agent: a model named the LiteLLM way and a set of Python tools.

Each user turn runs the usual loop: call the model with the conversation and the tool
schemas; run every tool call it asks for (recording each as it goes) and feed the results
back; stop at the first reply without tool calls (the final answer) or after
``max_steps`` model calls (:class:`MaxStepsExceeded`). Text that comes with tool calls is
an intermediate response. Nothing is retried behind the caller's back: a failing model
call raises, and the trial records it.

Calls go through the run's :class:`~agentflow_eval.llm.client.ModelClient`
(``SessionContext.models``): LiteLLM for any provider, or the direct OpenAI-compatible
client for ``openai/`` models on a self-hosted endpoint, under the run's rate limits.
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agentflow_eval.agents.base import (
    AgentSession,
    MaxStepsExceeded,
    SessionContext,
    TrajectoryRecorder,
    jsonable,
)
from agentflow_eval.agents.tool_gate import ToolCallFailed
from agentflow_eval.agents.tools import Tool, ToolContext, as_tool, tool_result_text
from agentflow_eval.environments.mcp import McpTool
from agentflow_eval.llm import litellm_compat
from agentflow_eval.llm.client import Transport, resolve_transport, response_cost
from agentflow_eval.models.evalset import Message

__all__ = ["LiteLLMAgent"]

_RESERVED_KWARGS = frozenset({"model", "messages", "tools", "stream"})
_ARG_SNIPPET = 200


class LiteLLMAgent:
    """A tool-calling agent over any LiteLLM model.

    ``tools`` are plain functions (their schema is derived from type hints and docstrings,
    see :mod:`agentflow_eval.agents.tools`) or :class:`Tool` objects.
    ``completion_kwargs`` are passed to every ``litellm.acompletion`` call (``seed``,
    ``max_tokens``, ``timeout``, provider options, ...). Tools may also take the injected
    parameters ``workdir``, ``recorder``, ``session``, ``state`` (the session's mutable
    dict, initialised from ``session_input.state`` and kept across its turns) and
    ``environment`` (the trial's own environment, when the run sets one up).
    ``transport`` picks how calls are made (``auto``, ``litellm`` or ``direct``; default
    ``$AGENTFLOW_LLM_TRANSPORT``, else ``auto``: see :mod:`agentflow_eval.llm.client`).
    The tools of the run's MCP servers (``mcp_servers`` in the config) are offered beside
    ``tools``, and called through the same tool gate.
    """

    mcp_supported = True

    def __init__(
        self,
        model: str,
        *,
        system_prompt: str = "",
        tools: Iterable[Tool | Callable[..., Any]] = (),
        max_steps: int = 8,
        temperature: float | None = None,
        api_base: str | None = None,
        api_key: str | None = None,
        completion_kwargs: Mapping[str, Any] | None = None,
        name: str | None = None,
        transport: Transport | None = None,
    ) -> None:
        if not model:
            raise ValueError("LiteLLMAgent needs a model, e.g. 'openai/gpt-4o-mini'")
        if max_steps < 1:
            raise ValueError(f"max_steps must be at least 1, got {max_steps}")
        extra = dict(completion_kwargs or {})
        reserved = sorted(_RESERVED_KWARGS & extra.keys())
        if reserved:
            raise ValueError(
                f"completion_kwargs may not set {', '.join(reserved)}: the agent sets them"
            )
        tool_list = [as_tool(t) for t in tools]
        by_name: dict[str, Tool] = {}
        for tool in tool_list:
            if tool.name in by_name:
                raise ValueError(f"two tools are named {tool.name!r}; tool names must be unique")
            by_name[tool.name] = tool
        self._model = model
        self._system_prompt = system_prompt
        self._tools = by_name
        self._max_steps = max_steps
        self._temperature = temperature
        self._api_base = api_base
        self._api_key = api_key
        self._completion_kwargs = extra
        self._name = name
        self._transport = resolve_transport(transport) if transport else None

    @property
    def name(self) -> str:
        return self._name or "litellm-agent"

    @property
    def model(self) -> str:
        return self._model

    @property
    def tools(self) -> tuple[Tool, ...]:
        return tuple(self._tools.values())

    @property
    def max_steps(self) -> int:
        return self._max_steps

    @property
    def transport(self) -> Transport | None:
        """The transport this agent asked for; ``None`` follows the environment."""
        return self._transport

    def with_model(self, model: str, **overrides: Any) -> LiteLLMAgent:
        """A copy of this agent that uses ``model`` (and any other constructor option given
        in ``overrides``)."""
        settings: dict[str, Any] = {
            "system_prompt": self._system_prompt,
            "tools": self.tools,
            "max_steps": self._max_steps,
            "temperature": self._temperature,
            "api_base": self._api_base,
            "api_key": self._api_key,
            "completion_kwargs": dict(self._completion_kwargs),
            "name": self._name,
            "transport": self._transport,
        }
        unknown = sorted(overrides.keys() - settings.keys())
        if unknown:
            raise TypeError(
                f"with_model() got unknown option(s) {', '.join(unknown)}; "
                f"allowed: {', '.join(settings)}"
            )
        return LiteLLMAgent(model, **{**settings, **overrides})

    async def start_session(self, context: SessionContext) -> AgentSession:
        clashes = sorted(self._tools.keys() & {tool.name for tool in context.mcp_tools})
        if clashes:
            raise ValueError(
                f"MCP tool(s) {', '.join(map(repr, clashes))} have the name of one of the "
                "agent's own tools; tool names must be unique"
            )
        messages: list[dict[str, Any]] = []
        if self._system_prompt:
            messages.append({"role": "system", "content": self._system_prompt})
        messages += [copy.deepcopy(message) for message in context.history]  # seeded
        state = copy.deepcopy(dict(context.session_input.state))
        return _LiteLLMSession(
            agent=self,
            context=context,
            state=state,
            messages=messages,
            mcp_tools={tool.name: tool for tool in context.mcp_tools},
        )

    def tool_named(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def completion_request(
        self, messages: list[dict[str, Any]], mcp_tools: Iterable[McpTool] = ()
    ) -> dict[str, Any]:
        """The keyword arguments of one ``litellm.acompletion`` call over ``messages``,
        offering the agent's tools and ``mcp_tools`` (the direct transport takes the
        same)."""
        request: dict[str, Any] = {"model": self._model, "num_retries": 0}
        if self._temperature is not None:
            request["temperature"] = self._temperature
        if self._api_base is not None:
            request["api_base"] = self._api_base
        if self._api_key is not None:
            request["api_key"] = self._api_key
        request.update(self._completion_kwargs)
        request["messages"] = list(messages)
        schemas = [tool.schema for tool in self._tools.values()]
        schemas += [tool.schema for tool in mcp_tools]
        if schemas:
            request["tools"] = schemas
            # plain function tools: LiteLLM's MCP gateway never applies
            request[litellm_compat.SKIP_MCP_OPTION] = True
        return request


@dataclass
class _LiteLLMSession:
    """One conversation: the message history persists across the session's turns."""

    agent: LiteLLMAgent
    context: SessionContext
    state: dict[str, Any]
    messages: list[dict[str, Any]] = field(default_factory=list)
    mcp_tools: dict[str, McpTool] = field(default_factory=dict)
    """The trial's MCP servers' tools, by name."""

    async def respond(self, message: Message, recorder: TrajectoryRecorder) -> str:
        self.messages.append({"role": "user", "content": message.text})
        tool_context = ToolContext(
            workdir=self.context.workdir_path,
            recorder=recorder,
            session=self.context,
            state=self.state,
        )
        for step in range(self.agent.max_steps):
            asked = recorder.elapsed_ms()
            response = await self.context.models.complete(
                transport=self.agent.transport,
                **self.agent.completion_request(self.messages, self.mcp_tools.values()),
            )
            _record_usage(recorder, response, self.agent.model, recorder.elapsed_ms() - asked)
            if not response.choices:
                raise RuntimeError(f"model {self.agent.model!r} returned no choices")
            reply = response.choices[0].message
            content = reply.content or ""
            calls = [
                _ToolCall.of(raw, step, index) for index, raw in enumerate(reply.tool_calls or [])
            ]
            self.messages.append(_assistant_message(content, calls))
            if not calls:
                return content
            recorder.intermediate(content)
            for call in calls:
                result_text = await self._run(call, tool_context)
                self.messages.append(
                    {"role": "tool", "tool_call_id": call.id, "content": result_text}
                )
        raise MaxStepsExceeded(self.agent.max_steps)

    async def aclose(self) -> None:
        return None  # nothing held open: connections belong to the run's model client

    async def _run(self, call: _ToolCall, context: ToolContext) -> str:
        """Run one tool call, record it, and return the text the model gets back."""
        recorder = context.recorder
        try:
            args = json.loads(call.arguments or "{}")
        except json.JSONDecodeError as exc:
            error = (
                f"arguments are not valid JSON ({exc.msg} at position {exc.pos}): "
                f"{call.arguments[:_ARG_SNIPPET]!r}"
            )
            recorder.tool_call(call.name, {}, error=error, id=call.id)
            return f"Error: {error}"
        if not isinstance(args, dict):
            error = f"arguments must be a JSON object, got {type(args).__name__}"
            recorder.tool_call(call.name, {}, error=error, id=call.id)
            return f"Error: {error}"
        tool = self.agent.tool_named(call.name)
        mcp_tool = self.mcp_tools.get(call.name)
        if tool is None and mcp_tool is None:
            names = [*(t.name for t in self.agent.tools), *self.mcp_tools]
            available = ", ".join(names) or "none"
            error = f"unknown tool {call.name!r}; available tools: {available}"
            recorder.tool_call(call.name, args, error=error, id=call.id)
            return f"Error: {error}"
        record = recorder.tool_call(call.name, args, id=call.id)
        start = time.perf_counter()
        try:
            # an MCP tool's arguments are the server's to check, against its own schema
            result, record.served_by = await recorder.tools.run(
                call.name, args, _runner(tool, mcp_tool, args, context)
            )
        except ToolCallFailed as exc:  # a failing tool is news for the model, not a crash
            record.error, record.served_by = str(exc), exc.served_by
            return f"Error: {exc}"
        except Exception as exc:
            record.error = f"{type(exc).__name__}: {exc}"
            return f"Error: {record.error}"
        finally:
            record.duration_ms = (time.perf_counter() - start) * 1000
        record.result = jsonable(result)
        return tool_result_text(record.result)


def _runner(
    tool: Tool | None, mcp_tool: McpTool | None, args: dict[str, Any], context: ToolContext
) -> Callable[[], Awaitable[Any]]:
    """What runs a call when no mock answers it: the agent's own tool, else the MCP
    server's (whose arguments the server checks against its own schema)."""
    if tool is not None:
        return lambda: tool.call(args, context)
    assert mcp_tool is not None
    return lambda: mcp_tool.call(args)


@dataclass(frozen=True)
class _ToolCall:
    """A tool call as the model asked for it, with an id even if the provider gave none."""

    id: str
    name: str
    arguments: str

    @classmethod
    def of(cls, raw: Any, step: int, index: int) -> _ToolCall:
        function = raw.function
        arguments = function.arguments
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments)
        return cls(
            id=raw.id or f"call_{step}_{index}",
            name=function.name or "",
            arguments=arguments,
        )


def _assistant_message(content: str, calls: list[_ToolCall]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content or None}
    if calls:
        message["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for call in calls
        ]
    else:
        message["content"] = content
    return message


def _record_usage(
    recorder: TrajectoryRecorder, response: Any, model: str, latency_ms: float
) -> None:
    usage = getattr(response, "usage", None)
    recorder.usage(
        prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
        completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        cost_usd=response_cost(response, model),
        model=model,
        latency_ms=latency_ms,
    )
