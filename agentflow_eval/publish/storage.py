"""Where published runs go: a local directory or an S3-compatible bucket, behind one small
object-store interface (put, get, url), with object keys made only from safe parts.

Targets are written ``s3://bucket/prefix`` or a directory path. S3 goes through boto3:
endpoint URL (for MinIO, SeaweedFS, R2, ...), region, path-style addressing, and
credentials from the standard AWS chain (environment, profile, instance role) unless
passed explicitly (say, from a Prefect Secret). Stores report failures as
:class:`StoreError` and say whether trying again could help.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Literal, Protocol, runtime_checkable
from urllib.parse import quote, urlsplit

from pydantic import BaseModel, ConfigDict, SecretStr, field_validator

from agentflow_eval.files.naming import safe_id

__all__ = [
    "LocalStore",
    "LocalTarget",
    "ObjectStore",
    "S3Body",
    "S3Credentials",
    "S3Store",
    "S3Target",
    "StoreError",
    "Target",
    "join_key",
    "key_part",
    "open_store",
    "parse_target",
]

KEY_PART_MAX = 100
_SAFE_PART = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]*$")
_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")


# --------------------------------------------------------------------------- keys


def key_part(value: str, *, max_length: int = KEY_PART_MAX) -> str:
    """An id made safe as one path segment of an object key: only ``[A-Za-z0-9._-]``, no
    ``..``, no leading dot or dash, at most ``max_length`` characters. An id that had to
    change gets a short hash of the original, so two ids never share a key."""
    cleaned = safe_id(value, max_length=max_length)
    if cleaned == value:
        return cleaned
    digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{cleaned[: max_length - 9].rstrip('.-')}-{digest}"


def _check_part(part: str, what: str) -> str:
    if not _SAFE_PART.match(part) or ".." in part:
        raise ValueError(
            f"{what} {part!r} is not a safe key segment: expected letters, digits, '.', '_' "
            "or '-', not starting with '.' or '-', without '..'"
        )
    return part


def join_key(*parts: str) -> str:
    """Segments joined with ``/``; each must already be safe (see :func:`key_part`)."""
    if not parts:
        raise ValueError("an object key needs at least one segment")
    return "/".join(_check_part(part, "key segment") for part in parts)


def _clean_prefix(prefix: str) -> str:
    """A configured prefix as ``a/b/c`` (no leading or trailing slash), each segment safe."""
    segments = [segment for segment in prefix.split("/") if segment]
    return "/".join(_check_part(segment, "prefix segment") for segment in segments)


# --------------------------------------------------------------------------- targets


class LocalTarget(BaseModel):
    """Publish into a directory on this machine."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["local"] = "local"
    path: Path

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
        return _clean_prefix(value)

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
    def url(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}".rstrip("/")

    @property
    def link_style(self) -> LinkStyle:
        if self.links is not None:
            return self.links
        return "public" if self.public_url else "endpoint"


Target = LocalTarget | S3Target


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
    """``s3://bucket/prefix`` (with the S3 options), a ``file://`` URL or a directory path.
    Other schemes are refused by name."""
    if isinstance(target, LocalTarget | S3Target):
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
        raise ValueError(
            f"publish target {text!r}: scheme {scheme.group(1)!r} is not supported; expected "
            "s3://bucket/prefix (any S3-compatible store) or a directory path"
        )
    return LocalTarget(path=Path(text).expanduser())


# --------------------------------------------------------------------------- stores


class StoreError(Exception):
    """An object store refused or failed an operation. ``transient`` says whether trying
    again later could succeed (the store is unreachable or overloaded) or not (access
    denied, no such bucket)."""

    def __init__(self, message: str, *, transient: bool) -> None:
        super().__init__(message)
        self.transient = transient


@runtime_checkable
class ObjectStore(Protocol):
    """Where published files go. Keys are relative to the target's prefix. Local
    directories and S3 are built in; anything with these four methods can be passed to
    the publisher instead of a target."""

    def describe(self) -> str: ...

    def put(self, key: str, body: bytes, content_type: str, cache_control: str | None) -> None:
        """Store ``body`` at ``key`` with its Content-Type; raise :class:`StoreError`."""
        ...

    def get(self, key: str) -> bytes | None:
        """The object at ``key``, or None when there is none; raise :class:`StoreError`."""
        ...

    def url(self, key: str) -> str:
        """Where a person or a link opens the object at ``key``."""
        ...


