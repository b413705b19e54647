"""Google ADK agents evaluated as they are: an ``LlmAgent`` (or any ``BaseAgent``), a
workflow node, or an ``App`` from ``google.adk.apps`` runs under ADK's own ``Runner``, and
what it did is read from the events the runner yields.

Each trial gets its own ``InMemorySessionService`` and ``Runner``, and one ADK session in
it, created as ADK's evaluator creates it (``session_input``'s app name, user id and state;
``test_user_id`` when no user is named), with an id unique across runs. Every user turn
goes to that session in order, so the conversation (and whichever sub-agent answered
last) carries over between turns as in ``adk web``. A separate session service per trial
keeps ADK's ``user:`` and ``app:`` state of one trial out of the next.

From the events, in the order the runner yields them:

- a node visit (:class:`NodeEvent`) when the acting node changes: the segments of ADK
  2.x's ``event.node_info.path`` (``root_agent@1/weather_agent@1`` is ``weather_agent``
  inside ``root_agent``), or, for agents run outside the node runtime (a
  ``SequentialAgent``), the author and its parent agents;
- model calls with their token usage (``usage_metadata``), tool calls from the function
  calls with their results from the function responses (ADK's ``transfer_to_agent``
  included, as ADK's own trajectory counts it), a tool's error from the error event ADK
  yields before it re-raises, a transfer (``actions.transfer_to_agent``) as a handoff,
  and text said before the answer;
- the answer: the text of the turn's last final response, chosen as ADK's evaluator
  chooses it.

The session's state after each turn (ADK's ``get_session``, ``user:``/``app:`` keys
merged) is the session's :attr:`AdkSession.state`. Exceptions are not caught: a tool's
error, LiteLLM's ``RateLimitError`` after its retries and the like leave :meth:`respond`
as ADK raised them, and the trial records them (a provider's fault as infrastructure).

A case's tool mocks answer in ADK's own before-tool hook: a plugin placed first on the
trial's runner asks the turn's :class:`~agentflow_eval.agents.tool_gate.ToolGate`, and a
mocked call's result (a mapping as it is, anything else as ``{"result": value}``, as ADK
wraps a function's return) or failure (``{"error": message}``, what the model sees of a
failed tool) is the function response, so the tool itself never runs. A case with seeded
``history`` is refused (``history_supported``): ADK keeps a conversation as session events,
and seeding them is not done here.

ADK calls its model itself (``LiteLlm`` calls ``litellm.acompletion``), so those calls do
not go through the run's model client and its rate limits.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import importlib
import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from google.adk.agents import BaseAgent, LlmAgent
from google.adk.apps import App
from google.adk.events import Event
from google.adk.models.lite_llm import LiteLlm
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.adk.sessions.base_session_service import GetSessionConfig
from google.adk.tools.agent_tool import AgentTool
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext
from google.adk.workflow import BaseNode
from google.genai import types

from agentflow_eval.agents.base import SessionContext, TrajectoryRecorder
from agentflow_eval.agents.frameworks.adk_mcp import with_mcp_tools
from agentflow_eval.agents.tool_gate import NO_MOCKS, StandIn, ToolGate
from agentflow_eval.errors import InputError
from agentflow_eval.llm.litellm_compat import listed_cost
from agentflow_eval.models.evalset import ContentPart, Message
from agentflow_eval.models.results import (
    HandoffEvent,
    MessageEvent,
    ModelCallEvent,
    NodeEvent,
    RecordedToolCall,
    ToolCallEvent,
    Usage,
)

__all__ = ["DEFAULT_USER_ID", "AdkAgent", "AdkSession", "wrap"]

DEFAULT_USER_ID = "test_user_id"
"""The user a session is for when the case names none: ADK's evaluator's default."""

_STATE_ONLY = GetSessionConfig(num_recent_events=0)


def wrap(obj: Any, *, name: str) -> AdkAgent:
    """An ADK ``App``, agent or workflow node as an agent under test, named by ADK's own
    name for it (the attribute the spec named, ``name``, is most often just
    ``root_agent``). Raises ``TypeError`` for any other ADK object (a tool, a model)."""
    if isinstance(obj, App | BaseNode):
        return AdkAgent(obj, name=getattr(obj, "name", None) or name)
    raise TypeError(
        f"a {type(obj).__name__} is not an ADK agent, workflow node or App; point the "
        "agent spec at the root agent (root_agent) or the App (app)"
    )


class AdkAgent:
    """An ADK ``App``, agent (``LlmAgent``, ``BaseAgent``) or workflow node, each trial in
    a fresh ADK session of its own.

    ``app_name`` names the ADK app when a case's ``session_input`` does not (default: the
    App's name, else the root agent's name)."""

    tool_mocks_supported = True
    history_supported = False

    def __init__(self, target: App | BaseNode, *, name: str, app_name: str | None = None):
        if not isinstance(target, App | BaseNode):
            raise TypeError(f"AdkAgent runs an ADK App, agent or node, not {type(target)!r}")
        root = target.root_agent if isinstance(target, App) else target
        if root is None:
            raise ValueError(f"the ADK App {target.name!r} has no root_agent")
        self._target = target
        self._root: BaseNode = root
        self._name = name
        self._app_name = app_name or (target.name if isinstance(target, App) else root.name)
        _warm_up(root)

    @property
    def name(self) -> str:
        return self._name

    @property
    def mcp_supported(self) -> bool:
        """The run's MCP tools are added to the root agent's own
        (:mod:`~agentflow_eval.agents.frameworks.adk_mcp`): one that is an LLM agent."""
        return isinstance(self._root, LlmAgent)

    @property
    def target(self) -> App | BaseNode:
        """The App, agent or node this evaluates."""
        return self._target

    @property
    def model(self) -> str | None:
        """The root agent's model name, when it is an LLM agent with one (the run records it,
        and marks the run simulated when it is the demo model)."""
        return _model_name(self._root) if isinstance(self._root, LlmAgent) else None

    def with_model(self, model: str) -> AdkAgent:
        """A copy whose LLM agents use ``model`` (a LiteLLM model name, as ``LiteLlm``
        takes it): every agent of the tree that names its own model is cloned with the new
        one (agents that inherit their parent's model keep inheriting it). Workflow nodes
        and agents wrapped as tools (``AgentTool``) cannot be switched this way: asking
        raises :class:`InputError`."""
        if not isinstance(self._root, BaseAgent):
            raise InputError(
                f"--model cannot switch the model of the ADK workflow {self._root.name!r}: "
                "set the model in the workflow's agents"
            )
        switched = _with_model(self._root, LiteLlm(model=model))
        target: App | BaseNode = switched
        if isinstance(self._target, App):
            target = self._target.model_copy(update={"root_agent": switched})
        return AdkAgent(target, name=self._name, app_name=self._app_name)

    async def start_session(self, context: SessionContext) -> AdkSession:
        given = context.session_input
        app_name = given.app_name or self._app_name
        sessions = InMemorySessionService()
        mocks = _ToolMocks()
        target, root = self._target, self._root
        if context.mcp_tools:
            if not isinstance(root, LlmAgent):  # refused when the run was planned
                raise TypeError(f"the ADK root {root.name!r} is no LLM agent to give MCP tools")
            root = with_mcp_tools(root, context.mcp_tools, mocks.failed_calls)
            if isinstance(target, App):
                target = target.model_copy(update={"root_agent": root})
            else:
                target = root
        if isinstance(target, App):
            runner = Runner(app=target, app_name=app_name, session_service=sessions)
        elif isinstance(root, BaseAgent):
            runner = Runner(agent=root, app_name=app_name, session_service=sessions)
        else:
            runner = Runner(node=root, app_name=app_name, session_service=sessions)
        runner.plugin_manager.plugins.insert(0, mocks)  # before the app's own plugins
        session = await sessions.create_session(
            app_name=app_name,
            user_id=given.user_id or DEFAULT_USER_ID,
            state=copy.deepcopy(dict(given.state)),
            session_id=given.session_id or f"{context.session_id}-{uuid.uuid4().hex[:12]}",
        )
        return AdkSession(
            runner=runner,
            mocks=mocks,
            lineage=_Lineage(root),
            app_name=app_name,
            user_id=session.user_id,
            session_id=session.id,
            state=dict(session.state),
        )


@dataclass
class AdkSession:
    """One ADK session: a trial's conversation. ``state`` is the ADK session's state
    after the last turn."""

    runner: Runner
    mocks: _ToolMocks
    lineage: _Lineage
    app_name: str
    user_id: str
    session_id: str
    state: dict[str, Any] = field(default_factory=dict)

    async def respond(self, message: Message, recorder: TrajectoryRecorder) -> str:
        self.mocks.gate = recorder.tools
        turn = _TurnEvents(recorder, self.lineage, self.mocks)
        content = types.Content(role="user", parts=_parts(message.content))
        try:
            # aclosing: a cancelled turn (the trial's timeout) closes the generator, and
            # ADK's cleanup cancels and awaits the invocation's own task
            async with contextlib.aclosing(
                self.runner.run_async(
                    user_id=self.user_id, session_id=self.session_id, new_message=content
                )
            ) as events:
                async for event in events:
                    turn.add(event)
        except Exception as exc:
            turn.failed(exc)
            raise
        finally:
            await self._refresh_state()
        return turn.answer()

    async def aclose(self) -> None:
        # as ADK's evaluator does after each case: closes the agent's toolsets and plugins
        await self.runner.close()

    async def _refresh_state(self) -> None:
        session = await self.runner.session_service.get_session(
            app_name=self.app_name,
            user_id=self.user_id,
            session_id=self.session_id,
            config=_STATE_ONLY,  # the state, without copying every event of the session
        )
        if session is not None:
            self.state = dict(session.state)


class _TurnEvents:
    """One turn's ADK events turned into the recorder's events, as they arrive."""

    def __init__(self, recorder: TrajectoryRecorder, lineage: _Lineage, mocks: _ToolMocks) -> None:
        self._recorder = recorder
        self._lineage = lineage
        self._mocks = mocks
        # the wall-clock time the turn started: ADK stamps events with time.time()
        self._started = time.time() - recorder.elapsed_ms() / 1000
        self._node: tuple[str, ...] = ()
        self._pending: dict[str, tuple[RecordedToolCall, float]] = {}
        self._answer: str | None = None
        self._answer_event: MessageEvent | None = None

    def add(self, event: Event) -> None:
        if event.author == "user":
            return
        at_ms = self._at_ms(event)
        self._visit(self._lineage.segments(event), at_ms)
        if event.partial:  # streamed chunks: the whole response follows as one event
            return
        author = event.author or None
        if event.usage_metadata is not None:
            self._recorder.add(_model_call(event, at_ms, author))
        parts = event.content.parts if event.content and event.content.parts else []
        self._text(event, parts, at_ms, author)  # said before the calls it came with
        for part in parts:
            if part.function_call is not None:
                self._call(part.function_call, event, at_ms, author)
            if part.function_response is not None:
                self._result(part.function_response, event)
        if event.error_code:
            message = event.error_message
            self._error(f"{event.error_code}: {message}" if message else event.error_code)
        if event.actions.transfer_to_agent:
            self._recorder.add(
                HandoffEvent(
                    source=author,
                    target=event.actions.transfer_to_agent,
                    at_ms=at_ms,
                    author=author,
                )
            )

    def failed(self, exc: BaseException) -> None:
        """The run raised: calls still waiting for a result failed with it."""
        self._error(f"{type(exc).__name__}: {exc}")

    def answer(self) -> str:
        """The turn's answer. Its text was recorded as said when it came; the trial records
        it again as the final message, so it is taken out of the turn's messages here."""
        if self._answer_event is not None:
            with contextlib.suppress(ValueError):
                self._recorder.events.remove(self._answer_event)
        return self._answer or ""

    def _at_ms(self, event: Event) -> float:
        return max((float(event.timestamp) - self._started) * 1000, 0.0)

    def _visit(self, segments: tuple[str, ...], at_ms: float) -> None:
        if not segments or segments == self._node:
            return
        shared = 0
        for mine, theirs in zip(self._node, segments, strict=False):
            if mine != theirs:
                break
            shared += 1
        # back in a node already entered (a parent agent taking over again): a new visit
        start = shared if shared < len(segments) else len(segments) - 1
        names = [_node_name(segment) for segment in segments]
        for depth in range(start, len(segments)):
            self._recorder.add(
                NodeEvent(name=names[depth], path=names[:depth], at_ms=at_ms, author=names[depth])
            )
        self._node = segments

    def _call(
        self, call: types.FunctionCall, event: Event, at_ms: float, author: str | None
    ) -> None:
        recorded = RecordedToolCall(name=call.name or "", args=dict(call.args or {}), id=call.id)
        self._recorder.add(ToolCallEvent(call=recorded, at_ms=at_ms, author=author))
        self._pending[call.id or f"{call.name}#{len(self._pending)}"] = (
            recorded,
            event.timestamp,
        )

    def _result(self, response: types.FunctionResponse, event: Event) -> None:
        key = response.id if response.id in self._pending else None
        if key is None:  # no id to match: the oldest waiting call of that name
            key = next((k for k, (c, _) in self._pending.items() if c.name == response.name), None)
        if key is None:
            return
        recorded, called_at = self._pending.pop(key)
        recorded.result = _jsonable(response.response)
        failed = self._mocks.failed_calls.pop(key, None)
        if failed is not None:
            recorded.result, recorded.error = None, failed
        stand_in = self._mocks.served.pop(key, None)
        if stand_in is not None:
            recorded.served_by = stand_in.served_by
            if stand_in.error is not None:
                recorded.result, recorded.error = None, stand_in.error
        recorded.duration_ms = max((event.timestamp - called_at) * 1000, 0.0)

    def _error(self, error: str) -> None:
        for recorded, _ in self._pending.values():
            recorded.error = recorded.error or error
        self._pending.clear()

    def _text(
        self, event: Event, parts: list[types.Part], at_ms: float, author: str | None
    ) -> None:
        if event.is_final_response() and parts:
            # ADK's evaluator: the answer is the last final response with text, all its
            # text parts joined (a final response without text counts only while none
            # with text came); an earlier one stays as something said before the answer
            text = "\n".join(part.text for part in parts if part.text)
            if text or not self._answer:
                self._answer = text
                self._answer_event = None
                if text:
                    self._answer_event = MessageEvent(text=text, at_ms=at_ms, author=author)
                    self._recorder.add(self._answer_event)
            return
        said = "\n".join(part.text for part in parts if part.text and not part.thought)
        if said:
            self._recorder.add(MessageEvent(text=said, at_ms=at_ms, author=author))


_TRANSFER = "transfer_to_agent"
"""The tool ADK gives an agent with sub-agents to hand the conversation over."""


class _ToolMocks(BasePlugin):
    """The trial's tool mocks in ADK's before-tool hook (see the module)."""

    def __init__(self) -> None:
        super().__init__(name="agentflow_eval_tool_mocks")
        self.gate: ToolGate = NO_MOCKS
        self.served: dict[str, StandIn] = {}
        """What answered each call, by its function call id."""
        self.failed_calls: dict[str, str] = {}
        """The errors of the MCP calls their server failed, by function call id (ADK's
        own tools raise; an MCP tool answers ``{"error": ...}``, see ``adk_mcp``)."""

    async def before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext
    ) -> dict[str, Any] | None:
        if not self.gate.active:
            return None
        if tool.name == _TRANSFER:  # ADK's routing between agents, not a user's tool
            self.gate.passes(tool.name)
            return None
        stand_in = self.gate.decide(tool.name, dict(tool_args))
        if stand_in is None:
            return None
        self.served[tool_context.function_call_id or tool.name] = stand_in
        if stand_in.latency_s:
            await asyncio.sleep(stand_in.latency_s)
        if stand_in.error is not None:
            return {"error": stand_in.error}
        if isinstance(stand_in.result, Mapping):
            return dict(stand_in.result)
        return {"result": stand_in.result}


