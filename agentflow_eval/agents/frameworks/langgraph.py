"""LangGraph graphs evaluated as they are: a compiled graph (``builder.compile()``,
``create_react_agent(...)``) whose state holds a ``messages`` list.

Each trial is one conversation thread: the session gives the graph a ``thread_id`` unique
across runs and, when the graph was compiled without a checkpointer, its own copy of the
graph with a fresh ``InMemorySaver`` (so the thread's state lives as long as the trial
and nothing is shared between trials; it saves as each turn ends, ``durability="exit"``).
Each user turn is sent as
``{"messages": [HumanMessage(text)]}``; the checkpointer carries the conversation to the
next turn. The case's ``session_input.state`` joins the first turn's input (extra state
keys, earlier messages); ``user_id`` goes to ``config["configurable"]["user_id"]``, where
LangGraph's memory examples read it.

What the graph did is read from LangGraph's own stream, ``astream(stream_mode=["tasks",
"updates", "values"], subgraphs=True)``, as it happens, never from the model's text:

- ``tasks``: each node run as it starts (a :class:`NodeEvent`, with its subgraphs as the
  path: the namespace ``("summary:<task id>",)`` becomes ``["summary"]``), and each node
  that failed (its error goes to the tool calls it left unanswered);
- ``updates``: the messages each node wrote. An ``AIMessage`` gives its model call (its
  ``usage_metadata``, one :class:`ModelCallEvent` per message), its text and the tool
  calls it asked for; a ``ToolMessage`` gives the result of the call it answers (its
  ``status`` says whether it was an error). A finished subgraph's update repeats every
  message of its state, so messages are taken once, by id;
- ``values``: the graph's state after each step; the last is the thread's state when the
  turn ends (read from the checkpoint instead when the output schema leaves keys out).

The author of an event is the node, with its subgraphs (``summary/summarize``). The turn's
answer is the text of the last ``AIMessage`` the turn wrote; the session's ``state`` is the
thread's state after each turn, messages as role/content dicts.

The run's MCP servers (``context.mcp_tools``) cannot be added to a compiled graph: its
tools were fixed when it was compiled. So the agent spec may name a graph *factory*
instead, ``def build(tools): return create_react_agent(model, [*my_tools, *tools])``:
``build([])`` is the graph of a run without MCP servers, and a run with some builds each
trial's graph with their tools as LangChain tools (:mod:`.langgraph_mcp`). A plain graph
with MCP servers is refused before the run, saying so (:data:`MCP_HINT`).

The framework's own exceptions are not caught: a rate limit that outlasted
``ChatOpenAI``'s retries reaches the trial with ``openai.RateLimitError`` in its chain (an
infrastructure error), and a tool that raises fails the trial with its error. Two are
translated, keeping the original as the cause: ``GraphRecursionError`` is the agent
running out of steps (:class:`MaxStepsExceeded`), and a graph that stops at an
``interrupt()`` for human input raises :class:`GraphInterrupted` (turns are new messages;
an interrupt is not resumed).
"""

from __future__ import annotations

import contextlib
import json
import re
import time
import uuid
from collections.abc import AsyncGenerator, Callable, Iterable, Sequence
from typing import Any, cast

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    ToolMessage,
    convert_to_messages,
)
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.errors import GraphBubbleUp, GraphRecursionError
from langgraph.graph.state import CompiledStateGraph, StateGraph
from langgraph.pregel import Pregel
from langgraph.types import Durability, StreamMode
from pydantic_core import to_jsonable_python

from agentflow_eval.agents.base import MaxStepsExceeded, SessionContext, TrajectoryRecorder
from agentflow_eval.agents.frameworks.langgraph_mcp import langchain_tools
from agentflow_eval.agents.frameworks.langgraph_tools import (
    CONFIG_KEY,
    TrialMocks,
    gate_tool_nodes,
    tool_nodes,
)
from agentflow_eval.environments.mcp import McpTool
from agentflow_eval.llm.litellm_compat import listed_cost
from agentflow_eval.models.evalset import Message
from agentflow_eval.models.results import (
    MessageEvent,
    ModelCallEvent,
    NodeEvent,
    RecordedToolCall,
    ToolCallEvent,
    Usage,
)

__all__ = [
    "MCP_HINT",
    "GraphFactory",
    "GraphInterrupted",
    "LangGraphAgent",
    "LangGraphSession",
    "wrap",
    "wrap_factory",
]

