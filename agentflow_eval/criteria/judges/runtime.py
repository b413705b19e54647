"""One judged LLM call, and the per-run runtime that makes them: limited, retried, cached.

A criterion renders a prompt (:mod:`agentflow_eval.criteria.judges.prompt`), wraps it in a
:class:`JudgeRequest` (criterion, template, options, sample index) and asks the run's
:class:`JudgeRuntime` for a verdict with a parser that turns the judge's text into a
pydantic model (:func:`parse_json_reply`). The runtime:

- answers from its cache when it can (the key is :func:`judge_cache_key` over everything
  that shapes the reply), and shares one call between concurrent askers of the same key,
  so a reply is never paid for twice;
- otherwise calls the model through the run's :class:`~agentflow_eval.llm.client.ModelClient`
  (LiteLLM, or the direct OpenAI-compatible client) under its semaphore, the judge
  concurrency limit (separate from the agent's), with the transports' own retries turned
  off so every request is one counted call;
- retries transient failures under the run's one retry policy
  (:mod:`agentflow_eval.llm.retry`: HTTP 408/409/429/5xx, timeouts, connection errors,
  unreadable replies, the same on both transports) and output that is not the JSON asked
  for, with exponential backoff and jitter, waiting what a ``Retry-After``/
  ``retry-after-ms`` header asks instead (up to ``retry_max_delay_s``); bad requests
  (400/404/422) fail at once;
- raises :class:`JudgeError` with the (redacted) reason when the judge cannot answer;
  criteria turn it into a "not evaluated" result, never a pass or a fail;
- raises :class:`~agentflow_eval.llm.retry.ProviderAuthError` when the judge's
  credentials are refused (401/403), at the first refusal, and for every later request
  without sending it: the run stops rather than mark every verdict "not evaluated".

Create one runtime per evaluation run, inside the event loop that runs the judging::

    runtime = JudgeRuntime(config.judge, models=models, cache=cache)  # cache may be None
    ctx = CriterionContext(case=case, trial=trial, config=config, judge=runtime)

``runtime.stats`` then holds the run's judge calls, cache hits, retries and failures.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import random
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from agentflow_eval.criteria.judges.cache import CachedJudgeReply, JudgeCache, judge_cache_key
from agentflow_eval.criteria.judges.options import JudgeCriterionOptions
from agentflow_eval.criteria.judges.prompt import PromptTemplate
from agentflow_eval.errors import AgentflowEvalError
from agentflow_eval.llm.client import ModelClient, response_cost
from agentflow_eval.llm.retry import Fault, ProviderAuthError, RetryPolicy, classify
from agentflow_eval.models.config import CriterionConfig, JudgeSettings
from agentflow_eval.models.results import Usage
from agentflow_eval.redaction import redact, register_secret

__all__ = [
    "JudgeError",
    "JudgeOptions",
    "JudgeOutputError",
    "JudgeReply",
    "JudgeRequest",
    "JudgeRuntime",
    "JudgeStats",
    "parse_json_reply",
]

log = logging.getLogger(__name__)

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class JudgeOptions:
    """How one criterion calls its judge: the model, its sampling options, the endpoint,
    and the retry budget."""

    model: str
    temperature: float | None = None
    seed: int | None = None
    max_tokens: int | None = None
    api_base: str | None = None
    api_key_env: str | None = None
    timeout_s: float = 60.0
    max_retries: int = 4
    retry_base_delay_s: float = 1.0
    retry_max_delay_s: float = 60.0

    @classmethod
    def resolve(cls, criterion: CriterionConfig, settings: JudgeSettings) -> JudgeOptions:
        """The criterion's own judge options, falling back to the run's judge settings."""
        own = JudgeCriterionOptions.of(criterion)
        return cls(
            model=own.judge_model or settings.model,
            temperature=own.temperature,
            seed=own.seed,
            max_tokens=own.max_tokens,
            api_base=settings.api_base,
            api_key_env=settings.api_key_env,
            timeout_s=settings.timeout_s,
            max_retries=settings.max_retries,
            retry_base_delay_s=settings.retry_base_delay_s,
            retry_max_delay_s=settings.retry_max_delay_s,
        )

    @property
    def retry_policy(self) -> RetryPolicy:
        return RetryPolicy(
            max_retries=self.max_retries,
            base_delay_s=self.retry_base_delay_s,
            max_delay_s=self.retry_max_delay_s,
        )

    def output_options(self) -> dict[str, Any]:
        """The options that change what the judge says (they enter the cache key; the
        endpoint, timeout and retry budget do not)."""
        return {"temperature": self.temperature, "seed": self.seed, "max_tokens": self.max_tokens}


@dataclass(frozen=True)
class JudgeRequest:
    """One judge sample to obtain: a rendered prompt, under a template, for a criterion."""

    criterion: str
    template: PromptTemplate
    prompt: str
    options: JudgeOptions
    sample_index: int = 0

    @property
    def cache_key(self) -> str:
        return judge_cache_key(
            criterion=self.criterion,
            template=self.template.identity,
            model=self.options.model,
            options=self.options.output_options(),
            prompt=self.prompt,
            sample_index=self.sample_index,
        )

    @property
    def seed(self) -> int | None:
        """The sample's seed: the configured seed plus the sample index, so samples of
        one prompt differ while each stays reproducible."""
        return None if self.options.seed is None else self.options.seed + self.sample_index

    def messages(self) -> list[dict[str, str]]:
        return [{"role": "user", "content": self.prompt}]


@dataclass(frozen=True)
class JudgeReply(Generic[T]):
    """A parsed judge reply. ``usage`` is what this request paid (nothing on a cache
    hit); ``attempts`` counts its API requests; ``latency_ms`` is its wall time."""

    value: T
    content: str
    model: str
    usage: Usage
    latency_ms: float
    attempts: int
    cached: bool


class JudgeOutputError(ValueError):
    """The judge answered, but not with the JSON the prompt asked for."""


class JudgeError(AgentflowEvalError):
    """A judge request that failed for good; ``reason`` says why for the results."""

    def __init__(self, reason: str, *, attempts: int = 0, usage: Usage | None = None) -> None:
        reason = redact(reason)
        super().__init__(reason)
        self.reason = reason
        self.attempts = attempts
        self.usage = usage or Usage()


@dataclass
class JudgeStats:
    """A run's judge counters. ``calls`` are API requests sent (retries included);
    ``cache_hits`` are samples answered without one; ``failures`` are requests that
    ended in a :class:`JudgeError`."""

    calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    failures: int = 0
    cache_errors: int = 0
    """Reads or writes of the cache that failed (the first one is logged as a warning)."""


_JSON_FENCE = re.compile(r"^```(?:json)?\s*\n?(?P<body>.*?)\n?```$", re.DOTALL | re.IGNORECASE)


def parse_json_reply(content: str, schema: type[M]) -> M:
    """``content`` as a ``schema`` object. Accepts a bare JSON object, one in a ```json
    fence, or one surrounded by prose; anything else raises :class:`JudgeOutputError`
    saying what was expected and what was found."""
    text = content.strip()
    fenced = _JSON_FENCE.match(text)
    if fenced:
        text = fenced.group("body").strip()
    start, end = text.find("{"), text.rfind("}")
    expected = f"a JSON object with fields {', '.join(schema.model_fields)}"
    if start < 0 or end < start:
        raise JudgeOutputError(f"expected {expected}; found no JSON object in {_clip(content)}")
    try:
        data = json.loads(text[start : end + 1])
    except json.JSONDecodeError as exc:
        raise JudgeOutputError(
            f"expected {expected}; found invalid JSON ({exc.msg}) in {_clip(content)}"
        ) from exc
    try:
        return schema.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['msg']}"
            for err in exc.errors()
        )
        raise JudgeOutputError(f"expected {expected}; {problems} in {_clip(content)}") from exc


def _clip(text: str, limit: int = 200) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "…")


class _SetupError(Exception):
    """The judge cannot be called as configured (a missing API key variable)."""


@dataclass
class JudgeRuntime:
    """The judge side of one run: the model client it calls through (the run's, so judges
    share the run's rate limits), the judge concurrency limit, the cache and the counters.

    ``cache`` is consulted only when ``settings.cache`` is on; ``settings.refresh_cache``
    skips reading it (replies are still written, replacing old entries).
    """

    settings: JudgeSettings = field(default_factory=JudgeSettings)
    models: ModelClient = field(default_factory=ModelClient)
    cache: JudgeCache | None = None
    stats: JudgeStats = field(default_factory=JudgeStats)
    semaphore: asyncio.Semaphore = field(init=False, repr=False)
    _inflight: dict[str, asyncio.Future[CachedJudgeReply]] = field(
        init=False, repr=False, default_factory=dict
    )
    _random: random.Random = field(init=False, repr=False, default_factory=random.Random)

    def __post_init__(self) -> None:
        if not self.settings.cache:
            self.cache = None
        self.semaphore = asyncio.Semaphore(self.settings.max_concurrency)

    async def ask(self, request: JudgeRequest, parse: Callable[[str], T]) -> JudgeReply[T]:
        """The judge's parsed reply to ``request``: from the cache, from a concurrent
        identical request, or from the model. Raises :class:`JudgeError`."""
        started = time.perf_counter()
        key = request.cache_key
        while (shared := self._inflight.get(key)) is not None:
            try:
                stored = await asyncio.shield(shared)
            except asyncio.CancelledError:
                current = asyncio.current_task()
                if shared.cancelled() and not (current and current.cancelling()):
                    continue  # the asker we waited on was cancelled, not us: ask again
                raise
            except JudgeError as exc:  # the same failure, but not paid for again here
                raise JudgeError(exc.reason) from exc
            self.stats.cache_hits += 1
            return _from_store(stored, parse, started)
        future: asyncio.Future[CachedJudgeReply] = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        try:
            reply = await self._answer(request, key, parse, started)
        except JudgeError as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: no "never retrieved" warning if nobody waits
            raise
        except BaseException:
            future.cancel()
            raise
        else:
            future.set_result(_to_store(reply))
            return reply
        finally:
            del self._inflight[key]

    async def _answer(
        self, request: JudgeRequest, key: str, parse: Callable[[str], T], started: float
    ) -> JudgeReply[T]:
        if self.cache is not None and not self.settings.refresh_cache:
            stored = await self._cache_get(key)
            if stored is not None:
                try:
                    reply = _from_store(stored, parse, started)
                except JudgeError:
                    log.warning("judge cache entry %s no longer parses; asking the judge", key)
                else:
                    self.stats.cache_hits += 1
                    return reply
        reply = await self._call_with_retries(request, parse, started)
        if self.cache is not None:
            await self._cache_put(key, _to_store(reply))
        return reply

    async def _call_with_retries(
        self, request: JudgeRequest, parse: Callable[[str], T], started: float
    ) -> JudgeReply[T]:
        options = request.options
        usage = Usage()
        attempts = 0
        policy = options.retry_policy
        while True:
            attempts += 1
            try:
                response = await self._complete(request)
            except ProviderAuthError:
                self.stats.failures += 1
                raise
            except Exception as exc:  # every failure is classified, none escapes as-is
                failure = _classify(exc, options.model)
                if not isinstance(exc, _SetupError):
                    usage.calls += 1
            else:
                usage.add(_usage_of(response, options.model))
                content = _content_of(response)
                try:
                    value = parse(content)
                except JudgeOutputError as exc:
                    failure = Fault(f"malformed judge output: {exc}", "transient")
                else:
                    return JudgeReply(
                        value=value,
                        content=content,
                        model=str(getattr(response, "model", None) or options.model),
                        usage=usage,
                        latency_ms=(time.perf_counter() - started) * 1000,
                        attempts=attempts,
                        cached=False,
                    )
            if not failure.transient or attempts > options.max_retries:
                self.stats.failures += 1
                tried = f"{attempts} attempt{'s' if attempts != 1 else ''}"
                why = "not retried" if not failure.transient else "retries exhausted"
                raise JudgeError(
                    f"{failure.reason} ({tried}, {why})", attempts=attempts, usage=usage
                )
            self.stats.retries += 1
            await policy.wait(attempts, failure, self._random)

    async def _complete(self, request: JudgeRequest) -> Any:
        """One model request under the judge concurrency limit and the
        run's per-model rate limits (shared with the agent's calls)."""
        options = request.options
        kwargs: dict[str, Any] = {
            "model": options.model,
            "messages": request.messages(),
            "timeout": options.timeout_s,
            "num_retries": 0,  # we retry, and count; litellm and openai must not
            "max_retries": 0,
            "drop_params": True,
        }
        for name, value in (
            ("temperature", options.temperature),
            ("seed", request.seed),
            ("max_tokens", options.max_tokens),
            ("api_base", options.api_base),
        ):
            if value is not None:
                kwargs[name] = value
        if options.api_key_env:
            api_key = os.environ.get(options.api_key_env)
            if not api_key:
                raise _SetupError(
                    f"judge API key variable {options.api_key_env!r} is not set or empty"
                )
            register_secret(api_key)  # it may come back quoted in an error body
            kwargs["api_key"] = api_key
        async with self.semaphore:
            self.stats.calls += 1
            # one attempt: the retries are this runtime's, so each request is counted; the
            # call says which criterion it serves (a plugin's judge model may answer by it)
            models = self.models.tagged(criterion=request.criterion)
            return await models.complete_once(caller="judge", **kwargs)

    async def _cache_get(self, key: str) -> CachedJudgeReply | None:
        assert self.cache is not None
        try:
            return await self.cache.get(key)
        except Exception as exc:  # a broken cache costs money, not the verdict
            self.stats.cache_errors += 1
            if self.stats.cache_errors == 1:
                log.warning(
                    "judge cache %s cannot be read (%s: %s); judges are asked, and paid, "
                    "until it can",
                    self.cache.location,
                    type(exc).__name__,
                    exc,
                )
            return None

    async def _cache_put(self, key: str, reply: CachedJudgeReply) -> None:
        assert self.cache is not None
        try:
            await self.cache.put(key, reply, expires_in_s=self.settings.cache_expiration_s)
        except Exception as exc:
            self.stats.cache_errors += 1
            if self.stats.cache_errors == 1:
                log.warning(
                    "judge cache %s cannot be written (%s: %s); verdicts of this run will be "
                    "paid for again next time",
                    self.cache.location,
                    type(exc).__name__,
                    exc,
                )


def _to_store(reply: JudgeReply[Any]) -> CachedJudgeReply:
    """What the cache keeps of a reply: its text redacted as a trial's outputs are (a
    judge may quote a key it saw in the answer; the cache outlives the run, in a shared
    store), so a hit's verdict is parsed from the redacted text."""
    return CachedJudgeReply(
        content=redact(reply.content),
        model=reply.model,
        usage=reply.usage,
        latency_ms=reply.latency_ms,
    )


def _from_store(
    stored: CachedJudgeReply, parse: Callable[[str], T], started: float
) -> JudgeReply[T]:
    try:
        value = parse(stored.content)
    except JudgeOutputError as exc:
        raise JudgeError(f"cached judge output does not parse: {exc}") from exc
    return JudgeReply(
        value=value,
        content=stored.content,
        model=stored.model,
        usage=Usage(),
        latency_ms=(time.perf_counter() - started) * 1000,
        attempts=0,
        cached=True,
    )


def _classify(exc: Exception, model: str) -> Fault:
    """A judge attempt's failure, classified by the run's one retry policy."""
    if isinstance(exc, _SetupError):
        return Fault(str(exc), "rejected")
    return classify(exc, who=f"judge {model}")


def _content_of(response: Any) -> str:
    try:
        content = response.choices[0].message.content
    except (AttributeError, IndexError):
        return ""
    return content if isinstance(content, str) else ""


def _usage_of(response: Any, model: str) -> Usage:
    """Tokens as reported, and the cost when litellm knows the model's price."""
    raw = getattr(response, "usage", None)
    prompt = int(getattr(raw, "prompt_tokens", 0) or 0)
    completion = int(getattr(raw, "completion_tokens", 0) or 0)
    total = int(getattr(raw, "total_tokens", 0) or 0) or prompt + completion
    cost = response_cost(response, model)
    return Usage.of_call(prompt, completion, cost, total_tokens=total)
