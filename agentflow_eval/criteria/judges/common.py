"""What the LLM-judge criteria share: their settings, asking many samples at once and
folding the replies back into the turns they were asked for, votes, and the views of a
trial they show the judge.

Every verdict an LLM judge gives records two things a person checking the judge needs
(:mod:`agentflow_eval.review`): ``content_key``, a hash of what the judge was shown (the
criterion, its threshold and the prompts, without the judge model or the sample), so a
person's label of that content is found again whichever judge or run judges it next; and
``samples_disagree``, whether the judge's samples of one prompt reached different
verdicts (a verdict worth a person's look first)."""

from __future__ import annotations

import asyncio
import hashlib
import json
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, BeforeValidator

from agentflow_eval.criteria.base import (
    CriterionContext,
    not_evaluated,
    scored,
    threshold_of,
)
from agentflow_eval.criteria.invocations import paired_turns
from agentflow_eval.criteria.judges.options import JudgeCriterionOptions
from agentflow_eval.criteria.judges.prompt import PromptTemplate, load_template
from agentflow_eval.criteria.judges.runtime import (
    JudgeError,
    JudgeOptions,
    JudgeReply,
    JudgeRequest,
    JudgeRuntime,
)
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.evalset import Invocation
from agentflow_eval.models.results import CriterionResult, RecordedToolCall, Turn, Usage

__all__ = [
    "CONTENT_KEY_SCHEMA",
    "NO_JUDGE_RUNTIME",
    "DetailRow",
    "JudgeAsks",
    "JudgeCriterion",
    "JudgeSetup",
    "Parser",
    "Scoring",
    "ScoringRule",
    "TurnView",
    "YesNo",
    "content_key",
    "majority",
    "plurality",
    "tool_calls_text",
    "turn_views",
]


def _yes_or_no(value: Any) -> Any:
    # judges answer true/false or "Yes " as often as "yes"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return value.strip().lower() if isinstance(value, str) else value


YesNo = Annotated[Literal["yes", "no"], BeforeValidator(_yes_or_no)]
"""A judge's yes-or-no verdict, read leniently."""

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
        options: JudgeCriterionOptions,
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


Parser = Callable[[str], Any]
"""Reads the text of a judge reply into a value; raises :class:`JudgeOutputError` when
the text is not what the prompt asked for."""

VerdictOf = Callable[[Any], Hashable]
"""What of a parsed reply is its verdict, for telling whether samples agree (by default
the reply without its reasoning, which samples word differently however they judge)."""

CONTENT_KEY_SCHEMA = "agentflow-judged-content/1"
"""Bumped when what :func:`content_key` hashes changes, so old labels stop matching."""


def content_key(criterion: str, threshold: float, prompts: Sequence[str], rows: Any) -> str:
    """The sha256 hex key of what a judge criterion judged in one trial: its name and
    threshold (a person's pass or fail means pass or fail at this threshold), every
    prompt it asked, and its rows before any vote (turns it decided without asking). The
    judge model, its options and the sample index are left out, unlike the judge
    cache's key (:func:`~agentflow_eval.criteria.judges.cache.judge_cache_key`): a
    person's label is about the content, whoever judges it."""
    material = {
        "schema": CONTENT_KEY_SCHEMA,
        "criterion": criterion,
        "threshold": threshold,
        "prompts": list(prompts),
        "rows": rows,
    }
    encoded = json.dumps(
        material, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
    )
    return hashlib.sha256(encoded.encode()).hexdigest()


def _without_reasoning(value: Any) -> Hashable:
    """A parsed reply as a hashable verdict: models and mappings without their
    ``reasoning``, recursively."""
    if isinstance(value, BaseModel):
        value = value.model_dump()
    if isinstance(value, dict):
        return tuple(
            sorted((str(k), _without_reasoning(v)) for k, v in value.items() if k != "reasoning")
        )
    if isinstance(value, list | tuple):
        return tuple(_without_reasoning(item) for item in value)
    return value if isinstance(value, Hashable) else repr(value)


DetailRow = dict[str, Any]
"""One turn's entry in a criterion's details: what was judged, the votes, the verdict."""

Answer = tuple[DetailRow, JudgeReply[Any]]
"""A judge reply and the row it was asked for."""


@dataclass(frozen=True)
class Scoring:
    """What a criterion makes of its rows once the votes are in: the score, why it falls
    short (``None`` when it does not), and details to report beside the rows."""

    score: float
    reason: str | None
    details: dict[str, Any] = field(default_factory=dict)


ScoringRule = Callable[[list[DetailRow], list[Answer]], Scoring]
"""Records each answer's votes in its row, then decides every row and the score."""