MESSAGES = "messages"
"""The state key a graph must have: the conversation, as LangGraph's ``MessagesState``."""
STREAM_MODES: list[StreamMode] = ["tasks", "updates", "values"]
"""Node starts and failures, what each node wrote, and the state after each step (the
last is the thread's state when the turn ends). Not ``messages``: it makes ``ChatOpenAI``
stream its tokens, which changes the calls the agent makes."""
_UNNAMED = "LangGraph"
"""The name LangGraph gives a graph compiled without one."""
_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}


GraphFactory = Callable[[list[BaseTool]], Any]
"""A function that takes the trial's extra tools (LangChain tools) and returns the graph
built with them: a compiled graph, or a ``StateGraph`` builder."""

MCP_HINT = (
    "a compiled graph's tools are fixed when it is compiled: name a graph factory instead, "
    "a function build(tools) returning the graph built with them "
    "(create_react_agent(model, [*your_tools, *tools]))"
)
"""What the run says to do when MCP servers are given to a plain compiled graph."""


def wrap(obj: Any, *, name: str) -> LangGraphAgent:
    """A LangGraph object as an agent under test: a compiled graph, or a ``StateGraph``
    builder (compiled here, without a checkpointer)."""
    return LangGraphAgent(_graph(obj), name=name)


def wrap_factory(factory: GraphFactory, *, name: str, first: Any = None) -> LangGraphAgent:
    """A graph factory as an agent under test: ``factory([])`` (or ``first``, what it
    already returned for no tools) is the graph of a run without MCP servers; a run with
    some builds each trial's graph with their tools, ``factory(tools)``."""
    built = factory([]) if first is None else first
    return LangGraphAgent(_graph(built, factory=factory), name=name, factory=factory)


def _graph(obj: Any, *, factory: GraphFactory | None = None) -> Pregel[Any, Any, Any, Any]:
    if isinstance(obj, StateGraph):
        obj = obj.compile()
    if not isinstance(obj, Pregel):
        made = f" (returned by {_callable_name(factory)}(tools))" if factory else ""
        raise TypeError(
            f"a {type(obj).__name__}{made} is not a graph; point the agent spec at a compiled "
            "LangGraph graph (builder.compile(), create_react_agent(...)) or a function "
            "build(tools) returning one"
        )
    return obj


class GraphInterrupted(RuntimeError):
    """The graph stopped at an ``interrupt()``, waiting for a human: the adapter sends each
    turn as a new message and does not resume interrupts."""


