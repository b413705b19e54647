"""Safe names for files, object keys and Prefect artifact keys, made from user ids, and
ids made safe to print on a terminal."""

from __future__ import annotations

import hashlib
import re

__all__ = ["artifact_key", "distinct_safe_id", "printable", "safe_id"]

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_id(value: str, *, max_length: int = 80) -> str:
    """``value`` reduced to ``[A-Za-z0-9._-]``: no separators, no ``..``, no control
    characters, never empty, never starting with a dot. Different ids may reduce to the
    same name (``../../etc`` and ``etc``): use :func:`distinct_safe_id` for names that
    must not collide."""
    cleaned = _UNSAFE.sub("-", value).strip("-.")
    cleaned = re.sub(r"\.{2,}", ".", cleaned)[:max_length].strip("-.")
    return cleaned or "unnamed"


def distinct_safe_id(value: str, *, max_length: int = 80) -> str:
    """:func:`safe_id`, plus a short hash of ``value`` whenever the id had to change, so
    two different ids never share a name (``etc`` stays ``etc``; ``../../etc`` becomes
    ``etc-<hash>``). The same rule names S3 keys (``storage.keys.key_part``)."""
    cleaned = safe_id(value, max_length=max_length)
    if cleaned == value:
        return cleaned
    digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{cleaned[: max_length - 9].rstrip('.-')}-{digest}"


def artifact_key(value: str) -> str:
    """A Prefect artifact key: lowercase letters, digits and dashes only."""
    key = re.sub(r"[^a-z0-9-]+", "-", value.lower()).strip("-")
    return re.sub(r"-{2,}", "-", key) or "agentflow-eval"


_CONTROL = re.compile(
    "[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2069"
    "\ufeff\ufff9-\ufffb]"
)
"""Characters that move the cursor, change the terminal's state or reorder text: C0 and
C1 controls (ESC, NUL, CR, BS, the one-byte CSI), zero-width and bidirectional marks,
line and paragraph separators. Newline is left alone (see :func:`printable`)."""


def printable(text: str, *, keep_newlines: bool = True) -> str:
    """``text`` safe to print on a terminal: every control, bidirectional or zero-width
    character shown as an escape (``\\x1b``, ``\\x00``, ``\\r``, ``\\u202e``), so an id
    can neither run escape sequences nor disguise what is printed. Newlines stay when
    ``keep_newlines`` (a multi-line message), else they are escaped too."""

    def escape(match: re.Match[str]) -> str:
        char = match.group()
        if char == "\r":
            return "\\r"
        if char == "\t":
            return "\\t"
        code = ord(char)
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"

    escaped = _CONTROL.sub(escape, text)
    return escaped if keep_newlines else escaped.replace("\n", "\\n")