@dataclass
class JudgeCriterion(ABC):
    """An LLM-judge criterion: its config key and resolved judge settings. Subclasses say
    what they judge and how the votes become a score."""

    name: str
    setup: JudgeSetup

    SCORE_RANGE: ClassVar[tuple[float, float]] = (0.0, 1.0)
    """The scores it gives: [0, 1], or the scale ADK defines for it (its threshold is on
    the same scale)."""

    @property
    def threshold(self) -> float:
        return self.setup.threshold

    @property
    @abstractmethod
    def label(self) -> str: ...

    @abstractmethod
    async def evaluate(self, ctx: CriterionContext) -> CriterionResult: ...


class JudgeAsks:
    """The judge requests one evaluation gathers while it walks the turns, each asked on
    behalf of a row of the criterion's details; :meth:`run` asks them all together and
    turns the replies into the criterion's result."""

    def __init__(self, criterion: JudgeCriterion) -> None:
        self._criterion = criterion
        self._asks: list[tuple[DetailRow, JudgeRequest, Parser]] = []
        self._prompts: list[str] = []
        self._verdicts: dict[str, VerdictOf] = {}

    def add(
        self, row: DetailRow, prompt: str, parse: Parser, verdict: VerdictOf | None = None
    ) -> None:
        """Ask ``prompt`` once per sample for ``row``; ``parse`` reads each reply, and
        ``verdict`` says what of it the samples must share to agree."""
        self._prompts.append(prompt)
        self._verdicts[prompt] = verdict or _without_reasoning
        for request in self._criterion.setup.requests(self._criterion.name, prompt):
            self._asks.append((row, request, parse))

    async def run(
        self, runtime: JudgeRuntime | None, rows: list[DetailRow], scoring: ScoringRule
    ) -> CriterionResult:
        """Ask every request concurrently (the runtime's limiter bounds the calls) and
        score the criterion with ``scoring``; its details are the judge settings, the
        ``rows`` as "invocations", the scoring's details and the batch's counts. Not
        evaluated when there is no runtime to ask with, or when a sample failed. With
        nothing to ask, no runtime is needed."""
        criterion = self._criterion
        key = content_key(criterion.name, criterion.threshold, self._prompts, rows)
        if not self._asks:
            batch = JudgeBatch([], [], [], Usage(), 0.0)
        elif runtime is None:
            return not_evaluated(criterion, NO_JUDGE_RUNTIME, {"content_key": key})
        else:
            batch = await self._ask_all(runtime)
        details = {**criterion.setup.details(), "content_key": key, "invocations": rows}
        if criterion.SCORE_RANGE != (0.0, 1.0):
            details["score_range"] = list(criterion.SCORE_RANGE)
        if batch.failed:
            return not_evaluated(
                criterion,
                batch.failure_reason(),
                {**details, **batch.summary()},
                usage=batch.usage,
                latency_ms=batch.latency_ms,
            )
        disagree = self._samples_disagree(batch)
        outcome = scoring(rows, batch.answers())
        return scored(
            criterion,
            outcome.score,
            {**details, **outcome.details, **batch.summary(), "samples_disagree": disagree},
            reason=outcome.reason,
            usage=batch.usage,
            latency_ms=batch.latency_ms,
            score_range=criterion.SCORE_RANGE,
        )

    def _samples_disagree(self, batch: JudgeBatch) -> bool:
        """Whether the samples of some prompt reached different verdicts."""
        seen: dict[str, set[Hashable]] = {}
        for (_, request, _), reply in zip(self._asks, batch.replies, strict=True):
            if reply is not None:
                verdict = self._verdicts[request.prompt](reply.value)
                seen.setdefault(request.prompt, set()).add(verdict)
        return any(len(verdicts) > 1 for verdicts in seen.values())

    async def _ask_all(self, runtime: JudgeRuntime) -> JudgeBatch:
        """Ask every request concurrently and collect the replies and failures; never
        raises :class:`JudgeError`."""
        loop = asyncio.get_running_loop()
        started = loop.time()

        async def one(request: JudgeRequest, parse: Parser) -> JudgeReply[Any] | JudgeError:
            try:
                return await runtime.ask(request, parse)
            except JudgeError as exc:
                return exc

        outcomes = await asyncio.gather(*(one(request, parse) for _, request, parse in self._asks))
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
        rows = [row for row, _, _ in self._asks]
        return JudgeBatch(rows, replies, errors, usage, (loop.time() - started) * 1000)


@dataclass
class JudgeBatch:
    """The outcome of judge requests asked together: for each request in order, the row
    it was asked for and its reply (``None`` where it failed); the failures, and what the
    batch paid."""

    rows: list[DetailRow]
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

    def answers(self) -> list[Answer]:
        """Each reply with the row it was asked for, in request order (failed requests
        left out)."""
        pairs = zip(self.rows, self.replies, strict=True)
        return [(row, reply) for row, reply in pairs if reply is not None]

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