class LangGraphAgent:
    """A compiled graph as a factory of conversations (one thread each)."""

    tool_mocks_supported = True
    history_supported = True

    def __init__(
        self,
        graph: Pregel[Any, Any, Any, Any],
        *,
        name: str,
        factory: GraphFactory | None = None,
    ) -> None:
        self.graph = graph
        self.factory = factory
        """What builds each trial's graph when the run has MCP servers (``graph`` is what
        it built with no tools)."""
        # a name the graph was given (compile(name=...)) says more than the attribute's
        self._name = graph.name if graph.name and graph.name != _UNNAMED else name
        self._input_keys = _input_keys(graph)
        if MESSAGES not in _state_keys(graph) or MESSAGES not in self._input_keys:
            raise ValueError(
                f"the graph's state has no {MESSAGES!r} key (its input takes: "
                f"{', '.join(sorted(self._input_keys)) or 'nothing'}); supported are graphs "
                f"whose state holds the conversation as {MESSAGES!r} (MessagesState, "
                "create_react_agent), each turn sent as {'messages': [HumanMessage(text)]}"
            )
        if MESSAGES not in _output_keys(graph):
            raise ValueError(
                f"the graph's output leaves out {MESSAGES!r}: the adapter reads the messages "
                "each node writes; include it in the output schema"
            )
        self._own_checkpointer = not isinstance(graph.checkpointer, BaseCheckpointSaver)
        # the streamed values are the whole state unless the output schema leaves keys out
        self._values_are_state = _state_keys(graph) <= _output_keys(graph)

    @property
    def name(self) -> str:
        return self._name

    @property
    def mcp_supported(self) -> bool:
        """A graph factory takes the run's MCP tools; a compiled graph's are fixed."""
        return self.factory is not None

    @property
    def mcp_hint(self) -> str | None:
        """What to do instead, when the run's MCP servers are refused."""
        return None if self.mcp_supported else MCP_HINT

    async def start_session(self, context: SessionContext) -> LangGraphSession:
        """A new thread: of the graph, or, with MCP tools, of the graph the factory builds
        with them for this trial (:meth:`_with_mcp_tools`)."""
        agent = self._with_mcp_tools(context.mcp_tools) if context.mcp_tools else self
        return agent._thread(context)

    def _with_mcp_tools(self, tools: Sequence[McpTool]) -> LangGraphAgent:
        """The agent of this trial's graph: ``factory(tools)``, checked as any graph. A
        tool name the graph has already (in its ToolNodes, built without MCP tools) fails
        the trial, as it does with the other adapters: a ToolNode would keep one of the
        two silently."""
        if self.factory is None:  # refused when the run was planned
            raise TypeError(f"the LangGraph graph {self._name!r} has no factory to give MCP tools")
        own = {name for node in tool_nodes(self.graph) for name in node.tools_by_name}
        clashes = sorted(own & {tool.name for tool in tools})
        if clashes:
            raise ValueError(
                f"MCP tool(s) {', '.join(map(repr, clashes))} have the name of one of graph "
                f"{self._name!r}'s own tools; tool names must be unique"
            )
        built = _graph(self.factory(langchain_tools(tools)), factory=self.factory)
        return LangGraphAgent(built, name=self._name)

    def _thread(self, context: SessionContext) -> LangGraphSession:
        """A new thread. The graph keeps its own checkpointer if it has one (the thread's
        id is unique, so trials never meet); otherwise this session's copy of the graph
        gets a fresh in-memory one, dropped with the session."""
        seed = dict(context.session_input.state)
        unknown = sorted(set(seed) - self._input_keys)
        if unknown:
            raise ValueError(
                f"session_input.state has keys the graph's input does not take: "
                f"{', '.join(unknown)} (it takes: {', '.join(sorted(self._input_keys))})"
            )
        graph = self.graph
        if self._own_checkpointer:
            graph = graph.copy(update={"checkpointer": InMemorySaver()})
        mocks = TrialMocks()
        configurable: dict[str, Any] = {
            "thread_id": f"agentflow-{context.session_id}-{uuid.uuid4().hex[:12]}",
            CONFIG_KEY: mocks,
        }
        if context.session_input.user_id:
            configurable["user_id"] = context.session_input.user_id
        config: RunnableConfig = {
            "configurable": configurable,
            "metadata": {"agentflow_case": context.case_id, "agentflow_trial": context.trial_index},
        }
        # a saver of our own needs the thread's state only as each turn ends (nothing
        # resumes a trial mid-turn): saving once per turn, not per step, is cheaper
        durability: Durability | None = "exit" if self._own_checkpointer else None
        return LangGraphSession(
            graph,
            config,
            seed,
            mocks=mocks,
            history=context.history,
            durability=durability,
            values_are_state=self._values_are_state,
        )


