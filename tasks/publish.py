"""Publish stage: copy the run folder's reports to a folder or S3-compatible storage.

If the store stays down the local copy is kept and marked pending; the flow run's summary
says so and where, an ``agentflow.eval.publish-failed`` event tells automations, and
``agentflow-eval publish DIR`` uploads it later. Publishing never fails the evaluation:
the results already exist locally."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from prefect import get_run_logger, task
from prefect.cache_policies import NO_CACHE

from agentflow_eval.models.request import S3Options
from agentflow_eval.pipeline.stages import publish_stage
from agentflow_eval.publish.publisher import PublishOutcome
from agentflow_eval.redaction import register_secret
from agentflow_eval.storage.targets import S3Credentials, Target, target_of

__all__ = ["credentials_from_secret", "publish_target", "publish_task"]


async def credentials_from_secret(name: str) -> S3Credentials:
    """Read S3 credentials from a Prefect Secret block holding a JSON object with
    ``aws_access_key_id`` and ``aws_secret_access_key`` (``aws_session_token`` optional)."""
    from prefect.blocks.system import Secret

    secret: Secret[Any] = await Secret.aload(name)
    value = secret.get()
    data = json.loads(value) if isinstance(value, str) else dict(value)
    for field in ("aws_secret_access_key", "aws_session_token"):
        register_secret(data.get(field))  # redacted wherever it may show up later
    try:
        return S3Credentials(
            access_key_id=data["aws_access_key_id"],
            secret_access_key=data["aws_secret_access_key"],
            session_token=data.get("aws_session_token"),
        )
    except KeyError as exc:
        raise ValueError(
            f"Prefect Secret {name!r} must hold aws_access_key_id and aws_secret_access_key; "
            f"{exc.args[0]} is missing"
        ) from None


async def publish_target(target: str, s3: S3Options) -> Target:
    """The target ``target`` with the run's S3 options (credentials read from their
    Secret block, links as the options say)."""
    credentials = (
        await credentials_from_secret(s3.credentials_secret) if s3.credentials_secret else None
    )
    return target_of(target, s3, credentials)


@task(name="publish", cache_policy=NO_CACHE)
async def publish_task(run_dir: Path, target: Target) -> PublishOutcome:
    """Copy the run folder's reports to ``target``; never fails the run."""
    outcome = await publish_stage(run_dir, target)
    logger = get_run_logger()
    (logger.info if outcome.published else logger.warning)(outcome.message)
    return outcome
