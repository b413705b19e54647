"""The places runs are kept, as typed values: a folder (:class:`LocalTarget`), an S3
bucket and prefix with the options to reach it (:class:`S3Target`), or a URL in the scheme
of a store a package registered (:class:`StoreTarget`). Parsed from text in one place,
:mod:`.targets`."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, SecretStr, field_validator

from agentflow_eval.storage.keys import clean_prefix

__all__ = [
    "MAX_LINK_EXPIRY_S",
    "LinkStyle",
    "LocalTarget",
    "S3Credentials",
    "S3Target",
    "StoreTarget",
    "Target",
]

_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")


class LocalTarget(BaseModel):
    """Publish into a directory on this machine."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["local"] = "local"
    path: Path

    @property
    def scheme(self) -> str:
        """The store form it is written in (:mod:`.stores`)."""
        return "file"

    def describe(self) -> str:
        return str(self.path)


class S3Credentials(BaseModel):
    """Explicit S3 credentials (otherwise boto3's standard chain applies)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    access_key_id: str
    secret_access_key: SecretStr
    session_token: SecretStr | None = None


LinkStyle = Literal["presigned", "public", "endpoint"]

MAX_LINK_EXPIRY_S = 7 * 24 * 3600
"""S3's longest presigned-URL lifetime (SigV4)."""


class S3Target(BaseModel):
    """Publish into ``s3://bucket/prefix`` on AWS or any S3-compatible store.

    ``links`` says how published files are linked for people: ``presigned`` URLs work on
    a private bucket for ``link_expiry_s`` seconds; ``public`` URLs sit under
    ``public_url`` (a CDN or website endpoint serving the prefix); ``endpoint`` URLs point
    at the store itself (a public-read bucket). Unset: ``public`` when ``public_url`` is
    given, else ``endpoint``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["s3"] = "s3"
    bucket: str
    prefix: str = ""
    endpoint_url: str | None = None
    region: str | None = None
    path_style: bool = False
    profile: str | None = None
    credentials: S3Credentials | None = None
    public_url: str | None = None
    links: LinkStyle | None = None
    link_expiry_s: int = MAX_LINK_EXPIRY_S

    @field_validator("bucket")
    @classmethod
    def _bucket(cls, value: str) -> str:
        if not _BUCKET.match(value) or ".." in value:
            raise ValueError(
                f"bucket {value!r} is not a valid S3 bucket name: expected 3-63 lowercase "
                "letters, digits, '.' or '-', starting and ending with a letter or digit"
            )
        return value

    @field_validator("prefix")
    @classmethod
    def _prefix(cls, value: str) -> str:
        return clean_prefix(value)

    def describe(self) -> str:
        where = f"s3://{self.bucket}/{self.prefix}".rstrip("/")
        return f"{where} at {self.endpoint_url}" if self.endpoint_url else where

    @field_validator("link_expiry_s")
    @classmethod
    def _expiry(cls, value: int) -> int:
        if not 1 <= value <= MAX_LINK_EXPIRY_S:
            raise ValueError(
                f"link_expiry_s must be 1..{MAX_LINK_EXPIRY_S} (S3 signatures last at most "
                f"7 days), got {value}"
            )
        return value

    @property
    def scheme(self) -> str:
        """The store form it is written in (:mod:`.stores`)."""
        return "s3"

    @property
    def url(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}".rstrip("/")

    @property
    def link_style(self) -> LinkStyle:
        if self.links is not None:
            return self.links
        return "public" if self.public_url else "endpoint"


class StoreTarget(BaseModel):
    """A target in the scheme of a store a package registered (``gs://bucket/prefix``):
    the text as written, which that store reads."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["store"] = "store"
    url: str

    @property
    def scheme(self) -> str:
        """The store form it is written in (:mod:`.stores`)."""
        return urlsplit(self.url).scheme.lower()

    @property
    def key(self) -> str:
        """Where it points below its store's root (``scheme://authority``): the URL's path."""
        return urlsplit(self.url).path.strip("/")

    def root(self) -> StoreTarget:
        """The target of its store's root, ``scheme://authority``."""
        parts = urlsplit(self.url)
        return StoreTarget(url=f"{parts.scheme}://{parts.netloc}")

    def describe(self) -> str:
        return self.url


Target = LocalTarget | S3Target | StoreTarget
