"""What a run records about the agent it tested: version, commit and labels.

Each comes from the run's parameters (a form, an API call, a deploy event), else from the
worker's environment, so a CI job that sets ``AGENTFLOW_AGENT_VERSION`` and its usual
commit variable gets them recorded without passing anything.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from agentflow_eval.models.params import EvaluateParams

__all__ = ["GIT_SHA_VARIABLES", "VERSION_VARIABLES", "RunIdentity", "run_identity"]

VERSION_VARIABLES = ("AGENTFLOW_AGENT_VERSION",)
GIT_SHA_VARIABLES = ("AGENTFLOW_GIT_SHA", "GITHUB_SHA", "CI_COMMIT_SHA", "GIT_COMMIT")
"""Checked in order: this project's own, then GitHub Actions', GitLab CI's, Jenkins'."""


@dataclass(frozen=True)
class RunIdentity:
    agent_version: str | None = None
    git_sha: str | None = None
    labels: dict[str, str] = field(default_factory=dict)


def _first(environ: Mapping[str, str], names: tuple[str, ...]) -> str | None:
    for name in names:
        value = environ.get(name, "").strip()
        if value:
            return value
    return None


def run_identity(params: EvaluateParams, environ: Mapping[str, str] | None = None) -> RunIdentity:
    """The identity of a run started with ``params`` on a worker with ``environ``."""
    env = os.environ if environ is None else environ
    return RunIdentity(
        agent_version=params.agent_version or _first(env, VERSION_VARIABLES),
        git_sha=params.git_sha or _first(env, GIT_SHA_VARIABLES),
        labels=dict(params.labels),
    )