class LangGraphSession:
    """One thread of the graph: turns go to it in order; ``state`` is the thread's state
    after the last turn (JSON-ready)."""

    def __init__(
        self,
        graph: Pregel[Any, Any, Any, Any],
        config: RunnableConfig,
        seed: dict[str, Any],
        *,
        mocks: TrialMocks | None = None,
        history: Sequence[dict[str, Any]] = (),
        durability: Durability | None = None,
        values_are_state: bool = False,
    ) -> None:
        self.graph = graph
        self.config = config
        self.mocks = mocks or TrialMocks()
        self._gated = False
        self._history = list(history)
        self.durability = durability
        self._values_are_state = values_are_state
        self._seen = _SeenMessages()
        self._seed: dict[str, Any] | None = seed
        self.state: dict[str, Any] = _state_dict(seed)

    @property
    def thread_id(self) -> str:
        return str(self.config["configurable"]["thread_id"])

    async def respond(self, message: Message, recorder: TrajectoryRecorder) -> str:
        human = HumanMessage(content=message.text, id=str(uuid.uuid4()))
        payload: dict[str, Any] = (
            self._first_input(human) if self._seed is not None else {MESSAGES: [human]}
        )
        self._seen.add(human)
        if recorder.tools.active and not self._gated:
            gate_tool_nodes(self.graph)  # the graph's ToolNodes, once per graph
            self._gated = True
        self.mocks.gate = recorder.tools
        turn = _Turn(recorder, self._seen, self.mocks)
        try:
            # an async generator: closing it on cancellation stops the graph's tasks
            items = cast(
                AsyncGenerator[Any, None],
                self.graph.astream(
                    payload,
                    self.config,
                    stream_mode=STREAM_MODES,
                    subgraphs=True,
                    durability=self.durability,
                ),
            )
            async with contextlib.aclosing(items) as stream:
                async for namespace, mode, chunk in stream:
                    turn.take(namespace, mode, chunk)
        except GraphRecursionError as exc:
            turn.cut_short(exc)
            await self._refresh_state_quietly(turn.values)
            raise MaxStepsExceeded(_recursion_limit(exc)) from exc
        except Exception as exc:
            turn.cut_short(exc)
            await self._refresh_state_quietly(turn.values)
            raise
        except BaseException:  # cancelled (the trial's timeout): nothing more to await
            turn.cut_short(None)
            raise
        await self._refresh_state(turn.values)
        if turn.interrupts:
            raise GraphInterrupted(
                f"the graph stopped at an interrupt() waiting for human input "
                f"({_clip(repr(turn.interrupts))}); the LangGraph adapter sends each turn "
                "as a new message and does not resume interrupts"
            )
        return turn.finish()

    def _first_input(self, human: HumanMessage) -> dict[str, Any]:
        """``session_input.state`` with the first message: a seeded history, then earlier
        messages given there, come first, each with an id so that it is not taken for
        something the graph said."""
        seed, self._seed = self._seed or {}, None
        given = [*self._history, *(seed.get(MESSAGES) or [])]
        earlier = _with_ids(convert_to_messages(given))
        for old in earlier:
            self._seen.add(old)
        return {**seed, MESSAGES: [*earlier, human]}

    async def _refresh_state(self, values: Any) -> None:
        """``state`` from the last values the turn streamed, or, when those are not the
        whole state, from the thread's checkpoint."""
        if values is None or not self._values_are_state:
            values = (await self.graph.aget_state(self.config)).values
        if isinstance(values, dict):
            for message in _messages_in(values.get(MESSAGES)):
                self._seen.add(message)
        self.state = _state_dict(values)

    async def _refresh_state_quietly(self, values: Any) -> None:
        # the turn's own error is what the trial records; a state read failing after it
        # must not replace it
        with contextlib.suppress(Exception):
            await self._refresh_state(values)

    async def aclose(self) -> None:
        """Nothing to close: a saver of our own goes with the session's graph copy; a
        graph's own checkpointer keeps its threads (they are the graph owner's)."""


