"""Which agent a run measures: its spec, a digest of its source file, its model and the
judges' model — what a resume must find unchanged (:mod:`.resume`), so that one run's
results never mix two agents or two models."""

from __future__ import annotations

import hashlib
import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["RunSubject", "canonical_spec", "source_digest"]


@dataclass(frozen=True)
class RunSubject:
    """What a run measures, as a resume compares it."""

    agent: str | None
    """The agent's spec (``module:attr``, ``file.py:attr``, a URL), or its name when it
    was given as an object; ``None`` when every case is a component case."""
    code: str | None
    """A digest of the file the spec names (``None``: a URL, or an object)."""
    agent_model: str | None
    judge_model: str | None

    def as_json(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "code": self.code,
            "agent_model": self.agent_model,
            "judge_model": self.judge_model,
        }


def canonical_spec(spec: str) -> str:
    """``spec`` with a file or folder it names made absolute, so that a resume started
    from another directory names the same agent the same way."""
    spec = spec.strip()
    if "://" in spec:
        return spec
    target, colon, attr = spec.rpartition(":") if ":" in spec else (spec, "", "")
    if _names_a_file(target) and Path(target).exists():
        return f"{Path(target).resolve()}{colon}{attr}"
    return spec


def _names_a_file(target: str) -> bool:
    return target.endswith(".py") or "/" in target or "\\" in target


def source_digest(spec: str | None) -> str | None:
    """A digest of the source file an agent spec names: the ``.py`` file, a folder's
    ``agent.py`` (else its ``__init__.py``), or a dotted module's file. ``None`` for a
    URL, or when no file can be found (an agent that loaded has one, unless it is
    built in)."""
    if not spec or "://" in spec:
        return None
    target = spec.rpartition(":")[0] if ":" in spec else spec
    path = _source_file(target.strip())
    if path is None:
        return None
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    except OSError:
        return None


def _source_file(target: str) -> Path | None:
    if _names_a_file(target):
        path = Path(target)
        if path.is_dir():
            return next((c for c in (path / "agent.py", path / "__init__.py") if c.is_file()), None)
        return path if path.is_file() else None
    try:
        found = importlib.util.find_spec(target)
    except (ImportError, ValueError):
        return None
    if found is None or not found.origin or not found.has_location:
        return None
    return Path(found.origin)
