"""How the ``evaluate`` flow carries out a run request: :class:`PrefectRuntime`, the
one call's runtime (:mod:`agentflow_eval.pipeline.execute`) with each stage in its
Prefect task run and what only Prefect has: provider keys from Secret blocks, rate limits
shared by a work pool, the judge cache in a pool's shared storage, S3 credentials from a
Secret block, and shards (the trials and judging split over flow runs of the run's
deployment)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import PurePath

from prefect import get_run_logger
from prefect.deployments import arun_deployment
from prefect.runtime import deployment, flow_run

from agentflow_eval.criteria.judges.cache import JudgeCache
from agentflow_eval.llm.client import ModelClient
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.request import RunRequest, ShardSpec
from agentflow_eval.pipeline.execute import PreparedRun, RunObjects, Runtime
from agentflow_eval.pipeline.runner import RunServices, measure
from agentflow_eval.review.bank import LabelBank
from agentflow_eval.run.plan import RunPlan
from agentflow_eval.storage.targets import S3Credentials
from agentflow_eval.tasks.load_evalset import load_evalset_task
from agentflow_eval.tasks.publish import credentials_from_secret
from agentflow_eval.tasks.shards import collect_shard_task, hand_off_shard_task, merge_shards_task
from agentflow_eval.tasks.stages import TaskStages, unwalked
from agentflow_eval.tasks.support.rate_limits import prefect_rate_limiter
from agentflow_eval.tasks.support.secrets import load_secrets
from agentflow_eval.tasks.support.shards import finished_shards
from agentflow_eval.tasks.support.storage import (
    BlockStore,
    resolve_shared_storage,
    shared_judge_cache,
)

__all__ = ["SHARD_POLL_S", "PrefectRuntime"]

SHARD_POLL_S = 2.0
"""How often a sharded run asks the API whether its shard runs finished."""


class PrefectRuntime(Runtime):
    """The run request carried out inside the current flow run (see the module)."""

    stages = TaskStages()

    def __init__(self) -> None:
        super().__init__()
        self._credentials: dict[str, S3Credentials] = {}

    def check(self, request: RunRequest) -> None:
        """The flow carries out every request."""

    def provisions(self, request: RunRequest) -> AbstractAsyncContextManager[None]:
        return _provider_keys(request)

    def prepare(self, request: RunRequest, objects: RunObjects | None) -> PreparedRun:
        return load_evalset_task(request)

    def model_client(self, config: EvalConfig) -> AbstractAsyncContextManager[ModelClient]:
        return _pool_client(config)

    async def judge_cache(self, request: RunRequest, config: EvalConfig) -> JudgeCache | None:
        return shared_judge_cache(
            config.judge, await resolve_shared_storage(request.shared_storage)
        )

    async def label_bank(self, request: RunRequest, plan: RunPlan) -> LabelBank | None:
        if not request.shared_storage:
            return await super().label_bank(request, plan)
        return LabelBank(BlockStore(await resolve_shared_storage(request.shared_storage)))

    async def s3_credentials(self, request: RunRequest) -> S3Credentials | None:
        name = request.s3.credentials_secret
        if not name:
            return None
        if name not in self._credentials:
            self._credentials[name] = await credentials_from_secret(name)
        return self._credentials[name]

    async def measure(self, request: RunRequest, plan: RunPlan, services: RunServices) -> None:
        if request.shards > 1 and request.shard is None:
            await _run_shards(request, plan)
            merge_shards_task(unwalked(plan), request.shards)
        else:
            await measure(plan, services, self.stages)

    async def concluded(self, request: RunRequest, plan: RunPlan) -> None:
        if request.shard is not None:  # the parent publishes and reports the whole run
            await hand_off_shard_task(
                plan.paths,
                request.shard.parent_run_id,
                request.shard.index,
                request.shared_storage,
                paired=plan.against is not None,
            )


@asynccontextmanager
async def _provider_keys(request: RunRequest) -> AsyncIterator[None]:
    """The request's provider keys read from their Secret blocks, set for the run."""
    async with load_secrets(request.secrets) as loaded:
        if loaded:
            get_run_logger().info("provider keys from Prefect Secrets: %s", ", ".join(loaded))
        yield


@asynccontextmanager
async def _pool_client(config: EvalConfig) -> AsyncIterator[ModelClient]:
    """A model client under rate limits the pool's workers share."""
    async with ModelClient(await prefect_rate_limiter(config)) as models:
        yield models


async def _run_shards(request: RunRequest, plan: RunPlan) -> None:
    """Start a flow run of this deployment for each shard the run folder lacks, wait for
    them, and collect each finished one's results. Raises naming the shards that did not
    finish (the others are kept: resuming the run starts only those)."""
    count = request.shards
    if deployment.id is None:
        raise ValueError(
            f"shards={count} starts flow runs of this run's deployment, and this run has "
            "none; start it from a deployment (prefect deployment run ...), or use shards=1"
        )
    logger = get_run_logger()
    paired = plan.against is not None  # each shard runs both sides, and hands both back
    todo = sorted(set(range(count)) - finished_shards(plan.paths, count, paired))
    if len(todo) < count:
        logger.info("shards already finished: %d of %d", count - len(todo), count)
    parent = plan.meta.run_id

    async def one(index: int) -> str | None:
        child = request.updated(
            shards=1,
            resume=None,
            # a shard's own run folder sits apart from whole runs: <output>/shard-runs/
            output_dir=str(PurePath(request.output_dir) / "shard-runs"),
            runs=plan.settings.runs,  # every shard runs the parent's decided settings
            max_concurrency=plan.settings.max_concurrency,
            trial_timeout_s=plan.settings.trial_timeout_s,
            shard=ShardSpec(index=index, count=count, parent_run_id=parent),
        )
        started = await arun_deployment(
            deployment.id,
            # nulls left out: the server refuses a null for a typed parameter with a default
            parameters=child.model_dump(mode="json", exclude_none=True),
            flow_run_name=f"{flow_run.name}-shard-{index + 1}-of-{count}",
            # the API client repeats a request whose answer it lost (a timeout, a 503 of a
            # busy server); the key makes a repeat return the shard run already created
            idempotency_key=f"{flow_run.id}:shard-{index}-of-{count}",
            timeout=None,
            poll_interval=SHARD_POLL_S,
        )
        state = started.state
        if state is not None and state.is_completed():
            await collect_shard_task(plan.paths, parent, index, request.shared_storage, paired)
            return None
        return (
            f"shard {index + 1} of {count} (flow run {started.name}) ended "
            f"{state.name if state else 'without a state'}"
        )

    logger.info("starting %d shard runs of deployment %s", len(todo), deployment.name)
    problems = [p for p in await asyncio.gather(*(one(i) for i in todo)) if p]
    if problems:
        raise RuntimeError(
            "; ".join(problems)
            + f". The finished shards are kept in {plan.paths.run_dir / 'shards'}; run "
            f"this deployment with resume={plan.paths.run_dir} to run only the shards that "
            "did not finish."
        )
