"""Object keys made only from safe parts: one path segment per id, never ``..``, never a
leading dot or dash."""

from __future__ import annotations

import hashlib
import re

from agentflow_eval.files.naming import safe_id

__all__ = ["KEY_PART_MAX", "clean_prefix", "join_key", "key_part"]

KEY_PART_MAX = 100
_SAFE_PART = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]*$")


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


def clean_prefix(prefix: str) -> str:
    """A configured prefix as ``a/b/c`` (no leading or trailing slash), each segment safe."""
    segments = [segment for segment in prefix.split("/") if segment]
    return "/".join(_check_part(segment, "prefix segment") for segment in segments)
