"""Where runs are stored, written once as text and parsed in one place: ``s3://bucket/prefix``
(AWS or any S3-compatible store, with its options), a ``file://`` URL or a directory path,
or a URL in the scheme of a store a package registered (:mod:`.stores`).
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

from agentflow_eval.models.request import S3Options
from agentflow_eval.storage.stores import forms_written, store_form
from agentflow_eval.storage.target_models import (
    MAX_LINK_EXPIRY_S,
    LinkStyle,
    LocalTarget,
    S3Credentials,
    S3Target,
    StoreTarget,
    Target,
)

__all__ = [
    "MAX_LINK_EXPIRY_S",
    "LinkStyle",
    "LocalTarget",
    "S3Credentials",
    "S3Target",
    "StoreTarget",
    "Target",
    "parse_target",
    "target_of",
]


def parse_target(
    target: str | Path | Target,
    *,
    endpoint_url: str | None = None,
    region: str | None = None,
    path_style: bool = False,
    profile: str | None = None,
    credentials: S3Credentials | None = None,
    public_url: str | None = None,
    links: LinkStyle | None = None,
    link_expiry_s: int = MAX_LINK_EXPIRY_S,
) -> Target:
    """``s3://bucket/prefix`` (with the S3 options), a ``file://`` URL, a directory path, or
    a URL in a registered store's scheme. Other schemes are refused by name."""
    if isinstance(target, LocalTarget | S3Target | StoreTarget):
        return target
    if isinstance(target, Path):
        return LocalTarget(path=target.expanduser())
    text = target.strip()
    if not text:
        raise ValueError("publish target is empty; expected s3://bucket/prefix or a directory")
    if text.startswith("s3://"):
        parts = urlsplit(text)
        if parts.query or parts.fragment:
            raise ValueError(f"publish target {text!r} must not have a query or fragment")
        return S3Target(
            bucket=parts.netloc,
            prefix=parts.path,
            endpoint_url=endpoint_url,
            region=region,
            path_style=path_style,
            profile=profile,
            credentials=credentials,
            public_url=public_url,
            links=links,
            link_expiry_s=link_expiry_s,
        )
    if text.startswith("file://"):
        return LocalTarget(path=Path(urlsplit(text).path))
    scheme = re.match(r"^([A-Za-z][A-Za-z0-9+.-]*)://", text)
    if scheme:
        if store_form(scheme.group(1)) is not None:
            return StoreTarget(url=text)
        raise ValueError(
            f"publish target {text!r}: scheme {scheme.group(1)!r} is not supported; expected "
            f"{forms_written()}"
        )
    return LocalTarget(path=Path(text).expanduser())


def target_of(
    target: str | Path | Target,
    s3: S3Options | None = None,
    credentials: S3Credentials | None = None,
) -> Target:
    """``target`` parsed with a run's S3 options (:class:`S3Options`: endpoint, region,
    addressing, how reports are linked) and credentials read from their secret."""
    options = s3 if s3 is not None else S3Options()
    return parse_target(
        target,
        endpoint_url=options.endpoint_url,
        region=options.region,
        path_style=options.path_style,
        credentials=credentials,
        public_url=options.public_url,
        links=options.report_links,
        link_expiry_s=options.link_expiry_hours * 3600,
    )