_TRANSIENT_OS_ERRORS = (TimeoutError, BlockingIOError, InterruptedError)


@dataclass
class LocalStore:
    """A directory: files written atomically (a reader never sees half a file)."""

    root: Path

    def describe(self) -> str:
        return str(self.root)

    def _path(self, key: str) -> Path:
        return self.root.joinpath(*join_key(*key.split("/")).split("/"))

    def put(self, key: str, body: bytes, content_type: str, cache_control: str | None) -> None:
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(body)
                os.replace(tmp, path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError as exc:
            raise StoreError(
                f"cannot write {path}: {exc}", transient=isinstance(exc, _TRANSIENT_OS_ERRORS)
            ) from exc

    def get(self, key: str) -> bytes | None:
        path = self._path(key)
        try:
            return path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StoreError(
                f"cannot read {path}: {exc}", transient=isinstance(exc, _TRANSIENT_OS_ERRORS)
            ) from exc

    def open(self, key: str) -> BinaryIO | None:
        """The object at ``key`` to read as a stream (the caller closes it), or None."""
        path = self._path(key)
        try:
            return path.open("rb")
        except (FileNotFoundError, IsADirectoryError):
            return None
        except OSError as exc:
            raise StoreError(
                f"cannot read {path}: {exc}", transient=isinstance(exc, _TRANSIENT_OS_ERRORS)
            ) from exc

    def url(self, key: str) -> str:
        return self._path(key).resolve().as_uri()


_TRANSIENT_CODES = {
    "RequestTimeout",
    "RequestTimeoutException",
    "SlowDown",
    "Throttling",
    "ThrottlingException",
    "ServiceUnavailable",
    "InternalError",
    "503",
    "500",
}


@dataclass
class S3Store:
    """An S3 bucket (AWS or compatible) through boto3; the client is built on first use."""

    target: S3Target
    connect_timeout_s: float = 5.0
    read_timeout_s: float = 30.0
    _client: Any = field(default=None, init=False, repr=False)

    def describe(self) -> str:
        return self.target.describe()

    def _key(self, key: str) -> str:
        key = join_key(*key.split("/"))
        return f"{self.target.prefix}/{key}" if self.target.prefix else key

    def client(self) -> Any:
        """The boto3 S3 client. boto3's own retries are off: the publisher retries with
        its own backoff, so attempts do not multiply."""
        if self._client is None:
            import boto3
            from botocore.config import Config

            creds = self.target.credentials
            session = boto3.session.Session(
                profile_name=self.target.profile,
                aws_access_key_id=creds.access_key_id if creds else None,
                aws_secret_access_key=creds.secret_access_key.get_secret_value() if creds else None,
                aws_session_token=(
                    creds.session_token.get_secret_value()
                    if creds and creds.session_token
                    else None
                ),
            )
            config = Config(
                region_name=self.target.region,
                connect_timeout=self.connect_timeout_s,
                read_timeout=self.read_timeout_s,
                retries={"total_max_attempts": 1, "mode": "standard"},
                s3={"addressing_style": "path" if self.target.path_style else "auto"},
                signature_version="s3v4",  # presigned links: SigV4 (up to 7 days)
                # Checksums only where S3 requires them: many compatible stores reject
                # the newer default trailing checksums.
                request_checksum_calculation="when_required",
                response_checksum_validation="when_required",
            )
            self._client = session.client(
                "s3", endpoint_url=self.target.endpoint_url, config=config
            )
        return self._client

    def _error(self, action: str, key: str, exc: Exception) -> StoreError:
        from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError

        where = f"s3://{self.target.bucket}/{key}"
        if isinstance(exc, ClientError):
            error = exc.response.get("Error", {})
            code = str(error.get("Code", ""))
            status = int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0)
            transient = code in _TRANSIENT_CODES or status >= 500 or status == 429
            detail = f"{code or status}: {error.get('Message', '')}".rstrip(": ")
            return StoreError(f"cannot {action} {where}: {detail}", transient=transient)
        if isinstance(exc, NoCredentialsError):
            return StoreError(
                f"cannot {action} {where}: no AWS credentials found (set AWS_ACCESS_KEY_ID and "
                "AWS_SECRET_ACCESS_KEY, a profile, or pass credentials)",
                transient=False,
            )
        if isinstance(exc, BotoCoreError):
            # connection refused, timeouts, dropped connections: the store may come back
            return StoreError(f"cannot {action} {where}: {exc}", transient=True)
        raise exc

    def put(self, key: str, body: bytes, content_type: str, cache_control: str | None) -> None:
        full = self._key(key)
        extra = {"CacheControl": cache_control} if cache_control else {}
        try:
            self.client().put_object(
                Bucket=self.target.bucket, Key=full, Body=body, ContentType=content_type, **extra
            )
        except Exception as exc:
            raise self._error("upload", full, exc) from exc

    def get(self, key: str) -> bytes | None:
        full = self._key(key)
        try:
            response = self.client().get_object(Bucket=self.target.bucket, Key=full)
            return bytes(response["Body"].read())
        except Exception as exc:
            from botocore.exceptions import ClientError

            if isinstance(exc, ClientError) and exc.response.get("Error", {}).get("Code") in (
                "NoSuchKey",
                "404",
            ):
                return None
            raise self._error("download", full, exc) from exc

    def open(self, key: str) -> S3Body | None:
        """The object at ``key`` to read as a stream (the caller closes it), or None.
        Only what is read is downloaded."""
        full = self._key(key)
        try:
            response = self.client().get_object(Bucket=self.target.bucket, Key=full)
        except Exception as exc:
            from botocore.exceptions import ClientError

            if isinstance(exc, ClientError) and exc.response.get("Error", {}).get("Code") in (
                "NoSuchKey",
                "404",
            ):
                return None
            raise self._error("download", full, exc) from exc
        return S3Body(response["Body"], lambda exc: self._error("download", full, exc))

    def url(self, key: str) -> str:
        """The object's link for people, in the target's link style. A presigned link is
        signed here, offline, with the store's credentials."""
        target = self.target
        style = target.link_style
        if style == "public":
            if not target.public_url:
                raise ValueError("public report links need public_url (the base URL readers use)")
            base = target.public_url.rstrip("/")
            rel = quote(join_key(*key.split("/")))
            return f"{base}/{rel}"
        if style == "presigned":
            return str(
                self.client().generate_presigned_url(
                    "get_object",
                    Params={"Bucket": target.bucket, "Key": self._key(key)},
                    ExpiresIn=target.link_expiry_s,
                )
            )
        return self.endpoint_url(key)

    def endpoint_url(self, key: str) -> str:
        """The object's URL at the store itself (it opens only on a public-read bucket)."""
        full = quote(self._key(key))
        target = self.target
        if target.endpoint_url:
            parts = urlsplit(target.endpoint_url.rstrip("/"))
            if target.path_style:
                return f"{parts.scheme}://{parts.netloc}{parts.path}/{target.bucket}/{full}"
            return f"{parts.scheme}://{target.bucket}.{parts.netloc}{parts.path}/{full}"
        region = target.region or "us-east-1"
        return f"https://{target.bucket}.s3.{region}.amazonaws.com/{full}"


class S3Body:
    """An S3 object's body as a stream: ``read(size)`` and ``close()``, failures (a
    dropped connection, a read timeout) as :class:`StoreError`. Closing before the end
    drops the connection instead of downloading the rest."""

    def __init__(self, body: Any, error: Callable[[Exception], StoreError]) -> None:
        self._body = body
        self._error = error

    def read(self, size: int = -1, /) -> bytes:
        try:
            return bytes(self._body.read(None if size < 0 else size))
        except Exception as exc:
            raise self._error(exc) from exc

    def close(self) -> None:
        self._body.close()

    def __enter__(self) -> S3Body:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def open_store(target: Target) -> ObjectStore:
    """The store behind a target."""
    if isinstance(target, S3Target):
        return S3Store(target)
    return LocalStore(target.path)
