"""The storage every worker of a pool shares: a Prefect storage block (an S3 bucket, say)
named once per deployment in the ``shared_storage`` parameter, else the run's or Prefect's
default result storage. The judge cache and sharded runs' hand-off live there.

:class:`BlockStore` gives a block the project's object-store interface
(:class:`~agentflow_eval.storage.base.ObjectStore`), so the judge cache and the shard
hand-off talk to it as publishing talks to a folder or a bucket.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable
from typing import Any

from prefect.filesystems import WritableFileSystem
from prefect.results import aget_default_result_storage, aresolve_result_storage, get_result_store

from agentflow_eval.criteria.judges.cache import StoreJudgeCache
from agentflow_eval.errors import StoreError
from agentflow_eval.models.config import JudgeSettings
from agentflow_eval.storage.keys import join_key

__all__ = ["BlockStore", "is_missing_entry", "resolve_shared_storage", "shared_judge_cache"]


async def resolve_shared_storage(block: str | None) -> WritableFileSystem:
    """The block named ``block`` (``"s3-bucket/agentflow"``), or the current run's result
    storage, or Prefect's default result storage. Raises naming a block that does not load."""
    if block:
        try:
            return await aresolve_result_storage(block)
        except Exception as exc:
            raise ValueError(
                f"shared_storage: the storage block {block!r} could not be loaded ({exc}); "
                "name a saved block as <block-type>/<name>, e.g. s3-bucket/agentflow"
            ) from exc
    return get_result_store().result_storage or await aget_default_result_storage()


def is_missing_entry(exc: BaseException) -> bool:
    """Whether a failed read means the object is not there rather than a store that cannot
    be read. Prefect's storages say so differently: its local file system raises
    ``ValueError("Path ... does not exist.")``, remote file systems raise
    ``FileNotFoundError``, and S3 a botocore ``ClientError`` with code ``NoSuchKey`` or
    ``404``."""
    if isinstance(exc, FileNotFoundError):
        return True
    if isinstance(exc, ValueError) and str(exc).endswith("does not exist."):
        return True
    error = getattr(exc, "response", None)
    code = error.get("Error", {}).get("Code") if isinstance(error, dict) else None
    return code in ("NoSuchKey", "404")


def _synchronously(method: Any, *args: Any) -> Any:
    """Call a block's ``read_path``/``write_path`` and have its result, from a worker
    thread. Inside an async flow or task run, Prefect's dispatching methods pick their
    async side even off the event loop (they look at the run, not the thread): ask those
    for the sync side. A block whose method still hands back a coroutine has it run to
    the end on this thread's own loop."""
    # prefect's dispatching methods (async_dispatch, sync_compatible) carry .aio
    result = method(*args, _sync=True) if hasattr(method, "aio") else method(*args)
    if inspect.isawaitable(result):
        return asyncio.run(_awaited(result))
    return result


async def _awaited(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


class BlockStore:
    """A Prefect storage block as an object store. Its calls block; callers run them off
    the event loop."""

    def __init__(self, block: WritableFileSystem) -> None:
        self.block: Any = block  # typed as the async base; called synchronously

    def describe(self) -> str:
        block: Any = self.block
        where = getattr(block, "basepath", None) or getattr(block, "bucket_name", None)
        return f"{type(block).__name__}({where or '?'})"

    def put(self, key: str, body: bytes, content_type: str, cache_control: str | None) -> None:
        path = join_key(*key.split("/"))
        try:
            _synchronously(self.block.write_path, path, body)
        except Exception as exc:
            raise StoreError(
                f"{self.describe()}: cannot write {path}: {exc}", transient=True
            ) from exc

    def get(self, key: str) -> bytes | None:
        path = join_key(*key.split("/"))
        try:
            return bytes(_synchronously(self.block.read_path, path))
        except Exception as exc:
            if is_missing_entry(exc):
                return None
            raise StoreError(
                f"{self.describe()}: cannot read {path}: {exc}", transient=True
            ) from exc

    def url(self, key: str) -> str:
        return f"{self.describe()}/{key}"


def shared_judge_cache(
    settings: JudgeSettings, storage: WritableFileSystem
) -> StoreJudgeCache | None:
    """The judge cache of a flow run in ``storage`` (see :func:`resolve_shared_storage`),
    or ``None`` when ``settings.cache`` is off."""
    if not settings.cache:
        return None
    return StoreJudgeCache(BlockStore(storage))
