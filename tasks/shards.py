"""The tasks of a sharded run: collect a finished shard's results into the parent's run
folder, merge the shards, and (in a shard's own run) hand its results to the parent.
See :mod:`agentflow_eval.tasks.support.shards`."""

from __future__ import annotations

from prefect import get_run_logger, task
from prefect.cache_policies import NO_CACHE

from agentflow_eval.run.plan import RunPaths, RunPlan
from agentflow_eval.tasks.support.shards import download_shard, merge_shards, upload_shard
from agentflow_eval.tasks.support.storage import resolve_shared_storage

__all__ = ["collect_shard_task", "hand_off_shard_task", "merge_shards_task"]


@task(name="hand-off-shard", cache_policy=NO_CACHE)
async def hand_off_shard_task(
    paths: RunPaths, parent_run_id: str, index: int, shared_storage: str | None, paired: bool
) -> None:
    """Leave this shard's trials and verdicts (a paired shard's: both sides', and its
    waves) in the shared storage for its parent."""
    storage = await resolve_shared_storage(shared_storage)
    await upload_shard(storage, parent_run_id, index, paths, paired)
    get_run_logger().info("shard %d results handed to parent run %s", index + 1, parent_run_id)


@task(name="collect-shard", cache_policy=NO_CACHE)
async def collect_shard_task(
    paths: RunPaths, parent_run_id: str, index: int, shared_storage: str | None, paired: bool
) -> None:
    """Copy a finished shard's results into the run folder (kept if another shard fails)."""
    storage = await resolve_shared_storage(shared_storage)
    folder = await download_shard(storage, parent_run_id, index, paths, paired)
    get_run_logger().info("shard %d results in %s", index + 1, folder)


@task(name="merge-shards", cache_policy=NO_CACHE)
def merge_shards_task(plan: RunPlan, count: int) -> dict[str, int]:
    """The run folder's trials.jsonl and judged.jsonl from its shards (a paired run's
    baseline side and waves too)."""
    lines = merge_shards(plan.paths, count, paired=plan.against is not None)
    get_run_logger().info(
        "merged %d shards: %s",
        count,
        ", ".join(f"{name} {found} lines" for name, found in lines.items()),
    )
    return lines
