"""An S3 bucket (AWS or any S3-compatible store) as an object store, through boto3."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

from agentflow_eval.errors import StoreError
from agentflow_eval.storage.base import StoredObject
from agentflow_eval.storage.keys import join_key

if TYPE_CHECKING:
    # the targets' parser reads the table of stores, which opens this one
    from agentflow_eval.storage.target_models import S3Target

__all__ = ["S3Body", "S3Store", "presigned_lifetime_s"]

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

    def list_objects(self, prefix: str = "") -> Iterator[StoredObject]:
        """Every object whose key below the target's prefix starts with ``prefix``, a page
        of a thousand at a time, in the order the store lists them."""
        root = f"{self.target.prefix}/" if self.target.prefix else ""
        paginator = self.client().get_paginator("list_objects_v2")
        try:
            for page in paginator.paginate(Bucket=self.target.bucket, Prefix=root + prefix):
                for item in page.get("Contents", ()):
                    yield StoredObject(
                        key=str(item["Key"])[len(root) :],
                        size=int(item.get("Size") or 0),
                        modified=item["LastModified"],
                    )
        except Exception as exc:
            raise self._error("list", root + prefix, exc) from exc

    def open_listed(self, key: str) -> S3Body | None:
        """The object :meth:`list_objects` named ``key``, as a stream, or None."""
        full = f"{self.target.prefix}/{key}" if self.target.prefix else key
        try:
            response = self.client().get_object(Bucket=self.target.bucket, Key=full)
        except Exception as exc:
            if _missing(exc):
                return None
            raise self._error("download", full, exc) from exc
        return S3Body(response["Body"], lambda exc: self._error("download", full, exc))

    def create(self, key: str, body: bytes, content_type: str) -> bool:
        """Store ``body`` at ``key`` only if no object is there (``If-None-Match: *``,
        which AWS S3, SeaweedFS, MinIO and R2 honour): False when one is, or when another
        writer's conditional write to it is in flight (409)."""
        full = self._key(key)
        try:
            self.client().put_object(
                Bucket=self.target.bucket,
                Key=full,
                Body=body,
                ContentType=content_type,
                IfNoneMatch="*",
            )
        except Exception as exc:
            from botocore.exceptions import ClientError

            if isinstance(exc, ClientError):
                code = str(exc.response.get("Error", {}).get("Code", ""))
                if code in ("PreconditionFailed", "ConditionalRequestConflict", "412", "409"):
                    return False
            raise self._error("upload", full, exc) from exc
        return True

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
            if target.path_style or _path_style_only(parts.hostname or "", target.bucket):
                return f"{parts.scheme}://{parts.netloc}{parts.path}/{target.bucket}/{full}"
            return f"{parts.scheme}://{target.bucket}.{parts.netloc}{parts.path}/{full}"
        region = target.region or "us-east-1"
        return f"https://{target.bucket}.s3.{region}.amazonaws.com/{full}"


def _missing(exc: Exception) -> bool:
    """Whether ``exc`` says there is no such object."""
    from botocore.exceptions import ClientError

    return isinstance(exc, ClientError) and exc.response.get("Error", {}).get("Code") in (
        "NoSuchKey",
        "404",
    )


def presigned_lifetime_s(store: object) -> int | None:
    """How long the links ``store`` gives out work, in seconds, when they are presigned
    (they expire); None when its links are plain (public, endpoint, a folder) and last
    as long as the objects. Pages that link to other objects of a presigning store must
    carry presigned links themselves: a relative link from a presigned page is refused."""
    if isinstance(store, S3Store) and store.target.link_style == "presigned":
        return store.target.link_expiry_s
    return None


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


def _path_style_only(host: str, bucket: str) -> bool:
    """Whether an endpoint can only be addressed path-style: an IP address or
    ``localhost`` has no ``bucket.`` subdomain to resolve, and a bucket with dots breaks
    a certificate's wildcard (botocore decides the same way)."""
    import ipaddress

    if host == "localhost" or "." in bucket:
        return True
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True
