"""Builders for the judge tests: settings pointing the judge at a scripted server, cases,
trials, a criterion judging one trial, canned judge replies, and a handler that measures
concurrency."""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from agentflow_eval.criteria.base import CriterionContext
from agentflow_eval.criteria.judges.cache import JudgeCache
from agentflow_eval.criteria.judges.prompt import FENCE_PATTERN
from agentflow_eval.criteria.judges.runtime import JudgeRuntime
from agentflow_eval.criteria.registry import build_criterion
from agentflow_eval.models.config import CriterionConfig, EvalConfig, JudgeSettings
from agentflow_eval.models.evalset import EvalCase, Invocation, Message, Rubric
from agentflow_eval.models.results import CriterionResult, RecordedToolCall, Trial, Turn
from agentflow_eval.testing import Reply, ScriptedOpenAIServer

KEY_ENV = "AGENTFLOW_TEST_JUDGE_KEY"
MODEL = "openai/judge"


def judge_settings(server: ScriptedOpenAIServer, **overrides: Any) -> JudgeSettings:
    """Settings for a judge served by ``server``: fast backoff, a short timeout."""
    values: dict[str, Any] = {
        "model": MODEL,
        "api_base": server.url,
        "api_key_env": KEY_ENV,
        "max_retries": 3,
        "timeout_s": 5.0,
        "retry_base_delay_s": 0.01,
        "retry_max_delay_s": 2.0,
    }
    values.update(overrides)
    return JudgeSettings(**values)


def runtime(
    server: ScriptedOpenAIServer, store: JudgeCache | None = None, **overrides: Any
) -> JudgeRuntime:
    """A judge runtime on ``server`` with the cache ``store`` and settings overrides."""
    return JudgeRuntime(judge_settings(server, **overrides), cache=store)


def eval_config(server: ScriptedOpenAIServer, **judge_overrides: Any) -> EvalConfig:
    return EvalConfig(judge=judge_settings(server, **judge_overrides))


def build(name: str, config: EvalConfig, **options: Any) -> Any:
    """The registered criterion ``name`` with these config options."""
    return build_criterion(name, CriterionConfig(**options), config)


def invocation(
    question: str, reference: str | None = None, rubrics: list[Rubric] | None = None
) -> Invocation:
    return Invocation(
        user_content=Message.of(question),
        expected_final_response=Message.of(reference, role="model") if reference else None,
        rubrics=rubrics or [],
    )


def case(*invocations: Invocation, **fields: Any) -> EvalCase:
    return EvalCase(eval_id=fields.pop("eval_id", "case"), conversation=list(invocations), **fields)


def turn(
    answer: str | None, calls: list[RecordedToolCall] | None = None, question: str = "question"
) -> Turn:
    return Turn(
        invocation_id="inv", user_text=question, tool_calls=calls or [], final_response=answer
    )


def trial(*turns: Turn, index: int = 0) -> Trial:
    return Trial(
        case_id="case",
        trial_index=index,
        turns=list(turns),
        started_at=datetime(2026, 1, 1, tzinfo=UTC),
    )


def context(
    eval_case: EvalCase, a_trial: Trial, config: EvalConfig, judge: JudgeRuntime | None
) -> CriterionContext:
    return CriterionContext(case=eval_case, trial=a_trial, config=config, judge=judge)


async def judge_trial(
    server: ScriptedOpenAIServer,
    criterion: str,
    eval_case: EvalCase,
    a_trial: Trial,
    *,
    judge: JudgeRuntime | None = None,
    **options: Any,
) -> CriterionResult:
    """The result of the registered criterion ``criterion`` (built with config
    ``options``) on ``a_trial`` of ``eval_case``, asking ``judge`` or, by default, a new
    runtime on ``server``."""
    config = eval_config(server)
    built = build(criterion, config, **options)
    return await built.evaluate(context(eval_case, a_trial, config, judge or runtime(server)))


def verdict(value: str, reasoning: str = "because") -> Reply:
    """A final_response_match judge reply."""
    return Reply.text(json.dumps({"reasoning": reasoning, "verdict": value}))


def prompt_of(request: dict[str, Any]) -> str:
    """The user prompt of a chat-completions request body."""
    return str(request["messages"][-1]["content"])


def fenced(prompt: str, label: str) -> str:
    """The body of the fenced block ``label`` in ``prompt``."""
    for match in FENCE_PATTERN.finditer(prompt):
        if match.group("label") == label:
            return match.group("body")
    raise AssertionError(f"no fenced {label} block in prompt:\n{prompt}")


class ConcurrencyProbe:
    """A server handler that holds each request ``hold_s`` and records the most
    requests it ever had in flight at once."""

    def __init__(self, reply: Callable[[dict[str, Any]], Reply], hold_s: float = 0.05) -> None:
        self._reply = reply
        self._hold_s = hold_s
        self._lock = threading.Lock()
        self._now = 0
        self.max_in_flight = 0

    def __call__(self, request: dict[str, Any]) -> Reply:
        with self._lock:
            self._now += 1
            self.max_in_flight = max(self.max_in_flight, self._now)
        try:
            time.sleep(self._hold_s)
            return self._reply(request)
        finally:
            with self._lock:
                self._now -= 1


class TimedScript:
    """A server handler that answers with ``replies`` in order (then ``then``, if given)
    and records when each request arrived."""

    def __init__(self, *replies: Reply, then: Reply | None = None) -> None:
        self._replies = list(replies)
        self._then = then
        self._lock = threading.Lock()
        self.times: list[float] = []

    def __call__(self, request: dict[str, Any]) -> Reply:
        with self._lock:
            self.times.append(time.monotonic())
            if self._replies:
                return self._replies.pop(0)
        if self._then is None:
            raise AssertionError("TimedScript: no replies left")
        return self._then

    def gaps(self) -> list[float]:
        return [b - a for a, b in itertools.pairwise(self.times)]