class _Turn:
    """Turns one turn's stream items into trajectory events, in the order they come."""

    def __init__(
        self, recorder: TrajectoryRecorder, seen: _SeenMessages, mocks: TrialMocks
    ) -> None:
        self.mocks = mocks
        self.recorder = recorder
        self.seen = seen
        self.pending: dict[str, tuple[RecordedToolCall, float]] = {}
        self.answer = ""
        self.answer_event: MessageEvent | None = None
        self.interrupts: list[Any] = []
        self.values: Any = None

    def take(self, namespace: Sequence[str], mode: str, chunk: Any) -> None:
        path = [part.split(":", 1)[0] for part in namespace if not part.isdigit()]
        if mode == "tasks" and isinstance(chunk, dict):
            name = str(chunk.get("name"))
            if "result" not in chunk:  # a node starts
                self.recorder.add(NodeEvent(name=name, path=path, author=_qualified(path, name)))
            else:
                error = chunk.get("error")
                if error is not None and not isinstance(error, GraphBubbleUp):
                    self._fail_pending(f"{_describe(error)} (in node {_qualified(path, name)})")
                self.interrupts.extend(chunk.get("interrupts") or ())
        elif mode == "values":
            if not namespace:  # the graph's own state, not a subgraph's
                self.values = chunk
        elif mode == "updates" and isinstance(chunk, dict):
            for node, update in chunk.items():
                if node == "__interrupt__":
                    if not self.interrupts:
                        self.interrupts.extend(update if isinstance(update, Sequence) else [update])
                    continue
                if node.startswith("__"):  # __metadata__ of a cached node
                    continue
                author = _qualified(path, node)
                for message in _messages_of(update):
                    self._message(message, author)

    def _message(self, message: BaseMessage, author: str) -> None:
        if self.seen.check_and_add(message):
            return
        if isinstance(message, AIMessage):
            self._ai_message(message, author)
        elif isinstance(message, ToolMessage):
            self._tool_message(message, author)

    def _ai_message(self, message: AIMessage, author: str) -> None:
        usage = message.usage_metadata
        if usage is not None:  # the model call that wrote it comes first
            prompt, completion = int(usage["input_tokens"]), int(usage["output_tokens"])
            self.recorder.add(
                ModelCallEvent(
                    model=_model_name(message),
                    usage=Usage.of_call(
                        prompt,
                        completion,
                        listed_cost(_model_name(message), None, prompt, completion),
                        total_tokens=int(usage.get("total_tokens") or prompt + completion),
                    ),
                    author=author,
                )
            )
        text = str(message.text)
        self.answer, self.answer_event = text, None
        if text:  # intermediate until the turn ends on it (then it is the answer)
            self.answer_event = MessageEvent(text=text, author=author)
            self.recorder.add(self.answer_event)
        now = time.perf_counter()
        for call in message.tool_calls:
            record = RecordedToolCall(name=call["name"], args=dict(call["args"]), id=call["id"])
            self.recorder.add(ToolCallEvent(call=record, author=author))
            if call["id"]:
                self.pending[call["id"]] = (record, now)
        for bad in message.invalid_tool_calls:
            record = RecordedToolCall(
                name=bad.get("name") or "(unnamed)",
                id=bad.get("id"),
                error=f"invalid tool call: {bad.get('error') or bad.get('args')!s}",
            )
            self.recorder.add(ToolCallEvent(call=record, author=author))

    def _tool_message(self, message: ToolMessage, author: str) -> None:
        record, asked = self.pending.pop(message.tool_call_id, (None, None))
        if record is None:  # a result no model call of this turn asked for
            record = RecordedToolCall(name=message.name or "(unnamed)", id=message.tool_call_id)
            self.recorder.add(ToolCallEvent(call=record, author=author))
        stand_in = self.mocks.served.pop(message.tool_call_id, None)
        if stand_in is not None:
            record.served_by = stand_in.served_by
            record.error = stand_in.error
            record.result = None if stand_in.error is not None else stand_in.result
        elif message.status == "error":
            record.error = str(message.text) or "error"
        else:
            record.result = _tool_result(message.content)

        if asked is not None:
            record.duration_ms = (time.perf_counter() - asked) * 1000

    def _fail_pending(self, reason: str) -> None:
        for record, asked in self.pending.values():
            record.error = reason
            record.duration_ms = (time.perf_counter() - asked) * 1000
        self.pending.clear()

    def cut_short(self, exc: BaseException | None) -> None:
        """The turn ended without finishing: calls still waiting get no result."""
        self._fail_pending(
            f"no result: the run failed ({_describe(exc)})"
            if exc is not None
            else "no result: the turn was cancelled while it ran"
        )

    def finish(self) -> str:
        """The answer (the last AIMessage's text); its event leaves the intermediate
        responses, since the trial records the answer itself."""
        self._fail_pending("no result: the graph ended without running it")
        if self.answer_event is not None:
            events = self.recorder.events
            for index in range(len(events) - 1, -1, -1):
                if events[index] is self.answer_event:
                    del events[index]
                    break
        return self.answer


class _SeenMessages:
    """Messages already taken, by id. A message a node wrote without an id gets one from
    the ``messages`` reducer afterwards, in place: such messages are kept, and their ids
    read once they have them."""

    def __init__(self) -> None:
        self._ids: set[str] = set()
        self._unnamed: list[BaseMessage] = []

    def add(self, message: BaseMessage) -> None:
        self.check_and_add(message)

    def check_and_add(self, message: BaseMessage) -> bool:
        """Whether ``message`` was seen before; it is seen from now on."""
        if any(message is kept for kept in self._unnamed):
            return True
        if message.id is None:
            self._unnamed.append(message)
            return False
        if message.id in self._ids:
            return True
        self._name_unnamed()
        if message.id in self._ids:
            return True
        self._ids.add(message.id)
        return False

    def _name_unnamed(self) -> None:
        named = [m for m in self._unnamed if m.id is not None]
        if named:
            self._ids.update(str(m.id) for m in named)
            self._unnamed = [m for m in self._unnamed if m.id is None]


