"""Pydantic AI agents, evaluated as they are.

A Pydantic AI ``Agent`` keeps no state between runs: a conversation is the message
history handed to the next ``agent.run``. So a trial's session is that history (empty at
first), the run's ``deps`` and a conversation id; each user turn is one
``agent.run(text, message_history=..., deps=...)``, and the next turn gets
``result.all_messages()``.

What a turn did is read from the framework's own run data, never re-reported by hand:

- the run's new messages (``result.new_messages()``, or the messages
  ``capture_run_messages()`` gathered when the run raised or was cancelled): each
  ``ModelResponse`` is a model call (its model name, its ``usage``, its cost from Pydantic
  AI's price table when it knows the model), its text parts are what the agent said, its
  tool calls are matched with their ``ToolReturnPart`` (the result; ``outcome`` other than
  ``success`` is an error) or ``RetryPromptPart`` (bad arguments, an unknown tool, a
  ``ModelRetry``: the error the model was sent);
- a per-run capability (:class:`_Observer`) whose hooks time each tool call, keep the
  exception of a tool that raised (Pydantic AI lets a plain exception end
  the run, so the messages never hold its return), and capture the messages of an agent
  run started inside a tool (Pydantic AI's "agent delegation"): the delegate's model
  calls and tool calls are recorded under its own name, after a node event
  ``parent/delegate``.

Each run is one node event named after the agent. Events are added in the order they
happened, stamped with when they happened, and authored by the agent (or delegate) that
acted.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from types import FunctionType
from typing import Any

from pydantic import TypeAdapter
from pydantic_ai import capture_run_messages
from pydantic_ai.agent import AbstractAgent
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import (
    BaseToolCallPart,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    NativeToolReturnPart,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models import Model, infer_model
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.toolsets import AbstractToolset, FunctionToolset
from pydantic_core import to_json, to_jsonable_python

from agentflow_eval.agents.base import SessionContext, TrajectoryRecorder
from agentflow_eval.agents.frameworks.pydantic_ai_mcp import mcp_toolset
from agentflow_eval.errors import InputError
from agentflow_eval.llm.ratelimit import RateLimiter
from agentflow_eval.models.evalset import Message
from agentflow_eval.models.results import (
    MessageEvent,
    ModelCallEvent,
    NodeEvent,
    RecordedToolCall,
    ToolCallEvent,
    Usage,
)

__all__ = ["PydanticAIAgent", "PydanticAISession", "wrap"]

DepsFactory = Callable[[SessionContext], Any]
"""Makes a session's ``deps`` from its context (for deps that cannot be built from the
case's session state: clients, connections)."""

_NO_RESULT = "no result: the run ended before this call returned"


def wrap(obj: Any, *, name: str) -> PydanticAIAgent:
    """The registry's entry point: a Pydantic AI agent as an agent under test, named by
    its own ``name`` when it has one, else by the spec's attribute ``name``."""
    if not isinstance(obj, AbstractAgent):
        raise TypeError(
            f"a {type(obj).__name__} from pydantic_ai is not an agent; point the spec at a "
            "pydantic_ai.Agent"
        )
    return PydanticAIAgent(obj, name=name)


