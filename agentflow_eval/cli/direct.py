"""``agentflow-eval run --no-prefect`` (or ``AGENTFLOW_EVAL_NO_PREFECT=1``): the planned
run's stage list awaited in this process, without Prefect.

The same plan (``plan_from_params``), the same stages (:func:`~agentflow_eval.pipeline.
runner.run_pipeline` with :class:`~agentflow_eval.pipeline.runner.DirectStages`, as
``AgentEvaluator`` runs them), the same run folder and reports; what only Prefect has
is left out: no flow run, no task runs, artifacts or events, no temporary API server to
boot. Prefect is not imported on this path at all, which is what makes it a loop of
seconds. Judge replies go to the same local cache the flow's run uses by default
(Prefect's local result storage folder), so switching between the two paths never pays
for a judge call twice.

A run that needs Prefect (provider keys from Secret blocks, S3 credentials from a Secret
block, a pool's shared storage, shards) is refused here with one line: its ``--resume``
runs without ``--no-prefect``.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path

from agentflow_eval.agents.base import AgentUnderTest
from agentflow_eval.criteria.judges.cache import JudgeCache, StoreJudgeCache
from agentflow_eval.errors import InputError
from agentflow_eval.llm.client import ModelClient
from agentflow_eval.llm.ratelimit import RateLimiter
from agentflow_eval.models.config import JudgeSettings
from agentflow_eval.models.params import EvaluateParams
from agentflow_eval.pipeline.deadline import within_deadline
from agentflow_eval.pipeline.outcome import RunOutcome
from agentflow_eval.pipeline.runner import DirectStages, RunServices, run_pipeline
from agentflow_eval.pipeline.stages import BaselineOptions
from agentflow_eval.run.plan import RunPlan
from agentflow_eval.storage.local import LocalStore
from agentflow_eval.storage.targets import target_of

__all__ = [
    "NO_PREFECT_ENV",
    "check_runs_without_prefect",
    "direct_run",
    "local_judge_cache",
    "wants_no_prefect",
]

NO_PREFECT_ENV = "AGENTFLOW_EVAL_NO_PREFECT"
"""The environment setting that makes every ``run`` take this path (``1``, ``true``,
``yes`` or ``on``), as ``--no-prefect`` does for one."""

_TRUE = ("1", "true", "yes", "on")


def wants_no_prefect(flag: bool, environ: Mapping[str, str]) -> bool:
    """Whether the run goes without Prefect: ``--no-prefect``, or the environment says
    so (:data:`NO_PREFECT_ENV`)."""
    return flag or environ.get(NO_PREFECT_ENV, "").strip().lower() in _TRUE


def check_runs_without_prefect(params: EvaluateParams) -> None:
    """Refuse (:class:`InputError`) a run whose parameters need Prefect: they can come
    from an earlier run's ``run.json`` on ``--resume``, started from a deployment."""
    needs = [
        (bool(params.secrets), "secrets (provider keys from Prefect Secret blocks)"),
        (bool(params.s3.credentials_secret), "s3.credentials_secret (a Prefect Secret block)"),
        (bool(params.shared_storage), "shared_storage (a Prefect storage block)"),
        (params.shards > 1, f"shards={params.shards} (flow runs of a deployment)"),
        (params.shard is not None, "shard (a shard of a deployment's run)"),
    ]
    for needed, what in needs:
        if needed:
            raise InputError(
                f"--no-prefect: this run uses {what}, which only the Prefect flow reads; "
                f"run it without --no-prefect (and without {NO_PREFECT_ENV})"
            )


def local_result_storage(environ: Mapping[str, str]) -> Path:
    """The folder Prefect keeps a local flow run's results in, where the flow's judge
    cache lives: ``PREFECT_RESULTS_LOCAL_STORAGE_PATH`` (or its older name
    ``PREFECT_LOCAL_STORAGE_PATH``), else ``$PREFECT_HOME/storage``, else
    ``~/.prefect/storage`` — read from the environment, so a value set only in a Prefect
    profile is not seen here."""
    for name in ("PREFECT_RESULTS_LOCAL_STORAGE_PATH", "PREFECT_LOCAL_STORAGE_PATH"):
        if environ.get(name):
            return Path(environ[name]).expanduser()
    home = environ.get("PREFECT_HOME")
    return (Path(home).expanduser() if home else Path.home() / ".prefect") / "storage"


def local_judge_cache(settings: JudgeSettings, environ: Mapping[str, str]) -> JudgeCache | None:
    """The judge cache a local flow run uses, as a folder (``None`` when the config turns
    caching off)."""
    if not settings.cache:
        return None
    return StoreJudgeCache(LocalStore(local_result_storage(environ)))


def show_logs(verbose: bool) -> None:
    """This process's warnings (with ``verbose``, agentflow-eval's info lines too) on
    stderr, as the flow path's console shows Prefect's."""
    if not logging.getLogger().handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(
            logging.Formatter("%(asctime)s | %(levelname)-7s | %(name)s - %(message)s")
        )
        logging.getLogger().addHandler(handler)
        logging.getLogger().setLevel(logging.WARNING)
    if verbose:
        logging.getLogger("agentflow_eval").setLevel(logging.INFO)


def direct_run(
    params: EvaluateParams,
    plan: RunPlan,
    agent: AgentUnderTest | None,
    environ: Mapping[str, str],
) -> Callable[[], Awaitable[RunOutcome]]:
    """The planned run's stages, each awaited in this process: what the ``evaluate``
    flow does with ``planned`` but its Prefect parts (a call that makes the coroutine, for
    :func:`~agentflow_eval.cli.interrupt.run_interruptibly`). ``params`` have passed
    :func:`check_runs_without_prefect`."""
    s3 = params.s3
    baseline = (
        BaselineOptions(
            params.baseline,
            publish_to=params.publish_to,
            s3=s3,
            fail_on_regression=params.fail_on_regression,
        )
        if params.baseline
        else None
    )
    publish_to = target_of(params.publish_to, s3) if params.publish_to else None
    judge_cache = local_judge_cache(plan.config.judge, environ)

    async def stages() -> RunOutcome:
        async with ModelClient(RateLimiter.from_config(plan.config)) as models:
            services = RunServices(agent, models, judge_cache, baseline, publish_to)
            return await run_pipeline(plan, services, DirectStages())

    async def run() -> RunOutcome:
        return await within_deadline(params.timeout_minutes, stages(), plan.paths.run_dir)

    return run