def _messages_of(update: Any) -> list[BaseMessage]:
    """The messages a node's update writes: ``{"messages": ...}``, or a list of such
    updates (a node that wrote the key more than once)."""
    if isinstance(update, dict):
        return _messages_in(update.get(MESSAGES))
    if isinstance(update, list):
        return [m for part in update for m in _messages_of(part)]
    return []


def _messages_in(value: Any) -> list[BaseMessage]:
    """A messages write as message objects: one message, a list, an ``Overwrite`` of a
    list; tuples and dicts (``("ai", "hi")``) are converted as ``add_messages`` does."""
    value = getattr(value, "value", value) if not isinstance(value, BaseMessage) else value
    if value is None:
        return []
    items: Iterable[Any] = value if isinstance(value, list | tuple) else [value]
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str):
        items = [value]  # a single ("role", "text") pair
    messages: list[BaseMessage] = []
    for item in items:
        if isinstance(item, BaseMessage):
            messages.append(item)
            continue
        with contextlib.suppress(Exception):  # not a message: nothing the adapter reads
            messages.extend(convert_to_messages([item]))
    return messages


def _with_ids(messages: list[BaseMessage]) -> list[BaseMessage]:
    for message in messages:
        if message.id is None:
            message.id = str(uuid.uuid4())
    return messages


def _tool_result(content: Any) -> Any:
    """A tool's result as the tool returned it: ``ToolNode`` writes a dict or list as
    JSON text, which is read back; other text stays text."""
    if isinstance(content, str):
        stripped = content.strip()
        if stripped[:1] in ("{", "["):
            with contextlib.suppress(ValueError):
                return json.loads(stripped)
        return content
    return to_jsonable_python(content, fallback=repr)


def _model_name(message: AIMessage) -> str | None:
    name = message.response_metadata.get("model_name") or message.response_metadata.get("model")
    return str(name) if name else None


def _qualified(path: Sequence[str], name: str) -> str:
    return "/".join((*path, name))


def _describe(error: Any) -> str:
    if isinstance(error, BaseException):
        return f"{type(error).__name__}: {error}"
    return str(error)


def _callable_name(fn: Any) -> str:
    return str(getattr(fn, "__qualname__", None) or type(fn).__name__)


def _clip(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _recursion_limit(exc: GraphRecursionError) -> int:
    found = re.search(r"[Rr]ecursion limit of (\d+)", str(exc))
    return int(found.group(1)) if found else 0


def _state_dict(values: Any) -> dict[str, Any]:
    """The thread's state as JSON values; messages become role/content dicts."""
    if not isinstance(values, dict):
        return {"value": _plain(values)}
    # leaves out LangGraph's own keys (``__interrupt__``)
    return {str(k): _plain(v) for k, v in values.items() if not str(k).startswith("__")}


def _plain(value: Any) -> Any:
    if isinstance(value, BaseMessage):
        return _message_dict(value)
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return to_jsonable_python(value, fallback=repr)


def _message_dict(message: BaseMessage) -> dict[str, Any]:
    plain: dict[str, Any] = {
        "role": _ROLES.get(message.type, message.type),
        "content": str(message.text),
    }
    if isinstance(message, AIMessage) and message.tool_calls:
        plain["tool_calls"] = [
            {"name": call["name"], "args": to_jsonable_python(call["args"], fallback=repr)}
            for call in message.tool_calls
        ]
    if isinstance(message, ToolMessage):
        plain["name"] = message.name
    return plain


def _state_keys(graph: Pregel[Any, Any, Any, Any]) -> frozenset[str]:
    """The graph's state keys (its channels, without LangGraph's own: ``__start__``,
    ``branch:to:agent``...)."""
    return frozenset(key for key in graph.channels if not key.startswith("__") and ":" not in key)


def _input_keys(graph: Pregel[Any, Any, Any, Any]) -> frozenset[str]:
    """What the graph's input takes: its input schema's keys (a ``StateGraph``), else its
    input channels."""
    if isinstance(graph, CompiledStateGraph):
        channels = graph.builder.schemas.get(graph.builder.input_schema)
        if channels:
            return frozenset(channels)
    return _keys(graph.input_channels)


def _output_keys(graph: Pregel[Any, Any, Any, Any]) -> frozenset[str]:
    return _keys(graph.stream_channels_asis)


def _keys(channels: str | Sequence[str]) -> frozenset[str]:
    return frozenset([channels] if isinstance(channels, str) else channels)
