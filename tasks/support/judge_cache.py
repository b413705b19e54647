"""The judge cache on Prefect's result storage, so judge replies outlive the process.

Each judge sample is stored as a Prefect result record under
``agentflow-judge-cache/<key>`` in the run's result storage — the flow's
``result_storage`` when it has one, otherwise Prefect's default: the block named by
``PREFECT_RESULTS_DEFAULT_STORAGE_BLOCK`` (an S3 bucket, say), the server's default, or
the local directory ``PREFECT_LOCAL_STORAGE_PATH``. ``<key>`` is
:func:`agentflow_eval.criteria.judges.cache.judge_cache_key`, the same inputs a task cache policy
would hash (criterion and prompt version, judge model and options, rendered prompt,
sample index). Expiration is the record's own ``expiration``, as for Prefect's task
``cache_expiration``; the refresh switch is the runtime's (``JudgeSettings.refresh_cache``).
Records are JSON, so a shared bucket never unpickles code.

Why not one Prefect task per judge call with a cache policy: each task run costs
orchestration and API traffic of its own, more than a cached reply is worth, and a run
makes thousands of judge calls. A task per batch would cache the batch as a whole, so one
changed prompt would re-pay every call in it. Reading and writing result records
directly keeps Prefect's storage, expiration and block configuration with per-call keys
and no per-call orchestration.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from pathlib import Path

from prefect.filesystems import WritableFileSystem
from prefect.results import (
    ResultStore,
    aget_default_result_storage,
    aresolve_result_storage,
    get_result_store,
)
from prefect.serializers import JSONSerializer
from pydantic import ValidationError

from agentflow_eval.criteria.judges.cache import CachedJudgeReply
from agentflow_eval.models.config import JudgeSettings

__all__ = ["DEFAULT_PREFIX", "PrefectJudgeCache", "prefect_judge_cache"]

log = logging.getLogger(__name__)

DEFAULT_PREFIX = "agentflow-judge-cache"


class PrefectJudgeCache:
    """A :class:`~agentflow_eval.criteria.judges.cache.JudgeCache` on a Prefect result store."""

    def __init__(self, store: ResultStore, *, prefix: str = DEFAULT_PREFIX) -> None:
        if store.result_storage is None:
            raise ValueError("PrefectJudgeCache needs a ResultStore with result_storage set")
        self._store = store
        self._prefix = prefix.strip("/")

    @classmethod
    async def create(
        cls,
        storage: WritableFileSystem | str | Path | None = None,
        *,
        prefix: str = DEFAULT_PREFIX,
    ) -> PrefectJudgeCache:
        """A cache in ``storage`` (a block, a saved block's slug such as
        ``"s3-bucket/judge-cache"``, or a local path), or else in the current run's
        result storage, or else in Prefect's default result storage."""
        if storage is not None:
            resolved = await aresolve_result_storage(storage)
        else:
            resolved = get_result_store().result_storage or await aget_default_result_storage()
        store = ResultStore(
            result_storage=resolved,
            metadata_storage=None,  # metadata inline: one object per entry
            serializer=JSONSerializer(),
            cache_result_in_memory=False,
        )
        return cls(store, prefix=prefix)

    @property
    def storage(self) -> WritableFileSystem:
        assert self._store.result_storage is not None
        return self._store.result_storage

    def _path(self, key: str) -> str:
        return f"{self._prefix}/{key}"

    @property
    def location(self) -> str:
        """Where the entries are, for messages: the storage and the prefix."""
        storage = self.storage
        where = getattr(storage, "basepath", None) or getattr(storage, "bucket_name", None)
        return f"{type(storage).__name__}({where or '?'})/{self._prefix}"

    async def get(self, key: str) -> CachedJudgeReply | None:
        """The stored reply, ``None`` for a miss; a store that cannot be read raises."""
        try:
            record = await self._store.aread(self._path(key))
        except Exception as exc:
            if is_missing_entry(exc):
                return None
            raise
        expiration = record.metadata.expiration
        if expiration is not None and expiration <= datetime.now(UTC):
            return None
        try:
            return CachedJudgeReply.model_validate(record.result)
        except ValidationError:
            log.warning("judge cache entry %s is not a judge reply; ignoring it", key)
            return None

    async def put(
        self, key: str, reply: CachedJudgeReply, *, expires_in_s: float | None = None
    ) -> None:
        expiration = (
            None if expires_in_s is None else datetime.now(UTC) + timedelta(seconds=expires_in_s)
        )
        await self._store.awrite(
            reply.model_dump(mode="json"), key=self._path(key), expiration=expiration
        )


def is_missing_entry(exc: BaseException) -> bool:
    """Whether a failed read means the entry is not there (a cache miss) rather than a
    store that cannot be read. Prefect's storages say so differently: its local file
    system raises ``ValueError("Path ... does not exist.")``, remote file systems raise
    ``FileNotFoundError``, and S3 a botocore ``ClientError`` with code ``NoSuchKey`` or
    ``404`` (tests/flows/test_judge_cache_flow.py checks the local one)."""
    if isinstance(exc, FileNotFoundError):
        return True
    if isinstance(exc, ValueError) and str(exc).endswith("does not exist."):
        return True
    error = getattr(exc, "response", None)
    code = error.get("Error", {}).get("Code") if isinstance(error, dict) else None
    return code in ("NoSuchKey", "404")


async def prefect_judge_cache(
    settings: JudgeSettings, storage: WritableFileSystem | None = None
) -> PrefectJudgeCache | None:
    """The judge cache of a flow run in ``storage`` (the pool's shared storage, see
    :mod:`agentflow_eval.tasks.support.storage`) or else Prefect's result storage, or
    ``None`` when ``settings.cache`` is off."""
    if not settings.cache:
        return None
    return await PrefectJudgeCache.create(storage)
