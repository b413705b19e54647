"""``per_turn_user_simulator_quality_v1``: did the simulated user of a
``conversation_scenario`` case follow its scenario? (Google ADK's criterion of the same
name.) It checks the user simulator, not the agent: a low score says the trial's
conversation may not test what the scenario meant it to.

- The first user turn must be the scenario's starting prompt, word for word (checked
  without a judge).
- Every later user turn is shown to the judge with the conversation plan, the persona
  and the conversation before it: is it a valid next step of the plan? Each turn's
  verdict is the majority of ``num_samples`` samples (default 1; a tie is invalid).
- The end is judged the same way, as the stop signal (``stop_signal``, default
  ``</finished>``) sent after the whole conversation: was ending there right? If not,
  the last turn counts as invalid (ADK's rule).

The score is the fraction of user turns judged valid, in [0, 1] as ADK's (default
threshold 0.8). A case without a scenario is skipped: it has no simulated user.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, field_validator

from agentflow_eval.criteria.base import CriterionContext, not_evaluated, skipped
from agentflow_eval.criteria.judges.common import (
    Answer,
    DetailRow,
    JudgeAsks,
    JudgeCriterion,
    JudgeSetup,
    Scoring,
    majority,
)
from agentflow_eval.criteria.judges.conversation import dialogue_lines
from agentflow_eval.criteria.judges.options import JudgeCriterionOptions
from agentflow_eval.criteria.judges.runtime import parse_json_reply
from agentflow_eval.criteria.spec import criterion
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.results import CriterionResult, Turn

__all__ = [
    "DEFAULT_STOP_SIGNAL",
    "SimulatorQualityCriterion",
    "SimulatorQualityOptions",
    "SimulatorVerdict",
    "parse_simulator_verdict",
]

PROMPT_VARIABLES = frozenset(
    {"conversation_plan", "user_persona", "conversation", "user_message", "stop_signal"}
)
"""What the prompt template is rendered with (an override may use any of them)."""

DEFAULT_STOP_SIGNAL = "</finished>"
"""What the simulated user says to end a conversation (ADK's default, and ours)."""


class SimulatorVerdict(BaseModel):
    """What the judge answers for one sample."""

    reasoning: str = ""
    is_valid: bool

    @field_validator("is_valid", mode="before")
    @classmethod
    def _words(cls, value: Any) -> Any:
        if isinstance(value, str):
            word = value.strip().lower()
            if word in ("valid", "true", "yes"):
                return True
            if word in ("invalid", "false", "no", "almost", "partially_valid"):
                return False
        return value


def parse_simulator_verdict(content: str) -> SimulatorVerdict:
    return parse_json_reply(content, SimulatorVerdict)


@dataclass
class SimulatorQualityCriterion(JudgeCriterion):
    """Judges each simulated user turn against the case's conversation scenario."""

    stop_signal: str = DEFAULT_STOP_SIGNAL

    @property
    def label(self) -> str:
        return f"simulated user follows the scenario (LLM judge) >= {self.threshold:g}"

    async def evaluate(self, ctx: CriterionContext) -> CriterionResult:
        scenario = ctx.case.conversation_scenario
        if scenario is None:
            return skipped(
                self,
                f"case {ctx.case.eval_id!r} has no conversation_scenario: no simulated "
                "user to check",
            )
        turns = ctx.trial.turns
        if not turns:
            return not_evaluated(self, "the trial has no user turns to check")
        persona = "(none)" if scenario.user_persona is None else str(scenario.user_persona)
        first = turns[0].user_text.strip() == scenario.starting_prompt.strip()
        rows: list[DetailRow] = [
            {
                "invocation_id": turns[0].invocation_id,
                "user_text": turns[0].user_text,
                "valid": first,
                "votes": [],
                "reason": "the starting prompt, as written"
                if first
                else "not the scenario's starting prompt",
            }
        ]
        asks = JudgeAsks(self)
        plan = scenario.conversation_plan
        for index, turn in enumerate(turns[1:], start=1):
            row: DetailRow = {
                "invocation_id": turn.invocation_id,
                "user_text": turn.user_text,
                "votes": [],
            }
            rows.append(row)
            prompt = self._prompt(plan, persona, turns[:index], turn.user_text)
            asks.add(row, prompt, parse_simulator_verdict)
        ending: DetailRow = {"invocation_id": "end", "user_text": self.stop_signal, "votes": []}
        prompt = self._prompt(plan, persona, turns, self.stop_signal)
        asks.add(ending, prompt, parse_simulator_verdict)
        return await asks.run(ctx.judge, [*rows, ending], _score_turns)

    def _prompt(self, plan: str, persona: str, before: Sequence[Turn], message: str) -> str:
        return self.setup.template.render(
            conversation_plan=plan,
            user_persona=persona,
            conversation=dialogue_lines(before),
            user_message=message,
            stop_signal=self.stop_signal,
        )


def _score_turns(rows: list[DetailRow], answers: list[Answer]) -> Scoring:
    """Each judged turn valid by the majority of its votes; an ending judged wrong makes
    the last turn invalid; the score is the fraction of user turns valid."""
    for row, reply in answers:
        verdict: SimulatorVerdict = reply.value
        row["votes"].append(
            {"is_valid": verdict.is_valid, "reasoning": verdict.reasoning, "cached": reply.cached}
        )
    *turns, ending = rows
    for row in [*turns, ending]:
        if "valid" not in row:
            votes = [vote["is_valid"] for vote in row["votes"]]
            row["valid"] = majority(votes)
            row["reason"] = f"{sum(votes)} valid / {len(votes) - sum(votes)} invalid votes"
    if not ending["valid"]:
        turns[-1]["valid"] = False
        turns[-1]["reason"] = "the conversation ended where the scenario says it should not"
    valid = sum(1 for row in turns if row["valid"])
    invalid = [row["invocation_id"] for row in turns if not row["valid"]]
    details = {"ending_valid": ending["valid"]}
    reason = f"turns off the scenario: {', '.join(invalid)}" if invalid else None
    return Scoring(valid / len(turns), reason, details)


class SimulatorQualityOptions(JudgeCriterionOptions):
    """Options of per_turn_user_simulator_quality_v1."""

    stop_signal: str = DEFAULT_STOP_SIGNAL
    """What the simulated user says to end the conversation (ADK's option)."""


@criterion("per_turn_user_simulator_quality_v1", SimulatorQualityOptions)
def build_simulator_quality(
    name: str, options: SimulatorQualityOptions, config: EvalConfig
) -> SimulatorQualityCriterion:
    """An LLM judge of the simulated user: does each of its turns follow the case's
    conversation scenario? (threshold 0.8, 1 sample)."""
    setup = JudgeSetup.resolve(
        options,
        config,
        template="per_turn_user_simulator_quality_v1",
        variables=PROMPT_VARIABLES,
        default_threshold=0.8,
        default_samples=1,
    )
    return SimulatorQualityCriterion(name=name, setup=setup, stop_signal=options.stop_signal)
