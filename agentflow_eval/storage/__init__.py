"""Where runs are kept and found again: one target parser (:mod:`.targets`), one store
interface (:class:`~.base.ObjectStore`), one table of the stores a target opens
(:mod:`.stores`: a folder, an S3-compatible bucket, and any a package registers),
locations of one object in a store (:mod:`.locations`), and the published runs' history
(:mod:`.history`). Publishing, baseline lookup, the history pages and the shared judge
cache all go through it."""

from __future__ import annotations

from agentflow_eval.errors import StoreError
from agentflow_eval.storage.base import (
    ListingStore,
    ObjectStore,
    ReadableStream,
    StoredObject,
)
from agentflow_eval.storage.local import LocalStore
from agentflow_eval.storage.s3 import S3Store, presigned_lifetime_s
from agentflow_eval.storage.stores import StoreForm, open_store, register_store
from agentflow_eval.storage.targets import LocalTarget, S3Target, StoreTarget, Target

__all__ = [
    "ListingStore",
    "LocalStore",
    "LocalTarget",
    "ObjectStore",
    "ReadableStream",
    "S3Store",
    "S3Target",
    "StoreError",
    "StoreForm",
    "StoreTarget",
    "StoredObject",
    "Target",
    "open_store",
    "presigned_lifetime_s",
    "register_store",
]