class _Lineage:
    """Where an event's author sits: ADK 2.x's node path when the event has one, else the
    author and the agents above it in the tree (agents run outside the node runtime)."""

    def __init__(self, root: BaseNode) -> None:
        self._root = root
        self._known: dict[str, tuple[str, ...]] = {}

    def segments(self, event: Event) -> tuple[str, ...]:
        if event.node_info.path:
            return tuple(event.node_info.path.split("/"))
        author = event.author
        if not author:
            return ()
        if author not in self._known:
            self._known[author] = self._find(author)
        return self._known[author]

    def _find(self, author: str) -> tuple[str, ...]:
        if not isinstance(self._root, BaseAgent):
            return (author,)
        agent = self._root.find_agent(author)
        names: list[str] = []
        while agent is not None:
            names.append(agent.name)
            agent = agent.parent_agent
        return tuple(reversed(names)) or (author,)


def _node_name(segment: str) -> str:
    """``weather_agent@1`` → ``weather_agent`` (the run id dropped)."""
    return segment.rsplit("@", 1)[0]


def _model_call(event: Event, at_ms: float, author: str | None) -> ModelCallEvent:
    usage = event.usage_metadata
    assert usage is not None
    prompt = usage.prompt_token_count or 0
    # thinking tokens are written by the model too
    completion = (usage.candidates_token_count or 0) + (usage.thoughts_token_count or 0)
    return ModelCallEvent(
        model=event.model_version,
        usage=Usage.of_call(
            prompt,
            completion,
            listed_cost(event.model_version, None, prompt, completion),
            total_tokens=usage.total_token_count or prompt + completion,
        ),
        at_ms=at_ms,
        author=author,
    )