class PydanticAIAgent:
    """A Pydantic AI agent as an :class:`~agentflow_eval.agents.base.AgentUnderTest`.

    ``deps``, when given, makes each session's ``deps`` from its
    :class:`SessionContext`; otherwise they are built from the case's
    ``session_input.state`` when the agent declares a ``deps_type`` (see
    :meth:`PydanticAISession`). ``model`` replaces the agent's model for every session
    (what :meth:`with_model` sets). Build one in your own module to pass a deps factory::

        agent = PydanticAIAgent(my_agent, name="support", deps=lambda ctx: Deps(http=...))

    The tools of the config's MCP servers are added to each run. Tool mocks and a seeded
    history are not supported yet: a case with either is refused before the run.
    """

    tool_mocks_supported = False
    history_supported = False
    mcp_supported = True
    """The config's MCP servers' tools are given to each run as a toolset of its own
    (:mod:`.pydantic_ai_mcp`)."""

    def __init__(
        self,
        agent: AbstractAgent[Any, Any],
        *,
        name: str | None = None,
        deps: DepsFactory | None = None,
        model: Model | str | None = None,
    ) -> None:
        self.agent = agent
        self._name = agent.name or name or "pydantic_ai_agent"
        self.deps_factory = deps
        self._model_choice = model
        self._deps_adapter: TypeAdapter[Any] | None = None
        self._delegates: dict[str, str | None] = {}

    @property
    def name(self) -> str:
        return self._name

    @property
    def model(self) -> str | None:
        """The model the agent runs on, as Pydantic AI names it (``openai:gpt-4o-mini``):
        what the run's records and report show."""
        chosen = self._model_choice or self.agent.model
        return chosen.model_id if isinstance(chosen, Model) else chosen

    def with_model(self, model: str) -> PydanticAIAgent:
        """The same agent on another model, for ``--model``:

        - ``provider:name`` (Pydantic AI's own form: ``openai:gpt-4o-mini``,
          ``anthropic:claude-sonnet-4-5``) is built by Pydantic AI, its key and base URL
          read from that provider's environment variables (``OPENAI_API_KEY``, ...);
        - a bare name (``gpt-4o-mini``, or a gateway's ``openai/gpt-4o-mini``) keeps the
          agent's own model class and provider (its base URL, key and client) and asks it
          for that model.

        Raises :class:`InputError` (one line) when the model cannot be built."""
        try:
            chosen = _switched_model(self.agent.model, model)
        except InputError:
            raise
        except Exception as exc:
            raise InputError(
                f"--model {model!r}: Pydantic AI cannot build it: {type(exc).__name__}: {exc}"
            ) from exc
        return PydanticAIAgent(self.agent, name=self._name, deps=self.deps_factory, model=chosen)

    async def start_session(self, context: SessionContext) -> PydanticAISession:
        deps, state = self._deps_for(context)
        model = _limited(self._model_choice or self.agent.model, context.models.rate_limiter)
        return PydanticAISession(self, context, deps=deps, state=state, model=model)

    # -- deps and state ------------------------------------------------------------------
    def _deps_for(self, context: SessionContext) -> tuple[Any, dict[str, Any] | None]:
        """The session's deps, and the state dict kept beside them when there are none.

        A deps factory decides alone. Otherwise an agent without a ``deps_type`` runs with
        ``deps=None`` and the case's ``session_input.state`` stays the session's state;
        an agent with one gets deps validated from that state (a dict, a dataclass, a
        pydantic model or a TypedDict all take it)."""
        state = dict(context.session_input.state)
        if self.deps_factory is not None:
            return self.deps_factory(context), None
        deps_type = self.agent.deps_type
        if deps_type is type(None):
            return None, state
        if self._deps_adapter is None:
            try:
                self._deps_adapter = TypeAdapter(deps_type)
            except Exception as exc:
                raise TypeError(
                    f"agent {self.name!r} declares deps_type {_type_name(deps_type)}, which "
                    "cannot be built from the case's session state; give "
                    "PydanticAIAgent(agent, deps=factory) a factory"
                ) from exc
        try:
            return self._deps_adapter.validate_python(state), None
        except Exception as exc:
            raise TypeError(
                f"agent {self.name!r}: session_input.state {sorted(state)} does not make its "
                f"deps_type {_type_name(deps_type)}: {exc}"
            ) from exc

    def _dump_deps(self, deps: Any) -> Any:
        if self._deps_adapter is not None:
            return self._deps_adapter.dump_python(deps, mode="json")
        return to_jsonable_python(deps, fallback=repr)

    def _delegate_name(self, tool_name: str) -> str:
        """The agent a delegating tool runs: the one Pydantic AI agent its function refers
        to (by a global or closure name), named as that agent names itself (else by the
        variable); the tool's name when that is not one agent."""
        if tool_name not in self._delegates:
            self._delegates[tool_name] = _referenced_agent(self.agent, tool_name)
        return self._delegates[tool_name] or tool_name


