"""Agents built with the OpenAI Agents SDK (``openai-agents``, package ``agents``), evaluated
as they are: the SDK's ``Agent`` (its instructions, tools, handoffs, guardrails and model)
runs unchanged, one ``Runner.run`` per user turn, and the SDK's own run data becomes the
turn's trajectory (:mod:`.trajectory`).

- **One conversation per trial.** A session starts empty; each turn runs the agent that
  answered the previous turn (``result.last_agent``, so a conversation handed off to a
  specialist stays with it) on the previous turn's ``result.to_input_list()`` plus the new
  user message, as the SDK documents for multi-turn runs. The conversation lives in the
  session object alone, so no two trials share anything; the SDK's ``Session`` stores are
  not used (one of them shared by mistake would leak turns between trials).
- **State.** The run context (``Runner.run(context=...)``, what tools read and write as
  ``ctx.context``) is a deep copy of the case's ``session_input.state``: a dict, the same
  object for every turn of the trial. Its final value is the session's ``state``
  (``final_session_state_match`` compares it). An agent whose tools expect another kind of
  context gets it from ``context_factory``; its ``state`` is then that object as a dict.
- **Who and where.** The SDK has no app or user: ``session_input``'s ``app_name`` and
  ``user_id`` go into the run's trace metadata (with the case and trial), ``app_name``
  names the trace's workflow, and the trace's group id is the trial's conversation id,
  unique across runs. They matter only where the SDK's tracing is on.
- **Failures propagate.** The SDK's exceptions leave ``respond`` as they are (a rate
  limit that outlasted the OpenAI client's ``max_retries`` is an ``openai.RateLimitError``,
  which the trial records as an infrastructure error), after the events of the unfinished
  turn are recorded; ``MaxTurnsExceeded`` becomes :class:`MaxStepsExceeded` (the trial's
  ``max_steps`` error). A cancelled turn (the trial's timeout) cancels ``Runner.run``,
  which cancels its model request and tool tasks.
- **The run's rate limits.** Each model call holds a slot of the run's limiter
  (``rate_limits`` in the config), matched as LiteLLM spells the model: ``openai/<name>``
  for models called through an OpenAI client, whatever its base URL.
- **``--model``** (:meth:`OpenAIAgentsAgent.with_model`): the run config's ``model``,
  which the SDK applies to every agent of the run; over the agent's own OpenAI client when
  it has one, so the new model is called at the same base URL with the same key.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import uuid
from collections.abc import Callable
from typing import Any

# The OpenAI client imports its resources (~2 s) on its first request, which would stall
# the run's event loop, and every trial on it, mid-run: they are imported with the adapter.
import openai.resources  # noqa: F401
from agents import Agent, MaxTurnsExceeded, MessageOutputItem, RunConfig, Runner, RunResult
from agents.run_config import DEFAULT_MAX_TURNS
from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from agentflow_eval.agents.base import (
    AgentSession,
    AgentUnderTest,
    MaxStepsExceeded,
    SessionContext,
    TrajectoryRecorder,
)
from agentflow_eval.agents.frameworks.openai_agents.mcp_tools import with_mcp_tools
from agentflow_eval.agents.frameworks.openai_agents.models import ModelBook, switched
from agentflow_eval.agents.frameworks.openai_agents.tool_mocks import TrialMocks
from agentflow_eval.agents.frameworks.openai_agents.trajectory import (
    RunObserver,
    record_result,
    record_unfinished,
    unfinished_reason,
)
from agentflow_eval.models.evalset import Message

__all__ = ["ApprovalRequired", "ContextFactory", "OpenAIAgentsAgent", "OpenAIAgentsSession", "wrap"]

ContextFactory = Callable[[SessionContext], Any]
"""Builds a trial's run context (what tools see as ``ctx.context``) from its session."""

_DEFAULT_WORKFLOW = next(
    f.default for f in dataclasses.fields(RunConfig) if f.name == "workflow_name"
)


class ApprovalRequired(RuntimeError):
    """A run paused for a human to approve a tool call (the SDK's ``interruptions``)."""


def wrap(obj: Any, *, name: str) -> AgentUnderTest:
    """An SDK ``Agent`` as an agent under test, named by its own ``name`` (``name``, the
    attribute the spec named, when it has none). Anything else from the ``agents``
    package is refused with ``TypeError``."""
    if not isinstance(obj, Agent):
        raise TypeError(
            f"expected an agents.Agent, got {type(obj).__module__}.{type(obj).__name__}"
        )
    return OpenAIAgentsAgent(obj, name=obj.name or name)


