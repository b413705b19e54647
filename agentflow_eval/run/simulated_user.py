"""The simulated user: for ``conversation_scenario`` cases an LLM plays the user, opening
with the scenario's starting prompt and following its conversation plan until the plan is
done or ``max_allowed_invocations`` turns have been taken."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentflow_eval.models.config import EvalConfig, UserSimulatorConfig
from agentflow_eval.models.evalset import ConversationScenario, EvalCase, Message
from agentflow_eval.models.results import Turn
from agentflow_eval.run.trial import UserTurnSource

__all__ = ["FINISHED", "SimulatedUser", "turn_source_factory"]

FINISHED = "</finished>"
"""What the simulated user says when the conversation plan is complete."""

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


class SimulatedUser(UserTurnSource):
    """A user turn source backed by an LLM (any LiteLLM model)."""

    def __init__(
        self,
        case: EvalCase,
        scenario: ConversationScenario,
        settings: UserSimulatorConfig,
        completion_kwargs: dict[str, Any] | None = None,
    ) -> None:
        self._case = case
        self._scenario = scenario
        self._settings = settings
        self._kwargs = dict(completion_kwargs or {})
        extra = settings.model_extra or {}
        for key in ("api_base", "api_key", "temperature"):
            if key in extra:
                self._kwargs.setdefault(key, extra[key])

    async def next_turn(self, transcript: list[Turn]) -> tuple[str, Message] | None:
        index = len(transcript)
        if index >= self._settings.max_allowed_invocations:
            return None
        if index == 0:
            text = self._scenario.starting_prompt
        else:
            text = await self._ask(transcript)
            if text.strip() == FINISHED or not text.strip():
                return None
        return f"{self._case.eval_id}-sim-{index + 1}", Message.of(text)

    async def _ask(self, transcript: list[Turn]) -> str:
        from agentflow_eval.llm.client import acompletion

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
        response = await acompletion(
            model=self._settings.model, messages=messages, num_retries=0, **self._kwargs
        )
        return str(response.choices[0].message.content or "")


class _Unrunnable(UserTurnSource):
    def __init__(self, case: EvalCase) -> None:
        self._case = case

    async def next_turn(self, transcript: list[Turn]) -> tuple[str, Message] | None:
        raise ScenarioNotRunnable(
            f"case {self._case.eval_id!r} has a conversation_scenario: set "
            "user_simulator_config (model, max_allowed_invocations) in the config to run it"
        )


def turn_source_factory(config: EvalConfig) -> Callable[[EvalCase], UserTurnSource]:
    """Fixed conversations replay their turns; scenarios get a simulated user."""

    def source_for(case: EvalCase) -> UserTurnSource:
        if case.conversation_scenario is None:
            return UserTurnSource(case)
        if config.user_simulator_config is None:
            return _Unrunnable(case)
        return SimulatedUser(case, case.conversation_scenario, config.user_simulator_config)

    return source_for