class PydanticAISession:
    """One conversation: the message history, the deps, and a conversation id unique to
    this trial of this run (``<session_id>:<random>``).

    ``state`` (read when the trial ends, for ``final_session_state_match``) holds the
    deps as JSON (their fields at the top level when they dump to an object; under
    ``deps`` otherwise), or the case's session state when the agent takes no deps, and
    ``messages``: the conversation as ``ModelMessagesTypeAdapter`` writes it (a deps
    field named ``messages`` takes that key's place)."""

    def __init__(
        self,
        owner: PydanticAIAgent,
        context: SessionContext,
        *,
        deps: Any,
        state: dict[str, Any] | None,
        model: Model | str | None,
    ) -> None:
        self._owner = owner
        self._agent = owner.agent
        self._deps = deps
        self._state = state
        self._model = model
        self._history: list[ModelMessage] = []
        toolset = mcp_toolset(context.mcp_tools)
        self._toolsets: list[AbstractToolset[Any]] = [toolset] if toolset is not None else []
        self.conversation_id = f"{context.session_id}:{uuid.uuid4().hex[:16]}"
        source = context.session_input
        self._metadata = {
            "agentflow": {
                "case_id": context.case_id,
                "trial_index": context.trial_index,
                "session_id": context.session_id,
                "app_name": source.app_name,
                "user_id": source.user_id,
            }
        }

    @property
    def messages(self) -> list[ModelMessage]:
        """The conversation so far."""
        return list(self._history)

    @property
    def state(self) -> dict[str, Any]:
        values: dict[str, Any]
        if self._state is not None:
            values = dict(self._state)
        else:
            dumped = self._owner._dump_deps(self._deps)
            values = dumped if isinstance(dumped, dict) else {"deps": dumped}
        conversation = ModelMessagesTypeAdapter.dump_python(self._history, mode="json")
        return {"messages": conversation, **values}

    async def respond(self, message: Message, recorder: TrajectoryRecorder) -> str:
        """Run the agent on one user turn. Whatever ends the run — an answer, an exception
        (a tool's, the provider's after the client's retries) or a cancellation (the trial
        timeout) — the messages it produced are recorded; exceptions propagate."""
        run_id = uuid.uuid4().hex
        observer = _Observer(recorder)
        node_at = recorder.elapsed_ms()
        clock = _Clock.now(recorder)
        with capture_run_messages() as captured, self._model_override():
            try:
                result = await self._agent.run(
                    message.text,
                    message_history=self._history,
                    deps=self._deps,
                    conversation_id=self.conversation_id,
                    run_id=run_id,
                    metadata=self._metadata,
                    infer_name=False,
                    capabilities=[observer],
                    toolsets=self._toolsets or None,
                )
            except BaseException:
                self._history = list(captured) or self._history
                new = [m for m in captured if getattr(m, "run_id", None) == run_id]
                self._record(recorder, new, observer, clock, node_at=node_at, answered=False)
                raise
        self._history = result.all_messages()
        self._record(
            recorder, result.new_messages(), observer, clock, node_at=node_at, answered=True
        )
        return _answer_text(result.output)

    async def aclose(self) -> None:
        """Nothing to release: the agent and its model client belong to the agent."""

    @contextlib.contextmanager
    def _model_override(self) -> Iterator[None]:
        if self._model is None or self._model is self._agent.model:
            yield
            return
        with self._agent.override(model=self._model):
            yield

    def _record(
        self,
        recorder: TrajectoryRecorder,
        messages: Sequence[ModelMessage],
        observer: _Observer,
        clock: _Clock,
        *,
        node_at: float,
        answered: bool,
    ) -> None:
        author = self._owner.name
        recorder.add(NodeEvent(name=author, path=[], author=author, at_ms=node_at))
        _Replay(recorder, clock, observer, self._owner).run(
            messages, author=author, path=[author], answered=answered
        )


@dataclass
class _Clock:
    """Turns Pydantic AI's message timestamps (UTC) into milliseconds since the turn
    started, for what the hooks did not time."""

    turn_started: datetime

    @classmethod
    def now(cls, recorder: TrajectoryRecorder) -> _Clock:
        return cls(datetime.now(UTC) - timedelta(milliseconds=recorder.elapsed_ms()))

    def at_ms(self, when: datetime | None) -> float:
        if when is None:
            return 0.0
        return max((when - self.turn_started) / timedelta(milliseconds=1), 1e-3)


@dataclass
class _ToolTiming:
    at_ms: float
    duration_ms: float = 0.0
    error: str | None = None
    delegate: list[ModelMessage] = field(default_factory=list)


class _Observer(AbstractCapability[Any]):
    """A capability given to one run: times its tool calls, keeps the exception of a tool
    that raised, learns the output tools' names (calls to them are the answer, not tool
    calls), and captures the messages of an agent run started inside a tool. It changes
    nothing the agent does. (Model calls are timed by their messages' timestamps: a
    ``wrap_model_request`` hook would cost about 0.5 ms of CPU per call.)"""

    def __init__(self, recorder: TrajectoryRecorder) -> None:
        self._recorder = recorder
        self.tools: dict[str, _ToolTiming] = {}
        self.output_tools: set[str] = set()

    async def prepare_output_tools(self, ctx: Any, tool_defs: list[Any]) -> list[Any]:
        self.output_tools.update(tool.name for tool in tool_defs)
        return tool_defs

    async def wrap_tool_execute(
        self, ctx: Any, *, call: ToolCallPart, tool_def: Any, args: Any, handler: Any
    ) -> Any:
        timing = _ToolTiming(at_ms=self._recorder.elapsed_ms())
        self.tools[call.tool_call_id] = timing
        started = time.perf_counter()
        try:
            with capture_run_messages() as delegate:
                timing.delegate = delegate
                return await handler(args)
        except asyncio.CancelledError:
            timing.error = "cancelled: the run ended before this call returned"
            raise
        except BaseException as exc:
            timing.error = _error_text(exc)
            raise
        finally:
            timing.duration_ms = (time.perf_counter() - started) * 1000