class OpenAIAgentsAgent:
    """An SDK ``Agent`` under evaluation (see the module's description).

    ``run_config`` and ``max_turns`` are passed to every ``Runner.run``;
    ``context_factory`` builds each trial's run context from its :class:`SessionContext`
    (default: a deep copy of ``session_input.state``). Build one yourself and name it in
    the agent spec to set these; a spec naming the SDK ``Agent`` gets the defaults."""

    tool_mocks_supported = True
    history_supported = True
    mcp_supported = True
    """The run's MCP tools are added to the starting agent's own (:mod:`.mcp_tools`)."""

    def __init__(
        self,
        agent: Agent[Any],
        *,
        name: str | None = None,
        run_config: RunConfig | None = None,
        max_turns: int = DEFAULT_MAX_TURNS,
        context_factory: ContextFactory | None = None,
    ) -> None:
        if not isinstance(agent, Agent):
            raise TypeError(f"expected an agents.Agent, got {type(agent).__name__}")
        if max_turns < 1:
            raise ValueError(f"max_turns must be at least 1, got {max_turns}")
        self._agent = agent
        self._name = name or agent.name
        self._run_config = run_config if run_config is not None else RunConfig()
        self._max_turns = max_turns
        self._context_factory = context_factory
        self._models = ModelBook(self._run_config)  # shared: the trials' agents are the same

    @property
    def name(self) -> str:
        return self._name

    @property
    def agent(self) -> Agent[Any]:
        """The SDK agent each conversation starts with."""
        return self._agent

    @property
    def run_config(self) -> RunConfig:
        return self._run_config

    def with_model(self, model: str) -> OpenAIAgentsAgent:
        """This agent with every agent of its runs calling ``model`` (the run config's
        ``model``; over the starting agent's own OpenAI client when it has one)."""
        return OpenAIAgentsAgent(
            self._agent,
            name=self._name,
            run_config=switched(self._agent, self._run_config, model),
            max_turns=self._max_turns,
            context_factory=self._context_factory,
        )

    async def start_session(self, context: SessionContext) -> AgentSession:
        if self._context_factory is not None:
            run_context = self._context_factory(context)
        else:
            run_context = copy.deepcopy(dict(context.session_input.state))
        return OpenAIAgentsSession(
            agent=with_mcp_tools(self._agent, context.mcp_tools),
            context=context,
            run_context=run_context,
            run_config=self._run_config,
            models=self._models,
            max_turns=self._max_turns,
        )


class OpenAIAgentsSession:
    """One trial's conversation: the agent whose turn it is, the conversation so far (the
    SDK's input items) and the run context."""

    def __init__(
        self,
        *,
        agent: Agent[Any],
        context: SessionContext,
        run_context: Any,
        run_config: RunConfig,
        models: ModelBook,
        max_turns: int,
    ) -> None:
        self.conversation_id = f"{context.session_id}~{uuid.uuid4().hex[:12]}"
        """The trace group of this conversation: the trial's, unique across runs."""
        self.run_context = run_context
        self.current_agent = agent
        """The agent the next turn goes to: the one that answered the last."""
        self._last: RunResult | None = None
        self._history: list[Any] = _input_items(context.history)
        self._run_config = _for_trial(run_config, context, self.conversation_id)
        self._models = models
        self._limiter = context.models.rate_limiter
        self._max_turns = max_turns
        self._mocks = TrialMocks()

    @property
    def history(self) -> list[Any]:
        """The conversation so far, as the SDK's input items (made from the last turn's
        result when asked for: a trial's last turn never needs them)."""
        if self._last is not None:
            self._history, self._last = self._last.to_input_list(), None
        return self._history

    @property
    def state(self) -> dict[str, Any]:
        """The run context as a dict: what ``final_session_state_match`` compares."""
        return _state_of(self.run_context)

    async def respond(self, message: Message, recorder: TrajectoryRecorder) -> str:
        observer = RunObserver(recorder, self._models, self._limiter)
        if recorder.tools.active:  # this turn has tool mocks: run the gated copies
            self.current_agent = self._mocks.copy_of(self.current_agent)
        self._mocks.gate, observer.served = recorder.tools, self._mocks.served
        turn_input = [*self.history, {"role": "user", "content": message.text}]
        try:
            result = await Runner.run(
                self.current_agent,
                turn_input,
                context=self.run_context,
                hooks=observer,
                run_config=self._run_config,
                max_turns=self._max_turns,
            )
        except BaseException as exc:
            _record_quietly(recorder, observer, exc)
            if isinstance(exc, MaxTurnsExceeded):
                raise MaxStepsExceeded(self._max_turns) from exc
            raise
        finally:
            await observer.release()
        items = list(result.new_items)
        last = items[-1] if items else None
        pending = list(getattr(result, "interruptions", None) or [])
        record_result(
            recorder,
            observer,
            items,
            list(result.raw_responses),
            final_message=last if isinstance(last, MessageOutputItem) else None,
            last_agent=result.last_agent,
            awaiting_approval=frozenset(
                call_id
                for p in pending
                if isinstance(call_id := getattr(p.raw_item, "call_id", None), str)
            ),
        )
        if pending:  # a human-in-the-loop pause: no one in an evaluation can approve it
            names = ", ".join(str(getattr(p, "tool_name", None) or "a tool") for p in pending)
            raise ApprovalRequired(
                f"the run stopped for approval of {names}; the evaluation cannot approve "
                "tool calls (give the agent's tools needs_approval=False to evaluate it)"
            )
        self._last = result
        self.current_agent = result.last_agent
        return _answer(result.final_output)

    async def aclose(self) -> None:
        return None  # nothing held open: the agent's client belongs to the agent


