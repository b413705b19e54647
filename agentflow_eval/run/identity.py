"""What a run records about the agent it tested: version, commit and labels.

Each comes from what the caller gave (flags, a form, an API call, a deploy event), else
from the environment the front door passes in, so a CI job that sets
``AGENTFLOW_AGENT_VERSION`` and its usual commit variable gets them recorded without
passing anything.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["GIT_SHA_VARIABLES", "VERSION_VARIABLES", "RunIdentity"]

VERSION_VARIABLES = ("AGENTFLOW_AGENT_VERSION",)
GIT_SHA_VARIABLES = ("AGENTFLOW_GIT_SHA", "GITHUB_SHA", "CI_COMMIT_SHA", "GIT_COMMIT")
"""Checked in order: this project's own, then GitHub Actions', GitLab CI's, Jenkins'."""


@dataclass(frozen=True)
class RunIdentity:
    """The agent's version, the commit it was built from, and free labels."""

    agent_version: str | None = None
    git_sha: str | None = None
    labels: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        environ: Mapping[str, str],
        *,
        agent_version: str | None = None,
        git_sha: str | None = None,
        labels: Mapping[str, str] | None = None,
    ) -> RunIdentity:
        """What the caller gave, the rest from ``environ`` (the front door's)."""
        return cls(
            agent_version=agent_version or _first(environ, VERSION_VARIABLES),
            git_sha=git_sha or _first(environ, GIT_SHA_VARIABLES),
            labels=dict(labels or {}),
        )


def _first(environ: Mapping[str, str], names: tuple[str, ...]) -> str | None:
    for name in names:
        value = environ.get(name, "").strip()
        if value:
            return value
    return None