def _parts(content: Iterable[ContentPart]) -> list[types.Part]:
    """The user message's parts as ADK takes them: text parts as text, other ADK parts
    (inline data, files) as the eval set wrote them."""
    parts: list[types.Part] = []
    for part in content:
        if part.type == "text":
            if part.text:
                parts.append(types.Part(text=part.text))
        else:
            parts.append(types.Part.model_validate(dict(part.model_extra or {})))
    return parts or [types.Part(text="")]


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return _jsonable(dump(mode="json"))
    return repr(value)


def _model_name(agent: LlmAgent) -> str | None:
    model = agent.model
    if isinstance(model, str):
        return model or None
    name = getattr(model, "model", None)
    return name if isinstance(name, str) else None


def _agents(root: BaseNode) -> Iterable[BaseNode]:
    """``root`` and the agents and nodes under it: sub-agents, a workflow's graph nodes."""
    yield root
    graph = getattr(root, "graph", None)
    for child in (*(getattr(root, "sub_agents", None) or ()), *getattr(graph, "nodes", ())):
        if isinstance(child, BaseNode) and child is not root:
            yield from _agents(child)


_RUNTIME_MODULES = (
    "google.adk.flows.llm_flows.auto_flow",
    "google.adk.workflow._dynamic_node_scheduler",
    "google.adk.workflow._workflow",
)
"""What ADK 2.13's runner imports on its first run (seconds of imports)."""

