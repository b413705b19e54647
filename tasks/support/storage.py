"""The storage every worker of a pool shares: a Prefect storage block (an S3 bucket, say)
named once per deployment in the ``shared_storage`` parameter, else Prefect's default
result storage. The judge cache and sharded runs' hand-off live there."""

from __future__ import annotations

from prefect.filesystems import WritableFileSystem
from prefect.results import aget_default_result_storage, aresolve_result_storage, get_result_store

__all__ = ["resolve_shared_storage"]


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