def _input_items(history: tuple[dict[str, Any], ...]) -> list[Any]:
    """A seeded history (OpenAI chat wire format) as the SDK's input items: messages, an
    assistant's tool calls as ``function_call`` items, tool messages as their outputs."""
    items: list[Any] = []
    for message in history:
        role, content = message["role"], message.get("content")
        if role == "tool":
            call_id = message.get("tool_call_id") or ""
            items.append({"type": "function_call_output", "call_id": call_id, "output": content})
            continue
        if content:
            items.append({"role": role, "content": content})
        for call in message.get("tool_calls") or () if role == "assistant" else ():
            function = call["function"]
            items.append(
                {
                    "type": "function_call",
                    "call_id": call["id"],
                    "name": function["name"],
                    "arguments": function["arguments"],
                }
            )
    return items


def _record_quietly(
    recorder: TrajectoryRecorder, observer: RunObserver, exc: BaseException
) -> None:
    """Record what an unfinished turn did; a failure to do so must not hide ``exc``."""
    try:
        record_unfinished(recorder, observer, unfinished_reason(exc))
    except Exception:  # the agent's own failure is the news; its partial record is not
        return


def _for_trial(run_config: RunConfig, context: SessionContext, conversation_id: str) -> RunConfig:
    """``run_config`` with the trial's identity in its tracing fields."""
    given = context.session_input
    metadata: dict[str, Any] = dict(run_config.trace_metadata or {})
    metadata.update(agentflow_case=context.case_id, agentflow_trial=str(context.trial_index))
    if given.app_name:
        metadata["app_name"] = given.app_name
    if given.user_id:
        metadata["user_id"] = given.user_id
    workflow = run_config.workflow_name
    if given.app_name and workflow == _DEFAULT_WORKFLOW:
        workflow = given.app_name
    return dataclasses.replace(
        run_config, group_id=conversation_id, trace_metadata=metadata, workflow_name=workflow
    )


def _state_of(run_context: Any) -> dict[str, Any]:
    if isinstance(run_context, dict):
        return run_context
    if run_context is None:
        return {}
    if isinstance(run_context, BaseModel):
        return run_context.model_dump(mode="json")
    if dataclasses.is_dataclass(run_context) and not isinstance(run_context, type):
        return dataclasses.asdict(run_context)
    attributes = getattr(run_context, "__dict__", None)
    if isinstance(attributes, dict):
        return dict(attributes)
    return {"context": repr(run_context)}


def _answer(output: Any) -> str:
    """The turn's final output as text: a structured output (``output_type``) as JSON."""
    if isinstance(output, str):
        return output
    if output is None:
        return ""
    if isinstance(output, BaseModel):
        return output.model_dump_json()
    return json.dumps(to_jsonable_python(output, fallback=str), ensure_ascii=False)