_LITELLM_MODULES = ("litellm.proxy._types", "litellm.responses.mcp.chat_completions_handler")
"""What LiteLLM imports on its first ``acompletion`` (LiteLLM 1.106)."""


def _warm_up(root: BaseNode) -> None:
    """Import now what the first run would import: the first trials would otherwise spend
    seconds of their time budget importing, with the event loop (every trial) stopped.
    ``LiteLlm`` imports LiteLLM on its first call; ADK's runner and LiteLLM import more
    modules on their first run. Best effort: a module another version lacks is skipped."""
    names = list(_RUNTIME_MODULES)
    if any(isinstance(getattr(agent, "model", None), LiteLlm) for agent in _agents(root)):
        lite_llm = importlib.import_module("google.adk.models.lite_llm")
        ensure = getattr(lite_llm, "_ensure_litellm_imported", None)
        if callable(ensure):
            ensure()  # as LiteLlm does it (LITELLM_MODE set first: no .env loading)
        names += _LITELLM_MODULES
    for name in names:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)


def _with_model(agent: BaseAgent, model: LiteLlm) -> BaseAgent:
    """A clone of ``agent``'s tree whose agents that name a model use ``model``."""
    if isinstance(agent, LlmAgent) and any(isinstance(t, AgentTool) for t in agent.tools):
        raise InputError(
            f"--model cannot switch the models of the ADK agent {agent.name!r}: it "
            "calls other agents as tools (AgentTool)"
        )
    subs = [_with_model(sub, model) for sub in agent.sub_agents]
    update: dict[str, Any] = {"sub_agents": subs}
    if isinstance(agent, LlmAgent) and agent.model:
        update["model"] = model
    return agent.clone(update=update)
