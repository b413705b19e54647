"""Which store keeps runs where a target says: one table of the forms a target is
written in, each with the store it opens. Publishing, baseline lookup (and ``compare``),
the history pages and a judge cache kept in a store all open theirs here.

The built-in forms are :data:`BUILTIN_STORES`: a folder (a path, or ``file://``) and an
S3-compatible bucket (``s3://bucket/prefix``). A package adds a form of its own — a
scheme and the store a target in it opens — with :func:`register_store`, or declares it
as an entry point of the ``agentflow_eval.stores`` group, naming its :class:`StoreForm`
under the scheme::

    [project.entry-points."agentflow_eval.stores"]
    gs = "gcs_store.form:GCS"

A target in a registered scheme is parsed as a :class:`~.targets.StoreTarget` (the text
as written) and handed to the form's ``open``; its keys are paths below the target, as
they are under a folder or a bucket's prefix, and its ``scheme://authority`` alone opens
the root that baseline lookup reads ``<prefix>/<eval_set_id>/latest.json`` from.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from agentflow_eval.registries import Registry
from agentflow_eval.storage.base import ObjectStore
from agentflow_eval.storage.local import LocalStore
from agentflow_eval.storage.s3 import S3Store

if TYPE_CHECKING:
    # the target models parse their text against this table
    from agentflow_eval.storage.target_models import LocalTarget, Target

__all__ = [
    "BUILTIN_STORES",
    "ENTRY_POINT_GROUP",
    "STORES",
    "StoreForm",
    "forms_written",
    "open_store",
    "register_store",
    "store_form",
]

ENTRY_POINT_GROUP = "agentflow_eval.stores"

TargetT = TypeVar("TargetT")

_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*$")


@dataclass(frozen=True)
class StoreForm(Generic[TargetT]):
    """A way of writing where runs are kept, and the store that keeps them there."""

    scheme: str
    """What a target in this form starts with, before ``://`` (``s3``); ``file`` is the
    folder's, also written as a plain path."""
    written: str
    """How a person writes it, for messages: ``s3://bucket/prefix``."""
    open: Callable[[TargetT], ObjectStore]
    """The store a target in this form opens. It is given the parsed target: a
    :class:`~.targets.LocalTarget` for ``file``, an :class:`~.targets.S3Target` (with the
    run's S3 options) for ``s3``, and a :class:`~.targets.StoreTarget` for any other
    scheme."""

    def __post_init__(self) -> None:
        if not _SCHEME.match(self.scheme):
            raise ValueError(
                f"store scheme {self.scheme!r}: expected a URL scheme in lower case (a "
                "letter, then letters, digits, '+', '-' or '.'), as in 's3' or 'gs'"
            )


def _folder(target: LocalTarget) -> ObjectStore:
    return LocalStore(target.path)


BUILTIN_STORES: tuple[StoreForm[Any], ...] = (
    StoreForm("file", "a directory path (or a file:// URL)", _folder),
    StoreForm("s3", "s3://bucket/prefix (AWS or any S3-compatible store)", S3Store),
)

STORES: Registry[StoreForm[Any]] = Registry(
    what="store",
    group=ENTRY_POINT_GROUP,
    kind=StoreForm,
    name_of=lambda form: form.scheme,
    builtins=lambda: BUILTIN_STORES,
)
"""Every store form, by scheme."""


def register_store(form: StoreForm[Any]) -> StoreForm[Any]:
    """Add a store form (replacing the one of the same scheme, a built-in's too); returns
    it. Targets written in its scheme are then accepted wherever a target is read."""
    return STORES.add(form)


def store_form(scheme: str) -> StoreForm[Any] | None:
    """The form registered for ``scheme`` (any case), if any."""
    return STORES.get(scheme.lower())


def forms_written() -> str:
    """Every form as a person writes it, for messages:
    ``a directory path (or a file:// URL) or s3://bucket/prefix (...)``."""
    return " or ".join(form.written for form in sorted(STORES.items(), key=_folder_first))


def _folder_first(form: StoreForm[Any]) -> tuple[bool, str]:
    return (form.scheme != "file", form.scheme)


def open_store(target: Target) -> ObjectStore:
    """The store behind a parsed target. Raises ``ValueError`` when no form is registered
    for its scheme any more (a target recorded by a process that had one)."""
    form = store_form(target.scheme)
    if form is None:
        raise ValueError(
            f"{target.describe()}: no store is registered for {target.scheme}:// targets "
            f"(install the package that provides it); expected {forms_written()}"
        )
    return form.open(target)
