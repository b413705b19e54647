"""Safe names for files, object keys and Prefect artifact keys, made from user ids."""

from __future__ import annotations

import re

__all__ = ["artifact_key", "safe_id"]

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_id(value: str, *, max_length: int = 80) -> str:
    """``value`` reduced to ``[A-Za-z0-9._-]``: no separators, no ``..``, no control
    characters, never empty, never starting with a dot."""
    cleaned = _UNSAFE.sub("-", value).strip("-.")
    cleaned = re.sub(r"\.{2,}", ".", cleaned)[:max_length].strip("-.")
    return cleaned or "unnamed"


def artifact_key(value: str) -> str:
    """A Prefect artifact key: lowercase letters, digits and dashes only."""
    key = re.sub(r"[^a-z0-9-]+", "-", value.lower()).strip("-")
    return re.sub(r"-{2,}", "-", key) or "agentflow-eval"
