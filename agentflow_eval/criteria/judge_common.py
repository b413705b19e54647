"""What the LLM-judge criteria share: their settings, asking many samples at once, votes,
and the views of a trial they show the judge."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from agentflow_eval.config import CriterionConfig, EvalConfig
from agentflow_eval.criteria.base import Criterion, CriterionContext, not_evaluated, threshold_of
from agentflow_eval.criteria.invocations import paired_turns
from agentflow_eval.evalset import Invocation
from agentflow_eval.judge import JudgeError, JudgeOptions, JudgeReply, JudgeRequest, JudgeRuntime
from agentflow_eval.judge_prompt import PromptTemplate, load_template
from agentflow_eval.results import CriterionResult, RecordedToolCall, Turn, Usage

__all__ = [
    "NO_JUDGE_RUNTIME",
    "JudgeBatch",
    "JudgeSetup",
    "TurnView",
    "ask_all",
    "majority",
    "plurality",
    "tool_calls_text",
    "turn_views",
]

T = TypeVar("T")

NO_JUDGE_RUNTIME = (
    "no judge runtime: this LLM-judge criterion needs CriterionContext(judge=JudgeRuntime(...)) "
    "from the run's judge stage"
)


@dataclass(frozen=True)
class JudgeSetup:
    """A judge criterion's resolved settings: threshold, judge options, prompt template
    and number of samples per prompt."""

    threshold: float
    options: JudgeOptions
    template: PromptTemplate
    num_samples: int

    @classmethod
    def resolve(
        cls,
        options: CriterionConfig,
        config: EvalConfig,
        *,
        template: str,
        variables: frozenset[str],
        default_threshold: float,
        default_samples: int,
    ) -> JudgeSetup:
        """Settings from the criterion's config entry and the run's judge settings.
        ``template`` names the built-in prompt, ``variables`` what the criterion renders
        it with (an override using anything else is rejected here)."""
        prompt = load_template(template, options.prompt_template)
        prompt.check_variables(variables)
        return cls(
            threshold=threshold_of(options, default_threshold),
            options=JudgeOptions.resolve(options, config.judge),
            template=prompt,
            num_samples=options.num_samples or default_samples,
        )

    def requests(self, criterion: str, prompt: str) -> list[JudgeRequest]:
        """One request per sample of ``prompt``."""
        return [
            JudgeRequest(criterion, self.template, prompt, self.options, index)
            for index in range(self.num_samples)
        ]

    def details(self) -> dict[str, Any]:
        return {
            "judge_model": self.options.model,
            "prompt_template": self.template.identity,
            "num_samples": self.num_samples,
        }


@dataclass
class JudgeBatch:
    """The outcome of judge requests asked together: replies in request order (``None``
    where one failed), the failures, and what the batch paid."""

    replies: list[JudgeReply[Any] | None]
    errors: list[JudgeError]
    usage: Usage
    latency_ms: float

    @property
    def failed(self) -> bool:
        return bool(self.errors)

    @property
    def cached(self) -> int:
        return sum(1 for reply in self.replies if reply is not None and reply.cached)

    def failure_reason(self) -> str:
        first = self.errors[0].reason
        more = len(self.errors) - 1
        return f"judge failed: {first}" + (f" (and {more} more failed samples)" if more else "")

    def summary(self) -> dict[str, Any]:
        return {
            "judge_requests": len(self.replies),
            "judge_calls": self.usage.calls,
            "cached_samples": self.cached,
            "failed_samples": len(self.errors),
        }

    def not_evaluated(
        self, criterion: Criterion, details: dict[str, Any] | None = None
    ) -> CriterionResult:
        """The criterion's "not evaluated" result for a batch with failures."""
        return not_evaluated(
            criterion,
            self.failure_reason(),
            {**(details or {}), **self.summary()},
            usage=self.usage,
            latency_ms=self.latency_ms,
        )


async def ask_all(
    runtime: JudgeRuntime | None, asks: Sequence[tuple[JudgeRequest, Callable[[str], Any]]]
) -> JudgeBatch:
    """Ask every request concurrently (the runtime's limiter bounds the calls) and
    collect the replies and failures; never raises :class:`JudgeError`. With nothing to
    ask, no runtime is needed."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    if not asks:
        return JudgeBatch([], [], Usage(), 0.0)
    if runtime is None:
        raise ValueError(NO_JUDGE_RUNTIME)

    async def one(
        request: JudgeRequest, parse: Callable[[str], Any]
    ) -> JudgeReply[Any] | JudgeError:
        try:
            return await runtime.ask(request, parse)
        except JudgeError as exc:
            return exc

    outcomes = await asyncio.gather(*(one(request, parse) for request, parse in asks))
    usage = Usage()
    replies: list[JudgeReply[Any] | None] = []
    errors: list[JudgeError] = []
    for outcome in outcomes:
        usage.add(outcome.usage)
        if isinstance(outcome, JudgeError):
            errors.append(outcome)
            replies.append(None)
        else:
            replies.append(outcome)
    return JudgeBatch(replies, errors, usage, (loop.time() - started) * 1000)


def majority(votes: Sequence[bool]) -> bool:
    """True when more votes are True than False. A tie (or no votes) is False: a judge
    that cannot make up its mind does not pass the answer."""
    yes = sum(1 for vote in votes if vote)
    return yes > len(votes) - yes


def plurality(labels: Sequence[str], worst_first: Sequence[str]) -> str:
    """The most common label; a tie goes to the label earliest in ``worst_first`` (the
    least favourable), for the same reason as :func:`majority`."""
    if not labels:
        raise ValueError("plurality of no labels")
    counts = Counter(labels)
    top = max(counts.values())
    tied = [label for label, count in counts.items() if count == top]
    return min(tied, key=lambda label: worst_first.index(label) if label in worst_first else -1)


@dataclass(frozen=True)
class TurnView:
    """One user turn as the judges see it: the expected invocation (when the case has
    one) and the turn the agent played (``None`` when the trial never reached it)."""

    index: int
    invocation_id: str
    user_text: str
    invocation: Invocation | None
    turn: Turn | None

    @property
    def final_response(self) -> str | None:
        return self.turn.final_response if self.turn is not None else None


def turn_views(ctx: CriterionContext) -> list[TurnView]:
    """The case's invocations paired with the trial's turns; for a simulated-user case
    (no scripted invocations), the turns the trial recorded."""
    if ctx.case.conversation:
        return [
            TurnView(
                index=index,
                invocation_id=invocation.invocation_id,
                user_text=invocation.user_content.text,
                invocation=invocation,
                turn=turn,
            )
            for index, (invocation, turn) in enumerate(paired_turns(ctx.case, ctx.trial))
        ]
    return [
        TurnView(
            index=index,
            invocation_id=turn.invocation_id,
            user_text=turn.user_text,
            invocation=None,
            turn=turn,
        )
        for index, turn in enumerate(ctx.trial.turns)
    ]


def tool_calls_text(calls: Sequence[RecordedToolCall]) -> str:
    """Tool calls one JSON object a line (name, args, result or error), or a note that
    there were none."""
    if not calls:
        return "(no tool calls)"
    lines = []
    for call in calls:
        row: dict[str, Any] = {"tool": call.name, "args": call.args}
        if call.error is not None:
            row["error"] = call.error
        else:
            row["result"] = call.result
        lines.append(json.dumps(row, ensure_ascii=False, default=str, sort_keys=True))
    return "\n".join(lines)