_unpriced: set[tuple[str | None, str | None, str | None]] = set()
"""Models Pydantic AI's price table does not know (asked once per process)."""


@dataclass
class _Replay:
    """Adds a run's messages to the recorder as events, in order."""

    recorder: TrajectoryRecorder
    clock: _Clock
    observer: _Observer | None
    owner: PydanticAIAgent

    def run(
        self, messages: Sequence[ModelMessage], *, author: str, path: list[str], answered: bool
    ) -> None:
        outcomes = _tool_outcomes(messages)
        responses = [m for m in messages if isinstance(m, ModelResponse)]
        final = responses[-1] if answered and responses else None
        output_tools = self.observer.output_tools if self.observer else set()
        sent: datetime | None = None
        for message in messages:
            if isinstance(message, ModelRequest):
                sent = message.timestamp or sent
                continue
            self._model_call(message, sent, author)
            for part in message.parts:
                if isinstance(part, TextPart):
                    if message is not final and part.content:
                        self.recorder.add(
                            MessageEvent(
                                text=part.content,
                                author=author,
                                at_ms=self.clock.at_ms(message.timestamp),
                            )
                        )
                elif isinstance(part, BaseToolCallPart) and part.tool_name not in output_tools:
                    self._tool_call(part, message, outcomes, author, path)

    def _model_call(self, message: ModelResponse, sent: datetime | None, author: str) -> None:
        """A model call, from the request Pydantic AI stamped as it sent it to the response
        it stamped as it came in."""
        latency_ms = None
        if sent is not None and sent <= message.timestamp:
            latency_ms = (message.timestamp - sent) / timedelta(milliseconds=1)
        usage = message.usage
        prompt, completion = usage.input_tokens, usage.output_tokens
        self.recorder.add(
            ModelCallEvent(
                model=message.model_name,
                usage=Usage.of_call(prompt, completion, _cost(message)),
                latency_ms=latency_ms,
                author=author,
                at_ms=self.clock.at_ms(sent or message.timestamp),
            )
        )

    def _tool_call(
        self,
        part: BaseToolCallPart,
        message: ModelResponse,
        outcomes: dict[str, tuple[Any, str | None]],
        author: str,
        path: list[str],
    ) -> None:
        timing = self.observer.tools.get(part.tool_call_id) if self.observer else None
        result, error = outcomes.get(part.tool_call_id, (None, _NO_RESULT))
        if part.tool_call_id not in outcomes and timing is not None and timing.error:
            error = timing.error
        self.recorder.add(
            ToolCallEvent(
                call=RecordedToolCall(
                    name=part.tool_name,
                    args=part.args_as_dict(),
                    result=result,
                    error=error,
                    duration_ms=timing.duration_ms if timing else 0.0,
                    id=part.tool_call_id,
                ),
                author=author,
                at_ms=timing.at_ms if timing else self.clock.at_ms(message.timestamp),
            )
        )
        if timing is not None and timing.delegate:
            self._delegate(part.tool_name, timing, path)

    def _delegate(self, tool_name: str, timing: _ToolTiming, path: list[str]) -> None:
        """An agent run inside a tool: a node under the delegating agent, then what it did
        (timed by its messages: the observer does not reach into it)."""
        name = self.owner._delegate_name(tool_name)
        self.recorder.add(NodeEvent(name=name, path=list(path), author=name, at_ms=timing.at_ms))
        inner = _Replay(self.recorder, self.clock, None, self.owner)
        inner.run(timing.delegate, author=name, path=[*path, name], answered=timing.error is None)


def _tool_outcomes(messages: Sequence[ModelMessage]) -> dict[str, tuple[Any, str | None]]:
    """Each answered tool call's ``(result, error)`` by call id: returns, failed or
    denied returns, and retry prompts (the error the model was sent)."""
    outcomes: dict[str, tuple[Any, str | None]] = {}
    for message in messages:
        for part in message.parts:
            if isinstance(part, ToolReturnPart | NativeToolReturnPart):
                content = to_jsonable_python(part.content, fallback=repr)
                if part.outcome == "success":
                    outcomes[part.tool_call_id] = (content, None)
                else:
                    detail = content if isinstance(content, str) else to_json(content).decode()
                    outcomes[part.tool_call_id] = (None, f"{part.outcome}: {detail}")
            elif isinstance(part, RetryPromptPart) and part.tool_name is not None:
                outcomes[part.tool_call_id] = (None, _retry_text(part))
    return outcomes


