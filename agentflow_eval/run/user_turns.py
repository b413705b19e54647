"""Where a trial's user turns come from: the case's scripted conversation, or, for a
``conversation_scenario`` case, a simulated user — an LLM that opens with the scenario's
starting prompt and follows its conversation plan until the plan is done or
``max_allowed_invocations`` turns have been taken."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from agentflow_eval.llm.client import ModelClient
from agentflow_eval.models.config import EvalConfig, UserSimulatorConfig
from agentflow_eval.models.evalset import ConversationScenario, EvalCase, Message
from agentflow_eval.models.results import Turn

__all__ = [
    "FINISHED",
    "ScenarioNotRunnable",
    "ScriptedTurns",
    "SimulatedUser",
    "TurnSourceFor",
    "UserTurnSource",
    "turn_sources",
]

FINISHED = "</finished>"
"""What the simulated user says when the conversation plan is complete."""


class UserTurnSource(Protocol):
    """Gives a trial its user turns, one at a time."""

    async def next_turn(self, transcript: list[Turn]) -> tuple[str, Message] | None:
        """The next (invocation id, user message), or None when the conversation is over;
        ``transcript`` is what the agent did with the turns so far."""
        ...


TurnSourceFor = Callable[[EvalCase, ModelClient], UserTurnSource]
"""A fresh turn source for each trial of a case."""


class ScriptedTurns:
    """The case's fixed conversation, turn by turn."""

    def __init__(self, case: EvalCase) -> None:
        self._turns = list(case.conversation)
        self._index = 0

    async def next_turn(self, transcript: list[Turn]) -> tuple[str, Message] | None:
        if self._index >= len(self._turns):
            return None
        invocation = self._turns[self._index]
        self._index += 1
        return invocation.invocation_id, invocation.user_content


_INSTRUCTIONS = """You are role-playing a USER talking to an AI assistant, to test it.
Follow this conversation plan, one message at a time:

<plan>
{plan}
</plan>
{persona}
Write only the user's next message: short, natural, in the user's voice. Do not answer
for the assistant. When every step of the plan is done (or the assistant clearly cannot
help), reply with exactly {finished} and nothing else."""


class ScenarioNotRunnable(RuntimeError):
    pass


class SimulatedUser:
    """A user turn source backed by an LLM (any LiteLLM model), called through the run's
    model client."""

    def __init__(
        self,
        case: EvalCase,
        scenario: ConversationScenario,
        settings: UserSimulatorConfig,
        models: ModelClient,
    ) -> None:
        self._case = case
        self._scenario = scenario
        self._settings = settings
        self._models = models
        extra = settings.model_extra or {}
        self._kwargs: dict[str, Any] = {
            key: extra[key] for key in ("api_base", "api_key", "temperature") if key in extra
        }

    async def next_turn(self, transcript: list[Turn]) -> tuple[str, Message] | None:
        index = len(transcript)
        limit = self._settings.max_allowed_invocations
        if limit is not None and index >= limit:
            return None
        if index == 0:
            text = self._scenario.starting_prompt
        else:
            text = await self._ask(transcript)
            if text.strip() == FINISHED or not text.strip():
                return None
        return f"{self._case.eval_id}-sim-{index + 1}", Message.of(text)

    async def _ask(self, transcript: list[Turn]) -> str:
        persona = self._scenario.user_persona
        system = _INSTRUCTIONS.format(
            plan=self._scenario.conversation_plan,
            persona=f"\nYour persona: {persona}\n" if persona else "",
            finished=FINISHED,
        )
        # Roles are mirrored: the simulator speaks as "assistant", the agent as "user".
        messages: list[dict[str, str]] = [{"role": "system", "content": system}]
        for turn in transcript:
            messages.append({"role": "assistant", "content": turn.user_text})
            messages.append({"role": "user", "content": turn.final_response or "(no answer)"})
        response = await self._models.complete(
            model=self._settings.model, messages=messages, num_retries=0, **self._kwargs
        )
        return str(response.choices[0].message.content or "")


class _Unrunnable:
    def __init__(self, case: EvalCase) -> None:
        self._case = case

    async def next_turn(self, transcript: list[Turn]) -> tuple[str, Message] | None:
        raise ScenarioNotRunnable(
            f"case {self._case.eval_id!r} has a conversation_scenario: set "
            "user_simulator_config (model, max_allowed_invocations) in the config to run it"
        )


def turn_sources(config: EvalConfig) -> TurnSourceFor:
    """Scripted conversations replay their turns; scenarios get a simulated user that
    calls its model through the trial's ``models``."""

    def source_for(case: EvalCase, models: ModelClient) -> UserTurnSource:
        if case.conversation_scenario is None:
            return ScriptedTurns(case)
        if config.user_simulator_config is None:
            return _Unrunnable(case)
        return SimulatedUser(case, case.conversation_scenario, config.user_simulator_config, models)

    return source_for