def _retry_text(part: RetryPromptPart) -> str:
    if isinstance(part.content, str):
        return part.content
    problems = (
        f"{'.'.join(str(p) for p in error.get('loc', ())) or 'args'}: {error.get('msg', '')}"
        for error in part.content
    )
    return "invalid arguments: " + "; ".join(problems)


def _error_text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _cost(message: ModelResponse) -> float | None:
    """The call's cost from Pydantic AI's price table (genai-prices); None for a model it
    does not know (a self-hosted one)."""
    key = (message.model_name, message.provider_name, message.provider_url)
    if not message.model_name or key in _unpriced:
        return None
    try:
        return float(message.cost().total_price)
    except Exception:
        _unpriced.add(key)
        return None


def _answer_text(output: Any) -> str:
    """The run's output as the turn's answer: text as it is, structured output as JSON."""
    if isinstance(output, str):
        return output
    return to_json(output, fallback=repr).decode()


def _type_name(kind: Any) -> str:
    return getattr(kind, "__qualname__", None) or repr(kind)


def _referenced_agent(agent: AbstractAgent[Any, Any], tool_name: str) -> str | None:
    """The name of the one agent a function tool's code refers to, if there is one."""
    function = _tool_function(agent, tool_name)
    if not isinstance(function, FunctionType):
        return None
    code = function.__code__
    candidates: dict[int, tuple[str, AbstractAgent[Any, Any]]] = {}
    names = [(n, function.__globals__.get(n)) for n in code.co_names]
    cells = zip(code.co_freevars, function.__closure__ or (), strict=False)
    names += [(n, _cell_value(cell)) for n, cell in cells]
    for variable, value in names:
        if isinstance(value, AbstractAgent) and value is not agent:
            candidates.setdefault(id(value), (variable, value))
    if len(candidates) != 1:
        return None
    [(variable, found)] = candidates.values()
    return found.name or variable


def _tool_function(agent: AbstractAgent[Any, Any], tool_name: str) -> Any:
    for toolset in agent.toolsets:
        if isinstance(toolset, FunctionToolset) and tool_name in toolset.tools:
            return toolset.tools[tool_name].function
    return None


def _cell_value(cell: Any) -> Any:
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell
        return None


# -- models ----------------------------------------------------------------------------


def _switched_model(current: Model | str | None, model: str) -> Model | str:
    """What :meth:`PydanticAIAgent.with_model` runs the agent on (see there)."""
    if ":" in model:
        return infer_model(model)
    if isinstance(current, Model) and current.provider is not None:
        try:
            rebuild: Any = type(current)  # each model class takes (name, *, provider, settings)
            built: Model = rebuild(model, provider=current.provider, settings=current.settings)
        except TypeError as exc:
            raise InputError(
                f"--model {model!r}: cannot rebuild a {type(current).__name__} with another "
                f"model name ({exc}); name it as provider:model (openai:gpt-4o-mini)"
            ) from exc
        return built
    if isinstance(current, str) and ":" in current:
        return infer_model(f"{current.split(':', 1)[0]}:{model}")
    raise InputError(
        f"--model {model!r}: the agent's model ({current!r}) has no provider to keep; name "
        "the model as provider:model (openai:gpt-4o-mini)"
    )


def _limited(model: Model | str | None, limiter: RateLimiter | None) -> Model | str | None:
    """``model`` under the run's rate limits when the run's config limits it (its key is
    ``<provider>/<model name>`` as Pydantic AI names them: ``openai/gpt-4o-mini``)."""
    if limiter is None or not limiter.budgets or not isinstance(model, Model):
        return model
    key = f"{model.system}/{model.model_name}"
    if not limiter.budgets_for(key):
        return model
    return _RunLimitedModel(model, limiter, key)


class _RunLimitedModel(WrapperModel):
    """A model whose requests wait for the run's limits on ``key`` (requests per minute,
    requests in flight, shared Prefect limits), as the run's own model calls do."""

    def __init__(self, wrapped: Model, limiter: RateLimiter, key: str) -> None:
        super().__init__(wrapped)
        self._limiter = limiter
        self._key = key

    async def request(self, *args: Any, **kwargs: Any) -> ModelResponse:
        async with self._limiter.slot(self._key):
            return await self.wrapped.request(*args, **kwargs)

    @asynccontextmanager
    async def request_stream(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        async with (
            self._limiter.slot(self._key),
            self.wrapped.request_stream(*args, **kwargs) as stream,
        ):
            yield stream
